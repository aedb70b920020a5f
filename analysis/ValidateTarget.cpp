//===- ValidateTarget.cpp - what TOSA validation checks against -----------===//

#include "ValidateTarget.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringRef.h"

namespace tosa_lsp {

const std::vector<std::string> &tosaProfiles() {
  static const std::vector<std::string> names = {"pro_int", "pro_fp"};
  return names;
}

// MLIR 22's Extension enum (TosaEnums), "none" aside.
const std::vector<std::string> &tosaExtensions() {
  static const std::vector<std::string> names = {
      "int16",   "int4",     "bf16",        "fp8e4m3",     "fp8e5m2",
      "fft",     "variable", "controlflow", "doubleround", "inexactround",
      "dynamic", "mxfp",     "int64",       "shape"};
  return names;
}

static std::string joined(const std::vector<std::string> &v) {
  return llvm::join(v, ",");
}

std::string ValidateTarget::items() const {
  std::vector<std::string> out(profiles);
  out.insert(out.end(), extensions.begin(), extensions.end());
  if (level)
    out.push_back("level=" + *level);
  if (version)
    out.push_back("version=" + *version);
  if (strict)
    out.push_back("strict");
  return joined(out);
}

std::string ValidateTarget::mlirOptArgs() const {
  std::string s;
  if (attaches()) {
    std::vector<std::string> opts;
    if (!profiles.empty())
      opts.push_back("profiles=" + joined(profiles));
    if (!extensions.empty())
      opts.push_back("extensions=" + joined(extensions));
    if (level)
      opts.push_back("level=" + *level);
    if (version)
      opts.push_back("specification_version=" + *version);
    s = "--tosa-attach-target=\"" + llvm::join(opts, " ") + "\" ";
  }
  return s + (strict ? "--tosa-validate=strict-op-spec-alignment"
                     : "--tosa-validate");
}

llvm::Expected<ValidateTarget> parseValidateTarget(std::string_view text) {
  ValidateTarget t;
  t.enabled = true;
  llvm::SmallVector<llvm::StringRef> parts;
  llvm::StringRef(text).split(parts, ',', -1, /*KeepEmpty=*/false);
  auto bad = [](const std::string &why) {
    return llvm::createStringError(llvm::inconvertibleErrorCode(), why);
  };
  auto add = [](std::vector<std::string> &to, llvm::StringRef item) {
    if (!llvm::is_contained(to, item))
      to.push_back(item.str());
  };
  for (llvm::StringRef raw : parts) {
    llvm::StringRef item = raw.trim();
    if (item.consume_front("level=")) {
      if (item != "8k" && item != "none")
        return bad("validation level '" + item.str() +
                   "' is not one of 8k, none");
      t.level = item.str();
    } else if (item.consume_front("version=")) {
      if (item != "1.0" && item != "1.1.draft")
        return bad("TOSA specification version '" + item.str() +
                   "' is not one of 1.0, 1.1.draft");
      t.version = item.str();
    } else if (item == "strict") {
      t.strict = true;
    } else if (llvm::is_contained(tosaProfiles(), item)) {
      add(t.profiles, item);
    } else if (llvm::is_contained(tosaExtensions(), item)) {
      add(t.extensions, item);
    } else {
      return bad("unknown validation item '" + item.str() +
                 "' (expected profiles " + joined(tosaProfiles()) +
                 "; extensions " + joined(tosaExtensions()) +
                 "; level=8k|none; version=1.0|1.1.draft; strict)");
    }
  }
  return t;
}

} // namespace tosa_lsp
