//! numpy arrays to and from grids.
//!
//! In: any 2-D array of 0/1 cells (bool, signed or unsigned integers of any width, or floats
//! holding exactly 0.0/1.0), C- or Fortran-ordered, a strided slice or a reversed view: each
//! row is read through its strides into a byte row, checked, and packed 64 cells at a time
//! ([`cavesweep::cells`]). Anything else (not 2-D, empty, a cell that is not 0 or 1, an
//! unsupported dtype) is a `ValueError` naming the problem, never a crash.
//!
//! Out: `uint8` arrays, WALL = 1, written straight into numpy's buffer.

use cavesweep::cells;
use cavesweep::grid::{Grid, check_shape};
use numpy::{
    Element, PyArray2, PyArrayDescrMethods, PyArrayMethods, PyUntypedArray, PyUntypedArrayMethods,
};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

use crate::value_error;

/// A cell type numpy arrays may hold: its value as a cell byte, or None if not 0/1.
trait Cell: Element + Copy {
    fn cell(self) -> Option<u8>;
    fn show(self) -> String;
    /// The row itself when cells are already bytes.
    fn bytes(_row: &[Self]) -> Option<&[u8]> {
        None
    }
}

impl Cell for u8 {
    #[inline(always)]
    fn cell(self) -> Option<u8> {
        (self <= 1).then_some(self)
    }
    fn show(self) -> String {
        self.to_string()
    }
    fn bytes(row: &[u8]) -> Option<&[u8]> {
        Some(row)
    }
}

macro_rules! int_cell {
    ($($t:ty),*) => {$(
        impl Cell for $t {
            #[inline(always)]
            fn cell(self) -> Option<u8> {
                match self { 0 => Some(0), 1 => Some(1), _ => None }
            }
            fn show(self) -> String { self.to_string() }
        }
    )*};
}
int_cell!(u16, u32, u64, i8, i16, i32, i64);

macro_rules! float_cell {
    ($($t:ty),*) => {$(
        impl Cell for $t {
            #[inline(always)]
            fn cell(self) -> Option<u8> {
                if self == 0.0 { Some(0) } else if self == 1.0 { Some(1) } else { None }
            }
            fn show(self) -> String {
                // As Python prints it: nan, inf, 0.5.
                if self.is_nan() { "nan".into() }
                else if self.is_infinite() { (if self > 0.0 { "inf" } else { "-inf" }).into() }
                else { format!("{self:?}") }
            }
        }
    )*};
}
float_cell!(f32, f64);

fn not_binary(y: usize, x: usize, v: String) -> PyErr {
    PyValueError::new_err(format!(
        "grid cell ({y}, {x}) is {v}: cells must be 0 (FLOOR) or 1 (WALL)"
    ))
}

/// Pack a typed 2-D array into `g` (already shaped).
fn pack<T: Cell>(a: &Bound<'_, PyArray2<T>>, g: &mut Grid) -> PyResult<()> {
    let ro = a.try_readonly().map_err(value_error)?;
    let view = ro.as_array();
    let cols = g.cols();
    let mut buf = vec![0u8; cols];
    let simd = cavesweep::simd::Simd::active();
    for (y, row) in view.rows().into_iter().enumerate() {
        match row.as_slice().and_then(T::bytes) {
            // Contiguous bytes: checked and packed in one SIMD pass, in place.
            Some(bytes) => cells::pack_row_checked(simd, g, y, bytes)
                .map_err(|x| not_binary(y, x, bytes[x].to_string()))?,
            None => {
                for (x, (b, &v)) in buf.iter_mut().zip(row.iter()).enumerate() {
                    *b = v.cell().ok_or_else(|| not_binary(y, x, v.show()))?;
                }
                cells::pack_row(g, y, &buf);
            }
        }
    }
    Ok(())
}

