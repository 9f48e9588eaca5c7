//! The command line equivalent to a Python call, as recorded in a sweep folder's manifest or a
//! search's checkpoint: `cavesweep SUBCOMMAND --preset X --set K=V ... FLAGS`, each value
//! shell-quoted as the command line records itself.

use cavesweep::store::shell_quote;
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::recipe;

pub struct CommandLine(Vec<String>);

impl CommandLine {
    /// `cavesweep SUB` and the recipe's flags: `--recipe NAME.toml` for a Recipe object,
    /// `--preset NAME` for a name, then a `--set` per keyword override.
    pub fn new(
        sub: &str,
        recipe: &Bound<'_, PyAny>,
        overrides: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<CommandLine> {
        let mut c = CommandLine(vec!["cavesweep".to_string(), sub.to_string()]);
        match recipe.cast::<recipe::PyRecipe>() {
            Ok(r) => c.flag("--recipe", &format!("{}.toml", r.get().inner.name)),
            Err(_) => c.flag("--preset", &recipe.str()?.to_cow()?),
        }
        if let Some(kw) = overrides {
            for (k, v) in kw.iter() {
                let key: String = k.extract()?;
                c.flag("--set", &format!("{key}={}", recipe::set_value(&key, &v)?));
            }
        }
        Ok(c)
    }

    pub fn flag(&mut self, f: &str, v: &str) {
        self.0.push(f.to_string());
        self.0.push(shell_quote(v));
    }

    pub fn finish(self) -> String {
        self.0.join(" ")
    }
}
