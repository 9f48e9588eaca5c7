//! Recipes from Python: `presets()`, `recipe(preset, **overrides)` and the `Recipe` class.
//!
//! Keyword overrides are the CLI's `--set KEY=VALUE` keys; each Python value is written the way
//! the CLI would be given it (`0.5` -> `"0.5"`, `(45, 70)` -> `"45,70"`, `["bridge",
//! "remove-small 3"]` -> `"bridge+remove-small 3"`, `None` -> `"none"`) and applied with
//! [`Recipe::set`], so the validation and the error messages are the CLI's.

use std::borrow::Cow;

use cavesweep::presets;
use cavesweep::recipe::{Fill, Point, Recipe};
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};

use crate::value_error;

pub use cavesweep::recipe::KEYS as SET_KEYS;

/// A cave recipe: grid size, fill, RNG, smoothing passes, post-steps, spawn/exit and
/// connectivity; everything that defines a cave except its seed.
///
/// Make one with `cavesweep.recipe(preset="chapter-strict", **overrides)` or
/// `Recipe.from_toml(text)`; derive variants with `r.replace(**overrides)`. Recipes are
/// immutable, comparable (`==`), hashable, picklable, and print as TOML with `to_toml()`.
#[pyclass(name = "Recipe", module = "cavesweep", frozen, eq)]
#[derive(Clone, PartialEq)]
pub struct PyRecipe {
    pub inner: Recipe,
}

/// Apply keyword overrides (in the order given) to `r`.
pub fn apply_overrides(r: &mut Recipe, overrides: Option<&Bound<'_, PyDict>>) -> PyResult<()> {
    // Every keyword converted, then applied together and validated once: the keywords' order
    // does not matter (`spawn=(100, 100), rows=200` works).
    let Some(kw) = overrides else { return Ok(()) };
    let mut pairs = Vec::with_capacity(kw.len());
    for (k, v) in kw.iter() {
        let key: String = k.extract()?;
        let value = set_value(&key, &v)?;
        pairs.push((key, value));
    }
    r.set_many(pairs.iter().map(|(k, v)| (k.as_str(), v.as_str())))
        .map_err(value_error)?;
    Ok(())
}

/// A Python value as the text `--set KEY=` would be given: a scalar, or a list/tuple of
/// scalars (nothing nested deeper: a self-referencing list is refused, not followed), at most
/// [`MAX_ITEMS`](crate::args::MAX_ITEMS) of them.
pub fn set_value(key: &str, v: &Bound<'_, PyAny>) -> PyResult<String> {
    value_text(key, v, true)
}

fn value_text(key: &str, v: &Bound<'_, PyAny>, list_ok: bool) -> PyResult<String> {
    if v.is_none() {
        return Ok("none".into());
    }
    if let Ok(s) = v.cast::<PyString>() {
        return Ok(s.to_cow()?.into_owned());
    }
    if v.is_instance_of::<PyBool>() {
        return Err(PyTypeError::new_err(format!(
            "{key}: expected a number or a string, not a bool"
        )));
    }
    if v.is_instance_of::<PyInt>() || v.is_instance_of::<PyFloat>() {
        // Python's repr is the shortest round-trip form (0.45 -> "0.45"), which the recipe
        // parser reads back exactly, and what a user would type after `--set`.
        return Ok(v.str()?.to_cow()?.into_owned());
    }
    if v.is_instance_of::<PyTuple>() || v.is_instance_of::<PyList>() {
        if !list_ok {
            return Err(PyTypeError::new_err(format!(
                "{key}: a list's items are numbers or strings, not lists"
            )));
        }
        if v.len()? > crate::args::MAX_ITEMS {
            return Err(crate::value_msg(format!(
                "{key}: more than {} items",
                crate::args::MAX_ITEMS
            )));
        }
        let sep = if key == "post" { "+" } else { "," };
        let parts = v
            .try_iter()?
            .map(|i| value_text(key, &i?, false))
            .collect::<PyResult<Vec<_>>>()?;
        return Ok(parts.join(sep));
    }
    // numpy scalars and anything else with a sensible str() (np.float64(0.45) -> "0.45").
    if v.hasattr("__index__")? || v.hasattr("__float__")? {
        return Ok(v.str()?.to_cow()?.into_owned());
    }
    Err(PyTypeError::new_err(format!(
        "{key}: cannot use a {} as a recipe value",
        v.get_type().name()?
    )))
}

/// The recipe a Python argument names: a `Recipe`, or a preset name. A `Recipe` without
/// overrides is borrowed, not copied (`generate` in a loop stays cheap).
pub fn resolve<'a>(
    obj: &'a Bound<'_, PyAny>,
    overrides: Option<&Bound<'_, PyDict>>,
) -> PyResult<Cow<'a, Recipe>> {
    let mut r = if let Ok(r) = obj.cast::<PyRecipe>() {
        Cow::Borrowed(&r.get().inner)
    } else if let Ok(s) = obj.cast::<PyString>() {
        Cow::Owned(presets::preset(&s.to_cow()?).map_err(value_error)?)
    } else {
        return Err(PyTypeError::new_err(format!(
            "expected a Recipe or a preset name, not {}",
            obj.get_type().name()?
        )));
    };
    if overrides.is_some_and(|kw| !kw.is_empty()) {
        apply_overrides(r.to_mut(), overrides)?;
    }
    Ok(r)
}

fn point(p: Point, rows: usize, cols: usize) -> (usize, usize) {
    p.resolve(rows, cols)
}

