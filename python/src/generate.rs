//! `generate()` (one cave) and `generate_many()` (many, in parallel, GIL released).
//!
//! Both go through the library's [`Generator`]: `generate` keeps one per thread for the last
//! recipe it saw (a notebook loop over seeds builds it once), `generate_many` gives each rayon
//! worker its own and hands it runs of consecutive seeds through [`Generator::generate`], the
//! engines' batchable entry point, writing every cave straight into the output array.

use std::cell::RefCell;
use std::ops::ControlFlow;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

use cavesweep::cells::Stream;
use cavesweep::generate::Generator;
use cavesweep::measure::MetricSet;
use cavesweep::recipe::Recipe;
use numpy::{
    PyArray1, PyArray3, PyArrayDescrMethods, PyArrayMethods, PyUntypedArray, PyUntypedArrayMethods,
};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use rayon::prelude::*;

use crate::args::{self, SeedSet};
use crate::{arrays, interrupt, recipe, value_error, value_msg};

thread_local! {
    /// The last recipe's generator on this thread (its buffers are reused call after call).
    static LAST: RefCell<Option<Generator>> = const { RefCell::new(None) };
}

/// generate(recipe, seed, *, trajectory=False, **overrides)
///
/// The cave of `seed`: a `uint8` array of shape (rows, cols), WALL = 1, FLOOR = 0. `recipe` is
/// a Recipe or a preset name; keyword overrides are the `--set` keys (e.g. `rng="numpy"`,
/// `fill=0.5`). With `trajectory=True` returns `(grid, trajectory)`, the trajectory being the
/// wall fraction after the fill, after each pass application and after each post-step (a
/// float64 array of `recipe.trajectory_len` values). The same (recipe, seed) always gives the
/// same cave, and the command line's `cavesweep run` draws the same one.
#[pyfunction]
#[pyo3(signature = (recipe, seed, *, trajectory = false, **overrides))]
fn generate<'py>(
    py: Python<'py>,
    recipe: &Bound<'py, PyAny>,
    seed: &Bound<'py, PyAny>,
    trajectory: bool,
    overrides: Option<&Bound<'py, PyDict>>,
) -> PyResult<Bound<'py, PyAny>> {
    crate::guarded(|| {
        let seed = args::seed(seed, "seed")?;
        let r = recipe::resolve(recipe, overrides)?;
        LAST.with_borrow_mut(|slot| {
            if slot.as_ref().is_none_or(|g| g.recipe() != &*r) {
                *slot = Some(Generator::new(&r, MetricSet::EMPTY).map_err(value_error)?);
            }
            let generator = slot.as_mut().expect("just set");
            let cave = generator.run(seed).map_err(value_error)?;
            let grid = arrays::to_array(py, cave.grid);
            if trajectory {
                let t = PyArray1::from_slice(py, cave.trajectory);
                Ok((grid, t).into_pyobject(py)?.into_any())
            } else {
                Ok(grid.into_any())
            }
        })
    })
}

/// Caves per unit of parallel work: enough to amortise the hand-off, few enough to balance.
const BLOCK: usize = 64;

