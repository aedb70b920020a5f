//===- Run.cpp - JIT-run a function on inputs -----------------------------===//

#include "Run.h"

#include "LoweringIR.h"

#include "mlir/ExecutionEngine/ExecutionEngine.h"
#include "mlir/ExecutionEngine/OptUtils.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/TargetSelect.h"

#include <cstdlib>
#include <cstring>
#include <random>

using namespace mlir;

namespace tosa_lsp {
namespace {

enum class Kind { F32, F64, I1, I8, I16, I32, I64 };

std::optional<Kind> kindOf(Type t) {
  if (t.isF32())
    return Kind::F32;
  if (t.isF64())
    return Kind::F64;
  if (auto i = dyn_cast<IntegerType>(t))
    switch (i.getWidth()) {
    case 1:
      return Kind::I1;
    case 8:
      return Kind::I8;
    case 16:
      return Kind::I16;
    case 32:
      return Kind::I32;
    case 64:
      return Kind::I64;
    }
  return std::nullopt;
}

size_t byteWidth(Kind k) {
  switch (k) {
  case Kind::F32:
  case Kind::I32:
    return 4;
  case Kind::F64:
  case Kind::I64:
    return 8;
  case Kind::I16:
    return 2;
  case Kind::I1:
  case Kind::I8:
    return 1;
  }
  return 1;
}

bool isFloat(Kind k) { return k == Kind::F32 || k == Kind::F64; }

void store(Kind k, char *p, double v) {
  switch (k) {
  case Kind::F32: {
    float f = static_cast<float>(v);
    std::memcpy(p, &f, 4);
    return;
  }
  case Kind::F64:
    std::memcpy(p, &v, 8);
    return;
  case Kind::I1:
    *p = v != 0;
    return;
  case Kind::I8:
    *reinterpret_cast<int8_t *>(p) = static_cast<int8_t>(v);
    return;
  case Kind::I16: {
    int16_t x = static_cast<int16_t>(v);
    std::memcpy(p, &x, 2);
    return;
  }
  case Kind::I32: {
    int32_t x = static_cast<int32_t>(v);
    std::memcpy(p, &x, 4);
    return;
  }
  case Kind::I64: {
    int64_t x = static_cast<int64_t>(v);
    std::memcpy(p, &x, 8);
    return;
  }
  }
}

llvm::json::Value load(Kind k, const char *p) {
  switch (k) {
  case Kind::F32: {
    float f;
    std::memcpy(&f, p, 4);
    return static_cast<double>(f);
  }
  case Kind::F64: {
    double d;
    std::memcpy(&d, p, 8);
    return d;
  }
  case Kind::I1:
    return *p != 0;
  case Kind::I8:
    return static_cast<int64_t>(*reinterpret_cast<const int8_t *>(p));
  case Kind::I16: {
    int16_t x;
    std::memcpy(&x, p, 2);
    return static_cast<int64_t>(x);
  }
  case Kind::I32: {
    int32_t x;
    std::memcpy(&x, p, 4);
    return static_cast<int64_t>(x);
  }
  case Kind::I64: {
    int64_t x;
    std::memcpy(&x, p, 8);
    return x;
  }
  }
  return nullptr;
}

/// A dense row-major input and its memref descriptor.
struct Input {
  Kind kind;
  std::vector<int64_t> shape;
  std::vector<char> data;
  std::vector<int64_t> descriptor; // alloc, aligned, offset, sizes, strides
  void *descriptorPtr = nullptr;

