//! Your own grids: `step()` (a rule on any 0/1 array), `fill()` (a recipe's start grid),
//! `apply()` (a recipe's passes and post-steps on a given start grid), `save()` and `load()`
//! (the map files of [`cavesweep::mapfile`]).

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};

use cavesweep::generate::Generator;
use cavesweep::grid::Grid;
use cavesweep::kernel::Stepper;
use cavesweep::mapfile::{self, MapInfo};
use cavesweep::measure::{EMPTY_VALUES, MeasureConfig, Measurer, Metric, MetricSet};
use cavesweep::recipe::MAX_REPEAT;
use cavesweep::rule::{Border, Outside, Pass, Rule, Update};
use numpy::PyArray1;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyString};

use crate::{args, arrays, interrupt, recipe, runtime_error, value_error, value_msg};

/// A keyword's text value parsed as `T` (a rule, outside, update or border).
fn keyword<T>(obj: Option<&Bound<'_, PyAny>>, name: &str, default: &str) -> PyResult<T>
where
    T: std::str::FromStr,
    T::Err: std::error::Error + 'static,
{
    let text = match obj {
        None => default.to_string(),
        Some(o) => o
            .cast::<PyString>()
            .map_err(|_| {
                pyo3::exceptions::PyTypeError::new_err(format!("{name}: expected a string"))
            })?
            .to_cow()?
            .into_owned(),
    };
    text.parse::<T>().map_err(|e| {
        value_msg(format!(
            "{name}={}: {}",
            cavesweep::quote::quote(&text),
            crate::error_line(&e)
        ))
    })
}

/// Grids this large are worked on with the GIL released (a 90x140 cave takes microseconds,
/// less than the release costs).
const DETACH_CELLS: usize = 1 << 16;

/// step(grid, rule, *, steps=1, outside="floor", update="sync", border="none") -> array
///
/// `grid` (any 2-D array of 0/1 cells, WALL = 1; any integer, bool or 0/1 float dtype and any
/// layout) after `steps` applications of `rule` (`"B5678/S45678"`, `"R1>=5/R2<=2"`, ...), as
/// a new uint8 array. `outside` is what cells beyond the edge read as ("floor", "wall",
/// "wrap"), `update` the order ("sync", "inplace-row-major", "inplace-col-major"), `border`
/// "solid" walls the outer ring after each step. The same kernels as a recipe's pass. Long
/// calls release the GIL and stop at Ctrl-C (KeyboardInterrupt).
#[pyfunction]
#[pyo3(signature = (grid, rule, *, steps = None, outside = None, update = None, border = None))]
fn step<'py>(
    py: Python<'py>,
    grid: &Bound<'py, PyAny>,
    rule: &Bound<'py, PyAny>,
    steps: Option<&Bound<'py, PyAny>>,
    outside: Option<&Bound<'py, PyAny>>,
    update: Option<&Bound<'py, PyAny>>,
    border: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyAny>> {
    crate::guarded(|| {
        let pass = Pass {
            rule: keyword::<Rule>(Some(rule), "rule", "")?,
            outside: keyword::<Outside>(outside, "outside", "floor")?,
            update: keyword::<Update>(update, "update", "sync")?,
            border: keyword::<Border>(border, "border", "none")?,
            repeat: steps.map_or(Ok(1), |s| {
                args::uint(s, "steps", 0, MAX_REPEAT as u64).map(|n| n as u32)
            })?,
        };
        let mut g = arrays::to_grid(grid)?;
        // Long work (a big grid, or many steps) runs off the GIL one application at a time, so
        // Ctrl-C stops it between two (KeyboardInterrupt); a cave's few steps run here.
        let stop = AtomicBool::new(false);
        let one = Pass { repeat: 1, ..pass };
        let work = |g: &mut Grid| {
            let mut stepper = Stepper::new();
            for _ in 0..pass.repeat {
                if stop.load(Ordering::Relaxed) {
                    break;
                }
                stepper.step(g, &one);
            }
        };
        if g.cells() * pass.repeat as usize >= DETACH_CELLS * 16 {
            interrupt::run(py, &stop, || work(&mut g), |_| Ok(()))?;
        } else {
            work(&mut g);
        }
        Ok(arrays::to_array(py, &g).into_any())
    })
}

/// fill(recipe, seed, **overrides) -> array
///
/// The start grid of `seed`'s cave: the recipe's fill alone, before any pass, as a uint8
/// array. `apply(recipe, fill(recipe, seed), seed=seed)` is `generate(recipe, seed)`.
#[pyfunction]
#[pyo3(signature = (recipe, seed, **overrides))]
fn fill<'py>(
    py: Python<'py>,
    recipe: &Bound<'py, PyAny>,
    seed: &Bound<'py, PyAny>,
    overrides: Option<&Bound<'py, PyDict>>,
) -> PyResult<Bound<'py, PyAny>> {
    crate::guarded(|| {
        let seed = args::seed(seed, "seed")?;
        let r = recipe::resolve(recipe, overrides)?;
        let mut g = Generator::new(&r, MetricSet::EMPTY).map_err(value_error)?;
        let grid = g.fill(seed).map_err(value_error)?;
        Ok(arrays::to_array(py, grid).into_any())
    })
}

