//===- Elided.cpp - constants whose data was left out of the file ---------===//

#include "Elided.h"

#include "LoweringIR.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "llvm/ADT/APFloat.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <cstring>
#include <random>

using namespace mlir;

namespace tosa_lsp {

std::optional<ElidedFill> parseElidedFill(const std::string &s) {
  llvm::StringRef text(s);
  if (text == "zeros")
    return ElidedFill{ElidedData::Zeros, 0};
  if (text == "ones")
    return ElidedFill{ElidedData::Ones, 0};
  if (!text.consume_front("random"))
    return std::nullopt;
  ElidedFill fill{ElidedData::Random, 0};
  if (text.empty())
    return fill;
  if (!text.consume_front(":") || text.empty() ||
      text.getAsInteger(10, fill.seed))
    return std::nullopt;
  return fill;
}

namespace detail {
namespace {

/// The attribute's resource when it has no data (an elided one).
std::optional<StringRef> missingResource(Attribute attr) {
  auto res = dyn_cast<DenseResourceElementsAttr>(attr);
  if (!res || res.getRawHandle().getBlob())
    return std::nullopt;
  return res.getRawHandle().getKey();
}

/// The bytes of `n` elements of `elem` (a float or an integer type of a
/// whole number of bytes), little-endian as DenseElementsAttr stores them.
std::vector<char> randomBytes(Type elem, int64_t n, std::mt19937_64 &rng) {
  unsigned bits = elem.getIntOrFloatBitWidth(), bytes = bits / 8;
  std::vector<char> out(static_cast<size_t>(n) * bytes);
  auto store = [&](int64_t i, uint64_t v) {
    for (unsigned b = 0; b < bytes; ++b)
      out[i * bytes + b] = static_cast<char>(v >> (8 * b));
  };
  auto floatType = dyn_cast<FloatType>(elem);
  std::uniform_real_distribution<double> unit(-1, 1);
  for (int64_t i = 0; i < n; ++i) {
    if (elem.isF32()) {
      float f = static_cast<float>(unit(rng));
      uint32_t v;
      std::memcpy(&v, &f, sizeof v);
      store(i, v);
    } else if (floatType) {
      llvm::APFloat f(unit(rng));
      bool lost;
      f.convert(floatType.getFloatSemantics(),
                llvm::APFloat::rmNearestTiesToEven, &lost);
      store(i, f.bitcastToAPInt().getZExtValue());
    } else {
      store(i, static_cast<uint64_t>(static_cast<int64_t>(rng() % 21) - 10));
    }
  }
  return out;
}

/// Data for an elided constant of `type`; null when its element type has
/// no such data (the constant is then left, and reported).
DenseElementsAttr filled(ShapedType type, const ElidedFill &fill,
                         std::mt19937_64 &rng) {
  Type elem = type.getElementType();
  bool isFloat = isa<FloatType>(elem), isInt = isa<IntegerType>(elem);
  if (!type.hasStaticShape() || (!isFloat && !isInt))
    return {};
  if (fill.how != ElidedData::Random || elem.isInteger(1)) {
    bool one = fill.how == ElidedData::Ones ||
               (fill.how == ElidedData::Random && rng() % 2);
    if (elem.isInteger(1) && fill.how == ElidedData::Random) {
      llvm::SmallVector<bool> bits(type.getNumElements());
      for (bool &b : bits)
        b = rng() % 2;
      return DenseElementsAttr::get(type, llvm::ArrayRef<bool>(bits));
    }
    Attribute value = isFloat ? Attribute(FloatAttr::get(elem, one ? 1.0 : 0.0))
                              : Attribute(IntegerAttr::get(elem, one ? 1 : 0));
    return DenseElementsAttr::get(type, value);
  }
  if (elem.getIntOrFloatBitWidth() % 8 || elem.getIntOrFloatBitWidth() > 64)
    return {};
  std::vector<char> raw = randomBytes(elem, type.getNumElements(), rng);
  return DenseElementsAttr::getFromRawBuffer(type, raw);
}

std::string describe(Operation *op, NamedAttribute attr) {
  std::string s =
      op->getName().getStringRef().str() + " " + attr.getName().str() + " : ";
  llvm::raw_string_ostream os(s);
  cast<TypedAttr>(attr.getValue()).getType().print(os);
  return s;
}

} // namespace

llvm::Error
handleElided(ModuleOp module, const ElidedFill &fill, const std::string &path,
             const std::function<SourceDiagnostic(Location, std::string)> &at,
             std::vector<SourceDiagnostic> &kept, std::string &key) {
  kept.clear();
  key.clear();
  std::mt19937_64 rng(fill.seed);
  std::vector<SourceDiagnostic> unfillable;
  module->walk([&](Operation *op) {
    for (NamedAttribute attr : op->getAttrDictionary()) {
      std::optional<StringRef> missing = missingResource(attr.getValue());
      if (!missing)
        continue;
      if (key.empty())
        key = missing->str();
      SourceDiagnostic where = at(op->getLoc(), describe(op, attr));
      if (fill.how == ElidedData::Keep || fill.how == ElidedData::Refuse) {
        kept.push_back(std::move(where));
        continue;
      }
      auto type = cast<ShapedType>(cast<TypedAttr>(attr.getValue()).getType());
      if (DenseElementsAttr data = filled(type, fill, rng))
        op->setAttr(attr.getName(), data);
      else
        unfillable.push_back(std::move(where));
    }
  });
  if (!unfillable.empty()) {
    SourceDiagnostic d = unfillable.front();
    d.message = "cannot fill the elided data of " + d.message +
                " (--fill-elided fills static tensors of integers and floats)";
    return sourceErrors({d});
  }
  if (kept.empty() || fill.how == ElidedData::Keep)
    return llvm::Error::success();
  return sourceErrors({elidedSummary(kept, key, path)});
}

SourceDiagnostic elidedSummary(const std::vector<SourceDiagnostic> &elided,
                               const std::string &key,
                               const std::string &path) {
  SourceDiagnostic d = elided.front();
  d.message = std::to_string(elided.size()) +
              (elided.size() == 1 ? " constant has" : " constants have") +
              " elided data: dense_resource<" + key +
              ">; compiled code needs their values (--fill-elided=" +
              kElidedFillSyntax + " fills them, for shape and timing checks)";
  // The first few, as mlir-opt prints notes.
  constexpr size_t kListed = 5;
  for (size_t i = 0; i < elided.size() && i < kListed; ++i) {
    SourceDiagnostic note = elided[i];
    std::string line = note.str();
    // str() says "error:"; these are where the constants are.
    size_t e = line.find(": error: ");
    if (e != std::string::npos)
      line.replace(e, 9, ": note: elided: ");
    d.message += "\n" + line;
  }
  if (elided.size() > kListed)
    d.message += "\n" + path + ": note: and " +
                 std::to_string(elided.size() - kListed) + " more";
  return d;
}

} // namespace detail
} // namespace tosa_lsp
