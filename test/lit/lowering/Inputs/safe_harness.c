/* Calls add_dyn with row counts from the command line: with --mode=safe,
   sizes that are neither equal nor 1 must abort with a message instead of
   reading out of bounds. */
#include "safe.h"

#include <stdio.h>
#include <stdlib.h>

static tosa_memref_f32_2d make(int64_t rows, float *data) {
  tosa_memref_f32_2d m = {data, data, 0, {rows, 3}, {3, 1}};
  for (int64_t i = 0; i < rows * 3; ++i)
    data[i] = (float)i;
  return m;
}

int main(int argc, char **argv) {
  int64_t ra = atoll(argv[1]), rb = atoll(argv[2]);
  float a[64], b[64];
  tosa_memref_f32_2d ma = make(ra, a), mb = make(rb, b), out;
  _mlir_ciface_add_dyn(&out, &ma, &mb);
  printf("rows %lld: first %g last %g\n", (long long)out.sizes[0],
         out.aligned[0], out.aligned[out.sizes[0] * 3 - 1]);
  free(out.allocated);
  return 0;
}
