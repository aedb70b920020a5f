//===- ExplicitBroadcast.cpp - broadcast_dimensions mappings --------------===//

#include "ExplicitBroadcast.h"

namespace tosa_lsp {

static std::string dimsText(const std::vector<int64_t> &dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i)
    s += (i ? ", " : "") + std::to_string(dims[i]);
  return s + "]";
}

ExplicitBroadcastAnalysis
analyzeBroadcastInDim(const MaybeShape &operand, const MaybeShape &target,
                      const std::vector<int64_t> &dims,
                      const ExplicitOptions &options) {
  ExplicitBroadcastAnalysis a;
  a.operand = operand;
  a.target = target;
  a.broadcastDimensions = dims;
  if (!operand || !target)
    return a; // Unranked: nothing can be checked statically.

  const Shape &in = *operand, &out = *target;
  if (dims.size() != in.size()) {
    a.violations.push_back(
        {ViolationKind::BadBroadcastDimensions,
         std::nullopt,
         {0},
         "broadcast_dimensions " + dimsText(dims) + " has " +
             std::to_string(dims.size()) +
             " entries but the operand has rank " + std::to_string(in.size()) +
             "; there must be one target dimension per operand dimension",
         "list exactly one target dimension for each operand dimension"});
  }
  std::vector<bool> used(out.size(), false);
  for (unsigned i = 0; i < dims.size() && i < in.size(); ++i) {
    DimMapping m;
    m.operandDim = i;
    m.targetDim = dims[i];
    m.operandSize = in[i];
    if (dims[i] < 0 || dims[i] >= static_cast<int64_t>(out.size())) {
      m.error = true;
      a.violations.push_back(
          {ViolationKind::BadBroadcastDimensions,
           std::nullopt,
           {0},
           "broadcast_dimensions[" + std::to_string(i) + "] = " +
               std::to_string(dims[i]) + " is out of range for a rank-" +
               std::to_string(out.size()) + " target",
           "use a dimension index in [0, " + std::to_string(out.size()) + ")"});
      a.mappings.push_back(m);
      continue;
    }
    used[dims[i]] = true;
    m.targetSize = out[dims[i]];
    if (i > 0 && dims[i] <= dims[i - 1]) {
      m.error = true;
      a.violations.push_back(
          {ViolationKind::BadBroadcastDimensions,
           std::nullopt,
           {0},
           "broadcast_dimensions " + dimsText(dims) +
               " is not strictly increasing: entry " + std::to_string(i) +
               " (" + std::to_string(dims[i]) +
               ") must be greater than entry " + std::to_string(i - 1) + " (" +
               std::to_string(dims[i - 1]) + ")",
           "list the target dimensions in increasing order (transpose the "
           "operand first if its dimensions must be reordered)"});
    }
    int64_t s = in[i], t = *m.targetSize;
    if (s == kDynamic || t == kDynamic) {
      // `?` -> static/dynamic: the runtime size must be equal (or 1).
      m.runtimeCheck = !(s == 1);
      m.degenerate = s == 1 && t != 1;
    } else if (s == t) {
      // Exact match.
    } else if (s == 1 && options.allowDegenerate) {
      m.degenerate = true;
    } else {
      m.error = true;
      a.violations.push_back(
          {ViolationKind::ResultDimMismatch,
           static_cast<unsigned>(dims[i]),
           {0},
           "operand dimension " + std::to_string(i) + " has size " +
               formatDim(s) + " but maps to target dimension " +
               std::to_string(dims[i]) + " of size " + formatDim(t) +
               (options.allowDegenerate
                    ? "; mapped sizes must be equal or the operand size 1"
                    : "; mapped sizes must be equal"),
           "map operand dimension " + std::to_string(i) +
               " to a target dimension of size " + formatDim(s)});
    }
    a.mappings.push_back(m);
  }
  for (unsigned d = 0; d < out.size(); ++d)
    if (!used[d])
      a.addedDims.push_back(d);
  return a;
}

ExplicitBroadcastAnalysis
analyzeLinalgBroadcast(const MaybeShape &input, const MaybeShape &init,
                       const std::vector<int64_t> &addedDims) {
  // Convert "added dimensions" into the equivalent InDim tuple.
  std::vector<int64_t> mapped;
  if (init) {
    for (int64_t d = 0; d < static_cast<int64_t>(init->size()); ++d) {
      bool added = false;
      for (int64_t a : addedDims)
        added |= a == d;
      if (!added)
        mapped.push_back(d);
    }
  }
  ExplicitOptions opts;
  opts.allowDegenerate = false;
  ExplicitBroadcastAnalysis a =
      analyzeBroadcastInDim(input, init, mapped, opts);
  a.broadcastDimensions = mapped;
  return a;
}

ExplicitBroadcastAnalysis analyzeBinaryInDim(const MaybeShape &lhs,
                                             const MaybeShape &rhs,
                                             const MaybeShape &result,
                                             const std::vector<int64_t> &dims) {
  if (!lhs || !rhs) {
    ExplicitBroadcastAnalysis a;
    a.operand = rhs;
    a.target = lhs;
    a.broadcastDimensions = dims;
    return a;
  }
  bool rhsLower = rhs->size() <= lhs->size();
  const MaybeShape &low = rhsLower ? rhs : lhs;
  const MaybeShape &high = rhsLower ? lhs : rhs;
  ExplicitBroadcastAnalysis a = analyzeBroadcastInDim(low, high, dims);
  // Sizes are checked by the degenerate broadcast below (the higher-rank
  // operand may be the one with a 1); only structural errors stop here.
  std::vector<Violation> structural;
  for (Violation &v : a.violations)
    if (v.kind != ViolationKind::ResultDimMismatch)
      structural.push_back(std::move(v));
  a.violations = std::move(structural);
  for (DimMapping &m : a.mappings)
    if (m.targetSize)
      m.error = false;
  if (!a.violations.empty())
    return a;
  // Expand the lower-rank operand: its sizes at the mapped dimensions, 1
  // elsewhere; then degenerate-dimension broadcasting does the rest.
  Shape expanded(high->size(), 1);
  for (const DimMapping &m : a.mappings)
    expanded[m.targetDim] = m.operandSize;
  std::vector<MaybeShape> ops = rhsLower
                                    ? std::vector<MaybeShape>{*lhs, expanded}
                                    : std::vector<MaybeShape>{expanded, *rhs};
  a.composition = analyzeBroadcast(ops, result);
  return a;
}

} // namespace tosa_lsp
