//===- Run.cpp - JIT-run a function on inputs -----------------------------===//

#include "Run.h"

#include "Config.h"
#include "LoweringIR.h"
#include "RunMemRef.h"
#include "Runtime.h"

#include "mlir/ExecutionEngine/CRunnerUtils.h"
#include "mlir/ExecutionEngine/ExecutionEngine.h"
#include "mlir/ExecutionEngine/MemRefUtils.h"
#include "mlir/ExecutionEngine/OptUtils.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/TargetSelect.h"

#include <cerrno>
#include <cmath>
#include <csignal>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <limits>
#include <memory>
#include <random>
#include <type_traits>
#include <utility>

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace mlir;

namespace tosa_lsp {
using detail::ElementKind;
using detail::kMaxRunRank;

namespace {

std::optional<ElementKind> kindOf(Type t) {
  if (t.isF32())
    return ElementKind::F32;
  if (t.isF64())
    return ElementKind::F64;
  // ui8 and si8 lower to nothing bufferizable (tosa's unsigned ops).
  if (auto i = dyn_cast<IntegerType>(t); i && i.isSignless())
    switch (i.getWidth()) {
    case 1:
      return ElementKind::I1;
    case 8:
      return ElementKind::I8;
    case 16:
      return ElementKind::I16;
    case 32:
      return ElementKind::I32;
    case 64:
      return ElementKind::I64;
    }
  return std::nullopt;
}

/// How deep --inputs may nest: well above any rank run supports.
constexpr unsigned kMaxInputNesting = 64;

bool isFloat(ElementKind k) {
  return k == ElementKind::F32 || k == ElementKind::F64;
}

uint64_t bytesPerElement(ElementKind k) {
  switch (k) {
  case ElementKind::I1:
  case ElementKind::I8:
    return 1;
  case ElementKind::I16:
    return 2;
  case ElementKind::F32:
  case ElementKind::I32:
    return 4;
  case ElementKind::F64:
  case ElementKind::I64:
    return 8;
  }
  llvm_unreachable("unknown element kind");
}

/// The bytes of a buffer of `shape`, nullopt when that overflows.
std::optional<uint64_t> bufferBytes(ElementKind k,
                                    llvm::ArrayRef<int64_t> shape) {
  uint64_t bytes = bytesPerElement(k);
  bool overflow = false;
  for (int64_t d : shape)
    if (d < 0 ||
        (bytes = llvm::SaturatingMultiply(bytes, uint64_t(d), &overflow),
         overflow))
      return std::nullopt;
  return bytes;
}

std::string shapeText(llvm::ArrayRef<int64_t> shape) {
  std::string s;
  for (int64_t d : shape)
    s += (s.empty() ? "" : "x") + std::to_string(d);
  return s.empty() ? "scalar" : s;
}

std::string sizeText(uint64_t bytes) {
  return bytes % (1ull << 30) == 0 ? std::to_string(bytes >> 30) + " GiB"
                                   : std::to_string(bytes) + " bytes";
}

template <typename T, typename Fn, int... Ranks>
bool withRank(int64_t rank, Fn &fn, std::integer_sequence<int, Ranks...>) {
  return ((rank == Ranks &&
           (fn(T(), std::integral_constant<int, Ranks>()), true)) ||
          ...);
}

/// Calls `fn(T(), std::integral_constant<int, rank>())`, T the C type of
/// `kind`'s elements: descriptors are StridedMemRefType<T, rank>, whose rank
/// is a template argument. False when rank is above kMaxRunRank.
template <typename Fn>
bool withDescriptorType(ElementKind kind, int64_t rank, Fn &&fn) {
  auto ranks = std::make_integer_sequence<int, kMaxRunRank + 1>();
  switch (kind) {
  case ElementKind::F32:
    return withRank<float>(rank, fn, ranks);
  case ElementKind::F64:
    return withRank<double>(rank, fn, ranks);
  case ElementKind::I1:
  case ElementKind::I8:
    return withRank<int8_t>(rank, fn, ranks);
  case ElementKind::I16:
    return withRank<int16_t>(rank, fn, ranks);
  case ElementKind::I32:
    return withRank<int32_t>(rank, fn, ranks);
  case ElementKind::I64:
    return withRank<int64_t>(rank, fn, ranks);
  }
  llvm_unreachable("unknown element kind");
}

// JSON numbers are doubles; i1 is stored as a 0 or 1 byte.
template <typename T> T fromDouble(ElementKind k, double v) {
  if (k == ElementKind::I1)
    return v != 0;
  return static_cast<T>(v);
}

template <typename T> llvm::json::Value toValue(ElementKind k, T x) {
  if constexpr (std::is_floating_point_v<T>) {
    // JSON has no NaN or infinity; llvm::json would print a bare `nan`.
    if (std::isnan(x))
      return "nan";
    if (std::isinf(x))
      return x > 0 ? "inf" : "-inf";
    return static_cast<double>(x);
  } else {
    if (k == ElementKind::I1)
      return x != 0;
    return static_cast<int64_t>(x);
  }
}

/// Nested lists in index order; DynamicMemRefType applies offset and strides.
template <typename T>
llvm::json::Value toJSON(ElementKind k, DynamicMemRefType<T> m) {
  if (m.rank == 0)
    return toValue(k, *m);
  llvm::json::Array out;
  for (int64_t i = 0; i < m.sizes[0]; ++i)
    out.push_back(toJSON(k, m[i]));
  return out;
}

/// A dense row-major input and MLIR's descriptor of a buffer holding it.
struct Input {
  ElementKind kind;
  std::vector<int64_t> shape;
  std::vector<double> values;  // row-major, before conversion to `kind`
  std::shared_ptr<void> owner; // an OwningMemRef<T, rank>
  void *descriptor = nullptr;  // its StridedMemRefType<T, rank>
  llvm::json::Value echo = nullptr;

