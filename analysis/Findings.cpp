//===- Findings.cpp - broadcast findings as diagnostics -------------------===//

#include "Findings.h"

#include <limits>

#include <algorithm>

namespace tosa_lsp {

const char *severityName(Severity s) {
  switch (s) {
  case Severity::Error:
    return "error";
  case Severity::Warning:
    return "warning";
  case Severity::Note:
    return "note";
  case Severity::Info:
    return "info";
  }
  return "";
}

const char *diagSourceName(DiagSource s) {
  switch (s) {
  case DiagSource::Parser:
    return "parser";
  case DiagSource::Verifier:
    return "verifier";
  case DiagSource::Broadcast:
    return "broadcast";
  case DiagSource::Spec:
    return "tosa-spec";
  case DiagSource::Validation:
    return "tosa-validate";
  }
  return "";
}

const char *opKindName(OpKind k) {
  switch (k) {
  case OpKind::Implicit:
    return "implicit";
  case OpKind::BroadcastInDim:
    return "broadcast_in_dim";
  case OpKind::LinalgBroadcast:
    return "linalg.broadcast";
  case OpKind::BinaryInDim:
    return "broadcast_dimensions";
  }
  return "";
}

namespace {
// Words of OpReport::packedShapes that are not plain values.
constexpr int32_t kDynamicWord = std::numeric_limits<int32_t>::min();
constexpr int32_t kWideWord = kDynamicWord + 1; // then low, high halves
} // namespace

std::vector<int32_t> packShapes(const std::vector<MaybeShape> &operands,
                                const MaybeShape &result,
                                const std::vector<int64_t> *dims) {
  size_t words = 3 + (result ? result->size() : 0) + (dims ? dims->size() : 0);
  for (const MaybeShape &s : operands)
    words += 1 + (s ? s->size() : 0);
  std::vector<int32_t> out;
  out.reserve(words);
  auto value = [&](int64_t v) {
    if (v == kDynamic)
      out.push_back(kDynamicWord);
    else if (v > kWideWord && v <= std::numeric_limits<int32_t>::max())
      out.push_back(static_cast<int32_t>(v));
    else {
      auto u = static_cast<uint64_t>(v);
      out.push_back(kWideWord);
      out.push_back(static_cast<int32_t>(static_cast<uint32_t>(u)));
      out.push_back(static_cast<int32_t>(static_cast<uint32_t>(u >> 32)));
    }
  };
  auto shape = [&](const MaybeShape &s) {
    if (!s) {
      value(-1);
      return;
    }
    value(static_cast<int64_t>(s->size()));
    for (int64_t d : *s)
      value(d);
  };
  value(static_cast<int64_t>(operands.size()));
  for (const MaybeShape &s : operands)
    shape(s);
  shape(result);
  if (dims) {
    value(static_cast<int64_t>(dims->size()));
    for (int64_t d : *dims)
      value(d);
  }
  return out;
}

namespace {

/// Reads OpReport::packedShapes back (what packShapes wrote).
struct PackedShapes {
  std::vector<MaybeShape> operands;
  MaybeShape result;
  std::vector<int64_t> dims;