  void finish() {
    size_t r = shape.size();
    descriptor.assign(3 + 2 * r, 0);
    int64_t ptr = reinterpret_cast<int64_t>(data.data());
    descriptor[0] = descriptor[1] = ptr;
    int64_t stride = 1;
    for (size_t i = r; i-- > 0;) {
      descriptor[3 + i] = shape[i];
      descriptor[3 + r + i] = stride;
      stride *= shape[i];
    }
    descriptorPtr = descriptor.data();
  }
};

/// Shape of a nested JSON list; error when ragged.
bool shapeOf(const llvm::json::Value &v, std::vector<int64_t> &shape,
             size_t depth, std::string &error) {
  const llvm::json::Array *a = v.getAsArray();
  if (!a) {
    if (depth != shape.size() && !shape.empty()) {
      error = "ragged nested list";
      return false;
    }
    return true;
  }
  if (depth == shape.size())
    shape.push_back(static_cast<int64_t>(a->size()));
  else if (shape[depth] != static_cast<int64_t>(a->size())) {
    error = "ragged nested list";
    return false;
  }
  for (const llvm::json::Value &e : *a)
    if (!shapeOf(e, shape, depth + 1, error))
      return false;
  return true;
}

bool flatten(const llvm::json::Value &v, Input &in, size_t &index,
             std::string &error) {
  if (const llvm::json::Array *a = v.getAsArray()) {
    for (const llvm::json::Value &e : *a)
      if (!flatten(e, in, index, error))
        return false;
    return true;
  }
  double x;
  if (auto d = v.getAsNumber())
    x = *d;
  else if (auto b = v.getAsBoolean())
    x = *b;
  else {
    error = "inputs must be numbers, booleans or nested lists of them";
    return false;
  }
  store(in.kind, in.data.data() + index * byteWidth(in.kind), x);
  ++index;
  return true;
}

llvm::json::Value toJSON(Kind k, const char *base, const int64_t *sizes,
                         const int64_t *strides, size_t rank, size_t dim) {
  if (dim == rank)
    return load(k, base);
  llvm::json::Array out;
  for (int64_t i = 0; i < sizes[dim]; ++i)
    out.push_back(toJSON(k, base + i * strides[dim] * byteWidth(k), sizes,
                         strides, rank, dim + 1));
  return out;
}

} // namespace

RunResult runFunction(const std::string &text, const std::string &path,
                      const RunOptions &options) {
  RunResult r;
  if (options.function.empty()) {
    r.errors.push_back("tosa-lsp: error: run needs --function");
    return r;
  }
  // Lower exactly like `compile`.
  detail::LoweredSection ls;
  if (!detail::lowerForNative(text, path, options.function, options.mode,
                              /*strided=*/false, ls, r.errors))
    return r;
  auto sigIt = ls.signatures.find(options.function);
  if (sigIt == ls.signatures.end()) {
    r.errors.push_back(path + ": error: @" + options.function +
                       " is not a public function with a body");
    return r;
  }
  FunctionType sig = sigIt->second;

  // Inputs: JSON, or random with the given shapes.
  std::vector<Input> inputs(sig.getNumInputs());
  llvm::json::Array given;
  if (!options.inputs.empty()) {
    llvm::Expected<llvm::json::Value> parsed =
        llvm::json::parse(options.inputs);
    if (!parsed) {
      r.errors.push_back("tosa-lsp: error: --inputs is not valid JSON: " +
                         llvm::toString(parsed.takeError()));
      return r;
    }
    if (auto *a = parsed->getAsArray())
      given = *a;
    if (given.size() != sig.getNumInputs()) {
      r.errors.push_back("tosa-lsp: error: @" + options.function + " takes " +
                         std::to_string(sig.getNumInputs()) +
                         " arguments; --inputs must be a JSON array of that "
                         "many values");
      return r;
    }
  }
  std::mt19937_64 rng(options.seed);
  llvm::json::Array echoed;
  for (unsigned i = 0; i < sig.getNumInputs(); ++i) {
    auto type = dyn_cast<RankedTensorType>(sig.getInput(i));
    std::optional<Kind> kind =
        type ? kindOf(type.getElementType()) : std::nullopt;
    if (!kind) {
      r.errors.push_back("tosa-lsp: error: argument #" + std::to_string(i) +
                         " must be a ranked tensor of f32, f64, i1, i8, i16, "
                         "i32 or i64");
      return r;
    }
    Input &in = inputs[i];
    in.kind = *kind;
    std::string error;
    if (!given.empty()) {
      if (!shapeOf(given[i], in.shape, 0, error)) {
        r.errors.push_back("tosa-lsp: error: argument #" + std::to_string(i) +
                           ": " + error);
        return r;
      }
    } else {
      // Dynamic dims from --shape, else 2.
      std::vector<int64_t> want;
      if (i < options.shapes.size()) {
        llvm::SmallVector<llvm::StringRef> parts;
        llvm::StringRef(options.shapes[i]).split(parts, 'x', -1, false);
        for (llvm::StringRef p : parts) {
          int64_t v;
          if (p.getAsInteger(10, v) || v < 0) {
            r.errors.push_back("tosa-lsp: error: bad --shape '" +
                               options.shapes[i] + "' (expected e.g. 2x3)");
            return r;
          }
          want.push_back(v);
        }
      }
      for (int64_t d = 0; d < type.getRank(); ++d)
        in.shape.push_back(d < static_cast<int64_t>(want.size()) ? want[d]
                           : type.isDynamicDim(d) ? 2
                                                  : type.getDimSize(d));
    }
    if (static_cast<int64_t>(in.shape.size()) != type.getRank()) {
      r.errors.push_back("tosa-lsp: error: argument #" + std::to_string(i) +
                         " has rank " + std::to_string(type.getRank()) +
                         " but the input has rank " +
                         std::to_string(in.shape.size()));
      return r;
    }
    int64_t count = 1;
    for (int64_t d = 0; d < type.getRank(); ++d) {
      if (!type.isDynamicDim(d) && type.getDimSize(d) != in.shape[d]) {
        r.errors.push_back("tosa-lsp: error: argument #" + std::to_string(i) +
                           " dimension " + std::to_string(d) + " must be " +
                           std::to_string(type.getDimSize(d)) +
                           ", the input "
                           "has " +
                           std::to_string(in.shape[d]));
        return r;
      }
      count *= in.shape[d];
    }
    in.data.assign(std::max<int64_t>(count, 1) * byteWidth(in.kind), 0);
    if (!given.empty()) {
      size_t index = 0;
      if (!flatten(given[i], in, index, error)) {
        r.errors.push_back("tosa-lsp: error: argument #" + std::to_string(i) +
                           ": " + error);
        return r;
      }
    } else {
      for (int64_t e = 0; e < count; ++e) {
        double v = isFloat(in.kind)
                       ? std::uniform_real_distribution<double>(-1, 1)(rng)
                   : in.kind == Kind::I1
                       ? double(rng() % 2)
                       : double(static_cast<int64_t>(rng() % 21) - 10);
        store(in.kind, in.data.data() + e * byteWidth(in.kind), v);
      }
    }
    in.finish();
    std::vector<int64_t> strides(in.descriptor.begin() + 3 + in.shape.size(),
                                 in.descriptor.end());
    echoed.push_back(toJSON(in.kind, in.data.data(), in.shape.data(),
                            strides.data(), in.shape.size(), 0));
  }

  // Results: one descriptor per result, laid out back to back (all fields
  // are 8 bytes, so there is no padding).
  std::vector<std::optional<Kind>> resultKinds;
  std::vector<size_t> resultRanks, resultOffsets;
  size_t words = 0;
  for (Type t : sig.getResults()) {
    auto type = dyn_cast<RankedTensorType>(t);
    std::optional<Kind> kind =
        type ? kindOf(type.getElementType()) : std::nullopt;
    if (!kind) {
      r.errors.push_back("tosa-lsp: error: results must be ranked tensors of "
                         "f32, f64, i1, i8, i16, i32 or i64");
      return r;
    }
    resultKinds.push_back(kind);
    resultRanks.push_back(type.getRank());
    resultOffsets.push_back(words);
    words += 3 + 2 * type.getRank();
  }
  std::vector<int64_t> results(std::max<size_t>(words, 1), 0);

  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  ExecutionEngineOptions engineOpts;
  auto transformer = makeOptimizingTransformer(options.optLevel, 0, nullptr);
  engineOpts.transformer = transformer;
  std::string runtime =
      std::string(TOSA_LSP_MLIR_LIBDIR) + "/libmlir_c_runner_utils.so";
  llvm::SmallVector<llvm::StringRef> libs = {runtime};
  engineOpts.sharedLibPaths = libs;
  auto engine = ExecutionEngine::create(*ls.module, engineOpts);
  if (!engine) {
    r.errors.insert(r.errors.end(), ls.errors.begin(), ls.errors.end());
    r.errors.push_back("tosa-lsp: error: JIT compilation failed: " +
                       llvm::toString(engine.takeError()));
    return r;
  }
  void *resultPtr = results.data();
  llvm::SmallVector<void *> args;
  if (sig.getNumResults())
    args.push_back(&resultPtr);
  for (Input &in : inputs)
    args.push_back(&in.descriptorPtr);
  if (llvm::Error e =
          (*engine)->invokePacked("_mlir_ciface_" + options.function, args)) {
    r.errors.push_back("tosa-lsp: error: calling @" + options.function +
                       " failed: " + llvm::toString(std::move(e)));
    return r;
  }

  llvm::json::Array outs;
  for (size_t k = 0; k < resultKinds.size(); ++k) {
    const int64_t *d = results.data() + resultOffsets[k];
    size_t rank = resultRanks[k];
    char *aligned = reinterpret_cast<char *>(d[1]);
    const int64_t *sizes = d + 3, *strides = d + 3 + rank;
    llvm::json::Array shape;
    for (size_t i = 0; i < rank; ++i)
      shape.push_back(sizes[i]);
    outs.push_back(llvm::json::Object{
        {"shape", std::move(shape)},
        {"data",
         toJSON(*resultKinds[k], aligned + d[2] * byteWidth(*resultKinds[k]),
                sizes, strides, rank, 0)}});
    // The callee allocated it; unless it returned an input buffer.
    bool isInput = false;
    for (Input &in : inputs)
      isInput |= reinterpret_cast<int64_t>(in.data.data()) == d[0];
    if (!isInput)
      std::free(reinterpret_cast<void *>(d[0]));
  }
  llvm::json::Object out{{"function", options.function},
                         {"inputs", std::move(echoed)},
                         {"results", std::move(outs)}};
  std::string s;
  llvm::raw_string_ostream os(s);
  os << llvm::formatv("{0:1}", llvm::json::Value(std::move(out)));
  os.flush();
  r.json = s;
  r.ok = true;
  return r;
}

} // namespace tosa_lsp