  /// Allocates the buffer and its descriptor; the rank was checked.
  void materialize() {
    bool ok = withDescriptorType(kind, shape.size(), [&](auto elt, auto rank) {
      using T = decltype(elt);
      auto memref =
          std::make_shared<OwningMemRef<T, decltype(rank)::value>>(shape);
      T *data = (*memref)->data;
      // Zero-filled; a list with a bare number where the others have lists
      // (e.g. [3, [1, 2]]) gives fewer values than elements.
      int64_t count = 1;
      for (int64_t d : shape)
        count *= d;
      for (int64_t e = 0; e < count && e < int64_t(values.size()); ++e)
        data[e] = fromDouble<T>(kind, values[e]);
      descriptor = &**memref;
      echo = toJSON(kind, DynamicMemRefType<T>(**memref));
      owner = std::move(memref);
    });
    assert(ok && "rank checked before");
    (void)ok;
  }
};

/// Shape of a nested JSON list; error when ragged.
/// The shape of a nested list: the sizes along its first elements, then
/// checked everywhere (`[5, [1, 2, 3]]` is ragged, whichever comes first).
bool shapeOf(const llvm::json::Value &v, std::vector<int64_t> &shape,
             size_t depth, std::string &error) {
  shape.clear();
  for (const llvm::json::Value *e = &v; const auto *a = e->getAsArray();) {
    shape.push_back(static_cast<int64_t>(a->size()));
    if (a->empty())
      break;
    e = &a->front();
  }
  std::function<bool(const llvm::json::Value &, size_t)> check =
      [&](const llvm::json::Value &e, size_t d) {
        const llvm::json::Array *a = e.getAsArray();
        if (!a)
          return d == shape.size();
        if (d >= shape.size() || shape[d] != static_cast<int64_t>(a->size()))
          return false;
        return llvm::all_of(
            *a, [&](const llvm::json::Value &x) { return check(x, d + 1); });
      };
  if (!check(v, depth)) {
    error = "ragged nested list";
    return false;
  }
  return true;
}

const char *typeName(ElementKind k) {
  switch (k) {
  case ElementKind::F32:
    return "f32";
  case ElementKind::F64:
    return "f64";
  case ElementKind::I1:
    return "i1";
  case ElementKind::I8:
    return "i8";
  case ElementKind::I16:
    return "i16";
  case ElementKind::I32:
    return "i32";
  case ElementKind::I64:
    return "i64";
  }
  llvm_unreachable("unknown element kind");
}

/// Why `d` is no value of the integer kind `k`; empty when it is one.
/// A C cast would wrap 300 to 44 in i8 and cut 3.7 to 3.
std::string integerProblem(ElementKind k, double d) {
  // As written for 3.7 (17 digits would show 3.7000000000000002).
  std::string text;
  llvm::raw_string_ostream(text) << llvm::format("%.15g", d);
  if (k == ElementKind::I1)
    return d == 0 || d == 1 ? ""
                            : text + " is not a boolean (i1 takes true, "
                                     "false, 0 or 1)";
  if (d != std::trunc(d))
    return text + " is not an integer (" + typeName(k) + ")";
  unsigned bits = bytesPerElement(k) * 8;
  double limit = std::ldexp(1.0, bits - 1); // exact: a power of two
  if (d < -limit || d >= limit) {
    uint64_t max = (uint64_t(1) << (bits - 1)) - 1;
    return text + " is out of range for " + typeName(k) + " (-" +
           std::to_string(max + 1) + " to " + std::to_string(max) + ")";
  }
  return "";
}

/// The values of a nested list, row-major. Float elements also take the
/// strings results print for what JSON cannot write: "nan", "inf", "-inf";
/// integer elements must be integers in the type's range. `at` is the
/// index of `v`; on failure, the index of the element at fault.
bool flatten(const llvm::json::Value &v, ElementKind kind,
             std::vector<double> &values, std::vector<size_t> &at,
             std::string &error) {
  if (const llvm::json::Array *a = v.getAsArray()) {
    at.push_back(0);
    for (const llvm::json::Value &e : *a) {
      if (!flatten(e, kind, values, at, error))
        return false;
      ++at.back();
    }
    at.pop_back();
    return true;
  }
  auto fail = [&](const std::string &why) {
    error = why;
    return false;
  };
  std::optional<llvm::StringRef> str = v.getAsString();
  if (str && isFloat(kind) &&
      (*str == "nan" || *str == "inf" || *str == "-inf")) {
    double inf = std::numeric_limits<double>::infinity();
    values.push_back(*str == "nan"   ? std::numeric_limits<double>::quiet_NaN()
                     : *str == "inf" ? inf
                                     : -inf);
  } else if (auto d = v.getAsNumber()) {
    if (!isFloat(kind))
      if (std::string problem = integerProblem(kind, *d); !problem.empty())
        return fail(problem);
    values.push_back(*d);
  } else if (auto b = v.getAsBoolean()) {
    values.push_back(*b);
  } else {
    return fail(isFloat(kind)
                    ? "inputs must be numbers, \"nan\", \"inf\", \"-inf\", "
                      "booleans or nested lists of them"
                    : "inputs must be numbers, booleans or nested lists of "
                      "them");
  }
  return true;
}

/// The size random inputs get for a dynamic dimension --shape leaves open.
constexpr int64_t kChosenSize = 2;

/// Says which sizes `run` chose for argument `arg` (dims `chosen` of
/// `shape`), and records them in `json` ({"argument", "dim", "size"}).
std::string choiceNote(const std::string &function, unsigned arg,
                       RankedTensorType type, llvm::ArrayRef<int64_t> shape,
                       llvm::ArrayRef<int64_t> chosen,
                       llvm::json::Array &json) {
  std::string typeText, dims;
  llvm::raw_string_ostream os(typeText);
  type.print(os);
  for (int64_t d : chosen) {
    dims += (dims.empty() ? "" : ", ") + std::to_string(d);
    json.push_back(
        llvm::json::Object{{"argument", arg}, {"dim", d}, {"size", shape[d]}});
  }
  return "@" + function + " argument #" + std::to_string(arg) + " (" +
         typeText + ") runs as " + shapeText(shape) + ": size " +
         std::to_string(kChosenSize) + " chosen for dynamic dimension" +
         (chosen.size() > 1 ? "s " : " ") + dims +
         " (--shape=" + shapeText(shape) + " sets it)";
}

llvm::Error rankError(const std::string &what, int64_t rank) {
  return makeError(what + " has rank " + std::to_string(rank) +
                   "; run supports ranks up to " + std::to_string(kMaxRunRank));
}

/// Why `sig` cannot run: an argument or result of an element type or rank
/// run has no buffers for. Checked before the lowering, which may fail
/// on such types with a message about bufferization instead.
llvm::Error unsupportedSignature(FunctionType sig) {
  auto check = [](Type t, const std::string &what) -> llvm::Error {
    auto type = dyn_cast<RankedTensorType>(t);
    if (type && kindOf(type.getElementType()))
      return type.getRank() <= kMaxRunRank ? llvm::Error::success()
                                           : rankError(what, type.getRank());
    std::string text;
    llvm::raw_string_ostream os(text);
    t.print(os);
    return makeError(what + " has type " + text +
                     ": run takes ranked tensors of f32, f64, i1, i8, i16, "
                     "i32 or i64");
  };
  for (auto [i, t] : llvm::enumerate(sig.getInputs()))
    if (llvm::Error e = check(t, "argument #" + std::to_string(i)))
      return e;
  for (auto [i, t] : llvm::enumerate(sig.getResults()))
    if (llvm::Error e = check(t, "result #" + std::to_string(i)))
      return e;
  return llvm::Error::success();
}

std::string readAll(FILE *f) {
  std::string s;
  std::rewind(f);
  char buf[65536];
  for (size_t n; (n = std::fread(buf, 1, sizeof buf, f)) > 0;)
    s.append(buf, n);
  return s;
}

/// Runs `work` (the compiled function and the printing of its results) in
/// a child process: an out-of-bounds write there (an index out of range,
/// mismatched batch sizes) cannot corrupt this process, which ends with a
/// message whatever happens. The child's stdout, where a failed
/// `cf.assert` prints, is captured: such an abort is reported as the
/// check that failed, and this process' stdout stays empty.
llvm::Expected<std::string> runInChild(const std::string &function,
                                       llvm::function_ref<std::string()> work,
                                       const std::string &crashHint) {
  FILE *results = std::tmpfile(), *printed = std::tmpfile();
  if (!results || !printed) {
    if (results)
      std::fclose(results);
    return makeError("cannot run @" + function + ": no temporary file (" +
                     std::strerror(errno) + ")");
  }
  std::fflush(nullptr);
  pid_t pid = fork();
  if (pid == 0) {
    // The crash handlers of this process would resume the parent's code.
    for (int sig : {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT, SIGTRAP})
      std::signal(sig, SIG_DFL);
    struct rlimit noCore = {0, 0};
    setrlimit(RLIMIT_CORE, &noCore);
    dup2(fileno(printed), STDOUT_FILENO);
    std::string json = work();
    bool ok = std::fwrite(json.data(), 1, json.size(), results) == json.size();
    ok = std::fflush(results) == 0 && ok;
    std::fflush(stdout);
    _exit(ok ? 0 : 3);
  }
  int status = 0;
  bool waited = pid > 0;
  while (waited && waitpid(pid, &status, 0) < 0)
    waited = errno == EINTR;
  std::string out = readAll(results), message = readAll(printed);
  std::fclose(results);
  std::fclose(printed);
  if (!waited)
    return makeError("cannot run @" + function + ": " + std::strerror(errno));
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
    return out;
  while (!message.empty() && (message.back() == '\n' || message.back() == 0))
    message.pop_back();
  if (WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT && !message.empty())
    return makeError("@" + function +
                     " stopped: a runtime check failed: " + message);
  std::string how = WIFSIGNALED(status)
                        ? std::string("signal ") +
                              std::to_string(WTERMSIG(status)) + " (" +
                              strsignal(WTERMSIG(status)) + ")"
                        : "exit code " + std::to_string(WEXITSTATUS(status));
  return makeError("@" + function + " crashed while running (" + how + ")" +
                   (message.empty() ? "" : ": " + message) + crashHint);
}

/// The arguments given as JSON (`given`, empty when none), checked against
/// the signature.
llvm::Error parseInputs(const RunOptions &options, FunctionType sig,
                        llvm::json::Array &given) {
  if (options.inputs.empty())
    return llvm::Error::success();
  // llvm::json's parser (and the walks after it) recurse per level: a deep
  // enough `[[[...` overflows the stack. Arguments nest at most kMaxRunRank
  // deep; up to kMaxInputNesting, a wrong depth gets the argument's own rank
  // error later.
  if (std::optional<size_t> at =
          findDeepJsonNesting(options.inputs, kMaxInputNesting))
    return makeError(
        ErrorTopic::Inputs,
        "the inputs nest deeper than " + std::to_string(kMaxInputNesting) +
            " levels (at byte " + std::to_string(*at) +
            "); run supports ranks up to " + std::to_string(kMaxRunRank));
  llvm::Expected<llvm::json::Value> parsed = llvm::json::parse(options.inputs);
  if (!parsed)
    return makeError(ErrorTopic::Inputs,
                     "the inputs are not valid JSON: " +
                         llvm::toString(parsed.takeError()));
  const llvm::json::Array *a = parsed->getAsArray();
  if (a)
    given = *a;
  if (given.size() == sig.getNumInputs())
    return llvm::Error::success();
  std::string takes = "@" + options.function + " takes " +
                      std::to_string(sig.getNumInputs()) + " arguments";
  return makeError(ErrorTopic::Inputs,
                   a ? takes + ", given " + std::to_string(a->size())
                     : "the inputs are not a JSON array; " + takes);
}

/// The bytes of the results of static shape (dynamic ones are known only
/// after the call).
uint64_t staticResultBytes(FunctionType sig) {
  uint64_t total = 0;
  for (Type t : sig.getResults()) {
    auto type = dyn_cast<RankedTensorType>(t);
    std::optional<ElementKind> kind =
        type ? kindOf(type.getElementType()) : std::nullopt;
    if (!kind || !type.hasStaticShape())
      continue;
    std::optional<uint64_t> b = bufferBytes(*kind, type.getShape());
    total = llvm::SaturatingAdd(total, b.value_or(UINT64_MAX));
  }
  return total;
}

/// Makes a run's arguments one by one: from the JSON values, or random
/// with the shapes asked for; what is echoed in the result beside.
class Arguments {
public:
  Arguments(const RunOptions &options, const detail::LoweredSection &ls,
            const llvm::json::Array &given, uint64_t totalBytes, size_t n)
      : options(options), ls(ls), given(given), totalBytes(totalBytes),
        rng(options.seed), inputs(n),
        sizesFrom(given.empty() ? ErrorTopic::Shapes : ErrorTopic::Inputs) {}

