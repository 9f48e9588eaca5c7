"""generate() and generate_many(): the command line's caves, in parallel, GIL released."""

import json
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time

import numpy as np
import pytest

import cavesweep as cs


def cli_cave(cli, args):
    """The cave, trajectory and metrics `cavesweep run ... --ascii --json` prints."""
    out = json.loads(cli("run", *args, "--ascii", "--json").stdout)
    rows = out["map"].splitlines()
    grid = np.array([[1 if ch == "#" else 0 for ch in row] for row in rows], dtype=np.uint8)
    return out, grid


@pytest.mark.parametrize(
    "preset, sets",
    [
        ("chapter-strict", {}),
        ("chapter-strict", {"rng": "numpy"}),
        ("classic-4-5", {"fill": 0.5, "steps": 7, "outside": "wall"}),
        ("nethack-mines", {}),
        ("roguebasin", {"rows": 40, "cols": 200}),
        ("chapter-strict", {"post": "keep-largest", "update": "inplace-col-major"}),
    ],
)
def test_generate_is_the_command_lines_cave(cli, preset, sets):
    for seed in (0, 7, 42, 2**64 - 2):
        args = ["--preset", preset, "--seed", seed]
        for k, v in sets.items():
            args += ["--set", f"{k}={v}"]
        out, grid = cli_cave(cli, args)
        ours, trajectory = cs.generate(preset, seed, trajectory=True, **sets)
        r = cs.recipe(preset, **sets)
        # The map marks S (spawn) and E (exit) over their cells; compare the rest.
        mask = np.ones(grid.shape, bool)
        mask[r.spawn] = False
        assert np.array_equal(ours[mask], grid[mask]), (preset, sets, seed)
        assert trajectory.tolist() == out["wall_trajectory"]
        m = cs.measure(ours, spawn=r.spawn, exit=r.exit, connectivity=r.connectivity)
        for name, value in m.items():
            assert value == out[name], (name, preset, seed)


def test_generate_basics():
    r = cs.recipe("chapter-strict")
    a = cs.generate(r, 5)
    assert a.shape == (90, 140) and a.dtype == np.uint8 and a.flags.c_contiguous
    assert set(np.unique(a)) <= {0, 1}
    assert np.array_equal(a, cs.generate("chapter-strict", 5))
    assert not np.array_equal(a, cs.generate(r, 6))
    g, t = cs.generate(r, 5, trajectory=True)
    assert np.array_equal(g, a) and t.shape == (r.trajectory_len,) and t.dtype == np.float64
    assert t[-1] == a.mean()
    # Overrides on a Recipe object, and a recipe switch between calls (the cached generator).
    assert cs.generate(r, 5, steps=1).mean() > a.mean()
    assert np.array_equal(cs.generate(r, 5), a)
    # The returned array is the caller's: writing to it changes nothing else.
    a[:] = 0
    assert cs.generate(r, 5).sum() > 0


def test_bad_seeds():
    for bad in (-1, 2**64):
        with pytest.raises((OverflowError, ValueError)):
            cs.generate("chapter-strict", bad)
        with pytest.raises((OverflowError, ValueError)):
            cs.generate_many("chapter-strict", [0, bad])
    # The largest seed is 2**64 - 2 everywhere (ranges are half-open in u64), as on the command line.
    with pytest.raises(ValueError, match="18446744073709551614"):
        cs.generate_many("chapter-strict", range(2**64 - 2, 2**64))
    with pytest.raises(ValueError, match="start at 0"):
        cs.generate_many("chapter-strict", range(-1, 3))
    assert cs.generate_many("chapter-strict", range(2**64 - 3, 2**64 - 1)).shape == (2, 90, 140)
    with pytest.raises(ValueError, match="not a seed"):
        cs.generate_many("chapter-strict", np.array([3, -1]))
    with pytest.raises(ValueError, match="threads must be at least 1"):
        cs.generate_many("chapter-strict", range(3), threads=0)


