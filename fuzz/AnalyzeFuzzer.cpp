//===- AnalyzeFuzzer.cpp - bytes -> analyze -> editor features ------------===//
//
// The document pipeline as the server runs it, minus the protocol: analyse
// the input (twice, the second time after a one-byte edit, through the
// incremental cache), then ask hover, inlay hints, definition, references,
// the editing features (completion, signature help, highlight, rename,
// selection, folding, semantic tokens, formatting, generic forms, graphs),
// document symbols and code actions at positions taken from the result and
// from the input's last bytes; the migration plan, the bytecode round trip,
// the verdicts of the sections shuffled and alone (issue 44, item 1), and
// the shapes inferred on the IR an open's analysis keeps.
//
// MLIR 22's own parser and verifiers crash on some malformed input (e.g. a
// `linalg.broadcast` with `dimensions = ,`, which also kills mlir-opt-22).
// Those are upstream bugs that the server contains; they must not hide ours.
// So each input is first parsed and verified by plain MLIR (no code of ours)
// under the crash guard: if that crashes, the input is an upstream crash, is
// counted, and runs through our pipeline with crash recovery on (exercising
// the containment). Every other input runs with crash recovery off, so any
// crash in the analysis or the features is reported as one.
//
//===----------------------------------------------------------------------===//

#include "Aliases.h"
#include "Analysis.h"
#include "Bytecode.h"
#include "CodeActions.h"
#include "Completion.h"
#include "Config.h"
#include "CrashGuard.h"
#include "ExpectedChecks.h"
#include "Folding.h"
#include "Format.h"
#include "Graph.h"
#include "Highlight.h"
#include "Hover.h"
#include "InlayHints.h"
#include "LineIndex.h"
#include "Migrate.h"
#include "Navigation.h"
#include "OpCatalogue.h"
#include "OpGenericForm.h"
#include "Query.h"
#include "Rename.h"
#include "SelectionRanges.h"
#include "SemanticTokens.h"
#include "SignatureHelp.h"
#include "SourceLocations.h"

#include "mlir/AsmParser/AsmParser.h"
#include "mlir/AsmParser/AsmParserState.h"
#include "mlir/IR/AsmState.h"
#include "mlir/IR/Block.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/thread.h"

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

using namespace tosa_lsp;

