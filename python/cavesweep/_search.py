"""``cavesweep.search()``: the command line's ``cavesweep search`` from Python.

The search runs in Rust (``_native._search``: the library's search engine, the same as the
command line's); the arguments go to it as they are (it converts them into the library's types); this module shows progress
the way notebooks expect, and hands the matches back as a pandas DataFrame (or a dict of numpy
columns without pandas).
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any, Callable, Dict, Optional, Sequence, Tuple, Union

import numpy as np

from . import _native
from ._sweep import _progress

if TYPE_CHECKING:
    import pandas

    from ._native import RecipeLike, SetValue

    Table = Union["pandas.DataFrame", Dict[str, np.ndarray]]


def _table(columns, report):
    try:
        import pandas as pd
    except ImportError:
        return columns
    if all(len(v) == 0 for v in columns.values()):
        # As pandas.read_csv reads a CSV of a header alone: every column of dtype object.
        df = pd.DataFrame({k: pd.Series([], dtype=object) for k in columns})
    else:
        df = pd.DataFrame(columns)
    df.attrs["cavesweep"] = report
    return df


def search(
    recipe: RecipeLike = "chapter-strict",
    *,
    where: str,
    seeds: Union[range, int, Tuple[int, int], str, Sequence[int], np.ndarray, None] = None,
    seeds_from: Union[str, "os.PathLike[str]", None] = None,
    limit: Optional[int] = None,
    top: Optional[int] = None,
    by: Optional[str] = None,
    order: Optional[str] = None,
    metrics: Union[str, Sequence[str], None] = None,
    out: Union[str, "os.PathLike[str]", None] = None,
    force: bool = False,
    png_dir: Union[str, "os.PathLike[str]", None] = None,
    scale: int = 6,
    threads: Optional[int] = None,
    chunk: Optional[int] = None,
    explain: bool = False,
    progress: Union[bool, Callable[[int, int], Any], None] = None,
    **overrides: SetValue,
) -> Union[Table, str]:
    """Search seeds for the caves that meet a query: ``cavesweep search`` from Python.

    Arguments are the command line's flags:

    - ``recipe``: a Recipe or a preset name; ``**overrides`` are ``--set`` keys (``fill=0.5``,
      ``rows=60``, ``rng="numpy"``, ...).
    - ``where``: the query, e.g. ``"floor_fraction>=0.6 && (components<=3 || !(path_length>40))"``
      (metrics ``cavesweep.METRICS``; ``&&``, ``||``, ``!``, parentheses).
    - ``seeds``: ``range(0, 1_000_000)``, ``1_000_000`` (= 0..1000000), ``(start, stop)``,
      ``"A..B"``, or any list/array of seeds (e.g. a column of an earlier result; at most
      10,000,000; the largest seed is 2**64 - 2); or ``seeds_from``: a CSV
      file with a ``seed`` column (a sweep's ``seeds.csv``, an earlier search's ``out``).
    - ``limit=N``: the N lowest matching seeds (stops as soon as they are known); or ``top=K,
      by=METRIC, order="desc"|"asc"``: the K best matches by a metric, best first, ties by the
      lower seed. Neither: every match, in seed order.
    - ``metrics``: more columns beside those the query and ``by`` name (``"all"``, ``"a,b"`` or a
      list).
    - ``out``: also write the CSV there (the command line's ``--out FILE.csv``, byte for byte),
      with its finished chunks checkpointed in ``FILE.csv.checkpoint/``: after an interruption,
      calling ``search`` again with the same arguments (or running the same command line)
      resumes. ``force=True`` replaces another file or another search's checkpoint.
    - ``png_dir``: a PNG per returned match, ``SEED.png``, ``scale`` pixels per cell.
    - ``threads`` (default all cores; the rows do not depend on it), ``chunk`` (seeds per chunk).
    - ``explain=True``: return the evaluation plan (clause order, cost, sample pass rates) as a
      string instead of searching.
    - ``progress``: None shows a tqdm bar when interactive (a notebook or a terminal), False
      hides it, True forces it, or a callable ``f(examined, total)``.

    Returns the matches, one row per cave (``seed`` then the metric columns, as the command
    line's CSV has them), as a pandas DataFrame, or a dict of numpy columns without pandas.
    ``seed`` is int64 (uint64 past 2**63 - 1); counts are int64 unless a value is empty
    (float64 with NaN then, like fractions). A DataFrame's ``attrs["cavesweep"]`` holds the
    report: seeds examined, rows, elapsed seconds, threads, chunks resumed, the equivalent
    command line and the ``out`` file.

    Ctrl-C (KeyboardInterrupt) stops within a second; with ``out`` given, the file holds the
    rows of the finished chunks and calling ``search`` again with the same arguments resumes.
    Bad arguments raise ValueError with the command line's one-line message.
    """
    callback, close = _progress(progress, desc="search")
    if callback is not None and not hasattr(callback, "desc"):
        user = callback

        def callback(examined, total, matches):
            user(examined, total)

    try:
        try:
            result = _native._search(
                recipe,
                query=where,
                seeds=seeds,
                seeds_from=None if seeds_from is None else os.fspath(seeds_from),
                limit=limit,
                top=top,
                by=by,
                order=order,
                metrics=metrics,
                out=None if out is None else os.fspath(out),
                force=force,
                png_dir=None if png_dir is None else os.fspath(png_dir),
                scale=scale,
                threads=threads,
                chunk=chunk,
                explain=explain,
                progress=callback,
                **overrides,
            )
        finally:
            close()
    except KeyboardInterrupt:
        if out is not None:
            raise KeyboardInterrupt(
                f"search interrupted: the rows of the finished chunks are in {os.fspath(out)}; "
                "call search() again with the same arguments to resume"
            ) from None
        raise
    if explain:
        return result
    report = result["report"]
    report["out"] = None if out is None else os.fspath(out)
    return _table(result["columns"], report)
