//! The sweep's CSV files. Tidy: one header row, one observation per row, the varied parameters
//! as leading columns. Numbers are printed in Rust's shortest round-trip form (integers without
//! a decimal point), empty for "no value".
//!
//! - `summary.csv`: per grid point: params, `recipe`, `seeds`, `passed`, `pass_rate` (the
//!   unnamed gate), `pass_rate[NAME]` per named gate, `fail[<clause>]` per distinct clause of
//!   every gate, then `<metric>_mean/_sd/_min/_p05/_p50/_p95/_max` for each
//!   computed metric;
//! - `trajectory.csv`: per grid point and step: params, `step` (0 = after the fill, then one per
//!   pass application, then one per post-step), `n`, `mean`, `sd`, `min`, `p05`, `p50`, `p95`,
//!   `max` of the wall fraction;
//! - `components.csv`: per grid point and component count: params, `components`, `caves`;
//! - `seeds.csv`: per cave (per `--per-seed`): `seed`, params, each computed metric, `passed`
//!   (the unnamed gate), then `passed[NAME]` per named gate.
//!
//! With `--format parquet|both` the same rows also go into `NAME.parquet`
//! ([`crate::store::parquet`]), typed by [`columns`]: the parameters by their values,
//! counts as unsigned integers, gate verdicts as booleans, everything else as doubles.

use super::Plan;
use super::stats::{PointStats, Summary};
use crate::store::parquet::{self, ColType, Columns};
use cavesweep_core::measure::{Metric, MetricSet, Values};
use cavesweep_core::query::GateResult;

/// Append a number: integers plainly, other finite values in shortest round-trip form,
/// nothing for NaN.
pub fn push_num(out: &mut Vec<u8>, v: f64) {
    if v.is_nan() {
        return;
    }
    // An integer test without `fract()`, which is a libm call in baseline x86-64 code.
    if v.abs() < 9.0e15 && (v as i64) as f64 == v {
        out.extend_from_slice(itoa::Buffer::new().format(v as i64).as_bytes());
    } else if v.abs() < 1e15 {
        // zmij: the same shortest round-trip digits and layout as ryu's for every value below
        // 1e16 (they differ only in the sign of positive exponents, `e16` against `e+16`; a
        // test checks the two agree), and about twice as fast: a 100,000-point grid formats
        // ~100 numbers per point, a few percent of the sweep with ryu.
        out.extend_from_slice(zmij::Buffer::new().format_finite(v).as_bytes());
    } else {
        out.extend_from_slice(ryu::Buffer::new().format(v).as_bytes());
    }
}

/// Quote a field if CSV needs it.
pub fn push_field(out: &mut Vec<u8>, s: &str) {
    if s.contains([',', '"', '\n', '\r']) {
        out.push(b'"');
        out.extend_from_slice(s.replace('"', "\"\"").as_bytes());
        out.push(b'"');
    } else {
        out.extend_from_slice(s.as_bytes());
    }
}

fn push_params(out: &mut Vec<u8>, params: &[String]) {
    for p in params {
        push_field(out, p);
        out.push(b',');
    }
}

/// One `seeds.csv` row: `passed` from the unnamed gate, then one `passed[NAME]` per each of the
/// `named` named gates.
pub fn seed_row(
    out: &mut Vec<u8>,
    seed: u64,
    params: &[String],
    metrics: MetricSet,
    values: &Values,
    gate: GateResult,
    named: usize,
) {
    out.extend_from_slice(itoa::Buffer::new().format(seed).as_bytes());
    out.push(b',');
    push_params(out, params);
    for m in metrics.iter() {
        push_num(out, values[m.index()]);
        out.push(b',');
    }
    out.push(if gate.pass() { b'1' } else { b'0' });
    for j in 0..named {
        out.extend_from_slice(if gate.named_pass(j) { b",1" } else { b",0" });
    }
    out.push(b'\n');
}

fn header_of(out: &mut Vec<u8>, first: &[&str], plan: &Plan, rest: &[String]) {
    let cols: Vec<String> = first
        .iter()
        .map(|s| s.to_string())
        .chain(plan.param_names().iter().map(|s| s.to_string()))
        .chain(rest.iter().cloned())
        .collect();
    for (i, c) in cols.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        push_field(out, c);
    }
    out.push(b'\n');
}

/// The `seeds.csv` header.
pub fn seeds_header(plan: &Plan) -> Vec<u8> {
    let mut out = Vec::new();
    let mut rest: Vec<String> = plan.computed.iter().map(|m| m.name().to_string()).collect();
    rest.push("passed".into());
    rest.extend(
        plan.spec
            .gate
            .named()
            .iter()
            .map(|(n, _)| format!("passed[{n}]")),
    );
    header_of(&mut out, &["seed"], plan, &rest);
    out
}

