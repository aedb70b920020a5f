//===- Settings.cpp - configuration of the server's documents -------------===//

#include "Settings.h"

#include "llvm/Support/LSP/Logging.h"

using namespace llvm;
using namespace llvm::lsp;

namespace tosa_lsp {

Settings::Settings(std::function<void(const std::string &)> report)
    : report(std::move(report)) {}

void Settings::reportOnce(const std::string &message) {
  {
    std::lock_guard<std::mutex> lock(mu);
    if (message == lastError)
      return;
    lastError = message;
  }
  Logger::error("{0}", message);
  report(message);
}

/// Editor settings with null members removed: a client may send the shape
/// of its settings with nulls where the user set nothing.
static nlohmann::json withoutNulls(const nlohmann::json &v) {
  if (!v.is_object())
    return v;
  nlohmann::json out = nlohmann::json::object();
  for (auto it = v.begin(); it != v.end(); ++it)
    if (!it.value().is_null())
      out[it.key()] = withoutNulls(it.value());
  return out;
}

void Settings::setEditorSettings(const nlohmann::json &value) {
  const nlohmann::json *s = &value;
  if (value.is_object() && value.contains("tosaLsp"))
    s = &value["tosaLsp"];
  nlohmann::json clean = withoutNulls(*s);
  std::optional<nlohmann::json> accepted;
  if (clean.is_object() && !clean.empty()) {
    if (Expected<Config> checked = applyConfig(clean, Config()))
      accepted = std::move(clean);
    else
      reportOnce("editor settings: " + toString(checked.takeError()));
  } else if (!clean.is_object() && !clean.is_null() &&
             !(clean.is_array() && clean.empty())) {
    // (An empty Lua table, which Neovim sends for "no settings", is `[]`.)
    // `[]` or `5`: say so, as for a wrong value inside an object.
    reportOnce("editor settings: expected an object, got " +
               clean.dump(-1).substr(0, 80) + "; the defaults apply");
  }
  std::lock_guard<std::mutex> lock(mu);
  editor = std::move(accepted);
}

Config Settings::configFor(const std::string &path) {
  ConfigCache::Result project = projectConfigs.get(path);
  if (project.loaded && !project.error.empty()) {
    reportOnce(project.error);
  } else if (project.loaded) {
    // Fixed: the same mistake made again is reported again.
    std::lock_guard<std::mutex> lock(mu);
    lastError.clear();
  }
  std::optional<nlohmann::json> s;
  {
    std::lock_guard<std::mutex> lock(mu);
    s = editor;
  }
  if (!s)
    return project.config;
  Expected<Config> merged = applyConfig(*s, project.config);
  if (!merged) { // cannot happen: checked in setSettings
    reportOnce("editor settings: " + toString(merged.takeError()));
    return project.config;
  }
  return std::move(*merged);
}

nlohmann::json Settings::defaults() {
  Config d;
  return {
      {"broadcastableOps", d.broadcastableOps},
      {"extraBroadcastableOps", nlohmann::json::array()},
      {"hints",
       {{"inferredShapes", d.hints.inferredShapes},
        {"runtimeChecks", d.hints.runtimeChecks}}},
      {"info",
       {{"refinable", d.info.refinable},
        {"runtimeChecks", d.info.runtimeChecks},
        {"dynamicToStatic", d.info.dynamicToStatic},
        {"publish", d.info.publish}}},
      {"lenientDialects", d.lenient.enabled},
      {"shapeChecks", d.shapeChecks},
      {"rename", {{"checkLines", d.rename.checkLines}}},
      {"validate", d.validate.enabled},
      {"compile",
       {{"outputDir", d.compile.outputDir},
        {"overwrite", d.compile.overwrite},
        {"timeoutSeconds", d.compile.timeoutSeconds},
        {"memoryLimitMB", d.compile.memoryLimitMB},
        {"threads", d.compile.threads}}},
  };
}

} // namespace tosa_lsp
