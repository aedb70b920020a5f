/* Calls add_dyn of Inputs/harness.mlir (default mode, contiguous entry
 * points) on results big enough for the paths small tests never take:
 * a fresh result of 4 MiB or more (posix_memalign at 2 MiB, huge pages;
 * still released with free) and F_into's streaming-store loops (compiled
 * with --streaming-stores=1M). Prints `big-harness: ok` when every value
 * is right. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "harness.h"

static int failures = 0;

static tosa_memref_f32_2d contiguous(float *base, int64_t rows) {
  tosa_memref_f32_2d m = {base, base, 0, {rows, 3}, {3, 1}};
  return m;
}

/* r = big + row, element by element (small integers: exact sums). */
static void check(const char *what, const float *r, const float *big,
                  const float *row, int64_t rows) {
  for (int64_t i = 0; i < rows; i++)
    for (int64_t j = 0; j < 3; j++)
      if (r[i * 3 + j] != big[i * 3 + j] + row[j]) {
        printf("FAIL %s: [%lld][%lld] = %g, expected %g\n", what,
               (long long)i, (long long)j, r[i * 3 + j],
               big[i * 3 + j] + row[j]);
        failures++;
        return;
      }
}

static void run(int64_t rows) {
  float row[3] = {1, 2, 3};
  float *big = malloc(rows * 3 * sizeof(float));
  float *out = malloc(rows * 3 * sizeof(float));
  if (!big || !out) {
    printf("FAIL cannot allocate the inputs\n");
    failures++;
    return;
  }
  for (int64_t k = 0; k < rows * 3; k++)
    big[k] = (float)(k % 4099);
  tosa_memref_f32_2d a = contiguous(big, rows), b = contiguous(row, 1);
  char what[64];

  tosa_memref_f32_2d r = {0};
  _mlir_ciface_add_dyn(&r, &a, &b);
  snprintf(what, sizeof what, "fresh %lldx3", (long long)rows);
  if (!r.aligned || r.sizes[0] != rows || r.sizes[1] != 3 ||
      r.strides[0] != 3 || r.strides[1] != 1 || r.offset != 0) {
    printf("FAIL %s: result descriptor\n", what);
    failures++;
  } else {
    if ((uintptr_t)r.aligned % 64) {
      printf("FAIL %s: result not 64-byte aligned\n", what);
      failures++;
    }
    check(what, r.aligned, big, row, rows);
  }
  free(r.allocated);

  tosa_memref_f32_2d o = contiguous(out, rows);
  _mlir_ciface_add_dyn_into(&a, &b, &o);
  snprintf(what, sizeof what, "into %lldx3", (long long)rows);
  check(what, out, big, row, rows);
  free(big);
  free(out);
}

int main(void) {
  run(100);      /* 1.2 KB: malloc, ordinary stores */
  run(500000);   /* 6 MB: posix_memalign + huge pages, streaming F_into */
  run(500001);   /* a size that is not a multiple of any vector width */
  if (failures) {
    printf("big-harness: %d failures\n", failures);
    return 1;
  }
  printf("big-harness: ok\n");
  return 0;
}
