//===- ContextPool.cpp - the analyzer's MLIRContexts ----------------------===//
//
// Two contexts, one per thread (MLIR's uniquers lock otherwise): made with
// every dialect a file may use, kept from one analysis to the next (loading
// the dialects again costs a few ms a keystroke), abandoned after a crash
// (never destroyed: they may be half-updated), and made fresh when idle once
// what they uniqued is worth forgetting. The whole sections' parses kept
// until after a publish (retired) live in them, so they are handled here too.
//
//===----------------------------------------------------------------------===//

#include "AnalyzerImpl.h"
#include "TextScan.h"
#include "Timing.h"

#include "llvm/ADT/StringSet.h"

#include <map>
#include <set>

using namespace mlir;

namespace tosa_lsp {

std::unique_ptr<MLIRContext> Analyzer::Impl::makeContext() {
  std::unique_ptr<MLIRContext> ctx = singleThreadedContext(makeRegistry());
  // tf.*, tfl.*, test.*, stablehlo.* in generic form must parse.
  ctx->allowUnregisteredDialects();
  return ctx;
}

namespace {

bool isIdentStart(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
bool isIdentChar(char c) {
  return isIdentStart(c) || (c >= '0' && c <= '9') || c == '$';
}

/// Calls `fn` with each dialect namespace `text` names, until it returns
/// true: an identifier at a token's start followed by `.` and a letter
/// (`tosa.add`, `!tosa.shape`, `#ns.attr`). Strings (op names in
/// `pdl.operation "tosa.sin"` load nothing), comments and `@`, `%`, `^`
/// names are skipped.
template <typename Fn> void forEachNamespace(std::string_view text, Fn &&fn) {
  const size_t n = text.size();
  for (size_t i = 0; i < n;) {
    char c = text[i];
    if (c == '"') {
      i = detail::skipString(text, i);
    } else if (c == '/' && detail::commentAt(text, i)) {
      i = detail::commentEnd(text, i);
    } else if (c == '@' || c == '%' || c == '^') {
      for (++i;
           i < n && (isIdentChar(text[i]) || text[i] == '.' || text[i] == '-');)
        ++i;
    } else if (isIdentStart(c) && (i == 0 || !isIdentChar(text[i - 1]))) {
      size_t j = i;
      while (j < n && isIdentChar(text[j]))
        ++j;
      if (j + 1 < n && text[j] == '.' && isIdentStart(text[j + 1]) &&
          fn(text.substr(i, j - i)))
        return;
      while (j < n && (isIdentChar(text[j]) || text[j] == '.'))
        ++j;
      i = j;
    } else {
      ++i;
    }
  }
}

/// What a fresh context has loaded after loading `names` (dependent
/// dialects, extensions): made once per set in a context thrown away.
const llvm::StringSet<> &loadedWith(const std::set<std::string> &names,
                                    std::unique_ptr<MLIRContext> (*make)()) {
  static std::mutex mu;
  static std::map<std::set<std::string>, llvm::StringSet<>> memo;
  std::lock_guard<std::mutex> lock(mu);
  auto [it, added] = memo.try_emplace(names);
  if (added) {
    std::unique_ptr<MLIRContext> ctx = make();
    for (const std::string &name : names)
      (void)ctx->getOrLoadDialect(name);
    for (Dialect *d : ctx->getLoadedDialects())
      it->second.insert(d->getNamespace());
  }
  return it->second;
}

} // namespace

bool Analyzer::Impl::onlyDialectsOf(MLIRContext &ctx,
                                    std::string_view sectionText) {
  std::vector<StringRef> loaded;
  for (Dialect *d : ctx.getLoadedDialects())
    if (d->getNamespace() != "builtin")
      loaded.push_back(d->getNamespace());
  if (loaded.empty())
    return true; // as fresh as a context gets
  // Early out: a TOSA file names func and tosa in its first lines.
  std::set<std::string> named;
  bool covered = false;
  forEachNamespace(sectionText, [&](std::string_view ns) {
    if (!named.insert(std::string(ns)).second)
      return false;
    const llvm::StringSet<> &with = loadedWith(named, makeContext);
    covered = llvm::all_of(loaded, [&](StringRef d) {
      return with.contains(d) || named.count(d.str());
    });
    return covered;
  });
  return covered;
}

DialectRegistry Analyzer::Impl::makeRegistry() {
  DialectRegistry registry;
  registerFileDialects(registry);
  return registry;
}

void Analyzer::Impl::destroyRetired() {
  std::vector<std::unique_ptr<detail::ParsedSection>> dead;
  {
    std::lock_guard<std::mutex> lock(retiredMu);
    dead.swap(retired);
  }
  if (dead.empty())
    return;
  // Its pages go back in bulk once it is destroyed.
  PhaseTimer t("destroy IR (after the publish)");
  FreeInBulk bulk;
  dead.clear();
}

void Analyzer::Impl::abandonRetired() {
  std::lock_guard<std::mutex> lock(retiredMu);
  for (auto &ps : retired)
    (void)ps.release();
  retired.clear();
}

void Analyzer::Impl::abandonContext() {
  abandonRetired();
  abandonKept(false);
  (void)context.release();
  context = makeContext();
}

void Analyzer::Impl::abandonParts(bool crashedHere, bool crashedBeside) {
  // Abandoned with their contexts (see analyzeSection); the whole-section
  // analysis that follows reports the crash. The part that did not crash
  // is abandoned too (its IR lives in partContext).
  if (crashedHere)
    abandonContext();
  else
    abandonRetired();
  abandonKept(true); // partContext goes below
  if (crashedBeside)
    (void)partContext.release();
  partContext.reset();
}

void Analyzer::destroyRetiredIR() {
  impl->analysisThread.run([&] {
    impl->destroyRetired();
    impl->dropKept(false);
    impl->dropKept(true); // the helper is idle between analyses
  });
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
      impl->dropKept(false);
      impl->dropKept(true);
      impl->context = freshContextLike(*impl->context, Impl::makeContext);
      impl->lenientLoaded = false;
      releaseAllFreeMemory();
    });
  }
  // The second part's context: made and used on the helper thread, whose
  // heap holds what it uniqued.
  impl->helperThread.run([&] {
    if (fresh && impl->partContext)
      impl->partContext =
          freshContextLike(*impl->partContext, Impl::makeContext);
    releaseAllFreeMemory();
  });
}

} // namespace tosa_lsp
