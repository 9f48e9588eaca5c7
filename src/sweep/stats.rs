//! The streaming statistics collector: per grid point, exactly mergeable in any order.
//!
//! Every accumulator is a sum of integers, so merging chunks in any order, on any number of
//! threads or machines, gives bit-identical results (floating-point sums would depend on the
//! order). A value is recorded as a fixed-point integer: fractions (in [0, 1]) at 2^-40, counts
//! exactly. Mean and standard deviation come from the exact sums `n`, `Σq`, `Σq²` (i128);
//! minimum and maximum are exact; quantiles come from an HDR histogram of the value at 3
//! significant digits (fractions scaled by 10^6 first), so p05/p50/p95 are within 0.1% of a
//! recorded value. Memory per accumulator is bounded by the histogram (a few KiB), whatever the
//! number of seeds.

use std::collections::BTreeMap;

use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

use crate::measure::{Metric, MetricSet, Values};
use crate::query::GateResult;

/// Fixed-point scale of fractions in the sums: 2^40, so a fraction is rounded by at most 2^-41
/// and `Σq²` (each term <= 2^80) cannot overflow an i128 before 2^46 caves.
const FRAC_FIX: f64 = 1_099_511_627_776.0; // 2^40
/// Scale of fractions in the histograms.
const FRAC_HIST: f64 = 1e6;
/// Significant digits kept by the histograms.
pub const HIST_SIGFIG: u8 = 3;

/// Whether an accumulator holds fractions (scaled) or counts (exact integers).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Kind {
    Fraction,
    Count,
}

impl Kind {
    /// The kind of a metric's values.
    pub fn of(m: Metric) -> Kind {
        match m {
            Metric::WallFraction
            | Metric::FloorFraction
            | Metric::LargestFraction
            | Metric::ConnectedFraction => Kind::Fraction,
            _ => Kind::Count,
        }
    }
    fn fix(self) -> f64 {
        match self {
            Kind::Fraction => FRAC_FIX,
            Kind::Count => 1.0,
        }
    }
    fn hist(self) -> f64 {
        match self {
            Kind::Fraction => FRAC_HIST,
            Kind::Count => 1.0,
        }
    }
}

/// Statistics of one quantity over many caves. NaN values (not measured, or empty such as an
/// unreachable exit) are counted in `missing` and left out of everything else.
#[derive(Debug, Clone)]
pub struct Acc {
    kind: Kind,
    n: u64,
    missing: u64,
    sum: i128,
    sumsq: i128,
    min: f64,
    max: f64,
    hist: Histogram<u64>,
}

/// One row of statistics, ready to print.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Summary {
    pub n: u64,
    pub mean: f64,
    pub sd: f64,
    pub min: f64,
    pub p05: f64,
    pub p50: f64,
    pub p95: f64,
    pub max: f64,
}

impl Acc {
    pub fn new(kind: Kind) -> Acc {
        Acc {
            kind,
            n: 0,
            missing: 0,
            sum: 0,
            sumsq: 0,
            min: f64::INFINITY,
            max: f64::NEG_INFINITY,
            hist: Histogram::new(HIST_SIGFIG).expect("valid sigfig"),
        }
    }

    #[inline]
    pub fn record(&mut self, v: f64) {
        if v.is_nan() {
            self.missing += 1;
            return;
        }
        let q = (v * self.kind.fix()).round() as i128;
        self.n += 1;
        self.sum += q;
        self.sumsq += q * q;
        self.min = self.min.min(v);
        self.max = self.max.max(v);
        let h = (v * self.kind.hist()).round().max(0.0) as u64;
        self.hist
            .record(h)
            .expect("auto-resizing histogram records any u64 below 2^63");
    }

    /// Add another accumulator of the same kind (exact, order independent).
    pub fn merge(&mut self, o: &Acc) {
        debug_assert_eq!(self.kind, o.kind);
        self.n += o.n;
        self.missing += o.missing;
        self.sum += o.sum;
        self.sumsq += o.sumsq;
        self.min = self.min.min(o.min);
        self.max = self.max.max(o.max);
        self.hist
            .add(&o.hist)
            .expect("auto-resizing histograms merge");
    }

    pub fn n(&self) -> u64 {
        self.n
    }
    pub fn missing(&self) -> u64 {
        self.missing
    }

