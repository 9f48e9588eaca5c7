"""The typed argument layer (python/src/args.rs) under hostile use: each case is a defect of
issue #42 reproduced (each failed on the package before the layer: a segfault, a panic, an
abort, a silent wrong answer or the wrong exception type) and what it must do now. Calls that
could crash the interpreter run in a subprocess, and a call whose point is an allocation runs
under a memory limit.
"""

import json
import os
import subprocess
import sys
import textwrap
import tracemalloc

import numpy as np
import pytest

import cavesweep as cs

MAX_SEED = 2**64 - 2


def run_py(code, limit_mb=None):
    """`code` in a fresh interpreter (optionally under an address-space limit): (exit, out, err)."""
    pre = ""
    if limit_mb:
        pre = (
            "import resource\n"
            f"resource.setrlimit(resource.RLIMIT_AS, ({limit_mb << 20}, {limit_mb << 20}))\n"
        )
    p = subprocess.run(
        [sys.executable, "-c", pre + textwrap.dedent(code)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    return p.returncode, p.stdout, p.stderr


# 1. A self-referencing or deeply nested recipe value: was SIGSEGV (unbounded recursion).
@pytest.mark.parametrize("call", [
    "cs.recipe('classic-4-5', post=l)",
    "cs.recipe('classic-4-5').replace(post=l)",
    "cs.generate_many('classic-4-5', range(2), post=l)",
    "cs.sweep('classic-4-5', seeds=2, post=l, progress=False)",
    "cs.search('classic-4-5', where='components>=1', seeds=2, post=l, progress=False)",
])
@pytest.mark.parametrize("nest", ["l = []; l.append(l)", "l = []\nfor _ in range(20000): l = [l]"])
def test_nested_values_are_a_type_error(call, nest):
    body = f"{nest}\ntry:\n    {call}\nexcept TypeError as e:\n    print('TypeError', e)\n"
    code, out, err = run_py("import cavesweep as cs\n" + body)
    assert code == 0, err
    assert out.startswith("TypeError") and "not lists" in out, out


# 2-4. Impossible sizes: were a PanicException, a silent empty array, and an abort with Ctrl-C
# ignored.
def test_generate_many_sizes():
    # 2**64 seeds: the count wrapped to 0 and an empty array came back.
    with pytest.raises(ValueError, match=str(MAX_SEED)):
        cs.generate_many("classic-4-5", range(0, 2**64))
    # 2**39 seeds in a stepped range: refused before any is collected.
    with pytest.raises(ValueError, match="more than 10000000"):
        cs.generate_many("classic-4-5", range(0, 2**40, 2))
    # A list that does not say its length: refused at the cap, not after exhausting memory.
    with pytest.raises(ValueError, match="more than 10000000"):
        cs.generate_many("classic-4-5", (i for i in range(2**40)))


def test_generate_many_too_big_is_a_memory_error():
    # 10**7 caves of 90x140 are 117 GiB: a MemoryError naming the size, whatever the machine
    # promises; and under an address-space limit a size that passes the check fails in numpy,
    # also as MemoryError (it was a PanicException that `except Exception` missed).
    code, out, err = run_py("""
        import cavesweep as cs
        for n in (10**7, 200_000):
            try:
                cs.generate_many("classic-4-5", range(n))
                print("no error")
            except MemoryError as e:
                print("MemoryError", e)
    """, limit_mb=2048)
    assert code == 0, err
    lines = out.splitlines()
    assert len(lines) == 2 and all(l.startswith("MemoryError") for l in lines), out
    assert "117.3 GiB" in lines[0], lines[0]
    assert "PanicException" not in err


# 2, the last resort: a panic (a bug) on the calling thread or on a long call's worker thread
# is a RuntimeError that says so, never pyo3's PanicException (a BaseException that `except
# Exception` misses). `_native._panic` panics on purpose; every entry point runs its body
# through the same guard.
@pytest.mark.parametrize("on", ["caller", "worker"])
def test_a_panic_is_a_runtime_error(on):
    code, out, err = run_py(f"""
        from cavesweep import _native
        try:
            _native._panic({on!r})
        except Exception as e:
            print(type(e).__name__, e)
        except BaseException as e:
            print("escaped", type(e).__name__, e)
        """)
    assert code == 0, err
    assert out.startswith("RuntimeError internal error in cavesweep (a bug"), out
    assert "on purpose" in out, out
    with pytest.raises(ValueError, match="caller"):
        from cavesweep import _native
        _native._panic("elsewhere")


# 4, Ctrl-C while a long list of seeds is collected (with the GIL held, between bytecodes
# of nothing): heard within a fraction of a second. Ten million seeds take seconds to collect.
@pytest.mark.skipif(os.name != "posix", reason="SIGINT delivery")
def test_ctrl_c_while_a_long_seed_list_is_collected():
    from test_generate import interrupt_after

    code, err, secs = interrupt_after(
        """
        import cavesweep as cs
        seeds = [7] * 10_000_000
        r = cs.recipe("classic-4-5", rows=3, cols=3)
        cs.generate_many(r, seeds[:1000])
        print("started", flush=True)
        cs.generate_many(r, seeds)
        print("finished")
        """,
        delay=0.2,
    )
    assert "KeyboardInterrupt" in err, err
    assert code != 0
    assert secs < 0.5, secs


# 5. The trajectories were allocated even with trajectory=False.
def test_no_trajectory_array_unless_asked():
    r = cs.recipe("classic-4-5", rows=3, cols=3, steps=20000, post=None)
    tracemalloc.start()
    try:
        a = cs.generate_many(r, range(400))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert a.shape == (400, 3, 3)
    # The trajectories would be 400 x 20001 x 8 bytes = 64 MB.
    assert peak < 8 << 20, peak
    g, t = cs.generate_many(r, range(3), trajectory=True)
    assert t.shape == (3, r.trajectory_len)
    for i in range(3):
        gi, ti = cs.generate(r, i, trajectory=True)
        assert np.array_equal(g[i], gi) and np.array_equal(t[i], ti)


# 6. out="" wrote cavesweep.lock / .checkpoint/ into the current directory.
def test_empty_out_is_refused_before_anything_is_written(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ValueError, match="empty path"):
        cs.sweep("classic-4-5", seeds=4, out="", progress=False)
    with pytest.raises(ValueError, match="empty path"):
        cs.search("classic-4-5", where="components>=1", seeds=4, out="", progress=False)
    with pytest.raises(ValueError, match="empty path"):
        cs.search("classic-4-5", where="components>=1", seeds=4, png_dir="", progress=False)
    assert os.listdir(tmp_path) == []


# 8. Keyword order changed the answer: each override was validated before the next.
def test_override_order_does_not_matter():
    a = cs.recipe("classic-4-5", spawn=(100, 100), rows=200, cols=200)
    b = cs.recipe("classic-4-5", rows=200, cols=200, spawn=(100, 100))
    assert a == b and a.spawn == (100, 100)
    small = cs.recipe("classic-4-5", exit=(80, 130)).replace(rows=10, cols=10, exit=(5, 5))
    assert small.exit == (5, 5) and small.shape == (10, 10)
    with pytest.raises(ValueError, match="outside the 10x10 grid"):
        cs.recipe("classic-4-5", rows=10, cols=10, spawn=(50, 50))


def test_cli_override_order_does_not_matter(cli):
    # The command line applies its --sets together too, and draws the cave Python draws.
    p = cli("run", "--preset", "classic-4-5", "--set", "spawn=100,100", "--set", "rows=200",
            "--set", "cols=200", "--seed", "3", "--ascii")
    rows = [l for l in p.stdout.splitlines() if l and set(l) <= set("#.SE")]
    assert len(rows) == 200 and rows[100][100] == "S", p.stdout[:300]
    p = cli("run", "--preset", "classic-4-5", "--seed", str(2**64 - 1), check=False)
    assert p.returncode != 0 and "18446744073709551614" in p.stderr, p.stderr


# 9. Seeds at the top of the u64 range: one limit, 2**64 - 2, everywhere.
def test_largest_seed_everywhere(tmp_path):
    r = "chapter-strict"
    with pytest.raises(ValueError, match=str(MAX_SEED)):
        cs.generate(r, 2**64 - 1)
    top = cs.generate(r, MAX_SEED)
    assert np.array_equal(cs.generate_many(r, [MAX_SEED])[0], top)
    assert np.array_equal(cs.generate_many(r, range(MAX_SEED, MAX_SEED + 1))[0], top)
    found = cs.search(r, where="components>=0", seeds=[MAX_SEED, 5], progress=False)
    assert list(found["seed"]) == [5, MAX_SEED]
    with pytest.raises(ValueError, match=str(MAX_SEED)):
        cs.search(r, where="components>=0", seeds=[2**64 - 1], progress=False)
    with pytest.raises(ValueError, match=str(MAX_SEED)):
        cs.search(r, where="components>=0", seeds=range(0, 2**64), progress=False)
    s = cs.sweep(r, seeds=range(2**64 - 3, 2**64 - 1), out=tmp_path / "top", progress=False)
    assert s.attrs["cavesweep"]["seeds_run"] == 2
    assert "--seeds 18446744073709551613..18446744073709551615" in s.attrs["cavesweep"]["command"]
    with pytest.raises(ValueError, match=str(MAX_SEED)):
        cs.sweep(r, seeds=range(2**64 - 3, 2**64), progress=False)


# 10. Negative or huge integers raised OverflowError; a spawn printed as 18446744073709551615.
@pytest.mark.parametrize("call", [
    lambda: cs.generate("chapter-strict", -1),
    lambda: cs.remove_small(np.zeros((4, 4), np.uint8), -1),
    lambda: cs.bridge(np.zeros((4, 4), np.uint8), -1),
    lambda: cs.generate_many("chapter-strict", range(2), threads=-1),
    lambda: cs.generate_many("chapter-strict", range(2), threads=10**30),
    lambda: cs.sweep("chapter-strict", seeds=2, threads=-1, progress=False),
    lambda: cs.sweep("chapter-strict", seeds=2, chunk=-1, progress=False),
    lambda: cs.search("chapter-strict", where="components>=1", seeds=2, limit=-1, progress=False),
    lambda: cs.search("chapter-strict", where="components>=1", seeds=2, scale=70000, progress=False),
    lambda: cs.search("chapter-strict", where="components>=1", seeds=2, chunk=0, progress=False),
])
def test_out_of_range_integers_are_value_errors(call):
    with pytest.raises(ValueError):
        call()


def test_cells_in_measure():
    g = np.zeros((4, 4), np.uint8)
    with pytest.raises(ValueError, match=r"\(-1,0\)"):
        cs.measure(g, spawn=(-1, 0))
    assert cs.measure(g, spawn=[1, 1]) == cs.measure(g, spawn=(1, 1))
    with pytest.raises(TypeError):
        cs.measure(g, spawn=(1, 1, 1))
    with pytest.raises(TypeError):
        cs.measure(g, spawn=(1.0, 1))


# 14. Seeds that were silently truncated or meant different things by their length.
def test_seed_spellings():
    r = "chapter-strict"
    for bad in [(0.5, 5.7), True, 2.0, "x", None]:
        with pytest.raises((TypeError, ValueError)):
            cs.sweep(r, seeds=bad, progress=False)
    with pytest.raises(TypeError, match="tuple is \\(start, stop\\)"):
        cs.search(r, where="components>=1", seeds=(1, 2, 3), progress=False)
    with pytest.raises(ValueError, match="empty"):
        cs.sweep(r, seeds=(7, 7), progress=False)
    with pytest.raises(ValueError, match="step 1"):
        cs.sweep(r, seeds=range(0, 10, 2), progress=False)
    # The spellings of one run agree, in a sweep and in a search; a stepped range is a list.
    counts = {cs.sweep(r, seeds=s, progress=False).attrs["cavesweep"]["seeds_run"]
              for s in [range(3, 9), (3, 9), "3..9", "3..=8"]}
    assert counts == {6}
    a = cs.search(r, where="components>=0", seeds=range(0, 20, 5), progress=False)
    assert list(a["seed"]) == [0, 5, 10, 15]
    b = cs.search(r, where="components>=0", seeds=np.arange(0, 20, 5, dtype=np.uint64),
                  progress=False)
    assert a.equals(b)


# 11. vary: typed values give the very sweep the flag strings give (same files, same record);
# spawn/exit are refused with one message whatever the spelling.
def test_vary_values_equal_their_text(tmp_path):
    typed = cs.sweep("classic-4-5", seeds=20, out=tmp_path / "a", progress=False,
                     vary={"fill": [0.4, np.float64(0.45)], "steps": range(2, 4)})
    text = cs.sweep("classic-4-5", seeds=20, out=tmp_path / "b", progress=False,
                    vary=["fill=0.4,0.45", "steps=2..4"])
    for f in ["summary.csv", "trajectory.csv", "components.csv", "seeds.csv"]:
        assert (tmp_path / "a" / f).read_bytes() == (tmp_path / "b" / f).read_bytes(), f
    cmd = typed.attrs["cavesweep"]["command"]
    assert cmd == text.attrs["cavesweep"]["command"]
    assert "--vary fill=0.4,0.45 --vary steps=2..4" in cmd
    ma = json.loads((tmp_path / "a" / "manifest.json").read_text())
    mb = json.loads((tmp_path / "b" / "manifest.json").read_text())
    assert ma == mb
    for spelling in [{"spawn": [(1, 2), (3, 4)]}, {"exit": "1,2"}, ["spawn=1,2"]]:
        with pytest.raises(ValueError, match="spawn cannot be varied|exit cannot be varied"):
            cs.sweep("classic-4-5", seeds=2, vary=spelling, progress=False)
    for bad in [{"rule": ["B3/S23,B36/S23"]}, {"steps": ["1..3"]}, {"fill": [0.4, 0.4]}]:
        with pytest.raises(ValueError):
            cs.sweep("classic-4-5", seeds=2, vary=bad, progress=False)
    with pytest.raises(TypeError):
        cs.sweep("classic-4-5", seeds=2, vary={"fill": [[0.4]]}, progress=False)
    with pytest.raises(TypeError):
        cs.sweep("classic-4-5", seeds=2, vary={"fill": [True]}, progress=False)


def test_shard_spellings(tmp_path):
    a = cs.sweep("classic-4-5", seeds=50, chunk=10, shard=(2, 3), out=tmp_path / "a",
                 progress=False)
    b = cs.sweep("classic-4-5", seeds=50, chunk=10, shard="2/3", out=tmp_path / "b",
                 progress=False)
    assert a.equals(b)
    for bad in [(0, 3), (4, 3), (1, -1), "4/3"]:
        with pytest.raises(ValueError):
            cs.sweep("classic-4-5", seeds=5, shard=bad, progress=False)
    with pytest.raises(TypeError):
        cs.sweep("classic-4-5", seeds=5, shard=[1, 2], progress=False)


def test_lists_of_strings():
    with pytest.raises(TypeError, match="list of strings"):
        cs.sweep("classic-4-5", seeds=2, gate=[1], progress=False)
    with pytest.raises(TypeError, match="list of strings"):
        cs.search("classic-4-5", where="components>=1", seeds=2, metrics=5, progress=False)
    a = cs.search("classic-4-5", where="components>=1", seeds=30, metrics=["floor_fraction",
                  "reach_depth"], progress=False)
    b = cs.search("classic-4-5", where="components>=1", seeds=30,
                  metrics="floor_fraction,reach_depth", progress=False)
    assert a.equals(b)


# 7. A user's file was replaced without force=True as soon as an empty FILE.checkpoint/ existed.
def test_an_empty_checkpoint_folder_proves_nothing(tmp_path, cli):
    f = tmp_path / "mine.csv"
    f.write_text("PRECIOUS")
    (tmp_path / "mine.csv.checkpoint").mkdir()
    png = tmp_path / "pngs"
    with pytest.raises(RuntimeError, match="force=True"):
        cs.search("classic-4-5", where="components>=1", seeds=5, out=f, png_dir=png,
                  progress=False)
    p = cli("search", "--preset", "classic-4-5", "--where", "components>=1", "--seeds", "0..5",
            "--out", f, check=False)
    assert p.returncode != 0 and "--force" in p.stderr, p.stderr
    assert f.read_text() == "PRECIOUS" and not png.exists()
    assert os.listdir(tmp_path / "mine.csv.checkpoint") == []
    # With force=True it is replaced, and a rerun (the checkpoint now ours) needs no force.
    a = cs.search("classic-4-5", where="components>=1", seeds=5, out=f, force=True,
                  progress=False)
    b = cs.search("classic-4-5", where="components>=1", seeds=5, out=f, progress=False)
    assert a.equals(b) and f.read_text().startswith("seed")


# 14. Recipe was immutable and comparable but not hashable.
def test_recipes_are_hashable():
    a = cs.recipe("classic-4-5", spawn=(100, 100), rows=200, cols=200)
    b = cs.recipe("classic-4-5", rows=200, cols=200, spawn=(100, 100))
    assert hash(a) == hash(b) and len({a, b, cs.recipe("classic-4-5")}) == 2
    assert {a: 1}[b] == 1


# 2. Worker threads that cannot start (a memory limit) were a panic in sweep() and search().
def test_threads_that_cannot_start_are_an_error():
    code, out, err = run_py("""
        import cavesweep as cs
        calls = [
            lambda: cs.sweep("classic-4-5", seeds=100, threads=3000, progress=False),
            lambda: cs.search("classic-4-5", where="components>=1", seeds=100, threads=3000,
                              progress=False),
            lambda: cs.generate_many("classic-4-5", range(100), threads=3000),
        ]
        for f in calls:
            try:
                f()
                print("ran")
            except Exception as e:
                print(type(e).__name__, e)
    """, limit_mb=1500)
    assert code == 0, err
    lines = out.splitlines()
    assert len(lines) == 3, out
    for l in lines:
        assert l == "ran" or ("cannot start 3000 worker threads" in l and "Panic" not in l), l
    assert "panicked" not in err, err


# 12. An empty search result's dtypes differed from pandas.read_csv of the CSV written.
def test_empty_search_reads_as_its_csv(tmp_path):
    pd = pytest.importorskip("pandas")
    out = tmp_path / "none.csv"
    got = cs.search("classic-4-5", where="components<0", seeds=10, metrics="floor_fraction",
                    out=out, progress=False)
    want = pd.read_csv(out)
    assert len(got) == 0 and list(got.columns) == list(want.columns)
    assert got.dtypes.to_dict() == want.dtypes.to_dict()


# 14. Big-endian and float16 grids were refused, though the README says any integer width and
# floats.
def test_byte_swapped_and_half_float_grids():
    g = cs.generate("classic-4-5", 3)
    want = cs.measure(g)
    for dtype in [">i2", ">u4", ">i8", ">f8", ">f4", "f2", ">f2"]:
        assert cs.measure(g.astype(dtype)) == want, dtype
        assert np.array_equal(cs.keep_largest(g.astype(dtype)), cs.keep_largest(g).astype(dtype))
    with pytest.raises(ValueError, match="must be 0 \\(FLOOR\\) or 1"):
        cs.measure(np.full((3, 3), 0.5, "f2"))


# 9. read_table without pandas overflowed on seeds >= 2**63.
def test_read_table_without_pandas_keeps_big_seeds(tmp_path, monkeypatch):
    out = tmp_path / "top.csv"
    cs.search("chapter-strict", where="components>=0", seeds=(MAX_SEED - 2, MAX_SEED + 1),
              out=out, progress=False)
    monkeypatch.setitem(sys.modules, "pandas", None)
    t = cs.read_table(out)
    assert isinstance(t, dict) and t["seed"].dtype == np.uint64
    assert list(t["seed"]) == [MAX_SEED - 2, MAX_SEED - 1, MAX_SEED]


# 13. measure() of a large map held the GIL: other Python threads stood still meanwhile.
def test_measure_of_a_large_map_lets_other_threads_run():
    import threading
    import time

    g = np.zeros((4096, 4096), np.uint8)
    t = threading.Thread(target=lambda: cs.measure(g, metrics="reach_depth", spawn=(0, 0)))
    stamps = []
    start = time.perf_counter()
    t.start()
    while t.is_alive():
        stamps.append(time.perf_counter())
    took = time.perf_counter() - start
    gaps = np.diff([start] + stamps)
    # The measure takes about 0.1 s; the loop beside it never waits for more than a slice.
    assert len(stamps) > 100 and gaps.max() < max(0.05, took / 2), (len(stamps), gaps.max(), took)
