"""Type stubs of cavesweep's native module (python/src/*.rs). Docstrings: help(cavesweep.X)."""

from os import PathLike
from typing import Any, Callable, Dict, Iterable, List, Literal, Optional, Sequence, Tuple, Union, overload

import numpy as np
import numpy.typing as npt

__version__: str
WALL: int
FLOOR: int
METRICS: List[str]
SET_KEYS: List[str]

Cell = Tuple[int, int]
# A --set value: a number, the command line's text, (y, x) for spawn/exit, a list of post-steps,
# or None (no exit / no post-steps).
SetValue = Union[int, float, str, Cell, Sequence[str], None]
Grid = npt.NDArray[np.uint8]
GridLike = Union[npt.ArrayLike, npt.NDArray[Any]]
Metrics = Union[str, Sequence[str]]

class Recipe:
    """A cave recipe: everything that defines a cave except its seed (immutable)."""

    def __init__(self, preset: str = "chapter-strict", **overrides: SetValue) -> None: ...
    def replace(self, **overrides: SetValue) -> Recipe: ...
    def to_toml(self) -> str: ...
    @staticmethod
    def from_toml(text: str) -> Recipe: ...
    @property
    def name(self) -> str: ...
    @property
    def about(self) -> str: ...
    @property
    def rows(self) -> int: ...
    @property
    def cols(self) -> int: ...
    @property
    def shape(self) -> Tuple[int, int]: ...
    @property
    def fill(self) -> float: ...
    @property
    def rng(self) -> Literal["xoshiro", "numpy"]: ...
    @property
    def spawn(self) -> Cell: ...
    @property
    def exit(self) -> Optional[Cell]: ...
    @property
    def connectivity(self) -> Literal[4, 8]: ...
    @property
    def trajectory_len(self) -> int: ...
    def __eq__(self, other: object) -> bool: ...

RecipeLike = Union[Recipe, str]

def presets() -> List[str]: ...
def recipe(preset: str = "chapter-strict", **overrides: SetValue) -> Recipe: ...
@overload
def generate(
    recipe: RecipeLike, seed: int, *, trajectory: Literal[False] = ..., **overrides: SetValue
) -> Grid: ...
@overload
def generate(
    recipe: RecipeLike, seed: int, *, trajectory: Literal[True], **overrides: SetValue
) -> Tuple[Grid, npt.NDArray[np.float64]]: ...
@overload
def generate_many(
    recipe: RecipeLike,
    seeds: Union[range, Iterable[int], npt.NDArray[np.integer]],
    *,
    trajectory: Literal[False] = ...,
    threads: Optional[int] = ...,
    out: Optional[npt.NDArray[Any]] = ...,
    **overrides: SetValue,
) -> npt.NDArray[np.uint8]: ...
@overload
def generate_many(
    recipe: RecipeLike,
    seeds: Union[range, Iterable[int], npt.NDArray[np.integer]],
    *,
    trajectory: Literal[True],
    threads: Optional[int] = ...,
    out: Optional[npt.NDArray[Any]] = ...,
    **overrides: SetValue,
) -> Tuple[npt.NDArray[np.uint8], npt.NDArray[np.float64]]: ...
def measure(
    grid: GridLike,
    metrics: Optional[Metrics] = "all",
    spawn: Optional[Cell] = None,
    exit: Optional[Cell] = None,
    connectivity: Optional[Union[int, str]] = 4,
) -> Dict[str, Union[float, int, None]]: ...
def keep_largest(grid: GridLike, connectivity: Optional[Union[int, str]] = 4) -> npt.NDArray[Any]: ...
def remove_small(
    grid: GridLike, min_size: int, connectivity: Optional[Union[int, str]] = 4
) -> npt.NDArray[Any]: ...
def bridge(grid: GridLike, seed: int = 0) -> npt.NDArray[Any]: ...
def step(
    grid: GridLike,
    rule: str,
    *,
    steps: int = 1,
    outside: Literal["floor", "wall", "wrap"] = "floor",
    update: Literal["sync", "inplace-row-major", "inplace-col-major"] = "sync",
    border: Literal["none", "solid"] = "none",
) -> Grid: ...
def fill(recipe: RecipeLike, seed: int, **overrides: SetValue) -> Grid: ...
@overload
def apply(
    recipe: RecipeLike, grid: GridLike, *, seed: int = 0, trajectory: Literal[False] = False, **overrides: SetValue
) -> Grid: ...
@overload
def apply(
    recipe: RecipeLike, grid: GridLike, *, seed: int = 0, trajectory: Literal[True], **overrides: SetValue
) -> Tuple[Grid, npt.NDArray[np.float64]]: ...
def save(
    grid: GridLike,
    path: Union[str, "PathLike[str]"],
    *,
    recipe: Optional[RecipeLike] = None,
    seed: Optional[int] = None,
    force: bool = False,
) -> None: ...
def load(path: Union[str, "PathLike[str]"]) -> Grid: ...
def _reproduce_chapter(seeds: int = 200, threads: Optional[int] = None) -> Dict[str, List[str]]: ...
def _sweep(
    recipe: RecipeLike,
    out: Union[str, "PathLike[str]"],
    *,
    seeds: Union[range, int, Tuple[int, int], str],
    vary: Union[Mapping[str, Any], Iterable[str], str, None] = None,
    gate: Union[str, Iterable[str], None] = None,
    metrics: Union[str, Iterable[str], None] = None,
    per_seed: str = "kept",
    chunk: Optional[int] = None,
    format: str = "csv",
    shard: Union[str, Tuple[int, int], None] = None,
    threads: Optional[int] = None,
    force: bool = False,
    progress: Optional[Callable[[int, int], Any]] = None,
    **overrides: SetValue,
) -> Dict[str, Any]: ...
def _read_parquet(path: Union[str, "PathLike[str]"]) -> Dict[str, Union[npt.NDArray[Any], List[Optional[str]]]]: ...
def _search(
    recipe: RecipeLike,
    *,
    query: str,
    seeds: Union[range, int, Tuple[int, int], str, Iterable[int], npt.NDArray[np.integer], None] = None,
    seeds_from: Optional[str] = None,
    limit: Optional[int] = None,
    top: Optional[int] = None,
    by: Optional[str] = None,
    order: Optional[str] = None,
    metrics: Union[str, Iterable[str], None] = None,
    out: Optional[str] = None,
    force: bool = False,
    png_dir: Optional[str] = None,
    scale: Optional[int] = None,
    threads: Optional[int] = None,
    chunk: Optional[int] = None,
    explain: bool = False,
    progress: Optional[Callable[[int, int, int], Any]] = None,
    **overrides: SetValue,
) -> Union[Dict[str, Any], str]: ...
def _oracle_measure(
    cells: bytes,
    rows: int,
    cols: int,
    metrics: Metrics,
    spawn: Optional[Cell],
    exit: Optional[Cell],
    connectivity: Union[int, str],
) -> Dict[str, Union[float, int, None]]: ...
def _time_pipeline(recipe: RecipeLike, start: int, n: int) -> float: ...
def _time_copy_out(out: npt.NDArray[np.uint8], threads: int) -> float: ...
def _time_generate_only(recipe: RecipeLike, n: int, threads: int) -> float: ...
def _panic(on: Literal["caller", "worker"]) -> None: ...
