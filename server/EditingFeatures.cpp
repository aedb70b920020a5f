//===- EditingFeatures.cpp - highlight, rename, folding, tokens, ... ------===//
//
// TosaServer's editing features (issues 37 and 38): each answers from the
// latest snapshot with one analysis/ function and converts positions; the
// few that need more (semantic token deltas, workspace files, bytecode)
// say why where they do it.
//
//===----------------------------------------------------------------------===//

#include "TosaServer.h"

#include "OldSyntax.h"
#include "ServerSupport.h"

#include "Bytecode.h"
#include "Completion.h"
#include "Folding.h"
#include "Format.h"
#include "GraphJSON.h"
#include "Highlight.h"
#include "Hover.h"
#include "Lexer.h"
#include "OpCatalogue.h"
#include "OpGenericForm.h"
#include "Query.h"
#include "Rename.h"
#include "SelectionRanges.h"
#include "SemanticTokens.h"
#include "ShapeInference.h"
#include "SignatureHelp.h"
#include "SourceLocations.h"
#include "TypeText.h"
#include "WorkspaceSymbols.h"

#include "llvm/Support/Base64.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <algorithm>
#include <atomic>

using namespace llvm;
using namespace llvm::lsp;

namespace tosa_lsp {

namespace {

Error failed(const Twine &message) {
  return make_error<LSPError>(message.str(), ErrorCode::RequestFailed);
}

/// Runs `fn(snapshot)` (returning Expected<T> or T) and hands it to `cb`.
template <typename T, typename Fn> auto reply(Callback<T> cb, Fn fn) {
  return [cb = std::move(cb),
          fn = std::move(fn)](Expected<Scheduler::SnapshotPtr> s) mutable {
    if (!s)
      return cb(s.takeError());
    cb(fn(**s));
  };
}

} // namespace

std::optional<HoverResult> withGenericForm(const Snapshot &s, Position p,
                                           std::optional<HoverResult> h) {
  const FileAnalysis &fa = s.analysis;
  bool onDef = false;
  if (const AliasInfo *a = aliasAt(s.aliases(), p, &onDef)) {
    HoverResult r;
    r.range = onDef ? a->def : a->def;
    for (const tosa_lsp::Range &u : a->uses)
      if (contains(u, p))
        r.range = u;
    r.markdown = "`" + a->name + "` = `" + a->valueText + "`\n\n" +
                 (a->isType() ? "Type alias" : "Attribute alias") + " (line " +
                 std::to_string(a->def.begin.line) + ", " +
                 std::to_string(a->uses.size()) + " uses)";
    return r;
  }
  NamedOp op = namedOpAt(fa, p);
  tosa_lsp::Range name = op.name, scope = op.scope;
  unsigned section = op.section;
  if (!name.begin.valid() || !scope.begin.valid())
    return h;
  std::optional<OpGenericForm> g =
      opGenericForm(s.text, s.lines.index(), fa, s.aliases(), scope, section);
  if (!g)
    return h;
  std::string md = "\"" + g->name + "\"";
  if (!g->symbol.empty())
    md += " : " + g->symbol;
  md += "\n\nGeneric Form:\n\n```mlir\n" + g->genericForm + "\n```\n";
  if (!h)
    return HoverResult{name, md};
  h->markdown += "\n\n---\n\n" + md;
  return h;
}

std::vector<DefinitionTarget> sourceLocationTargets(const Snapshot &s,
                                                    Position p) {
  std::vector<DefinitionTarget> out;
  NamedOp op = namedOpAt(s.analysis, p);
  tosa_lsp::Range scope = op.scope;
  unsigned section = op.section;
  if (!scope.begin.valid())
    return out;
  StringRef dir = sys::path::parent_path(s.path);
  for (const FileLineCol &loc : opSourceLocations(
           s.text, s.lines.index(), s.aliases(), scope, section)) {
    SmallString<256> path(loc.file);
    if (!sys::path::is_absolute(path) && !dir.empty()) {
      path = dir;
      sys::path::append(path, loc.file);
    }
    if (!sys::fs::is_regular_file(path) || !loc.line)
      continue;
    Expected<URIForFile> u = URIForFile::fromFile(path);
    if (!u) {
      consumeError(u.takeError());
      continue;
    }
    lsp::Position at(loc.line - 1, loc.column ? loc.column - 1 : 0);
    out.push_back({u->uri().str(), lsp::Range(at, at)});
  }
  return out;
}

void TosaServer::documentHighlights(
    const std::string &uri, lsp::Position pos,
    Callback<std::vector<DocumentHighlightLsp>> cb) {
  withCurrentSnapshot(
      uri, reply(std::move(cb), [pos](const Snapshot &s) {
        std::vector<DocumentHighlightLsp> out;
        if (std::optional<Position> p = s.lines.fromLsp(pos))
          for (const Highlight &h :
               tosa_lsp::documentHighlights(s.analysis, s.aliases(), *p))
            out.push_back({s.lines.toLsp(h.range), h.write});
        return out;
      }));
}

void TosaServer::prepareRename(const std::string &uri, lsp::Position pos,
                               Callback<PrepareRenameLsp> cb) {
  withCurrentSnapshot(
      uri, reply(std::move(cb),
                 [pos](const Snapshot &s) -> Expected<PrepareRenameLsp> {
                   std::optional<Position> p = s.lines.fromLsp(pos);
                   if (!p)
                     return failed("no such position");
                   RenameTarget t = tosa_lsp::prepareRename(
                       {s.analysis, s.aliases(), s.text, s.lines.index()}, *p);
                   if (!t.error.empty())
                     return failed(t.error);
                   return PrepareRenameLsp{s.lines.toLsp(t.range),
                                           t.placeholder};
                 }));
}

void TosaServer::rename(const std::string &uri, lsp::Position pos,
                        std::string newName, Callback<DocumentEditLsp> cb) {
  withCurrentSnapshot(
      uri, reply(std::move(cb),
                 [pos, newName = std::move(newName)](
                     const Snapshot &s) -> Expected<DocumentEditLsp> {
                   std::optional<Position> p = s.lines.fromLsp(pos);
                   if (!p)
                     return failed("no such position");
                   RenameResult r = tosa_lsp::rename(
                       {s.analysis, s.aliases(), s.text, s.lines.index(),
                        s.config.rename.checkLines},
                       *p, newName);
                   if (!r.error.empty())
                     return failed(r.error);
                   return DocumentEditLsp{s.uri, s.version,
                                          toLspEdits(s, r.edits, "\n")};
                 }));
}

void TosaServer::foldingRanges(const std::string &uri, bool lineFoldingOnly,
                               Callback<std::vector<FoldingRangeLsp>> cb) {
  withCurrentSnapshot(
      uri, reply(std::move(cb), [lineFoldingOnly](const Snapshot &s) {
        std::vector<FoldingRangeLsp> out;
        for (const FoldRange &f :
             tosa_lsp::foldingRanges(s.text, s.lines.index())) {
          lsp::Position b = s.lines.toLsp(f.begin), e = s.lines.toLsp(f.end);
          FoldingRangeLsp r;
          r.startLine = b.line;
          r.endLine = e.line;
          r.kind = f.kind == FoldRange::Comment   ? "comment"
                   : f.kind == FoldRange::Section ? "region"
                                                  : "";
          if (f.kind == FoldRange::Region) {
            // Keep the closing bracket's line visible when the
            // bracket starts it (`}`, `} else {`).
            size_t lineStart = s.lines.index().lineStart(f.end.line - 1);
            bool leads =
                std::string_view(s.text)
                    .substr(lineStart, f.end.column - 1)
                    .find_first_not_of(" \t") == std::string_view::npos;
            if (lineFoldingOnly && leads)
              r.endLine = e.line - 1;
            if (!lineFoldingOnly) {
              r.startCharacter = b.character;
              r.endCharacter = e.character;
            }
          }
          if (r.endLine > r.startLine)
            out.push_back(r);
        }
        return out;
      }));
}

void TosaServer::selectionRanges(
    const std::string &uri, std::vector<lsp::Position> positions,
    Callback<std::vector<std::vector<lsp::Range>>> cb) {
  withCurrentSnapshot(
      uri, reply(std::move(cb), [positions =
                                     std::move(positions)](const Snapshot &s) {
        std::vector<std::vector<lsp::Range>> out;
        for (const lsp::Position &pos : positions) {
          std::vector<lsp::Range> chain;
          if (std::optional<Position> p = s.lines.fromLsp(pos))
            for (const tosa_lsp::Range &r : tosa_lsp::selectionRanges(
                     s.analysis, s.text, s.lines.index(), *p))
              chain.push_back(s.lines.toLsp(r));
          if (chain.empty())
            chain.push_back(lsp::Range(pos, pos));
          out.push_back(std::move(chain));
        }
        return out;
      }));
}

/// The LSP encoding: per token, line and start relative to the previous
/// token, length, type, modifiers; UTF-16 columns (byte columns on an
/// ASCII line, which is nearly every line of a model).
static void encodeTokens(const Snapshot &s, const LexedTokens &lexed,
                         const std::vector<TokenClass> &classes,
                         std::vector<uint32_t> &data) {
  data.resize(classes.size() * 5);
  const LineIndex &index = s.lines.index();
  uint32_t line = 0, start = 0;
  // Nearly every model is ASCII throughout: then no line is looked at.
  bool allAscii = isAscii(s.text), ascii = allAscii;
  uint32_t lineOf = UINT32_MAX; // the line `lineStart` and `ascii` are of
  size_t lineStart = 0;
  uint32_t *d = data.data();
  for (size_t i = 0; i < classes.size(); ++i) {
    const LexedToken &t = lexed.tokens[i];
    if (t.line != lineOf) {
      lineOf = t.line;
      lineStart = index.lineStart(t.line);
      if (!allAscii) {
        size_t e = t.line + 1 < index.lineCount() ? index.lineStart(t.line + 1)
                                                  : s.text.size();
        ascii =
            isAscii(std::string_view(s.text).substr(lineStart, e - lineStart));
      }
    }
    uint32_t l = t.line, c = static_cast<uint32_t>(t.offset - lineStart),
             n = t.length;
    if (!ascii) {
      Position p{t.line + 1, c + 1};
      lsp::Position b = s.lines.toLsp(p);
      lsp::Position e = s.lines.toLsp(Position{p.line, p.column + n});
      c = static_cast<uint32_t>(b.character);
      n = static_cast<uint32_t>(e.character - b.character);
    }
    *d++ = l - line;
    *d++ = l == line ? c - start : c;
    *d++ = n;
    *d++ = static_cast<uint32_t>(classes[i].type);
    *d++ = classes[i].modifiers;
    line = l;
    start = c;
  }
}

/// Brings `ts` to the snapshot and answers: the full data, or its delta
/// against the result the client names when it is the one last sent.
static SemanticTokensLsp
tokensReply(const Snapshot &s, OpenDocument::TokenState &ts,
            const std::optional<std::string> &previousResultId) {
  static std::atomic<uint64_t> counter{0};
  const LineIndex &lines = s.lines.index();
  if (!ts.lexedText)
    ts.lexed = lexTokens(s.text, lines);
  else if (ts.lexedText != s.sharedText)
    relexTokens(ts.lexed, *ts.lexedText, s.text, lines);
  ts.lexedText = s.sharedText;
  classifyTokens(s.analysis, s.aliases(), ts.lexed, lines, ts.classes);
  encodeTokens(s, ts.lexed, ts.classes, ts.next);

  SemanticTokensLsp out;
  out.resultId = std::to_string(s.version) + "." + std::to_string(++counter);
  if (previousResultId && !ts.resultId.empty() &&
      *previousResultId == ts.resultId) {
    IntArrayEdit e = diffIntArrays(ts.data, ts.next);
    out.isDelta = true;
    out.start = e.start;
    out.deleteCount = e.deleteCount;
    out.inserted = std::move(e.data);
  } else {
    out.data = std::make_shared<const std::vector<uint32_t>>(ts.next);
  }
  std::swap(ts.data, ts.next);
  ts.resultId = out.resultId;
  return out;
}

void TosaServer::semanticTokens(const std::string &uri,
                                std::optional<std::string> previousResultId,
                                Callback<SemanticTokensLsp> cb) {
  std::shared_ptr<OpenDocument> doc = scheduler->document(uri);
  withCurrentSnapshot(
      uri, reply(std::move(cb), [doc, previousResultId](const Snapshot &s) {
        SemanticTokensLsp out;
        if (!doc) {
          OpenDocument::TokenState none;
          return tokensReply(s, none, previousResultId);
        }
        doc->withTokens([&](OpenDocument::TokenState &ts) {
          out = tokensReply(s, ts, previousResultId);
        });
        return out;
      }));
}

namespace {

/// Symbols of one file read from disk: by path, with its mtime and size,
/// so that a query reads only what changed since the last one.
struct ScannedFile {
  sys::TimePoint<> mtime;
  uint64_t size = 0;
  std::string uri;
  std::vector<WorkspaceSymbolLsp> symbols;
};

std::mutex scannedMu;
std::map<std::string, ScannedFile> scannedFiles;

/// Files past this are not read for symbols (weights of a converted model
/// inline: a scan would read megabytes for a few names).
constexpr uint64_t kMaxScannedBytes = 8 << 20;
constexpr unsigned kMaxScannedFiles = 2000;

std::vector<WorkspaceSymbolLsp> scanFile(const std::string &path) {
  sys::fs::file_status st;
  if (sys::fs::status(path, st) || st.getSize() > kMaxScannedBytes)
    return {};
  {
    std::lock_guard<std::mutex> lock(scannedMu);
    auto it = scannedFiles.find(path);
    if (it != scannedFiles.end() &&
        it->second.mtime == st.getLastModificationTime() &&
        it->second.size == st.getSize())
      return it->second.symbols;
  }
  ScannedFile f;
  f.mtime = st.getLastModificationTime();
  f.size = st.getSize();
  auto buffer = MemoryBuffer::getFile(path, /*IsText=*/false,
                                      /*RequiresNullTerminator=*/false);
  auto fileUri = URIForFile::fromFile(path);
  if (buffer && fileUri) {
    std::string text = (*buffer)->getBuffer().str();
    LineTable lines(text);
    for (const ScannedSymbol &sym : scanSymbols(text, lines.index())) {
      WorkspaceSymbolLsp w;
      w.name = "@" + sym.name;
      w.containerName = sym.opName;
      w.kind = sym.opName.find("func") != std::string::npos
                   ? SymbolKind::Function
                   : SymbolKind::Variable;
      w.location = lsp::Location(*fileUri, lines.toLsp(sym.nameRange));
      f.symbols.push_back(std::move(w));
    }
  } else if (!fileUri) {
    consumeError(fileUri.takeError());
  }
  std::lock_guard<std::mutex> lock(scannedMu);
  return (scannedFiles[path] = std::move(f)).symbols;
}

} // namespace

void TosaServer::workspaceSymbols(
    std::string query, std::vector<std::string> roots,
    Callback<std::vector<WorkspaceSymbolLsp>> cb) {
  std::vector<Scheduler::SnapshotPtr> open;
  for (const std::shared_ptr<OpenDocument> &d : scheduler->documents())
    if (Scheduler::SnapshotPtr s = d->latest())
      open.push_back(std::move(s));
  runHeavy([query = std::move(query), roots = std::move(roots),
            open = std::move(open), cb = std::move(cb)](unsigned) mutable {
    std::vector<WorkspaceSymbolLsp> all;
    std::set<std::string> openPaths;
    for (const Scheduler::SnapshotPtr &s : open) {
      openPaths.insert(s->path);
      auto fileUri = URIForFile::fromURI(s->uri);
      if (!fileUri) {
        consumeError(fileUri.takeError());
        continue;
      }
      for (const SymbolInfo &sym : s->analysis.symbols) {
        WorkspaceSymbolLsp w;
        w.name = "@" + sym.name;
        w.containerName = sym.opName;
        w.kind = sym.opName.find("func") != std::string::npos
                     ? SymbolKind::Function
                     : SymbolKind::Variable;
        w.location = lsp::Location(*fileUri, s->lines.toLsp(sym.nameRange));
        all.push_back(std::move(w));
      }
    }
    unsigned files = 0;
    for (const std::string &root : roots) {
      std::error_code ec;
      for (sys::fs::recursive_directory_iterator it(root, ec), end;
           it != end && !ec && files < kMaxScannedFiles; it.increment(ec)) {
        StringRef p = it->path();
        // Build trees and VCS metadata are not the user's sources.
        StringRef name = sys::path::filename(p);
        if (it->type() == sys::fs::file_type::directory_file &&
            (name.starts_with(".") || name == "build" ||
             name == "node_modules")) {
          it.no_push();
          continue;
        }
        if (!p.ends_with(".mlir") || openPaths.count(p.str()))
          continue;
        ++files;
        for (WorkspaceSymbolLsp &w : scanFile(p.str()))
          all.push_back(std::move(w));
      }
    }
    std::vector<WorkspaceSymbolLsp> out;
    for (WorkspaceSymbolLsp &w : all)
      if (std::optional<double> sc = fuzzyMatch(query, w.name.substr(1))) {
        w.score = *sc;
        out.push_back(std::move(w));
      }
    std::stable_sort(
        out.begin(), out.end(),
        [](const WorkspaceSymbolLsp &a, const WorkspaceSymbolLsp &b) {
          return a.score > b.score;
        });
    if (out.size() > 500)
      out.resize(500);
    cb(std::move(out));
  });
}

void TosaServer::formatting(const std::string &uri,
                            std::optional<lsp::Range> range,
                            Callback<DocumentEditLsp> cb) {
  withCurrentSnapshot(
      uri, reply(std::move(cb),
                 [range](const Snapshot &s) -> Expected<DocumentEditLsp> {
                   unsigned first = 0, last = 0;
                   if (range) {
                     first = static_cast<unsigned>(range->start.line) + 1;
                     last = static_cast<unsigned>(range->end.line) + 1;
                     // A range ending at a line's start ends the
                     // line before (a selection of whole lines).
                     if (range->end.character == 0 && last > first)
                       --last;
                   }
                   FormatResult r = formatText(s.text, s.lines.index(),
                                               s.analysis, first, last);
                   if (!r.error.empty())
                     return failed(r.error);
                   return DocumentEditLsp{s.uri, s.version,
                                          toLspEdits(s, r.edits, "\n")};
                 }));
}

namespace {

CompletionItemKind kindOf(CompletionKind k) {
  switch (k) {
  case CompletionKind::Dialect:
    return CompletionItemKind::Module;
  case CompletionKind::Operation:
    return CompletionItemKind::Function;
  case CompletionKind::Value:
    return CompletionItemKind::Variable;
  case CompletionKind::Block:
    return CompletionItemKind::Field;
  case CompletionKind::Symbol:
    return CompletionItemKind::Reference;
  case CompletionKind::Type:
    return CompletionItemKind::TypeParameter;
  case CompletionKind::Attribute:
    return CompletionItemKind::Property;
  case CompletionKind::Alias:
    return CompletionItemKind::Constant;
  case CompletionKind::Keyword:
    return CompletionItemKind::Keyword;
  }
  return CompletionItemKind::Text;
}

/// The type the op at `line` gets: from tosa-infer-shapes or the broadcast
/// rules when the last analysis has it, else by the broadcast rules from
/// the types of the operands typed on the line.
std::optional<std::string>
inferredTypeAt(const Snapshot &s, const ShapeInference *si, unsigned line) {
  if (si)
    if (const InferredOp *op = si->opAt(Position{line, 0})) {
      std::vector<InferredResult> rs = op->results();
      if (rs.size() == 1 && !rs[0].inferred.empty())
        return rs[0].inferred;
    }
  int i = s.analysis.findOp(Position{line, 0});
  if (i >= 0) {
    const OpReport &op = s.analysis.ops[i];
    std::string declared = op.resultType.str();
    if (MaybeShape inf = op.inferredShape())
      if (auto element = tensorElementType(declared))
        return tensorTypeText(*inf, *element);
  }
  // A line not analysed yet: its operands' types as the analysis knows them.
  size_t lineStart = s.lines.index().lineStart(line - 1);
  size_t lineEnd = s.text.find('\n', lineStart);
  std::string_view text = std::string_view(s.text).substr(
      lineStart,
      (lineEnd == std::string::npos ? s.text.size() : lineEnd) - lineStart);
  size_t eq = text.find('=');
  std::string opName;
  std::vector<std::string> types;
  Lexer lex(text, eq == std::string_view::npos ? 0 : eq + 1);
  for (Token t = lex.next(); t.kind != TokKind::End; t = lex.next()) {
    if (opName.empty() && t.kind == TokKind::BareId) {
      opName = std::string(t.text(text));
      continue;
    }
    if (t.kind == TokKind::Punct && t.first(text) == ':')
      break;
    if (t.kind != TokKind::ValueId)
      continue;
    const ValueInfo *best = nullptr;
    for (const ValueInfo &v : s.analysis.values)
      if (v.name.view() == t.text(text) && v.def.begin.line < line &&
          (!best || before(best->def.begin, v.def.begin)))
        best = &v;
    if (!best)
      return std::nullopt;
    types.push_back(best->type.str());
  }
  return elementwiseResultType(opName, types);
}

} // namespace

void TosaServer::completion(const std::string &uri, lsp::Position pos,
                            bool snippets, Callback<CompletionList> cb) {
  // The text just typed first (the cursor is in it), then its shapes.
  withCurrentSnapshot(uri, [this, uri, pos, snippets, cb = std::move(cb)](
                               Expected<Scheduler::SnapshotPtr> cur) mutable {
    if (!cur)
      return cb(cur.takeError());
    completionWithShapes(uri, pos, snippets, std::move(cb));
  });
}

void TosaServer::completionWithShapes(const std::string &uri, lsp::Position pos,
                                      bool snippets,
                                      Callback<CompletionList> cb) {
  withShapes(
      uri, lsp::Range(pos, pos),
      [pos, snippets, cb = std::move(cb)](
          Expected<Scheduler::SnapshotPtr> sp,
          std::shared_ptr<const ShapeInference> shapes) mutable {
        if (!sp)
          return cb(sp.takeError());
        const Snapshot &s = **sp;
        CompletionList out;
        std::optional<Position> p = s.lines.fromLsp(pos);
        if (!p)
          return cb(std::move(out));
        CompletionInput in{s.text, s.lines.index(), s.analysis, s.aliases(),
                           completionCatalogue()};
        in.snippets = snippets;
        in.inferredType = [&](unsigned line) {
          return inferredTypeAt(s, shapes.get(), line);
        };
        CompletionResult r = complete(in, *p);
        out.isIncomplete = r.incomplete;
        for (CompletionItemData &i : r.items) {
          CompletionItem item(i.label, kindOf(i.kind), i.sortText);
          item.detail = std::move(i.detail);
          if (!i.documentation.empty())
            item.documentation =
                MarkupContent{MarkupKind::Markdown, std::move(i.documentation)};
          item.insertTextFormat = i.snippet ? InsertTextFormat::Snippet
                                            : InsertTextFormat::PlainText;
          std::string insert = i.insertText.empty() ? i.label : i.insertText;
          item.textEdit = lsp::TextEdit{
              lsp::Range(s.lines.toLsp(i.replaceFrom), pos), std::move(insert)};
          out.items.push_back(std::move(item));
        }
        cb(std::move(out));
      },
      /*oneOp=*/true);
}

void TosaServer::signatureHelp(const std::string &uri, lsp::Position pos,
                               Callback<std::optional<SignatureHelp>> cb) {
  withCurrentSnapshot(
      uri, reply(std::move(cb), [pos](const Snapshot &s) {
        std::optional<SignatureHelp> out;
        std::optional<Position> p = s.lines.fromLsp(pos);
        if (!p)
          return out;
        std::optional<SignatureData> d =
            tosa_lsp::signatureHelp(s.text, s.lines.index(), *p);
        if (!d)
          return out;
        SignatureInformation info;
        info.label = d->label;
        info.documentation = d->documentation;
        for (const SignatureData::Parameter &param : d->parameters) {
          ParameterInformation pi;
          pi.labelString =
              d->label.substr(param.begin, param.end - param.begin);
          pi.labelOffsets = std::make_pair(param.begin, param.end);
          pi.documentation = param.documentation;
          info.parameters.push_back(std::move(pi));
        }
        out.emplace();
        out->signatures.push_back(std::move(info));
        out->activeParameter = d->active;
        return out;
      }));
}

void TosaServer::graph(const std::string &uri, std::optional<lsp::Position> pos,
                       std::optional<std::string> function,
                       std::optional<std::string> stage, std::string mode,
                       Callback<GraphReply> cb) {
  // The function's name first, then its shapes (the whole function
  // inferred: a graph shows every op's types), or its lowering.
  withCurrentSnapshot(uri, [this, uri, pos, function, stage, mode,
                            cb = std::move(cb)](
                               Expected<Scheduler::SnapshotPtr> sp) mutable {
    if (!sp)
      return cb(sp.takeError());
    const Snapshot &s = **sp;
    // An old-syntax version: the migrated form's graph (OldSyntax.cpp), its
    // ranges in the user's text.
    if (std::shared_ptr<const MigratedView> v = migratedView(s)) {
      if (!stage) {
        if (std::optional<FunctionGraph> g =
                migratedGraph(s, *v, pos, function)) {
          GraphReply r;
          r.graph = std::make_shared<const FunctionGraph>(std::move(*g));
          r.snapshot = std::move(*sp);
          r.migrated = true;
          return cb(std::move(r));
        }
      } else if (std::optional<std::string> name =
                     migratedGraphFunction(s, *v, pos, function)) {
        // Lowered from the migrated text; answered for the user's.
        return loweredGraph(v->snapshot, *name, *stage, mode,
                            [v, old = std::move(*sp), cb = std::move(cb)](
                                Expected<GraphReply> r) mutable {
                              if (!r)
                                return cb(r.takeError());
                              // A copy: the lowered graph is kept as made.
                              auto g =
                                  std::make_shared<FunctionGraph>(*r->graph);
                              mapGraphBack(*v, *g);
                              r->graph = std::move(g);
                              r->snapshot = std::move(old);
                              r->migrated = true;
                              cb(std::move(*r));
                            });
      }
    }
    const SymbolInfo *fn = nullptr;
    if (function) {
      fn = graphFunctionNamed(s.analysis, *function);
      if (!fn)
        return cb(failed("no function named @" +
                         StringRef(*function).ltrim('@') + " in " + s.path));
    } else if (pos) {
      if (std::optional<Position> p = s.lines.fromLsp(*pos))
        fn = graphFunctionAt(s.analysis, *p);
      if (!fn)
        return cb(failed("no function at line " + Twine(pos->line + 1) +
                         (s.analysis.hasErrors()
                              ? " (a section that does not parse has "
                                "no functions to draw)"
                              : "")));
    } else {
      return cb(failed("tosa/graph needs a position or a function"));
    }
    std::string name = fn->name;
    if (stage)
      return loweredGraph(std::move(*sp), name, *stage, mode, std::move(cb));
    lsp::Range range = s.lines.toLsp(fn->scope);
    withShapes(uri, range,
               [name, cb = std::move(cb)](
                   Expected<Scheduler::SnapshotPtr> sp2,
                   std::shared_ptr<const ShapeInference> shapes) mutable {
                 if (!sp2)
                   return cb(sp2.takeError());
                 const SymbolInfo *f =
                     graphFunctionNamed((*sp2)->analysis, name);
                 if (!f)
                   return cb(failed("@" + name + " is gone from the file"));
                 GraphReply r;
                 // Built cut to what is sent: a 50k-op function's
                 // model is not made whole first.
                 r.graph = std::make_shared<const FunctionGraph>(buildGraph(
                     (*sp2)->analysis, *f, shapes.get(), kGraphNodeLimit));
                 r.snapshot = std::move(*sp2);
                 cb(std::move(r));
               });
  });
}

void TosaServer::convertToBytecode(const std::string &uri,
                                   Callback<std::string> cb) {
  withCurrentSnapshot(uri, [this, cb = std::move(cb)](
                               Expected<Scheduler::SnapshotPtr> sp) mutable {
    if (!sp)
      return cb(sp.takeError());
    // A parse and a write of the whole file: on the pool, off the
    // requests' thread.
    runHeavy([s = std::move(*sp), cb = std::move(cb)](unsigned) mutable {
      BytecodeConversion c = bytecodeFromText(s->text, s->path);
      if (!c.error.empty())
        return cb(failed(c.error));
      cb(encodeBase64(c.output));
    });
  });
}

void TosaServer::convertFromBytecode(const std::string &path,
                                     Callback<std::string> cb) {
  runHeavy([path, cb = std::move(cb)](unsigned) mutable {
    auto buffer = MemoryBuffer::getFile(path, /*IsText=*/false,
                                        /*RequiresNullTerminator=*/false);
    if (!buffer)
      return cb(
          failed("cannot read " + path + ": " + buffer.getError().message()));
    BytecodeConversion c = textFromBytecode((*buffer)->getBuffer());
    if (!c.error.empty())
      return cb(failed(path + ": " + c.error));
    cb(std::move(c.output));
  });
}

} // namespace tosa_lsp