namespace {

Analyzer *analyzer;
/// The server's open: shapes inferred after the analysis on the IR it kept.
Analyzer *keptAnalyzer;
const Config *config;
unsigned upstreamCrashes = 0;
/// Functions inferKept delivered, and early deliveries (a line asked for).
size_t keptInferred = 0, keptEarly = 0;
const char *upstreamDir = nullptr;

/// The analyzer's dialects, for the plain-MLIR pre-check.
std::unique_ptr<mlir::MLIRContext> makeContext() {
  mlir::DialectRegistry registry;
  mlir::registerAllDialects(registry);
  mlir::registerAllExtensions(registry);
  auto ctx = std::make_unique<mlir::MLIRContext>(
      registry, mlir::MLIRContext::Threading::DISABLED);
  ctx->allowUnregisteredDialects();
  return ctx;
}
std::unique_ptr<mlir::MLIRContext> plainContext;

/// Whether parsing and verifying `text` with MLIR alone, section by section
/// as the analyzer does, crashes.
bool crashesUpstream(const std::string &text) {
  bool crashed = false;
  // The analyzer's stack size: deep nesting must not overflow here first.
  llvm::thread worker(std::optional<unsigned>(256u << 20), [&] {
    for (const Section &sec : splitSections(text)) {
      std::string body =
          text.substr(sec.beginOffset, sec.endOffset - sec.beginOffset);
      if (findExcessiveNesting(body) ||
          findExcessiveResultNumber(body, body.size()) ||
          findExcessiveIntegerWidth(body, body.size(), text.size()))
        continue; // Refused by the analyzer; never parsed.
      mlir::MLIRContext &ctx = *plainContext;
      mlir::ScopedDiagnosticHandler quiet(
          &ctx, [](mlir::Diagnostic &) { return mlir::success(); });
      std::optional<std::string> crash = runContained([&] {
        llvm::SourceMgr sourceMgr;
        sourceMgr.AddNewSourceBuffer(llvm::MemoryBuffer::getMemBufferCopy(body),
                                     llvm::SMLoc());
        mlir::AsmParserState state;
        mlir::Block block;
        mlir::ParserConfig parserConfig(&ctx, /*verifyAfterParse=*/false);
        if (mlir::succeeded(mlir::parseAsmSourceFile(sourceMgr, &block,
                                                     parserConfig, &state)))
          for (mlir::Operation &op : block)
            (void)mlir::verify(&op);
      });
      if (crash) {
        // Half-updated: abandon it, as the analyzer does.
        (void)plainContext.release();
        plainContext = makeContext();
        crashed = true;
        return;
      }
    }
  });
  worker.join();
  return crashed;
}

void saveUpstreamCrash(const std::string &input) {
  ++upstreamCrashes;
  if (!upstreamDir || upstreamCrashes > 1000)
    return;
  std::string name = std::string(upstreamDir) + "/upstream-" +
                     std::to_string(std::hash<std::string>()(input));
  if (FILE *f = std::fopen(name.c_str(), "wb")) {
    std::fwrite(input.data(), 1, input.size(), f);
    std::fclose(f);
  }
}

/// What the editing features read beside the analysis.
struct Editing {
  const std::string &text;
  LineIndex lines;
  std::vector<AliasInfo> aliases;
  Editing(const std::string &text, const FileAnalysis &fa)
      : text(text), lines(text),
        aliases(scanAliases(text, lines, fa.sections)) {}
};

/// Everything a client may ask at `pos`.
void queryAt(const FileAnalysis &fa, const Editing &e, Position pos) {
  (void)hover(fa, pos);
  (void)definition(fa, pos);
  (void)references(fa, pos, /*includeDeclaration=*/true);
  (void)lookup(fa, pos);
  (void)enclosingOp(fa, pos);
  (void)fa.findOp(pos);
  (void)documentHighlights(fa, e.aliases, pos);
  (void)selectionRanges(fa, e.text, e.lines, pos);
  RenameInput in{fa, e.aliases, e.text, e.lines};
  (void)prepareRename(in, pos);
  RenameResult r = rename(in, pos, "renamed");
  if (r.error.empty())
    (void)applyEdits(e.text, r.edits);
  CompletionInput ci{e.text, e.lines, fa, e.aliases, completionCatalogue()};
  ci.snippets = pos.column % 2;
  ci.inferredType = [](unsigned) { return std::string("tensor<2xf32>"); };
  (void)complete(ci, pos, 64);
  (void)signatureHelp(e.text, e.lines, pos);
  NamedOp op = namedOpAt(fa, pos);
  if (op.name.begin.valid()) {
    (void)opGenericForm(e.text, e.lines, fa, e.aliases, op.scope, op.section);
    (void)opSourceLocations(e.text, e.lines, e.aliases, op.scope, op.section);
  }
  if (const SymbolInfo *fn = graphFunctionAt(fa, pos))
    (void)buildGraph(fa, *fn);
}

void exercise(const std::string &text, const FileAnalysis &fa,
              const uint8_t *data, size_t size) {
  // Positions from the input's last bytes reach anywhere, including past
  // the end of a line or of the file.
  unsigned numLines = 1;
  for (char c : text)
    numLines += c == '\n';
  std::vector<Position> positions;
  for (size_t i = 0; i + 1 < size && i < 8; i += 2)
    positions.push_back(
        {1u + data[size - 1 - i] % (numLines + 1), data[size - 2 - i]});
  positions.push_back({numLines + 1, 1});
  positions.push_back({1, 0});

  // And from the analysis: each op's name, result and result type, each
  // value's definition and first use (the first few of each, to stay fast).
  size_t n = 0;
  for (const OpReport &op : fa.ops) {
    if (n++ == 16)
      break;
    for (Range r :
         {op.range, op.resultNameRange, op.resultTypeRange, op.scope}) {
      positions.push_back(r.begin);
      positions.push_back(r.end);
    }
  }
  n = 0;
  for (const ValueInfo &v : fa.values) {
    if (n++ == 16)
      break;
    positions.push_back(v.def.begin);
    if (!v.uses.empty())
      positions.push_back(v.uses.front().end);
  }
  for (const BlockInfo &b : fa.blocks)
    positions.push_back(b.def.begin);
  for (const SymbolInfo &s : fa.symbols)
    positions.push_back(s.nameRange.begin);
  Editing editing(text, fa);
  for (Position p : positions)
    queryAt(fa, editing, p);
  // The whole-document editing features.
  (void)foldingRanges(text, editing.lines);
  (void)semanticTokens(fa, editing.aliases, text, editing.lines);
  FormatResult formatted = formatText(text, editing.lines, fa);
  if (formatted.error.empty())
    (void)applyEdits(text, formatted.edits);
  for (const Diagnostic &d : fa.diagnostics)
    (void)expectedChecks(d, text, editing.lines);

  Range all{{1, 1}, {numLines + 1, 1}};
  (void)inlayHints(fa, all, config->hints);
  Range part{positions[0], positions[1]};
  (void)inlayHints(fa, part, config->hints);
  (void)documentSymbols(fa);

  // Code actions: every candidate is built and applied; one (chosen by the
  // input) is validated, since validation re-analyses a section.
  std::vector<FixData> fixes = candidateFixes(fa, text);
  for (const FixData &fix : fixes)
    (void)applyEdits(text, fix.edits);
  if (!fixes.empty())
    (void)validateFix(*analyzer, fa, text, *config,
                      fixes[data[0] % fixes.size()]);
}

/// A section's diagnostics as they would read in a file of their own:
/// lines from the section's first, sorted.
std::vector<std::string> verdictOf(const FileAnalysis &fa, unsigned section) {
  std::vector<std::string> out;
  if (section >= fa.sections.size())
    return out;
  int delta = 1 - static_cast<int>(fa.sections[section].firstLine);
  for (Diagnostic d : fa.diagnostics) {
    if (d.section != section)
      continue;
    shiftLines(d, delta);
    out.push_back(std::to_string(d.range.begin.line) + ":" +
                  std::to_string(d.range.begin.column) + "-" +
                  std::to_string(d.range.end.line) + ":" +
                  std::to_string(d.range.end.column) + " " +
                  std::string(d.code.str()) + " " +
                  std::string(d.message.str()));
  }
  std::sort(out.begin(), out.end());
  return out;
}

void reportOrderDependence(const std::string &what, unsigned section,
                           const std::vector<std::string> &alone,
                           const std::vector<std::string> &there) {
  std::fprintf(stderr,
               "analyze-fuzzer: section %u's verdict depends on %s\n"
               "alone:\n",
               section, what.c_str());
  for (const std::string &s : alone)
    std::fprintf(stderr, "  %s\n", s.c_str());
  std::fprintf(stderr, "there:\n");
  for (const std::string &s : there)
    std::fprintf(stderr, "  %s\n", s.c_str());
  std::abort();
}

/// Issue 44, item 1: every section gets the verdict it gets alone, in the
/// file and with the sections shuffled (after whatever this analyzer saw
/// before: the contexts it reuses carry that history).
void checkOrderIndependence(const std::string &text, const FileAnalysis &fa,
                            const uint8_t *data, size_t size) {
  std::vector<Section> secs = splitSections(text);
  if (secs.size() < 2 || secs.size() > 6 || secs.size() != fa.sections.size())
    return;
  std::vector<std::string> bodies;
  for (const Section &s : secs) {
    if (s.firstColumn != 1)
      return; // a section starting mid-line reads differently alone
    bodies.push_back(text.substr(s.beginOffset, s.endOffset - s.beginOffset));
  }
  std::vector<std::vector<std::string>> alone;
  for (const std::string &b : bodies) {
    FileAnalysis one = analyzer->analyze(b, "fuzz.mlir", *config);
    alone.push_back(verdictOf(one, 0));
  }
  for (unsigned i = 0; i < secs.size(); ++i) {
    std::vector<std::string> there = verdictOf(fa, i);
    if (there != alone[i])
      reportOrderDependence("the sections before it", i, alone[i], there);
  }
  // A permutation taken from the input's bytes.
  std::vector<unsigned> order(secs.size());
  for (unsigned i = 0; i < order.size(); ++i)
    order[i] = i;
  for (unsigned i = order.size() - 1; i > 0; --i)
    std::swap(order[i], order[data[(size - 1 - i) % size] % (i + 1)]);
  std::string shuffled;
  for (unsigned i = 0; i < order.size(); ++i) {
    if (i)
      shuffled += "\n// -----\n";
    shuffled += bodies[order[i]];
  }
  FileAnalysis fs = analyzer->analyze(shuffled, "fuzz.mlir", *config);
  if (fs.sections.size() != order.size())
    return; // joining made a different split (a body ending in `//`)
  for (unsigned i = 0; i < order.size(); ++i) {
    std::vector<std::string> there = verdictOf(fs, i);
    if (there != alone[order[i]])
      reportOrderDependence("the order of the sections", order[i],
                            alone[order[i]], there);
  }
}

/// The migration plan applied, and the bytecode round trip: a text that
/// converts must read back.
void migrateAndConvert(const std::string &text) {
  MigrationPlan plan = planMigration(text);
  (void)applyMigration(text, plan);
  BytecodeConversion bc = bytecodeFromText(text, "fuzz.mlir");
  if (!bc.error.empty())
    return;
  BytecodeConversion back = textFromBytecode(bc.output);
  if (!back.error.empty()) {
    std::fprintf(stderr,
                 "analyze-fuzzer: bytecode that does not read back: %s\n",
                 back.error.c_str());
    std::abort();
  }
  // A truncated copy is an error with a reason, never a crash of ours.
  (void)textFromBytecode(
      std::string_view(bc.output).substr(0, bc.output.size() / 2));
}

/// The server's open of `text`: the analysis keeps its IR, then infers its
/// functions (Analyzer::inferKept) with one of them wanted from the start
/// and one line of it asked for early, as a hover does.
void inferKept(const std::string &text, const uint8_t *data, size_t size) {
  keptAnalyzer->setParallelSectionBytes(data[0] % 2 ? 0 : SIZE_MAX);
  (void)keptAnalyzer->analyze(text, "fuzz.mlir", *config);
  std::vector<Analyzer::FunctionPlace> places = keptAnalyzer->keptFunctions();
  std::vector<Analyzer::FunctionPlace> wanted;
  if (!places.empty())
    wanted.push_back(places[data[size / 2] % places.size()]);
  std::atomic<unsigned> asked{1};
  auto never = [] { return false; };
  auto deliver = [&](Analyzer::FunctionPlace,
                     std::shared_ptr<const ShapeInference> si) {
    keptInferred += si ? si->functions.size() : 0;
  };
  auto early = [&](Analyzer::FunctionPlace,
                   std::shared_ptr<const ShapeInference> si) {
    keptEarly += si ? si->functions.size() : 0;
  };
  auto wantedNow = [&] { return wanted; };
  auto wantedLines = [&](Analyzer::FunctionPlace p) {
    return std::vector<unsigned>{p.second + data[size - 1] % 4};
  };
  Analyzer::KeptHooks hooks{never, deliver};
  hooks.wanted = wantedNow;
  hooks.asked = &asked;
  hooks.wantedLines = wantedLines;
  hooks.deliverEarly = early;
  keptAnalyzer->inferKept(hooks);
  if (keptAnalyzer->hasKeptIR())
    __builtin_trap(); // inferKept destroys all it kept
  // A context that loaded a lenient dialect keeps nothing more until it is
  // made fresh (the server's idle release does that): so is this one.
  if (places.empty())
    keptAnalyzer->releaseMemory();
}

} // namespace

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
  // Created once: an MLIRContext with all dialects takes milliseconds.
  analyzer = new Analyzer();
  keptAnalyzer = new Analyzer();
  keptAnalyzer->setInferShapes(true, /*afterAnalysis=*/true);
  config = new Config();
  plainContext = makeContext();
  upstreamDir = std::getenv("TOSA_LSP_FUZZ_UPSTREAM");
  std::atexit([] {
    std::fprintf(stderr,
                 "analyze-fuzzer: inferKept delivered %zu function(s), %zu "
                 "early\n",
                 keptInferred, keptEarly);
    if (upstreamCrashes)
      std::fprintf(stderr,
                   "analyze-fuzzer: %u input(s) crash MLIR's own parser or "
                   "verifiers (contained)\n",
                   upstreamCrashes);
  });
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size == 0)
    return -1;
  // Raw bytes: the server takes any JSON string as document text (NUL
  // included), so the analysis must cope with anything.
  std::string text(reinterpret_cast<const char *>(data), size);
  std::string edited = text;
  edited.erase(data[size - 1] * size / 256, 1);
  setCrashRecovery(true);
  bool upstream = crashesUpstream(text) || crashesUpstream(edited);
  if (upstream) {
    saveUpstreamCrash(text);
    // Containment is tested on the first few; after that such inputs only
    // cost time and memory (each contained crash abandons an MLIRContext),
    // and are kept out of the corpus so that they are not bred.
    if (upstreamCrashes > 50)
      return -1;
  }
  setCrashRecovery(upstream);

  // Inputs are far below the size that verifies on a second thread:
  // half of them take that path anyway.
  analyzer->setParallelSectionBytes(data[0] % 2 ? 0 : SIZE_MAX);
  AnalysisCache cache;
  FileAnalysis fa = analyzer->analyze(text, "fuzz.mlir", *config, &cache);
  exercise(text, fa, data, size);

  // An edit as a client sends it: one byte removed; the cache re-analyses
  // only the section that changed and keeps stale results of the others.
  FileAnalysis fb = analyzer->analyze(edited, "fuzz.mlir", *config, &cache);
  exercise(edited, fb, data, size);
  // Not on upstream crashes: those abandon a context, and the plain parses
  // below are not guarded by the pre-check.
  if (!upstream) {
    migrateAndConvert(text);
    checkOrderIndependence(text, fa, data, size);
  }
  // Contained like the server's: tosa-infer-shapes itself crashes on some
  // input MLIR's verifier accepts (the pre-check does not run it).
  setCrashRecovery(true);
  inferKept(text, data, size);
  return upstream ? -1 : 0;
}
