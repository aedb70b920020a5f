#!/usr/bin/env bash
# ThreadSanitizer run (issue 44, item 9): builds the server and the unit
# tests whose code runs on several threads with clang-22 -fsanitize=thread
# in build-tsan/, runs them, then drives the server binary with the
# concurrency transcript (test/lit/tools/lsp_concurrency.py: edit storms,
# requests during analyses, cancellation, previews on their own threads).
# Fails on any ThreadSanitizer report, or on a failed test.
#   scripts/tsan.sh            # everything
#   scripts/tsan.sh units      # the GoogleTest binaries only
# libMLIR.so and libLLVM.so are Debian's, uninstrumented: TSan sees their
# locks (pthread calls) but not their memory accesses; the uniquers'
# guard is covered by test/unit/ConcurrentUseTest.cpp instead.
set -euo pipefail
cd "$(dirname "$0")/.."
WHAT="${1:-all}"
BUILD_DIR="${TSAN_BUILD_DIR:-build-tsan}"
UNITS=(TosaLspThreadTests TosaLspAnalyzerTests TosaLspServerTests
  TosaLspTosaServerTests TosaLspIncrementalTests)

if ! command -v clang++-22 >/dev/null; then
  echo "tsan: clang-22 is missing; run scripts/setup.sh" >&2
  exit 1
fi
export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$(cd .. && pwd)}"
if [ ! -f "$BUILD_DIR/build.ninja" ]; then
  # mimalloc off: TSan brings its own allocator.
  cmake -G Ninja -S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_CXX_COMPILER=clang++-22 -DTOSA_LSP_TSAN=ON \
    -DTOSA_LSP_MIMALLOC=OFF >/dev/null
fi
cmake --build "$BUILD_DIR" --target tosa-lsp "${UNITS[@]}" -- -j"${TSAN_JOBS:-2}"

LOGS="$BUILD_DIR/tsan-logs"
rm -rf "$LOGS" && mkdir -p "$LOGS"
# Reports go to files (one per process, the server's children included);
# halt_on_error=0 lets a run finish and show every report.
# report_signal_unsafe=0: a crash contained by runContained (CrashGuard.h)
# leaves its signal handler by longjmp, so TSan takes all that follows for
# code inside a signal handler; the tests crash MLIR on purpose.
export TSAN_OPTIONS="log_path=$PWD/$LOGS/report:second_deadlock_stack=1:history_size=4:report_signal_unsafe=0:suppressions=$PWD/scripts/tsan.supp:${TSAN_OPTIONS:-}"
status=0
for t in "${UNITS[@]}"; do
  echo "tsan: $t"
  # Not under TSan: how much heap an idle release gives back (TSan has its
  # own allocator); the compiler child, whose address-space limit leaves no
  # room for TSan's shadow memory; a 50 ms bound on freeing replaced
  # versions (TSan runs 5-15x slower).
  if ! "$BUILD_DIR/bin/$t" --gtest_brief=1 \
      --gtest_filter=-Analyzer.IdleReleaseForgetsWhatTheContextsUniqued:CompileJob.*:TosaServer.AReplacedVersionIsFreedThoughItsBackgroundInferenceStarted \
      >"$LOGS/$t.out" 2>&1; then
    echo "tsan: $t FAILED (see $LOGS/$t.out)" >&2
    tail -20 "$LOGS/$t.out" >&2
    status=1
  fi
done
if [ "$WHAT" = all ]; then
  echo "tsan: lsp_concurrency.py against $BUILD_DIR/bin/tosa-lsp"
  # Bounds for a server ~5-15x slower than the Release one.
  if ! python3 test/lit/tools/lsp_concurrency.py --tosa-lsp "$BUILD_DIR/bin/tosa-lsp" \
      --wait 120 --timeout 900 --edits 60 --big-ops 1000 --max-ops 40000 \
      --target-ms 600 --max-checks 5 >"$LOGS/lsp_concurrency.out" 2>&1; then
    echo "tsan: lsp_concurrency.py FAILED (see $LOGS/lsp_concurrency.out)" >&2
    tail -20 "$LOGS/lsp_concurrency.out" >&2
    status=1
  fi
  tail -1 "$LOGS/lsp_concurrency.out"
fi
reports=$(cat "$LOGS"/report.* 2>/dev/null | grep -c '^WARNING: ThreadSanitizer' || true)
if [ "$reports" -ne 0 ]; then
  echo "tsan: $reports report(s):" >&2
  grep -h -A12 '^WARNING: ThreadSanitizer' "$LOGS"/report.* | head -80 >&2
  status=1
else
  echo "tsan: no ThreadSanitizer report"
fi
exit $status
