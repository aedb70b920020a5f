//===- Broadcast.cpp - Broadcastable trait shape inference ----------------===//

#include "Broadcast.h"

#include <algorithm>
#include <sstream>

namespace tosa_lsp {

DimClass classifyDim(int64_t size) {
  if (size == kDynamic)
    return DimClass::Dynamic;
  // The spec's ">1" category really means "static and not 1": a 0 behaves
  // like any other non-degenerate static size (MLIR treats it that way too).
  return size == 1 ? DimClass::One : DimClass::Greater;
}

const char *inferRowName(InferRow row) {
  switch (row) {
  case InferRow::DynDyn:
    return "? | ? -> ?";
  case InferRow::DynOne:
    return "? | 1 -> ?";
  case InferRow::DynGreater:
    return "? | >1 -> >1";
  case InferRow::OneOne:
    return "1 | 1 -> 1";
  case InferRow::OneGreater:
    return "1 | >1 -> >1";
  case InferRow::GreaterGreater:
    return ">1 | >1 -> equal";
  }
  return "";
}

InferDimResult inferDim(int64_t dim0, int64_t dim1) {
  DimClass c0 = classifyDim(dim0), c1 = classifyDim(dim1);
  InferDimResult r;
  auto take = [&](bool second, InferRow row) {
    r.size = second ? dim1 : dim0;
    r.tookSecond = second;
    r.row = row;
  };
  // Mirrors the spec's switch: the first group returns dim0, the second dim1.
  using C = DimClass;
  if (c0 == C::Dynamic && c1 == C::Dynamic)
    take(false, InferRow::DynDyn);
  else if (c0 == C::Dynamic && c1 == C::One)
    take(false, InferRow::DynOne);
  else if (c0 == C::One && c1 == C::One)
    take(false, InferRow::OneOne);
  else if (c0 == C::Greater && c1 == C::Dynamic)
    take(false, InferRow::DynGreater);
  else if (c0 == C::Greater && c1 == C::One)
    take(false, InferRow::OneGreater);
  else if (c0 == C::Dynamic && c1 == C::Greater)
    take(true, InferRow::DynGreater);
  else if (c0 == C::One && c1 == C::Dynamic)
    take(true, InferRow::DynOne);
  else if (c0 == C::One && c1 == C::Greater)
    take(true, InferRow::OneGreater);
  else {
    take(false, InferRow::GreaterGreater);
    r.error = dim0 != dim1;
  }
  return r;
}

static Shape expandRank(const Shape &shape, size_t rank) {
  Shape out(rank - std::min(rank, shape.size()), 1);
  out.insert(out.end(), shape.begin(), shape.end());
  return out;
}

std::optional<Shape> inferShape(const Shape &shape0, const Shape &shape1) {
  size_t rank = std::max(shape0.size(), shape1.size());
  Shape a = expandRank(shape0, rank), b = expandRank(shape1, rank);
  Shape out;
  for (size_t i = 0; i < rank; ++i) {
    InferDimResult r = inferDim(a[i], b[i]);
    if (r.error)
      return std::nullopt;
    out.push_back(r.size);
  }
  return out;
}

std::optional<Shape> inferResultShape(const std::vector<MaybeShape> &operands) {
  std::optional<Shape> acc;
  for (const MaybeShape &s : operands) {
    if (!s)
      continue;
    if (!acc) {
      acc = *s;
      continue;
    }
    acc = inferShape(*acc, *s);
    if (!acc)
      return std::nullopt;
  }
  return acc;
}

std::string formatDim(int64_t size) {
  return size == kDynamic ? "?" : std::to_string(size);
}

std::string formatShape(const MaybeShape &shape) {
  if (!shape)
    return "*";
  if (shape->empty())
    return "scalar";
  std::string out;
  for (size_t i = 0; i < shape->size(); ++i) {
    if (i)
      out += 'x';
    out += formatDim((*shape)[i]);
  }
  return out;
}

const char *violationKindName(ViolationKind kind) {
  switch (kind) {
  case ViolationKind::NoOperands:
    return "no-operands";
  case ViolationKind::IncompatibleOperands:
    return "incompatible-operands";
  case ViolationKind::ResultRankMismatch:
    return "result-rank-mismatch";
  case ViolationKind::ResultDimMismatch:
    return "result-dim-mismatch";
  case ViolationKind::ResultBroadcast:
    return "result-broadcast";
  case ViolationKind::OperandRanksDiffer:
    return "operand-ranks-differ";
  case ViolationKind::ResultRankDiffers:
    return "result-rank-differs";
  case ViolationKind::BadBroadcastDimensions:
    return "bad-broadcast-dimensions";
  }
  return "";
}

bool BroadcastAnalysis::anyRuntimeCheck() const {
  return std::any_of(dims.begin(), dims.end(),
                     [](const DimReport &d) { return d.runtimeCheck; });
}
bool BroadcastAnalysis::anyDynamicToStatic() const {
  return std::any_of(dims.begin(), dims.end(),
                     [](const DimReport &d) { return d.dynamicToStatic; });
}
bool BroadcastAnalysis::anyRefinable() const {
  return std::any_of(dims.begin(), dims.end(),
                     [](const DimReport &d) { return d.refinable; });
}
bool BroadcastAnalysis::anyStaticBroadcast() const {
  return std::any_of(dims.begin(), dims.end(),
                     [](const DimReport &d) { return d.staticBroadcast; });
}

static std::string operandList(const std::vector<unsigned> &ops) {
  std::string out;
  for (size_t i = 0; i < ops.size(); ++i) {
    if (i)
      out += i + 1 == ops.size() ? " and " : ", ";
    out += "#" + std::to_string(ops[i]);
  }
  return out;
}

/// Operand dimension index for result dimension `dim` after rank expansion,
/// used so messages name the dimension the user wrote.
static std::string operandDimPhrase(unsigned operand, unsigned dim,
                                    unsigned rank, size_t operandRank) {
  unsigned own = dim - (rank - operandRank);
  std::string s = "operand #" + std::to_string(operand);
  if (own != dim)
    s += " (its dimension " + std::to_string(own) + ")";
  return s;
}

/// The TOSA fix for a rank mismatch: reshape with leading 1s.
static void checkTosaRanks(BroadcastAnalysis &a) {
  std::vector<unsigned> lower;
  for (unsigned i = 0; i < a.operands.size(); ++i)
    if (a.operands[i] && a.operands[i]->size() < a.rank)
      lower.push_back(i);
  if (!lower.empty()) {
    Violation v{ViolationKind::OperandRanksDiffer, std::nullopt, lower, "", ""};
    std::ostringstream msg, fix;
    msg << "TOSA element-wise ops need operands of equal rank: ";
    for (size_t k = 0; k < lower.size(); ++k) {
      unsigned i = lower[k];
      if (k)
        msg << ", ";
      msg << "operand #" << i << " has rank " << a.operands[i]->size();
    }
    msg << " but the highest operand rank is " << a.rank
        << " (rank expansion is not implicit in TOSA)";
    fix << "reshape ";
    for (size_t k = 0; k < lower.size(); ++k) {
      unsigned i = lower[k];
      if (k)
        fix << " and ";
      fix << "operand #" << i << " from " << formatShape(a.operands[i])
          << " to " << formatShape(expandRank(*a.operands[i], a.rank));
    }
    fix << " with leading 1s (tosa.reshape with a tosa.const_shape)";
    v.message = msg.str();
    v.fix = fix.str();
    a.violations.push_back(std::move(v));
  }
  if (a.declared && a.declared->size() != a.rank) {
    Violation v{ViolationKind::ResultRankDiffers, std::nullopt, {}, "", ""};
    v.message = "TOSA element-wise ops need the result rank to equal the "
                "operand rank: result has rank " +
                std::to_string(a.declared->size()) + ", operands have rank " +
                std::to_string(a.rank);
    v.fix = "declare the result with rank " + std::to_string(a.rank);
    if (a.inferred)
      v.fix += ", e.g. " + formatShape(a.inferred);
    a.violations.push_back(std::move(v));
  }
}

BroadcastSummary summarizeBroadcast(const std::vector<MaybeShape> &operands,
                                    const MaybeShape &declared,
                                    const BroadcastOptions &options,
                                    Shape *inferredOut) {
  // The same decisions as analyzeBroadcast below, in the same order, with
  // nothing recorded (BroadcastTest checks the two agree).
  BroadcastSummary s;
  if (operands.empty()) {
    s.ok = false;
    return s;
  }
  size_t rank = 0;
  bool anyRanked = false;
  for (const MaybeShape &o : operands)
    if (o) {
      anyRanked = true;
      rank = std::max(rank, o->size());
    }
  if (!anyRanked)
    return s;
  s.wideRank = rank > BroadcastSummary::kRuntimeCheckDims;
  auto sizeAt = [&](const Shape &shape, size_t d) -> int64_t {
    size_t lead = rank - shape.size();
    return d < lead ? 1 : shape[d - lead];
  };
  bool conflict = false;
  int64_t small[8];
  std::vector<int64_t> big(rank > 8 ? rank : 0);
  int64_t *inferred = rank > 8 ? big.data() : small;
  for (size_t d = 0; d < rank; ++d) {
    bool first = true;
    int64_t acc = 0;
    for (const MaybeShape &o : operands) {
      if (!o)
        continue;
      int64_t v = sizeAt(*o, d);
      if (first) {
        acc = v;
        first = false;
        continue;
      }
      InferDimResult r = inferDim(acc, v);
      conflict |= r.error;
      acc = r.size;
    }
    inferred[d] = acc;
    if (inferredOut)
      inferredOut->push_back(acc);
    bool check = false;
    for (size_t i = 0; i < operands.size() && !check; ++i) {
      if (!operands[i] || sizeAt(*operands[i], d) != kDynamic)
        continue;
      for (size_t j = 0; j < operands.size(); ++j)
        if (j != i && operands[j] && sizeAt(*operands[j], d) != 1)
          check = true;
    }
    s.anyRuntimeCheck |= check;
    if (check && d < BroadcastSummary::kRuntimeCheckDims)
      s.runtimeCheckDims |= static_cast<uint16_t>(1u << d);
  }
  if (conflict)
    s.ok = false;
  if (options.requireEqualRanks) {
    for (const MaybeShape &o : operands)
      if (o && o->size() < rank)
        s.ok = false;
    if (declared && declared->size() != rank)
      s.ok = false;
  }
  if (conflict || !declared)
    return s;
  if (declared->size() != rank) {
    s.ok = false; // ResultRankMismatch, or ResultRankDiffers for TOSA
    return s;
  }
  s.inferredIsDeclared = true;
  for (size_t d = 0; d < rank; ++d) {
    int64_t act = (*declared)[d];
    bool inferredStatic = inferred[d] != kDynamic;
    bool actualStatic = act != kDynamic;
    s.anyDynamicToStatic |= !inferredStatic && actualStatic;
    s.anyRefinable |= inferredStatic && !actualStatic;
    if (inferredStatic && actualStatic && act != inferred[d])
      s.ok = false;
    s.inferredIsDeclared &= act == inferred[d];
  }
  return s;
}

/// One dimension of the n-ary fold: sizes, steps, conflicts (appended to
/// `a.violations`), where the size came from and who got stretched.
static DimReport foldDim(BroadcastAnalysis &a, unsigned d,
                         const std::vector<unsigned> &ranked,
                         const std::vector<Shape> &expanded) {
  const std::vector<MaybeShape> &operands = a.operands;
  DimReport r;
  r.index = d;
  r.operandSizes.resize(operands.size());
  r.expanded.resize(operands.size(), false);
  for (unsigned i : ranked) {
    r.operandSizes[i] = expanded[i][d];
    r.expanded[i] = d < a.rank - operands[i]->size();
  }
  // `accFrom` remembers which operand the accumulated size came from so a
  // conflict can name both sides.
  int64_t acc = expanded[ranked[0]][d];
  unsigned accFrom = ranked[0];
  for (size_t k = 1; k < ranked.size(); ++k) {
    unsigned i = ranked[k];
    FoldStep step{acc, expanded[i][d], i, inferDim(acc, expanded[i][d])};
    r.steps.push_back(step);
    if (step.result.error) {
      r.operandConflict = true;
      Violation v{ViolationKind::IncompatibleOperands, d, {accFrom, i}, "", ""};
      v.message =
          "operands are not broadcast-compatible in dimension " +
          std::to_string(d) + ": " +
          operandDimPhrase(accFrom, d, a.rank, operands[accFrom]->size()) +
          " has size " + formatDim(acc) + " but " +
          operandDimPhrase(i, d, a.rank, operands[i]->size()) + " has size " +
          formatDim(expanded[i][d]) + "; sizes must be equal or one of them 1";
      v.fix = "make both sizes equal, or make one of them 1 to broadcast it";
      a.violations.push_back(std::move(v));
    } else if (step.result.tookSecond) {
      accFrom = i;
    }
    acc = step.result.size;
  }
  r.inferred = acc;

  DimClass ic = classifyDim(acc);
  for (unsigned i : ranked) {
    int64_t s = expanded[i][d];
    bool from = ic == DimClass::Greater ? s == acc
                : ic == DimClass::One   ? true
                                        : s == kDynamic;
    if (from && !r.expanded[i])
      r.sources.push_back(i);
    if (s == 1 && ic != DimClass::One)
      r.stretched.push_back(i);
  }
  if (r.sources.empty() && ic == DimClass::One)
    r.sources = ranked; // Every operand was an implicit 1.
  r.staticBroadcast = !r.stretched.empty() && !r.operandConflict;

  // A dynamic size that may be 1 while another operand's is not 1.
  for (unsigned i : ranked) {
    if (expanded[i][d] != kDynamic)
      continue;
    for (unsigned j : ranked)
      if (j != i && expanded[j][d] != 1)
        r.runtimeCheck = true;
  }
  return r;
}

/// The declared result against the inferred shape (no operand conflict).
static void verifyDeclared(BroadcastAnalysis &a, const Shape &actual,
                           const BroadcastOptions &options) {
  if (actual.size() != a.rank) {
    if (!options.requireEqualRanks) { // TOSA already named this constraint.
      Violation v{ViolationKind::ResultRankMismatch, std::nullopt, {}, "", ""};
      v.message = "result rank " + std::to_string(actual.size()) +
                  " does not match the inferred rank " +
                  std::to_string(a.rank) + " (inferred shape " +
                  formatShape(a.inferred) + ")";
      v.fix = "declare the result as " + formatShape(a.inferred);
      a.violations.push_back(std::move(v));
    }
    return;
  }
  for (unsigned d = 0; d < a.rank; ++d) {
    DimReport &r = a.dims[d];
    int64_t act = actual[d];
    r.declared = act;
    bool inferredStatic = r.inferred != kDynamic;
    bool actualStatic = act != kDynamic;
    r.dynamicToStatic = !inferredStatic && actualStatic;
    r.refinable = inferredStatic && !actualStatic;
    if (!inferredStatic || !actualStatic || act == r.inferred)
      continue;
    r.resultConflict = true;
    if (r.inferred == 1) {
      Violation v{ViolationKind::ResultBroadcast, d, r.sources, "", ""};
      v.message = "result dimension " + std::to_string(d) + " is declared " +
                  formatDim(act) +
                  " but every operand has size 1 there; broadcasting "
                  "stretches operands, never the result";
      v.fix = "declare result dimension " + std::to_string(d) +
              " as 1, or give an operand size " + formatDim(act);
      a.violations.push_back(std::move(v));
    } else {
      Violation v{ViolationKind::ResultDimMismatch, d, r.sources, "", ""};
      v.message = "result dimension " + std::to_string(d) + " is declared " +
                  formatDim(act) + " but the operands give " +
                  formatDim(r.inferred) + " (from operand " +
                  operandList(r.sources) + ")";
      v.fix = "declare result dimension " + std::to_string(d) + " as " +
              formatDim(r.inferred) + " (or ? to relax it)";
      a.violations.push_back(std::move(v));
    }
  }
}

BroadcastAnalysis analyzeBroadcast(const std::vector<MaybeShape> &operands,
                                   const MaybeShape &declared,
                                   const BroadcastOptions &options) {
  BroadcastAnalysis a;
  a.operands = operands;
  a.declared = declared;
  if (operands.empty()) {
    a.violations.push_back({ViolationKind::NoOperands,
                            std::nullopt,
                            {},
                            "a Broadcastable op needs at least one input "
                            "operand",
                            ""});
    return a;
  }

  // Unranked operands are discarded by InferResultShape.
  std::vector<unsigned> ranked;
  for (unsigned i = 0; i < operands.size(); ++i)
    if (operands[i]) {
      ranked.push_back(i);
      a.rank = std::max<unsigned>(a.rank, operands[i]->size());
    }
  if (ranked.empty())
    return a; // Nothing to infer, nothing to verify.
  a.inferable = true;
  for (unsigned i : ranked)
    if (operands[i]->size() < a.rank)
      a.rankExpanded.push_back(i);

  std::vector<Shape> expanded(operands.size());
  for (unsigned i : ranked)
    expanded[i] = expandRank(*operands[i], a.rank);

  bool conflict = false;
  Shape inferred(a.rank);
  for (unsigned d = 0; d < a.rank; ++d) {
    a.dims.push_back(foldDim(a, d, ranked, expanded));
    conflict |= a.dims.back().operandConflict;
    inferred[d] = a.dims.back().inferred;
  }
  if (!conflict)
    a.inferred = inferred;

  if (options.requireEqualRanks)
    checkTosaRanks(a);

  // Verify: done when inference failed, the result is unranked, or no operand
  // is ranked (handled above).
  if (conflict || !declared)
    return a;
  verifyDeclared(a, *declared, options);
  return a;
}

} // namespace tosa_lsp