  /// Argument `i` (of `t`); all before it are made.
  llvm::Error make(unsigned i, Type t);

  const RunOptions &options;
  const detail::LoweredSection &ls;
  const llvm::json::Array &given;
  uint64_t totalBytes;
  std::mt19937_64 rng;
  std::vector<Input> inputs;
  llvm::json::Array echoed, shapes, chosen;
  std::vector<std::string> picked; // a note per argument with chosen sizes

private:
  ErrorTopic sizesFrom;
  llvm::Error shapeOf(unsigned i, RankedTensorType type, Input &in);
  llvm::Error valuesOf(unsigned i, Input &in, int64_t count);
  std::optional<int64_t> indexBound(unsigned i) const;
};

/// The bound of random indices for argument `i`; std::nullopt when it
/// indexes nothing, 0 when the values' size is not known (yet).
std::optional<int64_t> Arguments::indexBound(unsigned i) const {
  auto fn = ls.indexBounds.find(options.function);
  if (fn == ls.indexBounds.end())
    return std::nullopt;
  auto it = fn->second.find(i);
  if (it == fn->second.end())
    return std::nullopt;
  if (it->second > 0)
    return it->second;
  size_t values = static_cast<size_t>(-1 - it->second);
  return values < i && inputs[values].shape.size() == 3
             ? inputs[values].shape[1]
             : 0;
}

llvm::Error Arguments::shapeOf(unsigned i, RankedTensorType type, Input &in) {
  std::string error;
  if (!given.empty()) {
    if (!tosa_lsp::shapeOf(given[i], in.shape, 0, error))
      return makeError(ErrorTopic::Inputs,
                       "argument #" + std::to_string(i) + ": " + error);
    return llvm::Error::success();
  }
  // Dynamic dims from the shapes asked for, else kChosenSize.
  std::vector<int64_t> want;
  if (i < options.shapes.size()) {
    llvm::SmallVector<llvm::StringRef> parts;
    llvm::StringRef(options.shapes[i]).split(parts, 'x', -1, false);
    for (llvm::StringRef p : parts) {
      int64_t v;
      if (p.getAsInteger(10, v) || v < 0)
        return makeError(ErrorTopic::Shapes, "bad shape '" + options.shapes[i] +
                                                 "' for argument #" +
                                                 std::to_string(i) +
                                                 ", expected e.g. 2x3");
      want.push_back(v);
    }
  }
  std::vector<int64_t> picks;
  for (int64_t d = 0; d < type.getRank(); ++d) {
    bool pick = d >= static_cast<int64_t>(want.size()) && type.isDynamicDim(d);
    in.shape.push_back(d < static_cast<int64_t>(want.size()) ? want[d]
                       : pick ? kChosenSize
                              : type.getDimSize(d));
    if (pick)
      picks.push_back(d);
  }
  if (!picks.empty())
    picked.push_back(
        choiceNote(options.function, i, type, in.shape, picks, chosen));
  return llvm::Error::success();
}

llvm::Error Arguments::valuesOf(unsigned i, Input &in, int64_t count) {
  if (!given.empty()) {
    std::vector<size_t> at;
    std::string error;
    if (flatten(given[i], in.kind, in.values, at, error))
      return llvm::Error::success();
    std::string where;
    for (size_t k = 0; k < at.size(); ++k)
      where += (k ? ", " : " at [") + std::to_string(at[k]);
    return makeError(ErrorTopic::Inputs,
                     "argument #" + std::to_string(i) + where +
                         (where.empty() ? ": " : "]: ") + error);
  }
  if (std::optional<int64_t> k = indexBound(i)) {
    // Gather/scatter indices: in [0, K), as TOSA requires (0 where K is not
    // known before this argument).
    for (int64_t e = 0; e < count; ++e)
      in.values.push_back(*k > 0 ? double(rng() % static_cast<uint64_t>(*k))
                                 : 0.0);
    return llvm::Error::success();
  }
  for (int64_t e = 0; e < count; ++e)
    in.values.push_back(isFloat(in.kind)
                            ? std::uniform_real_distribution<double>(-1, 1)(rng)
                        : in.kind == ElementKind::I1
                            ? double(rng() % 2)
                            : double(static_cast<int64_t>(rng() % 21) - 10));
  return llvm::Error::success();
}

llvm::Error Arguments::make(unsigned i, Type t) {
  auto type = dyn_cast<RankedTensorType>(t);
  std::optional<ElementKind> kind =
      type ? kindOf(type.getElementType()) : std::nullopt;
  if (!kind)
    return makeError("argument #" + std::to_string(i) +
                     " must be a ranked tensor of f32, f64, i1, i8, i16, "
                     "i32 or i64");
  if (type.getRank() > kMaxRunRank)
    return rankError("argument #" + std::to_string(i), type.getRank());
  Input &in = inputs[i];
  in.kind = *kind;
  if (llvm::Error e = shapeOf(i, type, in))
    return e;
  if (static_cast<int64_t>(in.shape.size()) != type.getRank())
    return makeError(sizesFrom, "argument #" + std::to_string(i) +
                                    " has rank " +
                                    std::to_string(type.getRank()) +
                                    " but the input has rank " +
                                    std::to_string(in.shape.size()));
  for (int64_t d = 0; d < type.getRank(); ++d)
    if (!type.isDynamicDim(d) && type.getDimSize(d) != in.shape[d])
      return makeError(sizesFrom,
                       "argument #" + std::to_string(i) + " dimension " +
                           std::to_string(d) + " must be " +
                           std::to_string(type.getDimSize(d)) +
                           ", the input has " + std::to_string(in.shape[d]));
  // Checked before anything is allocated: one huge --shape would otherwise
  // allocate until the machine runs out of memory.
  std::optional<uint64_t> bytes = bufferBytes(in.kind, in.shape);
  totalBytes = llvm::SaturatingAdd(totalBytes, bytes.value_or(UINT64_MAX));
  if (!bytes || totalBytes > options.maxBytes)
    return makeError(
        sizesFrom,
        "argument #" + std::to_string(i) + " of shape " + shapeText(in.shape) +
            (bytes ? " takes " + std::to_string(*bytes) + " bytes"
                   : " has more elements than can be counted") +
            ": the arguments and results would take more than the limit "
            "of " +
            sizeText(options.maxBytes));
  if (llvm::Error e = valuesOf(
          i, in, static_cast<int64_t>(*bytes / bytesPerElement(in.kind))))
    return e;
  in.materialize();
  echoed.push_back(std::move(in.echo));
  shapes.push_back(llvm::json::Array(in.shape));
  return llvm::Error::success();
}

/// Where each result's descriptor is in the block the C interface writes
/// (one descriptor, or a struct of them in order: laid out here like that
/// struct in C).
struct ResultLayout {
  struct Output {
    ElementKind kind;
    int64_t rank;
    size_t offset;
  };
  std::vector<Output> outputs;
  size_t bytes = 0;

