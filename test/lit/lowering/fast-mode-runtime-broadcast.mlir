// Spec 004's case in the default mode: both operands fully dynamic, the
// broadcasting one known only at run time. The function's versions test the
// sizes once at its entry; the version for "the second operand is 1x1x1xC"
// (an NHWC bias) reads it in place, in one loop nest with no copy: the
// sizes it knows are not 1 are tested again around it (never taken, the
// caller tested them) only so that upstream's tests of them fold. Beyond 8
// versions each is a function of its own (F__v*); where the first operand
// also has a 1, the function as upstream lowers it is called. bench/kernels
// (kernels-smoke.test) checks these versions bit for bit against numpy.
// RUN: %tosa-lsp lower %s | FileCheck %s

// CHECK:       func.func private @bias__v{{.*}}(
// CHECK:         %[[B:.*]] = tensor.cast %arg1 : tensor<?x?x?x?xf32> to tensor<1x1x1x?xf32>
// CHECK-NOT:     tensor.cast %arg
// CHECK:         linalg.generic {{.*}} ins(%arg0, %[[B]] : tensor<?x?x?x?xf32>, tensor<1x1x1x?xf32>)
// CHECK-NEXT:    ^bb0(
// CHECK-NEXT:      arith.addf
// CHECK-LABEL: func.func @bias(
// CHECK:         call @bias__generic(%arg0, %arg1)
// CHECK:         call @bias__v
// CHECK-LABEL: func.func private @bias__generic(
func.func @bias(%x: tensor<?x?x?x?xf32>, %b: tensor<?x?x?x?xf32>) -> tensor<?x?x?x?xf32> {
  %0 = tosa.add %x, %b : (tensor<?x?x?x?xf32>, tensor<?x?x?x?xf32>) -> tensor<?x?x?x?xf32>
  return %0 : tensor<?x?x?x?xf32>
}
