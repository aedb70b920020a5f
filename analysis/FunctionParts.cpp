//===- FunctionParts.cpp - one big function in two parts ------------------===//
//
// A model is often one function of 10^5 ops. FunctionSplit.h finds, in the
// text, where its body can be cut and what the second part must declare;
// here both parts are analysed on two threads and merged into what the whole
// section would have given, or refused where they could differ. After an
// edit in the second half, the first part's items are kept from the previous
// analysis and only the tail is analysed again.
//
//===----------------------------------------------------------------------===//

#include "AnalyzerImpl.h"
#include "CrashGuard.h"
#include "FunctionSplit.h"
#include "SectionRun.h"
#include "TextDiff.h"
#include "Timing.h"

#include "llvm/ADT/STLExtras.h"

#include <unordered_map>

using namespace mlir;

namespace tosa_lsp {
using namespace detail;

namespace {

/// The second part of a cut `section`: under the function's header, with
/// `crossing` declared among its arguments (FunctionSplit.h).
PartText secondPartText(std::string_view section, const detail::FunctionCut &fc,
                        const std::vector<detail::CrossCutValue> &crossing) {
  PartText b;
  b.prefix = detail::secondPartPrefix(section, fc, crossing);
  for (const detail::CrossCutValue &c : crossing)
    b.declaredConstant.push_back(detail::definedByConstant(section, c));
  b.prefixLines =
      static_cast<unsigned>(std::count(b.prefix.begin(), b.prefix.end(), '\n'));
  return b;
}

/// What an edit of a function cut into `a` and `b` starts from: no units
/// (the function is analysed again whole, or its tail), the body's
/// top-level definitions.
void rememberCut(SectionUnits &units, PartText &a, PartText &b) {
  units = SectionUnits();
  units.cutDefsNumbered = a.topLevelIds == a.topLevelDefs.size() &&
                          b.topLevelIds == b.topLevelDefs.size();
  units.cutDefs = std::move(a.topLevelDefs);
  appendMoved(units.cutDefs, b.topLevelDefs);
}

/// How the values MLIR prints in each part's diagnostics map to the whole
/// function's numbers (PartNumbering); std::nullopt when the parts' counts
/// are not known.
std::optional<std::pair<detail::PartNumbering, detail::PartNumbering>>
partNumberings(const PartText &first, const PartText &second,
               const std::vector<detail::CrossCutValue> &crossing) {
  // Each numbered op of the first part has a definition: the whole
  // function's number of one is its index.
  const std::vector<size_t> &defs = first.topLevelDefs;
  if (first.topLevelIds != defs.size() || second.entryArgs < crossing.size() ||
      second.declaredConstant.size() != crossing.size())
    return std::nullopt;
  detail::PartNumbering a, b;
  a.topLevel = first.topLevelIds;
  a.shiftNested = second.topLevelIds;
  // Kept from an earlier version, whose second part may have had another
  // number of top-level results.
  a.nestedKnown = !first.diagnosticsKept;
  a.args = b.args = second.entryArgs - static_cast<unsigned>(crossing.size());
  b.topLevel = second.topLevelIds;
  b.shiftTopLevel = b.shiftNested = first.topLevelIds;
  for (size_t i = 0; i < crossing.size(); ++i) {
    auto it = std::lower_bound(defs.begin(), defs.end(), crossing[i].def);
    if (it == defs.end() || *it != crossing[i].def)
      return std::nullopt;
    b.declaredIds.push_back(second.declaredConstant[i]
                                ? detail::PartNumbering::kUnmapped
                                : static_cast<unsigned>(it - defs.begin()));
  }
  return std::make_pair(std::move(a), std::move(b));
}

/// `d` with the values its message and notes print named as the whole
/// function names them; false where that is not known.
bool renumbered(Diagnostic &d, const detail::PartNumbering &n) {
  std::optional<std::string> m = detail::renumberPartValues(d.message.str(), n);
  if (!m)
    return false;
  if (*m != d.message.str())
    d.message = SharedText(std::move(*m));
  for (DiagNote &note : d.notes) {
    std::optional<std::string> t = detail::renumberPartValues(note.message, n);
    if (!t)
      return false;
    note.message = std::move(*t);
  }
  return true;
}

/// MLIR's own diagnostics (parser, verifier), which name values.
bool fromMLIR(const Diagnostic &d) {
  return d.source == DiagSource::Parser || d.source == DiagSource::Verifier;
}

bool samePosition(Position x, Position y) {
  return x.line == y.line && x.column == y.column;
}

/// MLIR's diagnostics of both parts with the values renumbered as in the
/// whole function; false where they could differ.
bool renumberPartDiagnostics(SectionResult &a, SectionResult &b, Position body,
                             const std::vector<detail::CrossCutValue> &crossing,
                             const PartText &first, const PartText &second) {
  auto mentionsCut = [](const std::string &m) {
    return m.find(detail::kCutTerminator) != std::string::npos;
  };
  // MLIR's diagnostics: the first part's on the function or the module
  // (before the body) see the stand-in terminator; each part's print ops
  // with the values numbered within the part (renamed as in the whole,
  // or refused). After an error in the first part, the whole function's
  // verification skips the ops it feeds (Verify.cpp), which the second
  // part cannot tell: its errors are refused then.
  // Made once, when the first diagnostic needs it.
  std::optional<std::pair<detail::PartNumbering, detail::PartNumbering>>
      numbering;
  bool made = false;
  auto numbers = [&]() {
    if (!made)
      numbering = partNumberings(first, second, crossing);
    made = true;
    return numbering ? &*numbering : nullptr;
  };
  bool firstFailed = false;
  for (Diagnostic &d : a.diagnostics) {
    if (d.source == DiagSource::Broadcast)
      continue;
    if (!d.range.begin.valid() || before(d.range.begin, body) ||
        mentionsCut(d.message) || llvm::any_of(d.notes, [&](const DiagNote &n) {
          return mentionsCut(n.message);
        }))
      return false;
    if (!fromMLIR(d))
      continue;
    const auto *nums = numbers();
    if (!nums)
      return false;
    // Not an error: its op is printed in the custom form, where ops may
    // name their results (%cst) and take no number: only the top level
    // before them is known to be numbered alike.
    detail::PartNumbering n = nums->first;
    n.nestedKnown &= d.severity == Severity::Error;
    if (!renumbered(d, n))
      return false;
    firstFailed |= d.severity == Severity::Error;
  }
  for (Diagnostic &d : b.diagnostics) {
    if (d.source == DiagSource::Broadcast)
      continue;
    if (d.source != DiagSource::Verifier || firstFailed ||
        d.severity != Severity::Error)
      return false;
    const auto *nums = numbers();
    if (!nums || !renumbered(d, nums->second))
      return false;
  }
  return true;
}

/// The second part's arguments are the function's and the first part's
/// values: their uses go to those, where the types agree.
bool joinCrossingValues(SectionResult &a, SectionResult &b,
                        const LineIndex &lines, const Section &sec,
                        Position body,
                        const std::vector<detail::CrossCutValue> &crossing) {
  std::unordered_map<std::string_view, Position> crossingDef;
  for (const detail::CrossCutValue &c : crossing)
    crossingDef.emplace(c.name, lines.position(sec.beginOffset + c.def));
  std::unordered_map<std::string_view, size_t> target;
  for (size_t i = 0; i < a.values.size(); ++i) {
    const ValueInfo &v = a.values[i];
    if (!v.def.begin.valid())
      continue;
    if (before(v.def.begin, body)) {
      target.emplace(v.name.view(), i);
    } else if (auto it = crossingDef.find(v.name.view());
               it != crossingDef.end() &&
               samePosition(it->second, v.def.begin)) {
      target.emplace(v.name.view(), i);
    }
  }
  for (const ValueInfo &v : b.values) {
    if (v.def.begin.valid())
      continue;
    auto it = target.find(v.name.view());
    if (it == target.end())
      return false;
    ValueInfo &to = a.values[it->second];
    if (to.type != v.type)
      return false;
    if (v.uses.empty())
      continue;
    std::vector<Range> uses(to.uses.begin(), to.uses.end());
    uses.insert(uses.end(), v.uses.begin(), v.uses.end());
    to.uses = CowVector<Range>(uses);
  }
  auto noDef = [](const ValueInfo &v) { return !v.def.begin.valid(); };
  llvm::erase_if(a.values, noDef);
  llvm::erase_if(b.values, noDef);
  for (SectionResult *part : {&a, &b})
    llvm::erase_if(part->blocks,
                   [](const BlockInfo &bl) { return !bl.def.begin.valid(); });

  return true;
}

/// The function (and its module) end in the second part: the first part's
/// open symbols and spans get their ends from it.
bool closeOpenScopes(SectionResult &a, SectionResult &b) {
  for (SymbolInfo &s : a.symbols) {
    if (!s.nameRange.begin.valid() || s.scope.end.valid())
      continue;
    auto it = llvm::find_if(b.symbols, [&](const SymbolInfo &o) {
      return o.name == s.name && !o.nameRange.begin.valid();
    });
    if (it == b.symbols.end() || !it->scope.end.valid())
      return false;
    s.scope.end = it->scope.end;
    s.uses.insert(s.uses.end(), it->uses.begin(), it->uses.end());
  }
  for (SectionResult *part : {&a, &b})
    llvm::erase_if(part->symbols, [](const SymbolInfo &sym) {
      return !sym.nameRange.begin.valid();
    });
  std::vector<OpSpan *> open;
  for (OpSpan &o : a.opSpans)
    if (o.nameRange.begin.valid() && !o.scope.end.valid())
      open.push_back(&o);
  size_t k = 0;
  for (const OpSpan &o : b.opSpans) {
    if (o.nameRange.begin.valid())
      continue;
    if (k == open.size() || open[k]->name != o.name || !o.scope.end.valid())
      return false;
    open[k++]->scope.end = o.scope.end;
  }
  if (k != open.size())
    return false;
  for (SectionResult *part : {&a, &b})
    llvm::erase_if(part->opSpans,
                   [](const OpSpan &o) { return !o.nameRange.begin.valid(); });

  return true;
}

/// Each part is one function of one block (the cut is in the body of the
/// only function, and in its entry block), and each value declared for the
/// second part is a result of an op of that block: the parts' verdicts and
/// items are the function's.
bool partsStandForFunction(const PartText &first, const PartText &second,
                           const std::vector<detail::CrossCutValue> &crossing) {
  if (!first.oneBlock || !second.oneBlock)
    return false;
  return llvm::all_of(crossing, [&](const detail::CrossCutValue &c) {
    return std::binary_search(first.topLevelDefs.begin(),
                              first.topLevelDefs.end(), c.def);
  });
}

/// The two parts of a cut function as the whole section would have them
/// (see analyzeFunctionInParts); std::nullopt where they could differ.
std::optional<SectionResult>
mergeFunctionParts(SectionResult &a, SectionResult &b, const LineIndex &lines,
                   const Section &sec, const detail::FunctionCut &fc,
                   const std::vector<detail::CrossCutValue> &crossing,
                   const PartText &first, const PartText &second) {
  if (!partsStandForFunction(first, second, crossing))
    return std::nullopt;
  Position body = lines.position(sec.beginOffset + fc.bodyOpen);
  if (!renumberPartDiagnostics(a, b, body, crossing, first, second))
    return std::nullopt;
  for (const SectionResult *part : {&a, &b})
    for (const OpReport &op : part->ops)
      if (!op.range.begin.valid())
        return std::nullopt;

  if (!joinCrossingValues(a, b, lines, sec, body, crossing) ||
      !closeOpenScopes(a, b))
    return std::nullopt;

  // As the whole section would have them: MLIR's diagnostics (the first
  // part's, then the second's), then the findings of both.
  if (llvm::any_of(b.diagnostics, fromMLIR)) {
    std::vector<Diagnostic> merged;
    merged.reserve(a.diagnostics.size() + b.diagnostics.size());
    for (bool mlir : {true, false})
      for (SectionResult *part : {&a, &b})
        for (Diagnostic &d : part->diagnostics)
          if (fromMLIR(d) == mlir)
            merged.push_back(std::move(d));
    a.diagnostics = std::move(merged);
    b.diagnostics.clear();
  }
  appendMoved(a.diagnostics, b.diagnostics);
  appendPart(a, b);
  a.section.inParts = true;
  return std::move(a);
}

/// A cut function's items from an earlier analysis that lie before `cut`
/// (a file position; the text before it is unchanged), as the first part
/// of a cut there would have them: uses before it only, and the function's
/// (and module's) symbol and spans open, for the second part's ends.
/// std::nullopt for items the first part could not have (no position, an
/// op out of order).
std::optional<SectionResult> keptBefore(const FileAnalysis &fa, const Slice &s,
                                        const Section &sec, Position cut) {
  auto isBefore = [&](const Range &r) {
    return r.begin.valid() && before(r.begin, cut);
  };
  auto reaches = [&](const Range &r) { return !before(r.end, cut); };
  auto usesBefore = [&](const auto &uses) {
    std::vector<Range> kept;
    for (const Range &u : uses)
      if (isBefore(u))
        kept.push_back(u);
    return kept;
  };
  SectionResult r;
  r.section = sec;
  r.section.parsed = true;
  // Sized for the tail's items too (as many as last time, give or take),
  // which the merge moves in: reallocating there copied them all again.
  auto reserve = [&](auto &to, const size_t (&range)[2]) {
    to.reserve((range[1] - range[0]) * 21 / 20 + 16);
  };
  reserve(r.diagnostics, s.diagnostics);
  reserve(r.ops, s.ops);
  reserve(r.values, s.values);
  reserve(r.opSpans, s.opSpans);
  for (size_t i = s.diagnostics[0]; i < s.diagnostics[1]; ++i) {
    const Diagnostic &d = fa.diagnostics[i];
    if (!d.range.begin.valid())
      return std::nullopt;
    if (isBefore(d.range))
      r.diagnostics.push_back(d);
  }
  // Ops in file order: those kept are the first, and values keep their
  // op numbers (less the slice's start).
  size_t ops = s.ops[0];
  while (ops < s.ops[1] && isBefore(fa.ops[ops].range))
    ++ops;
  for (size_t i = ops; i < s.ops[1]; ++i)
    if (isBefore(fa.ops[i].range))
      return std::nullopt;
  r.ops.insert(r.ops.end(), fa.ops.begin() + s.ops[0], fa.ops.begin() + ops);
  for (size_t i = s.values[0]; i < s.values[1]; ++i) {
    const ValueInfo &v = fa.values[i];
    if (!isBefore(v.def))
      continue;
    r.values.push_back(v);
    ValueInfo &k = r.values.back();
    if (k.opReport >= 0 && static_cast<size_t>(k.opReport) >= r.ops.size())
      return std::nullopt;
    if (llvm::any_of(k.uses, [&](const Range &u) { return !isBefore(u); }))
      k.uses = CowVector<Range>(usesBefore(k.uses));
  }
  for (size_t i = s.blocks[0]; i < s.blocks[1]; ++i)
    if (isBefore(fa.blocks[i].def)) {
      r.blocks.push_back(fa.blocks[i]);
      r.blocks.back().uses = CowVector<Range>(usesBefore(fa.blocks[i].uses));
    }
  for (size_t i = s.symbols[0]; i < s.symbols[1]; ++i)
    if (isBefore(fa.symbols[i].nameRange)) {
      r.symbols.push_back(fa.symbols[i]);
      SymbolInfo &k = r.symbols.back();
      k.uses = usesBefore(k.uses);
      if (reaches(k.scope))
        k.scope.end = Position();
    }
  // The spans still open (the function's, the module's) end last, as
  // the parser finishes them.
  std::vector<OpSpan> open;
  for (size_t i = s.opSpans[0]; i < s.opSpans[1]; ++i)
    if (isBefore(fa.opSpans[i].nameRange)) {
      OpSpan o = fa.opSpans[i];
      if (!reaches(o.scope)) {
        r.opSpans.push_back(std::move(o));
        continue;
      }
      o.scope.end = Position();
      open.push_back(std::move(o));
    }
  appendMoved(r.opSpans, open);
  return r;
}

} // namespace

std::optional<SectionResult> Analyzer::Impl::analyzeFunctionInParts(
    const FileText &file, const std::string &path, const Section &sec,
    const Config &config, SectionUnits *units) {
  size_t size = sec.endOffset - sec.beginOffset;
  if (lenientLoaded || config.validate.enabled ||
      size < 2 * parallelSectionBytes || size < 2)
    return std::nullopt;
  std::string_view text =
      std::string_view(file.text).substr(sec.beginOffset, size);
  std::optional<detail::FunctionCut> fc = detail::planFunctionCut(text);
  if (!fc)
    return std::nullopt;
  Section first, second;
  std::tie(first, second) = cutSection(file, sec, fc->cut);

  PartText aroundA, aroundB;
  aroundA.suffix = detail::firstPartSuffix(text, *fc);
  double capacityA =
      1.0 + 1.05 * double(fc->bodyClose - fc->cut) / (fc->cut - fc->bodyOpen);
  std::optional<std::vector<detail::CrossCutValue>> crossing;
  SectionResult a, b;
  std::optional<std::string> crashA, crashB;
  // MLIR's verdict on the function once both parts have theirs
  // (verifiedClean), before their op reports and index, where the parts
  // stand for it.
  const bool twoSteps = verifiedClean && size <= detail::kTwoStepBytes;
  std::atomic<unsigned> silent{0};
  auto verdict = [&](const PartRun *p) {
    if (p && p->run->silentSoFar() && ++silent == 2 && crossing &&
        partsStandForFunction(aroundA, aroundB, *crossing))
      verifiedClean();
  };
  auto analyze = [&](SectionResult &r, const Section &part,
                     std::unique_ptr<MLIRContext> &slot, PartText &around,
                     double capacity) {
    if (!twoSteps)
      return analyzeSectionUnguarded(file, path, sec, config, r, nullptr,
                                     nullptr, &part, &slot, &around, capacity);
    std::unique_ptr<PartRun> p = verifyPart(file, path, sec, config, r, nullptr,
                                            part, slot, capacity, &around);
    verdict(p.get());
    if (p)
      finishPart(std::move(p), file, config, r);
  };
  {
    PhaseTimer t("analysis of one function in two parts");
    TaskThread::Running other = helperThread.beside([&] {
      // On this thread, beside the first part's parse: a scan of the body.
      {
        PhaseTimer t("values crossing the cut");
        crossing = detail::crossCutValues(text, *fc);
      }
      if (!crossing)
        return;
      aroundB = secondPartText(text, *fc, *crossing);
      crashB =
          runContained([&] { analyze(b, second, partContext, aroundB, 1.0); });
    });
    crashA =
        runContained([&] { analyze(a, first, context, aroundA, capacityA); });
    other.join();
  }
  cutFailed = true; // unless the merge below succeeds
  if (crashA || crashB) {
    abandonParts(crashA.has_value(), crashB.has_value());
    return std::nullopt;
  }
  if (!crossing || !a.section.parsed || !b.section.parsed)
    return std::nullopt;
  PhaseTimer t("merge of the two parts");
  std::optional<SectionResult> r = mergeFunctionParts(
      a, b, file.lines, sec, *fc, *crossing, aroundA, aroundB);
  cutFailed = !r;
  if (r && units)
    rememberCut(*units, aroundA, aroundB);
  return r;
}

bool Analyzer::Impl::mayCut(const AnalysisCache::Impl::Entry &old,
                            const FileAnalysis &previous) {
  if (!old.section.parsed || old.section.stale)
    return false;
  std::optional<detail::FunctionCut> fc;
  bool planned = false;
  Position open, at;
  for (size_t i = old.slice.diagnostics[0]; i < old.slice.diagnostics[1]; ++i) {
    const Diagnostic &d = previous.diagnostics[i];
    if (d.source == DiagSource::Broadcast)
      continue;
    if (old.cutFailed)
      return false;
    if (!planned) {
      planned = true;
      fc = detail::planFunctionCut(old.text);
      if (fc && previous.lineIndex) {
        open = previous.lineIndex->position(old.section.beginOffset +
                                            fc->bodyOpen);
        at = previous.lineIndex->position(old.section.beginOffset + fc->cut);
      } else {
        fc.reset();
      }
    }
    // In the body: the merge renames a verifier error's values in either
    // part; others only in the first.
    if (!fc || !d.range.begin.valid() || !before(open, d.range.begin) ||
        (d.source != DiagSource::Verifier && !before(d.range.begin, at)))
      return false;
  }
  return true;
}

std::optional<SectionResult> Analyzer::Impl::analyzeFunctionTail(
    const FileText &file, const std::string &path, const Section &sec,
    const Config &config, const AnalysisCache::Impl::Entry &old,
    const FileAnalysis &previous, SectionUnits *units, bool &errorsInTail) {
  const std::vector<size_t> &defs = old.units->cutDefs;
  const Section &was = old.section;
  if (lenientLoaded || !was.inParts || !was.parsed || was.stale ||
      was.index != sec.index || was.firstLine != sec.firstLine ||
      was.firstColumn != sec.firstColumn)
    return std::nullopt;
  std::string_view oldText = old.text;
  std::string_view text = std::string_view(file.text).substr(
      sec.beginOffset, sec.endOffset - sec.beginOffset);
  size_t same =
      commonPrefix(oldText, text, std::min(oldText.size(), text.size()));
  // The rest on one thread takes about as long as the whole in two parts
  // on two (with their scan and merge) when the edit is near the middle,
  // and longer before: kept, at least 45% of the text.
  if (20 * same < 9 * text.size())
    return std::nullopt;
  std::optional<detail::FunctionCut> fc = detail::planFunctionCut(text);
  if (!fc)
    return std::nullopt;
  // Cut at the start of the line of the last top-level op before the edit,
  // if nothing but blanks precede it there.
  size_t cut = 0;
  for (auto it = std::upper_bound(defs.begin(), defs.end(), same);
       it != defs.begin() && !cut;) {
    size_t d = *--it;
    size_t line = text.rfind('\n', d);
    line = line == std::string_view::npos ? 0 : line + 1;
    if (line <= fc->bodyOpen)
      break;
    if (text.substr(line, d - line).find_first_not_of(" \t") ==
        std::string_view::npos)
      cut = line;
  }
  if (!cut || cut >= fc->bodyClose)
    return std::nullopt;
  fc->cut = cut;
  std::optional<std::vector<detail::CrossCutValue>> crossing;
  {
    PhaseTimer t("values crossing the cut");
    crossing = detail::crossCutValues(text, *fc);
  }
  if (!crossing)
    return std::nullopt;
  // Parsed on this thread, in its context: no second context needed.
  Section second = splitSection(file, sec, cut).second;
  PartText aroundA, aroundB = secondPartText(text, *fc, *crossing);
  aroundB.alone = true;
  // The function was one block when it was cut last, and the text is.
  aroundA.oneBlock = true;
  aroundA.diagnosticsKept = true;
  aroundA.topLevelDefs.assign(defs.begin(),
                              std::lower_bound(defs.begin(), defs.end(), cut));
  // Not known numbered: a count no list of definitions has, which
  // partNumberings refuses.
  aroundA.topLevelIds = old.units->cutDefsNumbered
                            ? static_cast<unsigned>(aroundA.topLevelDefs.size())
                            : ~0u;
  SectionResult b;
  std::optional<std::string> crash;
  {
    PhaseTimer t("analysis of a function's tail");
    crash = runContained([&] {
      analyzeSectionUnguarded(file, path, sec, config, b, nullptr, nullptr,
                              &second, &context, &aroundB);
    });
  }
  if (crash) {
    abandonParts(/*crashedHere=*/true, /*crashedBeside=*/false);
    return std::nullopt;
  }
  // Verifier errors are taken by the merge where it can name their values
  // as the whole function does (else the function is analysed whole).
  errorsInTail =
      !b.section.parsed || llvm::any_of(b.diagnostics, [](const Diagnostic &d) {
        return d.source != DiagSource::Broadcast &&
               d.source != DiagSource::Verifier;
      });
  if (errorsInTail)
    return std::nullopt;
  bool verifierErrors = llvm::any_of(b.diagnostics, [](const Diagnostic &d) {
    return d.source == DiagSource::Verifier;
  });
  // After the tail's IR is gone: the kept items go into vectors sized for
  // the whole function, which lived beside that IR (10k lines, one
  // function: the session peak 117.2 -> 115.7 MiB).
  std::optional<SectionResult> a;
  {
    PhaseTimer t("items kept before the edit");
    a = keptBefore(previous, old.slice, sec,
                   file.lines.position(sec.beginOffset + cut));
  }
  if (!a)
    return std::nullopt;
  PhaseTimer t("merge of the kept part and the tail");
  std::optional<SectionResult> r = mergeFunctionParts(
      *a, b, file.lines, sec, *fc, *crossing, aroundA, aroundB);
  if (!r) {
    errorsInTail = verifierErrors; // a cut in the middle would fail alike
    return std::nullopt;
  }
  r->section.tail = true;
  if (units)
    rememberCut(*units, aroundA, aroundB);
  return r;
}

} // namespace tosa_lsp
