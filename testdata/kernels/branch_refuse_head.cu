// slatec-test: no-harness
// Kernel heads cut by #if branches are refused, naming the lines: launch bounds, a parameter, a template header.
#ifdef USE_FAST
__global__ void __launch_bounds__(256) bounded(float* x)
#else
__global__ void bounded(float* x)
#endif
{
    x[blockIdx.x] = 1.0f;
}

__global__ void extra_param(float* x
#ifdef USE_FAST
    , int n
#endif
) {
    x[blockIdx.x] = 1.0f;
}

#ifdef USE_FAST
template <int N>
#endif
__global__ void maybe_template(float* x) {
    x[blockIdx.x] = 1.0f;
}

void run(float* x) { bounded<<<4, 256>>>(x); }
