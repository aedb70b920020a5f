/* Calls the entry points of Inputs/harness.mlir, compiled by
 * `tosa-lsp compile --emit=shared --header`, through the generated header:
 * builds memref descriptors by hand (strides in elements), lets the callee
 * fill the result descriptor and checks sizes, strides and values.
 * Prints `c-harness: ok` and exits 0 when every check passes. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef HEADER
#define HEADER "harness.h"
#endif
#include HEADER

static int failures = 0;

/* Element (i, j) of a 2-D f32 descriptor, honouring offset and strides. */
static float at(const tosa_memref_f32_2d *m, int64_t i, int64_t j) {
  return m->aligned[m->offset + i * m->strides[0] + j * m->strides[1]];
}

static tosa_memref_f32_2d view(float *base, int64_t offset, int64_t rows,
                               int64_t cols, int64_t row_stride,
                               int64_t col_stride) {
  tosa_memref_f32_2d m;
  m.allocated = base;
  m.aligned = base;
  m.offset = offset;
  m.sizes[0] = rows;
  m.sizes[1] = cols;
  m.strides[0] = row_stride;
  m.strides[1] = col_stride;
  return m;
}

/* Checks result r against a + b with numpy-style broadcasting of size-1
 * rows; all values are small integers, so float sums are exact. */
static void check_add(const char *what, const tosa_memref_f32_2d *r,
                      const tosa_memref_f32_2d *a,
                      const tosa_memref_f32_2d *b, int64_t rows) {
  if (r->aligned == NULL || r->allocated == NULL) {
    printf("FAIL %s: null result pointer\n", what);
    failures++;
    return;
  }
  if (r->sizes[0] != rows || r->sizes[1] != 3) {
    printf("FAIL %s: result sizes %lldx%lld, expected %lldx3\n", what,
           (long long)r->sizes[0], (long long)r->sizes[1], (long long)rows);
    failures++;
    return;
  }
  for (int64_t i = 0; i < rows; i++)
    for (int64_t j = 0; j < 3; j++) {
      float want = at(a, a->sizes[0] == 1 ? 0 : i, j) +
                   at(b, b->sizes[0] == 1 ? 0 : i, j);
      float got = at(r, i, j);
      if (got != want) {
        printf("FAIL %s: [%lld][%lld] = %g, expected %g\n", what,
               (long long)i, (long long)j, got, want);
        failures++;
      }
    }
}

static void release(tosa_memref_f32_2d *r) {
  free(r->allocated);  /* malloc'ed by the callee */
  memset(r, 0, sizeof *r);
}

int main(void) {
  float row[3] = {1, 2, 3};
  float mat[6] = {10, 20, 30, 40, 50, 60};
  float tall[12];
  for (int k = 0; k < 12; k++)
    tall[k] = (float)(100 * (k + 1));
  /* 4x3 matrix stored with a padded row stride of 5 starting at offset 2. */
  float padded[2 + 4 * 5];
  for (int k = 0; k < 2 + 4 * 5; k++)
    padded[k] = -1.0f;
  for (int i = 0; i < 4; i++)
    for (int j = 0; j < 3; j++)
      padded[2 + i * 5 + j] = (float)(7 * i + j);

  tosa_memref_f32_2d r;
  memset(&r, 0, sizeof r);

  /* Static broadcast: 1x3 + 2x3 -> 2x3. */
  tosa_memref_f32_2d a = view(row, 0, 1, 3, 3, 1);
  tosa_memref_f32_2d b = view(mat, 0, 2, 3, 3, 1);
  _mlir_ciface_add(&r, &a, &b);
  check_add("add 1x3+2x3", &r, &a, &b, 2);
  release(&r);

  /* Dynamic, runtime size 1 on the first operand: 1x3 + 4x3 -> 4x3. */
  tosa_memref_f32_2d t = view(tall, 0, 4, 3, 3, 1);
  _mlir_ciface_add_dyn(&r, &a, &t);
  check_add("add_dyn 1x3+4x3", &r, &a, &t, 4);
  release(&r);

  /* Runtime size 1 on the second operand, first one padded (offset 2,
   * row stride 5): 4x3 + 1x3 -> 4x3. */
  tosa_memref_f32_2d p = view(padded, 2, 4, 3, 5, 1);
  _mlir_ciface_add_dyn(&r, &p, &a);
  check_add("add_dyn 4x3(padded)+1x3", &r, &p, &a, 4);
  release(&r);

  /* Equal runtime sizes: 4x3 + 4x3 -> 4x3. */
  _mlir_ciface_add_dyn(&r, &t, &p);
  check_add("add_dyn 4x3+4x3", &r, &t, &p, 4);
  release(&r);

  /* The inputs must be untouched. */
  if (row[0] != 1 || row[2] != 3 || mat[5] != 60 || tall[11] != 1200 ||
      padded[0] != -1.0f || padded[2 + 3 * 5 + 2] != 23) {
    printf("FAIL an input buffer was modified\n");
    failures++;
  }

  if (failures) {
    printf("c-harness: %d failures\n", failures);
    return 1;
  }
  printf("c-harness: ok\n");
  return 0;
}
