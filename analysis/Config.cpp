//===- Config.cpp - .tosa-lsp.json project configuration ------------------===//

#include "Config.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <nlohmann/json.hpp>

namespace tosa_lsp {

using json = nlohmann::json;

std::vector<std::string> Config::defaultBroadcastableOps() {
  // The trait's test op and the common TF / TFLite element-wise ops, which
  // keep implicit rank expansion (unlike TOSA 1.0).
  return {"test.broadcastable",
          "tfl.add",
          "tfl.sub",
          "tfl.mul",
          "tfl.div",
          "tfl.maximum",
          "tfl.minimum",
          "tfl.pow",
          "tfl.squared_difference",
          "tfl.floor_div",
          "tfl.floor_mod",
          "tfl.less",
          "tfl.less_equal",
          "tfl.greater",
          "tfl.greater_equal",
          "tfl.equal",
          "tfl.not_equal",
          "tfl.logical_and",
          "tfl.logical_or",
          "tfl.select_v2",
          "tf.AddV2",
          "tf.Add",
          "tf.Sub",
          "tf.Mul",
          "tf.Div",
          "tf.RealDiv",
          "tf.Maximum",
          "tf.Minimum",
          "tf.Pow",
          "tf.SquaredDifference",
          "tf.FloorDiv",
          "tf.FloorMod",
          "tf.Less",
          "tf.LessEqual",
          "tf.Greater",
          "tf.GreaterEqual",
          "tf.Equal",
          "tf.NotEqual",
          "tf.LogicalAnd",
          "tf.LogicalOr",
          "tf.SelectV2",
          "tf.BiasAdd"};
}

std::string Config::fingerprint() const {
  std::string s;
  for (const std::string &n : broadcastableOps)
    s += n + ",";
  s += info.refinable ? "R" : "r";
  s += info.runtimeChecks ? "C" : "c";
  s += info.dynamicToStatic ? "D" : "d";
  if (validate.enabled)
    s += "V" + validate.items() + ";";
  if (lenient.enabled) {
    s += "L";
    for (const std::string &n : lenient.namespaces)
      s += n + ",";
  }
  return s;
}

bool Config::Lenient::allows(std::string_view ns) const {
  return enabled &&
         (namespaces.empty() || std::find(namespaces.begin(), namespaces.end(),
                                          ns) != namespaces.end());
}

bool Config::isBroadcastableName(std::string_view name) const {
  return std::find(broadcastableOps.begin(), broadcastableOps.end(), name) !=
         broadcastableOps.end();
}

namespace {
/// Reads an object's keys against an allow-list so typos are reported rather
/// than silently ignored.
struct ObjectReader {
  const json &obj;
  std::string where;
  std::string &error;

  bool checkKeys(std::initializer_list<const char *> allowed) {
    if (!obj.is_object()) {
      error = where + " must be an object";
      return false;
    }
    for (auto it = obj.begin(); it != obj.end(); ++it) {
      bool known = false;
      std::string list;
      for (const char *k : allowed) {
        known |= it.key() == k;
        list += std::string(list.empty() ? "" : ", ") + k;
      }
      if (!known) {
        error = "unknown key '" + it.key() + "' in " + where +
                " (expected one of: " + list + ")";
        return false;
      }
    }
    return true;
  }

  bool getBool(const char *key, bool &out) {
    if (!obj.contains(key))
      return true;
    if (!obj[key].is_boolean()) {
      error = where + "." + key + " must be true or false";
      return false;
    }
    out = obj[key].get<bool>();
    return true;
  }
};
} // namespace

std::optional<size_t> findDeepJsonNesting(std::string_view text,
                                          unsigned limit) {
  unsigned depth = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == '"') {
      // To the next quote not escaped by an odd run of backslashes; memchr
      // because strings are nearly all of a didOpen's bytes.
      for (size_t from = i + 1;;) {
        const void *q =
            std::memchr(text.data() + from, '"', text.size() - from);
        if (!q)
          return std::nullopt; // Unterminated: the parser rejects it.
        size_t j = static_cast<const char *>(q) - text.data(), k = j;
        while (k > i + 1 && text[k - 1] == '\\')
          --k;
        from = j + 1;
        if ((j - k) % 2 == 0) {
          i = j;
          break;
        }
      }
    } else if (c == '[' || c == '{') {
      if (++depth > limit)
        return i;
    } else if ((c == ']' || c == '}') && depth) {
      --depth;
    }
  }
  return std::nullopt;
}

