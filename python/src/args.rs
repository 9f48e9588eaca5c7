//! Python arguments into the library's types, in one place. Every entry point converts its
//! values here, once, with limits: integers are range-checked (a negative or too-large count
//! is a `ValueError`, not the `OverflowError` pyo3 would raise; a float or a bool where an
//! integer belongs is a `TypeError`), seeds are `u64` end to end with the CLI's largest seed
//! ([`MAX_SEED`]), lists of seeds are capped and collected with Ctrl-C still heard, and a grid
//! axis (`vary={"fill": [0.4, 0.45]}`) becomes a library [`Vary`] from its values, not from
//! text the wrapper wrote. Only text the user gave as text (`seeds="0..1e6"`,
//! `vary=["fill=0.40:0.55:0.05"]`, `shard="2/8"`, a query) goes through the library's parsers,
//! the same ones the command line uses.
//!
//! Values that are recorded in an output folder keep the spelling they have always had (the
//! user's text, or `A..B` and `KEY=V1,V2` for typed values), so a folder made by an older
//! version resumes and merges with this one.

use std::ops::Range;

use cavesweep::search::MAX_SEEDS_FROM;
use cavesweep::sweep::vary::{self, Vary};
use cavesweep::sweep::{MAX_SEED, Shard, parse_seeds};
use numpy::PyReadonlyArray1;
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyRange, PyString, PyTuple};

use crate::{value_error, value_msg};

/// The most seeds a list may hold (a Python list, an array, a `range` with a step), as many as
/// `--seeds-from` reads: a longer one is almost surely a mistake for a range.
pub const MAX_LIST: u64 = MAX_SEEDS_FROM as u64;

/// The most worker threads a call may ask for (a guard against `threads=10**6`).
pub const MAX_THREADS: u64 = 4096;

/// The most items a list-valued recipe key (`post=[...]`) or a grid axis may hold.
pub const MAX_ITEMS: usize = cavesweep::sweep::vary::MAX_POINTS;

fn type_name(v: &Bound<'_, PyAny>) -> String {
    v.get_type()
        .name()
        .map_or_else(|_| "?".into(), |n| n.to_string())
}

/// Whether `v` is an integer as Python means it (`int`, `numpy.int64`, anything with
/// `__index__`), bools excepted, and arrays too (a one-element array has `__index__`).
pub fn is_int(v: &Bound<'_, PyAny>) -> bool {
    // The common case first, without attribute lookups (a list of a million seeds).
    if v.is_exact_instance_of::<PyInt>() {
        return true;
    }
    if v.is_instance_of::<PyBool>() || type_name(v).starts_with("bool") {
        return false;
    }
    v.is_instance_of::<PyInt>()
        || (!v.is_instance_of::<PyFloat>()
            && v.hasattr("__index__").unwrap_or(false)
            && !v.hasattr("__len__").unwrap_or(true))
}

/// An integer argument as `i128`: a `TypeError` for anything that is not an integer (a float,
/// a bool, a string), a `ValueError` for one past `i128` (it is out of every range anyway).
pub fn int(v: &Bound<'_, PyAny>, what: &str) -> PyResult<i128> {
    if !is_int(v) {
        return Err(PyTypeError::new_err(format!(
            "{what}: expected an integer, not {}",
            type_name(v)
        )));
    }
    v.extract::<i128>()
        .map_err(|_| value_msg(format!("{what}: {} is out of range", short(v))))
}

/// `v`'s text, cut short (a 10,000-digit integer in a message helps nobody).
fn short(v: &Bound<'_, PyAny>) -> String {
    let s = v.str().map_or_else(|_| "?".into(), |s| s.to_string());
    if s.len() > 40 {
        format!("{}...", &s[..40])
    } else {
        s
    }
}

/// An integer in `lo..=hi`, else a `ValueError` naming the range.
pub fn uint(v: &Bound<'_, PyAny>, what: &str, lo: u64, hi: u64) -> PyResult<u64> {
    let n = int(v, what)?;
    if n < lo as i128 || n > hi as i128 {
        return Err(value_msg(format!("{what}={n} is not in {lo}..={hi}")));
    }
    Ok(n as u64)
}

/// [`uint`] of an optional argument.
pub fn opt_uint(
    v: Option<&Bound<'_, PyAny>>,
    what: &str,
    lo: u64,
    hi: u64,
) -> PyResult<Option<u64>> {
    v.filter(|v| !v.is_none())
        .map(|v| uint(v, what, lo, hi))
        .transpose()
}