/// Generate the caves of `seeds` into `out` (n x cells bytes) and, unless it is empty, `traj`
/// (n x T values).
fn fill_many(
    recipe: &Recipe,
    seeds: &SeedSet,
    out: &mut [u8],
    traj: &mut [f64],
    stop: &AtomicBool,
    error: &Mutex<Option<String>>,
) {
    let cells = recipe.rows * recipe.cols;
    let tl = if traj.is_empty() {
        0
    } else {
        recipe.trajectory_len()
    };
    let fail = |e: String| {
        stop.store(true, Ordering::Relaxed);
        error.lock().unwrap().get_or_insert(e);
    };
    // Each block of caves with its block of trajectories (none when they are not wanted).
    let blocks = out.len().div_ceil(cells * BLOCK);
    let trajs: Vec<&mut [f64]> = if tl == 0 {
        (0..blocks).map(|_| &mut [][..]).collect()
    } else {
        traj.chunks_mut(tl * BLOCK).collect()
    };
    out.par_chunks_mut(cells * BLOCK)
        .zip(trajs)
        .enumerate()
        .for_each_init(
            || {
                let mut g = Generator::new(recipe, MetricSet::EMPTY).expect("validated recipe");
                // Every cave's grid goes into the array: copy each lane batch out at once.
                g.set_grids_read(true);
                g
            },
            |generator, (b, (out, traj))| {
                if stop.load(Ordering::Relaxed) {
                    return;
                }
                let first = b * BLOCK;
                let k = out.len() / cells;
                // The caves go out back to back with streaming stores (see cells::Stream);
                // dropping the stream at the end of the block fences them.
                let mut stream = Stream::new(generator.simd(), out);
                let mut put = |i: usize, grid: &_, t: &[f64]| {
                    stream.push(grid);
                    if tl > 0 {
                        traj[i * tl..(i + 1) * tl].copy_from_slice(t);
                    }
                };
                let mut one_by_one = |seeds: &mut dyn Iterator<Item = u64>| {
                    for (i, s) in seeds.enumerate() {
                        match generator.run(s) {
                            Ok(cave) => put(i, cave.grid, cave.trajectory),
                            Err(e) => return fail(e.to_string()),
                        }
                    }
                };
                match seeds {
                    SeedSet::Run(run) => {
                        // A run ends at MAX_SEED + 1 at most (args::seed_set): no overflow.
                        let a = run.range.start + first as u64;
                        let end = a + k as u64;
                        let mut i = 0;
                        let r = generator.generate(a..end, |cave| {
                            let trajectory = cave.trajectory;
                            put(i, cave.grid(), trajectory);
                            i += 1;
                            ControlFlow::Continue(())
                        });
                        if let Err(e) = r {
                            fail(e.to_string());
                        }
                    }
                    SeedSet::List(v) => one_by_one(&mut v[first..first + k].iter().copied()),
                }
            },
        );
}

/// generate_many(recipe, seeds, *, trajectory=False, threads=None, out=None, **overrides)
///
/// The caves of every seed in `seeds` (a range, a count, `(start, stop)`, a list or a 1-D
/// integer array; see [`args::seed_set`]) as one `uint8`
/// array of shape (n, rows, cols), cave i being `generate(recipe, seeds[i])`. Generated in
/// parallel on `threads` threads (default: all cores) with the GIL released; Ctrl-C stops it
/// within a fraction of a second (KeyboardInterrupt). With `trajectory=True` returns
/// `(grids, trajectories)`, trajectories of shape (n, recipe.trajectory_len). With `out=`, a
/// C-contiguous uint8 (or bool) array of shape (n, rows, cols), the caves are written into it
/// and it is returned: a loop over batches then reuses one buffer instead of asking the
/// operating system for fresh (zeroed) memory every call. Arrays larger than the machine's
/// memory are a `MemoryError` before they are asked for; the trajectories are only kept (and
/// only allocated) with `trajectory=True`.
#[pyfunction]
#[pyo3(signature = (recipe, seeds, *, trajectory = false, threads = None, out = None, **overrides))]
fn generate_many<'py>(
    py: Python<'py>,
    recipe: &Bound<'py, PyAny>,
    seeds: &Bound<'py, PyAny>,
    trajectory: bool,
    threads: Option<&Bound<'py, PyAny>>,
    out: Option<&Bound<'py, PyAny>>,
    overrides: Option<&Bound<'py, PyDict>>,
) -> PyResult<Bound<'py, PyAny>> {
    crate::guarded(|| {
        let r = recipe::resolve(recipe, overrides)?;
        r.validate().map_err(value_error)?;
        let seeds = args::seed_set(py, seeds, "seeds")?;
        let n = seeds.len() as usize;
        let pool = match threads.filter(|t| !t.is_none()) {
            Some(t) => Some(cavesweep::fanout::pool(args::threads(Some(t))?).map_err(value_error)?),
            None => None,
        };
        let tl = if trajectory { r.trajectory_len() } else { 0 };
        let shape = [n, r.rows, r.cols];
        let grids = match out {
            Some(o) => out_array(o, shape)?,
            None => {
                afford(n, r.rows * r.cols, tl)?;
                arrays::empty::<u8, numpy::Ix3>(py, &shape)?
            }
        };
        let mut written = grids.try_readwrite().map_err(value_error)?;
        let out_cells = written.as_slice_mut().map_err(value_error)?;
        let trajs = arrays::empty::<f64, numpy::Ix2>(py, &[n, tl])?;
        let mut traj_w = trajs.try_readwrite().map_err(value_error)?;
        let traj = traj_w.as_slice_mut().map_err(value_error)?;
        let stop = AtomicBool::new(false);
        let error = Mutex::new(None);
        let work = || match &pool {
            Some(p) => p.install(|| fill_many(&r, &seeds, out_cells, traj, &stop, &error)),
            None => fill_many(&r, &seeds, out_cells, traj, &stop, &error),
        };
        interrupt::run(py, &stop, work, |_| Ok(()))?;
        if let Some(e) = error.into_inner().unwrap() {
            return Err(value_msg(e));
        }
        drop((written, traj_w));
        let grids = out.cloned().unwrap_or_else(|| grids.into_any());
        if trajectory {
            Ok((grids, trajs).into_pyobject(py)?.into_any())
        } else {
            Ok(grids)
        }
    })
}

