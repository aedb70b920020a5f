#!/usr/bin/env bash
# Builds the VS Code extension: dependencies (from package-lock.json), tsc,
# unit tests (node --test), bundle (esbuild) and package (vsce) into
# tosa-lsp-<version>.vsix. Exits non-zero on any failure.
#   bash build.sh            # everything
#   TOSA_LSP=/path/to/tosa-lsp bash build.sh   # also run the server tests
#                            # against that binary (else: tosa-lsp on PATH, or skipped)
set -euo pipefail
cd "$(dirname "$0")"
export npm_config_yes=true npm_config_fund=false npm_config_audit=false npm_config_update_notifier=false
# ~/.npmrc may carry keys newer npm versions warn about; keep the log readable.
export npm_config_loglevel=error

if [ -f package-lock.json ]; then
  npm ci --no-audit --no-fund
else
  npm install --no-audit --no-fund
fi
rm -rf out dist/extension.js dist/graph
npx tsc -p .
node --test out/test/
npm run --silent bundle
# The graph view (editors/graph): its renderer and elkjs from npm, which
# must be the copy built into tosa-lsp for its HTML and SVG pictures.
if ! cmp -s node_modules/elkjs/lib/elk.bundled.js ../graph/vendor/elk.bundled.js; then
  echo "build.sh: editors/graph/vendor/elk.bundled.js is not the elkjs of package-lock.json; copy node_modules/elkjs/lib/elk.bundled.js there" >&2
  exit 1
fi
mkdir -p dist/graph
cp node_modules/elkjs/lib/elk.bundled.js ../graph/graph-view.js ../graph/layered.js dist/graph/
cp node_modules/elkjs/LICENSE.md dist/graph/elkjs-LICENSE.md
# The bundle must load without node_modules (only `vscode` is external).
node -e '
  // A stand-in for the `vscode` module: every property is a constructible function.
  const stub = new Proxy(function () {}, { get: (t, k) => (k === "__esModule" ? true : stub), apply: () => stub, construct: () => stub });
  const Module = require("module"); const orig = Module._load;
  Module._load = function (r, ...a) { return r === "vscode" ? stub : orig.call(this, r, ...a); };
  const ext = require("./dist/extension.js");
  if (typeof ext.activate !== "function" || typeof ext.deactivate !== "function") { console.error("bundle lacks activate/deactivate"); process.exit(1); }
  console.log("bundle ok: dist/extension.js loads without node_modules and exports activate, deactivate");'
version=$(node -p 'require("./package.json").version')
# Package beside, then rename: a reader of tosa-lsp-<version>.vsix (the e2e
# test) never sees a missing or half-written file.
mkdir -p dist
npx vsce package --no-dependencies --skip-license --allow-missing-repository --no-rewrite-relative-links --out "dist/tosa-lsp-$version.vsix"
mv -f "dist/tosa-lsp-$version.vsix" "tosa-lsp-$version.vsix"
for f in tosa-lsp-*.vsix; do [ "$f" = "tosa-lsp-$version.vsix" ] || rm -f "$f"; done
ls -l "tosa-lsp-$version.vsix"
