//! `measure()` and the post-steps (`keep_largest`, `remove_small`, `bridge`) on any 2-D 0/1
//! array, through the library's [`Measurer`].

use cavesweep::grid::Grid;
use cavesweep::measure::{
    Connectivity, MeasureConfig, MeasureError, Measurer, Metric, MetricSet, PostStep, Values,
};
use cavesweep::oracle::ByteGrid;
use cavesweep::recipe::Point;
use cavesweep::rng::cave_rng;
use numpy::{PyArrayDescrMethods, PyUntypedArray, PyUntypedArrayMethods};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyString};

use crate::{args, arrays, value_error, value_msg};

/// `"all"`, `"a,b"` or a list of names.
fn metric_set(obj: &Bound<'_, PyAny>) -> PyResult<MetricSet> {
    let text = if let Ok(s) = obj.cast::<PyString>() {
        s.to_cow()?.into_owned()
    } else {
        obj.try_iter()?
            .map(|m| m?.extract::<String>())
            .collect::<PyResult<Vec<_>>>()?
            .join(",")
    };
    text.parse().map_err(value_error)
}

/// 4 or 8 (int or string).
pub fn connectivity(obj: &Bound<'_, PyAny>) -> PyResult<Connectivity> {
    obj.str()?.to_cow()?.parse().map_err(value_error)
}

/// A `(y, x)` argument; negative or outside cells are the library's "outside the grid" error.
fn cell(
    what: &str,
    obj: Option<&Bound<'_, PyAny>>,
    rows: usize,
    cols: usize,
    outside: impl Fn(usize, usize) -> MeasureError,
) -> PyResult<Option<(usize, usize)>> {
    let Some(obj) = obj.filter(|o| !o.is_none()) else {
        return Ok(None);
    };
    // A tuple or a list of two integers, as `recipe(spawn=...)` takes.
    let pair = (obj.is_instance_of::<pyo3::types::PyTuple>()
        || obj.is_instance_of::<pyo3::types::PyList>())
        && obj.len()? == 2;
    if !pair {
        return Err(pyo3::exceptions::PyTypeError::new_err(format!(
            "{what}: expected a (y, x) cell"
        )));
    }
    let (y, x) = (
        args::int(&obj.get_item(0)?, what)?,
        args::int(&obj.get_item(1)?, what)?,
    );
    if y < 0 || x < 0 {
        return Err(value_msg(format!(
            "{what} ({y},{x}) is outside the {rows}x{cols} grid"
        )));
    }
    let clamp = |v: i128| usize::try_from(v).unwrap_or(usize::MAX);
    let (y, x) = (clamp(y), clamp(x));
    if y >= rows || x >= cols {
        return Err(value_error(outside(y, x)));
    }
    Ok(Some((y, x)))
}

/// Metric values as a dict: fractions as floats, counts as ints, "empty" (NaN) as None.
fn values_dict<'py>(py: Python<'py>, set: MetricSet, v: &Values) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    for m in set.iter() {
        let x = v[m.index()];
        if x.is_nan() {
            d.set_item(m.name(), py.None())?;
        } else if m.name().ends_with("_fraction") {
            d.set_item(m.name(), x)?;
        } else {
            d.set_item(m.name(), x as u64)?;
        }
    }
    Ok(d)
}

/// The measuring settings for a `rows x cols` grid from `measure`'s arguments.
fn config(
    rows: usize,
    cols: usize,
    metrics: &Bound<'_, PyAny>,
    spawn: Option<&Bound<'_, PyAny>>,
    exit: Option<&Bound<'_, PyAny>>,
    conn: &Bound<'_, PyAny>,
) -> PyResult<MeasureConfig> {
    let spawn = cell("spawn", spawn, rows, cols, |y, x| {
        MeasureError::SpawnOutside { y, x, rows, cols }
    })?
    .unwrap_or_else(|| Point::Center.resolve(rows, cols));
    let exit = cell("exit", exit, rows, cols, |y, x| MeasureError::ExitOutside {
        y,
        x,
        rows,
        cols,
    })?;
    Ok(MeasureConfig {
        connectivity: connectivity(conn)?,
        spawn,
        exit,
        metrics: metric_set(metrics)?,
    })
}

/// measure(grid, metrics="all", spawn=None, exit=None, connectivity=4) -> dict
///
/// Measure a cave given as any 2-D array of 0/1 cells (WALL = 1; bool, integer or float
/// dtype, any memory layout). `metrics` is "all", a comma list or a list of names (see
/// `cavesweep.METRICS`); `spawn` and `exit` are `(y, x)` cells (spawn defaults to the centre
/// `(rows // 2, cols // 2)`; `path_length` needs an exit); `connectivity` is 4 or 8. Returns
/// {metric: value}: fractions as floats, counts as ints, None where a metric is empty (no
/// path to the exit, a WALL spawn's reach). A 3-D, empty or non-0/1 array raises ValueError.
#[pyfunction]
#[pyo3(signature = (grid, metrics = None, spawn = None, exit = None, connectivity = None))]
fn measure<'py>(
    py: Python<'py>,
    grid: &Bound<'py, PyAny>,
    metrics: Option<&Bound<'py, PyAny>>,
    spawn: Option<&Bound<'py, PyAny>>,
    exit: Option<&Bound<'py, PyAny>>,
    connectivity: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyDict>> {
    crate::guarded(|| {
        let g = arrays::to_grid(grid)?;
        let all = PyString::new(py, "all").into_any();
        let four = 4u8.into_pyobject(py)?.into_any();
        let cfg = config(
            g.rows(),
            g.cols(),
            metrics.unwrap_or(&all),
            spawn,
            exit,
            connectivity.unwrap_or(&four),
        )?;
        let mut out = [f64::NAN; Metric::COUNT];
        // A large map's metrics take long enough (0.5 s for every metric of an open 8192x8192 grid)
        // to let other Python threads run meanwhile; a cave's take microseconds, less than the
        // release would cost.
        if g.rows() * g.cols() >= 1 << 16 {
            py.detach(|| Measurer::new().measure(&g, &cfg, &mut out));
        } else {
            Measurer::new().measure(&g, &cfg, &mut out);
        }
        values_dict(py, cfg.metrics, &out)
    })
}

