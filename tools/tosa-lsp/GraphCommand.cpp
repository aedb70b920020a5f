//===- GraphCommand.cpp - `graph`: a function as a picture ----------------===//

#include "GraphCommand.h"

#include "CommandSupport.h"
#include "GraphAssets.h"

#include "Analysis.h"
#include "Choices.h"
#include "Convert.h"
#include "Graph.h"
#include "GraphJSON.h"
#include "Input.h"
#include "LineIndex.h"
#include "LoweredGraph.h"
#include "OutputFiles.h"
#include "ShapeInference.h"
#include "Timing.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"

#include <map>

using namespace llvm;

namespace tosa_lsp::cli {

namespace {

std::string dotQuoted(StringRef s) {
  std::string q = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\')
      q += '\\';
    if (c == '\n') {
      q += "\\n";
      continue;
    }
    q += c;
  }
  return q + "\"";
}

/// `tensor<2x?xf32>` -> `2x?xf32`: what an edge label has room for.
std::string shapeOf(StringRef type) {
  if (type.consume_front("tensor<") && type.consume_back(">"))
    return type.str();
  return type.str();
}

std::string str(const json::Value *v) {
  if (!v)
    return "";
  if (std::optional<StringRef> s = v->getAsString())
    return s->str();
  return "";
}

/// One node statement: the op and its results' types; inferred types where
/// they differ; errors red, refinable results dashed.
std::string dotNode(const json::Object &n) {
  std::string label = str(n.get("label"));
  const json::Array *results = n.getArray("results");
  const json::Array *types = n.getArray("types");
  const json::Array *inferred = n.getArray("inferred");
  bool refined = false;
  for (size_t i = 0; types && i < types->size(); ++i) {
    std::string name =
        results && i < results->size() ? str(&(*results)[i]) + " : " : "";
    if (str(n.get("kind")) == "argument")
      name = "";
    label += "\n" + name + str(&(*types)[i]);
    if (inferred && i < inferred->size() && !str(&(*inferred)[i]).empty()) {
      label += "\ninferred " + shapeOf(str(&(*inferred)[i]));
      refined = true;
    }
  }
  const json::Array *errors = n.getArray("errors");
  if (errors && !errors->empty())
    label +=
        "\n" + str(&errors->front()) +
        (errors->size() > 1 ? " (+" + std::to_string(errors->size() - 1) + ")"
                            : "");
  std::string kind = str(n.get("kind"));
  std::string attrs = "label=" + dotQuoted(label);
  if (kind != "op")
    attrs += ", shape=ellipse";
  else if (n.getBoolean("constant").value_or(false))
    attrs += ", shape=note";
  if (errors && !errors->empty())
    attrs += ", color=red, fontcolor=red, style=filled, fillcolor=\"#fde8e8\"";
  else if (refined)
    attrs += ", style=\"dashed,filled\", fillcolor=\"#fff6d5\"";
  if (n.getBoolean("collapsed").value_or(false))
    attrs += ", peripheries=2";
  return dotQuoted(str(n.get("id"))) + " [" + attrs + "];";
}

/// The nodes under `parent` (null: the top level), region ops as clusters
/// holding themselves and their contents.
void dotNodes(const json::Array &nodes, const std::string *parent,
              const std::string &indent, std::string &out,
              const std::multimap<std::string, size_t> &children) {
  auto it = children.equal_range(parent ? *parent : std::string());
  for (auto c = it.first; c != it.second; ++c) {
    const json::Object &n = *nodes[c->second].getAsObject();
    std::string id = str(n.get("id"));
    if (children.count(id)) {
      out += indent + "subgraph " + dotQuoted("cluster_" + id) + " {\n";
      out += indent + "  label=" + dotQuoted(str(n.get("label")) + " " + id) +
             "; style=rounded;\n";
      out += indent + "  " + dotNode(n) + "\n";
      dotNodes(nodes, &id, indent + "  ", out, children);
      out += indent + "}\n";
    } else {
      out += indent + dotNode(n) + "\n";
    }
  }
}

/// The function `opts` names: --function, the one at FILE:LINE, or the
/// first; nullptr after printing why there is none.
const SymbolInfo *chooseFunction(const FileAnalysis &fa,
                                 const std::string &function, Position pos,
                                 const std::string &path, raw_ostream &err) {
  auto problem = [&](const std::string &what) -> const SymbolInfo * {
    std::string why = what;
    if (!fa.errorIndices().empty()) {
      const Diagnostic &d = fa.diagnostics[fa.errorIndices().front()];
      why += " (" + std::to_string(fa.errorIndices().size()) +
             " errors; the first at " + std::to_string(d.range.begin.line) +
             ":" + std::to_string(d.range.begin.column) + ": " +
             d.message.str() + ")";
    }
    printError(err, why);
    return nullptr;
  };
  if (!function.empty()) {
    if (const SymbolInfo *s = graphFunctionNamed(fa, function))
      return s;
    return problem("no function @" + function + " in " + path);
  }
  if (pos.valid()) {
    if (const SymbolInfo *s = graphFunctionAt(fa, pos))
      return s;
    return problem("no function at " + path + ":" + std::to_string(pos.line));
  }
  std::vector<const SymbolInfo *> all;
  for (const SymbolInfo &s : fa.symbols)
    if (graphFunctionNamed(fa, s.name) == &s)
      all.push_back(&s);
  if (all.empty())
    return problem("no function in " + path);
  if (all.size() > 1)
    err << "tosa-lsp: note: " << path << " has " << all.size()
        << " functions; drawing @" << all.front()->name
        << " (--function or FILE:LINE chooses)\n";
  return all.front();
}

/// `graph` as SVG: the page's renderer and layout library run by node.
Expected<std::string> svgByNode(const json::Object &graph,
                                const std::string &nodePath) {
  std::string node = nodePath;
  if (node.empty()) {
    ErrorOr<std::string> found = sys::findProgramByName("node");
    if (!found)
      return createStringError(
          "--format=svg runs the graph's layout in node (Node.js), which is "
          "not on PATH; --format=html needs nothing");
    node = *found;
  }
  TempDir dir("tosa-lsp-graph");
  if (dir.error())
    return createStringError("cannot create a temporary directory: " +
                             dir.error().message());
  auto write = [&](StringRef name, StringRef data) -> Error {
    std::error_code ec;
    raw_fd_ostream os(dir.path() + "/" + name.str(), ec);
    if (ec)
      return createStringError("cannot write " + name + ": " + ec.message());
    os << data;
    return Error::success();
  };
  std::string model;
  raw_string_ostream(model) << json::Value(json::Object(graph));
  for (auto [name, data] :
       {std::pair<StringRef, StringRef>{"elk.bundled.js", kElkJS},
        {"graph-view.js", kGraphViewJS},
        {"layered.js", kGraphLayeredJS},
        {"render.js", kGraphRenderJS},
        {"model.json", model}})
    if (Error e = write(name, data))
      return std::move(e);
  std::string svg = dir.path() + "/graph.svg", log = dir.path() + "/node.log";
  std::string script = dir.path() + "/render.js",
              input = dir.path() + "/model.json";
  StringRef args[] = {node, script, input, svg};
  std::optional<StringRef> redirects[] = {StringRef(""), StringRef(log),
                                          StringRef(log)};
  std::string message;
  int rc = sys::ExecuteAndWait(node, args, std::nullopt, redirects,
                               /*SecondsToWait=*/600, 0, &message);
  if (rc != 0) {
    auto buf = MemoryBuffer::getFile(log);
    std::string why = buf ? (*buf)->getBuffer().trim().str() : message;
    return createStringError("node failed to lay out the graph" +
                             (why.empty() ? "" : ": " + why));
  }
  auto buf = MemoryBuffer::getFile(svg);
  if (!buf)
    return createStringError("node wrote no SVG");
  return (*buf)->getBuffer().str();
}

/// Writes `data` to -o (never over FILE; over another file only with
/// --force) or to `out`.
int emit(const GraphOptions &opts, const std::string &path, StringRef data,
         raw_ostream &out, raw_ostream &err) {
  if (opts.output.empty() || opts.output == "-") {
    out << data;
    return 0;
  }
  Expected<std::vector<std::string>> written =
      writeOutputs(opts.output, {OutputFile{"", data}},
                   opts.force ? OnExisting::Replace : OnExisting::Fail, {path});
  if (!written) {
    printError(err, written.takeError());
    return 2;
  }
  return 0;
}

/// The graph in the format asked for, written where -o says.
int draw(const GraphOptions &opts, const std::string &fmt,
         const std::string &path, json::Object graph, raw_ostream &out,
         raw_ostream &err) {
  if (fmt == "json")
    return emit(opts, path, graphJSONLines(graph), out, err);
  if (fmt == "dot")
    return emit(opts, path, graphToDot(graph), out, err);
  if (fmt == "html")
    return emit(opts, path, graphToHTML(graph, sys::path::filename(path).str()),
                out, err);
  Expected<std::string> svg = svgByNode(graph, opts.node);
  if (!svg) {
    printError(err, svg.takeError());
    return 1;
  }
  return emit(opts, path, *svg, out, err);
}

/// --stage: `fn` lowered as the preview lowers it, as a graph whose nodes
/// point at the source ops they came from; nullopt after printing why not
/// (`rc`: 2 for a bad stage, 1 when the lowering fails).
std::optional<json::Object>
loweredGraph(const GraphOptions &opts, const std::string &text,
             const std::string &path, const FileAnalysis &fa,
             const SymbolInfo &fn, const LineTable &lines, raw_ostream &err,
             int &rc) {
  std::optional<LowerStage> stage = parseStage(*opts.stage);
  if (!stage) {
    rc = usageError(
        err, unknownChoiceMessage("stage", *opts.stage, choices().stages));
    return std::nullopt;
  }
  std::optional<LowerMode> mode = parseMode(opts.mode);
  if (!mode) {
    rc = usageError(err,
                    unknownChoiceMessage("mode", opts.mode, choices().modes));
    return std::nullopt;
  }
  LowerOptions lo;
  lo.function = fn.name;
  lo.stage = *stage;
  lo.mode = *mode;
  Expected<GenericFunction> lowered = lowerForGraph(text, path, lo);
  if (!lowered) {
    printError(err, lowered.takeError());
    rc = 1;
    return std::nullopt;
  }
  FunctionGraph source = buildGraph(fa, fn);
  json::Object graph = graphToJSON(buildGraph(*lowered, &source), lines,
                                   opts.nodeLimit.value_or(kGraphNodeLimit));
  graph["stage"] = stageName(*stage);
  graph["mode"] = modeName(*mode);
  return graph;
}

} // namespace

