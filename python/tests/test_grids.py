"""Your own grids: step() against a plain Python oracle, fill()/apply() against generate(),
save()/load() round trips read back by numpy itself, and their errors."""

import json

import numpy as np
import pytest

import cavesweep as cs

RNG = np.random.default_rng(20261206)


def parse_rule(rule):
    """`B.../S...` as (birth, survive) sets, or `R1>=a/R2<=b` as ("R", a, b)."""
    if rule.startswith("R1>="):
        parts = rule.split("/")
        a = int(parts[0][4:])
        b = int(parts[1][4:]) if len(parts) > 1 else None
        return ("R", a, b)
    b, s = rule.split("/")
    return ({int(c) for c in b[1:]}, {int(c) for c in s[1:]})


def read(g, y, x, outside):
    rows, cols = g.shape
    if 0 <= y < rows and 0 <= x < cols:
        return int(g[y, x])
    if outside == "wrap":
        return int(g[y % rows, x % cols])
    return 1 if outside == "wall" else 0


def next_cell(g, y, x, rule, outside):
    if rule[0] == "R":
        _, a, b = rule
        r1 = sum(read(g, y + dy, x + dx, outside) for dy in (-1, 0, 1) for dx in (-1, 0, 1))
        wall = r1 >= a
        if b is not None:
            r2 = sum(
                read(g, y + dy, x + dx, outside)
                for dy in range(-2, 3)
                for dx in range(-2, 3)
                if not (abs(dy) == 2 and abs(dx) == 2)
            )
            wall = wall or r2 <= b
        return int(wall)
    birth, survive = rule
    n = sum(
        read(g, y + dy, x + dx, outside) for dy in (-1, 0, 1) for dx in (-1, 0, 1) if (dy, dx) != (0, 0)
    )
    return int(n in (survive if g[y, x] else birth))


def oracle_step(grid, rule, steps, outside, update, border):
    """docs/variants.md, cell by cell."""
    g = np.array(grid, dtype=np.uint8)
    rule = parse_rule(rule)
    rows, cols = g.shape
    for _ in range(steps):
        if update == "sync":
            old = g.copy()
            g = np.array([[next_cell(old, y, x, rule, outside) for x in range(cols)] for y in range(rows)], dtype=np.uint8)
        else:
            order = (
                [(y, x) for y in range(rows) for x in range(cols)]
                if update == "inplace-row-major"
                else [(y, x) for x in range(cols) for y in range(rows)]
            )
            for y, x in order:
                g[y, x] = next_cell(g, y, x, rule, outside)
        if border == "solid":
            g[0, :] = g[-1, :] = 1
            g[:, 0] = g[:, -1] = 1
    return g


def random_rule():
    if RNG.random() < 0.2:
        return f"R1>={RNG.integers(0, 10)}/R2<={RNG.integers(0, 22)}"
    digits = lambda: "".join(str(d) for d in range(9) if RNG.random() < 0.4)
    return f"B{digits()}/S{digits()}"


def test_step_matches_the_oracle_on_random_grids_rules_and_modes():
    cases = 0
    for _ in range(60):
        rows, cols = int(RNG.integers(1, 12)), int(RNG.integers(1, 80))
        grid = (RNG.random((rows, cols)) < RNG.random()).astype(np.uint8)
        rule = random_rule()
        outside = RNG.choice(["floor", "wall", "wrap"])
        update = RNG.choice(["sync", "inplace-row-major", "inplace-col-major"])
        border = RNG.choice(["none", "solid"])
        steps = int(RNG.integers(0, 4))
        got = cs.step(grid, rule, steps=steps, outside=outside, update=update, border=border)
        want = oracle_step(grid, rule, steps, outside, update, border)
        assert got.dtype == np.uint8 and got.shape == grid.shape
        assert np.array_equal(got, want), (rule, outside, update, border, steps, grid.shape)
        cases += 1
    assert cases == 60


def test_step_takes_any_dtype_and_layout_and_leaves_the_input_alone():
    g = (RNG.random((40, 70)) < 0.45).astype(np.uint8)
    want = cs.step(g, "B5678/S45678", steps=3)
    before = g.copy()
    for variant in [g.astype(bool), g.astype(np.int64), g.astype(np.float32), np.asfortranarray(g)]:
        assert np.array_equal(cs.step(variant, "B5678/S45678", steps=3), want)
    assert np.array_equal(g, before)
    big = np.zeros((80, 140), dtype=np.uint8)
    big[::2, ::2] = g
    view = big[::2, ::2]
    assert np.array_equal(cs.step(view, "B5678/S45678", steps=3), want)
    # The same kernels as a recipe's pass: 4 steps of the 4-5 rule with a solid border are
    # classic-4-5's passes on its fill.
    start = cs.fill("classic-4-5", 9)
    stepped = cs.step(start, "B5678/S45678", steps=4, border="solid")
    assert np.array_equal(stepped, cs.generate("classic-4-5", 9))


@pytest.mark.parametrize(
    "kwargs, needle",
    [
        (dict(rule="B9/S1"), "rule"),
        (dict(rule="B3/S23", outside="lava"), "outside"),
        (dict(rule="B3/S23", update="random"), "update"),
        (dict(rule="B3/S23", border="thick"), "border"),
        (dict(rule="B3/S23", steps=-1), "steps"),
        (dict(rule="B3/S23", steps=10**9), "steps"),
    ],
)
def test_bad_step_arguments_are_value_errors(kwargs, needle):
    with pytest.raises(ValueError, match=needle):
        cs.step(np.zeros((3, 3)), **kwargs)


