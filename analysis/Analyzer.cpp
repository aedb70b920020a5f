//===- Analyzer.cpp - the document pipeline: parse, verify, report -------===//

#include "CrashGuard.h"
#include "Findings.h"
#include "IR.h"
#include "Lenient.h"
#include "LineIndex.h"
#include "MLIRShared.h"
#include "Migrate.h"
#include "TaskThread.h"
#include "TextScan.h"
#include "Timing.h"

#include "mlir/AsmParser/AsmParser.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Location.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Support/thread.h"

#include <array>
#include <cassert>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <map>
#include <set>
#include <unordered_map>

using namespace mlir;

namespace {
/// MLIR's parser and verifier recurse per nesting level; kMaxNesting levels
/// need far more than the default 8 MiB.
constexpr unsigned kAnalysisStackBytes = 256u << 20;
/// Sections at least this big verify on a second thread (below it the
/// thread costs more than it saves).
constexpr size_t kDefaultParallelSectionBytes = 128u << 10;
/// MLIR attaches "see current operation: ..." to an op's error by printing
/// the op numbered within its whole function (an AsmState of the
/// function): O(function) per error, quadratic in a pre-MLIR-22 model where
/// every op fails. After this many errors in a section the note is left
/// out.
constexpr unsigned kErrorsWithOpNote = 64;
constexpr llvm::StringLiteral kOpNotePrefix = "see current operation: ";
} // namespace