std::string graphToDot(const json::Object &wire) {
  json::Object graph = expandGraphJSON(wire);
  std::string out = "digraph " + dotQuoted(str(graph.get("function"))) +
                    " {\n"
                    "  rankdir=TB;\n"
                    "  node [shape=box, fontname=\"monospace\", "
                    "fontsize=10];\n"
                    "  edge [fontname=\"monospace\", fontsize=9];\n";
  const json::Array *nodes = graph.getArray("nodes");
  const json::Array *edges = graph.getArray("edges");
  std::multimap<std::string, size_t> children; // parent id ("": top) -> node
  for (size_t i = 0; nodes && i < nodes->size(); ++i)
    children.insert({str((*nodes)[i].getAsObject()->get("parent")), i});
  if (nodes)
    dotNodes(*nodes, nullptr, "  ", out, children);
  for (size_t i = 0; edges && i < edges->size(); ++i) {
    const json::Object &e = *(*edges)[i].getAsObject();
    std::string attrs = "label=" + dotQuoted(str(e.get("value")) + " " +
                                             shapeOf(str(e.get("type"))));
    if (e.getBoolean("refinable").value_or(false))
      attrs += ", style=dashed";
    if (e.getBoolean("dynamic").value_or(false))
      attrs += ", color=\"#b36b00\"";
    out += "  " + dotQuoted(str(e.get("from"))) + " -> " +
           dotQuoted(str(e.get("to"))) + " [" + attrs + "];\n";
  }
  if (graph.getBoolean("truncated").value_or(false))
    out += "  label=\"truncated: regions collapsed (too many nodes)\";\n";
  return out + "}\n";
}

