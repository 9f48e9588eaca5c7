"""Shared fixtures: the command line binary the Python results are compared with.

The root crate's tests/python.rs runs these tests with CAVESWEEP_BIN set to the `cavesweep`
binary cargo just built, so every comparison with the command line runs there. Run by hand
(`pytest python/tests`), they look for target/release/cavesweep and skip the comparisons,
saying so, when it is not built.
"""

import os
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def cli():
    """A function running the cavesweep binary: cli(*args) -> CompletedProcess (text)."""
    env = os.environ.get("CAVESWEEP_BIN")
    if env:
        path = Path(env)
        assert path.is_file(), f"CAVESWEEP_BIN={env} does not exist"
    else:
        path = REPO / "target" / "release" / "cavesweep"
        if not path.is_file():
            pytest.skip("no cavesweep binary (set CAVESWEEP_BIN or cargo build --release)")

    def run(*args, check=True):
        p = subprocess.run([str(path), *map(str, args)], capture_output=True, text=True)
        if check and p.returncode != 0:
            raise AssertionError(f"cavesweep {' '.join(map(str, args))} failed: {p.stderr}")
        return p

    return run