#[pymethods]
impl PyRecipe {
    /// Recipe(preset="chapter-strict", **overrides): same as `cavesweep.recipe(...)`.
    #[new]
    #[pyo3(signature = (preset = "chapter-strict", **overrides))]
    fn new(preset: &str, overrides: Option<&Bound<'_, PyDict>>) -> PyResult<Self> {
        crate::guarded(|| {
            let mut r = presets::preset(preset).map_err(value_error)?;
            apply_overrides(&mut r, overrides)?;
            Ok(PyRecipe { inner: r })
        })
    }

    /// A copy with `--set` overrides applied, e.g. `r.replace(fill=0.5, steps=6)`.
    #[pyo3(signature = (**overrides))]
    fn replace(&self, overrides: Option<&Bound<'_, PyDict>>) -> PyResult<Self> {
        crate::guarded(|| {
            let mut r = self.inner.clone();
            apply_overrides(&mut r, overrides)?;
            Ok(PyRecipe { inner: r })
        })
    }

    /// Recipes are immutable, so hashable: equal recipes print the same TOML, and the hash is
    /// that text's (a recipe can key a dict or sit in a set).
    fn __hash__(&self) -> u64 {
        use std::hash::{Hash, Hasher};
        let mut h = std::collections::hash_map::DefaultHasher::new();
        self.inner.to_toml().hash(&mut h);
        h.finish()
    }

    /// The recipe as a TOML file (`cavesweep presets NAME` prints the same for a preset;
    /// `cavesweep run --recipe FILE` reads it).
    fn to_toml(&self) -> String {
        self.inner.to_toml()
    }

    /// Read a recipe from TOML text. Errors are `ValueError` with the CLI's message.
    #[staticmethod]
    fn from_toml(text: &str) -> PyResult<Self> {
        crate::guarded(|| {
            Recipe::from_toml(text)
                .map(|inner| PyRecipe { inner })
                .map_err(value_error)
        })
    }

    /// Short name (the preset's, or the recipe file's).
    #[getter]
    fn name(&self) -> &str {
        &self.inner.name
    }
    /// Where the recipe comes from and how it deviates from its source.
    #[getter]
    fn about(&self) -> &str {
        &self.inner.about
    }
    #[getter]
    fn rows(&self) -> usize {
        self.inner.rows
    }
    #[getter]
    fn cols(&self) -> usize {
        self.inner.cols
    }
    /// `(rows, cols)`: the shape of the arrays `generate` returns.
    #[getter]
    fn shape(&self) -> (usize, usize) {
        (self.inner.rows, self.inner.cols)
    }
    /// Wall probability of a Bernoulli fill, or the wall fraction of an exact-count fill.
    #[getter]
    fn fill(&self) -> f64 {
        match self.inner.fill {
            Fill::Bernoulli { p } => p,
            Fill::ExactFloor { floor } => {
                let cells = (self.inner.rows * self.inner.cols) as f64;
                1.0 - floor as f64 / cells
            }
        }
    }
    /// `"xoshiro"` (fast, default) or `"numpy"` (replays `np.random.default_rng(seed)`).
    #[getter]
    fn rng(&self) -> String {
        self.inner.rng.to_string()
    }
    /// Spawn cell `(y, x)` (the metrics' start).
    #[getter]
    fn spawn(&self) -> (usize, usize) {
        point(self.inner.spawn, self.inner.rows, self.inner.cols)
    }
    /// Exit cell `(y, x)`, or None.
    #[getter]
    fn exit(&self) -> Option<(usize, usize)> {
        self.inner.exit_cell()
    }
    /// 4 or 8.
    #[getter]
    fn connectivity(&self) -> u8 {
        self.inner.connectivity.to_string().parse().unwrap_or(4)
    }
    /// Length of a cave's wall-fraction trajectory: after the fill, after each pass
    /// application, after each post-step.
    #[getter]
    fn trajectory_len(&self) -> usize {
        self.inner.trajectory_len()
    }

    fn __repr__(&self) -> String {
        format!(
            "<cavesweep.Recipe {:?} {}x{}, {} rng, {} step(s)>",
            self.inner.name,
            self.inner.rows,
            self.inner.cols,
            self.inner.rng,
            self.inner.trajectory_len() - 1
        )
    }

    fn __str__(&self) -> String {
        self.inner.to_toml()
    }

    /// Pickles as its TOML text.
    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> PyResult<(Bound<'py, PyAny>, (String,))> {
        let from = slf.get_type().getattr("from_toml")?;
        Ok((from, (slf.get().inner.to_toml(),)))
    }
}

/// recipe(preset="chapter-strict", **overrides) -> Recipe
///
/// A preset with `--set` overrides: `rows`, `cols`, `fill`, `floor`, `steps`, `rule`,
/// `outside`, `border`, `update`, `rng`, `spawn`, `exit`, `connectivity`, `post`. Values are
/// numbers, strings, `(y, x)` tuples for spawn/exit, a list of steps for post, or None.
/// Invalid values raise ValueError with the command line's message.
#[pyfunction]
#[pyo3(signature = (preset = "chapter-strict", **overrides))]
fn recipe(preset: &str, overrides: Option<&Bound<'_, PyDict>>) -> PyResult<PyRecipe> {
    crate::guarded(|| PyRecipe::new(preset, overrides))
}

/// presets() -> list[str]: the names of the built-in recipes.
#[pyfunction(name = "presets")]
fn preset_names() -> Vec<&'static str> {
    presets::NAMES.to_vec()
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyRecipe>()?;
    m.add_function(wrap_pyfunction!(recipe, m)?)?;
    m.add_function(wrap_pyfunction!(preset_names, m)?)?;
    Ok(())
}