    /// The statistics; all NaN when nothing was recorded.
    pub fn summary(&self) -> Summary {
        if self.n == 0 {
            let nan = f64::NAN;
            return Summary {
                n: 0,
                mean: nan,
                sd: nan,
                min: nan,
                p05: nan,
                p50: nan,
                p95: nan,
                max: nan,
            };
        }
        let (fix, n) = (self.kind.fix(), self.n as f64);
        let mean = self.sum as f64 / n / fix;
        let sd = if self.n < 2 {
            0.0
        } else {
            // Exact integer numerator: n Σq² - (Σq)², then one rounding to f64.
            let num = (self.n as i128)
                .checked_mul(self.sumsq)
                .and_then(|a| a.checked_sub(self.sum * self.sum));
            let var_q = match num {
                Some(num) => num as f64 / (n * (n - 1.0)),
                None => (self.sumsq as f64 - (self.sum as f64).powi(2) / n) / (n - 1.0),
            };
            var_q.max(0.0).sqrt() / fix
        };
        let q = |p: f64| self.hist.value_at_quantile(p) as f64 / self.kind.hist();
        // Fixed-point rounding and histogram buckets can land a hair outside the exact range.
        let clamp = |v: f64| v.clamp(self.min, self.max);
        Summary {
            n: self.n,
            mean: clamp(mean),
            sd,
            min: self.min,
            p05: clamp(q(0.05)),
            p50: clamp(q(0.50)),
            p95: clamp(q(0.95)),
            max: self.max,
        }
    }
}

impl PartialEq for Acc {
    fn eq(&self, o: &Acc) -> bool {
        AccFile::from(self) == AccFile::from(o)
    }
}

/// Everything collected for one grid point.
#[derive(Debug, Clone, PartialEq)]
pub struct PointStats {
    pub seeds: u64,
    pub passed: u64,
    /// Per distinct gate clause: caves on which it was false.
    pub fails: Vec<u64>,
    /// Per metric in [`Metric::ALL`] order; `None` for metrics not measured.
    pub metrics: Vec<Option<Acc>>,
    /// Wall fraction after each trajectory step.
    pub trajectory: Vec<Acc>,
    /// `components` value -> number of caves.
    pub components: BTreeMap<u64, u64>,
}

impl PointStats {
    pub fn new(metrics: MetricSet, clauses: usize, steps: usize) -> PointStats {
        PointStats {
            seeds: 0,
            passed: 0,
            fails: vec![0; clauses],
            metrics: Metric::ALL
                .iter()
                .map(|&m| metrics.contains(m).then(|| Acc::new(Kind::of(m))))
                .collect(),
            trajectory: (0..steps).map(|_| Acc::new(Kind::Fraction)).collect(),
            components: BTreeMap::new(),
        }
    }

    /// Record one cave.
    #[inline]
    pub fn record(&mut self, trajectory: &[f64], values: &Values, gate: GateResult) {
        self.seeds += 1;
        self.passed += gate.pass() as u64;
        // "Failed" = the clause was false, whether or not the cave passed (with || and ! a
        // passing cave can have false clauses).
        for (i, f) in self.fails.iter_mut().enumerate() {
            *f += gate.failed(i) as u64;
        }
        for (acc, &v) in self.metrics.iter_mut().zip(values) {
            if let Some(acc) = acc {
                acc.record(v);
            }
        }
        for (acc, &w) in self.trajectory.iter_mut().zip(trajectory) {
            acc.record(w);
        }
        let c = values[Metric::Components.index()];
        if !c.is_nan() {
            *self.components.entry(c as u64).or_insert(0) += 1;
        }
    }

    /// Add another point's statistics (exact, order independent).
    pub fn merge(&mut self, o: &PointStats) {
        self.seeds += o.seeds;
        self.passed += o.passed;
        for (a, b) in self.fails.iter_mut().zip(&o.fails) {
            *a += b;
        }
        for (a, b) in self.metrics.iter_mut().zip(&o.metrics) {
            if let (Some(a), Some(b)) = (a, b) {
                a.merge(b);
            }
        }
        for (a, b) in self.trajectory.iter_mut().zip(&o.trajectory) {
            a.merge(b);
        }
        for (k, v) in &o.components {
            *self.components.entry(*k).or_insert(0) += v;
        }
    }
}

// ---- persistence (checkpoints) ---------------------------------------------------------------

/// An accumulator as stored in a checkpoint: integers as decimal strings (JSON numbers lose
/// i128 precision), the histogram as (value, count) pairs, which rebuild it exactly.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AccFile {
    kind: Kind,
    n: u64,
    missing: u64,
    sum: String,
    sumsq: String,
    min: Option<f64>,
    max: Option<f64>,
    hist: Vec<(u64, u64)>,
}

impl From<&Acc> for AccFile {
    fn from(a: &Acc) -> AccFile {
        AccFile {
            kind: a.kind,
            n: a.n,
            missing: a.missing,
            sum: a.sum.to_string(),
            sumsq: a.sumsq.to_string(),
            min: a.min.is_finite().then_some(a.min),
            max: a.max.is_finite().then_some(a.max),
            hist: a
                .hist
                .iter_recorded()
                .map(|v| (v.value_iterated_to(), v.count_at_value()))
                .collect(),
        }
    }
}

impl AccFile {
    pub fn to_acc(&self) -> Result<Acc, String> {
        let mut a = Acc::new(self.kind);
        a.n = self.n;
        a.missing = self.missing;
        a.sum = self.sum.parse().map_err(|_| "bad sum".to_string())?;
        a.sumsq = self.sumsq.parse().map_err(|_| "bad sumsq".to_string())?;
        a.min = self.min.unwrap_or(f64::INFINITY);
        a.max = self.max.unwrap_or(f64::NEG_INFINITY);
        for &(v, c) in &self.hist {
            a.hist
                .record_n(v, c)
                .map_err(|e| format!("bad histogram entry: {e}"))?;
        }
        if a.hist.len() != a.n {
            return Err("histogram count does not match n".into());
        }
        Ok(a)
    }
}

