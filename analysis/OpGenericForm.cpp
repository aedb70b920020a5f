//===- OpGenericForm.cpp - one op's generic form, on request --------------===//

#include "OpGenericForm.h"

#include "Lexer.h"
#include "LineIndex.h"
#include "MLIRShared.h"
#include "Query.h"
#include "TextScan.h"

#include "mlir/IR/Block.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Operation.h"
#include "mlir/IR/OperationSupport.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/raw_ostream.h"

#include <cctype>
#include <memory>
#include <mutex>
#include <unordered_set>

namespace tosa_lsp {

namespace {

/// Contexts for the generic form, shared by the threads that answer
/// requests (the message loop, the pool's workers), one request's at a
/// time: made once, warmed at start. One per thread (thread_local) was a
/// fresh context, ~3 ms with its dialects, on each worker's first hover.
class FormContexts {
  struct Entry {
    std::unique_ptr<mlir::MLIRContext> ctx;
    unsigned uses = 0;
  };

public:
  class Lease {
  public:
    explicit Lease(FormContexts &owner) : owner(owner) {
      {
        std::lock_guard<std::mutex> lock(owner.mu);
        if (!owner.free.empty()) {
          held = std::move(owner.free.back());
          owner.free.pop_back();
        }
      }
      // Forget what it uniqued now and then (a long session hovers a lot).
      if (!held || ++held->uses % 4096 == 0)
        held = owner.make();
    }
    ~Lease() {
      std::lock_guard<std::mutex> lock(owner.mu);
      owner.free.push_back(std::move(held));
    }
    mlir::MLIRContext &context() { return *held->ctx; }

  private:
    FormContexts &owner;
    std::unique_ptr<Entry> held;
  };

private:
  std::unique_ptr<Entry> make() {
    static const mlir::DialectRegistry &registry = []() -> const auto & {
      static mlir::DialectRegistry r;
      registerFileDialects(r);
      return r;
    }();
    auto e = std::make_unique<Entry>();
    e->ctx = singleThreadedContext(registry);
    e->ctx->allowUnregisteredDialects();
    return e;
  }
  std::mutex mu;
  std::vector<std::unique_ptr<Entry>> free;
};

FormContexts &formContexts() {
  static FormContexts *contexts = new FormContexts; // never destroyed
  return *contexts;
}

/// `src` parsed into `block` in `ctx`, unverified, MLIR's diagnostics
/// silenced.
mlir::LogicalResult parseQuietly(mlir::MLIRContext &ctx, llvm::StringRef src,
                                 mlir::Block &block) {
  mlir::ScopedDiagnosticHandler quiet(
      &ctx, [](mlir::Diagnostic &) { return mlir::success(); });
  mlir::ParserConfig config(&ctx, /*verifyAfterParse=*/false);
  return mlir::parseSourceString(src, &block, config);
}

} // namespace

void warmGenericForm() {
  static std::once_flag once;
  std::call_once(once, [] {
    FormContexts::Lease lease(formContexts());
    mlir::Block block;
    (void)parseQuietly(lease.context(),
                       "func.func @f(%a: tensor<2xf32>) -> tensor<2xf32> {\n"
                       "  %0 = tosa.abs %a : (tensor<2xf32>) -> tensor<2xf32>\n"
                       "  return %0 : tensor<2xf32>\n}\n",
                       block);
  });
}

namespace {

/// `printed` with each `%<k>` the printer numbered written as `names[k]`
/// (outside string literals): the hover shows the file's own names.
std::string renameValues(const std::string &printed,
                         const std::vector<std::string> &names) {
  std::string out;
  out.reserve(printed.size());
  for (size_t i = 0; i < printed.size();) {
    char c = printed[i];
    if (c == '"') {
      size_t end = detail::skipString(printed, i);
      out.append(printed, i, end - i);
      i = end;
      continue;
    }
    if (c == '%' && i + 1 < printed.size() && std::isdigit(printed[i + 1])) {
      size_t j = i + 1;
      while (j < printed.size() && std::isdigit(printed[j]))
        ++j;
      bool whole = j == printed.size() || !isIdChar(printed[j]);
      size_t k = std::stoul(printed.substr(i + 1, j - i - 1));
      if (whole && k < names.size()) {
        out += names[k];
        i = j;
        continue;
      }
    }
    out += c;
    ++i;
  }
  return out;
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
  // The names the printer's numbers stand for: stand-in k is `%k`, then
  // the op's own results.
  std::vector<std::string> names;
  // The values the op's text names, found through the position index (a
  // walk over a 50k-line file's values took milliseconds a hover).
  std::vector<const ValueInfo *> used;
  Lexer lex(text.substr(0, *e), start);
  for (Token t = lex.next(); t.kind != TokKind::End; t = lex.next()) {
    if (t.kind != TokKind::ValueId)
      continue;
    Lookup l = lookup(fa, lines.position(t.offset));
    if (l.value && l.value->section == section &&
        !contains(stmt, l.value->def.begin))
      used.push_back(l.value);
  }
  for (const ValueInfo *vp : used) {
    const ValueInfo &v = *vp;
    if (!defined.insert(v.name.view()).second)
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
    names.push_back(std::string(v.name.view()));
    src += std::string(v.name.view()) +
           (n > 1 ? ":" + std::to_string(n) : std::string()) +
           " = \"tosa_lsp.value\"() : () -> (" + types + ")\n";
  }
  // The op's own result groups, as written before `=`.
  if (start < *b) {
    std::string_view results = text.substr(start, *b - start);
    for (size_t i = 0; i < results.size();) {
      if (results[i] != '%') {
        ++i;
        continue;
      }
      size_t j = i + 1;
      while (j < results.size() && isIdChar(results[j]))
        ++j;
      names.push_back(std::string(results.substr(i, j - i)));
      i = j;
    }
  }
  src += text.substr(start, *e - start);
  src += "\n}) : () -> ()\n";

  FormContexts::Lease lease(formContexts());
  mlir::Block block;
  if (mlir::failed(parseQuietly(lease.context(), src, block)) ||
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
  out.genericForm = renameValues(out.genericForm, names);
  return out;
}

} // namespace tosa_lsp
