//! `cavesweep._native`: the Python package's native module, a thin shell over the cavesweep
//! library. Every function here converts Python values (numpy arrays, keyword arguments) into
//! the library's types, calls the library and converts back; the cave logic lives in the
//! library. The pure-Python part of the package (`cavesweep/__init__.py`) re-exports these and
//! adds what Python users expect around a sweep (a DataFrame, a progress bar).
//!
//! - `args`: every Python argument into the library's types, once, with limits;
//! - `recipe`: `Recipe`, `recipe()`, `presets()` (the `--set` keys as keyword arguments);
//! - `arrays`: numpy arrays of any integer/bool dtype and layout to and from grids;
//! - `generate`: `generate()`, `generate_many()` (rayon, GIL released);
//! - `measure`: `measure()` and the post-steps on arrays;
//! - `grids`: `step()`, `fill()`, `apply()` on your own grids, `save()` and `load()` of map files;
//! - `sweep`: the sweep engine behind `cavesweep.sweep()`;
//! - `search`: the search engine behind `cavesweep.search()`;
//! - `table`: Parquet tables as numpy columns, for `cavesweep.read_table()`;
//! - `cmdline`: the command line equivalent to a call, as recorded in the output;
//! - `interrupt`: running long work off the GIL while Ctrl-C still reaches it.

use pyo3::prelude::*;

mod args;
mod arrays;
mod cmdline;
mod generate;
mod grids;
mod interrupt;
mod measure;
mod recipe;
mod reproduce;
mod search;
mod sweep;
mod table;

/// Python's words for the library's [`Remedy`](cavesweep::error::Remedy) advice and the
/// settings its messages name: the keyword arguments.
pub(crate) const WORDS: cavesweep::error::Words = cavesweep::error::Words {
    another_out: "another out=",
    force: "force=True",
    param: keyword,
    joined: true,
};

/// The keyword argument of a setting a library message names (an override is a keyword of its
/// own, `spawn=...`: no prefix).
fn keyword(p: cavesweep::error::Param) -> &'static str {
    use cavesweep::error::Param;
    match p {
        Param::Seeds => "seeds=",
        Param::SeedsFrom => "seeds_from=",
        Param::PerSeed => "per_seed=",
        Param::Chunk => "chunk=",
        Param::Vary => "vary=",
        Param::Shard => "shard=",
        Param::Out => "out=",
        Param::Limit => "limit=",
        Param::Top => "top=",
        Param::Set => "",
    }
}

/// A library error as one line ([`cavesweep::error::line()`]), advice in Python's words.
pub(crate) fn error_line(e: &(dyn std::error::Error + 'static)) -> String {
    cavesweep::error::line(e, &WORDS)
}

/// A library error as Python's `ValueError`.
pub(crate) fn value_error(e: impl std::error::Error + 'static) -> PyErr {
    pyo3::exceptions::PyValueError::new_err(error_line(&e))
}

/// A message of this module's own as Python's `ValueError`.
pub(crate) fn value_msg(msg: impl std::fmt::Display) -> PyErr {
    pyo3::exceptions::PyValueError::new_err(one_line(&msg.to_string()))
}

/// A library error about files and folders as Python's `RuntimeError`.
pub(crate) fn runtime_error(e: impl std::error::Error + 'static) -> PyErr {
    pyo3::exceptions::PyRuntimeError::new_err(error_line(&e))
}

/// A panic caught at the boundary, as a `RuntimeError` that says it is a bug: the last resort
/// that keeps pyo3's `PanicException` (a `BaseException` that `except Exception` misses) from
/// reaching the caller. Every failure a user can cause has its own exception before this.
pub(crate) fn panic_error(panic: Box<dyn std::any::Any + Send>) -> PyErr {
    let msg = panic
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic".into());
    pyo3::exceptions::PyRuntimeError::new_err(format!(
        "internal error in cavesweep (a bug: please report it): {}",
        one_line(&msg)
    ))
}

/// Runs an entry point's body with [`panic_error`] as the last resort for a panic on the
/// calling thread (the worker threads of [`interrupt::run`] are caught where they are joined).
/// Every `#[pyfunction]` and constructor that does more than read a field runs its body here.
pub(crate) fn guarded<T>(body: impl FnOnce() -> PyResult<T>) -> PyResult<T> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(body))
        .unwrap_or_else(|p| Err(panic_error(p)))
}

/// `_panic(on)`: panics on purpose, on the calling thread (`on="caller"`) or on the worker
/// thread of a long call (`on="worker"`), so that the tests can show that no `PanicException`
/// escapes either way. Not part of the API.
#[pyfunction]
fn _panic(py: Python<'_>, on: &str) -> PyResult<()> {
    guarded(|| match on {
        "caller" => panic!("a panic on purpose, on the calling thread"),
        "worker" => {
            let stop = std::sync::atomic::AtomicBool::new(false);
            interrupt::run(
                py,
                &stop,
                || -> u8 { panic!("a panic on purpose, on a worker thread") },
                |_| Ok(()),
            )
            .map(|_| ())
        }
        _ => Err(value_msg(format!(
            "_panic: on must be 'caller' or 'worker', not {on:?}"
        ))),
    })
}

/// Errors are one line, as the CLI prints them.
pub(crate) fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add("WALL", 1u8)?;
    m.add("FLOOR", 0u8)?;
    m.add(
        "METRICS",
        cavesweep::measure::Metric::ALL
            .iter()
            .map(|m| m.name())
            .collect::<Vec<_>>(),
    )?;
    m.add("SET_KEYS", recipe::SET_KEYS.to_vec())?;
    recipe::register(m)?;
    generate::register(m)?;
    measure::register(m)?;
    grids::register(m)?;
    sweep::register(m)?;
    search::register(m)?;
    table::register(m)?;
    reproduce::register(m)?;
    m.add_function(wrap_pyfunction!(_panic, m)?)?;
    Ok(())
}