/// The type of each parameter column, by the values of its axis
/// ([`parquet::param_type`]).
pub fn param_types(plan: &Plan) -> Vec<ColType> {
    plan.spec
        .varies
        .iter()
        .map(|v| {
            let values: Vec<String> = (0..v.len()).map(|i| v.value(i)).collect();
            parquet::param_type(&v.key, values.iter().map(String::as_str))
        })
        .collect()
}

/// The typed columns of table `stem` (`summary`, `trajectory`, `components`, `seeds`): the
/// names of its CSV header, each with the type its values have.
pub fn columns(plan: &Plan, stem: &str) -> Columns {
    let params = param_types(plan);
    let np = params.len();
    let (header, first) = match stem {
        "summary" => (summary_header(plan), 0),
        "trajectory" => (trajectory_header(plan), 0),
        "components" => (components_header(plan), 0),
        _ => (seeds_header(plan), 1),
    };
    parquet::columns_of(&header, |i, name| {
        if i == 0 && first == 1 {
            return ColType::U64;
        }
        if (first..first + np).contains(&i) {
            return params[i - first];
        }
        match (stem, name) {
            ("summary", "recipe") => ColType::Str,
            ("summary", "seeds" | "passed") => ColType::U64,
            ("summary", n) if n.starts_with("fail[") => ColType::U64,
            ("trajectory", "step" | "n") => ColType::U64,
            ("components", _) => ColType::U64,
            ("seeds", n) if n == "passed" || n.starts_with("passed[") => ColType::Bool,
            _ => ColType::F64,
        }
    })
}

/// The CSV header of table `stem`.
pub fn header(plan: &Plan, stem: &str) -> Vec<u8> {
    match stem {
        "summary" => summary_header(plan),
        "trajectory" => trajectory_header(plan),
        "components" => components_header(plan),
        _ => seeds_header(plan),
    }
}

/// Shortest forms of the numbers that recur from grid point to grid point, by their bits: a
/// direct-mapped table (one per thread, [`NumCache::with`]).
///
/// Why: a 100,000-point grid of 10 seeds per point prints ~170 numbers per point, most of them
/// through the shortest round-trip formatter, and that was the largest cost of such a sweep
/// beyond the caves. But most of them are values that recur: the extremes of a wall or floor
/// fraction are a count of cells over the grid's size (a few thousand distinct values), and the
/// quantiles are histogram bucket bounds over 10^6. A hit copies the bytes formatted the first
/// time; the output is the same by construction (same bits, same bytes). Means and standard
/// deviations, which almost never recur, bypass it.
pub struct NumCache {
    slots: Box<[Slot]>,
}

#[derive(Clone, Copy)]
struct Slot {
    bits: u64,
    len: u8,
    bytes: [u8; SLOT_BYTES],
}

/// Longest formatted number a slot holds (the longest f64 in shortest form is 24 bytes).
const SLOT_BYTES: usize = 24;
/// log2 of the slots: 8192 x 40 bytes per thread.
const CACHE_BITS: u32 = 13;

impl NumCache {
    fn new() -> NumCache {
        // NaN bits: never looked up (NaN prints nothing and is not cached).
        let empty = Slot {
            bits: u64::MAX,
            len: 0,
            bytes: [0; SLOT_BYTES],
        };
        NumCache {
            slots: vec![empty; 1 << CACHE_BITS].into_boxed_slice(),
        }
    }

    /// Run `f` with this thread's cache.
    pub fn with<R>(f: impl FnOnce(&mut NumCache) -> R) -> R {
        thread_local! {
            static CACHE: std::cell::RefCell<Option<NumCache>> = const { std::cell::RefCell::new(None) };
        }
        CACHE.with_borrow_mut(|c| f(c.get_or_insert_with(NumCache::new)))
    }

    /// [`push_num`] through the cache.
    #[inline]
    pub fn push(&mut self, out: &mut Vec<u8>, v: f64) {
        // Integers (and NaN) are cheap already.
        if v.is_nan() || (v.abs() < 9.0e15 && (v as i64) as f64 == v) {
            return push_num(out, v);
        }
        let bits = v.to_bits();
        let h = (bits.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (64 - CACHE_BITS)) as usize;
        let slot = &mut self.slots[h];
        let start = out.len();
        if slot.bits == bits {
            // A fixed-size copy (no call to memcpy), then the length.
            out.extend_from_slice(&slot.bytes);
            out.truncate(start + slot.len as usize);
            return;
        }
        push_num(out, v);
        let n = out.len() - start;
        if n <= SLOT_BYTES {
            slot.bits = bits;
            slot.len = n as u8;
            slot.bytes[..n].copy_from_slice(&out[start..]);
        }
    }
}

