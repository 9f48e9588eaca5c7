"""measure() and the post-steps on user arrays: every shape, layout and dtype, and bad input."""

import numpy as np
import pytest

import cavesweep as cs
from cavesweep import _native

# Widths around the word sizes the packed rows care about (64, 128, 256), and the extremes.
SHAPES = [
    (1, 1), (1, 2), (2, 1), (1, 300), (300, 1), (3, 63), (3, 64), (3, 65), (5, 127), (5, 128),
    (5, 129), (4, 255), (4, 256), (4, 257), (64, 64), (90, 140), (19, 77), (128, 130),
    (300, 300), (257, 63),
]
DTYPES = [np.bool_, np.uint8, np.int8, np.int16, np.int32, np.int64, np.uint16, np.uint32,
          np.uint64, np.float32, np.float64]


def reference(arr, metrics="all", spawn=None, exit=None, connectivity=4):
    """The Rust scalar oracle on the array's cells, taken through numpy's own conversion."""
    cells = np.ascontiguousarray(arr, dtype=np.uint8)
    rows, cols = cells.shape
    if spawn is None:
        spawn = (rows // 2, cols // 2)
    return _native._oracle_measure(cells.tobytes(), rows, cols, metrics, spawn, exit, connectivity)


def layouts(base, rng):
    """The same cells as a C array, a Fortran array, a strided slice and a reversed view."""
    yield "C", np.ascontiguousarray(base)
    yield "F", np.asfortranarray(base)
    rows, cols = base.shape
    big = rng.integers(0, 2, size=(2 * rows + 1, 3 * cols + 2)).astype(base.dtype)
    big[1::2, 2::3] = base
    sliced = big[1::2, 2::3]
    assert not sliced.flags.c_contiguous or base.size <= 1
    yield "strided", sliced
    flipped = np.ascontiguousarray(base[::-1, ::-1])[::-1, ::-1]
    yield "reversed", flipped
    yield "transposed-F", np.ascontiguousarray(base.T).T


def independent(arr):
    """Two metrics computed here with plain numpy, not through cavesweep at all."""
    a = arr.astype(np.int64)
    boundary = int((a[1:, :] != a[:-1, :]).sum() + (a[:, 1:] != a[:, :-1]).sum())
    return {"wall_fraction": a.sum() / a.size, "boundary": boundary}


def test_measure_equals_the_rust_metrics_for_every_shape_layout_and_dtype():
    rng = np.random.default_rng(14)
    checked = 0
    for i, (rows, cols) in enumerate(SHAPES):
        p = [0.3, 0.5, 0.7][i % 3]
        cells = (rng.random((rows, cols)) < p).astype(np.uint8)
        spawn = (int(rng.integers(rows)), int(rng.integers(cols)))
        if rng.random() < 0.5:
            cells[spawn] = 0  # a floor spawn, so the path metrics have something to measure
        exit = (int(rng.integers(rows)), int(rng.integers(cols)))
        conn = [4, 8, 6][(i + i // 3) % 3]
        want = reference(cells, spawn=spawn, exit=exit, connectivity=conn)
        for k in independent(cells):
            assert want[k] == independent(cells)[k], (rows, cols, k)
        for dtype in DTYPES:
            for name, arr in layouts(cells.astype(dtype), rng):
                got = cs.measure(arr, spawn=spawn, exit=exit, connectivity=conn)
                assert got == want, (rows, cols, np.dtype(dtype).name, name)
                checked += 1
    assert checked == len(SHAPES) * len(DTYPES) * 5


def test_random_shapes_and_default_spawn():
    rng = np.random.default_rng(7)
    for _ in range(60):
        rows, cols = int(rng.integers(1, 300)), int(rng.integers(1, 300))
        cells = rng.random((rows, cols)) < rng.random()
        assert cs.measure(cells) == reference(cells), (rows, cols)
        assert cs.measure(cells, connectivity=8) == reference(cells, connectivity=8)


def test_metric_selection_and_value_types():
    cave = cs.generate("chapter-strict", 42)
    m = cs.measure(cave)
    assert list(m) == cs.METRICS
    assert isinstance(m["components"], int) and isinstance(m["floor_fraction"], float)
    assert m["path_length"] is None  # no exit given
    assert list(cs.measure(cave, metrics="components,boundary")) == ["components", "boundary"]
    assert list(cs.measure(cave, metrics=["min_width"])) == ["min_width"]
    with_exit = cs.measure(cave, spawn=(45, 70), exit=(45, 71))
    assert with_exit["path_length"] == (1 if cave[45, 70] == 0 and cave[45, 71] == 0 else None)
    # Lists of lists work too (numpy.asarray).
    assert cs.measure([[0, 1], [1, 0]], spawn=(0, 0))["components"] == 2


@pytest.mark.parametrize(
    "bad, message",
    [
        (np.zeros((2, 3, 4), np.uint8), "2-D"),
        (np.zeros(5, np.uint8), "2-D"),
        (np.uint8(1), "2-D"),
        (np.zeros((0, 5), np.uint8), "empty"),
        (np.zeros((5, 0), bool), "empty"),
        (np.array([[0, 2]]), "is 2"),
        (np.array([[0, 1], [1, -1]]), "(1, 1) is -1"),
        (np.array([[0.5]]), "0.5"),
        (np.array([[np.nan]]), "nan"),
        (np.array([[1, 0]], dtype=np.complex128), "not supported"),
        (np.array([["a"]]), "not supported"),
        (np.array([[None]], dtype=object), "not supported"),
        (np.frombuffer(b"\x00\x02", dtype=np.bool_).reshape(1, 2), "is 2"),
        # Byte-swapped integers are read (python/tests/test_args.py): not a bad array any more.
        (np.zeros((2, 2), dtype=np.complex64), "not supported"),
    ],
)
def test_bad_arrays_are_value_errors(bad, message):
    with pytest.raises(ValueError) as e:
        cs.measure(bad)
    assert message in str(e.value) and "\n" not in str(e.value)
    for post in (cs.keep_largest, cs.bridge):
        with pytest.raises(ValueError):
            post(bad)


def test_bad_arguments_are_value_errors_with_the_library_messages():
    cave = np.zeros((10, 12), np.uint8)
    with pytest.raises(ValueError, match=r"spawn \(10, 0\) is outside the 10x12 grid"):
        cs.measure(cave, spawn=(10, 0))
    with pytest.raises(ValueError, match="outside"):
        cs.measure(cave, spawn=(-1, 0))
    with pytest.raises(ValueError, match="exit"):
        cs.measure(cave, exit=(0, 12))
    with pytest.raises(ValueError, match='connectivity "5"'):
        cs.measure(cave, connectivity=5)
    with pytest.raises(ValueError, match='unknown metric "speed"; valid metrics: wall_fraction'):
        cs.measure(cave, metrics="speed")
    with pytest.raises(ValueError, match="empty metric list"):
        cs.measure(cave, metrics="")


def test_post_steps_equal_the_pipelines():
    # keep-largest and remove-small draw nothing from the RNG, so a recipe's post-step and the
    # function on the recipe's cave without it give the same array.
    for seed in range(20):
        plain = cs.generate("classic-4-5", seed)
        for post, f in [
            ("keep-largest", lambda a: cs.keep_largest(a)),
            ("remove-small 20", lambda a: cs.remove_small(a, 20)),
        ]:
            assert np.array_equal(cs.generate("classic-4-5", seed, post=post), f(plain)), (seed, post)
        eight = cs.generate("classic-4-5", seed, connectivity=8, post="keep-largest")
        assert np.array_equal(eight, cs.keep_largest(plain, connectivity=8))


def test_post_step_results():
    rng = np.random.default_rng(3)
    for _ in range(20):
        cave = (rng.random((40, 70)) < 0.55).astype(np.uint8)
        kept = cs.keep_largest(cave)
        assert cs.measure(kept)["components"] <= 1
        assert ((kept == 1) | (cave == 0)).all()  # only floor turned to wall
        small = cs.remove_small(cave, 5)
        assert ((small == 1) | (cave == 0)).all()
        assert cs.measure(small)["components"] <= cs.measure(cave)["components"]
        bridged = cs.bridge(cave, seed=9)
        assert cs.measure(bridged, connectivity=8)["components"] <= 1
        assert np.array_equal(bridged, cs.bridge(cave, seed=9))
    # Dtypes and layouts come back as given.
    b = cave.astype(bool)
    assert cs.keep_largest(b).dtype == np.bool_
    assert cs.remove_small(cave.astype(np.int32)[::2], 3).dtype == np.int32
    assert np.array_equal(cs.keep_largest(np.asfortranarray(cave)), cs.keep_largest(cave))
    # The input is not modified.
    before = cave.copy()
    cs.bridge(cave)
    assert np.array_equal(cave, before)


def test_remove_small_removes_exactly_the_small_components():
    cave = np.array(
        [
            [0, 1, 0, 0, 1],
            [1, 1, 1, 1, 1],
            [0, 0, 0, 1, 0],
        ],
        dtype=np.uint8,
    )
    out = cs.remove_small(cave, 2)
    assert out.tolist() == [[1, 1, 0, 0, 1], [1, 1, 1, 1, 1], [0, 0, 0, 1, 1]]
    assert cs.keep_largest(cave).tolist() == [[1, 1, 1, 1, 1], [1, 1, 1, 1, 1], [0, 0, 0, 1, 1]]
