//===- Validate.cpp - MLIR 22's TOSA validation on a section --------------===//

#include "Validate.h"

#include "mlir/Dialect/Tosa/IR/TargetEnv.h"
#include "mlir/Dialect/Tosa/Transforms/Passes.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/StringExtras.h"

using namespace mlir;

namespace tosa_lsp {

std::string EffectiveTarget::describe() const {
  auto list = [](const char *what, const std::vector<std::string> &v) {
    return v.empty() ? std::string("no ") + what
                     : std::string(what) + " " + llvm::join(v, ",");
  };
  return "TOSA " + version + ", level " + level + ", " +
         list("profiles", profiles) + ", " + list("extensions", extensions);
}

static EffectiveTarget effectiveTarget(ModuleOp module) {
  EffectiveTarget t;
  tosa::TargetEnvAttr env = tosa::lookupTargetEnvOrDefault(module);
  t.version =
      tosa::stringifySpecificationVersion(env.getSpecificationVersion()).str();
  t.level = tosa::stringifyLevel(env.getLevel()).str();
  for (tosa::Profile p : env.getProfiles())
    t.profiles.push_back(tosa::stringifyProfile(p).str());
  for (tosa::Extension e : env.getExtensions())
    t.extensions.push_back(tosa::stringifyExtension(e).str());
  return t;
}

EffectiveTarget runTosaValidation(ModuleOp module,
                                  const ValidateTarget &target) {
  StringRef key = tosa::TargetEnvAttr::name;
  Attribute own = module->getAttr(key);
  PassManager pm(module.getContext());
  // The section was verified; the passes change nothing the verifier sees.
  pm.enableVerifier(false);
  if (target.attaches()) {
    tosa::TosaAttachTargetOptions attach;
    if (target.level)
      attach.level =
          *target.level == "none" ? tosa::Level::none : tosa::Level::eightK;
    if (target.version)
      attach.specificationVersion =
          *target.version == "1.0" ? tosa::SpecificationVersion::V_1_0
                                   : tosa::SpecificationVersion::V_1_1_DRAFT;
    attach.profiles.assign(target.profiles.begin(), target.profiles.end());
    attach.extensions.assign(target.extensions.begin(),
                             target.extensions.end());
    pm.addPass(tosa::createTosaAttachTarget(attach));
  }
  tosa::TosaValidationOptions validation;
  validation.strictOpSpecAlignment = target.strict;
  pm.addPass(tosa::createTosaValidation(validation));
  // A failure is the errors the pass reported (through the handler).
  (void)pm.run(module);
  EffectiveTarget used = effectiveTarget(module);
  if (own)
    module->setAttr(key, own);
  else
    module->removeAttr(key);
  return used;
}

/// The names in the first `[...]` of `message`.
static std::vector<std::string> bracketed(std::string_view message) {
  std::vector<std::string> out;
  size_t open = message.find('['), close = message.find(']', open);
  if (open == std::string_view::npos || close == std::string_view::npos)
    return out;
  llvm::SmallVector<llvm::StringRef> parts;
  llvm::StringRef(message.substr(open + 1, close - open - 1))
      .split(parts, ',', -1, false);
  for (llvm::StringRef p : parts)
    out.push_back(p.trim().str());
  return out;
}

ValidationRule classifyValidation(std::string_view message,
                                  const EffectiveTarget &target) {
  llvm::StringRef m(message.data(), message.size());
  std::string against = " (target: " + target.describe() + ")";
  if (m.contains("level check"))
    return {"tosa-level", "TOSA level " + target.level +
                              ": the bounds on sizes, ranks and attributes "
                              "that level sets" +
                              against};
  if (m.contains("did not align with any profile or extension"))
    return {"tosa-data-types",
            "the operator's supported data types: no profile or extension "
            "of the specification allows this combination" +
                against};
  if (m.contains("the target specification version"))
    return {"tosa-version", "the specification version the op needs" + against};
  if (m.contains("not enabled in target") || m.contains("requires extension")) {
    std::vector<std::string> names = bracketed(message);
    bool profiles = !names.empty() && llvm::all_of(names, [](const auto &n) {
      return llvm::is_contained(tosaProfiles(), n);
    });
    std::string which = llvm::join(names, " or ");
    return profiles ? ValidationRule{"tosa-profile",
                                     "profile " + which +
                                         " (the op or its data types belong "
                                         "to it)" +
                                         against}
                    : ValidationRule{"tosa-extension",
                                     "extension " + which +
                                         " (the op or its data types need "
                                         "it)" +
                                         against};
  }
  return {"tosa-spec",
          "a rule of the TOSA specification checked by tosa-validate" +
              against};
}

} // namespace tosa_lsp
