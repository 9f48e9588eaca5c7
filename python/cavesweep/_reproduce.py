"""``cavesweep.reproduce_chapter()``: the claim audit of ``cavesweep reproduce chapter --out``.

The measuring runs in Rust (``_native._reproduce_chapter``: the chapter's runs and the audit's
in-process sweeps, the same library calls as the command line), so the rows are the ones
``audit.md`` shows. Returned as a pandas DataFrame when pandas is installed, else a dict of
columns (lists of str).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Dict, List, Optional, Union

from . import _native

if TYPE_CHECKING:
    import pandas

    Table = Union["pandas.DataFrame", Dict[str, List[str]]]


def reproduce_chapter(seeds: int = 200, threads: Optional[int] = None) -> "Table":
    """The chapter's claims, audited: one row per checkable statement, with columns ``id``,
    ``claim``, ``location``, ``evidence``, ``command`` (the ``cavesweep`` command that measures
    it again), ``verdict`` (``holds``, ``holds loosely``, ``contradicted``, ``not checkable
    here``), ``concern``, ``priority``, ``response`` and ``replacement`` (a proposed sentence,
    or empty).

    ``seeds`` is the chapter's run (0..seeds-1, 200 as in the chapter); the failure, boundary
    and cleanup experiments always run the search loop's 10,000 seeds. ``threads`` does not
    change the result."""
    columns = _native._reproduce_chapter(seeds, threads)
    try:
        import pandas as pd
    except ImportError:
        return columns
    return pd.DataFrame(columns)
