//===- OpGenericForm.cpp - one op's generic form, on request --------------===//

#include "OpGenericForm.h"

#include "LineIndex.h"
#include "MLIRShared.h"
#include "Query.h"

#include "mlir/IR/Block.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Operation.h"
#include "mlir/IR/OperationSupport.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/raw_ostream.h"

#include <memory>
#include <unordered_set>

namespace tosa_lsp {

namespace {

/// One context per thread, reused: a hover must not pay for a context.
mlir::MLIRContext &threadContext() {
  static const mlir::DialectRegistry &registry = []() -> const auto & {
    static mlir::DialectRegistry r;
    registerFileDialects(r);
    return r;
  }();
  thread_local std::unique_ptr<mlir::MLIRContext> ctx;
  // Forget what it uniqued now and then (a long session hovers a lot).
  thread_local unsigned uses = 0;
  if (!ctx || ++uses % 4096 == 0) {
    ctx = singleThreadedContext(registry);
    ctx->allowUnregisteredDialects();
  }
  return *ctx;
}

} // namespace

std::optional<OpGenericForm>
opGenericForm(std::string_view text, const LineIndex &lines,
              const FileAnalysis &fa, const std::vector<AliasInfo> &aliases,
              Range scope, unsigned section) {
  auto b = lines.offset(scope.begin), e = lines.offset(scope.end);
  if (!b || !e || *e <= *b)
    return std::nullopt;
  // With its results: `%0 = ` before the name on its line.
  size_t start = *b;
  size_t lineStart = lines.lineStart(scope.begin.line - 1);
  std::string_view head = text.substr(lineStart, *b - lineStart);
  size_t first = head.find_first_not_of(" \t");
  if (first != std::string_view::npos && head[first] == '%')
    start = lineStart + first;
  Range stmt{lines.position(start), scope.end};

  std::string src;
  for (const AliasInfo &a : aliases)
    if (a.section == section)
      src += a.name + " = " + a.valueText + "\n";
  src += "\"tosa_lsp.scope\"() ({\n";
  // Values used inside and defined outside, each once.
  std::unordered_set<std::string_view> defined;
  for (const ValueInfo &v : fa.values) {
    if (v.section != section || contains(stmt, v.def.begin))
      continue;
    bool used = false;
    for (const Range &u : v.uses)
      if (contains(stmt, u.begin)) {
        used = true;
        break;
      }
    if (!used || !defined.insert(v.name.view()).second)
      continue;
    std::string types = v.type.str();
    // A group's types, comma-separated (`!llvm.struct<(i32, f32)>` has
    // commas of its own: count the top-level ones).
    int depth = 0;
    size_t n = 1;
    for (char c : types) {
      if (c == '<' || c == '(' || c == '[' || c == '{')
        ++depth;
      else if (c == '>' || c == ')' || c == ']' || c == '}')
        --depth;
      else if (c == ',' && depth == 0)
        ++n;
    }
    src += std::string(v.name.view()) +
           (n > 1 ? ":" + std::to_string(n) : std::string()) +
           " = \"tosa_lsp.value\"() : () -> (" + types + ")\n";
  }
  src += text.substr(start, *e - start);
  src += "\n}) : () -> ()\n";

  mlir::MLIRContext &ctx = threadContext();
  mlir::ScopedDiagnosticHandler quiet(
      &ctx, [](mlir::Diagnostic &) { return mlir::success(); });
  mlir::Block block;
  mlir::ParserConfig config(&ctx, /*verifyAfterParse=*/false);
  if (mlir::failed(mlir::parseSourceString(src, &block, config)) ||
      block.empty() || block.back().getNumRegions() != 1 ||
      block.back().getRegion(0).empty())
    return std::nullopt;
  mlir::Block &body = block.back().getRegion(0).front();
  if (body.empty())
    return std::nullopt;
  mlir::Operation *op = &body.back();

  OpGenericForm out;
  out.name = op->getName().getStringRef().str();
  if (auto sym = op->getAttrOfType<mlir::StringAttr>(
          mlir::SymbolTable::getSymbolAttrName())) {
    auto vis = op->getAttrOfType<mlir::StringAttr>(
        mlir::SymbolTable::getVisibilityAttrName());
    out.symbol = (vis ? vis.str() : std::string("public")) + " @" + sym.str();
  }
  for (mlir::Type t : op->getResultTypes()) {
    std::string s;
    llvm::raw_string_ostream os(s);
    t.print(os);
    out.resultTypes.push_back(std::move(s));
  }
  // Without its regions, as upstream's hover (a function's body would be
  // the whole function).
  std::vector<std::unique_ptr<mlir::Region>> regions;
  for (mlir::Region &r : op->getRegions()) {
    regions.push_back(std::make_unique<mlir::Region>());
    regions.back()->takeBody(r);
  }
  llvm::raw_string_ostream os(out.genericForm);
  op->print(os, mlir::OpPrintingFlags()
                    .printGenericOpForm()
                    .elideLargeElementsAttrs(16)
                    .elideLargeResourceString(64));
  return out;
}

} // namespace tosa_lsp
