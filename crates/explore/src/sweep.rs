//! The sweep folder the explorer was started on, as the page's heatmaps need it: read through
//! the report's model ([`cavesweep_report::model::load`], the library's read API for sweep
//! folders, finished, merged, a shard or still running), never written.

use std::path::Path;

use cavesweep_report::caves;
use cavesweep_report::model::{self, Sweep};
use serde_json::{Value, json};

use crate::ApiError;

fn num(v: f64) -> Value {
    if v.is_finite() { json!(v) } else { Value::Null }
}

fn load(dir: &Path) -> Result<Sweep, ApiError> {
    model::load(dir).map_err(|e| ApiError::bad(e.to_string()))
}

/// The folder's axes, metrics, gates and every grid point's statistics.
pub fn sweep(dir: &Path) -> Result<Value, ApiError> {
    let s = load(dir)?;
    let axes: Vec<Value> = s
        .axes
        .iter()
        .map(|a| json!({"key": a.key, "values": a.values}))
        .collect();
    let points: Vec<Value> = s
        .points
        .iter()
        .map(|p| {
            let set: serde_json::Map<String, Value> = s
                .axes
                .iter()
                .zip(&p.params)
                .map(|(a, v)| (a.key.clone(), Value::from(v.clone())))
                .collect();
            let (done, seeds, rates, means) = match &p.summary {
                Some(sum) => (
                    true,
                    json!(sum.seeds),
                    sum.rates.iter().map(|&r| num(r)).collect::<Vec<_>>(),
                    s.metrics
                        .iter()
                        .zip(&sum.metrics)
                        .map(|(m, st)| (m.clone(), num(st.mean)))
                        .collect::<serde_json::Map<_, _>>(),
                ),
                None => (false, Value::Null, Vec::new(), serde_json::Map::new()),
            };
            json!({
                "params": p.params,
                "coords": p.coords,
                "done": done,
                "seeds": seeds,
                "rates": rates,
                "means": means,
                "set": set,
            })
        })
        .collect();
    let name = dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| dir.display().to_string());
    Ok(json!({
        "dir": name,
        "complete": s.progress.complete,
        "seeds": [s.seeds.start, s.seeds.end],
        "gate": s.gate,
        "command": s.command,
        "preset": s.recipe.name,
        "toml": s.recipe_toml,
        "axes": axes,
        "metrics": s.metrics,
        "gates": s.gates.iter().map(|g| g.label()).collect::<Vec<_>>(),
        "points": points,
    }))
}

/// The typical, a passing and a failing cave of grid point `p` (seeds), as the report picks
/// them, with the point's recipe as TOML.
pub fn picks(dir: &Path, p: usize) -> Result<Value, ApiError> {
    let s = load(dir)?;
    if p >= s.points.len() {
        return Err(ApiError::bad(format!(
            "point {p} is not in this sweep (it has {} points)",
            s.points.len()
        ))
        .field("point"));
    }
    let picks = caves::pick(&s, &[p], None).map_err(|e| ApiError::bad(e.to_string()))?;
    let pk = &picks[0];
    let recipe = s
        .point_recipe(p)
        .map_err(|e| ApiError::bad(e.to_string()))?;
    Ok(json!({
        "point": p,
        "typical": pk.typical.seed,
        "passing": pk.passing.map(|x| x.seed),
        "failing": pk.failing.map(|x| x.seed),
        "toml": recipe.to_toml(),
    }))
}