/// The numpy array `obj` (anything `numpy.asarray` takes) as a grid.
pub fn to_grid(obj: &Bound<'_, PyAny>) -> PyResult<Grid> {
    let py = obj.py();
    let arr = match obj.cast::<PyUntypedArray>() {
        Ok(a) => a.clone(),
        Err(_) => {
            let np = py.import("numpy")?;
            np.call_method1("asarray", (obj,))?
                .cast_into::<PyUntypedArray>()
                .map_err(|e| PyValueError::new_err(e.to_string()))?
        }
    };
    if arr.ndim() != 2 {
        return Err(PyValueError::new_err(format!(
            "expected a 2-D array (rows x cols), got a {}-D array of shape {}",
            arr.ndim(),
            py_tuple(arr.shape())
        )));
    }
    let (rows, cols) = (arr.shape()[0], arr.shape()[1]);
    check_shape(rows, cols).map_err(value_error)?;
    let mut g = Grid::new(rows, cols).map_err(value_error)?;
    let dtype = arr.dtype();
    // Bools are read as their bytes, so a malformed bool byte is an error, not UB.
    let arr = if dtype.kind() == b'b' {
        arr.call_method1("view", ("uint8",))?
            .cast_into::<PyUntypedArray>()
            .map_err(|e| PyValueError::new_err(e.to_string()))?
    } else {
        arr
    };
    macro_rules! try_types {
        ($($t:ty),*) => {$(
            if let Ok(a) = arr.cast::<PyArray2<$t>>() {
                pack(a, &mut g)?;
                return Ok(g);
            }
        )*};
    }
    try_types!(u8, i64, i32, u16, i16, i8, u32, u64, f64, f32);
    // Byte-swapped integers and floats, and float16: copied once into the native type of the
    // same kind (exact: every float16 is a float32), then read as above, 0/1 checks included.
    let kind = arr.dtype().kind();
    if matches!(kind, b'i' | b'u' | b'f') {
        let native = if kind == b'f' && arr.dtype().itemsize() == 2 {
            "float32".to_string()
        } else {
            format!("={}{}", kind as char, arr.dtype().itemsize())
        };
        let copy = arr.call_method1("astype", (native,))?;
        if let Ok(c) = copy.cast::<PyUntypedArray>()
            && !c.dtype().is_equiv_to(&arr.dtype())
        {
            return to_grid(&copy);
        }
    }
    Err(PyValueError::new_err(format!(
        "grid dtype {} is not supported: give 0/1 cells as bool, integers or floats \
         (e.g. grid.astype(numpy.uint8))",
        arr.dtype().str()?
    )))
}

/// `(2, 3)` as Python prints a shape.
fn py_tuple(dims: &[usize]) -> String {
    match dims {
        [d] => format!("({d},)"),
        _ => format!(
            "({})",
            dims.iter()
                .map(|d| d.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// A new `uint8` array holding `g` (WALL = 1).
pub fn to_array<'py>(py: Python<'py>, g: &Grid) -> Bound<'py, PyArray2<u8>> {
    // SAFETY: the array is new (no other reference exists) and every element is written below.
    unsafe {
        let a = PyArray2::<u8>::new(py, [g.rows(), g.cols()], false);
        let out = a.as_slice_mut().expect("new arrays are contiguous");
        cells::unpack_on(cavesweep::simd::Simd::active(), g, out);
        a
    }
}

/// A new, uninitialised array of `shape` from `numpy.empty`: an allocation that fails is
/// numpy's `MemoryError` (with the size), where a bare `PyArray::new` would panic.
pub fn empty<'py, T: Element, D: numpy::ndarray::Dimension>(
    py: Python<'py>,
    shape: &[usize],
) -> PyResult<Bound<'py, numpy::PyArray<T, D>>> {
    let shape = pyo3::types::PyTuple::new(py, shape)?;
    let a = py
        .import("numpy")?
        .getattr("empty")?
        .call1((shape, T::get_dtype(py)))?;
    Ok(a.cast_into::<numpy::PyArray<T, D>>()?)
}
