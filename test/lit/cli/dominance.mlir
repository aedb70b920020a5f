// Dominance errors and their notes are worded exactly like mlir-opt-22's:
// the same CHECK lines run against both tools.
// RUN: not %tosa-lsp check %s 2>&1 | FileCheck %s
// RUN: not %mlir-opt --split-input-file --allow-unregistered-dialect %s -o /dev/null 2>&1 | FileCheck %s

func.func @use_before_def() -> i32 {
  %0 = "test.use"(%1) : (i32) -> i32
  %1 = "test.def"() : () -> i32
  return %0 : i32
}
// CHECK: dominance.mlir:7:8: error: operand #0 does not dominate this use
// CHECK: dominance.mlir:8:8: note: operand defined here (op in the same block)

// -----

func.func @block_arg(%c: i1) -> i32 {
  cf.cond_br %c, ^a, ^b(%c : i1)
^a:
  %0 = "test.use"(%x) : (i1) -> i32
  return %0 : i32
^b(%x: i1):
  %1 = "test.def"() : () -> i32
  return %1 : i32
}
// CHECK: dominance.mlir:19:8: error: operand #0 does not dominate this use
// CHECK: dominance.mlir:16:1: note: operand defined as a block argument (block #2 in the same region)
