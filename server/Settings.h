//===- Settings.h - configuration of the server's documents -----*- C++ -*-===//
//
// A document's configuration: the server's defaults, then the nearest
// .tosa-lsp.json, then the editor's settings, merged as data (null means
// unset). Problems are reported once per cause: the same mistake made
// again after a fix is reported again.
//
//===----------------------------------------------------------------------===//

#ifndef TOSA_LSP_SERVER_SETTINGS_H
#define TOSA_LSP_SERVER_SETTINGS_H

#include "Config.h"
#include "Input.h"

#include <nlohmann/json.hpp>

#include <functional>
#include <mutex>
#include <optional>
#include <string>

namespace tosa_lsp {

class Settings {
public:
  /// `report` shows the user a problem (any thread).
  explicit Settings(std::function<void(const std::string &)> report);

  /// The editor's settings (flat or under "tosaLsp"); invalid ones are
  /// reported and ignored.
  void setEditorSettings(const nlohmann::json &settings);
  /// Project files are read again (lookups also notice changed files).
  void invalidateProjectFiles() { projectConfigs.invalidate(); }
  /// Defaults, then the project file, then the editor settings.
  Config configFor(const std::string &path);
  /// The server's defaults, in the settings' own shape.
  static nlohmann::json defaults();
  /// Project files parsed (tests).
  unsigned projectLoads() const { return projectConfigs.loads(); }

private:
  void reportOnce(const std::string &message);

  std::function<void(const std::string &)> report;
  std::mutex mu;
  std::optional<nlohmann::json> editor; // valid editor settings
  std::string lastError;
  ConfigCache projectConfigs;
};

} // namespace tosa_lsp

#endif // TOSA_LSP_SERVER_SETTINGS_H
