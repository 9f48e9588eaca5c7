"""cavesweep: cellular-automaton caves from Python, numpy arrays in and out.

A thin shell over the cavesweep Rust library (the same code as the ``cavesweep`` command line):

- ``presets()``, ``recipe(preset, **overrides)``, ``Recipe`` (``to_toml`` / ``from_toml``);
- ``generate(recipe, seed, **overrides)`` -> a (rows, cols) uint8 array, WALL = 1;
- ``generate_many(recipe, seeds)`` -> an (n, rows, cols) array, filled in parallel;
- ``measure(grid, ...)`` -> dict of metrics, for any 2-D 0/1 array;
- ``keep_largest``, ``remove_small``, ``bridge``: the post-steps on an array;
- ``step(grid, rule)``, ``fill(recipe, seed)``, ``apply(recipe, grid)``: rules and recipes on
  your own grids; ``save(grid, path)`` / ``load(path)``: text, CSV, .npy, JSON, Tiled maps, PNG;
- ``sweep(...)``: the command line's ``cavesweep sweep``, summary as a pandas DataFrame;
- ``search(...)``: the command line's ``cavesweep search``, matches as a pandas DataFrame;
- ``reproduce_chapter()``: the claim audit of ``cavesweep reproduce chapter``, one row per claim.

Keyword overrides are the command line's ``--set`` keys (``SET_KEYS``); metric names are
``METRICS``. Errors in recipes and arguments raise ``ValueError`` with the command line's
one-line message.
"""

from ._native import (
    FLOOR,
    METRICS,
    SET_KEYS,
    WALL,
    Recipe,
    __version__,
    apply,
    bridge,
    fill,
    generate,
    generate_many,
    keep_largest,
    load,
    measure,
    presets,
    recipe,
    remove_small,
    save,
    step,
)
from ._reproduce import reproduce_chapter
from ._search import search
from ._sweep import read_table, sweep

__all__ = [
    "FLOOR",
    "METRICS",
    "SET_KEYS",
    "WALL",
    "Recipe",
    "__version__",
    "apply",
    "bridge",
    "fill",
    "generate",
    "generate_many",
    "keep_largest",
    "load",
    "measure",
    "presets",
    "read_table",
    "recipe",
    "remove_small",
    "reproduce_chapter",
    "save",
    "search",
    "step",
    "sweep",
]
