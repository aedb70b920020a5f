//===- LoweredGraph.cpp - a function after lowering, as a graph -----------===//

#include "LoweredGraph.h"

#include "LoweringIR.h"
#include "MLIRShared.h"

#include "Analysis.h"
#include "CrashGuard.h"

#include "mlir/IR/AsmState.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Interfaces/FunctionInterfaces.h"

using namespace mlir;

namespace tosa_lsp {

namespace {

/// Names as the preview prints them (`%0`, `%arg0`): one AsmState for the
/// function, so they agree with its text.
class Walker {
public:
  Walker(Operation *fn, const Section &sec, GenericFunction &out)
      : state(fn, OpPrintingFlags()), sec(sec), out(out) {}

  std::string name(Value v) {
    std::string s;
    llvm::raw_string_ostream os(s);
    v.printAsOperand(os, state);
    return s;
  }
  std::string type(Type t) {
    auto [it, fresh] = types.try_emplace(t.getAsOpaquePointer());
    if (fresh) {
      llvm::raw_string_ostream os(it->second);
      t.print(os);
    }
    return it->second;
  }

  void walk(Block &block, int parent) {
    for (Operation &op : block) {
      GenericOp g;
      g.name = op.getName().getStringRef().str();
      g.parent = parent;
      for (Value v : op.getOperands())
        g.operands.push_back(name(v));
      for (Value r : op.getResults()) {
        g.results.push_back(name(r));
        g.types.push_back(type(r.getType()));
      }
      if (auto f = fileLocOf(op.getLoc()); f && f->getLine() != 0)
        g.source = {f->getLine() + sec.firstLine - 1,
                    f->getLine() == 1 ? f->getColumn() + sec.firstColumn - 1
                                      : f->getColumn()};
      out.ops.push_back(std::move(g));
      int self = static_cast<int>(out.ops.size()) - 1;
      // A structured op's body is scalar code on block arguments.
      if (op.getName().getDialectNamespace() == "linalg")
        continue;
      for (Region &r : op.getRegions())
        for (Block &b : r)
          walk(b, self);
    }
  }

private:
  AsmState state;
  const Section &sec;
  GenericFunction &out;
  llvm::DenseMap<const void *, std::string> types;
};

llvm::Expected<GenericFunction> lowerUnguarded(const std::string &text,
                                               const std::string &path,
                                               const LowerOptions &options) {
  std::vector<Section> sections = splitSections(text);
  const Section *sec =
      detail::sectionDefining(text, sections, options.function);
  if (!sec)
    return sourceError(path, 0, 0,
                       "no function @" + options.function + " in " + path);
  detail::LoweredSection ls;
  if (llvm::Error err = detail::lowerSection(text, path, *sec, options, ls))
    return std::move(err);
  auto fn = dyn_cast_or_null<FunctionOpInterface>(
      ls.module->lookupSymbol(options.function));
  if (!fn || fn.isExternal())
    return sourceError(path, 0, 0,
                       std::string("after the ") + stageName(options.stage) +
                           " stage @" + options.function +
                           " is not a function with a body");
  GenericFunction out;
  out.name = options.function;
  out.stage = stageName(options.stage);
  Walker w(fn, *sec, out);
  Block &entry = fn.getFunctionBody().front();
  for (BlockArgument a : entry.getArguments()) {
    out.args.push_back(w.name(a));
    out.argTypes.push_back(w.type(a.getType()));
  }
  for (Block &b : fn.getFunctionBody())
    w.walk(b, -1);
  return out;
}

} // namespace

llvm::Expected<GenericFunction> lowerForGraph(const std::string &text,
                                              const std::string &path,
                                              const LowerOptions &options) {
  std::optional<llvm::Expected<GenericFunction>> result;
  std::optional<std::string> crash = runContained(
      [&] { result.emplace(lowerUnguarded(text, path, options)); });
  if (!crash)
    return std::move(*result);
  if (result)
    llvm::consumeError(result->takeError());
  return sourceError(path, 0, 0,
                     "MLIR crashed while lowering (" + *crash +
                         "), a bug in the upstream pass pipeline on this "
                         "input; no lowered graph is available for it");
}

} // namespace tosa_lsp
