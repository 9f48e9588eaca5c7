#!/usr/bin/env bash
# End-to-end test of `cavesweep explore` (issue #39) in a real headless Chromium.
#
#   tests/e2e/run.sh                          # uses target/release/cavesweep (else target/ci/)
#   CAVESWEEP_BIN=target/ci/cavesweep tests/e2e/run.sh
#
# Needs node + npm and Debian's chromium (/usr/bin/chromium, or set CHROMIUM). Installs
# playwright-core, pinned by tests/e2e/package-lock.json, into target/e2e/node with `npm ci`
# (npm's cache in target/e2e/npm-cache; nothing is written under tests/), then runs
# tests/e2e/explore.test.mjs with node's test runner. It makes a small sweep folder, starts the
# real `cavesweep explore` on a free port, drives the page, and writes a screenshot of each view
# to target/e2e/*.png. Exits non-zero on any failure.
set -euo pipefail
cd "$(dirname "$0")/../.."
mkdir -p target/e2e/node
cp tests/e2e/package.json tests/e2e/package-lock.json target/e2e/node/
(cd target/e2e/node && npm ci --silent --no-audit --no-fund --cache ../npm-cache)
exec node --test --test-reporter=spec tests/e2e/explore.test.mjs
