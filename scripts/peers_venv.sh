#!/usr/bin/env bash
# Print the path of a Python interpreter that has OpenCV, scipy and this checkout's cavesweep
# package, for scripts/peers.sh's labelling peers (issue 38), creating it the first time: a venv
# at $PEERS_VENV (default target/peers-venv, which git ignores) with the pinned versions of
# python/requirements-peers.txt from PyPI by pip, made anew when that file changes. Then
# `pip install ./python` on every call, built by the venv's maturin in the workspace's target
# directory: cargo rebuilds only what changed, and the package timed is always this checkout's.
# Never installs anything into the system Python.
#
#   PY="$(scripts/peers_venv.sh)" && "$PY" scripts/peers_labels.py --seeds 2000 --json OUT.json
set -euo pipefail
cd "$(dirname "$0")/.."
VENV="${PEERS_VENV:-target/peers-venv}"
REQ=python/requirements-peers.txt
STAMP="$VENV/cavesweep-peers-requirements.txt"
if ! [ -x "$VENV/bin/python" ] || ! cmp -s "$REQ" "$STAMP"; then
  rm -rf "$VENV"
  python3 -m venv "$VENV" >&2
  "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check -r "$REQ" >&2
  cp "$REQ" "$STAMP"
fi
TARGET_DIR="$(cargo metadata --format-version 1 --no-deps |
  python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')"
# --no-build-isolation: the build backend is the venv's pinned maturin, found on PATH as an
# activated venv would find it (as tests/python.rs installs the package).
PATH="$PWD/$VENV/bin:$PATH" CARGO_TARGET_DIR="$TARGET_DIR" "$VENV/bin/python" -m pip install \
  --quiet --disable-pip-version-check --no-build-isolation --no-deps --force-reinstall ./python >&2
echo "$(cd "$VENV" && pwd)/bin/python"
