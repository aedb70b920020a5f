/* The depthwise 3x3 convolution of memory.py (1x256x256x256 NHWC f32,
   multiplier 1) as a plain AVX-512 C loop, the interior only: what a
   straightforward hand-written loop reaches on this machine, beside the
   copy that defines memory.py's floor. Thread CPU time, median of 9.
     cc -O3 -march=native bench/kernels/depthwise_c.c -o /tmp/dw && /tmp/dw
   Four store variants: ordinary or non-temporal (16-byte pieces at a
   16-byte offset, as into numpy's buffers; 64-byte at a 64-byte one). */
#include <immintrin.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { H = 256, W = 256, C = 256 };

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

__attribute__((noinline)) static void dw(const float *x, const float *w,
                                         const float *b, float *o, int kind) {
  for (int h = 1; h < H - 1; h++)
    for (int ww = 1; ww < W - 1; ww++) {
      float *op = o + ((size_t)h * W + ww) * C;
      for (int c = 0; c < C; c += 16) {
        __m512 acc = _mm512_loadu_ps(b + c);
        for (int i = 0; i < 3; i++)
          for (int j = 0; j < 3; j++)
            acc = _mm512_fmadd_ps(
                _mm512_loadu_ps(x + ((size_t)(h + i - 1) * W + (ww + j - 1)) * C + c),
                _mm512_loadu_ps(w + (i * 3 + j) * C + c), acc);
        if (kind == 1) {
          _mm_stream_ps(op + c, _mm512_extractf32x4_ps(acc, 0));
          _mm_stream_ps(op + c + 4, _mm512_extractf32x4_ps(acc, 1));
          _mm_stream_ps(op + c + 8, _mm512_extractf32x4_ps(acc, 2));
          _mm_stream_ps(op + c + 12, _mm512_extractf32x4_ps(acc, 3));
        } else if (kind == 2) {
          _mm512_stream_ps(op + c, acc);
        } else {
          _mm512_storeu_ps(op + c, acc);
        }
      }
    }
}

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

int main(void) {
  size_t n = (size_t)H * W * C;
  float *x = aligned_alloc(64, n * 4), *w = aligned_alloc(64, 9 * C * 4);
  float *b = aligned_alloc(64, C * 4), *ob = aligned_alloc(64, n * 4 + 64);
  memset(x, 0, n * 4), memset(w, 0, 9 * C * 4), memset(b, 0, C * 4);
  memset(ob, 0, n * 4 + 64);
  const char *name[4] = {"ordinary, +16 B", "non-temporal 16 B, +16 B",
                         "non-temporal 64 B, +0", "ordinary, +0"};
  float *out[4] = {ob + 4, ob + 4, ob, ob};
  int kind[4] = {0, 1, 2, 0};
  double t[4][9], c[9];
  for (int r = 0; r < 9; r++) {
    for (int k = 0; k < 4; k++) {
      double s = now();
      dw(x, w, b, out[k], kind[k]);
      t[k][r] = now() - s;
    }
    double s = now();
    memcpy(ob, x, n * 4);
    c[r] = now() - s;
  }
  qsort(c, 9, sizeof(double), cmp);
  printf("copy (64 MiB) %.2f ms\n", c[4] * 1e3);
  for (int k = 0; k < 4; k++) {
    qsort(t[k], 9, sizeof(double), cmp);
    printf("%-26s %.2f ms (%.2fx the copy)\n", name[k], t[k][4] * 1e3,
           t[k][4] / c[4]);
  }
  return 0;
}
