//===- Assemble.cpp - a file's analysis from its sections' ----------------===//

#include "Assemble.h"

namespace tosa_lsp::detail {

/// What both ways of appending a part share: `b`'s values then index the
/// ops after `a`'s (`opBase` of them), and its blocks, symbols and spans
/// follow `a`'s.
static void appendPartRest(SectionResult &a, SectionResult &b, size_t opBase) {
  for (ValueInfo &v : b.values)
    if (v.opReport >= 0)
      v.opReport += static_cast<int>(opBase);
  appendReserved(a.blocks, b.blocks);
  appendReserved(a.symbols, b.symbols);
  appendReserved(a.opSpans, b.opSpans);
}

void appendPart(SectionResult &a, SectionResult &b) {
  appendPartRest(a, b, a.ops.size());
  appendReserved(a.ops, b.ops);
  appendReserved(a.values, b.values);
}

void appendPartAsRuns(SectionResult &a, SectionResult &b) {
  appendPartRest(a, b, a.opRuns.size() + a.ops.size());
  auto runs = [](auto &to, auto &first, auto &next) {
    if (!first.empty())
      to.append(std::move(first));
    first.clear();
    to.append(std::move(next));
    next.clear();
  };
  runs(a.opRuns, a.ops, b.ops);
  runs(a.valueRuns, a.values, b.values);
}

FileAnalysis assemble(const FileText &file, const std::string &path,
                      std::vector<SectionResult> &&results,
                      std::vector<Slice> *slices) {
  FileAnalysis fa;
  fa.path = path;
  fa.lineIndex = file.sharedLines;
  for (size_t off : file.nearMisses) {
    Diagnostic d;
    d.severity = Severity::Warning;
    d.source = DiagSource::Parser;
    d.range.begin = file.lines.position(off);
    d.range.end = file.lines.position(std::min(file.text.size(), off + 2));
    d.message = "near miss with file split marker";
    d.code = "split-marker-near-miss";
    fa.diagnostics.push_back(std::move(d));
  }
  for (const DroppedNanMode &n : file.droppedNanModes) {
    Diagnostic d;
    d.severity = Severity::Warning;
    d.source = DiagSource::Parser;
    d.range.begin = file.lines.position(n.offset);
    d.range.end = file.lines.position(n.offset + n.length);
    d.message = "`nan_mode = \"IGNORE\"` is the pre-MLIR-22 string form: MLIR "
                "22 drops it without a word, so this op propagates NaN (the "
                "default, PROPAGATE); MLIR 22 writes "
                "`nan_mode = #tosa.nan_mode<IGNORE>`";
    d.code = "dropped-nan-mode";
    for (const Section &sec : file.sections)
      if (sec.beginOffset <= n.offset && n.offset < sec.endOffset)
        d.section = sec.index;
    fa.diagnostics.push_back(std::move(d));
  }
  if (results.size() > 1) { // Sized once, not grown section by section.
    auto reserve = [&](auto &to, auto member) {
      size_t n = to.size();
      for (SectionResult &r : results)
        n += (r.*member).size();
      to.reserve(n);
    };
    reserve(fa.diagnostics, &SectionResult::diagnostics);
    reserve(fa.blocks, &SectionResult::blocks);
    reserve(fa.symbols, &SectionResult::symbols);
    reserve(fa.opSpans, &SectionResult::opSpans);
  }
  for (SectionResult &r : results) {
    fa.sections.push_back(r.section);
    fa.sectionOps.push_back(fa.ops.size());
    Slice slice;
    auto put = [&](auto &to, auto &from, size_t (&range)[2]) {
      range[0] = to.size();
      appendMoved(to, from);
      range[1] = to.size();
    };
    // A section's ops and values are a run of their own (moved, not
    // copied), or the runs an incremental merge shared.
    auto putRuns = [&](auto &to, auto &from, auto &runs, size_t (&range)[2]) {
      range[0] = to.size();
      if (!runs.empty())
        to.appendShared(runs, 0, runs.size());
      else
        to.append(std::move(from));
      range[1] = to.size();
    };
    put(fa.diagnostics, r.diagnostics, slice.diagnostics);
    putRuns(fa.ops, r.ops, r.opRuns, slice.ops);
    putRuns(fa.values, r.values, r.valueRuns, slice.values);
    put(fa.blocks, r.blocks, slice.blocks);
    put(fa.symbols, r.symbols, slice.symbols);
    put(fa.opSpans, r.opSpans, slice.opSpans);
    if (slices)
      slices->push_back(slice);
  }
  return fa;
}

SectionResult sliceOf(const FileAnalysis &fa, const Slice &s,
                      const Section &section, bool shareItems) {
  SectionResult r;
  r.section = section;
  auto take = [](auto &to, const auto &from, const size_t (&range)[2]) {
    to.assign(from.begin() + range[0], from.begin() + range[1]);
  };
  take(r.diagnostics, fa.diagnostics, s.diagnostics);
  if (shareItems) {
    r.opRuns = fa.ops.slice(s.ops[0], s.ops[1]);
    r.valueRuns = fa.values.slice(s.values[0], s.values[1]);
  } else {
    take(r.ops, fa.ops, s.ops);
    take(r.values, fa.values, s.values);
  }
  take(r.blocks, fa.blocks, s.blocks);
  take(r.symbols, fa.symbols, s.symbols);
  take(r.opSpans, fa.opSpans, s.opSpans);
  return r;
}

} // namespace tosa_lsp::detail
