// Streaming stores (StreamingStores.h): the loop nests of F_into, which
// write into the caller's buffer, get a twin with non-temporal vector
// stores, chosen at run time when the nest stores at least the threshold,
// and a store fence after it. F's result is a fresh allocation (its pages
// were just zeroed, so cached): ordinary stores only. Off and upstream
// mode: none.
// RUN: rm -rf %t && mkdir -p %t
// RUN: %tosa-lsp compile %s -o %t/s.ll --emit=llvm-ir --cpu=x86-64 -O3 --streaming-stores=4K 2>&1 | FileCheck %s --check-prefix=LOG
// RUN: FileCheck %s --input-file=%t/s.ll
// RUN: %tosa-lsp compile %s -o %t/s.s --emit=asm --cpu=x86-64 -O3 --streaming-stores=4K --quiet
// RUN: FileCheck %s --check-prefix=ASM --input-file=%t/s.s
// RUN: %tosa-lsp compile %s -o %t/auto.ll --emit=llvm-ir -O3 2>&1 | FileCheck %s --check-prefix=AUTO
// RUN: %tosa-lsp compile %s -o %t/off.ll --emit=llvm-ir -O3 --streaming-stores=off 2>&1 | FileCheck %s --check-prefix=NONE
// RUN: FileCheck %s --check-prefix=NO-NT --input-file=%t/off.ll
// RUN: %tosa-lsp compile %s -o %t/up.ll --emit=llvm-ir -O3 --mode=upstream --streaming-stores=1 2>&1 | FileCheck %s --check-prefix=NONE
// RUN: FileCheck %s --check-prefix=NO-NT --input-file=%t/up.ll
// RUN: not %tosa-lsp compile %s -o %t/bad.ll --emit=llvm-ir --streaming-stores=4X 2>&1 | FileCheck %s --check-prefix=BAD
// RUN: not %tosa-lsp compile %s -o %t/bad.ll --emit=llvm-ir --streaming-stores=0 2>&1 | FileCheck %s --check-prefix=BAD

func.func @add_rows(%a: tensor<?x64xf32>, %b: tensor<1x64xf32>) -> tensor<?x64xf32> {
  %r = tosa.add %a, %b : (tensor<?x64xf32>, tensor<1x64xf32>) -> tensor<?x64xf32>
  return %r : tensor<?x64xf32>
}

// Rows of a run-time length (C): a row starts 4 * C * r bytes into the
// buffer, so the twin also tests that 4 * C is a multiple of 16.
func.func @add_bias(%a: tensor<?x?xf32>, %b: tensor<1x?xf32>) -> tensor<?x?xf32> {
  %r = tosa.add %a, %b : (tensor<?x?xf32>, tensor<1x?xf32>) -> tensor<?x?xf32>
  return %r : tensor<?x?xf32>
}

// LOG: streaming stores: {{[1-9][0-9]*}} loop nest(s) store non-temporally from 4096 bytes

// CHECK-LABEL: define {{.*}} @add_rows(
// CHECK-NOT:     !nontemporal
// CHECK-LABEL: define void @add_rows_into(
// The twin also needs the buffer 16-byte aligned (x86 has no unaligned
// non-temporal vector store: at align 4 each became 8-byte movnti).
// CHECK:         %[[BIG:stream.big[0-9]*]] = icmp uge i64 %{{.*}}, 4096
// CHECK:         %[[LOW:[0-9]+]] = and i64 %{{.*}}, 15
// CHECK-NEXT:    %[[AL:[0-9]+]] = icmp eq i64 %[[LOW]], 0
// CHECK-NEXT:    %[[BOTH:[0-9]+]] = and i1 %[[BIG]], %[[AL]]
// CHECK-NEXT:    br i1 %[[BOTH]], label %[[TWIN:[^,]*]], label %
// CHECK:       [[TWIN]]:
// CHECK:         store <4 x float> %{{.*}}, ptr %{{.*}}, align 16, !nontemporal
// CHECK:         call void @llvm.x86.sse.sfence()
// CHECK-LABEL: define void @_mlir_ciface_add_rows_into(
// CHECK-LABEL: define {{.*}} @add_bias(
// CHECK-NOT:     !nontemporal
// CHECK-LABEL: define void @add_bias_into(
// CHECK:         and i64 %{{.*}}, 15
// CHECK:         store <4 x float> %{{.*}}, ptr %{{.*}}, align 16, !nontemporal
// CHECK-NOT:     align 4, !nontemporal
// CHECK-LABEL: define void @_mlir_ciface_add_bias_into(

// ASM-NOT: movnti
// ASM: movntps
// ASM: sfence

// AUTO: streaming stores: {{[1-9][0-9]*}} loop nest(s) store non-temporally from {{[1-9][0-9]*}} bytes

// NONE-NOT: streaming stores
// NO-NT-NOT: nontemporal
// NO-NT-NOT: sfence

// BAD: --streaming-stores takes auto, off or a positive size (4096, 512K, 4M, 1G)
