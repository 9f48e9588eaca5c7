//! Seed search from the page: the library's search engine ([`cavesweep_engine::search`]) run
//! on a blocking thread, its matches and progress streamed to the page as NDJSON lines while
//! it runs. The page's stop button closes the connection; the first line that cannot be sent
//! raises the search's stop flag, so an abandoned search ends at its next chunk.

use std::ops::Range;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use cavesweep_core::measure::{Metric, MetricSet};
use cavesweep_core::query::Expr;
use cavesweep_engine::search::{
    Match, Mode, Order, Outcome, Progress, Search, SearchError, SearchSpec, Seeds, Sink,
};
use serde::Deserialize;
use serde_json::{Value, json};
use tokio::sync::mpsc;

use crate::ApiError;
use crate::cave::{Limits, RecipeReq};

/// `/api/search`'s request.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SearchReq {
    /// The recipe.
    #[serde(flatten)]
    pub recipe: RecipeReq,
    /// The query (`search --where`).
    #[serde(rename = "where")]
    pub query: String,
    /// Seeds `A..B` (default `0..100000`).
    #[serde(default)]
    pub seeds: Option<String>,
    /// Stop after the N lowest matching seeds.
    #[serde(default)]
    pub limit: Option<u64>,
    /// Keep the K best matches by `by` instead.
    #[serde(default)]
    pub top: Option<u64>,
    /// The metric `top` ranks by.
    #[serde(default)]
    pub by: Option<String>,
    /// `desc` (default) or `asc`.
    #[serde(default)]
    pub order: Option<String>,
}

/// A search checked and ready to run (parsing and validation happen before the response
/// starts, so a bad query is a plain `400`).
pub struct Prepared {
    spec: SearchSpec,
}

/// Most matches a page search keeps (a `limit` or `top` above it is refused): every match is a
/// line in the page.
pub const MAX_MATCHES: u64 = 10_000;

/// Check a search request.
pub fn prepare(req: &SearchReq, limits: &Limits) -> Result<Prepared, ApiError> {
    let recipe = req.recipe.recipe(limits)?;
    let query: Expr = req
        .query
        .parse()
        .map_err(|e: cavesweep_core::query::QueryError| {
            let at = (e.column > 0).then_some(e.column);
            let mut a = ApiError::bad(e.to_string()).field("where");
            a.at = at;
            a
        })?;
    let seeds = parse_seeds(req.seeds.as_deref().unwrap_or("0..100000"))?;
    if seeds.end - seeds.start > limits.max_search_seeds {
        return Err(ApiError::bad(format!(
            "{} seeds is over the explorer's limit of {} per search",
            seeds.end - seeds.start,
            limits.max_search_seeds
        ))
        .field("seeds"));
    }
    let count = |n: u64, what: &str| {
        if n == 0 || n > MAX_MATCHES {
            Err(ApiError::bad(format!("{what} {n} is outside 1..={MAX_MATCHES}")).field(what))
        } else {
            Ok(n)
        }
    };
    let mode = match (req.limit, req.top) {
        (Some(_), Some(_)) => {
            return Err(ApiError::bad("give limit or top, not both").field("top"));
        }
        (Some(n), None) => Mode::Limit(count(n, "limit")?),
        (None, Some(k)) => {
            let by: Metric = req
                .by
                .as_deref()
                .ok_or_else(|| ApiError::bad("top needs by (a metric)").field("by"))?
                .parse()
                .map_err(|e: cavesweep_core::measure::MeasureError| {
                    ApiError::bad(e.to_string()).field("by")
                })?;
            let order = match req.order.as_deref().unwrap_or("desc") {
                "desc" => Order::Desc,
                "asc" => Order::Asc,
                o => {
                    return Err(
                        ApiError::bad(format!("order {o:?} is not asc or desc")).field("order")
                    );
                }
            };
            Mode::Top {
                k: count(k, "top")?,
                by,
                order,
            }
        }
        (None, None) => Mode::Limit(100),
    };
    let extra: MetricSet = [
        Metric::FloorFraction,
        Metric::Components,
        Metric::LargestFraction,
    ]
    .into_iter()
    .collect();
    Ok(Prepared {
        spec: SearchSpec {
            recipe,
            query,
            seeds: Seeds::Range(seeds),
            mode,
            extra,
            chunk: None,
            png: None,
            save: None,
        },
    })
}

