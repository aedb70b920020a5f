//===- Errors.cpp - how the libraries report failure ----------------------===//

#include "Errors.h"

#include "llvm/Support/raw_ostream.h"

namespace tosa_lsp {

namespace {
class TopicCategory : public std::error_category {
public:
  const char *name() const noexcept override { return "tosa-lsp"; }
  std::string message(int topic) const override {
    switch (static_cast<ErrorTopic>(topic)) {
    case ErrorTopic::Function:
      return "a function is needed";
    case ErrorTopic::Inputs:
      return "bad argument values";
    case ErrorTopic::Shapes:
      return "bad argument shapes";
    case ErrorTopic::Output:
      return "an output path is needed";
    case ErrorTopic::OutputExists:
      return "the output exists";
    }
    return "unknown";
  }
};

const TopicCategory &topicCategory() {
  static const TopicCategory category;
  return category;
}
} // namespace

llvm::Error makeError(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

llvm::Error makeError(ErrorTopic topic, const llvm::Twine &message) {
  return llvm::createStringError(
      std::error_code(static_cast<int>(topic), topicCategory()), message);
}

std::optional<ErrorTopic> topicOf(const llvm::ErrorInfoBase &error) {
  // StringError returns its code; SourceErrors and others none of ours.
  std::error_code ec = error.convertToErrorCode();
  if (ec.category() != topicCategory())
    return std::nullopt;
  return static_cast<ErrorTopic>(ec.value());
}

std::string SourceDiagnostic::str() const {
  std::string s = file;
  if (line) {
    s += ":" + std::to_string(line);
    if (column)
      s += ":" + std::to_string(column);
  }
  return s + ": error: " + message;
}

char SourceErrors::ID = 0;

void SourceErrors::log(llvm::raw_ostream &os) const {
  for (size_t i = 0; i < diags.size(); ++i)
    os << (i ? "\n" : "") << diags[i].str();
}

std::error_code SourceErrors::convertToErrorCode() const {
  return llvm::inconvertibleErrorCode();
}

llvm::Error sourceErrors(std::vector<SourceDiagnostic> diagnostics) {
  if (diagnostics.empty())
    return llvm::Error::success();
  return llvm::make_error<SourceErrors>(std::move(diagnostics));
}

llvm::Error sourceError(const std::string &file, unsigned line, unsigned column,
                        const std::string &message) {
  return sourceErrors({SourceDiagnostic{file, line, column, message}});
}

} // namespace tosa_lsp
