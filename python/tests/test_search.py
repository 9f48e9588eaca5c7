"""search(): the command line's search from Python, its rows and CSV byte for byte, errors,
progress, Ctrl-C and resume."""

import os
import sys

import numpy as np
import pytest

import cavesweep as cs
from test_generate import interrupt_after

# (Python keyword arguments, the same search's command line flags)
CASES = [
    pytest.param(
        dict(where="components<=2 && floor_fraction>=0.6", seeds=range(3000)),
        ["--where", "components<=2 && floor_fraction>=0.6", "--seeds", "0..3000"],
        id="every-match",
    ),
    pytest.param(
        dict(recipe="classic-4-5", where="connected_fraction>=0.99 || path_length<50", seeds="100..2100",
             limit=25, metrics=["wall_fraction", "min_width"], rows=40, fill=0.45),
        ["--preset", "classic-4-5", "--where", "connected_fraction>=0.99 || path_length<50",
         "--seeds", "100..2100", "--limit", "25", "--metrics", "wall_fraction,min_width",
         "--set", "rows=40", "--set", "fill=0.45"],
        id="limit",
    ),
    pytest.param(
        dict(where="!(components>3)", seeds=4000, top=30, by="largest_fraction", order="asc", metrics="all"),
        ["--where", "!(components>3)", "--seeds", "0..4000", "--top", "30", "--by", "largest_fraction",
         "--order", "asc", "--metrics", "all"],
        id="top-asc",
    ),
    pytest.param(
        dict(recipe="nethack-mines", where="floor_fraction>0.3", seeds=(2**64 - 600, 2**64 - 1), top=10,
             by="boundary"),
        ["--preset", "nethack-mines", "--where", "floor_fraction>0.3", "--seeds",
         f"{2**64 - 600}..{2**64 - 1}", "--top", "10", "--by", "boundary"],
        id="top-desc-huge-seeds",
    ),
    pytest.param(
        dict(where="path_length>=0", seeds=range(500), rng="numpy", exit=(10, 10)),
        ["--where", "path_length>=0", "--seeds", "0..500", "--set", "rng=numpy", "--set", "exit=10,10"],
        id="numpy-rng-empty-values",
    ),
]


@pytest.mark.parametrize("kwargs, flags", CASES)
def test_search_is_the_command_lines(cli, tmp_path, kwargs, flags):
    cli("search", *flags, "--out", tmp_path / "cli.csv")
    table = cs.search(**kwargs, out=tmp_path / "py.csv", threads=2)
    # The CSV is the command line's, byte for byte; like the command line, a finished search
    # leaves only its completion mark beside it (the FILE.checkpoint folder).
    assert (tmp_path / "py.csv").read_bytes() == (tmp_path / "cli.csv").read_bytes()
    assert sorted(os.listdir(tmp_path)) == [
        "cli.csv", "cli.csv.checkpoint", "py.csv", "py.csv.checkpoint"]
    # The table is the CSV as pandas reads it (or, without pandas, the same columns).
    pd = pytest.importorskip("pandas")
    want = pd.read_csv(tmp_path / "cli.csv")
    assert len(want) > 0
    pd.testing.assert_frame_equal(table, want)
    report = table.attrs["cavesweep"]
    assert report["rows"] == len(want) and report["out"] == str(tmp_path / "py.csv")
    assert report["command"].startswith("cavesweep search --preset ")
    # Without out, and on one thread: the same rows.
    pd.testing.assert_frame_equal(cs.search(**kwargs, threads=1), want)


def test_seed_lists_and_seeds_from(cli, tmp_path):
    cli("sweep", "--seeds", "0..2000", "--gate", "components<=1", "--per-seed", "kept", "--out", tmp_path / "sw")
    seeds_csv = tmp_path / "sw" / "seeds.csv"
    flags = ["--where", "floor_fraction>=0.92", "--metrics", "components"]
    cli("search", *flags, "--seeds-from", seeds_csv, "--out", tmp_path / "cli.csv")
    want = cs.read_table(tmp_path / "cli.csv")
    got = cs.search(where="floor_fraction>=0.92", seeds_from=seeds_csv, metrics=["components"])
    pd = pytest.importorskip("pandas")
    pd.testing.assert_frame_equal(got, want)
    # A list, an array or a column of seeds is searched like the file (sorted, deduplicated).
    kept = cs.read_table(seeds_csv)["seed"]
    shuffled = np.random.default_rng(1).permutation(np.asarray(kept))
    for seeds in (kept, list(shuffled) + [int(shuffled[0])], shuffled.astype(np.uint64)):
        pd.testing.assert_frame_equal(cs.search(where="floor_fraction>=0.92", seeds=seeds, metrics="components"), want)
    # Searching the matches again keeps them all.
    again = cs.search(where="floor_fraction>=0.92", seeds=got["seed"], metrics="components")
    pd.testing.assert_frame_equal(again, want)


