// Custom syntax of dialects MLIR 22 lacks (IREE's util/check): mlir-opt-22
// loses the section; `check --lenient` parses those ops as unregistered ops
// (one remark each) and verifies the TOSA ops; lenientDialects in
// .tosa-lsp.json says which namespaces.
// RUN: not %tosa-lsp check %s 2>&1 | FileCheck %s --check-prefix=STRICT
// RUN: not %tosa-lsp check --lenient --show-info %s 2>&1 | FileCheck %s --check-prefix=LENIENT
// RUN: not %tosa-lsp check --lenient --config=%S/Inputs/lenient-config/only-util.json %s 2>&1 | FileCheck %s --check-prefix=ONLY
// RUN: not %tosa-lsp check --lenient --config=%S/Inputs/lenient-config/off.json %s 2>&1 | FileCheck %s --check-prefix=STRICT
// RUN: not %tosa-lsp check --lenient --config=%S/Inputs/lenient-config/bad.json %s 2>&1 | FileCheck %s --check-prefix=BAD

func.func @f() {
  %0 = util.unfoldable_constant dense<[1, 2]> : tensor<2xi32>
  %1 = util.optimization_barrier %0 : tensor<2xi32>
  %2 = tosa.add %1, %1 : (tensor<2xi32>, tensor<2xi32>) -> tensor<3xi32>
  check.expect_eq_const(%2, dense<[2, 4, 6]> : tensor<3xi32>) : tensor<3xi32>
  %c = flow.tensor.dynamic_constant dense<1.0> : tensor<2xf32> -> tensor<?xf32>
  return
}

// STRICT: lenient.mlir:12:8: error: Dialect `util' not found for custom op 'util.unfoldable_constant'
// STRICT: lenient.mlir:12:8: note: to parse the custom syntax of ops of dialects MLIR 22 does not have as unregistered ops, use `--lenient` (check, explain) or list `util` in `lenientDialects` (.tosa-lsp.json)
// STRICT-NOT: tosa.add

// Parser findings come first, then the verifier's.
// LENIENT: lenient.mlir:12:8: remark: parsed leniently (dialect `util` not registered)
// LENIENT: lenient.mlir:13:8: remark: parsed leniently (dialect `util` not registered)
// LENIENT: lenient.mlir:15:3: remark: parsed leniently (dialect `check` not registered)
// LENIENT: lenient.mlir:16:8: remark: parsed leniently (dialect `flow` not registered)
// LENIENT: lenient.mlir:14:8: error: 'tosa.add' op result type '3' not broadcast compatible with broadcasted operands's shapes '2'

// ONLY: lenient.mlir:15:3: error: Dialect `check' not found for custom op 'check.expect_eq_const'

// BAD: tosa-lsp: error: {{.*}}lenientDialects must be true, false or an array of dialect namespaces like "util"
