//===- OpenDocument.cpp - what the server knows of one open document ------===//

#include "OpenDocument.h"

#include "Graph.h"
#include "OldSyntax.h"
#include "StaleView.h"

#include "llvm/ADT/STLExtras.h"

namespace tosa_lsp {

OpenDocument::OpenDocument(std::string uri, std::string path, int64_t version,
                           std::string text)
    : uri(std::move(uri)), path(std::move(path)), version(version) {
  setText(std::move(text));
}

void OpenDocument::setText(std::string newText) {
  if (!hasLoneCR(newText)) {
    text = std::make_shared<const std::string>(std::move(newText));
    client = nullptr;
    return;
  }
  text = std::make_shared<const std::string>(loneCRsAsLF(newText));
  client = std::make_shared<const std::string>(std::move(newText));
}

OpenDocument::Version OpenDocument::current() const {
  std::lock_guard<std::mutex> lock(mu);
  return {version, text};
}

bool OpenDocument::isAt(int64_t v) const {
  std::lock_guard<std::mutex> lock(mu);
  return open && version == v;
}

bool OpenDocument::isOpen() const {
  std::lock_guard<std::mutex> lock(mu);
  return open;
}

std::optional<std::string> OpenDocument::change(
    int64_t newVersion,
    llvm::ArrayRef<llvm::lsp::TextDocumentContentChangeEvent> changes,
    bool &restarted) {
  std::lock_guard<std::mutex> lock(mu);
  std::string out;
  // The latest snapshot's line starts, when it shows this very text.
  const LineIndex *lines = latestSnapshot && latestSnapshot->sharedText == text
                               ? &latestSnapshot->lines.index()
                               : nullptr;
  const SharedString &own = client ? client : text;
  if (!own)
    return std::string("the document is closed");
  // Lone \r line ends count from the change that brings the first one.
  bool loneCR = own != text || llvm::any_of(changes, [](const auto &c) {
                  return c.text.find('\r') != std::string::npos;
                });
  if (std::optional<std::string> error =
          applyChanges(*own, changes, out, lines, loneCR))
    return error;
  setText(std::move(out));
  restarted = newVersion <= version;
  version = newVersion;
  return std::nullopt;
}

void OpenDocument::replace(int64_t newVersion, std::string newText) {
  std::lock_guard<std::mutex> lock(mu);
  setText(std::move(newText));
  version = newVersion;
}

std::string OpenDocument::clientText() const {
  std::lock_guard<std::mutex> lock(mu);
  const SharedString &own = client ? client : text;
  return own ? *own : std::string();
}

std::string OpenDocument::newline(const Snapshot &s) const {
  {
    std::lock_guard<std::mutex> lock(mu);
    if (client)
      return std::string(firstLineBreak(*client));
  }
  return std::string(firstLineBreak(s.text));
}

SnapshotPtr OpenDocument::latest() const {
  std::lock_guard<std::mutex> lock(mu);
  return latestSnapshot;
}

SnapshotPtr OpenDocument::setLatest(SnapshotPtr s) {
  // Released after the lock: it holds the snapshot replaced, which the
  // caller frees on the reclaimer.
  std::shared_ptr<const StaleView> old;
  std::lock_guard<std::mutex> lock(mu);
  if (latestSnapshot && latestSnapshot->version > s->version)
    return nullptr;
  std::swap(latestSnapshot, s);
  old = std::move(stale);
  return s;
}

SnapshotPtr OpenDocument::takeLatest() {
  std::lock_guard<std::mutex> lock(mu);
  return std::move(latestSnapshot);
}

std::optional<bool> OpenDocument::verdict(int64_t v, const std::string &config,
                                          size_t fix) const {
  std::lock_guard<std::mutex> lock(mu);
  if (verdictsVersion != v || verdictsConfig != config)
    return std::nullopt;
  auto it = verdicts.find(fix);
  if (it == verdicts.end())
    return std::nullopt;
  return it->second;
}

void OpenDocument::setVerdict(int64_t v, const std::string &config, size_t fix,
                              bool ok) {
  std::lock_guard<std::mutex> lock(mu);
  if (!open)
    return;
  if (verdictsVersion != v || verdictsConfig != config) {
    if (verdictsVersion > v)
      return; // a newer version is being validated: keep its verdicts
    verdicts.clear();
    verdictsVersion = v;
    verdictsConfig = config;
  }
  verdicts[fix] = ok;
}

std::shared_ptr<const MigratedView> OpenDocument::migrated(int64_t v) const {
  std::lock_guard<std::mutex> lock(mu);
  return migratedView && migratedView->version == v ? migratedView : nullptr;
}

std::shared_ptr<const MigratedView> OpenDocument::latestMigrated() const {
  std::lock_guard<std::mutex> lock(mu);
  return migratedView;
}

bool OpenDocument::setMigrated(std::shared_ptr<const MigratedView> v) {
  std::lock_guard<std::mutex> lock(mu);
  if (!open || (migratedView && migratedView->version > v->version))
    return false;
  migratedView = std::move(v);
  return true;
}

std::shared_ptr<const StaleView> OpenDocument::staleView() const {
  std::shared_ptr<const StaleView> old; // released after the lock
  SnapshotPtr snap;
  SharedString now;
  int64_t v;
  {
    std::lock_guard<std::mutex> lock(mu);
    if (!open || !latestSnapshot || latestSnapshot->version >= version) {
      old = std::move(stale);
      return nullptr;
    }
    if (stale && stale->snapshot == latestSnapshot && stale->version == version)
      return stale;
    snap = latestSnapshot;
    now = text;
    v = version;
  }
  // Outside the lock: a text compare and a line scan (~5 ms at 50k lines),
  // once per (snapshot, version); the analysis publishing meanwhile needs
  // the lock.
  auto made = std::make_shared<const StaleView>(std::move(snap), now, v);
  std::lock_guard<std::mutex> lock(mu);
  if (open && latestSnapshot == made->snapshot && version == v) {
    old = std::move(stale);
    stale = made;
  }
  return made;
}

std::string OpenDocument::previewStem(const std::string &function,
                                      llvm::function_ref<std::string()> make) {
  std::lock_guard<std::mutex> lock(mu);
  std::string &stem = previewStems[function];
  if (stem.empty())
    stem = make();
  return stem;
}

std::shared_ptr<const FunctionGraph>
OpenDocument::loweredGraph(int64_t version, const std::string &key) const {
  std::lock_guard<std::mutex> lock(mu);
  if (version != loweredVersion)
    return nullptr;
  auto it = lowered.find(key);
  return it == lowered.end() ? nullptr : it->second;
}

void OpenDocument::setLoweredGraph(int64_t version, const std::string &key,
                                   std::shared_ptr<const FunctionGraph> g) {
  std::lock_guard<std::mutex> lock(mu);
  if (!open || version < loweredVersion)
    return;
  if (version > loweredVersion) {
    lowered.clear();
    loweredVersion = version;
  }
  lowered[key] = std::move(g);
}

void OpenDocument::close() {
  std::shared_ptr<const StaleView> old; // released after the lock
  std::lock_guard<std::mutex> lock(mu);
  old = std::move(stale);
  open = false;
  lowered.clear();
  text = client = nullptr;
  verdicts.clear();
  verdictsVersion = -1;
  migratedView = nullptr;
  previewStems.clear();
}

void OpenDocument::withTokens(llvm::function_ref<void(TokenState &)> f) {
  std::lock_guard<std::mutex> lock(tokensMu);
  if (isOpen()) {
    f(tokens);
    return;
  }
  TokenState none; // closed: nothing kept
  tokens = {};
  f(none);
}

} // namespace tosa_lsp
