#!/usr/bin/env bash
# End-to-end test of the tosa-lsp VS Code extension in real VS Code
# (code-server 4.100.3 = VS Code 1.100.3) driven by headless Debian Chromium
# through puppeteer-core.
#   usage: run.sh VSIX TOSA_LSP OUTDIR
# VSIX: a .vsix file, or a directory whose newest tosa-lsp-*.vsix is used.
# Checks its prerequisites first (scripts/setup.sh installs them: chromium,
# ripgrep, libkrb5-dev; npm ci into ./node_modules) and fails without. Installs
# VSIX into a temporary extensions dir, serves code-server on a free loopback
# port with `tosaLsp.serverPath` = TOSA_LSP, opens a copy of workspace/ and
# runs e2e.js (hover, inlay hint, Problems panel, quick fix, TOSA: Preview
# Lowering, reviewed whole-file rewrites, a clean 10k-line file, fold, format,
# rename, completion and signature help, the graph view, .mlirbc files).
# Screenshots (*.png) and logs go to OUTDIR. Prints
# "vscode-e2e: N passed, M failed"; exits 0 only if every check passed.
set -u

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
usage="usage: run.sh VSIX TOSA_LSP OUTDIR"
vsix="${1:?$usage}"; tosa_lsp="${2:?$usage}"; outdir="${3:?$usage}"
die() { echo "vscode-e2e: ERROR: $*" >&2; echo "vscode-e2e: 0 passed, 1 failed"; exit 1; }
abspath() { case "$1" in /*) echo "$1" ;; *) echo "$PWD/$1" ;; esac; }
vsix="$(abspath "$vsix")"; tosa_lsp="$(abspath "$tosa_lsp")"; outdir="$(abspath "$outdir")"

# VSIX may be a directory (editors/vscode): take its newest tosa-lsp-*.vsix.
if [ -d "$vsix" ]; then
  found="$(ls -t "$vsix"/tosa-lsp-*.vsix 2>/dev/null | head -1)"
  [ -n "$found" ] || die "no tosa-lsp-*.vsix in $vsix (build it with editors/vscode/build.sh)"
  vsix="$found"
fi
echo "vscode-e2e: using $vsix" >&2
[ -f "$vsix" ] || die "VSIX not found: $vsix (build it with editors/vscode/build.sh)"
[ -x "$tosa_lsp" ] || die "tosa-lsp not executable: $tosa_lsp"
mkdir -p "$outdir" || die "cannot create $outdir"
rm -f "$outdir"/*.png "$outdir"/*.log

# Prerequisites (bounded: a cold install takes ~2-3 min).
bash "$here/setup.sh" --check || die "prerequisites missing (see above)"

tmp="$(mktemp -d "${TMPDIR:-/tmp}/vscode-e2e.XXXXXX")" || die "mktemp failed"
cs_pid=""
cleanup() {
  # code-server runs in its own process group (setsid): end the whole group
  # (server, extension host, tosa-lsp); then the browser puppeteer started.
  if [ -n "$cs_pid" ]; then kill -TERM -- "-$cs_pid" 2>/dev/null; sleep 0.5; kill -KILL -- "-$cs_pid" 2>/dev/null; fi
  if [ -s "$tmp/chromium.pid" ]; then
    cpid="$(cat "$tmp/chromium.pid")"
    kill -TERM -- "-$cpid" 2>/dev/null || kill -TERM "$cpid" 2>/dev/null
    sleep 0.3; kill -KILL -- "-$cpid" 2>/dev/null; kill -KILL "$cpid" 2>/dev/null
  fi
  rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

cs="$here/node_modules/.bin/code-server"
udd="$tmp/user-data"; exts="$tmp/extensions"; ws="$tmp/workspace"
mkdir -p "$udd/User" "$udd/Machine" "$exts" "$ws" "$tmp/home"
cp "$here"/workspace/*.mlir "$ws/"
# A clean 10k-line file with ~1,000 refinable ops (bench/gen.py, seeded):
# Problems must stay empty (informational findings are not published).
python3 "$here/../../../bench/gen.py" --lines 10k --shape multi -o "$ws/many.mlir" >/dev/null \
  || die "bench/gen.py failed"
# One function of ~800 ops: the graph view lays it out in its worker.
python3 "$here/../../../bench/gen.py" --lines 800 --shape one -o "$ws/bigfn.mlir" >/dev/null \
  || die "bench/gen.py failed"
# `.mlirbc` files: bytecode of a small model (mlir-opt-22 writes it) and
# the same cut short (bad bytecode).
cat > "$tmp/model.mlir" <<'EOF'
func.func @model(%x: tensor<2x3xf32>, %y: tensor<1x3xf32>) -> tensor<2x3xf32> {
  %0 = tosa.add %x, %y : (tensor<2x3xf32>, tensor<1x3xf32>) -> tensor<2x3xf32>
  %1 = tosa.abs %0 : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %1 : tensor<2x3xf32>
}
EOF
command -v mlir-opt-22 >/dev/null 2>&1 || die "mlir-opt-22 missing (Debian's mlir-22-tools)"
(cd "$tmp" && mlir-opt-22 --emit-bytecode model.mlir -o "$ws/model.mlirbc") || die "mlir-opt-22 --emit-bytecode failed"
head -c 60 "$ws/model.mlirbc" > "$ws/truncated.mlirbc"
# Keep code-server's config.yaml and caches out of $HOME.
export XDG_CONFIG_HOME="$tmp/xdg-config" XDG_DATA_HOME="$tmp/xdg-data" XDG_CACHE_HOME="$tmp/xdg-cache"
common=(--config "$tmp/config.yaml" --user-data-dir "$udd" --extensions-dir "$exts")
printf 'bind-addr: 127.0.0.1:0\nauth: none\ncert: false\n' > "$tmp/config.yaml"

timeout -k 5 120 "$cs" "${common[@]}" --install-extension "$vsix" >"$outdir/install-extension.log" 2>&1 \
  || { cat "$outdir/install-extension.log" >&2; die "code-server --install-extension $vsix failed"; }
ls "$exts" | grep -q . || die "no extension in $exts after --install-extension"

settings=$(TOSA_LSP="$tosa_lsp" node -e '
  console.log(JSON.stringify({
    "tosaLsp.serverPath": process.env.TOSA_LSP,
    "security.workspace.trust.enabled": false,
    "workbench.startupEditor": "none",
    "workbench.tips.enabled": false,
    "workbench.welcomePage.walkthroughs.openOnInstall": false,
    "workbench.enableExperiments": false,
    "telemetry.telemetryLevel": "off",
    "extensions.autoCheckUpdates": false,
    "extensions.autoUpdate": false,
    "extensions.ignoreRecommendations": true,
    "update.mode": "none",
    "window.restoreWindows": "none",
    "editor.inlayHints.enabled": "on",
    "editor.hover.delay": 300,
    "editor.minimap.enabled": false,
    "chat.commandCenter.enabled": false,
    "files.hotExit": "off",
    "tosaLsp.compile.threads": 2
  }, null, 2))') || die "node failed"
printf '%s\n' "$settings" > "$udd/User/settings.json"
printf '%s\n' "$settings" > "$udd/Machine/settings.json"

port=$(node -e 'const s=require("net").createServer();s.listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})') \
  || die "could not find a free port"
setsid "$cs" "${common[@]}" --bind-addr "127.0.0.1:$port" --auth none \
  --disable-telemetry --disable-update-check --disable-workspace-trust \
  --disable-getting-started-override \
  "$ws" >"$outdir/code-server.log" 2>&1 &
cs_pid=$!

# Wait (max 60 s) for the HTTP server.
for _ in $(seq 1 120); do
  if node -e 'require("http").get(process.argv[1],r=>process.exit(r.statusCode<500?0:1)).on("error",()=>process.exit(1))' \
      "http://127.0.0.1:$port/healthz" 2>/dev/null; then ready=1; break; fi
  kill -0 "$cs_pid" 2>/dev/null || break
  sleep 0.5
done
[ "${ready:-0}" = 1 ] || { tail -20 "$outdir/code-server.log" >&2; die "code-server did not start on 127.0.0.1:$port"; }

# e2e.js bounds itself (300 s); timeout is the backstop. E2E_SCRIPT: another
# script run in the same setup (bench/graph_webview.js).
WORKSPACE="$ws" URL="http://127.0.0.1:$port/?folder=$(node -p 'encodeURIComponent(process.argv[1])' "$ws")" \
OUTDIR="$outdir" CHROMIUM_PID_FILE="$tmp/chromium.pid" NODE_PATH="$here/node_modules" \
  timeout -k 5 360 node "${E2E_SCRIPT:-$here/e2e.js}"
rc=$?
if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
  echo "vscode-e2e: ERROR: e2e.js timed out" >&2
  echo "vscode-e2e: 0 passed, 1 failed"
fi
exit $rc