  explicit PackedShapes(const CowVector<int32_t> &packed) {
    size_t at = 0;
    auto next = [&]() -> int64_t {
      if (at >= packed.size())
        return 0;
      int32_t w = packed[at++];
      if (w == kDynamicWord)
        return kDynamic;
      if (w != kWideWord)
        return w;
      if (at + 2 > packed.size())
        return 0;
      uint64_t lo = static_cast<uint32_t>(packed[at]),
               hi = static_cast<uint32_t>(packed[at + 1]);
      at += 2;
      return static_cast<int64_t>(lo | hi << 32);
    };
    auto shape = [&]() -> MaybeShape {
      int64_t rank = next();
      if (rank < 0)
        return std::nullopt;
      Shape s;
      for (int64_t i = 0; i < rank && at < packed.size(); ++i)
        s.push_back(next());
      return s;
    };
    int64_t n = next();
    for (int64_t i = 0; i < n; ++i)
      operands.push_back(shape());
    result = shape();
    int64_t numDims = next();
    for (int64_t i = 0; i < numDims && at < packed.size(); ++i)
      dims.push_back(next());
  }
  const MaybeShape &operand(size_t i) const {
    static const MaybeShape none;
    return i < operands.size() ? operands[i] : none;
  }
};

} // namespace

OpReport::Analyses OpReport::computeAnalyses() const {
  PackedShapes p(packedShapes);
  switch (kind) {
  case OpKind::Implicit: {
    BroadcastOptions opts;
    opts.requireEqualRanks = tosa;
    return analyzeBroadcast(p.operands, p.result, opts);
  }
  case OpKind::BroadcastInDim:
    return analyzeBroadcastInDim(p.operand(0), p.result, p.dims);
  case OpKind::LinalgBroadcast:
    return analyzeLinalgBroadcast(p.operand(0), p.result, p.dims);
  case OpKind::BinaryInDim:
    return analyzeBinaryInDim(p.operand(0), p.operand(1), p.result, p.dims);
  }
  return ExplicitBroadcastAnalysis();
}

const BroadcastAnalysis &OpReport::implicit() const {
  const Analyses &a = analyses.get([&] { return computeAnalyses(); });
  static const BroadcastAnalysis none; // asked of another kind of op
  const auto *b = std::get_if<BroadcastAnalysis>(&a);
  return b ? *b : none;
}

const ExplicitBroadcastAnalysis &OpReport::explicitBcast() const {
  const Analyses &a = analyses.get([&] { return computeAnalyses(); });
  static const ExplicitBroadcastAnalysis none; // asked of an implicit op
  const auto *e = std::get_if<ExplicitBroadcastAnalysis>(&a);
  return e ? *e : none;
}

bool OpReport::ok() const {
  if (kind == OpKind::Implicit)
    return summary ? summary->ok : implicit().ok();
  return explicitBcast().ok();
}

const std::vector<Violation> &OpReport::violations() const {
  if (kind == OpKind::Implicit)
    return implicit().violations;
  if (explicitBcast().composition && explicitBcast().violations.empty())
    return explicitBcast().composition->violations;
  return explicitBcast().violations;
}

std::vector<MaybeShape> OpReport::operandShapes() const {
  if (kind == OpKind::Implicit)
    return implicit().operands;
  if (kind == OpKind::BinaryInDim && explicitBcast().composition)
    return explicitBcast().composition->operands;
  return {explicitBcast().operand};
}

MaybeShape OpReport::declaredShape() const {
  if (kind == OpKind::Implicit)
    return implicit().declared;
  if (kind == OpKind::BinaryInDim)
    return explicitBcast().composition ? explicitBcast().composition->declared
                                       : MaybeShape();
  return explicitBcast().target;
}

MaybeShape OpReport::inferredShape() const {
  if (kind == OpKind::Implicit)
    return implicit().inferred;
  if (kind == OpKind::BinaryInDim)
    return explicitBcast().composition ? explicitBcast().composition->inferred
                                       : MaybeShape();
  // The target of a broadcast_in_dim is given, not inferred; report it when
  // the mapping is valid.
  return explicitBcast().ok() ? explicitBcast().target : MaybeShape();
}

bool FileAnalysis::hasErrors() const {
  return std::any_of(
      diagnostics.begin(), diagnostics.end(),
      [](const Diagnostic &d) { return d.severity == Severity::Error; });
}

static std::string dimList(const std::vector<unsigned> &dims) {
  std::string s;
  for (size_t i = 0; i < dims.size(); ++i)
    s += (i ? ", " : "") + std::to_string(dims[i]);
  return s;
}

void appendFindings(const OpReport &op, const Config &config,
                    std::vector<Diagnostic> &out, SharedTextPool *texts) {
  auto add = [&](Severity sev, std::string code, std::string msg,
                 std::string fix) {
    Diagnostic d;
    d.severity = sev;
    d.source = DiagSource::Broadcast;
    d.range = op.range;
    d.message = texts ? texts->get(std::move(msg)) : SharedText(std::move(msg));
    d.code = texts ? texts->get(std::move(code)) : SharedText(std::move(code));
    d.section = op.section;
    if (!fix.empty())
      d.notes.push_back({op.range, "fix: " + fix});
    out.push_back(std::move(d));
  };

  auto runtimeCheck = [&](const std::vector<unsigned> &runtime) {
    add(Severity::Info, "runtime-broadcast-check",
        "dimension" + std::string(runtime.size() > 1 ? "s " : " ") +
            dimList(runtime) + (runtime.size() > 1 ? " need" : " needs") +
            " a runtime broadcast check: a dynamic operand size may be "
            "1 (then it is broadcast) while another operand's is not",
        "");
  };
  if (op.kind == OpKind::Implicit && op.summary) {
    // Most ops have nothing to say: skip building their full analysis.
    const BroadcastSummary &s = *op.summary;
    bool refinable = config.info.refinable && s.anyRefinable;
    bool runtime = config.info.runtimeChecks && s.anyRuntimeCheck;
    bool dynStatic = config.info.dynamicToStatic && s.anyDynamicToStatic;
    if (s.ok && !refinable && !runtime && !dynStatic)
      return;
    // Only runtime checks (the many hints of a dynamic model): which
    // dimensions is in the summary too.
    if (s.ok && runtime && !refinable && !dynStatic && !s.wideRank) {
      runtimeCheck(s.runtimeCheckDimList());
      return;
    }
  }
  if (!op.ok()) {
    // MLIR's verifier is the authority on registered ops it checked: when
    // it failed, our analysis only explains (hover, `explain`); when it
    // passed, a disagreement is worth a warning. Ops it never reached (inside
    // a failed op) and unregistered ops have no verdict but ours.
    if (op.registered && op.verifierFailed)
      return;
    for (const Violation &v : op.violations()) {
      if (op.registered && op.verifierRan)
        add(Severity::Warning, violationKindName(v.kind),
            "'" + op.name + "' op " + v.message +
                " (the Broadcastable trait rejects this, but MLIR's verifier "
                "accepted it)",
            v.fix);
      else
        add(Severity::Error, violationKindName(v.kind),
            "'" + op.name + "' op " + v.message, v.fix);
      if (op.registered && !op.verifierRan)
        out.back().notes.push_back(
            {op.range, "MLIR did not verify this op because an enclosing op "
                       "failed verification; this is tosa-lsp's verdict"});
    }
    return;
  }
  if (op.kind != OpKind::Implicit)
    return;
  // What the findings say of an op that broadcasts correctly: the declared
  // and inferred shapes, and which dimensions are refinable, need a
  // runtime check or are dynamic made static.
  MaybeShape declared, inferred;
  std::vector<unsigned> refinable, runtime, dynStatic;
  if (op.summary && !op.summary->wideRank) {
    // The summary's fold gives the inferred shape: the full analysis (a
    // record per dimension, ~3 % of an open) is not built. The test
    // SummaryShortcutChangesNothing compares the two.
    PackedShapes p(op.packedShapes);
    BroadcastOptions opts;
    opts.requireEqualRanks = op.tosa;
    Shape folded;
    (void)summarizeBroadcast(p.operands, p.result, opts, &folded);
    declared = p.result;
    inferred = std::move(folded);
    if (declared && declared->size() == inferred->size())
      for (unsigned d = 0; d < declared->size(); ++d) {
        bool inferredStatic = (*inferred)[d] != kDynamic;
        bool declaredStatic = (*declared)[d] != kDynamic;
        if (inferredStatic && !declaredStatic)
          refinable.push_back(d);
        if (!inferredStatic && declaredStatic)
          dynStatic.push_back(d);
      }
    runtime = op.summary->runtimeCheckDimList();
  } else {
    const BroadcastAnalysis &a = op.implicit();
    declared = a.declared;
    inferred = a.inferred;
    for (const DimReport &d : a.dims) {
      if (d.refinable)
        refinable.push_back(d.index);
      if (d.runtimeCheck)
        runtime.push_back(d.index);
      if (d.dynamicToStatic)
        dynStatic.push_back(d.index);
    }
  }
  if (config.info.refinable && !refinable.empty())
    add(Severity::Info, "refinable-result",
        "result shape " + formatShape(declared) + " can be refined to " +
            formatShape(inferred) + ": dimension" +
            (refinable.size() > 1 ? "s " : " ") + dimList(refinable) +
            (refinable.size() > 1 ? " are" : " is") +
            " statically known from the operands",
        "");
  if (config.info.runtimeChecks && !runtime.empty())
    runtimeCheck(runtime);
  if (config.info.dynamicToStatic && !dynStatic.empty()) {
    std::string sizes;
    for (unsigned d : dynStatic)
      sizes += std::string(sizes.empty() ? "" : ", ") + "dimension " +
               std::to_string(d) + " must be " + formatDim((*declared)[d]);
    add(Severity::Info, "dynamic-to-static",
        "the result is declared static where the operands are dynamic: at "
        "runtime " +
            sizes + ", otherwise behaviour is undefined",
        "");
  }
}

void appendFindings(const OpReport &op, const Config &config,
                    std::vector<Diagnostic> &out, FindingsMemo &memo) {
  if (op.kind != OpKind::Implicit || !op.summary || !op.summary->ok ||
      !op.packedShapes.begin()) {
    appendFindings(op, config, out, &memo.texts);
    return;
  }
  auto [it, added] = memo.made.try_emplace(
      std::make_pair(op.packedShapes.begin(), unsigned(op.tosa)));
  if (added) {
    size_t begin = out.size();
    appendFindings(op, config, out, &memo.texts);
    it->second = {uint32_t(begin), uint32_t(out.size())};
    return;
  }
  auto [begin, end] = it->second;
  for (uint32_t i = begin; i < end; ++i) {
    Diagnostic d = out[i]; // out may grow under a reference
    d.range = op.range;
    d.section = op.section;
    for (DiagNote &n : d.notes)
      n.range = op.range;
    out.push_back(std::move(d));
  }
}

} // namespace tosa_lsp