/// apply(recipe, grid, *, seed=0, trajectory=False, **overrides) -> array
///
/// The recipe's passes and post-steps run on `grid` (any 2-D 0/1 array) instead of its fill,
/// as a new uint8 array; the recipe takes the grid's size. Random post-steps (`bridge`) draw
/// from `seed`'s stream as the recipe's fill leaves it, so `apply(r, fill(r, s), seed=s)` is
/// `generate(r, s)`. With `trajectory=True` returns `(grid, trajectory)`, the first value the
/// start grid's wall fraction.
#[pyfunction]
#[pyo3(signature = (recipe, grid, *, seed = None, trajectory = false, **overrides))]
fn apply<'py>(
    py: Python<'py>,
    recipe: &Bound<'py, PyAny>,
    grid: &Bound<'py, PyAny>,
    seed: Option<&Bound<'py, PyAny>>,
    trajectory: bool,
    overrides: Option<&Bound<'py, PyDict>>,
) -> PyResult<Bound<'py, PyAny>> {
    crate::guarded(|| {
        let seed = seed.map_or(Ok(0), |s| args::seed(s, "seed"))?;
        let start = arrays::to_grid(grid)?;
        let (rows, cols) = (start.rows(), start.cols());
        // The grid's size, applied with the keywords (a spawn that fits the grid is accepted);
        // a size keyword that contradicts the grid is refused.
        let kw = match overrides {
            Some(kw) => kw.copy()?,
            None => PyDict::new(py),
        };
        for (key, n) in [("rows", rows), ("cols", cols)] {
            if let Some(v) = kw.get_item(key)? {
                let given = recipe::set_value(key, &v)?;
                if given.trim() != n.to_string() {
                    return Err(value_msg(format!(
                        "{key}={given} differs from the grid's {key} ({n}): the grid sets the size"
                    )));
                }
            }
            kw.set_item(key, n)?;
        }
        let r = recipe::resolve(recipe, Some(&kw))?;
        let mut g = Generator::new(&r, MetricSet::EMPTY).map_err(value_error)?;
        let run = |g: &mut Generator| -> PyResult<(Grid, Vec<f64>)> {
            let cave = g.run_from(&start, seed).map_err(value_error)?;
            Ok((cave.grid.clone(), cave.trajectory.to_vec()))
        };
        let (out, t) = if rows * cols >= DETACH_CELLS {
            py.detach(|| run(&mut g))?
        } else {
            run(&mut g)?
        };
        let out = arrays::to_array(py, &out);
        if trajectory {
            Ok((out, PyArray1::from_vec(py, t))
                .into_pyobject(py)?
                .into_any())
        } else {
            Ok(out.into_any())
        }
    })
}

/// A path argument (str or os.PathLike).
fn path_arg(obj: &Bound<'_, PyAny>) -> PyResult<PathBuf> {
    let p: PathBuf = obj.extract().map_err(|_| {
        pyo3::exceptions::PyTypeError::new_err("path: expected a str or os.PathLike")
    })?;
    if p.as_os_str().is_empty() {
        return Err(value_msg("path is empty"));
    }
    Ok(p)
}

