//! The command line equivalent to a Python call, as recorded in a sweep folder's manifest or a
//! search's checkpoint: the library's [`CommandLine`] renders it; this module only says how a
//! Python recipe argument is spelled (`--recipe NAME.toml` for a `Recipe` object, `--preset
//! NAME` for a name, a `--set` per keyword override).

use cavesweep::command::CommandLine;
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::recipe;

/// `cavesweep SUB` and the recipe's flags.
pub fn new(
    sub: &str,
    recipe: &Bound<'_, PyAny>,
    overrides: Option<&Bound<'_, PyDict>>,
) -> PyResult<CommandLine> {
    let mut c = CommandLine::new(sub);
    match recipe.cast::<recipe::PyRecipe>() {
        Ok(r) => c.recipe_file(&format!("{}.toml", r.get().inner.name)),
        Err(_) => c.preset(&recipe.str()?.to_cow()?),
    }
    if let Some(kw) = overrides {
        for (k, v) in kw.iter() {
            let key: String = k.extract()?;
            c.set(&key, &recipe::set_value(&key, &v)?);
        }
    }
    Ok(c)
}