/// A [`PointStats`] as stored in a checkpoint.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PointFile {
    seeds: u64,
    passed: u64,
    fails: Vec<u64>,
    metrics: Vec<Option<AccFile>>,
    trajectory: Vec<AccFile>,
    components: Vec<(u64, u64)>,
}

impl From<&PointStats> for PointFile {
    fn from(p: &PointStats) -> PointFile {
        PointFile {
            seeds: p.seeds,
            passed: p.passed,
            fails: p.fails.clone(),
            metrics: p
                .metrics
                .iter()
                .map(|a| a.as_ref().map(AccFile::from))
                .collect(),
            trajectory: p.trajectory.iter().map(AccFile::from).collect(),
            components: p.components.iter().map(|(&k, &v)| (k, v)).collect(),
        }
    }
}

impl PointFile {
    /// Rebuild, checking the shape against what this sweep expects.
    pub fn to_stats(&self, expect: &PointStats) -> Result<PointStats, String> {
        if self.fails.len() != expect.fails.len()
            || self.metrics.len() != expect.metrics.len()
            || self.trajectory.len() != expect.trajectory.len()
        {
            return Err("statistics have the wrong shape".into());
        }
        Ok(PointStats {
            seeds: self.seeds,
            passed: self.passed,
            fails: self.fails.clone(),
            metrics: self
                .metrics
                .iter()
                .map(|a| a.as_ref().map(AccFile::to_acc).transpose())
                .collect::<Result<_, _>>()?,
            trajectory: self
                .trajectory
                .iter()
                .map(AccFile::to_acc)
                .collect::<Result<_, _>>()?,
            components: self.components.iter().copied().collect(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn merge_in_any_split_equals_one_pass(
            values in prop::collection::vec(0.0f64..1.0, 1..300), cut in 0usize..300,
        ) {
            let cut = cut.min(values.len());
            let mut all = Acc::new(Kind::Fraction);
            values.iter().for_each(|&v| all.record(v));
            let (mut a, mut b) = (Acc::new(Kind::Fraction), Acc::new(Kind::Fraction));
            values[..cut].iter().for_each(|&v| a.record(v));
            values[cut..].iter().for_each(|&v| b.record(v));
            let mut ba = b.clone();
            ba.merge(&a);
            a.merge(&b);
            prop_assert_eq!(a.summary(), all.summary());
            prop_assert_eq!(ba.summary(), all.summary());
            // Checkpoint round trip is exact.
            let back = AccFile::from(&a).to_acc().unwrap();
            prop_assert_eq!(back.summary(), all.summary());
        }

        #[test]
        fn summary_matches_direct_computation(values in prop::collection::vec(0u32..500, 2..300)) {
            let mut acc = Acc::new(Kind::Count);
            values.iter().for_each(|&v| acc.record(v as f64));
            let s = acc.summary();
            let n = values.len() as f64;
            let mean = values.iter().map(|&v| v as f64).sum::<f64>() / n;
            let var = values.iter().map(|&v| (v as f64 - mean).powi(2)).sum::<f64>() / (n - 1.0);
            prop_assert!((s.mean - mean).abs() < 1e-9);
            prop_assert!((s.sd - var.sqrt()).abs() < 1e-9);
            let mut sorted = values.clone();
            sorted.sort();
            prop_assert_eq!(s.min, sorted[0] as f64);
            prop_assert_eq!(s.max, *sorted.last().unwrap() as f64);
            // Integers below 2048 are exact at 3 significant digits: the median is a value
            // whose rank brackets 50%.
            let below = sorted.iter().filter(|&&v| (v as f64) < s.p50).count() as f64;
            let upto = sorted.iter().filter(|&&v| (v as f64) <= s.p50).count() as f64;
            prop_assert!(below / n <= 0.5 && upto / n >= 0.5, "p50 {} of {:?}", s.p50, sorted);
        }
    }

    #[test]
    fn constant_values_summarise_to_themselves() {
        let v = 839.0 / 1463.0;
        let mut a = Acc::new(Kind::Fraction);
        (0..1000).for_each(|_| a.record(v));
        let s = a.summary();
        assert_eq!(
            (s.min, s.max, s.mean, s.p05, s.p50, s.p95),
            (v, v, v, v, v, v)
        );
        assert_eq!(s.sd, 0.0);
    }

    #[test]
    fn nan_is_missing() {
        let mut a = Acc::new(Kind::Count);
        a.record(f64::NAN);
        a.record(3.0);
        assert_eq!((a.n(), a.missing()), (1, 1));
        assert_eq!(a.summary().mean, 3.0);
        assert!(Acc::new(Kind::Count).summary().mean.is_nan());
    }
}
