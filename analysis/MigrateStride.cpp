//===- MigrateStride.cpp - windows whose padded size the stride divides ---===//
//
// Pre-MLIR-22 TOSA let a convolution or pool's padded input end part-way
// into a stride; MLIR 22 requires
// `(in - 1 + pad_before + pad_after - dilation * (k - 1)) % stride == 0`.
// The rows past the last window are never read (for avg_pool2d the divisor
// counts the window's non-pad elements, and the windows do not change), so
// lowering the trailing pad by the remainder keeps every output value;
// where that pad is smaller, the rest is sliced off the input's end.
//
//===----------------------------------------------------------------------===//

#include "MigrateSupport.h"

#include "mlir/IR/BuiltinTypes.h"

using namespace mlir;

namespace tosa_lsp::migrate {

namespace {

/// The window's geometry: spatial axes of the input, kernel sizes, and the
/// attributes as read (absent dilation: 1).
struct Window {
  std::vector<int64_t> axes, kernel, pad, stride, dilation;
};

std::optional<Window> windowOf(Operation *op, const NamedAttrList &attrs) {
  std::string name = tosaName(op);
  unsigned rank = name == "tosa.conv3d" ? 3 : 2;
  auto in = dyn_cast<RankedTensorType>(op->getOperand(0).getType());
  if (!in || in.getRank() != rank + 2)
    return std::nullopt;
  Window w;
  for (unsigned i = 0; i < rank; ++i)
    w.axes.push_back(i + 1);
  if (name == "tosa.max_pool2d" || name == "tosa.avg_pool2d") {
    std::optional<std::vector<int64_t>> k = intList(attrs.get("kernel"));
    if (!k)
      return std::nullopt;
    w.kernel = *k;
  } else {
    if (op->getNumOperands() < 2)
      return std::nullopt;
    auto wt = dyn_cast<RankedTensorType>(op->getOperand(1).getType());
    if (!wt || wt.getRank() != rank + 2)
      return std::nullopt;
    // conv2d/conv3d: [OC, K..., IC]; depthwise_conv2d: [KH, KW, C, M].
    unsigned first = name == "tosa.depthwise_conv2d" ? 0 : 1;
    for (unsigned i = 0; i < rank; ++i)
      w.kernel.push_back(wt.getDimSize(first + i));
  }
  std::optional<std::vector<int64_t>> pad = intList(attrs.get("pad")),
                                      stride = intList(attrs.get("stride"));
  if (!pad || !stride || pad->size() != 2 * rank || stride->size() != rank ||
      w.kernel.size() != rank)
    return std::nullopt;
  w.pad = *pad;
  w.stride = *stride;
  w.dilation.assign(rank, 1);
  if (Attribute d = attrs.get("dilation")) {
    std::optional<std::vector<int64_t>> dil = intList(d);
    if (!dil || dil->size() != rank)
      return std::nullopt;
    w.dilation = *dil;
  }
  return w;
}

} // namespace

bool hasStrideRule(llvm::StringRef name) {
  return name == "tosa.conv2d" || name == "tosa.depthwise_conv2d" ||
         name == "tosa.conv3d" || name == "tosa.avg_pool2d" ||
         name == "tosa.max_pool2d";
}

std::optional<bool> strideRemainders(Operation *op,
                                     const NamedAttrList &attrs) {
  std::optional<Window> w = windowOf(op, attrs);
  if (!w)
    return std::nullopt;
  auto in = cast<RankedTensorType>(op->getOperand(0).getType());
  for (size_t i = 0; i < w->axes.size(); ++i) {
    if (in.isDynamicDim(w->axes[i]) || ShapedType::isDynamic(w->kernel[i]) ||
        w->stride[i] <= 0)
      continue;
    int64_t total = in.getDimSize(w->axes[i]) - 1 + w->pad[2 * i] +
                    w->pad[2 * i + 1] - w->dilation[i] * (w->kernel[i] - 1);
    if (total >= 0 && total % w->stride[i] != 0)
      return true;
  }
  return false;
}

bool migrateStride(Rewrite &rw) {
  std::optional<Window> w = windowOf(rw.op, rw.attrs);
  if (!w)
    return false;
  auto in = cast<RankedTensorType>(rw.op->getOperand(0).getType());
  std::vector<int64_t> size(in.getShape().begin(), in.getShape().end());
  std::vector<int64_t> pad = w->pad;
  std::string what;
  static const char *kAfter[] = {"pad_bottom", "pad_right", "pad_back"};
  bool slice = false;
  for (size_t i = 0; i < w->axes.size(); ++i) {
    int64_t axis = w->axes[i];
    if (in.isDynamicDim(axis) || w->stride[i] <= 0)
      continue;
    int64_t total = in.getDimSize(axis) - 1 + pad[2 * i] + pad[2 * i + 1] -
                    w->dilation[i] * (w->kernel[i] - 1);
    int64_t rem = total >= 0 ? total % w->stride[i] : 0;
    if (rem == 0)
      continue;
    // conv3d's pads are [front, back, top, bottom, left, right].
    const char *after = w->axes.size() == 3 ? (i == 0   ? "pad_back"
                                               : i == 1 ? "pad_bottom"
                                                        : "pad_right")
                                            : kAfter[i];
    int64_t fromPad = std::min(rem, pad[2 * i + 1]);
    pad[2 * i + 1] -= fromPad;
    if (fromPad)
      what += (what.empty() ? "" : ", ") + std::string(after) + " -" +
              std::to_string(fromPad);
    if (rem > fromPad) {
      size[axis] -= rem - fromPad;
      slice = true;
      what += (what.empty() ? "" : ", ") + std::to_string(rem - fromPad) +
              " trailing element(s) of input axis " + std::to_string(axis) +
              " sliced off";
    }
  }
  if (what.empty())
    return false;
  if (slice) {
    if (!in.hasStaticShape()) {
      rw.why = "the padded input does not divide by the stride and slicing "
               "its end needs a static input shape";
      return false;
    }
    std::string input = rw.operands[0], inputType = rw.operandTypes[0];
    std::string start =
        rw.shapeConstant(std::vector<int64_t>(size.size(), 0), "start");
    std::string len = rw.shapeConstant(size, "size");
    auto cut = RankedTensorType::get(size, in.getElementType());
    std::string name = rw.freshName("sliced");
    std::string shape = "!tosa.shape<" + std::to_string(size.size()) + ">";
    rw.prologue += name + " = tosa.slice " + input + ", " + start + ", " + len +
                   " : (" + inputType + ", " + shape + ", " + shape + ") -> " +
                   print(cut) + "\n" + rw.indent;
    rw.operands[0] = name;
    rw.operandTypes[0] = print(cut);
  }
  rw.attrs.set("pad", DenseI64ArrayAttr::get(rw.op->getContext(), pad));
  rw.changes.push_back("padded size made divisible by the stride (" + what +
                       "; the rows dropped are past the last window)");
  return true;
}

} // namespace tosa_lsp::migrate