/// Refuse, as a `MemoryError` naming the size, arrays for `n` caves of `cells` cells (and `tl`
/// trajectory values each) that are larger than this machine's memory, before asking for them:
/// the operating system may promise the memory and kill the process when it is touched.
fn afford(n: usize, cells: usize, tl: usize) -> PyResult<()> {
    let bytes = n as u128 * (cells as u128 + 8 * tl as u128);
    let total = args::physical_memory();
    if total.is_some_and(|t| bytes > t as u128) || bytes > isize::MAX as u128 {
        return Err(pyo3::exceptions::PyMemoryError::new_err(format!(
            "generate_many: {} caves need {:.1} GiB, more than this machine's {}",
            n,
            bytes as f64 / (1u64 << 30) as f64,
            total.map_or("address space".into(), |t| format!(
                "{:.1} GiB of memory",
                t as f64 / (1u64 << 30) as f64
            ))
        )));
    }
    Ok(())
}

/// The caller's `out=` array as the `uint8` array to write: C-contiguous, writeable, uint8 or
/// bool (written as its bytes), of exactly `shape`.
fn out_array<'py>(o: &Bound<'py, PyAny>, shape: [usize; 3]) -> PyResult<Bound<'py, PyArray3<u8>>> {
    let bad = || {
        PyValueError::new_err(format!(
            "out must be a C-contiguous, writeable uint8 or bool array of shape ({}, {}, {})",
            shape[0], shape[1], shape[2]
        ))
    };
    let a = o.cast::<PyUntypedArray>().map_err(|_| bad())?;
    let a = if a.dtype().kind() == b'b' {
        a.call_method1("view", ("uint8",))?
    } else {
        a.clone().into_any()
    };
    let a = a.cast_into::<PyArray3<u8>>().map_err(|_| bad())?;
    if a.shape() != shape || !a.is_c_contiguous() {
        return Err(bad());
    }
    Ok(a)
}

/// _time_pipeline(recipe, start, n) -> seconds: the Rust pipeline alone (one thread, one
/// generator, no array), for python/benches: the yardstick of `generate`'s overhead.
#[pyfunction]
fn _time_pipeline(py: Python<'_>, recipe: &Bound<'_, PyAny>, start: u64, n: u64) -> PyResult<f64> {
    crate::guarded(|| {
        let r = recipe::resolve(recipe, None)?;
        let mut g = Generator::new(&r, MetricSet::EMPTY).map_err(value_error)?;
        py.detach(|| {
            let t = std::time::Instant::now();
            for s in start..start + n {
                let cave = g.run(s).map_err(value_error)?;
                std::hint::black_box(cave.grid);
            }
            Ok(t.elapsed().as_secs_f64())
        })
    })
}