def test_without_pandas_the_columns_are_numpy(monkeypatch):
    monkeypatch.setitem(sys.modules, "pandas", None)  # import pandas -> ImportError
    t = cs.search(where="components<=1", seeds=300, metrics="path_length,floor_fraction", exit=(45, 100))
    assert isinstance(t, dict) and list(t) == ["seed", "floor_fraction", "components", "path_length"]
    assert t["seed"].dtype == np.int64 and (np.diff(t["seed"]) > 0).all()
    assert t["components"].dtype == np.int64 and (t["components"] <= 1).all()
    assert t["floor_fraction"].dtype == np.float64
    # path_length is empty where the exit is walled off: float64 with NaN, as pandas reads it.
    assert t["path_length"].dtype == np.float64 and np.isnan(t["path_length"]).any()
    huge = cs.search(where="components>=1", seeds=(2**64 - 3, 2**64 - 1))
    assert huge["seed"].dtype == np.uint64 and huge["seed"].tolist() == [2**64 - 3, 2**64 - 2]
    none = cs.search(where="components>1000", seeds=100)
    assert none["seed"].shape == (0,) and none["components"].dtype == np.int64


def test_explain_and_pictures(tmp_path):
    plan = cs.search(where="components<=3 && floor_fraction>0.9", seeds=1000, explain=True)
    assert isinstance(plan, str) and "evaluation order" in plan and "components<=3" in plan
    t = cs.search(where="components<=3", seeds=1000, limit=3, png_dir=tmp_path / "png", scale=2)
    seeds = [int(s) for s in t["seed"]]
    assert sorted(os.listdir(tmp_path / "png")) == sorted(f"{s}.png" for s in seeds)
    head = (tmp_path / "png" / f"{seeds[0]}.png").read_bytes()[:8]
    assert head == b"\x89PNG\r\n\x1a\n"


def test_progress(capsys):
    seen = []
    cs.search(where="components<=2", seeds=20000, chunk=1000, threads=1, progress=lambda d, t: seen.append((d, t)))
    assert seen and seen[-1] == (20000, 20000)
    assert [d for d, _ in seen] == sorted(d for d, _ in seen)
    # Not interactive (pytest captures stderr): no bar by default.
    cs.search(where="components<=2", seeds=1000)
    assert capsys.readouterr().err == ""


# Bad searches: (Python keyword arguments, the same search as command-line flags, the start of
# Python's message). Both refuse in one line; Python names its keywords, never a flag.
BAD = [
    (dict(where="speed>3", seeds=10), ["--where", "speed>3", "--seeds", "0..10"],
     'where=: query "speed>3", column 1: unknown metric "speed"'),
    (dict(where="components<<3", seeds=10), ["--where", "components<<3", "--seeds", "0..10"],
     'where=: query "components<<3", column 12: expected a number'),
    (dict(where="components<3", seeds="5..5"), ["--where", "components<3", "--seeds", "5..5"],
     'seeds="5..5": expected A..B (half-open'),
    (dict(where="components<3"), ["--where", "components<3"],
     "give the seeds to search: seeds=A..B"),
    (dict(where="components<3", seeds=10, seeds_from="x.csv"),
     ["--where", "components<3", "--seeds", "0..10", "--seeds-from", "x.csv"],
     "seeds= and seeds_from=: give one of them"),
    (dict(where="components<3", seeds_from="/nonexistent/x.csv"),
     ["--where", "components<3", "--seeds-from", "/nonexistent/x.csv"],
     'seeds_from="/nonexistent/x.csv": cannot read: '),
    (dict(where="components<3", seeds=10, limit=3, top=3), ["--where", "components<3", "--seeds", "0..10", "--limit", "3", "--top", "3"],
     "limit= and top=: give one of them"),
    (dict(where="components<3", seeds=10, limit=0), ["--where", "components<3", "--seeds", "0..10", "--limit", "0"],
     "limit must be at least 1"),
    (dict(where="components<3", seeds=10, top=0, by="boundary"), ["--where", "components<3", "--seeds", "0..10", "--top", "0", "--by", "boundary"],
     "top must be at least 1"),
    (dict(where="components<3", seeds=10, top=3), ["--where", "components<3", "--seeds", "0..10", "--top", "3"],
     "top= needs by="),
    (dict(where="components<3", seeds=10, top=3, by="size"), ["--where", "components<3", "--seeds", "0..10", "--top", "3", "--by", "size"],
     'by=: unknown metric "size"'),
    (dict(where="components<3", seeds=10, top=3, by="boundary", order="up"),
     ["--where", "components<3", "--seeds", "0..10", "--top", "3", "--by", "boundary", "--order", "up"],
     'order=: "up" is not asc or desc'),
    (dict(where="components<3", seeds=10, by="boundary"), ["--where", "components<3", "--seeds", "0..10", "--by", "boundary"],
     "by= ranks the matches of top=K"),
    (dict(where="components<3", seeds=10, order="asc"), ["--where", "components<3", "--seeds", "0..10", "--order", "asc"],
     "order= applies to top="),
    (dict(where="components<3", seeds=10, metrics="colour"), ["--where", "components<3", "--seeds", "0..10", "--metrics", "colour"],
     'metrics=: unknown metric "colour"'),
    (dict(where="components<3", seeds=10, chunk=0), ["--where", "components<3", "--seeds", "0..10", "--chunk", "0"],
     "chunk must be from 1 to 65536 seeds"),
]


