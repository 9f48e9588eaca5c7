"""sweep(): the command line's sweep from Python, its files byte for byte, Ctrl-C and resume."""

import os
import re
import sys
import tempfile

import numpy as np
import pytest

import cavesweep as cs
from test_generate import interrupt_after

FILES = ["summary.csv", "trajectory.csv", "components.csv", "seeds.csv"]


def same_files(a, b):
    for f in FILES:
        with open(os.path.join(a, f), "rb") as x, open(os.path.join(b, f), "rb") as y:
            assert x.read() == y.read(), f


def test_sweep_writes_the_command_lines_files(cli, tmp_path):
    gate = "connected_fraction>=0.99 && components<=3"
    cli(
        "sweep", "--preset", "classic-4-5", "--set", "rows=40", "--vary", "fill=0.4,0.45,0.5",
        "--vary", "steps=1..4", "--seeds", "0..3000", "--gate", gate, "--per-seed", "all",
        "--out", tmp_path / "cli",
    )
    df = cs.sweep(
        "classic-4-5", rows=40, vary={"fill": [0.40, 0.45, "0.5"], "steps": range(1, 4)},
        seeds=range(3000), gate=gate, per_seed="all", out=tmp_path / "py", threads=2,
    )
    # (A float is written as Python writes it, 0.40 -> "0.4": the parameter columns hold the
    # values' text as given, so the command line was given "0.4" too.)
    same_files(tmp_path / "cli", tmp_path / "py")
    pd = pytest.importorskip("pandas")
    assert isinstance(df, pd.DataFrame)
    want = pd.read_csv(tmp_path / "cli" / "summary.csv")
    pd.testing.assert_frame_equal(df, want)
    assert len(df) == 9 and (df["seeds"] == 3000).all()
    report = df.attrs["cavesweep"]
    assert report["seeds_done"] == 9 * 3000 and report["out"] == str(tmp_path / "py")
    assert report["command"].startswith("cavesweep sweep --preset classic-4-5")
    # Calling again resumes (here: finds the sweep complete) and returns the same table.
    again = cs.sweep(
        "classic-4-5", rows=40, vary=["fill=0.4,0.45,0.5", "steps=1..4"], seeds="0..3000",
        gate=[gate], per_seed="all", out=tmp_path / "py",
    )
    pd.testing.assert_frame_equal(again, want)
    assert again.attrs["cavesweep"]["seeds_run"] == 0


def test_sweep_without_out_or_pandas(monkeypatch, tmp_path):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    monkeypatch.setitem(sys.modules, "pandas", None)  # import pandas -> ImportError
    table = cs.sweep(seeds=500, vary={"fill": np.array([0.4, 0.5])}, metrics=["floor_fraction", "components"])
    assert isinstance(table, dict)
    assert table["fill"].tolist() == [0.4, 0.5]
    assert table["seeds"].dtype == np.int64 and table["seeds"].tolist() == [500, 500]
    assert table["recipe"].tolist() == ["chapter-strict", "chapter-strict"]
    assert table["floor_fraction_mean"].dtype == np.float64
    assert "components_p50" in table and "min_width_mean" not in table
    assert os.listdir(tmp_path) == []  # the temporary folder is gone


def test_sweep_progress(capsys):
    seen = []
    cs.sweep(seeds=20000, chunk=1000, threads=1, progress=lambda d, t: seen.append((d, t)))
    assert seen and seen[-1] == (20000, 20000)
    assert all(t == 20000 for _, t in seen) and [d for d, _ in seen] == sorted(d for d, _ in seen)
    # Not interactive (pytest captures stderr): no bar by default.
    cs.sweep(seeds=1000)
    assert capsys.readouterr().err == ""


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"seeds": "5..5"}, 'seeds="5..5": expected A..B'),
        ({"seeds": 100, "vary": {"fill": [0.4, 1.5]}}, "fill=1.5"),
        ({"seeds": 100, "vary": "colour=1,2"}, "colour"),
        ({"seeds": 100, "gate": "speed>3"}, "speed"),
        ({"seeds": 100, "metrics": "speed"}, "unknown metric"),
        ({"seeds": 100, "per_seed": "some"}, 'per_seed="some": expected all, kept or none'),
        ({"seeds": 100, "shard": "3/2"}, 'shard="3/2": expected K/N'),
        ({"seeds": 100, "chunk": 0}, "chunk must be from 1 to"),
        ({"seeds": 100, "threads": 0}, "threads"),
        ({"seeds": 100, "fill": 2}, "fill: probability 2"),
    ],
)
def test_bad_sweeps_are_value_errors(kwargs, message):
    with pytest.raises(ValueError, match=re.escape(message)) as e:
        cs.sweep(**kwargs)
    # Settings are named as Python spells them, never as command-line flags.
    assert "--" not in str(e.value), e.value


def test_a_folder_holding_another_sweep_is_refused(tmp_path):
    cs.sweep(seeds=100, out=tmp_path)
    with pytest.raises(RuntimeError, match="different sweep"):
        cs.sweep(seeds=200, out=tmp_path)
    cs.sweep(seeds=200, out=tmp_path, force=True)


@pytest.mark.skipif(os.name != "posix", reason="SIGINT delivery")
def test_ctrl_c_stops_a_sweep_within_a_second_and_it_resumes(cli, tmp_path):
    # Small caves in small chunks, so a chunk (the unit of stopping) lasts milliseconds; the
    # interrupt comes once the first chunks are done, well before the last (the whole sweep
    # takes seconds even on a fast AVX-512 machine: 200,000 caves of 30 steps once finished
    # before the interrupt arrived; 2,000,000 of 200 take about 4 s).
    out = tmp_path / "py"
    sets = dict(rows=30, cols=40, steps=200)
    code, err, secs = interrupt_after(
        f"""
        import cavesweep as cs
        print("started", flush=True)
        def progress(done, total):
            if done:
                print("progress", done, flush=True)
        cs.sweep(seeds="0..2000000", chunk=256, metrics="wall_fraction", out={str(out)!r},
                 progress=progress, **{sets!r})
        """,
        delay=0.0,
        wait_for="progress",
    )
    assert "KeyboardInterrupt" in err and "call sweep() again" in err, err
    assert code != 0 and secs < 1.0, (code, secs)
    assert not (out / "summary.csv").exists()  # interrupted: not finished
    # Resume in this process, then compare with an uninterrupted command-line run.
    df = cs.sweep(seeds="0..2000000", chunk=256, metrics="wall_fraction", out=out, **sets)
    report = df.attrs["cavesweep"] if hasattr(df, "attrs") else None
    if report is not None:
        assert 0 < report["seeds_run"] < 2000000, report  # the first run's chunks were kept
    cli("sweep", "--set", "rows=30", "--set", "cols=40", "--set", "steps=200",
        "--seeds", "0..2000000", "--chunk", "256", "--metrics", "wall_fraction",
        "--out", tmp_path / "cli")
    same_files(tmp_path / "cli", out)
