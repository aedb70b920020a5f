/* The core's FMA throughput, the physical limit of matmul and convolution:
   16 independent chains of vector FMAs (the widest vectors of
   -march=native), so neither latency nor memory bounds it. Built and loaded
   by bench/kernels/compute.py. Returns the flops done (2 per lane per FMA). */
#ifdef __AVX512F__
#define LANES 16
#elif defined(__AVX__)
#define LANES 8
#else
#define LANES 4
#endif
#define CHAINS 16
typedef float vec __attribute__((vector_size(LANES * 4)));

double fma_peak_flops(long iters) {
  vec acc[CHAINS], x, y;
  for (int i = 0; i < LANES; i++) {
    x[i] = 1.0f + 1e-7f * i;
    y[i] = 1e-9f;
  }
  for (int j = 0; j < CHAINS; j++)
    acc[j] = x * (float)j;
  for (long it = 0; it < iters; it++) {
#pragma GCC unroll 16
    for (int j = 0; j < CHAINS; j++)
      acc[j] = acc[j] * x + y; /* contracted to an FMA (-ffp-contract=fast) */
    __asm__ volatile("" : "+x"(x)); /* x stays a register, loop not folded */
  }
  float s = 0;
  for (int j = 0; j < CHAINS; j++)
    for (int i = 0; i < LANES; i++)
      s += acc[j][i];
  __asm__ volatile("" ::"x"(s));
  return 2.0 * LANES * CHAINS * (double)iters;
}