namespace tosa_lsp {

namespace detail {

Position ParsedSection::toFilePosition(unsigned line, unsigned column) const {
  if (line <= prefixLines || (suffixLine && line >= suffixLine))
    return {};
  line -= prefixLines;
  Position p;
  p.line = line + section.firstLine - 1;
  p.column = line == 1 ? column + section.firstColumn - 1 : column;
  return p;
}

Position ParsedSection::toFilePositionElsewhere(llvm::SMLoc loc) const {
  if (!loc.isValid())
    return {};
  size_t size = section.endOffset - section.beginOffset;
  const char *p = loc.getPointer();
  if (lines && bufferStart && p >= bufferStart &&
      p <= bufferStart + prefixLen + size)
    return {}; // In the prefix.
  if (suffixLine && lines && bufferStart && p > bufferStart && p <= bufferEnd())
    return {};
  if (!sourceMgr.FindBufferContainingLoc(loc))
    return {};
  auto [line, col] = sourceMgr.getLineAndColumn(loc);
  return toFilePosition(line, col);
}

const SharedText &ParsedSection::typeName(Type type, TypeNames &cache) const {
  if (auto it = cache.find(type); it != cache.end())
    return it->second;
  std::string text;
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (tensor && !tensor.getEncoding()) {
    // As MLIR prints it, with the element type's text printed once: a
    // model's distinct tensor types are many (each shape of each element
    // type), and Type::print builds a printer state for each (~8,000
    // instructions a type, ~3 % of a 10k-line open). TypeNameTest compares.
    SharedText element = typeName(tensor.getElementType(), cache);
    text = "tensor<";
    for (int64_t d : tensor.getShape()) {
      if (ShapedType::isDynamic(d))
        text += '?';
      else
        text += std::to_string(d);
      text += 'x';
    }
    text += element.str();
    text += '>';
  } else {
    llvm::raw_string_ostream os(text);
    type.print(os);
  }
  return cache.try_emplace(type, SharedText(std::move(text))).first->second;
}

const SharedText &ParsedSection::opName(Operation *op, OpNames &cache) const {
  auto [it, inserted] = cache.try_emplace(op->getName().getAsOpaquePointer());
  if (inserted)
    it->second = SharedText(op->getName().getStringRef().str());
  return it->second;
}

Range ParsedSection::opRange(Operation *op) const {
  if (const auto *def = state.getOpDef(op))
    return toFileRange(def->loc);
  if (auto f = fileLocOf(op->getLoc())) {
    Position p = toFilePosition(f->getLine(), f->getColumn());
    return {p, p};
  }
  return {};
}

} // namespace detail

/// MLIR's parser recurses once per nesting level and overflows the stack on
/// deeply nested input (mlir-opt-22 crashes at ~3000 nested regions). Refuse
/// such input up front: returns the offset where `limit` is exceeded.
std::optional<size_t> findExcessiveNesting(std::string_view text,
                                           unsigned limit) {
  // What each byte is to the scan. Most are Other, skipped by a loop that
  // looks each up in a table and nothing else (a byte at a time with every
  // comparison below was ~30 ms of a 17 MB open; the run of minus signs
  // followed at every byte, ~3 % of a 10k-line open).
  enum : uint8_t { Other, Space, Special };
  static const std::array<uint8_t, 256> kinds = [] {
    std::array<uint8_t, 256> k{};
    for (unsigned char c : {' ', '\t', '\n', '\r'})
      k[c] = Space;
    for (unsigned char c :
         {'-', '"', '/', '(', '[', '{', '<', ')', ']', '}', '>'})
      k[c] = Special;
    return k;
  }();
  auto kind = [&](size_t i) {
    return kinds[static_cast<unsigned char>(text[i])];
  };
  unsigned depth = 0;
  const size_t n = text.size();
  for (size_t i = 0; i < n; ++i) {
    while (i < n && kind(i) != Special)
      ++i;
    if (i == n)
      break;
    char c = text[i];
    if (c == '-') {
      // Unary minus chains in affine expressions recurse like brackets do:
      // minus signs with only blanks between them.
      unsigned run = 0;
      size_t j = i;
      for (; j < n && (text[j] == '-' || kind(j) == Space); ++j)
        if (text[j] == '-' && ++run > limit)
          return j;
      i = j - 1;
      continue;
    }
    if (c == '"') { // String literal: brackets inside do not count.
      i = detail::stringEnd(text, i);
      continue;
    }
    if (c == '/') {
      if (detail::commentAt(text, i)) {
        i = detail::commentEnd(text, i);
        if (i == std::string_view::npos)
          break;
      }
      continue;
    }
    if (c == '(' || c == '[' || c == '{' || c == '<') {
      if (++depth > limit)
        return i;
    } else if (c != '>' || i == 0 || text[i - 1] != '-') {
      if (depth)
        --depth;
    }
  }
  return std::nullopt;
}

namespace {

/// End of the token starting at `offset` (an op name, `%value`, a quoted
/// generic op name): diagnostics get a range, not just a point.
size_t tokenEnd(std::string_view text, size_t offset) {
  if (offset >= text.size())
    return offset;
  size_t i = offset;
  if (text[i] == '"') {
    size_t close = text.find('"', i + 1);
    return close == std::string_view::npos ||
                   text.substr(i, close - i).find('\n') !=
                       std::string_view::npos
               ? i + 1
               : close + 1;
  }
  auto ident = [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' ||
           c == '.' || c == '$' || c == '-' || c == '%' || c == '@' ||
           c == '#' || c == '^' || c == '!';
  };
  while (i < text.size() && ident(text[i]))
    ++i;
  return i == offset ? offset + 1 : i;
}

/// Messages can quote input (a 10 MB identifier); keep them readable.
std::string capped(std::string msg) {
  constexpr size_t kMax = 2000;
  if (msg.size() > kMax) {
    msg.resize(kMax);
    msg += "... (cut at " + std::to_string(kMax) + " characters)";
  }
  return msg;
}

Severity toSeverity(DiagnosticSeverity s) {
  switch (s) {
  case DiagnosticSeverity::Error:
    return Severity::Error;
  case DiagnosticSeverity::Warning:
    return Severity::Warning;
  case DiagnosticSeverity::Note:
    return Severity::Note;
  case DiagnosticSeverity::Remark:
    return Severity::Info;
  }
  return Severity::Error;
}

} // namespace

namespace {

/// One version of the file: its text, line index and sections.
struct FileText {
  const std::string &text;
  std::shared_ptr<const LineIndex> sharedLines; // handed out with the result
  const LineIndex &lines;
  std::vector<Section> sections;
  std::vector<size_t> nearMisses;
  explicit FileText(const std::string &text)
      : text(text), sharedLines(std::make_shared<const LineIndex>(text)),
        lines(*sharedLines) {
    sections = splitSections(text, &nearMisses, &lines);
  }
};

/// A top-level op of a section (a function, usually) as the last full
/// analysis saw it: what an edit inside it can re-analyse on its own.
struct Unit {
  size_t begin = 0, end = 0;            // byte offsets in the section text
  unsigned firstLine = 0, lastLine = 0; // file lines of that version
  std::string opName, symbol, signature;
  bool failed = false; // a parser or verifier error inside
};

/// The units of a parsed section; absent when the section cannot be
/// re-analysed a unit at a time (units sharing a line, a module with
/// attributes, dialect resources).
struct SectionUnits {
  std::vector<Unit> units;
  std::string aliases; // the section's alias definitions, printed
  bool moduleFailed = false;
  /// A function analysed in parts: the offsets in the section of the
  /// result names of its body's ops (one block), sorted. An edit in its
  /// second half keeps what lies before the last of them before the edit
  /// (analyzeFunctionTail).
  std::vector<size_t> cutDefs;
};

/// Input and output of re-analysing one unit on its own.
struct UnitJob {
  std::string prefix; // aliases and stubs of the functions the unit uses
  unsigned prefixLines = 0;
  Section map;               // the unit's place in the file
  bool moduleChecks = false; // run the module's symbol checks after it
  // Results.
  bool ok = false, failed = false;
  bool parseFailed = false; // the unit did not parse (ok stays false)
  std::string opName, symbol, signature;
  std::map<std::string, std::vector<Range>> stubUses;
};

/// What a part of a cut function is parsed with around its own text
/// (FunctionSplit.h): positions in either are not in the file.
struct PartText {
  std::string prefix;
  unsigned prefixLines = 0;
  std::string suffix;
  /// Found in the part's IR: it is one function of one block; and the
  /// offsets in the section of the result names of the block's ops.
  bool oneBlock = false;
  std::vector<size_t> topLevelDefs;
};

/// Length of the common prefix (at most `limit`), compared a block at a
/// time with memcmp: a byte loop over a 20 MB file took ~10 ms per edit.
size_t commonPrefix(std::string_view a, std::string_view b, size_t limit) {
  constexpr size_t kBlock = 4096;
  size_t n = 0;
  while (n + kBlock <= limit &&
         !std::memcmp(a.data() + n, b.data() + n, kBlock))
    n += kBlock;
  while (n < limit && a[n] == b[n])
    ++n;
  return n;
}

/// Length of the common suffix (at most `limit`), likewise.
size_t commonSuffix(std::string_view a, std::string_view b, size_t limit) {
  constexpr size_t kBlock = 4096;
  const char *ea = a.data() + a.size(), *eb = b.data() + b.size();
  size_t n = 0;
  while (n + kBlock <= limit &&
         !std::memcmp(ea - n - kBlock, eb - n - kBlock, kBlock))
    n += kBlock;
  while (n < limit && ea[-1 - static_cast<ptrdiff_t>(n)] ==
                          eb[-1 - static_cast<ptrdiff_t>(n)])
    ++n;
  return n;
}

/// Every range an item carries: what moves when lines above it change.
/// One list per kind, for shifting a whole section and for the merge.
template <typename Fn> void forEachRange(Diagnostic &d, Fn fn) {
  fn(d.range);
  for (DiagNote &n : d.notes)
    fn(n.range);
}
template <typename Fn> void forEachRange(OpReport &o, Fn fn) {
  for (Range *r : {&o.range, &o.scope, &o.resultNameRange, &o.resultTypeRange})
    fn(*r);
}
template <typename Fn> void forEachRange(ValueInfo &v, Fn fn) {
  fn(v.def);
  fn(v.ownerRange);
  for (Range &u : v.uses.mut()) // shared with the previous version until here
    fn(u);
}
template <typename Fn> void forEachRange(BlockInfo &b, Fn fn) {
  fn(b.def);
  for (Range &u : b.uses.mut())
    fn(u);
}
template <typename Fn> void forEachRange(OpSpan &o, Fn fn) {
  fn(o.nameRange);
  fn(o.scope);
}
template <typename Fn> void forEachRange(SymbolInfo &sym, Fn fn) {
  fn(sym.nameRange);
  fn(sym.scope);
  for (Range &u : sym.uses)
    fn(u);
}

/// Moves a previous version's section results to where the section is now.
void shiftSection(SectionResult &s, int delta, unsigned index) {
  auto move = [&](auto &items) {
    for (auto &item : items) {
      forEachRange(item, [&](Range &r) { shiftLines(r, delta); });
      item.section = index;
    }
  };
  move(s.diagnostics);
  move(s.ops);
  move(s.values);
  move(s.blocks);
  move(s.opSpans);
  move(s.symbols);
}

/// The position of `offset` in a section's `text` that begins at `sec`'s
/// first line and column.
Position positionIn(std::string_view text, const Section &sec, size_t offset) {
  std::string_view head = text.substr(0, offset);
  size_t lines = std::count(head.begin(), head.end(), '\n');
  if (!lines)
    return {sec.firstLine, static_cast<unsigned>(sec.firstColumn + offset)};
  return {static_cast<unsigned>(sec.firstLine + lines),
          static_cast<unsigned>(offset - head.rfind('\n'))};
}

/// A section that does not parse shows its last good analysis (`s`, where
/// the text was `was` at `old`): moved to where its text is now (`now` at
/// `sec`). The edits since changed the text between a common prefix and a
/// common suffix: what lies before moves with the section, what lies
/// after with the suffix (on the edit's last line by the columns it
/// added too), and what lay inside sits at the edit's new end (a stale
/// hover or hint never lands on text that is not its op's).
void remapStale(SectionResult &s, std::string_view was, const Section &old,
                std::string_view now, const Section &sec,
                const LineIndex &lines) {
  // The edit between the common prefix and suffix, widened to whole tokens
  // of the old text: inserting `  %z = ...\n` before `  %0` would otherwise
  // split `%0` after its `%`, and stretch its range over the new lines.
  auto inToken = [](char c) {
    return llvm::isAlnum(c) || llvm::StringRef("_$.%#@^!").contains(c);
  };
  size_t limit = std::min(was.size(), now.size());
  size_t prefix = commonPrefix(was, now, limit);
  while (prefix && prefix < was.size() && inToken(was[prefix]) &&
         inToken(was[prefix - 1]))
    --prefix;
  size_t suffix = commonSuffix(was, now, limit - prefix);
  while (suffix && was.size() - suffix > prefix &&
         inToken(was[was.size() - suffix]) &&
         inToken(was[was.size() - suffix - 1]))
    --suffix;
  Position oldBegin = positionIn(was, old, prefix);
  Position oldEnd = positionIn(was, old, was.size() - suffix);
  Position newEnd = lines.position(sec.beginOffset + now.size() - suffix);
  int delta = static_cast<int>(sec.firstLine) - static_cast<int>(old.firstLine);
  auto map = [&](Position &x, bool isEnd) {
    if (!x.valid())
      return;
    if (before(x, oldBegin) || (isEnd && !before(oldBegin, x))) {
      x.line += delta;
    } else if (before(x, oldEnd)) {
      x = newEnd;
    } else {
      if (x.line == oldEnd.line)
        x.column = newEnd.column + (x.column - oldEnd.column);
      x.line = x.line - oldEnd.line + newEnd.line;
    }
  };
  auto move = [&](auto &items) {
    for (auto &item : items) {
      forEachRange(item, [&](Range &r) {
        map(r.begin, false);
        map(r.end, true);
      });
      item.section = sec.index;
    }
  };
  move(s.ops);
  move(s.values);
  move(s.blocks);
  move(s.opSpans);
  move(s.symbols);
}

/// Where one section's items lie in the assembled FileAnalysis.
struct Slice {
  size_t diagnostics[2], ops[2], values[2], blocks[2], symbols[2], opSpans[2];
};

/// Appends `from` to `to` by moving (a 200k-line file has ~10^5 ops and
/// values).
template <typename T>
void appendMoved(std::vector<T> &to, std::vector<T> &from) {
  // The bigger buffer stays: `to` when reserved for everything, else
  // `from` whole.
  if (to.empty() && from.capacity() >= to.capacity()) {
    to = std::move(from);
    return;
  }
  to.insert(to.end(), std::make_move_iterator(from.begin()),
            std::make_move_iterator(from.end()));
}

/// The second part of a cut `section`: under the function's header, with
/// `crossing` declared among its arguments (FunctionSplit.h).
PartText secondPartText(std::string_view section, const detail::FunctionCut &fc,
                        const std::vector<detail::CrossCutValue> &crossing) {
  PartText b;
  b.prefix = detail::secondPartPrefix(section, fc, crossing);
  b.prefixLines =
      static_cast<unsigned>(std::count(b.prefix.begin(), b.prefix.end(), '\n'));
  return b;
}

/// What an edit of a function cut into `a` and `b` starts from: no units
/// (the function is analysed again whole, or its tail), the body's
/// top-level definitions.
void rememberCut(SectionUnits &units, PartText &a, PartText &b) {
  units = SectionUnits();
  units.cutDefs = std::move(a.topLevelDefs);
  appendMoved(units.cutDefs, b.topLevelDefs);
}

/// `from` after `to`, reserved to the item (appending a part grows `to`
/// once, and not at all when the first part reserved for all).
template <typename T>
void appendReserved(std::vector<T> &to, std::vector<T> &from) {
  if (to.capacity() < to.size() + from.size())
    to.reserve(to.size() + from.size());
  appendMoved(to, from);
}

/// `b`'s items after `a`'s, in file order (`b`'s values then index the
/// ops after `a`'s). Diagnostics are the caller's: their order is not
/// the parts'.
void appendPart(SectionResult &a, SectionResult &b) {
  int opBase = static_cast<int>(a.ops.size());
  for (ValueInfo &v : b.values)
    if (v.opReport >= 0)
      v.opReport += opBase;
  appendReserved(a.ops, b.ops);
  appendReserved(a.values, b.values);
  appendReserved(a.blocks, b.blocks);
  appendReserved(a.symbols, b.symbols);
  appendReserved(a.opSpans, b.opSpans);
}

/// Concatenates section results into the file's analysis; `slices` (if
/// given) receives each section's place in it.
FileAnalysis assemble(const FileText &file, const std::string &path,
                      std::vector<SectionResult> &&results,
                      std::vector<Slice> *slices = nullptr) {
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

/// A section's items, copied out of an earlier analysis (in that
/// analysis' positions); its ops and values shared instead with
/// `shareItems` (the section has not moved).
SectionResult sliceOf(const FileAnalysis &fa, const Slice &s,
                      const Section &section, bool shareItems = false) {
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

} // namespace

/// Some MLIR 22 custom parsers (tosa.clamp, tosa.rescale, tosa.max_pool2d)
/// fail without emitting anything; a section that did not parse must never
/// look clean. Every op parsed before the failure is in the parser state, so
/// the culprit is the first op after them that cannot hold regions (the ops
/// before it without a definition are its enclosing ops).
Diagnostic silentParseFailure(const detail::ParsedSection &ps,
                              const FileText &file, const Section &sec,
                              MLIRContext *ctx) {
  const char *bufStart =
      ps.sourceMgr.getMemoryBuffer(ps.sourceMgr.getMainFileID())
          ->getBufferStart();
  size_t from = 0;
  for (const AsmParserState::OperationDefinition &def : ps.state.getOpDefs())
    if (def.scopeLoc.End.isValid())
      from = std::max<size_t>(from, def.scopeLoc.End.getPointer() - bufStart);
  std::string_view secText = std::string_view(file.text).substr(
      sec.beginOffset, sec.endOffset - sec.beginOffset);
  std::optional<std::pair<size_t, size_t>> found, fallback;
  auto identChar = [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' ||
           c == '.' || c == '$';
  };
  size_t i = std::min(from, secText.size());
  while (i < secText.size() && !found) {
    size_t eol = secText.find('\n', i);
    if (eol == std::string_view::npos)
      eol = secText.size();
    std::string_view line = secText.substr(i, eol - i);
    size_t p = line.find_first_not_of(" \t\r");
    if (p != std::string_view::npos && line[p] == '%') {
      size_t eq = line.find('=', p);
      p = eq == std::string_view::npos ? std::string_view::npos
                                       : line.find_first_not_of(" \t", eq + 1);
    }
    if (p != std::string_view::npos && p < line.size()) {
      size_t b = p, e = p;
      if (line[p] == '"') {
        e = line.find('"', p + 1);
        if (e != std::string_view::npos)
          ++b;
      } else {
        while (e < line.size() && identChar(line[e]))
          ++e;
      }
      if (e != std::string_view::npos && e > b) {
        std::string_view name = line.substr(b, e - b);
        bool opLike = name.find('.') != std::string_view::npos &&
                      std::isalpha(static_cast<unsigned char>(name[0]));
        if (opLike || name == "return") {
          std::pair<size_t, size_t> at{i + b, i + e};
          if (!fallback)
            fallback = at;
          std::optional<RegisteredOperationName> info =
              RegisteredOperationName::lookup(
                  llvm::StringRef(name.data(), name.size()), ctx);
          if (name == "return" ||
              (opLike && (!info || info->hasTrait<OpTrait::ZeroRegions>())))
            found = at;
        }
      }
    }
    i = eol + 1;
  }
  if (!found)
    found = fallback;
  Diagnostic d;
  d.source = DiagSource::Parser;
  d.code = "parse-error";
  if (found) {
    std::string_view name =
        secText.substr(found->first, found->second - found->first);
    d.range.begin = file.lines.position(sec.beginOffset + found->first);
    d.range.end = file.lines.position(sec.beginOffset + found->second);
    d.message = "'" + std::string(name) +
                "' did not parse and MLIR's parser gave no reason (its "
                "custom parser failed silently): check the op's syntax "
                "(stray commas, attribute names, operand count) against "
                "MLIR 22, or write it in generic form";
  } else {
    d.range.begin = file.lines.position(sec.beginOffset);
    d.range.end = d.range.begin;
    d.message = "this section did not parse and MLIR's parser gave no "
                "reason (a custom parser failed silently)";
  }
  return d;
}

/// Records the section's units after a full analysis (see SectionUnits).
void collectUnits(const detail::ParsedSection &ps,
                  const llvm::DenseSet<Operation *> &failedOps,
                  const LineIndex &lines, const Section &sec,
                  const SectionResult &result, SectionUnits &out) {
  out = SectionUnits();
  ModuleOp module = *ps.module;
  std::string_view secText =
      std::string_view(ps.bufferStart, sec.endOffset - sec.beginOffset);
  if (secText.find("{-#") != std::string_view::npos)
    return; // Dialect resources: a unit alone could not see them.
  if (!ps.implicitModule && !module->getAttrDictionary().empty())
    return;
  std::vector<Unit> units;
  for (Operation &op : *module.getBody()) {
    const AsmParserState::OperationDefinition *def = ps.state.getOpDef(&op);
    if (!def)
      return;
    Unit u;
    u.begin = def->scopeLoc.Start.getPointer() - ps.bufferStart;
    u.end = def->scopeLoc.End.getPointer() - ps.bufferStart;
    u.firstLine = lines.position(sec.beginOffset + u.begin).line;
    u.lastLine = lines.position(sec.beginOffset + u.end).line;
    // Units on lines of their own: an edit in one never moves another
    // sideways, only down.
    if (!units.empty() && u.firstLine <= units.back().lastLine)
      return;
    u.opName = op.getName().getStringRef().str();
    if (auto sym =
            op.getAttrOfType<StringAttr>(SymbolTable::getSymbolAttrName()))
      u.symbol = sym.str();
    if (auto fn = dyn_cast<FunctionOpInterface>(&op))
      u.signature = ps.typeName(fn.getFunctionType());
    units.push_back(std::move(u));
  }
  if (!ps.implicitModule) {
    const AsmParserState::OperationDefinition *def =
        ps.state.getOpDef(module.getOperation());
    if (!def || units.empty() ||
        lines.position(sec.beginOffset +
                       (def->scopeLoc.End.getPointer() - ps.bufferStart))
                .line <= units.back().lastLine)
      return;
  }
  for (const Diagnostic &d : result.diagnostics) {
    if (d.severity != Severity::Error || d.source == DiagSource::Broadcast ||
        !d.range.begin.valid())
      continue;
    for (Unit &u : units)
      if (d.range.begin.line >= u.firstLine && d.range.begin.line <= u.lastLine)
        u.failed = true;
  }
  for (const auto &a : ps.state.getAttributeAliasDefs()) {
    std::string printed;
    llvm::raw_string_ostream os(printed);
    a.value.print(os);
    out.aliases += "#" + a.name.str() + " = " + printed + "\n";
  }
  for (const auto &a : ps.state.getTypeAliasDefs())
    out.aliases += "!" + a.name.str() + " = " + ps.typeName(a.value) + "\n";
  out.moduleFailed = failedOps.contains(module.getOperation());
  out.units = std::move(units);
}

/// Destroys the regions of `module`'s isolated top-level ops (functions),
/// leaving the ops: nothing outside a body refers to a value inside it.
void destroyIsolatedBodies(ModuleOp module) {
  for (Operation &op : *module.getBody())
    if (op.hasTrait<OpTrait::IsIsolatedFromAbove>())
      for (Region &r : op.getRegions()) {
        r.dropAllReferences();
        r.getBlocks().clear();
      }
}

/// A symbol named in a text: `@name` or `@"name"`, at `offset`.
struct SymbolRef {
  size_t offset;
  std::string_view name;
};

/// Every `@name` reference in `text` (quoted or bare), in text order.
/// std::nullopt when one is nested (`@m::@f`): no stub stands for that, and
/// no cut can tell which symbol it names.
std::optional<std::vector<SymbolRef>> symbolRefsIn(std::string_view text) {
  std::vector<SymbolRef> out;
  for (size_t i = text.find('@'); i != std::string_view::npos;
       i = text.find('@', i + 1)) {
    size_t b = i + 1, e = b;
    if (b < text.size() && text[b] == '"') {
      e = text.find('"', b + 1);
      if (e == std::string_view::npos)
        break;
      out.push_back({i, text.substr(b + 1, e - b - 1)});
      ++e;
    } else {
      while (e < text.size() &&
             (std::isalnum(static_cast<unsigned char>(text[e])) ||
              text[e] == '_' || text[e] == '$' || text[e] == '.' ||
              text[e] == '-'))
        ++e;
      if (e == b)
        continue;
      out.push_back({i, text.substr(b, e - b)});
    }
    if (text.substr(e, 2) == "::")
      return std::nullopt;
  }
  return out;
}

/// The names `symbolRefsIn` finds, for a unit's stubs.
std::optional<std::vector<std::string>> symbolRefs(std::string_view text) {
  std::optional<std::vector<SymbolRef>> refs = symbolRefsIn(text);
  if (!refs)
    return std::nullopt;
  std::vector<std::string> out;
  out.reserve(refs->size());
  for (const SymbolRef &r : *refs)
    out.emplace_back(r.name);
  return out;
}

/// Where the range [begin, end) of a section's text can be cut into two
/// halves that parse and verify alone exactly as they do together: the
/// start of the top-level op nearest the middle of its work (workTarget),
/// after a `}` closing the op before it at column 0, with no symbol named
/// on both sides (calls, duplicates). `refs` are the range's symbol references.
/// A wrong guess (a cut inside an op) fails to parse and the caller analyses
/// the section whole.
std::optional<size_t> splitPoint(std::string_view text, size_t begin,
                                 size_t end, llvm::ArrayRef<SymbolRef> refs) {
  size_t cut = std::string_view::npos;
  for (size_t at =
           text.find("\n}\n", detail::workTarget(text, begin, end, 0.5));
       at != std::string_view::npos && at + 3 <= end;
       at = text.find("\n}\n", at + 1)) {
    size_t next = text.find_first_not_of(" \t\r\n", at + 3);
    if (next >= end)
      return std::nullopt; // The last op: nothing after it.
    // The next op starts at column 0 (a function's `}` at column 0 inside
    // an indented module would be followed by an indented line).
    if (text[next - 1] == '\n' && text[next] != '}') {
      cut = at + 3;
      break;
    }
  }
  if (cut == std::string_view::npos)
    return std::nullopt;
  auto second = llvm::partition_point(
      refs, [&](const SymbolRef &r) { return r.offset < cut; });
  llvm::ArrayRef<SymbolRef> before = refs.take_front(second - refs.begin());
  llvm::ArrayRef<SymbolRef> after = refs.drop_front(before.size());
  if (before.size() > after.size())
    std::swap(before, after);
  llvm::DenseSet<llvm::StringRef> names;
  for (const SymbolRef &r : before)
    names.insert(llvm::StringRef(r.name.data(), r.name.size()));
  for (const SymbolRef &r : after)
    if (names.contains(llvm::StringRef(r.name.data(), r.name.size())))
      return std::nullopt;
  return cut;
}

/// Where to cut a section into parts that share no symbols: each cut is
/// a splitPoint of a range of at least twice `minPart` bytes, halving it,
/// for at most kMaxParts parts; in text order, none if the whole section
/// cannot be cut. The text is scanned once for what forbids any cut
/// (aliases, dialect resources, nested symbol references) and for its
/// symbol references: each level of cuts then looks at the references
/// only (50k lines: 4.0 -> 0.6 ms before the parts start).
constexpr unsigned kMaxPartsLog2 = 3; // 8 parts
std::vector<size_t> splitPoints(std::string_view text, size_t minPart) {
  std::vector<size_t> cuts;
  // Aliases and dialect resources (`#a = `, `!t = `, `{-#` at a line's
  // start) are named across any cut. `#` and `!` are rare in a model's
  // text: finding them is faster than finding each line's start.
  auto atLineStart = [&](char c) {
    for (size_t i = text.find(c); i != std::string_view::npos;
         i = text.find(c, i + 1))
      if (i == 0 || text[i - 1] == '\n' ||
          (c == '#' && i >= 2 && text.substr(i - 2, 2) == "{-"))
        return true;
    return false;
  };
  if (text.empty() || atLineStart('#') || atLineStart('!'))
    return cuts;
  std::optional<std::vector<SymbolRef>> refs = symbolRefsIn(text);
  if (!refs)
    return cuts;
  auto cutRange = [&](auto &self, size_t begin, size_t end,
                      llvm::ArrayRef<SymbolRef> inRange,
                      unsigned depth) -> void {
    if (depth == 0 || end - begin < 2 * minPart)
      return;
    std::optional<size_t> at = splitPoint(text, begin, end, inRange);
    if (!at)
      return;
    size_t k =
        llvm::partition_point(
            inRange, [&](const SymbolRef &r) { return r.offset < *at; }) -
        inRange.begin();
    self(self, begin, *at, inRange.take_front(k), depth - 1);
    cuts.push_back(*at);
    self(self, *at, end, inRange.drop_front(k), depth - 1);
  };
  cutRange(cutRange, 0, text.size(), *refs, kMaxPartsLog2);
  return cuts;
}

struct AnalysisCache::Impl {
  struct LastGood;
  struct Entry {
    std::string_view text; // in `text` below
    Section section;       // as it was analysed (parsed / stale flags included)
    Slice slice;           // its items in `previous`
    std::shared_ptr<const SectionUnits> units;
    /// Cut in two parts and analysed whole for what the parts had (see
    /// mayCut); kept while the section is analysed whole with errors.
    bool cutFailed = false;
    /// While the section does not parse: the last version of it that did.
    /// Edits are diffed against it and merged into its analysis, so typing
    /// through a parse error in one function re-analyses that function,
    /// not the section (most keystrokes leave a half-typed op behind).
    std::shared_ptr<const LastGood> good;
  };
  /// An entry of an earlier version, with what its views point into.
  struct LastGood {
    Entry entry; // parsed, not stale; its `good` is empty
    std::shared_ptr<const std::string> text;
    std::shared_ptr<const FileAnalysis> analysis;
  };
  std::string configFingerprint;
  std::string path;
  std::vector<Entry> entries; // by section index of the previous version
  /// The previous version's text, shared with its owner (the server's
  /// snapshot): the entries are views into it, not a copy of the file.
  std::shared_ptr<const std::string> text;
  /// The previous analysis, shared with whoever else holds it (the
  /// server's snapshot): remembering it costs nothing.
  std::shared_ptr<const FileAnalysis> previous;
};

AnalysisCache::AnalysisCache() : impl(std::make_unique<Impl>()) {}
AnalysisCache::~AnalysisCache() = default;
AnalysisCache::AnalysisCache(AnalysisCache &&) = default;
AnalysisCache &AnalysisCache::operator=(AnalysisCache &&) = default;

/// The big item vectors of a retired analysis, emptied but with their
/// capacity, for the next incremental merge to fill. Each version's
/// vectors are ~90 MB at 200k lines; allocated fresh, every page of them
/// was faulted in and zeroed again by the kernel on each edit. Only while
/// edits are merged (`wanted`): a one-function model, analysed whole each
/// time, would only hold a spare set. The peak does not grow: the spare
/// is the memory the version before the previous one had.
struct Recycler {
  std::mutex mu;
  bool wanted = false;
  std::vector<Diagnostic> diagnostics;
  std::vector<OpReport> ops;
  std::vector<ValueInfo> values;
  std::vector<OpSpan> opSpans;

  /// Called as a shared analysis is freed (its last snapshot gone).
  void retire(FileAnalysis &fa) {
    {
      std::lock_guard<std::mutex> lock(mu);
      if (!wanted)
        return;
    }
    // Destroyed here, outside the lock; kept where bigger than the spare.
    auto keep = [&](auto &from, auto &slot) {
      constexpr size_t kWorthKeeping = 4096;
      if (from.capacity() < kWorthKeeping)
        return;
      from.clear();
      std::lock_guard<std::mutex> lock(mu);
      if (wanted && from.capacity() > slot.capacity())
        std::swap(from, slot);
    };
    keep(fa.diagnostics, diagnostics);
    // Only stores no later version shares (an edit that kept the rest of
    // a section shares its runs, and needs no spare).
    fa.ops.releaseStores([&](std::vector<OpReport> &v) { keep(v, ops); });
    fa.values.releaseStores(
        [&](std::vector<ValueInfo> &v) { keep(v, values); });
    keep(fa.opSpans, opSpans);
  }
  template <typename T> std::vector<T> take(std::vector<T> &slot) {
    std::lock_guard<std::mutex> lock(mu);
    return std::move(slot); // leaves the slot empty, without capacity
  }
  void want(bool on) {
    std::vector<Diagnostic> d;
    std::vector<OpReport> o;
    std::vector<ValueInfo> v;
    std::vector<OpSpan> s;
    std::lock_guard<std::mutex> lock(mu);
    wanted = on;
    if (on)
      return;
    std::swap(d, diagnostics); // freed after the lock
    std::swap(o, ops);
    std::swap(v, values);
    std::swap(s, opSpans);
  }
};

struct Analyzer::Impl {

  std::unique_ptr<MLIRContext> context = makeContext();
  /// Where analyses run (big stacks; see TaskThread.h), and the second
  /// thread of a big section (verifier, parts, merge).
  TaskThread analysisThread{kAnalysisStackBytes};
  TaskThread helperThread{kAnalysisStackBytes};
  /// The helper thread's context when a section is analysed in parts
  /// (analyzeInParts): one context per thread, no locking.
  std::unique_ptr<MLIRContext> partContext;
  /// A crash on the verifier thread of analyzeSectionUnguarded, for
  /// analyzeSection to handle like one on its own thread.
  std::optional<std::string> deferredCrash;
  size_t parallelSectionBytes = kDefaultParallelSectionBytes;
  /// The context has lenient dialects (Lenient.h); a configuration that
  /// does not allow them all gets a fresh context.
  /// Set by either thread (analyzeSmallSections).
  std::atomic<bool> lenientLoaded{false};
  std::string lenientFingerprint;
  /// Bytes parsed in the contexts since they were last made fresh (both
  /// threads add to it; read between analyses).
  std::atomic<size_t> parsedSinceFresh{0};
  std::shared_ptr<Recycler> recycler = std::make_shared<Recycler>();
  /// Whole sections' parses, kept after their results are copied out to
  /// be destroyed later (destroyRetiredIR). Declared after the contexts:
  /// destroyed before them.
  bool deferIRDestruction = false;
  /// False while small sections are analysed on two threads: each parse
  /// is destroyed at once on its thread, so that the helper's context and
  /// heap can go before the publish (see analyzeSmallSections).
  bool retireSections = true;
  bool collectIndexes = true; // setCollectIndex
  std::mutex retiredMu;
  std::vector<std::unique_ptr<detail::ParsedSection>> retired;
  void destroyRetired() {
    std::vector<std::unique_ptr<detail::ParsedSection>> dead;
    {
      std::lock_guard<std::mutex> lock(retiredMu);
      dead.swap(retired);
    }
    if (dead.empty())
      return;
    // Its pages go back at once (configureAllocator), unless a request
    // answered meanwhile keeps pages: then they wait for this thread's
    // next analysis, which reuses them.
    PhaseTimer t("destroy IR (after the publish)");
    dead.clear();
  }
  /// After a crash, what was parsed is abandoned with its context (see
  /// analyzeSection), never destroyed.
  void abandonRetired() {
    std::lock_guard<std::mutex> lock(retiredMu);
    for (auto &ps : retired)
      (void)ps.release();
    retired.clear();
  }

  static std::unique_ptr<MLIRContext> makeContext() {
    std::unique_ptr<MLIRContext> ctx = singleThreadedContext(makeRegistry());
    // tf.*, tfl.*, test.*, stablehlo.* in generic form must parse.
    ctx->allowUnregisteredDialects();
    return ctx;
  }

  FileAnalysis analyze(const std::string &text, const std::string &path,
                       const Config &config, AnalysisCache *cache,
                       std::shared_ptr<const FileAnalysis> *shared = nullptr,
                       // Holds `text`; required with a cache.
                       std::shared_ptr<const std::string> owner = nullptr);
  /// analyzeSectionUnguarded, with a crash inside MLIR turned into an error
  /// on the section (and a fresh context for what follows).
  SectionResult analyzeSection(const FileText &file, const std::string &path,
                               Section sec, const Config &config,
                               SectionUnits *units = nullptr,
                               bool cutFunction = true);
  /// `part` (with its context `partCtx`): analyse only this part of `sec`
  /// (analyzeInParts); results are `sec`'s.
  void analyzeSectionUnguarded(const FileText &file, const std::string &path,
                               Section sec, const Config &config,
                               SectionResult &result, SectionUnits *units,
                               UnitJob *job, const Section *part = nullptr,
                               MLIRContext *partCtx = nullptr,
                               PartText *around = nullptr,
                               double capacityFactor = 1.0);
  /// A big section whose top-level ops share no symbols across its cuts,
  /// parsed and verified as up to 8 parts that two threads take in turn
  /// (the parse is most of an open and MLIR's parser is single-threaded).
  /// std::nullopt when the section cannot be cut or a part fails to
  /// parse: then it is analysed whole, which reports what went wrong as
  /// usual.
  std::optional<SectionResult>
  analyzeInParts(const FileText &file, const std::string &path,
                 const Section &sec, const Config &config, SectionUnits *units);
  /// Items 0..k-1 by this thread (in `context`) and the helper (in
  /// `partContext`, made there if missing), each taking the next in turn:
  /// when one core runs slower (this host's does at times, 1.5-1.7x) the
  /// faster thread takes more instead of waiting for the slower half.
  /// `done[i]` says which finished. Stops at a crash inside MLIR and
  /// returns false, both contexts abandoned (abandonParts).
  bool inTurn(size_t k, llvm::function_ref<void(size_t, MLIRContext *)> item,
              std::vector<char> &done, const char *phase);
  /// Sections below parallelSectionBytes (a split file's `// -----`
  /// parts), each analysed whole: by two threads that take the next one in
  /// turn, each in its own context, when there are enough bytes for both;
  /// else here, one after another. `results` and `units` (null: none)
  /// follow `secs`.
  void analyzeSmallSections(const FileText &file, const std::string &path,
                            const Config &config, llvm::ArrayRef<Section> secs,
                            llvm::ArrayRef<SectionResult *> results,
                            llvm::ArrayRef<SectionUnits *> units);
  /// A big section that is one function (FunctionSplit.h), parsed and
  /// verified as two parts of its body on two threads. std::nullopt when it
  /// cannot be cut, or when anything could differ from the whole section's
  /// analysis (a part does not parse, a guessed type is wrong, the second
  /// part has MLIR diagnostics: their op notes number values within the
  /// part): then it is analysed whole.
  std::optional<SectionResult> analyzeFunctionInParts(const FileText &file,
                                                      const std::string &path,
                                                      const Section &sec,
                                                      const Config &config,
                                                      SectionUnits *units);
  /// After a crash in either part (analyzeInParts,
  /// analyzeFunctionInParts): what they built is abandoned with the
  /// contexts, which are replaced.
  void abandonParts(bool crashedHere, bool crashedBeside);
  /// The last analyzeFunctionInParts parsed the parts and found they
  /// could differ from the whole.
  bool cutFailed = false;
  /// Whether a section that was not cut last time (`old`) may be cut now.
  /// Not where MLIR reported on it where the parts cannot take it: before
  /// the function's body (on the function or module), after the place of
  /// the cut (the second part's notes would number values within it), or
  /// anywhere after a cut failed. An edit in progress most likely leaves
  /// those where they are: a cut would fail, and the section be analysed
  /// whole again, twice the work per keystroke. Errors inside the first
  /// part do not stop it (they used to, until the file had none).
  bool mayCut(const AnalysisCache::Impl::Entry &old,
              const FileAnalysis &previous);
  /// A function analysed in parts last time, edited in its second half:
  /// what lies before the last top-level op before the edit is kept from
  /// `previous` (the text there is unchanged), and the rest is analysed as
  /// the second part after it, on this thread. std::nullopt where that
  /// cannot be done or could differ (the caller analyses the section).
  std::optional<SectionResult> analyzeFunctionTail(
      const FileText &file, const std::string &path, const Section &sec,
      const Config &config, const AnalysisCache::Impl::Entry &old,
      const FileAnalysis &previous, SectionUnits *units, bool &errorsInTail);
  /// `sec` as two parts, the second from `cut` (an offset in it).
  static std::pair<Section, Section>
  splitSection(const FileText &file, const Section &sec, size_t cut) {
    Section first = sec, second = sec;
    first.endOffset = second.beginOffset = sec.beginOffset + cut;
    Position at = file.lines.position(second.beginOffset);
    second.firstLine = at.line;
    second.firstColumn = at.column;
    first.lastLine = at.line;
    return {first, second};
  }
  /// The same, with the second part's context ready.
  std::pair<Section, Section> cutSection(const FileText &file,
                                         const Section &sec, size_t cut) {
    if (!partContext)
      partContext = makeContext();
    return splitSection(file, sec, cut);
  }
  /// An edit inside one unit of a section that parsed last time: that unit
  /// alone is parsed and verified (with stubs of what it calls), the rest
  /// is reused. std::nullopt when the result could differ from a full
  /// analysis (then the caller does one).
  std::optional<SectionResult> analyzeIncrementally(
      const FileText &file, const std::string &path, const Section &sec,
      const Config &config, const AnalysisCache::Impl::Entry &old,
      const FileAnalysis &previous, std::shared_ptr<SectionUnits> &units);

  static DialectRegistry makeRegistry() {
    // All upstream dialects and their interface extensions: files mix tosa
    // with whatever else they use, and a promised-but-missing interface
    // would abort at verification time.
    DialectRegistry registry;
    registerFileDialects(registry);
    return registry;
  }
};

Analyzer::Analyzer() : impl(std::make_unique<Impl>()) {}
Analyzer::~Analyzer() = default;

std::shared_ptr<const FileAnalysis>
Analyzer::analyzeShared(const std::string &text, const std::string &path,
                        const Config &config, AnalysisCache &cache) {
  return analyzeShared(std::make_shared<const std::string>(text), path, config,
                       cache);
}

std::shared_ptr<const FileAnalysis>
Analyzer::analyzeShared(std::shared_ptr<const std::string> text,
                        const std::string &path, const Config &config,
                        AnalysisCache &cache) {
  std::shared_ptr<const FileAnalysis> result;
  PhaseTimer total("analysis (total)");
  const std::string &whole = *text; // `text` is moved below
  impl->analysisThread.run([&] {
    impl->analyze(whole, path, config, &cache, &result, std::move(text));
  });
  return result;
}

void Analyzer::warmUp() {
  static constexpr const char *kText =
      "func.func @w(%a: tensor<2x?xf32>, %b: tensor<1x3xf32>) -> "
      "tensor<2x3xf32> {\n"
      "  %0 = tosa.add %a, %b : (tensor<2x?xf32>, tensor<1x3xf32>) -> "
      "tensor<2x3xf32>\n"
      "  return %0 : tensor<2x3xf32>\n"
      "}\n";
  (void)analyze(kText, "<warm-up>", Config());
}

void Analyzer::setDeferIRDestruction(bool on) { impl->deferIRDestruction = on; }

void Analyzer::setCollectIndex(bool on) { impl->collectIndexes = on; }

void Analyzer::destroyRetiredIR() {
  impl->analysisThread.run([&] { impl->destroyRetired(); });
}

void Analyzer::releaseMemory() {
  destroyRetiredIR();
  impl->context = Impl::makeContext();
  impl->partContext.reset();
  impl->lenientLoaded = false;
  impl->recycler->want(false);
  impl->analysisThread.stop();
  impl->helperThread.stop();
}

/// A context like `old`'s with the same dialects loaded: the next analysis
/// does not load them again (a few ms of a keystroke's re-analysis).
static std::unique_ptr<MLIRContext>
freshContextLike(MLIRContext &old, std::unique_ptr<MLIRContext> (*make)()) {
  std::vector<std::string> loaded;
  for (Dialect *d : old.getLoadedDialects())
    loaded.push_back(d->getNamespace().str());
  std::unique_ptr<MLIRContext> ctx = make();
  for (const std::string &name : loaded)
    (void)ctx->getOrLoadDialect(name);
  return ctx;
}

void Analyzer::releaseIdleMemory(bool forgetAll) {
  // Fresh contexts cost ~1-3 ms each (dialects loaded again) and
  // collecting the analysis thread's heap (~300 MiB at 200k lines) more,
  // which the next edit waited for when it came at once (a 200k-line
  // many-function file's edit 86 -> 93 ms): only once what the contexts
  // uniqued is worth it. Otherwise that thread's next analysis reuses its
  // free pages.
  bool fresh = forgetAll || impl->parsedSinceFresh >= kForgetUniquedBytes;
  if (fresh) {
    impl->parsedSinceFresh = 0;
    impl->analysisThread.run([&] {
      PhaseTimer t("fresh contexts (idle)");
      impl->destroyRetired();
      impl->context = freshContextLike(*impl->context, Impl::makeContext);
      impl->lenientLoaded = false;
      releaseFreeMemory();
    });
  }
  // The second part's context: made and used on the helper thread, whose
  // heap holds what it uniqued.
  impl->helperThread.run([&] {
    if (fresh && impl->partContext)
      impl->partContext =
          freshContextLike(*impl->partContext, Impl::makeContext);
    releaseFreeMemory();
  });
}

void Analyzer::setParallelSectionBytes(size_t bytes) {
  impl->parallelSectionBytes = bytes;
}

FileAnalysis Analyzer::analyze(const std::string &text, const std::string &path,
                               const Config &config, AnalysisCache *cache) {
  if (cache) // The cache shares what it remembers: hand out a copy.
    return *analyzeShared(text, path, config, *cache);
  // The parser and verifier recurse per nesting level: give them a large
  // stack of their own (the nesting limit keeps them well inside it).
  FileAnalysis result;
  PhaseTimer total("analysis (total)");
  impl->analysisThread.run(
      [&] { result = impl->analyze(text, path, config, cache); });
  return result;
}

FileAnalysis
Analyzer::Impl::analyze(const std::string &text, const std::string &path,
                        const Config &config, AnalysisCache *cache,
                        std::shared_ptr<const FileAnalysis> *shared,
                        std::shared_ptr<const std::string> owner) {
  destroyRetired(); // if no one did after the last analysis
  FileText file(text);
  AnalysisCache::Impl *memo = cache ? cache->impl.get() : nullptr;
  std::string fingerprint = config.fingerprint();
  if (lenientLoaded && lenientFingerprint != fingerprint) {
    context = makeContext(); // Nothing built in the old one outlives a call.
    partContext.reset();     // It may have lenient dialects too.
    lenientLoaded = false;
  }
  lenientFingerprint = fingerprint;
  if (memo && (memo->configFingerprint != fingerprint || memo->path != path)) {
    memo->entries.clear(); // Different settings: nothing can be reused.
    memo->previous.reset();
  }

  std::vector<AnalysisCache::Impl::Entry> next;
  std::vector<SectionResult> results;
  // What follows a fresh analysis of a section: whether a cut failed, and
  // the last good analysis served (stale) while it does not parse.
  auto finishFresh = [&](const Section &sec, SectionResult &r,
                         const AnalysisCache::Impl::Entry *atIndex,
                         std::shared_ptr<SectionUnits> &units, bool cut) {
    // Kept while the section is not cut (mayCut then asks it).
    bool failedCut = cutFailed || (!cut && atIndex && atIndex->cutFailed);
    if (units && units->units.empty() && units->cutDefs.empty())
      units.reset();
    if (!r.section.parsed && atIndex &&
        (atIndex->section.parsed || atIndex->section.stale)) {
      // Keep serving the last good analysis of this section, marked stale;
      // the new parse error stays.
      SectionResult old =
          sliceOf(*memo->previous, atIndex->slice, atIndex->section);
      remapStale(old, atIndex->text, atIndex->section,
                 std::string_view(text).substr(sec.beginOffset,
                                               sec.endOffset - sec.beginOffset),
                 sec, file.lines);
      r.ops = std::move(old.ops);
      r.values = std::move(old.values);
      r.blocks = std::move(old.blocks);
      r.symbols = std::move(old.symbols);
      r.opSpans = std::move(old.opSpans);
      r.section.stale = true;
    }
    return failedCut;
  };
  // Small sections analysed afresh (a split file's parts, opened or
  // replaced whole): after the loop, on two threads (analyzeSmallSections).
  struct Deferred {
    size_t index;
    const AnalysisCache::Impl::Entry *atIndex;
    std::shared_ptr<SectionUnits> units;
    bool cut;
  };
  std::vector<Deferred> deferred;
  // A section that does not parse keeps the last version that did.
  auto rememberGood = [&](AnalysisCache::Impl::Entry &e,
                          const AnalysisCache::Impl::Entry *atIndex) {
    if (e.section.parsed || !atIndex)
      return;
    if (atIndex->good)
      e.good = atIndex->good;
    else if (atIndex->section.parsed && !atIndex->section.stale &&
             atIndex->units)
      e.good = std::make_shared<AnalysisCache::Impl::LastGood>(
          AnalysisCache::Impl::LastGood{*atIndex, memo->text, memo->previous});
  };
  for (const Section &sec : file.sections) {
    std::string_view secText = std::string_view(text).substr(
        sec.beginOffset, sec.endOffset - sec.beginOffset);
    const AnalysisCache::Impl::Entry *same = nullptr, *atIndex = nullptr;
    // The analysis `same`'s slice is in.
    const FileAnalysis *sameIn = memo ? memo->previous.get() : nullptr;
    if (memo && memo->previous) {
      for (const auto &e : memo->entries)
        if (e.section.firstColumn == sec.firstColumn && e.text == secText) {
          same = &e;
          break;
        }
      if (sec.index < memo->entries.size())
        atIndex = &memo->entries[sec.index];
      // A parse error typed and taken back: the last good version again.
      if (!same && atIndex && atIndex->good &&
          atIndex->good->entry.text == secText &&
          atIndex->good->entry.section.firstColumn == sec.firstColumn) {
        same = &atIndex->good->entry;
        sameIn = atIndex->good->analysis.get();
      }
    }
    // What an edit is diffed against and merged into: the previous version,
    // or the last one that parsed while this one does not.
    const AnalysisCache::Impl::Entry *base = atIndex;
    const FileAnalysis *baseIn = memo ? memo->previous.get() : nullptr;
    if (atIndex && atIndex->good) {
      base = &atIndex->good->entry;
      baseIn = atIndex->good->analysis.get();
    }
    SectionResult r;
    std::shared_ptr<SectionUnits> units;
    bool failedCut = false; // the entry's cutFailed
    if (same) {
      failedCut = same->cutFailed;
      // Only what is reused is copied, from the previous analysis; its
      // ops and values are shared where they have not moved.
      int moved = static_cast<int>(sec.firstLine) -
                  static_cast<int>(same->section.firstLine);
      r = sliceOf(*sameIn, same->slice, same->section,
                  moved == 0 && same->section.index == sec.index);
      shiftSection(r, moved, sec.index);
      r.section.index = sec.index;
      r.section.beginOffset = sec.beginOffset;
      r.section.endOffset = sec.endOffset;
      r.section.firstLine = sec.firstLine;
      r.section.lastLine = sec.lastLine;
      r.section.reused = true;
      r.section.incremental = r.section.tail = false; // not this time
      if (same->units) {
        units = std::make_shared<SectionUnits>(*same->units);
        for (Unit &u : units->units) {
          u.firstLine += moved;
          u.lastLine += moved;
        }
      }
    } else if (std::optional<SectionResult> inc =
                   base && base->units
                       ? analyzeIncrementally(file, path, sec, config, *base,
                                              *baseIn, units)
                       : std::nullopt) {
      r = std::move(*inc);
      // A parse error in the edited function: served as a fresh analysis
      // that failed to parse is (the last good one, marked stale).
      if (!r.section.parsed) {
        (void)finishFresh(sec, r, atIndex, units, false);
        failedCut = atIndex && atIndex->cutFailed;
      }
    } else {
      if (memo)
        units = std::make_shared<SectionUnits>();
      bool cut = !atIndex || atIndex->section.inParts ||
                 mayCut(*atIndex, *memo->previous);
      cutFailed = false;
      bool tailKept =
          atIndex && atIndex->units && !atIndex->units->cutDefs.empty();
      if (!tailKept && sec.endOffset - sec.beginOffset < parallelSectionBytes) {
        // Never cut (too small for parts): analysed whole, after the loop.
        deferred.push_back({results.size(), atIndex, units, cut});
        next.push_back({secText, sec, Slice(), nullptr, false});
        results.emplace_back();
        continue;
      }
      bool errorsInTail = false;
      std::optional<SectionResult> tail =
          tailKept
              ? analyzeFunctionTail(file, path, sec, config, *atIndex,
                                    *memo->previous, units.get(), errorsInTail)
              : std::nullopt;
      // Errors after the cut fail a cut in the middle too.
      r = tail ? std::move(*tail)
               : analyzeSection(file, path, sec, config, units.get(),
                                cut && !errorsInTail);
      failedCut = finishFresh(sec, r, atIndex, units, cut);
    }
    next.push_back({secText, r.section, Slice(), units, failedCut});
    rememberGood(next.back(), atIndex);
    results.push_back(std::move(r));
  }
  if (!deferred.empty()) {
    std::vector<Section> secs;
    std::vector<SectionResult *> out;
    std::vector<SectionUnits *> outUnits;
    for (const Deferred &d : deferred) {
      secs.push_back(file.sections[d.index]);
      out.push_back(&results[d.index]);
      outUnits.push_back(d.units.get());
    }
    cutFailed = false;
    analyzeSmallSections(file, path, config, secs, out, outUnits);
    for (Deferred &d : deferred) {
      SectionResult &r = results[d.index];
      AnalysisCache::Impl::Entry &e = next[d.index];
      e.cutFailed =
          finishFresh(file.sections[d.index], r, d.atIndex, d.units, d.cut);
      e.section = r.section;
      e.units = std::move(d.units);
      rememberGood(e, d.atIndex);
    }
  }
  if (memo) { // Spare vectors only while edits are merged.
    bool merged = false;
    for (const SectionResult &r : results)
      merged |= r.section.incremental;
    recycler->want(merged);
  }
  PhaseTimer t("assemble");
  std::vector<Slice> slices;
  FileAnalysis fa =
      assemble(file, path, std::move(results), memo ? &slices : nullptr);
  if (!memo)
    return fa;
  for (size_t i = 0; i < next.size(); ++i)
    next[i].slice = slices[i];
  std::shared_ptr<const FileAnalysis> result(
      new FileAnalysis(std::move(fa)),
      [recycler = recycler](const FileAnalysis *p) {
        recycler->retire(*const_cast<FileAnalysis *>(p));
        delete p;
      });
  // The entries are views into `text`, which `owner` holds (analyzeShared,
  // the only caller with a cache, passes both).
  assert(owner && owner->data() == text.data());
  memo->entries = std::move(next);
  memo->text = std::move(owner);
  memo->configFingerprint = fingerprint;
  memo->path = path;
  memo->previous = result;
  if (shared)
    *shared = result;
  return FileAnalysis();
}

/// The section's result when the edited function alone does not parse:
/// its parse error is the section's first (MLIR stops there) when the
/// functions before it are unchanged and the edit cannot have moved a
/// function's end: it adds and removes no brace, and the error lies inside
/// the function, before its last line.
static std::optional<SectionResult>
unitParseError(const Section &sec, std::vector<Diagnostic> diagnostics,
               std::string_view removed, std::string_view inserted,
               unsigned firstLine, unsigned lastLine) {
  auto brace = [](std::string_view t) {
    return t.find_first_of("{}") != std::string_view::npos;
  };
  if (brace(removed) || brace(inserted))
    return std::nullopt;
  bool anyError = false;
  for (const Diagnostic &d : diagnostics) {
    if (d.severity != Severity::Error)
      continue;
    if (!d.range.begin.valid() || d.range.begin.line < firstLine ||
        d.range.begin.line >= lastLine)
      return std::nullopt;
    anyError = true;
  }
  if (!anyError)
    return std::nullopt; // A silent failure: the full analysis says why.
  SectionResult r;
  r.section = sec;
  r.section.parsed = false;
  r.section.incremental = true;
  r.diagnostics = std::move(diagnostics);
  return r;
}

std::optional<SectionResult> Analyzer::Impl::analyzeIncrementally(
    const FileText &file, const std::string &path, const Section &sec,
    const Config &config, const AnalysisCache::Impl::Entry &old,
    const FileAnalysis &previous, std::shared_ptr<SectionUnits> &newUnits) {
  const SectionUnits &su = *old.units;
  if (su.units.empty() || su.moduleFailed || !old.section.parsed ||
      old.section.stale || old.section.firstLine != sec.firstLine ||
      old.section.firstColumn != sec.firstColumn)
    return std::nullopt;
  std::string_view oldText = old.text;
  std::string_view newText = std::string_view(file.text).substr(
      sec.beginOffset, sec.endOffset - sec.beginOffset);
  // The edit: what lies between the common prefix and the common suffix.
  size_t limit = std::min(oldText.size(), newText.size());
  size_t prefix = commonPrefix(oldText, newText, limit);
  size_t suffix = commonSuffix(oldText, newText, limit - prefix);
  size_t editEnd = oldText.size() - suffix;
  size_t k = 0;
  while (k < su.units.size() &&
         !(su.units[k].begin <= prefix && editEnd <= su.units[k].end))
    ++k;
  if (k == su.units.size())
    return std::nullopt;
  const Unit &u = su.units[k];
  // A unit that is most of the section (a one-function model): analysing
  // the section whole is as much work, runs on both cores and needs no
  // merge.
  if (2 * (u.end - u.begin) > oldText.size())
    return std::nullopt;
  ptrdiff_t delta = static_cast<ptrdiff_t>(newText.size()) -
                    static_cast<ptrdiff_t>(oldText.size());
  size_t newEnd = u.end + delta;
  std::string_view unitText = newText.substr(u.begin, newEnd - u.begin);

  UnitJob job;
  job.prefix = su.aliases;
  std::optional<std::vector<std::string>> refs = symbolRefs(unitText);
  if (!refs)
    return std::nullopt;
  std::set<std::string> stubbed;
  for (const std::string &name : *refs) {
    if (name == u.symbol || !stubbed.insert(name).second)
      continue;
    for (size_t j = 0; j < su.units.size(); ++j) {
      if (j == k || su.units[j].symbol != name)
        continue;
      if (su.units[j].opName != "func.func" || su.units[j].signature.empty())
        return std::nullopt; // Only functions have a faithful stub.
      job.prefix +=
          "func.func private @\"" + name + "\"" + su.units[j].signature + "\n";
    }
  }
  job.prefixLines = std::count(job.prefix.begin(), job.prefix.end(), '\n');
  job.map = sec;
  job.map.beginOffset = sec.beginOffset + u.begin;
  job.map.endOffset = sec.beginOffset + newEnd;
  Position at = file.lines.position(job.map.beginOffset);
  job.map.firstLine = at.line;
  job.map.firstColumn = at.column;
  bool othersFailed = false;
  for (size_t j = 0; j < su.units.size(); ++j)
    othersFailed |= j != k && su.units[j].failed;
  // The module's symbol checks run only when every unit verifies.
  job.moduleChecks = !othersFailed && !u.failed;

  SectionResult fresh;
  std::optional<std::string> crash = runContained([&] {
    analyzeSectionUnguarded(file, path, sec, config, fresh, nullptr, &job);
  });
  if (crash) {
    abandonRetired();
    (void)context.release();
    context = makeContext();
    return std::nullopt; // The full analysis reports (and contains) it.
  }
  size_t lastChar = unitText.find_last_not_of(" \t\r\n");
  if (job.parseFailed && lastChar != std::string_view::npos)
    return unitParseError(
        sec, std::move(fresh.diagnostics),
        oldText.substr(prefix, editEnd - prefix),
        newText.substr(prefix, newText.size() - suffix - prefix),
        job.map.firstLine,
        file.lines.position(job.map.beginOffset + lastChar).line);
  if (!job.ok || job.opName != u.opName || job.symbol != u.symbol ||
      job.signature != u.signature ||
      (!othersFailed && u.failed && !job.failed))
    return std::nullopt;

  // Merge: the unit's new items replace its old ones; what follows it moves
  // down by the lines the edit added.
  int lineDelta =
      static_cast<int>(std::count(unitText.begin(), unitText.end(), '\n')) -
      static_cast<int>(
          std::count(oldText.begin() + u.begin, oldText.begin() + u.end, '\n'));
  unsigned first = u.firstLine, last = u.lastLine;
  auto inUnit = [&](const Position &p) {
    return p.valid() && p.line >= first && p.line <= last;
  };
  auto shiftPos = [&](Position &p) {
    if (p.valid() && p.line > last)
      p.line += lineDelta;
  };
  auto shift = [&](Range &r) {
    shiftPos(r.begin);
    shiftPos(r.end);
  };
  auto shiftAll = [&](std::vector<Range> &rs) {
    for (Range &r : rs)
      shift(r);
  };
  PhaseTimer mergeTimer("incremental merge");
  SectionResult r;
  // Filled in place of a retired version's (no fresh pages to fault in).
  r.diagnostics = recycler->take(recycler->diagnostics);
  r.opSpans = recycler->take(recycler->opSpans);
  r.section = sec;
  r.section.parsed = true;
  r.section.incremental = true;

  // The previous version's items are read where they are (shared with the
  // server's snapshot) and what is kept is copied once, straight into its
  // place: copying the section out first and moving it again cost
  // ~300 ms at 200k lines. Old items keep their order; the unit's new ones
  // go where its old ones were.
  struct Plan {
    std::vector<int> at; // new index of each old item, -1 if dropped
    size_t base = 0;     // where the new items start
    size_t kept = 0;
  };
  auto plan = [&](auto oldItems, auto anchor, auto select) {
    Plan p;
    p.at.assign(oldItems.size(), -1);
    size_t i = 0;
    for (; i < oldItems.size(); ++i) {
      if (!select(oldItems[i]))
        continue;
      Position pos = anchor(oldItems[i]);
      if (pos.valid() && pos.line >= first)
        break;
      p.at[i] = p.kept++;
    }
    p.base = p.kept;
    for (; i < oldItems.size(); ++i)
      if (select(oldItems[i]) && !inUnit(anchor(oldItems[i])))
        p.at[i] = p.kept++;
    return p;
  };
  auto copyPlanned = [&](auto oldItems, const Plan &p, auto &newItems,
                         auto &out, auto adjust, auto shiftItem) {
    out.reserve(out.size() + p.kept + newItems.size());
    size_t start = out.size();
    auto putNew = [&] {
      for (auto &item : newItems)
        out.push_back(std::move(item));
    };
    bool newPut = false;
    for (size_t i = 0; i < oldItems.size(); ++i) {
      if (p.at[i] < 0)
        continue;
      if (!newPut && static_cast<size_t>(p.at[i]) >= p.base) {
        putNew();
        newPut = true;
      }
      out.push_back(oldItems[i]);
      adjust(out.back());
      if (lineDelta) // Lines above the unit never move: shift is a no-op.
        shiftItem(out.back());
    }
    if (!newPut)
      putNew();
    return start + p.base;
  };
  auto all = [](const auto &) { return true; };
  auto none = [](auto &) {};
  auto slice = [](const auto &items, const size_t (&at)[2]) {
    return llvm::ArrayRef(items).slice(at[0], at[1] - at[0]);
  };
  auto runsSlice = [](const auto &items, const size_t (&at)[2]) {
    return items.slice(at[0], at[1]); // [from, to), not a length
  };

  // Values name the op that defines them by index: plan the ops first.
  auto oldOps = runsSlice(previous.ops, old.slice.ops);
  Plan opPlan =
      plan(oldOps, [](const OpReport &o) { return o.range.begin; }, all);
  size_t opBase = opPlan.base, addedOps = fresh.ops.size();
  for (ValueInfo &v : fresh.values)
    if (v.opReport >= 0)
      v.opReport += opBase;
  for (OpReport &o : fresh.ops)
    o.section = sec.index;
  auto oldValues = runsSlice(previous.values, old.slice.values);
  Plan valuePlan =
      plan(oldValues, [](const ValueInfo &v) { return v.def.begin; }, all);
  auto shiftItem = [&](auto &item) { forEachRange(item, shift); };

  // With no line moved and as many ops in the unit as before, every other
  // op and value of the section is as it was, indices included: the new
  // version shares them (ItemRuns) and copies nothing but the unit's. A
  // store keeps the unit's old items too, so a section of many runs (many
  // functions edited since it was last copied whole) is copied again.
  constexpr size_t kMaxSharedRuns = 64;
  size_t droppedOps = oldOps.size() - opPlan.kept;
  bool opsInOneBlock = true; // so that the ops after keep their index
  for (size_t i = 0; i < opPlan.at.size(); ++i)
    opsInOneBlock &= (opPlan.at[i] < 0) ==
                     (i >= opPlan.base && i < opPlan.base + droppedOps);
  bool share = lineDelta == 0 && droppedOps == addedOps && opsInOneBlock &&
               oldOps.runCount() + 2 <= kMaxSharedRuns &&
               oldValues.runCount() + 4 <= kMaxSharedRuns;
  // The kept items in their order, as runs of the old ones; the new ones
  // where the plan puts them (a section's values are its op results, then
  // its block arguments: the unit's are two blocks).
  auto shareAround = [&](auto &runs, const auto &oldItems, const Plan &p,
                         auto &newItems) {
    bool newPut = false;
    size_t i = 0;
    while (i < oldItems.size()) {
      if (p.at[i] < 0) {
        ++i;
        continue;
      }
      if (!newPut && static_cast<size_t>(p.at[i]) >= p.base) {
        runs.append(std::move(newItems));
        newPut = true;
      }
      size_t j = i + 1;
      while (j < oldItems.size() && p.at[j] == p.at[j - 1] + 1 &&
             static_cast<size_t>(p.at[j]) != p.base)
        ++j;
      runs.appendShared(oldItems, i, j);
      i = j;
    }
    if (!newPut)
      runs.append(std::move(newItems));
  };
  if (share) {
    shareAround(r.opRuns, oldOps, opPlan, fresh.ops);
    shareAround(r.valueRuns, oldValues, valuePlan, fresh.values);
  } else {
    r.ops = recycler->take(recycler->ops);
    r.values = recycler->take(recycler->values);
  }

  // The two biggest copies (ops, values) run on two threads.
  TaskThread::Running other = helperThread.beside([&] {
    if (!share)
      copyPlanned(oldOps, opPlan, fresh.ops, r.ops, none, shiftItem);
    // Diagnostics: MLIR's (by unit) before broadcast findings (by unit),
    // as a full analysis orders them.
    auto oldDiags = slice(previous.diagnostics, old.slice.diagnostics);
    auto anchor = [](const Diagnostic &d) { return d.range.begin; };
    for (bool findings : {false, true}) {
      auto select = [&](const Diagnostic &d) {
        return (d.source == DiagSource::Broadcast) == findings;
      };
      std::vector<Diagnostic> added;
      for (Diagnostic &d : fresh.diagnostics)
        if (select(d))
          added.push_back(std::move(d));
      copyPlanned(oldDiags, plan(oldDiags, anchor, select), added,
                  r.diagnostics, none, shiftItem);
    }
  });
  if (!share)
    copyPlanned(
        oldValues, valuePlan, fresh.values, r.values,
        [&](ValueInfo &v) {
          if (v.opReport < 0)
            return;
          int at = opPlan.at[v.opReport];
          v.opReport = at < 0 || static_cast<size_t>(at) < opBase
                           ? at
                           : at + static_cast<int>(addedOps);
        },
        shiftItem);
  // Every old item a candidate, nothing to adjust but lines.
  auto mergeAll = [&](auto oldItems, auto &newItems, auto anchor, auto &out,
                      auto shiftOld) {
    copyPlanned(oldItems, plan(oldItems, anchor, all), newItems, out, none,
                shiftOld);
  };
  mergeAll(
      slice(previous.blocks, old.slice.blocks), fresh.blocks,
      [](const BlockInfo &b) { return b.def.begin; }, r.blocks, shiftItem);
  mergeAll(
      slice(previous.opSpans, old.slice.opSpans), fresh.opSpans,
      [](const OpSpan &o) { return o.nameRange.begin; }, r.opSpans, shiftItem);
  // Symbols (few): uses cross units. Old uses inside the unit give way to
  // the new ones (the unit's own symbol's, or those recorded on the stubs).
  std::vector<SymbolInfo> prevSymbols(
      previous.symbols.begin() + old.slice.symbols[0],
      previous.symbols.begin() + old.slice.symbols[1]);
  std::map<std::string, std::vector<Range>> outsideUses;
  for (SymbolInfo &sym : prevSymbols) {
    llvm::erase_if(sym.uses, [&](const Range &x) { return inUnit(x.begin); });
    shiftAll(sym.uses);
    if (inUnit(sym.nameRange.begin))
      outsideUses[sym.name] = sym.uses;
  }
  for (SymbolInfo &sym : fresh.symbols) {
    auto it = outsideUses.find(sym.name);
    if (it != outsideUses.end())
      sym.uses.insert(sym.uses.end(), it->second.begin(), it->second.end());
  }
  for (SymbolInfo &sym : prevSymbols) {
    if (inUnit(sym.nameRange.begin))
      continue;
    auto it = job.stubUses.find(sym.name);
    if (it != job.stubUses.end())
      sym.uses.insert(sym.uses.end(), it->second.begin(), it->second.end());
  }
  mergeAll(
      llvm::ArrayRef(prevSymbols), fresh.symbols,
      [](const SymbolInfo &x) { return x.nameRange.begin; }, r.symbols,
      [&](SymbolInfo &x) { // Not forEachRange: the uses are moved above.
        shift(x.nameRange);
        shift(x.scope);
      });
  for (SymbolInfo &sym : r.symbols)
    std::sort(sym.uses.begin(), sym.uses.end(),
              [](const Range &a, const Range &b) {
                return std::make_pair(a.begin.line, a.begin.column) <
                       std::make_pair(b.begin.line, b.begin.column);
              });
  other.join();
  for (Diagnostic &d : r.diagnostics)
    d.section = sec.index;
  for (OpReport &o : r.ops)
    o.section = sec.index;
  auto units = std::make_shared<SectionUnits>(su);
  Unit &nu = units->units[k];
  nu.end = newEnd;
  nu.lastLine = last + lineDelta;
  nu.failed = job.failed;
  for (size_t j = k + 1; j < units->units.size(); ++j) {
    units->units[j].begin += delta;
    units->units[j].end += delta;
    units->units[j].firstLine += lineDelta;
    units->units[j].lastLine += lineDelta;
  }
  newUnits = std::move(units);
  return r;
}

std::optional<SectionResult>
Analyzer::Impl::analyzeInParts(const FileText &file, const std::string &path,
                               const Section &sec, const Config &config,
                               SectionUnits *units) {
  size_t size = sec.endOffset - sec.beginOffset;
  if (lenientLoaded || size < 2 * parallelSectionBytes || size < 2)
    return std::nullopt;
  std::vector<size_t> cuts =
      splitPoints(std::string_view(file.text).substr(sec.beginOffset, size),
                  parallelSectionBytes / 2);
  if (cuts.empty())
    return std::nullopt;
  std::vector<Section> parts;
  Section rest = sec;
  for (size_t cut : cuts) {
    auto [part, after] =
        cutSection(file, rest, sec.beginOffset + cut - rest.beginOffset);
    parts.push_back(part);
    rest = after;
  }
  parts.push_back(rest);
  size_t k = parts.size();
  // The first part's vectors are reserved for every part's items, which
  // the merge then moves in instead of moving all into fresh buffers.
  double capacityFirst =
      1.05 * double(size) / double(parts[0].endOffset - parts[0].beginOffset);

  // Both threads take the next part until none is left (inTurn).
  std::vector<SectionResult> results(k);
  std::vector<SectionUnits> partUnits(k);
  std::vector<char> done(k, 0);
  if (!inTurn(
          k,
          [&](size_t i, MLIRContext *ctx) {
            analyzeSectionUnguarded(file, path, sec, config, results[i],
                                    units ? &partUnits[i] : nullptr, nullptr,
                                    &parts[i], ctx, nullptr,
                                    i == 0 ? capacityFirst : 1.0);
          },
          done, "analysis in parts"))
    return std::nullopt;
  for (const SectionResult &part : results)
    if (!part.section.parsed)
      return std::nullopt;
  PhaseTimer tmerge("merge of the parts");

  // As the whole section would have it: MLIR's diagnostics of every part,
  // then the findings of every part; ops, values and the rest in file
  // order (after the first part's, in the vectors it reserved for all).
  std::vector<Diagnostic> diagnostics;
  size_t count = 0;
  for (const SectionResult &part : results)
    count += part.diagnostics.size();
  diagnostics.reserve(count);
  for (SectionResult &part : results)
    for (Diagnostic &d : part.diagnostics)
      if (d.source != DiagSource::Broadcast)
        diagnostics.push_back(std::move(d));
  // Each part counted its own errors towards kErrorsWithOpNote: past the
  // section's first ones, the whole section would not have the note.
  unsigned errors = 0;
  for (Diagnostic &d : diagnostics)
    if (d.severity == Severity::Error && ++errors > kErrorsWithOpNote)
      llvm::erase_if(d.notes, [](const DiagNote &n) {
        return llvm::StringRef(n.message).starts_with(kOpNotePrefix);
      });
  for (SectionResult &part : results)
    for (Diagnostic &d : part.diagnostics)
      if (d.source == DiagSource::Broadcast)
        diagnostics.push_back(std::move(d));
  SectionResult &r = results[0];
  for (size_t i = 1; i < k; ++i)
    appendPart(r, results[i]);
  r.diagnostics = std::move(diagnostics);
  r.section.inParts = true;
  if (units) {
    *units = SectionUnits();
    if (llvm::all_of(partUnits,
                     [](const SectionUnits &u) { return !u.units.empty(); })) {
      for (size_t i = 0; i < k; ++i) {
        size_t offset = parts[i].beginOffset - sec.beginOffset;
        for (Unit &u : partUnits[i].units) {
          u.begin += offset;
          u.end += offset;
          units->units.push_back(std::move(u));
        }
        units->moduleFailed |= partUnits[i].moduleFailed;
      }
    }
  }
  return std::move(r);
}

bool Analyzer::Impl::inTurn(
    size_t k, llvm::function_ref<void(size_t, MLIRContext *)> item,
    std::vector<char> &done, const char *phase) {
  std::atomic<size_t> next{0};
  std::atomic<bool> stop{false};
  bool crashedHere = false, crashedBeside = false;
  auto work = [&](MLIRContext *ctx, bool &crashed) {
    for (size_t i; !stop && (i = next.fetch_add(1)) < k;) {
      if (runContained([&] { item(i, ctx); })) {
        crashed = true; // this context is not used again (abandonParts)
        stop = true;
      } else {
        done[i] = 1;
      }
    }
  };
  {
    PhaseTimer t(phase);
    TaskThread::Running other = helperThread.beside([&] {
      if (!partContext) // made here, beside the first items
        partContext = makeContext();
      work(partContext.get(), crashedBeside);
    });
    work(context.get(), crashedHere);
    other.join();
  }
  if (!crashedHere && !crashedBeside)
    return true;
  abandonParts(crashedHere, crashedBeside);
  return false;
}

void Analyzer::Impl::analyzeSmallSections(
    const FileText &file, const std::string &path, const Config &config,
    llvm::ArrayRef<Section> secs, llvm::ArrayRef<SectionResult *> results,
    llvm::ArrayRef<SectionUnits *> units) {
  size_t k = secs.size(), bytes = 0;
  for (const Section &sec : secs)
    bytes += sec.endOffset - sec.beginOffset;
  std::vector<char> done(k, 0);
  // Whole sections on either thread: verified on it (below
  // parallelSectionBytes, no verifier beside) and retired like any whole
  // section's parse.
  if (k >= 2 && bytes >= parallelSectionBytes) {
    retireSections = false;
    bool ok = inTurn(
        k,
        [&](size_t i, MLIRContext *ctx) {
          analyzeSectionUnguarded(file, path, secs[i], config, *results[i],
                                  units[i], nullptr, nullptr, ctx);
        },
        done, "small sections on two threads");
    retireSections = true;
    // Nothing lives in the helper's context now: it goes, with what its
    // heap holds, beside the rest of this analysis (the second heap and
    // context were ~1 MiB of a 10k-line split file's peak, at the
    // publish). An edit of such a file analyses one section, here.
    if (ok)
      helperThread.run([&] {
        partContext.reset();
        releaseFreeMemory();
      });
  }
  // The rest (all of them, unless two threads ran them; after a crash the
  // sections it left): analyzeSection reports a crash on its section.
  for (size_t i = 0; i < k; ++i) {
    if (done[i])
      continue;
    if (units[i])
      *units[i] = SectionUnits();
    *results[i] = analyzeSection(file, path, secs[i], config, units[i]);
  }
}

void Analyzer::Impl::abandonParts(bool crashedHere, bool crashedBeside) {
  // Abandoned with their contexts (see analyzeSection); the whole-section
  // analysis that follows reports the crash. The part that did not crash
  // is abandoned too (its IR lives in partContext).
  abandonRetired();
  if (crashedHere) {
    (void)context.release();
    context = makeContext();
  }
  if (crashedBeside)
    (void)partContext.release();
  partContext.reset();
}

namespace {

bool samePosition(Position x, Position y) {
  return x.line == y.line && x.column == y.column;
}

/// The two parts of a cut function as the whole section would have them
/// (see analyzeFunctionInParts); std::nullopt where they could differ.
std::optional<SectionResult>
mergeFunctionParts(SectionResult &a, SectionResult &b, const LineIndex &lines,
                   const Section &sec, const detail::FunctionCut &fc,
                   const std::vector<detail::CrossCutValue> &crossing,
                   const PartText &first, const PartText &second) {
  // Each part is one function of one block (the cut is in the body of the
  // only function, and in its entry block), and each value declared for
  // the second part is a result of an op of that block.
  if (!first.oneBlock || !second.oneBlock)
    return std::nullopt;
  for (const detail::CrossCutValue &c : crossing)
    if (!std::binary_search(first.topLevelDefs.begin(),
                            first.topLevelDefs.end(), c.def))
      return std::nullopt;
  Position body = lines.position(sec.beginOffset + fc.bodyOpen);
  auto mentionsCut = [](const std::string &m) {
    return m.find(detail::kCutTerminator) != std::string::npos;
  };
  // MLIR's diagnostics: the second part's would name values by their
  // number in the part, and the first part's on the function or the module
  // (before the body) see the stand-in terminator.
  for (const Diagnostic &d : b.diagnostics)
    if (d.source != DiagSource::Broadcast)
      return std::nullopt;
  for (const Diagnostic &d : a.diagnostics) {
    if (d.source == DiagSource::Broadcast)
      continue;
    if (!d.range.begin.valid() || before(d.range.begin, body) ||
        mentionsCut(d.message) || llvm::any_of(d.notes, [&](const DiagNote &n) {
          return mentionsCut(n.message);
        }))
      return std::nullopt;
  }
  for (const SectionResult *part : {&a, &b})
    for (const OpReport &op : part->ops)
      if (!op.range.begin.valid())
        return std::nullopt;

  // The second part's arguments are the function's and the first part's
  // values: their uses go to those, where the types agree.
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
      return std::nullopt;
    ValueInfo &to = a.values[it->second];
    if (to.type != v.type)
      return std::nullopt;
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

  // The function (and its module) end in the second part.
  for (SymbolInfo &s : a.symbols) {
    if (!s.nameRange.begin.valid() || s.scope.end.valid())
      continue;
    auto it = llvm::find_if(b.symbols, [&](const SymbolInfo &o) {
      return o.name == s.name && !o.nameRange.begin.valid();
    });
    if (it == b.symbols.end() || !it->scope.end.valid())
      return std::nullopt;
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
      return std::nullopt;
    open[k++]->scope.end = o.scope.end;
  }
  if (k != open.size())
    return std::nullopt;
  for (SectionResult *part : {&a, &b})
    llvm::erase_if(part->opSpans,
                   [](const OpSpan &o) { return !o.nameRange.begin.valid(); });

  // As the whole section would have them: MLIR's diagnostics (the first
  // part's), then the findings of both.
  appendMoved(a.diagnostics, b.diagnostics);
  appendPart(a, b);
  a.section.inParts = true;
  return std::move(a);
}

} // namespace

std::optional<SectionResult> Analyzer::Impl::analyzeFunctionInParts(
    const FileText &file, const std::string &path, const Section &sec,
    const Config &config, SectionUnits *units) {
  size_t size = sec.endOffset - sec.beginOffset;
  if (lenientLoaded || size < 2 * parallelSectionBytes || size < 2)
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
      crashB = runContained([&] {
        analyzeSectionUnguarded(file, path, sec, config, b, nullptr, nullptr,
                                &second, partContext.get(), &aroundB);
      });
    });
    crashA = runContained([&] {
      analyzeSectionUnguarded(file, path, sec, config, a, nullptr, nullptr,
                              &first, context.get(), &aroundA, capacityA);
    });
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

namespace {

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
    if (!fc || !d.range.begin.valid() || !before(open, d.range.begin) ||
        !before(d.range.begin, at))
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
  // The function was one block when it was cut last, and the text is.
  aroundA.oneBlock = true;
  aroundA.topLevelDefs.assign(defs.begin(),
                              std::lower_bound(defs.begin(), defs.end(), cut));
  SectionResult b;
  std::optional<std::string> crash;
  {
    PhaseTimer t("analysis of a function's tail");
    crash = runContained([&] {
      analyzeSectionUnguarded(file, path, sec, config, b, nullptr, nullptr,
                              &second, context.get(), &aroundB);
    });
  }
  if (crash) {
    abandonParts(/*crashedHere=*/true, /*crashedBeside=*/false);
    return std::nullopt;
  }
  errorsInTail =
      !b.section.parsed || llvm::any_of(b.diagnostics, [](const Diagnostic &d) {
        return d.source != DiagSource::Broadcast;
      });
  if (errorsInTail)
    return std::nullopt;
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
  if (!r)
    return std::nullopt;
  r->section.tail = true;
  if (units)
    rememberCut(*units, aroundA, aroundB);
  return r;
}

SectionResult Analyzer::Impl::analyzeSection(const FileText &file,
                                             const std::string &path,
                                             Section sec, const Config &config,
                                             SectionUnits *units,
                                             bool cutFunction) {
  if (std::optional<SectionResult> parts =
          analyzeInParts(file, path, sec, config, units))
    return std::move(*parts);
  if (std::optional<SectionResult> parts =
          cutFunction ? analyzeFunctionInParts(file, path, sec, config, units)
                      : std::nullopt)
    return std::move(*parts);
  SectionResult result;
  std::optional<std::string> crash = runContained([&] {
    analyzeSectionUnguarded(file, path, sec, config, result, units, nullptr);
  });
  if (!crash && deferredCrash)
    crash = std::move(deferredCrash);
  deferredCrash.reset();
  if (!crash)
    return result;
  if (units)
    units->units.clear();
  // The context may be half-updated (locks, uniquer tables): abandon it, and
  // everything the section had built in it, rather than destroy it.
  abandonRetired();
  (void)context.release();
  context = makeContext();
  SectionResult failed;
  failed.diagnostics = std::move(result.diagnostics); // Reported before.
  sec.parsed = false;
  failed.section = sec;
  Diagnostic d;
  d.source = DiagSource::Parser;
  d.range.begin = file.lines.position(sec.beginOffset);
  d.range.end = d.range.begin;
  d.message = "MLIR crashed while analysing this section (" + *crash +
              "); its diagnostics may be incomplete and it has no hover or "
              "hints. Please report the input.";
  d.code = "internal-crash";
  d.section = sec.index;
  failed.diagnostics.push_back(std::move(d));
  return failed;
}

void Analyzer::Impl::analyzeSectionUnguarded(
    const FileText &file, const std::string &path, Section sec,
    const Config &config, SectionResult &result, SectionUnits *units,
    UnitJob *job, const Section *part, MLIRContext *partCtx, PartText *around,
    double capacityFactor) {
  const std::string &text = file.text;
  const LineIndex &lines = file.lines;
  MLIRContext &ctx = partCtx ? *partCtx : *context;
  {
    auto owned = std::make_unique<detail::ParsedSection>();
    detail::ParsedSection &ps = *owned;
    // A whole section's parse outlives this call (destroyRetiredIR). A
    // unit's is small, and the parts of a section are destroyed each on
    // its thread at once (two halves kept raised a 200k-line open's peak
    // by ~50 MiB for little time).
    llvm::scope_exit retire([&] {
      if (job || part || !owned || !deferIRDestruction || !retireSections)
        return;
      std::lock_guard<std::mutex> lock(retiredMu);
      retired.push_back(std::move(owned));
    });
    ps.section = job ? job->map : part ? *part : sec;
    std::string_view body = std::string_view(text).substr(
        ps.section.beginOffset, ps.section.endOffset - ps.section.beginOffset);
    if (job || around) {
      // Text that is not in the file around the part's: the prefix (and a
      // suffix) in one buffer with it.
      std::string_view prefix = job ? job->prefix : around->prefix;
      std::string_view suffix = around ? around->suffix : std::string_view();
      ps.prefixLen = prefix.size();
      ps.prefixLines = job ? job->prefixLines : around->prefixLines;
      if (!suffix.empty())
        ps.suffixLine =
            ps.prefixLines + ps.section.lastLine - ps.section.firstLine + 1;
      std::unique_ptr<llvm::WritableMemoryBuffer> buf =
          llvm::WritableMemoryBuffer::getNewUninitMemBuffer(
              prefix.size() + body.size() + suffix.size(), path);
      char *out = buf->getBufferStart();
      for (std::string_view piece : {prefix, body, suffix}) {
        if (piece.empty())
          continue; // its data() may be null: memcpy's is not allowed to be
        std::memcpy(out, piece.data(), piece.size());
        out += piece.size();
      }
      ps.sourceMgr.AddNewSourceBuffer(std::move(buf), llvm::SMLoc());
    } else {
      ps.sourceMgr.AddNewSourceBuffer(detail::parserBuffer(body, text, path),
                                      llvm::SMLoc());
    }
    ps.lines = &lines;
    // The first of two parts reserves its result vectors for both: the
    // merge then moves the second's items in (sizing them there copied
    // ~80 MB at 200k lines).
    ps.capacityFactor = capacityFactor;
    ps.bufferStart = ps.sourceMgr.getMemoryBuffer(ps.sourceMgr.getMainFileID())
                         ->getBufferStart();

    DiagSource source = DiagSource::Parser;
    Operation *currentOp = nullptr;
    std::vector<Diagnostic> &sectionDiags = result.diagnostics;
    auto toRange = [&](Location loc) -> Range {
      auto f = fileLocOf(loc);
      if (f && f->getFilename() == path && f->getLine() != 0) {
        Position b = ps.toFilePosition(f->getLine(), f->getColumn());
        Position e = b;
        if (auto off = lines.offset(b))
          e = lines.position(tokenEnd(text, *off));
        return {b, e};
      }
      // A location elsewhere (loc("model.py":3:1), unknown): point at the op
      // being verified so the diagnostic still lands in this file.
      if (currentOp)
        return ps.opRange(currentOp);
      return {};
    };
    // See kErrorsWithOpNote.
    unsigned errorsSeen = 0;
    ctx.printOpOnDiagnostic(true);
    llvm::scope_exit restoreNotes([&] { ctx.printOpOnDiagnostic(true); });
    ScopedDiagnosticHandler handler(&ctx, [&](mlir::Diagnostic &diag) {
      if (diag.getSeverity() == DiagnosticSeverity::Error &&
          ++errorsSeen == kErrorsWithOpNote)
        ctx.printOpOnDiagnostic(false);
      Diagnostic d;
      d.severity = toSeverity(diag.getSeverity());
      d.source = source;
      d.range = toRange(diag.getLocation());
      d.message = capped(diag.str());
      d.code = source == DiagSource::Parser ? "parse-error" : "verifier-error";
      if (d.severity != Severity::Error)
        d.code = source == DiagSource::Parser ? "parser-message"
                                              : "verifier-message";
      d.section = sec.index;
      for (mlir::Diagnostic &note : diag.getNotes())
        d.notes.push_back({toRange(note.getLocation()), capped(note.str())});
      if (std::optional<std::string> advice =
              removedTosaOpAdvice(d.message.str()))
        d.notes.push_back({d.range, *advice});
      sectionDiags.push_back(std::move(d));
      return success();
    });

    if (auto deep = findExcessiveNesting(body, kMaxNesting)) {
      if (job)
        return; // Not ok: the full analysis reports it.
      Diagnostic d;
      d.source = DiagSource::Parser;
      d.range.begin = lines.position(sec.beginOffset + *deep);
      d.range.end = lines.position(sec.beginOffset + *deep + 1);
      d.message = "nesting deeper than " + std::to_string(kMaxNesting) +
                  " levels (brackets or unary minus signs); not parsed (the "
                  "MLIR parser would overflow its stack)";
      d.code = "nesting-too-deep";
      d.section = sec.index;
      sectionDiags.push_back(std::move(d));
      sec.parsed = false;
      result.section = sec;
      return;
    }

    Block block;
    ParserConfig parserConfig(&ctx, /*verifyAfterParse=*/false);
    {
      PhaseTimer t("parse");
      parsedSinceFresh += (part ? part->endOffset - part->beginOffset
                                : sec.endOffset - sec.beginOffset);
      size_t diagsBefore = sectionDiags.size();
      sec.parsed = succeeded(
          parseAsmSourceFile(ps.sourceMgr, &block, parserConfig, &ps.state));
      // Custom syntax of a dialect MLIR 22 lacks: load a lenient dialect for
      // it (Lenient.h) and parse again, once per namespace.
      for (unsigned tries = 0; !sec.parsed && tries < 16; ++tries) {
        std::optional<std::string> ns;
        for (size_t i = diagsBefore; i < sectionDiags.size() && !ns; ++i)
          ns = detail::missingDialect(sectionDiags[i].message.str());
        if (part || !ns || !config.lenient.allows(*ns) ||
            ctx.getLoadedDialect(*ns))
          break;
        detail::loadLenientDialect(ctx, *ns);
        lenientLoaded = true;
        sectionDiags.resize(diagsBefore);
        block.clear();
        ps.state = AsmParserState();
        sec.parsed = succeeded(
            parseAsmSourceFile(ps.sourceMgr, &block, parserConfig, &ps.state));
      }
      // Lenient parsing is off (check without --lenient, or a namespace
      // not listed): say that it exists.
      if (!sec.parsed && !part)
        for (size_t i = diagsBefore; i < sectionDiags.size(); ++i) {
          std::optional<std::string> ns =
              detail::missingDialect(sectionDiags[i].message.str());
          if (!ns || ctx.getLoadedDialect(*ns))
            continue;
          sectionDiags[i].notes.push_back(
              {sectionDiags[i].range,
               "to parse the custom syntax of ops of dialects MLIR 22 does "
               "not have as unregistered ops, use `--lenient` (check, "
               "explain) or list `" +
                   *ns + "` in `lenientDialects` (.tosa-lsp.json)"});
          break;
        }
    }
    if (sec.parsed && lenientLoaded)
      block.walk([&](Operation *op) {
        if (!detail::isLenientDialect(op->getDialect()))
          return;
        Diagnostic d;
        d.severity = Severity::Info;
        d.source = DiagSource::Parser;
        d.range = ps.opRange(op);
        d.message = "parsed leniently (dialect `" +
                    op->getDialect()->getNamespace().str() +
                    "` not registered)";
        d.code = "lenient-parse";
        d.section = sec.index;
        sectionDiags.push_back(std::move(d));
      });
    if (job && !sec.parsed) {
      // A parse error: the caller decides whether it is the section's.
      job->parseFailed = true;
      for (Diagnostic &d : sectionDiags)
        d.section = sec.index;
      return;
    }
    Operation *unitOp = nullptr;
    if (job) {
      // Exactly one op after the prefix, isolated from above, like before.
      for (Operation &op : block)
        if (const auto *def = ps.state.getOpDef(&op))
          if (def->scopeLoc.Start.getPointer() >=
              ps.bufferStart + ps.prefixLen) {
            if (unitOp)
              return;
            unitOp = &op;
          }
      if (!unitOp || !unitOp->hasTrait<OpTrait::IsIsolatedFromAbove>())
        return;
    }
    if (sec.parsed) {
      // Like mlir-opt: a lone top-level module is the root, anything else is
      // wrapped in an implicit one.
      if (!job && (!part || around) && llvm::hasSingleElement(block) &&
          isa<ModuleOp>(block.front())) {
        Operation *m = &block.front();
        m->remove();
        ps.module = OwningOpRef<ModuleOp>(cast<ModuleOp>(m));
      } else {
        OpBuilder b(&ctx);
        ps.module = OwningOpRef<ModuleOp>(
            ModuleOp::create(b, FileLineColLoc::get(&ctx, path, 0, 0)));
        ps.module->getBody()->getOperations().splice(
            ps.module->getBody()->begin(), block.getOperations());
        ps.implicitModule = true;
      }
      if (around) {
        // What the text cannot tell (FunctionSplit.h): the part is one
        // function of one block, and which ops are directly in it.
        Block &top = *ps.module->getBody();
        Operation *fn = llvm::hasSingleElement(top) ? &top.front() : nullptr;
        around->oneBlock = fn && fn->getName().getStringRef() == "func.func" &&
                           fn->getNumRegions() == 1 &&
                           fn->getRegion(0).hasOneBlock();
        if (around->oneBlock)
          for (Operation &op : fn->getRegion(0).front())
            if (const auto *def = ps.state.getOpDef(&op);
                def && !def->resultGroups.empty())
              around->topLevelDefs.push_back(
                  ps.section.beginOffset - sec.beginOffset +
                  (def->resultGroups[0].definition.loc.Start.getPointer() -
                   ps.bufferStart - ps.prefixLen));
      }
      source = DiagSource::Verifier;
      llvm::DenseSet<Operation *> failedOps, visitedOps;
      bool verified = false;
      auto verify = [&] {
        PhaseTimer t("verify");
        verified = detail::verifyAll(
            unitOp ? unitOp : ps.module->getOperation(),
            [&](Operation *op) { currentOp = op; }, failedOps, visitedOps);
        currentOp = nullptr;
      };
      llvm::DenseMap<Operation *, unsigned> reportOf;
      // Errors of ops MLIR cannot verify (detail::MalformedOp), as a
      // verifier's; taken while their ops are alive.
      std::vector<detail::MalformedOp> malformed;
      auto reportMalformed = [&] {
        for (const detail::MalformedOp &m : malformed) {
          Diagnostic d;
          d.source = DiagSource::Verifier;
          d.range = ps.opRange(m.op);
          d.message = m.message;
          d.code = "verifier-error";
          d.section = sec.index;
          sectionDiags.push_back(std::move(d));
        }
      };
      SectionResult index;
      // While two threads use the context (below): destroyed after
      // bodiesGone is joined.
      std::optional<ConcurrentUse> concurrent;
      // Joined (destroyed) before `ps` goes, on any return from here on.
      std::optional<TaskThread::Running> bodiesGone;
      // Op reports and the index only read the IR: on a big section the
      // index is collected after verifying on a second thread while the op
      // reports and their decisions are computed here (two cores, one
      // result). Upstream verifiers are what can crash, so they get the
      // contained thread; a crash there loses the section as one here would.
      if (!job && !part && body.size() >= parallelSectionBytes) {
        std::optional<std::string> crashed;
        std::vector<Operation *> owners, spanOwners;
        concurrent.emplace(ctx);
        TaskThread::Running verifier = helperThread.beside([&] {
          crashed = runContained([&] {
            verify();
            if (!collectIndexes)
              return;
            PhaseTimer t("index (after verify, beside op reports)");
            // Not reportOf: this thread fills it meanwhile (a DenseMap
            // read during a rehash can probe forever). linkReports
            // joins them after.
            const llvm::DenseMap<Operation *, unsigned> none;
            detail::collectIndex(ps, none, index, &owners, &spanOwners);
          });
        });
        {
          PhaseTimer t("op reports (beside verify)");
          detail::collectOpReports(ps, config, result.ops, reportOf,
                                   &malformed);
        }
        verifier.join();
        if (crashed) {
          // Abandoned with the context (see analyzeSection).
          (void)ps.module.release();
          deferredCrash = std::move(crashed);
          return;
        }
        reportMalformed();
        detail::linkReports(owners, spanOwners, reportOf, index.values,
                            index.opSpans);
        // From here on only the top-level ops are read (collectUnits): the
        // helper destroys the function bodies meanwhile, instead of this
        // thread after (the bulk of the IR: ~25 ms at 50k lines). Not for
        // `check`, which leaves the IR to the exit.
        if (!deferIRDestruction)
          bodiesGone.emplace(helperThread.beside(
              [module = *ps.module] { destroyIsolatedBodies(module); }));
      } else {
        verify();
        {
          PhaseTimer t("op reports");
          detail::collectOpReports(ps, config, result.ops, reportOf,
                                   &malformed);
        }
        reportMalformed();
        if (collectIndexes) {
          PhaseTimer t("index");
          detail::collectIndex(ps, reportOf, index);
        }
      }
      detail::markVerified(failedOps, visitedOps, reportOf, result.ops);
      if (job) {
        job->failed = !verified;
        // What the full analysis would check once every function verifies:
        // symbol uses, against the stubs' signatures.
        if (job->moduleChecks && verified) {
          Operation *m = ps.module->getOperation();
          if (failed(
                  m->getName().getRegisteredInfo()->verifyRegionInvariants(m)))
            return;
        }
        job->opName = unitOp->getName().getStringRef().str();
        if (auto sym = unitOp->getAttrOfType<StringAttr>(
                SymbolTable::getSymbolAttrName()))
          job->symbol = sym.str();
        if (auto fn = dyn_cast<FunctionOpInterface>(unitOp))
          job->signature = ps.typeName(fn.getFunctionType());
      }
      result.values = std::move(index.values);
      result.blocks = std::move(index.blocks);
      result.symbols = std::move(index.symbols);
      result.opSpans = std::move(index.opSpans);
      std::optional<PhaseTimer> t;
      t.emplace("findings");
      // The ops are new (not shared with a published analysis): each one's
      // decisions are read once here, then only their inputs are kept.
      // Hints are common (one per op of a model with dynamic sizes): the
      // list grows once, not by doubling.
      sectionDiags.reserve(sectionDiags.size() + result.ops.size());
      FindingsMemo memo;
      for (const OpReport &op : result.ops) {
        appendFindings(op, config, sectionDiags, memo);
        op.forgetAnalyses();
      }
      if (units && !job)
        collectUnits(ps, failedOps, lines, ps.section, result, *units);
      if (job) {
        // Drop what belongs to the prefix; keep the stubs' uses (they are
        // uses in this unit of functions defined elsewhere).
        for (const Diagnostic &d : sectionDiags)
          if (!d.range.begin.valid() && d.severity == Severity::Error)
            return;
        llvm::erase_if(sectionDiags, [](const Diagnostic &d) {
          return !d.range.begin.valid();
        });
        for (const OpReport &op : result.ops)
          if (!op.range.begin.valid())
            return;
        for (SymbolInfo &sym : result.symbols)
          if (!sym.nameRange.begin.valid())
            job->stubUses[sym.name] = std::move(sym.uses);
        llvm::erase_if(result.symbols, [](const SymbolInfo &sym) {
          return !sym.nameRange.begin.valid();
        });
        llvm::erase_if(result.opSpans, [](const OpSpan &o) {
          return !o.nameRange.begin.valid();
        });
        llvm::erase_if(result.values,
                       [](const ValueInfo &v) { return !v.def.begin.valid(); });
        llvm::erase_if(result.blocks,
                       [](const BlockInfo &b) { return !b.def.begin.valid(); });
        for (const Diagnostic &d : sectionDiags)
          job->failed |= d.severity == Severity::Error &&
                         d.source != DiagSource::Broadcast;
        job->ok = true;
      }
    }
    if (!sec.parsed && llvm::none_of(sectionDiags, [](const Diagnostic &d) {
          return d.severity == Severity::Error;
        }))
      sectionDiags.push_back(silentParseFailure(ps, file, sec, &ctx));
    for (Diagnostic &d : sectionDiags)
      d.section = sec.index;
  }
  result.section = sec;
}

} // namespace tosa_lsp
