//! `cavesweep.reproduce_chapter()`: the claim audit of `cavesweep reproduce chapter --out`, as
//! columns. The same library calls as the command line (the chapter's runs, then
//! [`audit::audit`]'s in-process sweeps), so the rows are the ones `audit.md` shows; the Python
//! side turns the columns into a DataFrame when pandas is installed.

use cavesweep::reproduce::{audit, run_variant};
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::{args, runtime_error, value_error, value_msg};

/// `_reproduce_chapter(seeds, threads) -> {column: [values]}`: one entry per claim row.
#[pyfunction]
#[pyo3(signature = (seeds = 200, threads = None))]
fn _reproduce_chapter<'py>(
    py: Python<'py>,
    seeds: u64,
    threads: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyDict>> {
    crate::guarded(|| {
        if !(1..=1_000_000).contains(&seeds) {
            return Err(value_msg(format!("seeds {seeds} is not 1..=1000000")));
        }
        let threads = args::threads(threads)?;
        let rows = py.detach(|| -> PyResult<Vec<audit::ClaimRow>> {
            let strict = run_variant("chapter-strict", seeds, 4).map_err(value_error)?;
            let classic = run_variant("classic-4-5", seeds, 4).map_err(value_error)?;
            let classic10 = run_variant("classic-4-5", seeds, 10).map_err(value_error)?;
            let a = audit::audit(&strict, &classic, &classic10, threads).map_err(runtime_error)?;
            Ok(a.claims)
        })?;
        let d = PyDict::new(py);
        let column = |f: fn(&audit::ClaimRow) -> String| rows.iter().map(f).collect::<Vec<_>>();
        d.set_item("id", column(|r| r.id.clone()))?;
        d.set_item("claim", column(|r| r.claim.clone()))?;
        d.set_item("location", column(|r| r.location.clone()))?;
        d.set_item("evidence", column(|r| r.evidence.clone()))?;
        d.set_item("command", column(|r| r.command.clone()))?;
        d.set_item("verdict", column(|r| r.verdict.as_str().to_string()))?;
        d.set_item("concern", column(|r| r.concern.clone()))?;
        d.set_item("priority", column(|r| r.priority.to_string()))?;
        d.set_item("response", column(|r| r.response.clone()))?;
        d.set_item("replacement", column(|r| r.replacement.clone()))?;
        Ok(d)
    })
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(_reproduce_chapter, m)?)?;
    Ok(())
}
