//===- DestinationTwin.cpp - F_into, and F as a call of it ----------------===//
//
// Every entry point F gets a destination-passing twin `F_into(args...,
// dest...)` writing its results into buffers the caller provides (repeated
// calls allocate nothing). Both are public; the body exists once, in a
// private implementation both call: F allocates its results and calls it.
// Two full copies of a big model (F's and F_into's) doubled what LLVM
// optimises, which is most of the compile time.
//
//===----------------------------------------------------------------------===//

#include "LoweringIR.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/ADT/DenseMap.h"

using namespace mlir;

namespace tosa_lsp::detail {

namespace {

/// Functions with at most this many TOSA ops keep their body in F and in
/// F_into (the implementation is inlined into both): their compile time is
/// small, and F's fresh result keeps its ordinary stores (a streaming twin
/// is chosen for stores into a caller's buffer, slower right after the
/// allocation zeroed the pages; StreamingStores.cpp).
constexpr unsigned kInlineLimit = 16;

/// The private implementation: a copy of F taking the destinations as
/// trailing arguments and returning `materialize_in_destination` of each
/// result into its destination. eliminate-empty-tensors then makes the
/// producing loops write there directly, and drop-equivalent-buffer-results
/// (private functions only) removes the returns.
func::FuncOp destinationImpl(func::FuncOp fn, StringRef implName) {
  FunctionType type = fn.getFunctionType();
  OpBuilder b(fn);
  b.setInsertionPointAfter(fn);
  auto impl = cast<func::FuncOp>(b.clone(*fn));
  impl.setSymName(implName);
  impl.setPrivate();
  impl->removeAttr("llvm.emit_c_interface");
  // Through the interface, so that argument attributes (`{foo.name}` on
  // F's arguments) get an entry for each destination too.
  unsigned numArgs = type.getNumInputs(), numResults = type.getNumResults();
  SmallVector<unsigned> at(numResults, numArgs);
  SmallVector<DictionaryAttr> attrs(numResults, DictionaryAttr());
  SmallVector<Location> locs(numResults, impl.getLoc());
  if (failed(impl.insertArguments(at, type.getResults(), attrs, locs))) {
    impl.erase();
    return nullptr;
  }
  SmallVector<Value> dests(impl.getArguments().drop_front(numArgs));
  impl.walk([&](func::ReturnOp ret) {
    OpBuilder rb(ret);
    // A value returned twice (`return %0, %0`) cannot be computed in place
    // into two destinations: later occurrences copy the first destination.
    llvm::DenseMap<Value, Value> written;
    for (auto [i, v] : llvm::enumerate(ret.getOperands())) {
      Value source = written.lookup(v);
      Value result = bufferization::MaterializeInDestinationOp::create(
                         rb, ret.getLoc(), dests[i].getType(),
                         source ? source : v, dests[i])
                         .getResult();
      if (!source)
        written[v] = result;
      ret.setOperand(i, result);
    }
  });
  return impl;
}

/// Replaces F's body by a call of `impl` on fresh (tensor.empty) results,
/// when their sizes are known without running the body (static shapes).
/// Returns whether it did.
bool callImplementation(func::FuncOp fn, func::FuncOp impl) {
  FunctionType type = fn.getFunctionType();
  if (!llvm::all_of(type.getResults(), [](Type t) {
        return cast<RankedTensorType>(t).hasStaticShape();
      }))
    return false;
  Region &body = fn.getBody();
  Block *entry = &body.front();
  for (Block &block : body)
    block.dropAllDefinedValueUses();
  body.getBlocks().erase(std::next(body.begin()), body.end());
  while (!entry->empty())
    entry->back().erase();
  OpBuilder b = OpBuilder::atBlockEnd(entry);
  Location loc = fn.getLoc();
  SmallVector<Value> operands(entry->getArguments());
  for (Type t : type.getResults()) {
    auto tensor = cast<RankedTensorType>(t);
    operands.push_back(tensor::EmptyOp::create(b, loc, tensor.getShape(),
                                               tensor.getElementType()));
  }
  auto call = func::CallOp::create(b, loc, impl, operands);
  func::ReturnOp::create(b, loc, call.getResults());
  return true;
}

} // namespace

void addDestinationTwin(LoweredSection &out, func::FuncOp fn) {
  FunctionType type = fn.getFunctionType();
  if (type.getNumResults() == 0 ||
      !llvm::all_of(type.getResults(), llvm::IsaPred<RankedTensorType>))
    return;
  std::string name = fn.getSymName().str() + kIntoSuffix,
              implName = "__tosa_lsp_" + name;
  if (out.module->lookupSymbol(name) || out.module->lookupSymbol(implName))
    return; // The user's own function of that name wins.
  MLIRContext *ctx = fn.getContext();
  ctx->getOrLoadDialect<bufferization::BufferizationDialect>();
  ctx->getOrLoadDialect<tensor::TensorDialect>();
  unsigned tosaOps = 0;
  fn.walk([&](Operation *op) {
    tosaOps += op->getName().getStringRef().starts_with("tosa.");
  });
  func::FuncOp impl = destinationImpl(fn, implName);
  if (!impl)
    return;
  bool shared = tosaOps > kInlineLimit && callImplementation(fn, impl);
  // Shared: one body, called from F and F_into, which LLVM must not
  // inline twice again; else inlined into F_into (its one call site).
  if (shared)
    impl->setAttr("passthrough",
                  ArrayAttr::get(ctx, {StringAttr::get(ctx, "noinline")}));

  SmallVector<Type> inputs(type.getInputs());
  inputs.append(type.getResults().begin(), type.getResults().end());
  OpBuilder b(impl);
  b.setInsertionPointAfter(impl);
  auto twin = func::FuncOp::create(b, fn.getLoc(), name,
                                   FunctionType::get(ctx, inputs, {}));
  twin->setAttr("llvm.emit_c_interface", UnitAttr::get(ctx));
  Block *entry = twin.addEntryBlock();
  OpBuilder eb = OpBuilder::atBlockEnd(entry);
  func::CallOp::create(eb, fn.getLoc(), impl, entry->getArguments());
  func::ReturnOp::create(eb, fn.getLoc());

  out.entryPoints.push_back(name);
  out.signatures[name] = twin.getFunctionType();
  out.destinationEntries.insert(name);
}

} // namespace tosa_lsp::detail