@pytest.mark.parametrize("kwargs, flags, start", BAD)
def test_bad_searches_say_it_in_their_callers_words(cli, kwargs, flags, start):
    p = cli("search", *flags, check=False)
    assert p.returncode != 0
    line = p.stderr.strip()
    assert line.startswith("cavesweep: error: ") and "\n" not in line, line
    with pytest.raises(ValueError) as e:
        cs.search(**kwargs)
    msg = str(e.value)
    assert msg.startswith(start) and "\n" not in msg, msg
    assert "--" not in msg, msg
    # The command line names its flags for the same problem.
    assert "--" in line, line


def test_more_bad_arguments(tmp_path):
    with pytest.raises(ValueError, match="fill: probability 2"):
        cs.search(where="components<3", seeds=10, fill=2)
    with pytest.raises(ValueError, match="threads must be at least 1"):
        cs.search(where="components<3", seeds=10, threads=0)
    with pytest.raises(ValueError, match="18446744073709551615 is not a seed"):
        cs.search(where="components<3", seeds=[1, 2**64 - 1])
    with pytest.raises(ValueError, match="no seeds to search"):
        cs.search(where="components<3", seeds=[])
    with pytest.raises(ValueError, match="-1 is not a seed"):
        cs.search(where="components<3", seeds=np.array([3, -1]))
    with pytest.raises(ValueError, match="scale"):
        cs.search(where="components<3", seeds=10, scale=0)
    bad_csv = tmp_path / "bad.csv"
    bad_csv.write_text("seed\n1\nx\n")
    with pytest.raises(ValueError, match="line 3"):
        cs.search(where="components<3", seeds_from=bad_csv)
    with pytest.raises(ValueError, match="is a folder"):
        cs.search(where="components<3", seeds=10, out=tmp_path, force=True)


def test_out_files_are_not_overwritten_by_accident(tmp_path):
    out = tmp_path / "found.csv"
    out.write_text("precious\n")
    with pytest.raises(RuntimeError, match="force=True"):
        cs.search(where="components<3", seeds=100, out=out)
    assert out.read_text() == "precious\n"
    cs.search(where="components<3", seeds=100, out=out, force=True)
    assert out.read_text().startswith("seed,components\n")
    with pytest.raises(RuntimeError, match="does not exist"):
        cs.search(where="components<3", seeds=100, out=tmp_path / "no" / "found.csv")


@pytest.mark.skipif(os.name != "posix", reason="SIGINT delivery")
def test_ctrl_c_stops_a_search_within_a_second_and_it_resumes(cli, tmp_path):
    # Long caves (many steps) in small chunks: a chunk (the unit of stopping) lasts
    # milliseconds; the interrupt comes once the first chunks are done, well before the last.
    out = tmp_path / "py.csv"
    args = dict(where="components<=2", seeds="0..200000", chunk=64, metrics="floor_fraction",
                rows=30, cols=40, steps=30)
    code, err, secs = interrupt_after(
        f"""
        import cavesweep as cs
        print("started", flush=True)
        def progress(done, total):
            if done:
                print("progress", done, flush=True)
        cs.search(out={str(out)!r}, progress=progress, **{args!r})
        """,
        delay=0.0,
        wait_for="progress",
    )
    assert "KeyboardInterrupt" in err and "call search() again" in err, err
    assert code != 0 and secs < 1.0, (code, secs)
    assert (tmp_path / "py.csv.checkpoint").is_dir()
    # Resume in this process, then compare with an uninterrupted command-line run.
    table = cs.search(out=out, **args)
    if hasattr(table, "attrs"):
        report = table.attrs["cavesweep"]
        assert report["resumed_chunks"] > 0 and report["examined"] < 200000, report
    # Finished: the checkpoint folder holds only the completion mark, as the command line's.
    assert (tmp_path / "py.csv.checkpoint").is_dir()
    cli("search", "--where", "components<=2", "--seeds", "0..200000", "--chunk", "64", "--metrics",
        "floor_fraction", "--set", "rows=30", "--set", "cols=40", "--set", "steps=30",
        "--out", tmp_path / "cli.csv")
    assert out.read_bytes() == (tmp_path / "cli.csv").read_bytes()