def test_generate_many_equals_generate():
    r = cs.recipe("classic-4-5", rows=33, cols=130)
    seeds = [5, 3, 2**64 - 2, 3, 1000]
    singles = np.stack([cs.generate(r, s) for s in seeds])
    for given in (seeds, np.array(seeds, dtype=np.uint64), iter(seeds)):
        assert np.array_equal(cs.generate_many(r, given), singles)
    # A tuple is (start, stop), as in sweep() and search().
    assert np.array_equal(cs.generate_many(r, (3, 6)), cs.generate_many(r, range(3, 6)))
    # A range runs consecutive seeds through the batching entry point: same caves.
    many, traj = cs.generate_many(r, range(100, 300), trajectory=True)
    assert many.shape == (200, 33, 130) and traj.shape == (200, r.trajectory_len)
    for i in (0, 63, 64, 65, 199):
        g, t = cs.generate(r, 100 + i, trajectory=True)
        assert np.array_equal(many[i], g) and np.array_equal(traj[i], t)
    assert np.array_equal(cs.generate_many(r, np.arange(100, 300)), many)
    assert np.array_equal(cs.generate_many(r, range(100, 300), threads=1), many)
    assert np.array_equal(cs.generate_many(r, range(100, 300, 2)), many[::2])
    # Caves smaller than a cache line, and caves starting at every alignment (the streaming
    # stores write whole lines and fill in the ends).
    tiny = cs.recipe("classic-4-5", rows=3, cols=5, post=None)
    many = cs.generate_many(tiny, range(1000))
    assert all(np.array_equal(many[i], cs.generate(tiny, i)) for i in range(1000))
    big = np.full((1001, 3, 5), 9, np.uint8)
    assert cs.generate_many(tiny, range(1000), out=big[1:]) is not None
    assert np.array_equal(big[1:], many) and (big[0] == 9).all()
    assert cs.generate_many(r, []).shape == (0, 33, 130)
    assert cs.generate_many(r, range(0)).shape == (0, 33, 130)


def test_generate_many_releases_the_gil():
    r = cs.recipe("chapter-strict", steps=1000)  # about 0.2 ms a cave: 3000 caves last > 0.5 s
    ticks = 0
    done = threading.Event()

    def work():
        cs.generate_many(r, range(3000), threads=1)
        done.set()

    t = threading.Thread(target=work)
    t0 = time.perf_counter()
    t.start()
    while not done.is_set():
        ticks += 1
        time.sleep(0.001)
    t.join()
    elapsed = time.perf_counter() - t0
    assert elapsed > 0.1, "the call was too short to tell"
    # With the GIL held for the whole call, this thread would not have run at all.
    assert ticks > 20, (ticks, elapsed)


def interrupt_after(code, delay, timeout=60, wait_for=None):
    """Run `code` in a fresh Python, send SIGINT after `delay` s; (exit code, stderr, seconds
    from the signal to the exit)."""
    # A Python started with SIGINT ignored (a background job's children) keeps ignoring it:
    # install the KeyboardInterrupt handler explicitly, as a notebook kernel does.
    prelude = "import signal; signal.signal(signal.SIGINT, signal.default_int_handler)\n"
    p = subprocess.Popen(
        [sys.executable, "-c", prelude + textwrap.dedent(code)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    # Wait for the script to say it has started the long call.
    line = p.stdout.readline()
    assert line.strip() == "started", (line, p.stderr.read() if p.poll() is not None else "")
    while wait_for is not None and not line.startswith(wait_for):
        line = p.stdout.readline()
        assert line, p.stderr.read()
    time.sleep(delay)
    p.send_signal(signal.SIGINT)
    t0 = time.perf_counter()
    _, err = p.communicate(timeout=timeout)
    return p.returncode, err, time.perf_counter() - t0


@pytest.mark.skipif(os.name != "posix", reason="SIGINT delivery")
def test_ctrl_c_stops_generate_many_within_a_second():
    code, err, secs = interrupt_after(
        """
        import cavesweep as cs
        print("started", flush=True)
        cs.generate_many("chapter-strict", range(20_000), steps=2000)
        print("finished")
        """,
        delay=0.5,
    )
    assert "KeyboardInterrupt" in err, err
    assert code != 0
    assert secs < 1.0, secs


def test_generate_many_into_out():
    r = cs.recipe("chapter-strict", rows=20, cols=70)
    want = cs.generate_many(r, range(50))
    buf = np.full((50, 20, 70), 7, dtype=np.uint8)
    got = cs.generate_many(r, range(50), out=buf)
    assert got is buf and np.array_equal(buf, want)
    flags = np.zeros((50, 20, 70), dtype=bool)
    grids, traj = cs.generate_many(r, range(50), out=flags, trajectory=True)
    assert grids is flags and np.array_equal(flags, want.astype(bool)) and traj.shape == (50, 5)
    for bad in (
        np.zeros((49, 20, 70), np.uint8),
        np.zeros((50, 70, 20), np.uint8),
        np.zeros((50, 20, 70), np.int32),
        np.zeros((50, 20, 140), np.uint8)[:, :, ::2],
        np.zeros((50, 20, 70), np.uint8, order="F"),
        [[[0]]],
    ):
        with pytest.raises(ValueError, match="out must be"):
            cs.generate_many(r, range(50), out=bad)
    frozen = np.zeros((50, 20, 70), np.uint8)
    frozen.flags.writeable = False
    with pytest.raises(ValueError):
        cs.generate_many(r, range(50), out=frozen)
