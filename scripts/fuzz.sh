#!/usr/bin/env bash
# Builds the libFuzzer targets (clang-22, ASan + UBSan, in build-fuzz/) and
# runs each for a while:  scripts/fuzz.sh [seconds per target] [analyze|lower|message|all]
# Seeds: ../shared/corpus (split on `// -----`), examples/ and the lit tests
# (for `message`, each of those as a didOpen, raw and with \u escapes).
# The corpus grows in build-fuzz/corpus/<target>; crash, leak, timeout and
# OOM inputs land in build-fuzz/artifacts/<target>/ and fail the run.
# Needs clang-22 and libclang-rt-22-dev (scripts/setup.sh installs them).
set -euo pipefail
cd "$(dirname "$0")/.."
SECONDS_PER_TARGET="${1:-60}"
WHICH="${2:-all}"
BUILD_DIR="${FUZZ_BUILD_DIR:-build-fuzz}"
case "$WHICH" in
  all) TARGETS=(analyze lower message) ;;
  analyze | lower | message) TARGETS=("$WHICH") ;;
  *) echo "fuzz: unknown target '$WHICH' (analyze, lower, message or all)" >&2; exit 2 ;;
esac

if ! command -v clang++-22 >/dev/null ||
   ! ls /usr/lib/llvm-22/lib/clang/*/lib/linux/libclang_rt.fuzzer-x86_64.a >/dev/null 2>&1; then
  echo "fuzz: clang-22 with libFuzzer is missing; run scripts/setup.sh" >&2
  exit 1
fi

export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$(cd .. && pwd)}"
if [ ! -f "$BUILD_DIR/build.ninja" ]; then
  cmake -G Ninja -S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_CXX_COMPILER=clang++-22 -DTOSA_LSP_FUZZ=ON -DBUILD_TESTING=OFF >/dev/null
fi
cmake --build "$BUILD_DIR" --target "${TARGETS[@]/%/-fuzzer}"

# Seeds, rebuilt every run (cheap): one file per `// -----` section.
SEEDS="$BUILD_DIR/seeds"
rm -rf "$SEEDS" && mkdir -p "$SEEDS"
sources=(examples test/lit)
if [ -d ../shared/corpus ]; then
  sources+=(../shared/corpus)
else
  echo "fuzz: ../shared/corpus not found; seeding from examples/ and test/lit only"
fi
python3 - "$SEEDS" "${sources[@]}" <<'PY'
import hashlib, pathlib, re, sys
out = pathlib.Path(sys.argv[1])
n = 0
for src in sys.argv[2:]:
    for f in sorted(pathlib.Path(src).rglob("*.mlir")):
        text = f.read_bytes()
        parts = re.split(rb"(?m)^// -----\s*$", text)
        # Whole split files too: the analyze fuzzer checks that each
        # section's verdict is the one it gets alone and shuffled.
        if 1 < len(parts) <= 6 and len(text) <= 65536:
            (out / hashlib.sha1(text).hexdigest()).write_bytes(text)
            n += 1
        for part in parts:
            if part.strip() and len(part) <= 65536:
                (out / hashlib.sha1(part).hexdigest()).write_bytes(part)
                n += 1
print(f"fuzz: {n} seeds from {', '.join(sys.argv[2:])}")
PY
# The message fuzzer's: those as didOpen messages (a first byte of 16: long
# strings are those of 17 bytes or more).
MESSAGE_SEEDS="$BUILD_DIR/seeds-message"
rm -rf "$MESSAGE_SEEDS" && mkdir -p "$MESSAGE_SEEDS"
python3 - "$SEEDS" "$MESSAGE_SEEDS" <<'PY'
import json, pathlib, sys
out = pathlib.Path(sys.argv[2])
for f in sorted(pathlib.Path(sys.argv[1]).iterdir())[:300]:
    text = f.read_bytes().decode("utf-8", "replace")
    for ascii_only in (False, True):
        msg = json.dumps({"jsonrpc": "2.0", "method": "textDocument/didOpen",
                          "params": {"textDocument": {"uri": "file:///" + f.name,
                                                      "languageId": "mlir", "version": 1,
                                                      "text": text}}},
                         ensure_ascii=ascii_only)
        (out / f"{f.name}-{int(ascii_only)}").write_bytes(b"\x10" + msg.encode("utf-8"))
PY

status=0
for t in "${TARGETS[@]}"; do
  corpus="$BUILD_DIR/corpus/$t"
  artifacts="$BUILD_DIR/artifacts/$t"
  mkdir -p "$corpus" "$artifacts"
  log="$BUILD_DIR/fuzz-$t.log"
  # No leak checking: a contained crash abandons (leaks) the MLIRContext it
  # happened in, by design, and LSan would flag every input that crashes
  # MLIR's own code.
  leaks=0
  # Slow units (libFuzzer saves inputs over 10 s) are no failure: on a
  # loaded machine a niced fuzzer gets them from starvation alone.
  failures() { ls "$artifacts" | grep -vc '^slow-unit-' || true; }
  before=$(failures)
  echo "fuzz: $t for ${SECONDS_PER_TARGET}s (log: $log)"
  set +e
  ASAN_OPTIONS="abort_on_error=0:detect_leaks=$leaks:${ASAN_OPTIONS:-}" \
  UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:${UBSAN_OPTIONS:-}" \
    "$BUILD_DIR/bin/$t-fuzzer" "$corpus" \
      "$([ "$t" = message ] && echo "$MESSAGE_SEEDS" || echo "$SEEDS")" \
      -max_total_time="$SECONDS_PER_TARGET" -rss_limit_mb=4096 -timeout=30 \
      -max_len=65536 -detect_leaks="$leaks" -print_final_stats=1 \
      -artifact_prefix="$artifacts/" >"$log" 2>&1
  rc=$?
  set -e
  execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | tail -1 | grep -o '[0-9]*$' || true)
  rate=$(grep -o 'stat::average_exec_per_sec: *[0-9]*' "$log" | tail -1 | grep -o '[0-9]*$' || true)
  echo "fuzz: $t: ${execs:-?} executions, ${rate:-?} exec/s, corpus $(ls "$corpus" | wc -l) files, exit $rc"
  grep -h 'lower-fuzzer: .* contained' "$log" || true
  if [ "$rc" -ne 0 ] || [ "$(failures)" -ne "$before" ]; then
    echo "fuzz: $t FAILED; reproducers in $artifacts/:" >&2
    ls "$artifacts" >&2 || true
    grep -E '^(==[0-9]+==ERROR|SUMMARY|.*runtime error)' "$log" | head -5 >&2 || true
    status=1
  fi
done
exit $status
