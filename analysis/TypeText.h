//===- TypeText.h - tensor types read from their text -----------*- C++ -*-===//
//
// The editing features read types the analysis printed (or the user typed)
// without MLIR: the element type of a `tensor<...>`, its shape, and a
// tensor type written back from them.
//
//===----------------------------------------------------------------------===//

#ifndef TOSA_LSP_ANALYSIS_TYPETEXT_H
#define TOSA_LSP_ANALYSIS_TYPETEXT_H

#include "Broadcast.h"

#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace tosa_lsp {

/// `f32` of `tensor<2x?xf32>` or `tensor<f32>`; nullopt for a text that is
/// not a `tensor<...>`.
std::optional<std::string_view> tensorElementType(std::string_view type);

/// `tensor<2x?xf32>` as its shape and element type; nullopt unless a
/// ranked tensor of a plain element type.
std::optional<std::pair<Shape, std::string>> tensorShape(std::string_view type);

/// `tensor<2x?xf32>` from {2, kDynamic} and `f32`.
std::string tensorTypeText(const Shape &shape, std::string_view element);

} // namespace tosa_lsp

#endif // TOSA_LSP_ANALYSIS_TYPETEXT_H