/// `A..B` (half-open) or a single seed `A`.
fn parse_seeds(s: &str) -> Result<Range<u64>, ApiError> {
    let bad = || ApiError::bad(format!("seeds {s:?} is not A..B (e.g. 0..100000)")).field("seeds");
    let s = s.trim();
    let (a, b) = match s.split_once("..") {
        Some((a, b)) => (
            a.trim().parse::<u64>().map_err(|_| bad())?,
            b.trim().parse::<u64>().map_err(|_| bad())?,
        ),
        None => {
            let a = s.parse::<u64>().map_err(|_| bad())?;
            (a, a.checked_add(1).ok_or_else(bad)?)
        }
    };
    if a >= b {
        return Err(ApiError::bad(format!("seeds {s:?} is empty")).field("seeds"));
    }
    Ok(a..b)
}

/// The sink that turns rows and progress into NDJSON lines on the channel.
struct Lines {
    tx: mpsc::Sender<String>,
    stop: Arc<AtomicBool>,
    columns: Vec<Metric>,
    last_progress: Instant,
}

impl Lines {
    fn send(&self, line: Value) {
        if self.tx.blocking_send(format!("{line}\n")).is_err() {
            // The page went away (stop button, closed tab): stop at the next chunk.
            self.stop.store(true, Ordering::Relaxed);
        }
    }
}

fn num(v: f64) -> Value {
    if v.is_finite() { json!(v) } else { Value::Null }
}

impl Sink for Lines {
    fn rows(&mut self, rows: &[Match]) -> Result<(), SearchError> {
        for m in rows {
            let mut o = serde_json::Map::new();
            o.insert("seed".into(), m.seed.into());
            for &c in &self.columns {
                o.insert(c.name().into(), num(m.values[c.index()]));
            }
            self.send(json!({ "match": o }));
        }
        Ok(())
    }

    fn progress(&mut self, p: &Progress) {
        // At most ten lines a second: the bar needs no more.
        if self.last_progress.elapsed() >= Duration::from_millis(100) || p.examined == p.total {
            self.last_progress = Instant::now();
            self.send(
                json!({"progress": {"done": p.examined, "total": p.total, "matches": p.matches}}),
            );
        }
    }
}

/// Run a prepared search, sending its lines; ends with an `end` or `error` line. `stop` is
/// raised by the caller's time limit, or here when the page goes away.
pub fn run(p: Prepared, tx: mpsc::Sender<String>, stop: Arc<AtomicBool>, threads: usize) {
    let mut lines = Lines {
        tx,
        stop: stop.clone(),
        columns: Vec::new(),
        last_progress: Instant::now(),
    };
    let result = Search::new(p.spec).and_then(|search| {
        lines.columns = Metric::ALL
            .into_iter()
            .filter(|&m| search.columns().contains(m))
            .collect();
        lines.send(json!({"progress": {"done": 0, "total": search_total(&search), "matches": 0}}));
        search.run(threads, &stop, &[], &mut lines)
    });
    match result {
        Ok(sum) => lines.send(json!({"end": {
            "matched": sum.rows,
            "searched": sum.examined,
            "stopped": sum.outcome == Outcome::Interrupted,
            "ms": sum.elapsed.as_millis() as u64,
        }})),
        Err(e) => lines.send(json!({ "error": e.to_string() })),
    }
}

fn search_total(s: &Search) -> u64 {
    s.spec().seeds.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seeds_parse_and_refuse() {
        assert_eq!(parse_seeds("0..10").unwrap(), 0..10);
        assert_eq!(parse_seeds(" 5 ").unwrap(), 5..6);
        for bad in ["", "10..5", "5..5", "a..b", "1..", &format!("{}", u64::MAX)] {
            let e = parse_seeds(bad).unwrap_err();
            assert_eq!(e.key.as_deref(), Some("seeds"), "{bad}");
        }
    }

    #[test]
    fn a_bad_query_names_its_column() {
        let req: SearchReq =
            serde_json::from_value(json!({"preset": "classic-4-5", "where": "components<=3 &&"}))
                .unwrap();
        let Err(e) = prepare(&req, &Limits::DEFAULT) else {
            panic!("accepted")
        };
        assert_eq!(e.key.as_deref(), Some("where"));
        assert_eq!(e.at, Some(17), "{}", e.message);
    }
}
