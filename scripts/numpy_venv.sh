#!/usr/bin/env bash
# Print the path of a Python interpreter that has numpy, creating it the first time: a venv at
# $NUMPY_VENV (default target/numpy-venv, which git ignores) with $NUMPY_SPEC (default
# numpy==2.4.6, the version tests/fixtures/numpy_chapter/ was made with) installed from PyPI by
# pip. Never installs anything into the system Python.
#
#   PY="$(scripts/numpy_venv.sh)" && "$PY" scripts/numpy_crosscheck.py --check tests/fixtures/numpy_chapter
set -euo pipefail
cd "$(dirname "$0")/.."
VENV="${NUMPY_VENV:-target/numpy-venv}"
SPEC="${NUMPY_SPEC:-numpy==2.4.6}"
if ! "$VENV/bin/python" -c 'import numpy' >/dev/null 2>&1; then
  python3 -m venv "$VENV" >&2
  "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check "$SPEC" >&2
fi
echo "$(cd "$VENV" && pwd)/bin/python"
