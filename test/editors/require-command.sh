#!/usr/bin/env bash
# usage: require-command.sh COMMAND DEBIAN_PACKAGE
# Tests never install anything: scripts/setup.sh (the README's commands)
# does, before any test runs. This only says what is missing and exits 2.
set -u
cmd="${1:?command}" pkg="${2:?package}"
command -v "$cmd" >/dev/null 2>&1 && exit 0
echo "$(basename "$0"): $cmd not found (Debian package $pkg); run scripts/setup.sh" >&2
exit 2