/// `threads=`: 1 to [`MAX_THREADS`], default all cores.
pub fn threads(v: Option<&Bound<'_, PyAny>>) -> PyResult<usize> {
    Ok(match opt_uint(v, "threads", 0, MAX_THREADS)? {
        Some(0) => return Err(value_msg("threads must be at least 1")),
        Some(t) => t as usize,
        None => std::thread::available_parallelism().map_or(1, |n| n.get()),
    })
}

/// One seed: 0 to [`MAX_SEED`].
pub fn seed(v: &Bound<'_, PyAny>, what: &str) -> PyResult<u64> {
    let n = int(v, what)?;
    if !(0..=MAX_SEED as i128).contains(&n) {
        return Err(value_msg(format!(
            "{what}: {n} is not a seed (seeds are whole numbers from 0 to {MAX_SEED})"
        )));
    }
    Ok(n as u64)
}

/// A run of consecutive seeds and the text it is recorded as (`--seeds` of the equivalent
/// command line).
pub struct SeedRun {
    /// The seeds, half-open, at least one.
    pub range: Range<u64>,
    /// The user's text, or `A..B`.
    pub text: String,
}

/// `start..stop` as seeds: non-empty, from 0, ending at most at `MAX_SEED + 1`.
fn run_of(a: i128, b: i128, what: &str) -> PyResult<SeedRun> {
    if a < 0 {
        return Err(value_msg(format!("{what}: seeds start at 0, not {a}")));
    }
    if b > MAX_SEED as i128 + 1 {
        return Err(value_msg(format!(
            "{what}: the range {a}..{b} passes the largest seed, {MAX_SEED} (ranges are \
             half-open in u64): stop at {} at most",
            MAX_SEED as u128 + 1
        )));
    }
    if b <= a {
        return Err(value_msg(format!("{what}: the range {a}..{b} is empty")));
    }
    Ok(SeedRun {
        range: a as u64..b as u64,
        text: format!("{a}..{b}"),
    })
}

/// A `range`'s start, stop and step.
fn range_parts(v: &Bound<'_, PyAny>, what: &str) -> PyResult<(i128, i128, i128)> {
    let get = |k: &str| int(&v.getattr(k)?, what);
    Ok((get("start")?, get("stop")?, get("step")?))
}

/// Consecutive seeds: `range(a, b)` (step 1), a count `n` (= `range(n)`), a pair `(a, b)`, or
/// the command line's text `"A..B"` / `"A..=B"`.
pub fn seed_run(v: &Bound<'_, PyAny>, what: &str) -> PyResult<SeedRun> {
    if let Ok(s) = v.cast::<PyString>() {
        let text = s.to_cow()?.into_owned();
        let range = parse_seeds(&text).map_err(value_error)?;
        return Ok(SeedRun { range, text });
    }
    if v.is_instance_of::<PyRange>() {
        let (a, b, step) = range_parts(v, what)?;
        if step != 1 {
            return Err(value_msg(format!(
                "{what}: a range of consecutive seeds (step 1), not step {step}"
            )));
        }
        return run_of(a, b, what);
    }
    if let Ok(t) = v.cast::<PyTuple>() {
        if t.len() != 2 {
            return Err(PyTypeError::new_err(format!(
                "{what}: a tuple is (start, stop), not {} values",
                t.len()
            )));
        }
        return run_of(
            int(&t.get_item(0)?, what)?,
            int(&t.get_item(1)?, what)?,
            what,
        );
    }
    if is_int(v) {
        return run_of(0, int(v, what)?, what);
    }
    Err(PyTypeError::new_err(format!(
        "{what}: expected a range, a count, (start, stop) or 'A..B', not {}",
        type_name(v)
    )))
}

/// Seeds given as a run or as a list.
pub enum SeedSet {
    /// Consecutive seeds.
    Run(SeedRun),
    /// Any seeds, in the caller's order (at most [`MAX_LIST`]).
    List(Vec<u64>),
}

impl SeedSet {
    /// How many seeds.
    pub fn len(&self) -> u64 {
        match self {
            SeedSet::Run(r) => r.range.end - r.range.start,
            SeedSet::List(v) => v.len() as u64,
        }
    }
}

/// A list too long to hold.
fn too_many(what: &str, n: impl std::fmt::Display) -> PyErr {
    value_msg(format!(
        "{what}: {n} seeds in a list, more than {MAX_LIST}: give a range of consecutive seeds"
    ))
}

