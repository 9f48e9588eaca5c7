//! `_read_parquet(path)`: a Parquet table (a sweep's `seeds.parquet`, a search's
//! `--out FILE.parquet`, or any flat Parquet file) as numpy columns, read by the Rust `parquet`
//! crate that writes them, so `cavesweep.read_table` needs neither pyarrow nor pandas.
//!
//! Nulls: a float column holds NaN; an integer or boolean column with nulls becomes float64
//! with NaN (as pandas does), one without stays uint64/int64/bool; text is a list of str (None
//! for null), which the Python side makes an array.

use std::path::PathBuf;

use numpy::PyArray1;
use pyo3::prelude::*;
use pyo3::types::PyDict;

use cavesweep::io::Folder;
use cavesweep::store::parquet::{self, Col};

/// Floats for a column with nulls: NaN where null.
fn floats<T: Copy>(v: &[Option<T>], f: impl Fn(T) -> f64) -> Vec<f64> {
    v.iter().map(|x| x.map_or(f64::NAN, &f)).collect()
}

/// _read_parquet(path) -> dict {column: numpy array or list of str}, in column order.
#[pyfunction]
fn _read_parquet<'py>(py: Python<'py>, path: PathBuf) -> PyResult<Bound<'py, PyDict>> {
    crate::guarded(|| {
        let cannot = |e: &dyn std::fmt::Display| {
            pyo3::exceptions::PyOSError::new_err(crate::one_line(&format!(
                "cannot read {}: {e}",
                path.display()
            )))
        };
        // The file itself, never through a link; a FIFO or device is refused before it blocks.
        let (folder, name) = Folder::of_file(&path).map_err(|e| cannot(&e))?;
        let file = folder
            .open_read(&name)
            .map_err(|e| cannot(&e))?
            .ok_or_else(|| cannot(&"no such file"))?;
        let t = py
            .detach(|| parquet::read(file, u64::MAX))
            .map_err(|e| cannot(&e))?;
        let d = PyDict::new(py);
        for (name, col) in t.names.iter().zip(t.cols) {
            let has_null = match &col {
                Col::U64(v) => v.iter().any(Option::is_none),
                Col::I64(v) => v.iter().any(Option::is_none),
                Col::Bool(v) => v.iter().any(Option::is_none),
                _ => false,
            };
            match col {
                Col::U64(v) if has_null => {
                    d.set_item(name, PyArray1::from_vec(py, floats(&v, |x| x as f64)))?
                }
                Col::U64(v) => d.set_item(
                    name,
                    PyArray1::from_vec(py, v.into_iter().flatten().collect::<Vec<u64>>()),
                )?,
                Col::I64(v) if has_null => {
                    d.set_item(name, PyArray1::from_vec(py, floats(&v, |x| x as f64)))?
                }
                Col::I64(v) => d.set_item(
                    name,
                    PyArray1::from_vec(py, v.into_iter().flatten().collect::<Vec<i64>>()),
                )?,
                Col::Bool(v) if has_null => d.set_item(
                    name,
                    PyArray1::from_vec(py, floats(&v, |x| f64::from(u8::from(x)))),
                )?,
                Col::Bool(v) => d.set_item(
                    name,
                    PyArray1::from_vec(py, v.into_iter().flatten().collect::<Vec<bool>>()),
                )?,
                Col::F64(v) => d.set_item(name, PyArray1::from_vec(py, floats(&v, |x| x)))?,
                Col::Str(v) => d.set_item(name, v)?,
            }
        }
        Ok(d)
    })
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(_read_parquet, m)?)?;
    Ok(())
}