  llvm::Error add(unsigned k, Type t) {
    auto type = dyn_cast<RankedTensorType>(t);
    std::optional<ElementKind> kind =
        type ? kindOf(type.getElementType()) : std::nullopt;
    if (!kind)
      return makeError("results must be ranked tensors of f32, f64, i1, i8, "
                       "i16, i32 or i64");
    if (!withDescriptorType(*kind, type.getRank(), [&](auto elt, auto rank) {
          using Descriptor =
              StridedMemRefType<decltype(elt), decltype(rank)::value>;
          bytes = llvm::alignTo(bytes, alignof(Descriptor));
          outputs.push_back({*kind, type.getRank(), bytes});
          bytes += sizeof(Descriptor);
        }))
      return rankError("result #" + std::to_string(k), type.getRank());
    return llvm::Error::success();
  }

  /// The results written at `block` as JSON (shape and data of each).
  llvm::json::Array toJSON(const void *block) const {
    llvm::json::Array outs;
    for (const Output &o : outputs) {
      const char *descriptor = static_cast<const char *>(block) + o.offset;
      withDescriptorType(o.kind, o.rank, [&](auto elt, auto rank) {
        using T = decltype(elt);
        DynamicMemRefType<T> memref(
            *reinterpret_cast<const StridedMemRefType<T, decltype(rank)::value>
                                  *>(descriptor));
        llvm::json::Array shape;
        for (int64_t i = 0; i < memref.rank; ++i)
          shape.push_back(memref.sizes[i]);
        outs.push_back(
            llvm::json::Object{{"shape", std::move(shape)},
                               {"data", tosa_lsp::toJSON(o.kind, memref)}});
      });
    }
    return outs;
  }
};

/// The JIT-compiled section, with MLIR's runtime (memrefCopy) from the
/// runtime package when it is there; only code that calls it fails
/// without it.
llvm::Expected<std::unique_ptr<ExecutionEngine>>
jit(detail::LoweredSection &ls, const RunOptions &options) {
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  ExecutionEngineOptions engineOpts;
  auto transformer = makeOptimizingTransformer(options.optLevel, 0, nullptr);
  engineOpts.transformer = transformer;
  std::string runtime = mlirRuntimePath();
  llvm::SmallVector<llvm::StringRef> libs;
  if (llvm::sys::fs::exists(runtime))
    libs.push_back(runtime);
  else if (ls.module->lookupSymbol("memrefCopy")) {
    auto found = requireMlirRuntime("@" + options.function + " (memrefCopy)");
    if (!found)
      return found.takeError();
  }
  // --threads: the kernels' OpenMP loops call libomp.
  std::string omp;
  if (ls.module
          ->walk([](Operation *op) {
            return op->getDialect() && op->getDialect()->getNamespace() == "omp"
                       ? WalkResult::interrupt()
                       : WalkResult::advance();
          })
          .wasInterrupted()) {
    auto found = requireOpenMPRuntime("@" + options.function + " (--threads)");
    if (!found)
      return found.takeError();
    omp = *found;
    libs.push_back(omp);
  }
  engineOpts.sharedLibPaths = libs;
  auto engine = ExecutionEngine::create(*ls.module, engineOpts);
  if (!engine)
    return llvm::joinErrors(sourceErrors(std::move(ls.diagnostics)),
                            makeError("JIT compilation failed: " +
                                      llvm::toString(engine.takeError())));
  return std::move(*engine);
}

} // namespace

std::optional<llvm::json::Value>
detail::memrefToJSON(ElementKind kind, int64_t rank, const void *descriptor) {
  std::optional<llvm::json::Value> out;
  withDescriptorType(kind, rank, [&](auto elt, auto n) {
    using T = decltype(elt);
    out = toJSON(
        kind,
        DynamicMemRefType<T>(
            *static_cast<const StridedMemRefType<T, decltype(n)::value> *>(
                descriptor)));
  });
  return out;
}

llvm::Expected<RunResult> runFunction(const std::string &text,
                                      const std::string &path,
                                      const RunOptions &options) {
  if (options.function.empty())
    return makeError(ErrorTopic::Function, "no function given to run");
  // Lower exactly like `compile`.
  detail::LoweredSection ls;
  ls.checkEntry = unsupportedSignature;
  ls.elidedFill = options.elided;
  ls.threads = options.threads;
  if (llvm::Error err =
          detail::lowerForNative(text, path, options.function, options.mode,
                                 /*strided=*/false, /*kernels=*/true, ls))
    return std::move(err);
  auto sigIt = ls.signatures.find(options.function);
  if (sigIt == ls.signatures.end())
    return makeError("@" + options.function +
                     " is not a public function with a body");
  FunctionType sig = sigIt->second;

  // Inputs: JSON, or random with the given shapes. Results of static shape
  // count towards the limit before any argument is allocated.
  llvm::json::Array given;
  if (llvm::Error e = parseInputs(options, sig, given))
    return std::move(e);
  uint64_t resultBytes = staticResultBytes(sig);
  if (resultBytes > options.maxBytes)
    return makeError("the results of @" + options.function +
                     " would take more than the limit of " +
                     sizeText(options.maxBytes));
  Arguments args(options, ls, given, resultBytes, sig.getNumInputs());
  for (unsigned i = 0; i < sig.getNumInputs(); ++i)
    if (llvm::Error e = args.make(i, sig.getInput(i)))
      return std::move(e);
  ResultLayout layout;
  for (auto [k, t] : llvm::enumerate(sig.getResults()))
    if (llvm::Error e = layout.add(k, t))
      return std::move(e);
  std::vector<std::max_align_t> results(std::max<size_t>(
      llvm::divideCeil(layout.bytes, sizeof(std::max_align_t)), 1));

  auto engine = jit(ls, options);
  if (!engine)
    return engine.takeError();
  void *resultPtr = results.data();
  llvm::SmallVector<void *> callArgs;
  if (sig.getNumResults())
    callArgs.push_back(&resultPtr);
  for (Input &in : args.inputs)
    callArgs.push_back(&in.descriptor);
  // Looked up here: the child only calls it (the JIT's session stays in
  // this process).
  auto packed = (*engine)->lookupPacked("_mlir_ciface_" + options.function);
  if (!packed)
    return makeError("calling @" + options.function +
                     " failed: " + llvm::toString(packed.takeError()));
  llvm::Expected<std::string> json = runInChild(
      options.function,
      [&] {
        (*packed)(callArgs.data());
        // The callee's buffers are not freed: the child exits.
        llvm::json::Object out{{"function", options.function},
                               {"inputs", std::move(args.echoed)},
                               {"inputShapes", std::move(args.shapes)},
                               {"chosenSizes", std::move(args.chosen)},
                               {"results", layout.toJSON(results.data())}};
        std::string s;
        llvm::raw_string_ostream os(s);
        os << llvm::formatv("{0:1}", llvm::json::Value(std::move(out)));
        os.flush();
        return s;
      },
      ls.indexBounds.count(options.function)
          ? "; tosa.gather and tosa.scatter need indices in [0, K) and equal "
            "batch sizes (--mode=safe checks them)"
          : "");
  if (!json)
    return json.takeError();
  return RunResult{std::move(*json), std::move(args.picked)};
}

} // namespace tosa_lsp