/// save(grid, path, *, recipe=None, seed=None, force=False)
///
/// Write `grid` (any 2-D 0/1 array) to `path`, the format from its extension, as the command
/// line's `run --save` does: `.txt`, `.csv`, `.npy`, `.json`, `.tmj`/`.tmx` (a Tiled map,
/// with `cavesweep-tiles.png` written beside it) or `.png` (one pixel per cell). With
/// `recipe` (a Recipe or preset name) the JSON and Tiled files carry it, its spawn and exit
/// and every metric measured with its settings; `seed` is recorded as given. The file is
/// written atomically; a different file already there is replaced only with `force=True`, a
/// link or a non-regular file never.
#[pyfunction]
#[pyo3(signature = (grid, path, *, recipe = None, seed = None, force = false))]
fn save(
    grid: &Bound<'_, PyAny>,
    path: &Bound<'_, PyAny>,
    recipe: Option<&Bound<'_, PyAny>>,
    seed: Option<&Bound<'_, PyAny>>,
    force: bool,
) -> PyResult<()> {
    crate::guarded(|| {
        let path = path_arg(path)?;
        let g = arrays::to_grid(grid)?;
        mapfile::Format::of_path(&path).map_err(value_error)?;
        let seed = seed
            .filter(|s| !s.is_none())
            .map(|s| args::seed(s, "seed"))
            .transpose()?;
        let r = match recipe.filter(|r| !r.is_none()) {
            Some(obj) => {
                let mut r = recipe::resolve(obj, None)?.into_owned();
                r.set_many([
                    ("rows", g.rows().to_string().as_str()),
                    ("cols", g.cols().to_string().as_str()),
                ])
                .map_err(value_error)?;
                Some(r)
            }
            None => None,
        };
        let mut values = EMPTY_VALUES;
        if let Some(r) = &r {
            let cfg = MeasureConfig {
                connectivity: r.connectivity,
                spawn: r.spawn_cell(),
                exit: r.exit_cell(),
                metrics: MetricSet::ALL,
            };
            Measurer::new().measure(&g, &cfg, &mut values);
        }
        let metrics: Vec<(&str, f64)> = match &r {
            Some(_) => Metric::ALL
                .iter()
                .map(|m| (m.name(), values[m.index()]))
                .collect(),
            None => Vec::new(),
        };
        let info = MapInfo {
            recipe: r.as_ref(),
            seed,
            metrics: &metrics,
            spawn: r.as_ref().map(|r| r.spawn_cell()),
            exit: r.as_ref().and_then(|r| r.exit_cell()),
        };
        mapfile::save(&path, &g, &info, force).map_err(|e| match e {
            mapfile::MapFileError::Format(_) => value_error(e),
            e => runtime_error(e),
        })
    })
}

/// load(path) -> array
///
/// The grid in a map file (the formats `save` writes; any PNG reads dark, opaque pixels as
/// WALL) as a uint8 array. Only regular files of at most 1 GiB are read; a bad file raises
/// ValueError naming the line and column or the cell.
#[pyfunction]
fn load<'py>(py: Python<'py>, path: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    crate::guarded(|| {
        let path = path_arg(path)?;
        let g = mapfile::read(&path).map_err(|e| match &e {
            mapfile::MapFileError::Read { source, .. }
                if source.kind() == std::io::ErrorKind::NotFound =>
            {
                pyo3::exceptions::PyFileNotFoundError::new_err(crate::error_line(&e))
            }
            mapfile::MapFileError::Read { .. } => runtime_error(e),
            _ => value_error(e),
        })?;
        Ok(arrays::to_array(py, &g).into_any())
    })
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(step, m)?)?;
    m.add_function(wrap_pyfunction!(fill, m)?)?;
    m.add_function(wrap_pyfunction!(apply, m)?)?;
    m.add_function(wrap_pyfunction!(save, m)?)?;
    m.add_function(wrap_pyfunction!(load, m)?)?;
    Ok(())
}