/// The scalar byte-grid oracle on `cells` (row-major bytes, non-zero = WALL): the reference
/// `measure` is tested against (python/tests). Not part of the API.
#[pyfunction]
#[pyo3(signature = (cells, rows, cols, metrics, spawn, exit, connectivity))]
#[allow(clippy::too_many_arguments)]
fn _oracle_measure<'py>(
    py: Python<'py>,
    cells: &[u8],
    rows: usize,
    cols: usize,
    metrics: &Bound<'py, PyAny>,
    spawn: Option<&Bound<'py, PyAny>>,
    exit: Option<&Bound<'py, PyAny>>,
    connectivity: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyDict>> {
    crate::guarded(|| {
        if cells.len() != rows * cols {
            return Err(value_msg("cells has the wrong length"));
        }
        let cfg = config(rows, cols, metrics, spawn, exit, connectivity)?;
        let g = ByteGrid {
            rows,
            cols,
            cells: cells.to_vec(),
        };
        let v = cavesweep::oracle::metrics::measure(&g, &cfg);
        values_dict(py, cfg.metrics, &v)
    })
}

/// Apply `step` to a copy of `grid`, returned with the input's dtype (uint8 for non-arrays).
fn post<'py>(
    grid: &Bound<'py, PyAny>,
    step: PostStep,
    conn: Connectivity,
    seed: u64,
) -> PyResult<Bound<'py, PyAny>> {
    let py = grid.py();
    let mut g: Grid = arrays::to_grid(grid)?;
    Measurer::new().apply_post(&mut g, step, conn, &mut cave_rng(seed));
    let out = arrays::to_array(py, &g).into_any();
    match grid.cast::<PyUntypedArray>() {
        Ok(a)
            if !a
                .dtype()
                .is_equiv_to(&out.cast::<PyUntypedArray>()?.dtype()) =>
        {
            out.call_method1("astype", (a.dtype(),))
        }
        _ => Ok(out),
    }
}

/// keep_largest(grid, connectivity=4) -> array
///
/// A copy of `grid` with every FLOOR cell outside the largest FLOOR component turned to WALL
/// (the first largest in row-major order of first cells on a tie).
#[pyfunction]
#[pyo3(signature = (grid, connectivity = None))]
fn keep_largest<'py>(
    grid: &Bound<'py, PyAny>,
    connectivity: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyAny>> {
    crate::guarded(|| {
        let conn = connectivity.map_or(Ok(Connectivity::Four), self::connectivity)?;
        post(grid, PostStep::KeepLargest, conn, 0)
    })
}

/// remove_small(grid, min_size, connectivity=4) -> array
///
/// A copy of `grid` with every FLOOR component of fewer than `min_size` cells filled with WALL.
#[pyfunction]
#[pyo3(signature = (grid, min_size, connectivity = None))]
fn remove_small<'py>(
    grid: &Bound<'py, PyAny>,
    min_size: &Bound<'py, PyAny>,
    connectivity: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyAny>> {
    crate::guarded(|| {
        let min_size = args::uint(min_size, "min_size", 0, u32::MAX as u64)? as u32;
        let conn = connectivity.map_or(Ok(Connectivity::Four), self::connectivity)?;
        post(grid, PostStep::RemoveSmall(min_size), conn, 0)
    })
}

/// bridge(grid, seed=0) -> array
///
/// NetHack's join: a copy of `grid` whose 8-connected FLOOR regions of 1..3 cells become WALL
/// and whose remaining regions are joined pairwise by dug 4-connected corridors between random
/// cells (drawn from `seed`'s stream; inside a recipe's pipeline the stream continues after the
/// fill, so `generate` with `post="bridge"` may dig elsewhere than this on the same grid).
#[pyfunction]
#[pyo3(signature = (grid, seed = None))]
fn bridge<'py>(
    grid: &Bound<'py, PyAny>,
    seed: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyAny>> {
    crate::guarded(|| {
        let seed = seed.map_or(Ok(0), |s| args::seed(s, "seed"))?;
        post(grid, PostStep::Bridge, Connectivity::Eight, seed)
    })
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(measure, m)?)?;
    m.add_function(wrap_pyfunction!(_oracle_measure, m)?)?;
    m.add_function(wrap_pyfunction!(keep_largest, m)?)?;
    m.add_function(wrap_pyfunction!(remove_small, m)?)?;
    m.add_function(wrap_pyfunction!(bridge, m)?)?;
    Ok(())
}