/// Seeds as [`seed_run`] takes them, or any other collection: a `range` with a step (or empty), a list, a
/// 1-D integer array, any iterable of integers. A list is collected with Ctrl-C heard every
/// 65,536 seeds and refused past [`MAX_LIST`] (before collecting when its length is known).
pub fn seed_set(py: Python<'_>, v: &Bound<'_, PyAny>, what: &str) -> PyResult<SeedSet> {
    let runlike = v.is_instance_of::<PyString>() || v.is_instance_of::<PyTuple>() || is_int(v);
    if runlike {
        return seed_run(v, what).map(SeedSet::Run);
    }
    if v.is_instance_of::<PyRange>() {
        let (a, b, step) = range_parts(v, what)?;
        if step == 1 && b > a {
            return seed_run(v, what).map(SeedSet::Run);
        }
        let n = v.len()? as u64;
        if n > MAX_LIST {
            return Err(too_many(what, n));
        }
        return (0..n as i128)
            .map(|i| a + i * step)
            .map(|s| {
                u64::try_from(s)
                    .ok()
                    .filter(|&s| s <= MAX_SEED)
                    .ok_or_else(|| not_seed(what, s))
            })
            .collect::<PyResult<_>>()
            .map(SeedSet::List);
    }
    if let Ok(a) = v.extract::<PyReadonlyArray1<'_, u64>>() {
        let a = a.as_array();
        if a.len() as u64 > MAX_LIST {
            return Err(too_many(what, a.len()));
        }
        if let Some(&s) = a.iter().find(|&&s| s > MAX_SEED) {
            return Err(not_seed(what, s as i128));
        }
        return Ok(SeedSet::List(a.to_vec()));
    }
    if let Ok(a) = v.extract::<PyReadonlyArray1<'_, i64>>() {
        let a = a.as_array();
        if a.len() as u64 > MAX_LIST {
            return Err(too_many(what, a.len()));
        }
        return a
            .iter()
            .map(|&s| u64::try_from(s).map_err(|_| not_seed(what, s as i128)))
            .collect::<PyResult<_>>()
            .map(SeedSet::List);
    }
    if let Ok(n) = v.len()
        && n as u64 > MAX_LIST
    {
        return Err(too_many(what, n));
    }
    let iter = v.try_iter().map_err(|_| {
        PyTypeError::new_err(format!(
            "{what}: expected a range, a count, (start, stop), 'A..B' or a list of seeds, not {}",
            type_name(v)
        ))
    })?;
    let mut out = Vec::new();
    for (i, s) in iter.enumerate() {
        if i as u64 == MAX_LIST {
            return Err(too_many(what, format!("more than {MAX_LIST}")));
        }
        if i % 65_536 == 65_535 {
            py.check_signals()?;
        }
        out.push(seed(&s?, what)?);
    }
    Ok(SeedSet::List(out))
}

fn not_seed(what: &str, s: i128) -> PyErr {
    value_msg(format!(
        "{what}: {s} is not a seed (seeds are whole numbers from 0 to {MAX_SEED})"
    ))
}

/// `shard=`: None (the whole sweep), `(K, N)` or the command line's `"K/N"`.
pub fn shard(v: Option<&Bound<'_, PyAny>>) -> PyResult<Shard> {
    let Some(v) = v.filter(|v| !v.is_none()) else {
        return Ok(Shard::WHOLE);
    };
    if let Ok(s) = v.cast::<PyString>() {
        return s
            .to_cow()?
            .parse::<Shard>()
            .map_err(|e| value_error(cavesweep::sweep::SweepError::from(e)));
    }
    if let Ok(t) = v.cast::<PyTuple>()
        && t.len() == 2
    {
        let k = uint(&t.get_item(0)?, "shard", 1, u32::MAX as u64)?;
        let n = uint(&t.get_item(1)?, "shard", 1, u32::MAX as u64)?;
        return Shard::new(k as u32, n as u32)
            .map_err(|e| value_error(cavesweep::sweep::SweepError::from(e)));
    }
    Err(PyTypeError::new_err(format!(
        "shard: expected (K, N) or 'K/N', not {}",
        type_name(v)
    )))
}

/// Strings given as one string or an iterable of them (`gate=`, `metrics=`), at most
/// [`MAX_ITEMS`].
pub fn strings(v: Option<&Bound<'_, PyAny>>, what: &str) -> PyResult<Vec<String>> {
    let Some(v) = v.filter(|v| !v.is_none()) else {
        return Ok(Vec::new());
    };
    if let Ok(s) = v.cast::<PyString>() {
        return Ok(vec![s.to_cow()?.into_owned()]);
    }
    let wrong = || {
        PyTypeError::new_err(format!(
            "{what}: expected a string or a list of strings, not {}",
            type_name(v)
        ))
    };
    let mut out = Vec::new();
    for item in v.try_iter().map_err(|_| wrong())? {
        let item = item?;
        let s = item.cast::<PyString>().map_err(|_| wrong())?;
        if out.len() == MAX_ITEMS {
            return Err(value_msg(format!("{what}: more than {MAX_ITEMS} items")));
        }
        out.push(s.to_cow()?.into_owned());
    }
    Ok(out)
}

