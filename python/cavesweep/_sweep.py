"""``cavesweep.sweep()``, and the progress and table helpers ``cavesweep.search()`` shares.

The sweep itself runs in Rust (``_native._sweep``, the library's sweep engine, the same as
``cavesweep sweep``); the arguments go to it as they are (it converts them into the library's
types), and this module shows progress the way notebooks expect, and reads ``summary.csv`` back as a pandas
DataFrame (or a dict of numpy columns without pandas).
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from typing import TYPE_CHECKING, Any, Callable, Dict, Iterable, Mapping, Optional, Sequence, Tuple, Union

import numpy as np

from . import _native

if TYPE_CHECKING:
    import pandas

    from ._native import RecipeLike, SetValue

    Table = Union["pandas.DataFrame", Dict[str, np.ndarray]]
    VaryValues = Union[str, range, Sequence[Any], np.ndarray, int, float]


def _interactive():
    """A notebook kernel, or a terminal on stderr."""
    ip = sys.modules.get("IPython")
    if ip is not None:
        try:
            shell = ip.get_ipython()
        except Exception:  # noqa: BLE001 (any IPython oddity: just not a notebook)
            shell = None
        if shell is not None and "IPKernelApp" in getattr(shell, "config", {}):
            return True
    try:
        return sys.stderr.isatty()
    except (AttributeError, ValueError):
        return False


class _Bar:
    """Progress through tqdm (``tqdm.auto``: a widget in notebooks), or a plain text line."""

    def __init__(self, desc="sweep"):
        self.bar = None
        try:
            from tqdm.auto import tqdm
        except ImportError:
            tqdm = None
        self.tqdm = tqdm
        self.desc = desc
        self.last = 0

    def __call__(self, done, total, matches=None):
        if self.tqdm is not None:
            if self.bar is None:
                self.bar = self.tqdm(total=total, initial=done, unit="cave", unit_scale=True, desc=self.desc)
            else:
                self.bar.update(done - self.bar.n)
            if matches is not None:
                self.bar.set_postfix(matches=matches, refresh=False)
        else:
            found = "" if matches is None else f", {matches:,} matches"
            sys.stderr.write(f"\r{self.desc}: {done:,}/{total:,} caves ({100 * done / max(total, 1):.0f}%){found}")
            sys.stderr.flush()
            self.last = done

    def close(self):
        if self.bar is not None:
            self.bar.close()
        elif self.tqdm is None and self.last:
            sys.stderr.write("\n")


def _progress(progress, desc="sweep"):
    """(callback, close) for the ``progress`` argument: None = automatic, False = off,
    True = on, or a callable ``f(done, total)``."""
    if progress is False or (progress is None and not _interactive()):
        return None, lambda: None
    if callable(progress) and progress is not True:
        return progress, lambda: None
    bar = _Bar(desc)
    return bar, bar.close


def _column(values):
    """A CSV column as the narrowest numpy array that holds it: int64 (uint64 for integers
    past 2**63 - 1, such as seeds near 2**64, as pandas reads them), float64 or str."""
    try:
        ints = [int(v) for v in values]
        if ints and min(ints) >= 0 and max(ints) > 2**63 - 1:
            return np.array(ints, dtype=np.uint64)
        return np.array(ints, dtype=np.int64)
    except (ValueError, OverflowError):
        pass
    try:
        return np.array([float(v) if v != "" else np.nan for v in values], dtype=np.float64)
    except ValueError:
        return np.array(values, dtype=str)


def _parquet_columns(path):
    """A Parquet file as {column: numpy array}, read by the native module (no pyarrow needed):
    uint64/int64/bool columns, float64 with NaN for nulls (and for integer or boolean columns
    that have nulls), str arrays for text (object arrays when they hold nulls)."""
    cols = _native._read_parquet(os.fspath(path))
    for name, values in cols.items():
        if isinstance(values, list):
            cols[name] = np.array(values, dtype=object if None in values else str)
    return cols


def read_table(path: Union[str, "os.PathLike[str]"]) -> Table:
    """A table of a sweep folder or a search, CSV or Parquet (by the file's extension):
    summary.csv, seeds.parquet, ... as a pandas DataFrame when pandas is installed, else a dict
    {column: numpy array}.

    Parquet is read with pandas (through pyarrow or fastparquet) when they are installed, else
    by cavesweep's own reader into numpy columns (a DataFrame of them when pandas is there).
    Empty values are NaN either way: an empty CSV field, a Parquet null.
    """
    try:
        import pandas as pd
    except ImportError:
        pd = None
    if os.fspath(path).endswith(".parquet"):
        if pd is not None:
            try:
                return pd.read_parquet(path)
            except ImportError:  # no pyarrow nor fastparquet: our reader below
                pass
        cols = _parquet_columns(path)
        return pd.DataFrame(cols) if pd is not None else cols
    if pd is not None:
        return pd.read_csv(path)
    import csv

    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    header, body = rows[0], rows[1:]
    return {name: _column([r[j] for r in body]) for j, name in enumerate(header)}


def sweep(
    recipe: RecipeLike = "chapter-strict",
    *,
    seeds: Union[range, int, Tuple[int, int], str],
    vary: Union[Mapping[str, VaryValues], Iterable[str], str, None] = None,
    gate: Union[str, Iterable[str], None] = None,
    metrics: Union[str, Sequence[str]] = "all",
    out: Union[str, "os.PathLike[str]", None] = None,
    threads: Optional[int] = None,
    per_seed: str = "kept",
    shard: Union[str, Tuple[int, int], None] = None,
    chunk: Optional[int] = None,
    format: str = "csv",
    force: bool = False,
    progress: Union[bool, Callable[[int, int], Any], None] = None,
    **overrides: SetValue,
) -> Table:
    """Sweep seeds (x a parameter grid) into statistics: ``cavesweep sweep`` from Python.

    Arguments are the command line's flags:

    - ``recipe``: a Recipe or a preset name; ``**overrides`` are ``--set`` keys (``fill=0.5``,
      ``rng="numpy"``, ...).
    - ``seeds``: ``range(0, 10_000)``, ``10_000`` (= 0..10000), ``(start, stop)`` or
      ``"0..10000"``; the largest seed is 2**64 - 2, as on the command line.
    - ``vary``: ``{"fill": [0.40, 0.45, 0.50], "steps": range(1, 9)}`` (a range is half-open,
      as ``1..9``), or the flag strings ``["fill=0.40:0.55:0.05", "steps=1..=8"]``.
    - ``gate``: ``"connected_fraction>=0.99 && components<=3"`` or a list (ANDed).
    - ``metrics``: ``"all"``, ``"a,b"`` or a list of names (the gate's are added).
    - ``out``: output folder (summary.csv, trajectory.csv, components.csv, seeds.csv,
      manifest.json); resumed when it holds the same sweep; None = a temporary folder that is
      deleted afterwards. ``force=True`` replaces another sweep's files there.
    - ``threads`` (default all cores), ``per_seed`` ("all" | "kept" | "none"), ``shard``
      ("K/N" or (K, N)), ``chunk`` (seeds per chunk).
    - ``format``: the tables' files, ``"csv"`` (summary.csv, ...), ``"parquet"``
      (summary.parquet, seeds.parquet, ...: typed, compressed columns) or ``"both"``; read any
      of them with ``read_table``.
    - ``progress``: None shows a tqdm bar when interactive (a notebook or a terminal), False
      hides it, True forces it, or a callable ``f(done, total)``.

    Returns the summary (one row per grid point) as a pandas DataFrame, or a dict of numpy
    columns when pandas is not installed; a DataFrame's ``attrs["cavesweep"]`` holds the run's
    report (seeds run, elapsed seconds, the equivalent command line, the folder).

    Ctrl-C (KeyboardInterrupt) stops within a second; with ``out`` given, the folder keeps
    every finished chunk and calling ``sweep`` again with the same arguments resumes.
    """
    tmp = None
    if out is None:
        tmp = tempfile.mkdtemp(prefix="cavesweep-sweep-")
        folder = tmp
    else:
        folder = os.fspath(out)
    callback, close = _progress(progress)
    try:
        try:
            report = _native._sweep(
                recipe,
                folder,
                seeds=seeds,
                vary=vary,
                gate=gate,
                metrics=metrics,
                per_seed=per_seed,
                chunk=chunk,
                format=format,
                shard=shard,
                threads=threads,
                force=force,
                progress=callback,
                **overrides,
            )
        finally:
            close()
        table = read_table(os.path.join(folder, "summary.parquet" if format == "parquet" else "summary.csv"))
    except KeyboardInterrupt:
        if out is not None:
            raise KeyboardInterrupt(
                f"sweep interrupted: finished chunks are saved in {folder}; "
                "call sweep() again with the same arguments to resume"
            ) from None
        raise
    finally:
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)
    report["out"] = None if tmp is not None else folder
    if hasattr(table, "attrs"):
        table.attrs["cavesweep"] = report
    return table