/// Mean, sd, min, the quantiles and max. The quantiles (histogram bucket bounds) go through
/// the cache, and so do the extremes when `cells` (they are then a count of cells over the
/// grid's size; other fractions, ratios of two counts, rarely recur and would only evict).
fn push_summary(out: &mut Vec<u8>, s: &Summary, cache: &mut NumCache, cells: bool) {
    push_num(out, s.mean);
    out.push(b',');
    push_num(out, s.sd);
    out.push(b',');
    if cells {
        cache.push(out, s.min);
    } else {
        push_num(out, s.min);
    }
    for v in [s.p05, s.p50, s.p95] {
        out.push(b',');
        cache.push(out, v);
    }
    out.push(b',');
    if cells {
        cache.push(out, s.max);
    } else {
        push_num(out, s.max);
    }
}

const STAT_NAMES: [&str; 7] = ["mean", "sd", "min", "p05", "p50", "p95", "max"];

/// The `summary.csv` header.
pub fn summary_header(plan: &Plan) -> Vec<u8> {
    let mut out = Vec::new();
    let mut rest: Vec<String> = vec![
        "recipe".into(),
        "seeds".into(),
        "passed".into(),
        "pass_rate".into(),
    ];
    rest.extend(
        plan.spec
            .gate
            .named()
            .iter()
            .map(|(n, _)| format!("pass_rate[{n}]")),
    );
    rest.extend(
        plan.spec
            .gate
            .clauses()
            .iter()
            .map(|c| format!("fail[{c}]")),
    );
    for m in plan.computed.iter() {
        rest.extend(STAT_NAMES.iter().map(|s| format!("{}_{s}", m.name())));
    }
    header_of(&mut out, &[], plan, &rest);
    out
}

/// One `summary.csv` row: grid point `params` and its statistics.
pub fn summary_row(out: &mut Vec<u8>, plan: &Plan, params: &[String], st: &PointStats) {
    NumCache::with(|cache| summary_row_cached(out, plan, params, st, cache))
}

fn summary_row_cached(
    out: &mut Vec<u8>,
    plan: &Plan,
    params: &[String],
    st: &PointStats,
    cache: &mut NumCache,
) {
    push_params(out, params);
    push_field(out, &plan.spec.base.name);
    out.push(b',');
    push_num(out, st.seeds as f64);
    out.push(b',');
    push_num(out, st.passed as f64);
    out.push(b',');
    push_num(out, st.passed as f64 / st.seeds.max(1) as f64);
    for n in &st.named {
        out.push(b',');
        push_num(out, *n as f64 / st.seeds.max(1) as f64);
    }
    for f in &st.fails {
        out.push(b',');
        push_num(out, *f as f64);
    }
    for m in Metric::ALL {
        if let Some(acc) = &st.metrics[m.index()] {
            out.push(b',');
            let cells = matches!(m, Metric::WallFraction | Metric::FloorFraction);
            push_summary(out, &acc.summary(), cache, cells);
        }
    }
    out.push(b'\n');
}

/// The `trajectory.csv` header.
pub fn trajectory_header(plan: &Plan) -> Vec<u8> {
    let mut out = Vec::new();
    let mut rest: Vec<String> = vec!["step".into(), "n".into()];
    rest.extend(STAT_NAMES.iter().map(|s| s.to_string()));
    header_of(&mut out, &[], plan, &rest);
    out
}

/// The `trajectory.csv` rows of one grid point.
pub fn trajectory_rows(out: &mut Vec<u8>, params: &[String], st: &PointStats) {
    NumCache::with(|cache| trajectory_rows_cached(out, params, st, cache))
}

fn trajectory_rows_cached(
    out: &mut Vec<u8>,
    params: &[String],
    st: &PointStats,
    cache: &mut NumCache,
) {
    // The parameter columns once, copied into every row.
    let mut prefix = Vec::new();
    push_params(&mut prefix, params);
    let mut num = itoa::Buffer::new();
    for (step, acc) in st.trajectory.iter().enumerate() {
        out.extend_from_slice(&prefix);
        out.extend_from_slice(num.format(step).as_bytes());
        out.push(b',');
        let s = acc.summary();
        // Through `push_num`, whose form for counts of 9e15 and more is exponential.
        push_num(out, s.n as f64);
        out.push(b',');
        push_summary(out, &s, cache, true);
        out.push(b'\n');
    }
}

/// The `components.csv` header.
pub fn components_header(plan: &Plan) -> Vec<u8> {
    let mut out = Vec::new();
    header_of(&mut out, &[], plan, &["components".into(), "caves".into()]);
    out
}