/// A grid axis and the text it is recorded as (`--vary` of the equivalent command line).
pub struct VaryArg {
    /// The axis.
    pub vary: Vary,
    /// The user's text, or `KEY=V1,V2,...` / `KEY=A..B`.
    pub text: String,
}

/// `vary=`: a dict `{key: values}` (values a list, tuple, array, `range` or one number; a
/// string is the command line's `VALUES` text), or the command line's `"KEY=VALUES"` strings.
pub fn varies(v: Option<&Bound<'_, PyAny>>) -> PyResult<Vec<VaryArg>> {
    let Some(v) = v.filter(|v| !v.is_none()) else {
        return Ok(Vec::new());
    };
    let parse = |text: String| -> PyResult<VaryArg> {
        let vary = text.parse::<Vary>().map_err(value_error)?;
        Ok(VaryArg { vary, text })
    };
    let Ok(d) = v.cast::<PyDict>() else {
        return strings(Some(v), "vary")?.into_iter().map(parse).collect();
    };
    let mut out = Vec::new();
    for (k, values) in d.iter() {
        let key: String = k
            .cast::<PyString>()
            .map_err(|_| PyTypeError::new_err("vary: the keys are recipe keys (strings)"))?
            .to_cow()?
            .into_owned();
        vary::check_key(&key, &key).map_err(value_error)?;
        if let Ok(s) = values.cast::<PyString>() {
            out.push(parse(format!("{key}={}", s.to_cow()?))?);
            continue;
        }
        let vary = if values.is_instance_of::<PyRange>() {
            let (a, b, step) = range_parts(&values, "vary")?;
            let i = |x: i128| {
                i64::try_from(x).map_err(|_| value_msg(format!("vary: {key}: {x} is out of range")))
            };
            if step == 1 {
                Vary::ints(&key, i(a)?, i(b)?).map_err(value_error)?
            } else {
                Vary::list(&key, axis_values(&key, &values)?).map_err(value_error)?
            }
        } else if values.hasattr("__iter__")? {
            Vary::list(&key, axis_values(&key, &values)?).map_err(value_error)?
        } else {
            Vary::list(&key, vec![axis_value(&key, &values)?]).map_err(value_error)?
        };
        out.push(VaryArg {
            text: vary.to_string(),
            vary,
        });
    }
    Ok(out)
}

/// The values of one axis, at most [`MAX_ITEMS`].
fn axis_values(key: &str, values: &Bound<'_, PyAny>) -> PyResult<Vec<String>> {
    let mut out = Vec::new();
    for v in values.try_iter()? {
        if out.len() == MAX_ITEMS {
            return Err(value_msg(format!(
                "vary: {key}: more than {MAX_ITEMS} values"
            )));
        }
        out.push(axis_value(key, &v?)?);
    }
    Ok(out)
}

/// One value of an axis, written as earlier versions wrote it (so the folder's recorded axis
/// is unchanged): an integer in decimal, a float as Python's `repr(float(v))`, a string as is.
fn axis_value(key: &str, v: &Bound<'_, PyAny>) -> PyResult<String> {
    if let Ok(s) = v.cast::<PyString>() {
        return Ok(s.to_cow()?.into_owned());
    }
    if is_int(v) {
        return Ok(int(v, key)?.to_string());
    }
    if !v.is_instance_of::<PyBool>()
        && !type_name(v).starts_with("bool")
        && v.hasattr("__float__")?
    {
        let f: f64 = v.call_method0("__float__")?.extract()?;
        return Ok(PyFloat::new(v.py(), f).repr()?.to_string());
    }
    Err(PyTypeError::new_err(format!(
        "vary: {key}: a value is a number or a string, not {}",
        type_name(v)
    )))
}

/// This machine's physical memory in bytes (Linux's `MemTotal`), None where it cannot be read.
pub fn physical_memory() -> Option<u64> {
    use std::io::Read;
    let mut text = String::new();
    std::fs::File::open("/proc/meminfo")
        .ok()?
        .take(1 << 16)
        .read_to_string(&mut text)
        .ok()?;
    let line = text.lines().find(|l| l.starts_with("MemTotal:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    kb.checked_mul(1024)
}