std::string graphToHTML(const json::Object &graph, const std::string &title) {
  std::string model;
  raw_string_ostream(model) << json::Value(json::Object(graph));
  // `<` only occurs inside JSON strings, where \u003c means the same: no
  // `</script>` or `<!--` can end the script element early.
  std::string safe;
  safe.reserve(model.size());
  for (char c : model)
    safe += c == '<' ? std::string("\\u003c") : std::string(1, c);
  std::string name = "@" + str(graph.get("function")) + " - " + title;
  std::string escaped;
  for (char c : name)
    escaped += c == '<' ? "&lt;" : c == '&' ? "&amp;" : std::string(1, c);
  return "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta "
         "charset=\"utf-8\">\n<meta name=\"viewport\" "
         "content=\"width=device-width\">\n<title>" +
         escaped +
         "</title>\n</head>\n<body class=\"tosa-graph-page\">\n"
         "<div id=\"tosa-graph\"></div>\n<script id=\"tosa-elk\">\n" +
         std::string(kElkJS) + "\n</script>\n<script id=\"tosa-layered\">\n" +
         std::string(kGraphLayeredJS) +
         "\n</script>\n<script id=\"tosa-view\">\n" +
         std::string(kGraphViewJS) +
         "\n</script>\n<script id=\"tosa-graph-model\" "
         "type=\"application/json\">" +
         safe +
         "</script>\n<script>\n"
         "const text = id => document.getElementById(id).textContent;\n"
         "// The model as text: parsed by the page and by the layout worker.\n"
         "TosaGraph.mount(document.getElementById('tosa-graph'), "
         "text('tosa-graph-model'), {\n"
         "  elk: TosaGraph.makeElk(ELK, text('tosa-elk')),\n"
         "  // Big layouts in a worker made from these scripts' text.\n"
         "  layoutWorker: TosaGraph.makeLayoutWorker([text('tosa-layered'), "
         "text('tosa-view')]),\n"
         "});\n"
         "</script>\n</body>\n</html>\n";
}