/// The `components.csv` rows of one grid point: the distribution of the component count.
pub fn components_rows(out: &mut Vec<u8>, params: &[String], st: &PointStats) {
    let mut num = itoa::Buffer::new();
    let mut prefix = Vec::new();
    push_params(&mut prefix, params);
    for &(k, n) in &st.components {
        out.extend_from_slice(&prefix);
        out.extend_from_slice(num.format(k).as_bytes());
        out.push(b',');
        out.extend_from_slice(num.format(n).as_bytes());
        out.push(b'\n');
    }
}

/// One grid point's rows of `summary.csv`, `trajectory.csv` and `components.csv`, in that order.
pub fn point_rows(plan: &Plan, params: &[String], st: &PointStats) -> [Vec<u8>; 3] {
    let mut out = [
        Vec::with_capacity(1024),
        // Room for what a row usually takes (a trajectory row of a fill grid is ~130 bytes),
        // so that the buffers are not grown and copied midway.
        Vec::with_capacity(192 * st.trajectory.len()),
        Vec::with_capacity(32 * st.components.len() + 32),
    ];
    NumCache::with(|cache| {
        summary_row_cached(&mut out[0], plan, params, st, cache);
        trajectory_rows_cached(&mut out[1], params, st, cache);
    });
    components_rows(&mut out[2], params, st);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The fast formatter writes exactly what ryu writes (the files' format), on random doubles
    /// of every magnitude up to the switch-over, fractions in [0, 1] with few and many digits,
    /// and the edges around it.
    #[test]
    fn the_fast_formatter_writes_what_ryu_writes() {
        let mut rng = cavesweep_core::rng::cave_rng(99);
        let check = |v: f64| {
            let mut o = Vec::new();
            push_num(&mut o, v);
            if !(v.abs() < 9.0e15 && (v as i64) as f64 == v) {
                assert_eq!(o, ryu::Buffer::new().format(v).as_bytes(), "{v:e}");
            }
        };
        for _ in 0..2_000_000 {
            let bits = rand_core::Rng::next_u64(&mut rng);
            let x = f64::from_bits(bits);
            if x.is_finite() {
                check(x);
            }
            let u = (bits >> 11) as f64 / (1u64 << 53) as f64;
            check(u);
            check((u * 1e6).round() / 1e6);
            check(u * 1e4);
        }
        for v in [
            1e15,
            1e15 - 0.5,
            9.9e14 + 0.25,
            1e16,
            1.5e16,
            5e-324,
            f64::MAX,
            1e-7,
            0.1,
        ] {
            check(v);
            check(-v);
        }
    }

    /// The cache of formatted numbers writes what `push_num` writes, whether it hits, misses or
    /// replaces a colliding value: values from a small pool (most lookups hit), random doubles
    /// of every magnitude, integers, NaN and the longest forms.
    #[test]
    fn the_number_cache_writes_what_push_num_writes() {
        let mut rng = cavesweep_core::rng::cave_rng(7);
        let mut next = || rand_core::Rng::next_u64(&mut rng);
        let pool: Vec<f64> = (0..20_000)
            .map(|i| match i % 4 {
                0 => (i % 3150) as f64 / 3150.0,
                1 => ((next() % 1_000_000) as f64) / 1e6,
                2 => f64::from_bits(next()),
                _ => (next() >> 11) as f64 / (1u64 << 53) as f64,
            })
            .collect();
        let edges = [
            f64::NAN,
            0.0,
            -0.0,
            1.0,
            -7.5,
            1e15,
            1e16,
            9.0e15,
            -1.2345678901234567e-308,
            5e-324,
            f64::MAX,
            f64::MIN,
            f64::INFINITY,
        ];
        let mut cache = NumCache::new();
        let (mut a, mut b) = (Vec::new(), Vec::new());
        for i in 0..1_000_000usize {
            let v = if i % 97 == 0 {
                edges[i / 97 % edges.len()]
            } else {
                pool[(next() % pool.len() as u64) as usize]
            };
            a.clear();
            b.clear();
            a.extend_from_slice(b"x,");
            b.extend_from_slice(b"x,");
            push_num(&mut a, v);
            cache.push(&mut b, v);
            assert_eq!(a, b, "{v:e}");
        }
    }

    #[test]
    fn numbers_print_shortest() {
        let s = |v: f64| {
            let mut o = Vec::new();
            push_num(&mut o, v);
            String::from_utf8(o).unwrap()
        };
        assert_eq!(s(3.0), "3");
        assert_eq!(s(-0.0), "0");
        assert_eq!(s(-7.0), "-7");
        assert_eq!(s(-7.5), "-7.5");
        assert_eq!(s(1e16), "1e16");
        assert_eq!(s(0.45), "0.45");
        assert_eq!(s(f64::NAN), "");
        assert_eq!(s(1.0 / 3.0).parse::<f64>().unwrap(), 1.0 / 3.0);
        let mut o = Vec::new();
        push_field(&mut o, "a,b");
        assert_eq!(o, b"\"a,b\"");
    }
}
