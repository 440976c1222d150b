// slatec-test: no-harness
// Lexer edge cases: <<< and barriers inside comments/strings, raw strings, digit separators, literal suffixes, #if 0 junk, odd spacing.
#include <cstdio>
#include <vector>

/* A block comment that mentions __syncthreads(); and k<<<1, 1>>>(x); and return;
   none of which are code. It also holds a lone quote: ' and a brace: { */

#if 0
this is not C++ at all { { { <<< unbalanced
__global__ void ghost(int* p) { if (blockIdx.x) return; __syncthreads(); }
#endif

#define ONE_MILLION 1'000'000
#define SHIFTED (0x1Fu << 3)

// Numbers with every suffix style the lexer should keep byte for byte.
__device__ double literals_sum() {
    float a = 1.0f + .5f + 1.f + 2e-3f + 0x1p-2f;
    double b = 1e10 + 3.25 + 0.0 + 6.02e+23;
    unsigned long long c = 10ull + 0x10ULL + 0b1010 + 077 + 1'024u + ONE_MILLION + SHIFTED;
    long d = -42L + 7l;
    return a + b + (double)c + d;
}

__device__ const char* messages(int k) {
    // Strings that look like code.
    const char* s0 = "if (i >= n) return; __syncthreads();";
    const char* s1 = "k<<<grid, block>>>(args)";
    const char* s2 = "escaped \"quote\" and a backslash \\";
    const char c0 = '\'', c1 = '"', c2 = '\\';
    return k == 0 ? s0 : k == 1 ? s1 : (c0 + c1 + c2) ? s2 : "";
}

__global__ void spacing_and_comments(float  *  out , int/*count*/n)
{
	int i=blockIdx.x*blockDim.x+threadIdx.x ;   // tabs and no spaces around operators
	if(i>=n)return;
	out [ i ] = (float) literals_sum ( ) /* inline comment */ + (messages(i % 3)[0] == 'i');
}

__global__ void trailing_backslash_comment(int* out) {
    // a line comment ending in a backslash continues onto the next line \
    out[0] = 1;  (this line is still a comment)
    out[threadIdx.x] = (int)threadIdx.x;
}

// Host code: a raw string with delimiters, nested template closers, a multi-line launch.
static const char* kRaw = R"cuda(__global__ void fake() { k<<<1,1>>>(); })cuda";

void host_side(float* d_out, int* d_i, int n) {
    std::vector<std::vector<int>> nested(2, std::vector<int>(3, 1));
    spacing_and_comments<<<
        (n + 255) / 256,
        256
    >>>(d_out, n);
    trailing_backslash_comment <<< 1, 32 >>> (d_i);
    std::printf("%s %zu\n", kRaw, nested.size());
}