int runGraph(const GraphOptions &opts, raw_ostream &out, raw_ostream &err) {
  int rc = 0;
  std::optional<std::string> function =
      functionOrReport(opts.function, err, rc);
  if (!function)
    return rc;
  std::optional<std::string> fmt =
      formatOrReport(opts.format, {"json", "dot", "html", "svg"}, err, rc);
  if (!fmt)
    return rc;
  if (opts.files.size() != 1)
    return usageError(err, "graph: expected one FILE[:LINE[:COL]]");
  std::string path = opts.files[0];
  Position pos;
  if (!sys::fs::exists(path))
    splitPosition(opts.files[0], path, pos);
  auto input = readWithConfig(path, opts.config, err);
  if (!input)
    return 2;
  const std::string &text = input->first;
  Analyzer analyzer;
  FileAnalysis fa = analyzer.analyze(text, displayName(path), input->second);
  if (pos.valid() && pos.column == 0) {
    // FILE:LINE: the line's first word (where an indented `func.func`
    // starts).
    LineIndex index(text);
    size_t at = index.offset({pos.line, 1}).value_or(text.size());
    size_t word = text.find_first_not_of(" \t", at);
    pos.column =
        static_cast<unsigned>((word == std::string::npos ? at : word) - at + 1);
  }
  const SymbolInfo *fn = chooseFunction(fa, *function, pos, path, err);
  if (!fn)
    return 2;
  LineTable lines(text, fa.lineIndex);
  if (opts.stage) {
    std::optional<json::Object> graph =
        loweredGraph(opts, text, path, fa, *fn, lines, err, rc);
    if (!graph)
      return rc;
    return draw(opts, *fmt, path, std::move(*graph), out, err);
  }
  ShapeInferrer inferrer;
  ShapeInference shapes =
      inferrer.infer(text, fa, fn->scope.begin.line, fn->scope.end.line);
  // The part of a `tosa/graph` request after analysis and inference (what
  // bench/graph_bench.py reads with TOSA_LSP_TIMING=1).
  std::optional<PhaseTimer> timer(std::in_place, "graph model + JSON");
  std::optional<PhaseTimer> modelTimer(std::in_place, "graph model");
  size_t limit = opts.nodeLimit.value_or(kGraphNodeLimit);
  FunctionGraph g = buildGraph(fa, *fn, &shapes, limit);
  modelTimer.reset();
  json::Object graph = graphToJSON(g, lines, limit);
  timer.reset();
  if (PhaseTimer::enabled()) {
    // What a reply would write: the streamed form.
    PhaseTimer streamed("graph model + streamed JSON");
    FunctionGraph again = buildGraph(fa, *fn, &shapes, limit);
    std::string wire;
    raw_string_ostream ws(wire);
    writeGraphJSON(ws, again, lines, limit);
  }
  return draw(opts, *fmt, path, std::move(graph), out, err);
}

} // namespace tosa_lsp::cli
