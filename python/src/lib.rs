//! `cavesweep._native`: the Python package's native module, a thin shell over the cavesweep
//! library. Every function here converts Python values (numpy arrays, keyword arguments) into
//! the library's types, calls the library and converts back; the cave logic lives in the
//! library. The pure-Python part of the package (`cavesweep/__init__.py`) re-exports these and
//! adds what Python users expect around a sweep (a DataFrame, a progress bar).
//!
//! - `recipe`: `Recipe`, `recipe()`, `presets()` (the `--set` keys as keyword arguments);
//! - `arrays`: numpy arrays of any integer/bool dtype and layout to and from grids;
//! - `generate`: `generate()`, `generate_many()` (rayon, GIL released);
//! - `measure`: `measure()` and the post-steps on arrays;
//! - `sweep`: the sweep engine behind `cavesweep.sweep()`;
//! - `search`: the search engine behind `cavesweep.search()`;
//! - `cmdline`: the command line equivalent to a call, as recorded in the output;
//! - `interrupt`: running long work off the GIL while Ctrl-C still reaches it.

use pyo3::prelude::*;

mod arrays;
mod cmdline;
mod generate;
mod interrupt;
mod measure;
mod recipe;
mod search;
mod sweep;

/// A library error as Python's `ValueError`, with the CLI's one-line message.
pub(crate) fn value_error(e: impl std::fmt::Display) -> PyErr {
    pyo3::exceptions::PyValueError::new_err(one_line(&e.to_string()))
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
    sweep::register(m)?;
    search::register(m)?;
    Ok(())
}
