//===- InferredShapes.cpp - inferred shapes as plain data and prose -------===//

#include "ShapeInference.h"

#include <algorithm>

namespace tosa_lsp {

// An InferredOp's code, in order (each item one uint32_t):
//   name, function, number of results;
//   per result: declared, inferred (type strings), shapeFunction (shape or
//     kNone), number of contradictions and their dimensions, number of
//     dimension sources (0 or one per inferred dimension) and per source
//     its kind, number of operands and their numbers;
//   number of operands named (0 when nothing names them); per operand: its
//     name, whether it was refined, and then its declared and refined types;
//   number of yielded values (a source's numbers after the operands'); per
//     value: its name, its region's number, whether it was refined;
//   MLIR's verifier message on the refined op, or kNone.

InferredOpWriter::InferredOpWriter()
    : sharedPool(std::make_shared<InferencePool>()),
      // A function's op names, types and operand names: grown from empty,
      // the table was rehashed several times per function.
      stringIds(256) {}

uint32_t InferredOpWriter::intern(llvm::StringRef s) {
  auto [it, added] = stringIds.try_emplace(s, sharedPool->strings.size());
  if (added) {
    sharedPool->strings.push_back(s.str());
    sharedPool->typeShapes.push_back(InferencePool::kNone);
  }
  return it->second;
}

uint32_t InferredOpWriter::internShape(const MaybeShape &shape) {
  auto [it, added] = shapeIds.try_emplace(shape, sharedPool->shapes.size());
  if (added)
    sharedPool->shapes.push_back(shape);
  return it->second;
}

uint32_t InferredOpWriter::internType(llvm::StringRef text,
                                      const MaybeShape &shape) {
  uint32_t id = intern(text);
  if (sharedPool->typeShapes[id] == InferencePool::kNone)
    sharedPool->typeShapes[id] = internShape(shape);
  return id;
}

InferredOp InferredOpWriter::write(uint32_t name, uint32_t function,
                                   const std::vector<Result> &results,
                                   const std::vector<Operand> &operands,
                                   uint32_t rejection,
                                   const std::vector<Yielded> &yielded) {
  InferredOp op;
  op.pool = sharedPool;
  std::vector<uint32_t> &c = sharedPool->codes;
  op.codeBegin = static_cast<uint32_t>(c.size());
  c.push_back(name);
  c.push_back(function);
  c.push_back(results.size());
  for (const Result &r : results) {
    c.push_back(r.declared);
    c.push_back(r.inferred);
    c.push_back(r.shapeFunction);
    c.push_back(r.contradictions.size());
    c.insert(c.end(), r.contradictions.begin(), r.contradictions.end());
    c.push_back(r.dimSources.size());
    for (const DimSource &d : r.dimSources) {
      c.push_back(d.kind);
      c.push_back(d.operands.size());
      c.insert(c.end(), d.operands.begin(), d.operands.end());
    }
    if (r.declared != r.inferred)
      op.flags |= InferredOp::kRefined;
    if (!r.contradictions.empty())
      op.flags |= InferredOp::kContradicts;
  }
  c.push_back(operands.size());
  for (const Operand &o : operands) {
    c.push_back(o.name);
    c.push_back(o.refined);
    if (o.refined) {
      c.push_back(o.declared);
      c.push_back(o.inferred);
      op.flags |= InferredOp::kRefinedOperands;
    }
  }
  c.push_back(yielded.size());
  for (const Yielded &y : yielded) {
    c.push_back(y.name);
    c.push_back(y.region);
    c.push_back(y.refined);
  }
  c.push_back(rejection);
  if (rejection != InferencePool::kNone)
    op.flags |= InferredOp::kRejected;
  op.codeSize = static_cast<uint32_t>(c.size() - op.codeBegin);
  return op;
}

void InferredOpWriter::shrink() {
  sharedPool->codes.shrink_to_fit();
  sharedPool->strings.shrink_to_fit();
  sharedPool->typeShapes.shrink_to_fit();
  sharedPool->shapes.shrink_to_fit();
}

llvm::ArrayRef<uint32_t> InferredOp::code() const {
  if (!pool || size_t(codeBegin) + codeSize > pool->codes.size())
    return {};
  return llvm::ArrayRef<uint32_t>(pool->codes).slice(codeBegin, codeSize);
}

// A default-constructed op (no pool) reads as empty.
static const std::string &pooled(const InferencePool *pool,
                                 llvm::ArrayRef<uint32_t> code, size_t at) {
  static const std::string none;
  return pool && at < code.size() && code[at] < pool->strings.size()
             ? pool->strings[code[at]]
             : none;
}

const std::string &InferredOp::name() const {
  return pooled(pool.get(), code(), 0);
}

const std::string &InferredOp::function() const {
  return pooled(pool.get(), code(), 1);
}

const std::string &InferredOp::rejection() const {
  static const std::string none;
  return flags & kRejected ? pooled(pool.get(), code(), codeSize - 1) : none;
}

namespace {

/// Reads an InferredOp's code (layout above).
struct CodeReader {
  llvm::ArrayRef<uint32_t> code;
  size_t at = 0;
  uint32_t next() { return at < code.size() ? code[at++] : 0; }
};

struct DecodedOperand {
  const std::string *name = nullptr;
  const std::string *declared = nullptr, *inferred = nullptr;
};

struct DecodedYielded {
  const std::string *name = nullptr;
  unsigned region = 0;
  bool refined = false;
};

} // namespace

/// Decodes the code into results and operands (labels need both).
static void decode(const InferencePool &pool, llvm::ArrayRef<uint32_t> code,
                   std::vector<InferredResult> *results,
                   std::vector<std::vector<DimSource>> *sources,
                   std::vector<DecodedOperand> &operands,
                   std::vector<DecodedYielded> *yielded = nullptr) {
  CodeReader r{code};
  auto shape = [&](uint32_t id) -> MaybeShape {
    return id < pool.shapes.size() ? pool.shapes[id] : std::nullopt;
  };
  r.next(); // name
  r.next(); // function
  uint32_t numResults = r.next();
  for (uint32_t i = 0; i < numResults; ++i) {
    InferredResult res;
    uint32_t declared = r.next(), inferred = r.next();
    uint32_t shapeFunction = r.next();
    if (results) {
      res.declared = pool.strings[declared];
      res.inferred = pool.strings[inferred];
      res.declaredShape = shape(pool.typeShapes[declared]);
      res.inferredShape = shape(pool.typeShapes[inferred]);
      res.shapeFunction = shape(shapeFunction);
    }
    for (uint32_t n = r.next(); n; --n)
      res.contradictions.push_back(r.next());
    std::vector<DimSource> dims(r.next());
    for (DimSource &d : dims) {
      d.kind = static_cast<DimSource::Kind>(r.next());
      d.operands.resize(r.next());
      for (unsigned &k : d.operands)
        k = r.next();
    }
    if (results)
      results->push_back(std::move(res));
    if (sources)
      sources->push_back(std::move(dims));
  }
  operands.resize(r.next());
  for (DecodedOperand &o : operands) {
    o.name = &pool.strings[r.next()];
    if (r.next()) {
      o.declared = &pool.strings[r.next()];
      o.inferred = &pool.strings[r.next()];
    }
  }
  if (!yielded)
    return;
  yielded->resize(r.next());
  for (DecodedYielded &y : *yielded) {
    y.name = &pool.strings[r.next()];
    y.region = r.next();
    y.refined = r.next();
  }
}

/// What a region of `op` is called in a dimension's source.
static std::string regionName(const std::string &op, unsigned region) {
  if (op == "tosa.cond_if" && region < 2)
    return region ? "the else branch" : "the then branch";
  if (op == "tosa.while_loop" && region < 2)
    return region ? "the loop body" : "the loop condition";
  return "region #" + std::to_string(region);
}

std::vector<InferredResult> InferredOp::resultTypes() const {
  std::vector<InferredResult> out;
  std::vector<DecodedOperand> operands;
  if (pool)
    decode(*pool, code(), &out, nullptr, operands);
  return out;
}

std::vector<InferredResult> InferredOp::results() const {
  std::vector<InferredResult> out;
  if (!pool)
    return out;
  std::vector<std::vector<DimSource>> sources;
  std::vector<DecodedOperand> operands;
  std::vector<DecodedYielded> yielded;
  decode(*pool, code(), &out, &sources, operands, &yielded);
  const std::string &opName = name();
  // "`%in` (operand #0)", ", itself refined" when propagation refined it;
  // "`%x` (yielded by the then branch)" for what a region yields.
  auto label = [&](unsigned k) {
    if (k >= operands.size() && k - operands.size() < yielded.size()) {
      const DecodedYielded &y = yielded[k - operands.size()];
      std::string by = "yielded by " + regionName(opName, y.region);
      return (y.name->empty() ? "the value " + by
                              : "`" + *y.name + "` (" + by + ")") +
             (y.refined ? ", itself refined" : "");
    }
    std::string name = k < operands.size() ? *operands[k].name : "";
    std::string out =
        name.empty() ? "operand #" + std::to_string(k)
                     : "`" + name + "` (operand #" + std::to_string(k) + ")";
    if (k < operands.size() && operands[k].declared)
      out += ", itself refined";
    return out;
  };
  for (size_t i = 0; i < out.size(); ++i)
    for (const DimSource &d : sources[i]) {
      std::string text;
      if (d.kind == DimSource::Attributes)
        text = "the op's attributes";
      for (unsigned k : d.operands)
        text += (text.empty()                 ? ""
                 : d.kind == DimSource::AllOf ? " and "
                                              : " or ") +
                label(k);
      out[i].dimSources.push_back(std::move(text));
    }
  return out;
}

std::vector<std::string> InferredOp::refinedOperands() const {
  std::vector<std::string> out;
  if (!hasRefinedOperands() || !pool)
    return out;
  std::vector<DecodedOperand> operands;
  decode(*pool, code(), nullptr, nullptr, operands);
  for (size_t k = 0; k < operands.size(); ++k)
    if (operands[k].declared)
      out.push_back("`" + *operands[k].name + "` (operand #" +
                    std::to_string(k) + "): `" + *operands[k].declared +
                    "` -> `" + *operands[k].inferred + "`");
  return out;
}

FunctionInference shifted(const FunctionInference &f, int lines,
                          unsigned section) {
  FunctionInference out = f;
  out.section = section;
  shiftLines(out.scope, lines);
  for (InferredOp &op : out.ops) {
    op.section = section;
    shiftLines(op.range, lines);
    shiftLines(op.scope, lines);
    shiftLines(op.resultTypeRange, lines);
  }
  for (unsigned &l : out.lastLineSoFar)
    l += lines;
  for (auto &edit : out.refineEdits)
    shiftLines(edit.first, lines);
  return out;
}

std::vector<const InferredOp *>
ShapeInference::opsOnLines(unsigned first, unsigned last) const {
  std::vector<const InferredOp *> out;
  for (const FunctionInference &f : functions) {
    if (f.scope.begin.valid() &&
        (f.scope.begin.line > last || f.scope.end.line < first))
      continue;
    size_t i = f.lastLineSoFar.size() == f.ops.size()
                   ? std::lower_bound(f.lastLineSoFar.begin(),
                                      f.lastLineSoFar.end(), first) -
                         f.lastLineSoFar.begin()
                   : 0;
    for (; i < f.ops.size() && f.ops[i].range.begin.line <= last; ++i)
      if (f.ops[i].lastLine() >= first)
        out.push_back(&f.ops[i]);
  }
  return out;
}

const InferredOp *ShapeInference::opAt(Position pos) const {
  for (const InferredOp *op : opsOnLines(pos.line, pos.line))
    if (op->range.begin.line == pos.line &&
        (pos.column == 0 || (op->range.begin.column <= pos.column &&
                             pos.column <= op->range.end.column)))
      return op;
  return nullptr;
}

std::vector<const InferredOp *> ShapeInference::allOps() const {
  std::vector<const InferredOp *> out;
  for (const FunctionInference &f : functions)
    for (const InferredOp &op : f.ops)
      out.push_back(&op);
  return out;
}

std::vector<TextEditData> refineAllEdits(const ShapeInference &si,
                                         const std::string &function) {
  std::vector<TextEditData> out;
  for (const FunctionInference &f : si.functions)
    if (function.empty() || f.name == function)
      for (const auto &[range, text] : f.refineEdits)
        out.push_back({range, f.pool->strings[text]});
  std::sort(out.begin(), out.end(),
            [](const TextEditData &a, const TextEditData &b) {
              return std::make_pair(a.range.begin.line, a.range.begin.column) <
                     std::make_pair(b.range.begin.line, b.range.begin.column);
            });
  return out;
}

static std::string dimText(int64_t d) {
  return d == kDynamic ? "?" : std::to_string(d);
}

std::vector<Diagnostic> contradictionDiagnostics(const ShapeInference &si) {
  std::vector<Diagnostic> out;
  for (const InferredOp *op : si.allOps()) {
    if (!op->contradicts())
      continue;
    // An error where mlir-opt-22 --tosa-infer-shapes fails too: MLIR's
    // verifier rejects the refined op. Where it accepts it (tosa.mul checks
    // no result shape), the contradiction is a warning, as the Broadcastable
    // check's own is.
    const std::string &rejection = op->rejection();
    auto diagnostic = [&](std::string message, bool verifierNote) {
      Diagnostic d;
      d.severity = rejection.empty() ? Severity::Warning : Severity::Error;
      d.source = DiagSource::Verifier;
      d.range = op->range;
      d.section = op->section;
      d.code = "shape-contradiction";
      d.message = std::move(message);
      // The notes are about the op (the operands it names are in its text):
      // at its range, where the server shows them too (without a position
      // the CLI printed none and JSON line 0).
      if (verifierNote && !rejection.empty())
        d.notes.push_back(
            {op->range, "after tosa-infer-shapes, MLIR's verifier: " +
                            std::string(rejection)});
      for (const std::string &s : op->refinedOperands()) {
        std::string plain;
        for (char c : s)
          if (c != '`')
            plain += c;
        d.notes.push_back({op->range, "refined by propagation: " + plain});
      }
      out.push_back(std::move(d));
    };
    std::vector<InferredResult> results = op->results();
    for (size_t i = 0; i < results.size(); ++i) {
      const InferredResult &r = results[i];
      if (r.contradictions.empty())
        continue;
      std::string dims;
      for (unsigned k : r.contradictions)
        dims += std::string(dims.empty() ? "" : ", ") + "dimension " +
                std::to_string(k) + " is " + dimText((*r.shapeFunction)[k]) +
                ", not " + dimText((*r.declaredShape)[k]);
      diagnostic(
          "'" + op->name() + "' result #" + std::to_string(i) +
              " is declared " + r.declared +
              " but shape inference (tosa-infer-shapes) gives " +
              formatShape(r.shapeFunction) + ": " + dims +
              (rejection.empty() ? " (MLIR's verifier accepts the op)" : ""),
          true);
    }
    // The sizes propagated into its operands make the op itself invalid
    // (its shape function gives nothing to compare: 3 and 4 do not
    // broadcast).
    if (!op->resultContradicts())
      diagnostic("'" + op->name() +
                     "' does not verify with the sizes shape inference "
                     "(tosa-infer-shapes) propagates into its operands: " +
                     rejection,
                 false);
  }
  return out;
}

std::string inferredSummary(const InferredOp &op) {
  std::string out;
  std::vector<InferredResult> results = op.results();
  for (size_t i = 0; i < results.size(); ++i) {
    const InferredResult &r = results[i];
    if (!out.empty())
      out += ", ";
    if (results.size() > 1)
      out += "#" + std::to_string(i) + " ";
    if (!r.contradictions.empty())
      out += "declared " + formatShape(r.declaredShape) +
             " contradicts inferred " + formatShape(r.shapeFunction);
    else if (r.refined())
      out += "inferred " + formatShape(r.inferredShape) + " (declared " +
             formatShape(r.declaredShape) + ")";
    else
      out += "as declared (" + formatShape(r.declaredShape) + ")";
  }
  if (!op.rejection().empty())
    out += "; MLIR's verifier rejects the refined op: " + op.rejection();
  return out;
}

std::string renderInferred(const InferredOp &op, RenderStyle style) {
  bool md = style == RenderStyle::Markdown;
  auto code = [&](const std::string &s) { return md ? "`" + s + "`" : s; };
  auto bold = [&](const std::string &s) { return md ? "**" + s + "**" : s; };
  std::string nl = md ? "\n\n" : "\n";
  std::string indent = md ? "- " : "  ";
  std::string out;
  // A contradiction MLIR's verifier accepts on the refined op (tosa.mul
  // checks no result shape) is a warning, as in contradictionDiagnostics.
  std::string severity = op.rejection().empty() ? "warning" : "error";
  out += op.name() + " in @" + op.function() + ": " +
         (op.contradicts() ? severity
          : op.refined()   ? "refinable"
                           : "as declared") +
         " (tosa-infer-shapes)" + nl;
  std::vector<InferredResult> results = op.results();
  for (size_t i = 0; i < results.size(); ++i) {
    const InferredResult &r = results[i];
    out += indent + "result #" + std::to_string(i) + ": " + bold("declared") +
           " " + code(r.declared) + "   " + bold("inferred") + " " +
           code(r.inferred) + nl;
    for (size_t d = 0; d < r.dimSources.size(); ++d)
      if (!r.dimSources[d].empty() && r.declaredShape && r.inferredShape &&
          d < r.inferredShape->size())
        out += (md ? "  - " : "    ") + std::string("dim ") +
               std::to_string(d) + ": ? -> " + dimText((*r.inferredShape)[d]) +
               " from " + r.dimSources[d] + nl;
    for (unsigned d : r.contradictions)
      out +=
          (md ? "  - " : "    ") + bold(severity) + ": dim " +
          std::to_string(d) + " is declared " + dimText((*r.declaredShape)[d]) +
          " but the op's shape function "
          "gives " +
          dimText((*r.shapeFunction)[d]) + " (" + formatShape(r.shapeFunction) +
          ") on its operands; at run time the result has that size" + nl;
  }
  if (!op.rejection().empty() && !op.resultContradicts())
    out += indent + bold("error") + ": MLIR's verifier rejects the op on " +
           "the refined types: " + op.rejection() + nl;
  if (op.hasRefinedOperands()) {
    out += indent + "operands refined by propagation:" + nl;
    for (const std::string &s : op.refinedOperands())
      out += (md ? "  - " : "    ") + s + nl;
  }
  if (!md) {
    // Text output: strip the Markdown backquotes carried by the data.
    std::string plain;
    for (char c : out)
      if (c != '`')
        plain += c;
    return plain;
  }
  return out;
}

} // namespace tosa_lsp
