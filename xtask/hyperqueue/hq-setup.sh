#!/usr/bin/env bash
# Install HyperQueue from PyPI into a virtual environment of its own (default
# target/hq-venv). The `hyperqueue` wheel is the Python API with the server and
# the worker embedded (a Rust extension module): it ships no `hq` command, so
# the bench drives it through that API (hq-bench.py). Idempotent: nothing is
# downloaded when the venv already has the wanted version.
# Usage: hq-setup.sh [VENV]   (HQ_VERSION=0.27.0 picks the version)
# Prints the version installed (e.g. v0.27.0) on its last line.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
VENV=${1:-${CARGO_TARGET_DIR:-$ROOT/target}/hq-venv}
HQ_VERSION=${HQ_VERSION:-0.27.0}

version() { "$VENV/bin/python" -c 'from hyperqueue.ffi import get_version; print(get_version())' 2>/dev/null; }

if [ "$(version)" != "v$HQ_VERSION" ]; then
  command -v python3 >/dev/null || { echo "hq-setup.sh: python3 is missing (apt-get install python3 python3-venv)" >&2; exit 1; }
  if [ ! -x "$VENV/bin/pip" ]; then
    rm -rf "$VENV"
    python3 -m venv "$VENV" || { echo "hq-setup.sh: python3 -m venv failed (apt-get install python3-venv)" >&2; exit 1; }
  fi
  "$VENV/bin/pip" install --quiet --disable-pip-version-check "hyperqueue==$HQ_VERSION" >&2
fi
v=$(version) || { echo "hq-setup.sh: hyperqueue does not import from $VENV" >&2; exit 1; }
echo "$v"
