#!/usr/bin/env bash
# Builds (installing what is missing) and runs every test: GoogleTest units
# and the lit suite (CLI transcripts, differential test against mlir-opt-22,
# corpus sweep), all through ctest on one shared build.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
# What only the tests need (the VS Code end-to-end test: chromium, ripgrep,
# code-server and puppeteer-core), installed here: tests never install.
timeout -k 10 900 bash test/editors/vscode-e2e/setup.sh
BUILD_DIR="${BUILD_DIR:-build}"
ctest --test-dir "$BUILD_DIR" --output-on-failure -j2
