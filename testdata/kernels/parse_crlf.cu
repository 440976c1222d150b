// slatec-test: no-harness
// CRLF line endings, tabs and no final newline: printing must reproduce them byte for byte.
#define B 64

__global__ void crlf_kernel(const float* in, float* out, int n) {
	__shared__ float s[B];
	int i = blockIdx.x * B + threadIdx.x;
	if (i >= n) return;
	s[threadIdx.x] = in[i];
	__syncthreads();
	out[i] = s[threadIdx.x] + s[0];
}

void crlf_launch(const float* in, float* out, int n) {
	crlf_kernel<<<(n + B - 1) / B, B>>>(in, out, n);
}