/// _time_copy_out(out, threads) -> seconds: `generate_many`'s copy-out alone, for
/// python/benches: `out` (a C-contiguous (n, rows, cols) uint8 array) written with one
/// all-wall cave pushed n times through the same stream, in the same blocks of caves, on
/// `threads` threads, and no generation: what writing the array costs on this machine, the
/// ceiling of any `generate_many` figure.
#[pyfunction]
fn _time_copy_out(py: Python<'_>, out: &Bound<'_, PyAny>, threads: usize) -> PyResult<f64> {
    crate::guarded(|| {
        let a = out.cast::<PyArray3<u8>>().map_err(|_| {
            PyValueError::new_err("out must be a uint8 array of shape (n, rows, cols)")
        })?;
        let [_, rows, cols] = <[usize; 3]>::try_from(a.shape()).expect("a 3-D array");
        let mut grid = cavesweep::grid::Grid::new(rows, cols).map_err(value_error)?;
        grid.fill(true);
        let simd = cavesweep::simd::Simd::active();
        let mut w = a.try_readwrite().map_err(value_error)?;
        let bytes = w.as_slice_mut().map_err(value_error)?;
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads.max(1))
            .build()
            .map_err(value_error)?;
        let cells = rows * cols;
        py.detach(|| {
            let t = std::time::Instant::now();
            pool.install(|| {
                bytes
                    .par_chunks_mut((cells * BLOCK).max(1))
                    .for_each(|block| {
                        let k = block.len() / cells.max(1);
                        let mut s = Stream::new(simd, block);
                        for _ in 0..k {
                            s.push(&grid);
                        }
                    })
            });
            Ok(t.elapsed().as_secs_f64())
        })
    })
}

/// _time_generate_only(recipe, n, threads) -> seconds: `generate_many`'s generation alone, for
/// python/benches: seeds `0..n` in the same blocks of caves, each rayon worker with its own
/// generator fed through [`Generator::generate`] (the batched lane kernels), on `threads`
/// threads, every cave made and dropped: no array, no copy-out. With `_time_copy_out` it
/// splits a `generate_many` call into its two halves.
#[pyfunction]
fn _time_generate_only(
    py: Python<'_>,
    recipe: &Bound<'_, PyAny>,
    n: u64,
    threads: usize,
) -> PyResult<f64> {
    crate::guarded(|| {
        let r = recipe::resolve(recipe, None)?;
        r.validate().map_err(value_error)?;
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads.max(1))
            .build()
            .map_err(value_error)?;
        let blocks = n.div_ceil(BLOCK as u64);
        py.detach(|| {
            let t = std::time::Instant::now();
            pool.install(|| {
                (0..blocks).into_par_iter().try_for_each_init(
                    || {
                        let mut g = Generator::new(&r, MetricSet::EMPTY).expect("validated recipe");
                        g.set_grids_read(true);
                        g
                    },
                    |g, b| {
                        let a = b * BLOCK as u64;
                        let end = (a + BLOCK as u64).min(n);
                        g.generate(a..end, |cave| {
                            std::hint::black_box(cave.grid());
                            ControlFlow::Continue(())
                        })
                        .map(|_| ())
                        .map_err(value_error)
                    },
                )
            })?;
            Ok(t.elapsed().as_secs_f64())
        })
    })
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(generate, m)?)?;
    m.add_function(wrap_pyfunction!(generate_many, m)?)?;
    m.add_function(wrap_pyfunction!(_time_pipeline, m)?)?;
    m.add_function(wrap_pyfunction!(_time_copy_out, m)?)?;
    m.add_function(wrap_pyfunction!(_time_generate_only, m)?)?;
    Ok(())
}