static llvm::Error configError(const std::string &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

llvm::Expected<Config> parseConfig(const std::string &text) {
  return parseConfig(text, Config());
}

llvm::Expected<Config> parseConfig(const std::string &text,
                                   const Config &base) {
  // A configuration is a few levels deep; refuse hostile nesting before
  // any recursive code (parser, dump, destructor) sees it.
  constexpr unsigned kMaxConfigDepth = 64;
  if (std::optional<size_t> at = findDeepJsonNesting(text, kMaxConfigDepth))
    return configError("invalid JSON: nested deeper than " +
                       std::to_string(kMaxConfigDepth) + " levels at byte " +
                       std::to_string(*at));
  json root;
  try {
    root = json::parse(text);
  } catch (const json::parse_error &e) {
    // nlohmann's message already has the byte position.
    std::string what = e.what();
    auto pos = what.find("parse error");
    return configError("invalid JSON: " +
                       (pos == std::string::npos ? what : what.substr(pos)));
  }
  return applyConfig(root, base);
}

/// applyConfig's work; on failure sets `error` (the readers above report
/// through it) and returns std::nullopt.
static std::optional<Config> applyConfigTo(const json &root, std::string &error,
                                           const Config &base) {
  Config config = base;
  config.source.clear();
  ObjectReader top{root, "the configuration", error};
  if (!top.checkKeys({"broadcastableOps", "extraBroadcastableOps", "hints",
                      "info", "compile", "lenientDialects", "shapeChecks",
                      "rename", "validate"}) ||
      !top.getBool("shapeChecks", config.shapeChecks))
    return std::nullopt;
  if (root.contains("validate")) {
    const json &v = root["validate"];
    if (v.is_boolean()) {
      config.validate = ValidateTarget();
      config.validate.enabled = v.get<bool>();
    } else if (v.is_string()) {
      llvm::Expected<ValidateTarget> t =
          parseValidateTarget(v.get<std::string>());
      if (!t) {
        error = "validate: " + llvm::toString(t.takeError());
        return std::nullopt;
      }
      config.validate = *t;
    } else {
      error = "validate must be true, false or a string of items like "
              "\"pro_int,pro_fp,level=8k\"";
      return std::nullopt;
    }
  }
  if (root.contains("lenientDialects")) {
    const json &l = root["lenientDialects"];
    config.lenient.namespaces.clear();
    if (l.is_boolean()) {
      config.lenient.enabled = l.get<bool>();
    } else if (l.is_array()) {
      config.lenient.enabled = true;
      for (const json &n : l) {
        if (!n.is_string() || n.get<std::string>().empty() ||
            n.get<std::string>().find('.') != std::string::npos) {
          error = "lenientDialects must be true, false or an array of "
                  "dialect namespaces like \"util\"";
          return std::nullopt;
        }
        config.lenient.namespaces.push_back(n.get<std::string>());
      }
    } else {
      error = "lenientDialects must be true, false or an array of dialect "
              "namespaces like \"util\"";
      return std::nullopt;
    }
  }

  auto readNames = [&](const char *key, std::vector<std::string> &out) {
    const json &list = root[key];
    if (!list.is_array()) {
      error = std::string(key) + " must be an array of op names";
      return false;
    }
    for (const json &n : list) {
      if (!n.is_string() ||
          n.get<std::string>().find('.') == std::string::npos) {
        // Name the offending value without dumping it: dump() recurses
        // once per nesting level and a hostile file nests 10^5 deep.
        error =
            std::string(key) + " must contain op names like \"tfl.add\", got " +
            (n.is_string() ? "\"" + n.get<std::string>().substr(0, 200) + "\""
                           : std::string("a value of type ") + n.type_name());
        return false;
      }
      out.push_back(n.get<std::string>());
    }
    return true;
  };
  if (root.contains("broadcastableOps")) {
    config.broadcastableOps.clear();
    if (!readNames("broadcastableOps", config.broadcastableOps))
      return std::nullopt;
  }
  if (root.contains("extraBroadcastableOps") &&
      !readNames("extraBroadcastableOps", config.broadcastableOps))
    return std::nullopt;

  if (root.contains("hints")) {
    ObjectReader r{root["hints"], "hints", error};
    if (!r.checkKeys({"inferredShapes", "runtimeChecks"}) ||
        !r.getBool("inferredShapes", config.hints.inferredShapes) ||
        !r.getBool("runtimeChecks", config.hints.runtimeChecks))
      return std::nullopt;
  }
  if (root.contains("info")) {
    ObjectReader r{root["info"], "info", error};
    if (!r.checkKeys(
            {"refinable", "runtimeChecks", "dynamicToStatic", "publish"}) ||
        !r.getBool("publish", config.info.publish) ||
        !r.getBool("refinable", config.info.refinable) ||
        !r.getBool("runtimeChecks", config.info.runtimeChecks) ||
        !r.getBool("dynamicToStatic", config.info.dynamicToStatic))
      return std::nullopt;
  }
  if (root.contains("rename")) {
    ObjectReader r{root["rename"], "rename", error};
    if (!r.checkKeys({"checkLines"}) ||
        !r.getBool("checkLines", config.rename.checkLines))
      return std::nullopt;
  }
  if (root.contains("compile")) {
    const json &c = root["compile"];
    ObjectReader r{c, "compile", error};
    if (!r.checkKeys({"outputDir", "overwrite", "timeoutSeconds",
                      "memoryLimitMB", "threads"}) ||
        !r.getBool("overwrite", config.compile.overwrite))
      return std::nullopt;
    if (c.contains("outputDir")) {
      if (!c["outputDir"].is_string()) {
        error = "compile.outputDir must be a string (a directory)";
        return std::nullopt;
      }
      config.compile.outputDir = c["outputDir"].get<std::string>();
      // Whoever set it last decides what it is relative to.
      config.compile.outputDirRoot.clear();
    }
    struct Limit {
      const char *key, *unit;
      unsigned *field;
      unsigned min, max;
    };
    using C = Config::Compile;
    for (const Limit &l :
         {Limit{"timeoutSeconds", "s", &config.compile.timeoutSeconds,
                C::minTimeoutSeconds, C::maxTimeoutSeconds},
          Limit{"memoryLimitMB", "MB", &config.compile.memoryLimitMB,
                C::minMemoryLimitMB, C::maxMemoryLimitMB},
          Limit{"threads", "threads", &config.compile.threads, C::minThreads,
                C::maxThreads}}) {
      if (!c.contains(l.key))
        continue;
      // Range-checked as a signed 64-bit value: a cast to unsigned would
      // wrap 4294967296 to 0, and 0 means "no limit" to the OS.
      const json &v = c[l.key];
      if (!v.is_number_integer() ||
          (v.is_number_unsigned() && v.get<uint64_t>() > uint64_t(INT64_MAX)) ||
          v.get<int64_t>() < l.min || v.get<int64_t>() > l.max) {
        error = std::string("compile.") + l.key + " must be an integer from " +
                std::to_string(l.min) + " to " + std::to_string(l.max) + " (" +
                l.unit + "), got " + v.dump();
        return std::nullopt;
      }
      *l.field = unsigned(v.get<int64_t>());
    }
  }
  return config;
}

llvm::Expected<Config> applyConfig(const json &root, const Config &base) {
  std::string error;
  std::optional<Config> config = applyConfigTo(root, error, base);
  if (!config)
    return configError(error);
  return std::move(*config);
}

} // namespace tosa_lsp