def test_apply_of_the_fill_is_generate_for_every_preset():
    for name in cs.presets():
        for rng in ["xoshiro", "numpy"]:
            try:
                r = cs.recipe(name, rng=rng)
            except ValueError:
                continue  # numpy replays only the Bernoulli fill
            for seed in [0, 42, 31575]:
                start = cs.fill(r, seed)
                assert start.shape == r.shape and start.dtype == np.uint8
                got, t = cs.apply(r, start, seed=seed, trajectory=True)
                want, wt = cs.generate(r, seed, trajectory=True)
                assert np.array_equal(got, want), (name, rng, seed)
                assert np.array_equal(t, wt), (name, rng, seed)


def test_apply_takes_the_grids_size():
    g = np.zeros((30, 50), dtype=np.uint8)
    g[10:20, 10:40] = 1
    out = cs.apply("classic-4-5", g)
    assert out.shape == (30, 50)
    with pytest.raises(ValueError, match="differs from the grid's rows"):
        cs.apply("classic-4-5", g, rows=90)
    with pytest.raises(ValueError, match="outside"):
        cs.apply("classic-4-5", g, spawn=(45, 70))


FORMATS = ["txt", "csv", "npy", "json", "tmj", "tmx", "png"]


def test_save_and_load_round_trip_every_format(tmp_path):
    g = cs.generate("nethack-mines", 3)
    for ext in FORMATS:
        p = tmp_path / f"cave.{ext}"
        cs.save(g, p, recipe="nethack-mines", seed=3)
        assert np.array_equal(cs.load(p), g), ext
        assert np.array_equal(cs.load(str(p)), g), ext
    # numpy reads the .npy itself.
    arr = np.load(tmp_path / "cave.npy")
    assert arr.dtype == np.uint8 and np.array_equal(arr, g)
    doc = json.loads((tmp_path / "cave.json").read_text())
    assert doc["seed"] == 3 and doc["recipe"] == "nethack-mines"
    assert doc["metrics"]["components"] == cs.measure(g, "components", connectivity=8)["components"]
    assert (tmp_path / "cavesweep-tiles.png").is_file()
    # The command line writes the same bytes for the same cave.


def test_saved_files_equal_the_command_lines(tmp_path, cli):
    g = cs.generate("classic-4-5", 7)
    for ext in FORMATS:
        a, b = tmp_path / f"py.{ext}", tmp_path / f"cli.{ext}"
        cs.save(g, a, recipe="classic-4-5", seed=7)
        cli("run", "--preset", "classic-4-5", "--seed", "7", "--save", b)
        if ext in ("json", "tmj", "tmx"):
            continue  # they record the run's metrics (all here too), compared below
        assert a.read_bytes() == b.read_bytes(), ext
    assert (tmp_path / "py.json").read_text() == (tmp_path / "cli.json").read_text()
    assert (tmp_path / "py.tmx").read_text() == (tmp_path / "cli.tmx").read_text()


def test_save_refuses_what_it_did_not_write(tmp_path):
    p = tmp_path / "mine.npy"
    p.write_bytes(b"precious")
    g = cs.generate("classic-4-5", 1)
    with pytest.raises(RuntimeError, match="force=True"):
        cs.save(g, p)
    assert p.read_bytes() == b"precious"
    cs.save(g, p, force=True)
    assert np.array_equal(np.load(p), g)
    cs.save(g, p)  # the same bytes again: fine
    link = tmp_path / "link.txt"
    link.symlink_to(tmp_path / "target.txt")
    with pytest.raises(RuntimeError, match="symbolic link"):
        cs.save(g, link, force=True)
    assert not (tmp_path / "target.txt").exists()
    with pytest.raises(ValueError, match="cannot tell the map format"):
        cs.save(g, tmp_path / "cave.gif")
    with pytest.raises(ValueError, match="empty"):
        cs.save(g, "")


def test_load_errors_say_where(tmp_path):
    bad = tmp_path / "bad.txt"
    bad.write_text("#.#\n#x#\n")
    with pytest.raises(ValueError, match="line 2, column 2"):
        cs.load(bad)
    with pytest.raises(FileNotFoundError):
        cs.load(tmp_path / "missing.txt")
    npy = tmp_path / "three.npy"
    np.save(npy, np.zeros((2, 2, 2), dtype=np.uint8))
    with pytest.raises(ValueError, match="3 dimensions"):
        cs.load(npy)
    twos = tmp_path / "twos.npy"
    np.save(twos, np.full((2, 3), 2, dtype=np.int16))
    with pytest.raises(ValueError, match=r"cell \(0, 0\) is 2"):
        cs.load(twos)


def test_load_reads_what_numpy_writes(tmp_path):
    g = (RNG.random((17, 33)) < 0.5).astype(np.uint8)
    for dtype in [bool, np.uint8, np.int8, np.int32, ">i8", np.float64, "<f2"]:
        for order in ["C", "F"]:
            p = tmp_path / "a.npy"
            np.save(p, np.asarray(g.astype(dtype), order=order))
            assert np.array_equal(cs.load(p), g), (dtype, order)


def test_ctrl_c_stops_a_long_step_within_a_second():
    from test_generate import interrupt_after

    code, err, secs = interrupt_after(
        """
        import numpy as np
        import cavesweep as cs
        g = (np.random.default_rng(0).random((1024, 1024)) < 0.45).astype(np.uint8)
        print("started", flush=True)
        cs.step(g, "R7,C0,M1,S100..150,B110..140,NM", steps=100_000)
        print("finished")
        """,
        delay=0.5,
    )
    assert "KeyboardInterrupt" in err, err
    assert code != 0
    assert secs < 1.0, secs
