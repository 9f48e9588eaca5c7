"""The package's writers under the file-safety model (README, "What cavesweep touches"): the same
hostile paths as the command line's tests/hostile.rs (links where cavesweep's files belong, FIFOs,
look-alike temporary names, empty names) and hostile `out=` arrays. Every case must raise the
documented exception, change nothing that is not cavesweep's, and never hang: each test runs
under an alarm that fails it after 60 s.
"""

import os
import signal

import numpy as np
import pytest

import cavesweep as cs

QUERY = "components >= 1"


@pytest.fixture(autouse=True)
def _time_limit():
    def fail(signum, frame):
        raise TimeoutError("still running after 60 s: blocked?")

    old = signal.signal(signal.SIGALRM, fail)
    signal.alarm(60)
    yield
    signal.alarm(0)
    signal.signal(signal.SIGALRM, old)


@pytest.fixture
def victim(tmp_path):
    p = tmp_path / "victim.txt"
    p.write_text("PRECIOUS")
    yield p
    assert p.read_text() == "PRECIOUS", "a file outside the output was changed"


def test_sweep_never_follows_a_linked_lock(tmp_path, victim):
    out = tmp_path / "o"
    out.mkdir()
    (out / "cavesweep.lock").symlink_to(victim)
    with pytest.raises(RuntimeError, match="symbolic link"):
        cs.sweep("classic-4-5", seeds=range(40), out=out)
    with pytest.raises(RuntimeError, match="symbolic link"):
        cs.sweep("classic-4-5", seeds=range(40), out=out, force=True)


def test_sweep_refusal_removes_nothing(tmp_path):
    out = tmp_path / "tm"
    (out / "seeds.csv.tmp2024").mkdir(parents=True)
    (out / "seeds.csv.tmp2024" / "ch1.txt").write_text("thesis")
    (out / "notes.txt").write_text("n")
    with pytest.raises(RuntimeError, match="not ours"):
        cs.sweep("classic-4-5", seeds=range(40), out=out)
    assert (out / "seeds.csv.tmp2024" / "ch1.txt").read_text() == "thesis"
    assert sorted(p.name for p in out.iterdir()) == ["notes.txt", "seeds.csv.tmp2024"]


def test_empty_out_names_write_nothing_into_the_current_folder(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises((ValueError, RuntimeError), match="empty"):
        cs.sweep("classic-4-5", seeds=range(40), out="")
    with pytest.raises(ValueError, match="empty"):
        cs.search("classic-4-5", where=QUERY, seeds=range(20), out="")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("kind", ["link", "fifo", "dangling"])
def test_search_out_is_never_a_link_or_a_fifo(tmp_path, victim, kind):
    out = tmp_path / "rows.csv"
    if kind == "link":
        out.symlink_to(victim)
    elif kind == "dangling":
        out.symlink_to(tmp_path / "made-by-link.csv")
    else:
        os.mkfifo(out)
    pngs = tmp_path / "pngs"
    with pytest.raises(RuntimeError, match="FIFO" if kind == "fifo" else "symbolic link"):
        cs.search("classic-4-5", where=QUERY, seeds=range(20), out=out, force=True,
                  png_dir=pngs)
    assert not (tmp_path / "made-by-link.csv").exists()
    assert not pngs.exists(), "a refused search creates no png_dir"


def test_a_linked_checkpoint_folder_is_refused(tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (tmp_path / "rows.csv.checkpoint").symlink_to(elsewhere)
    with pytest.raises(RuntimeError, match="symbolic link"):
        cs.search("classic-4-5", where=QUERY, seeds=range(20), out=tmp_path / "rows.csv")
    assert list(elsewhere.iterdir()) == []
    assert not (tmp_path / "rows.csv").exists()


@pytest.mark.parametrize("bad", ["readonly", "dtype", "shape", "fortran"])
def test_hostile_out_arrays_are_refused_untouched(bad):
    r = cs.recipe("classic-4-5")
    shape = (3,) + r.shape
    arr = np.full(shape, 7, dtype=np.uint8)
    if bad == "readonly":
        arr.flags.writeable = False
    elif bad == "dtype":
        arr = np.full(shape, 7, dtype=np.int32)
    elif bad == "shape":
        arr = np.full((3, r.rows + 1, r.cols), 7, dtype=np.uint8)
    else:
        arr = np.asfortranarray(arr)
    before = arr.copy()
    with pytest.raises(ValueError):
        cs.generate_many(r, range(3), out=arr)
    assert np.array_equal(arr, before)
