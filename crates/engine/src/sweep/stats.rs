//! The streaming statistics collector: per grid point, exactly mergeable in any order, small.
//!
//! Every accumulator is a sum of integers, so merging chunks in any order, on any number of
//! threads or machines, gives bit-identical results (floating-point sums would depend on the
//! order). A value is recorded as a fixed-point integer: fractions (in [0, 1]) at 2^-40, counts
//! exactly. Mean and standard deviation come from the exact sums `n`, `Σq`, `Σq²` (i128);
//! minimum and maximum are exact.
//!
//! Quantiles come from an HDR histogram at 3 significant digits (fractions scaled by 10^6 first),
//! so p05/p50/p95 are within 0.1% of a recorded value. The buckets are `hdrhistogram`'s (its
//! `lowest_equivalent`/`highest_equivalent`, and `value_at_quantile`'s rule), but the counts are
//! kept *sparse*: a sorted list of (bucket, count) holding only the buckets seen. Why not
//! `hdrhistogram::Histogram` itself: its dense counts array is ~88 KB per accumulator at our value
//! range, i.e. ~3 MB per grid point with a 25-step trajectory; a 100,000-point grid cannot hold
//! that, and a chunk of ten caves cannot afford to allocate, zero and scan it. The sparse form
//! costs a few bytes per distinct bucket, merges by a linear walk, and gives the same quantiles.
//!
//! Workers record into [`PointBuilder`]s (values appended to reused buffers, sorted once per
//! chunk); the collector merges the resulting [`PointStats`].

use std::sync::OnceLock;

use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

use cavesweep_core::measure::{Metric, MetricSet, Values};
use cavesweep_core::query::GateResult;

/// Fixed-point scale of fractions in the sums: 2^40, so a fraction is rounded by at most 2^-41
/// and `Σq²` (each term <= 2^80) cannot overflow an i128 before 2^46 caves.
const FRAC_FIX: f64 = 1_099_511_627_776.0; // 2^40
/// Scale of fractions in the histograms.
const FRAC_HIST: f64 = 1e6;
/// Significant digits kept by the histograms.
pub const HIST_SIGFIG: u8 = 3;

/// The histogram whose bucketing every accumulator shares (its counts stay empty).
fn buckets() -> &'static Histogram<u64> {
    static H: OnceLock<Histogram<u64>> = OnceLock::new();
    H.get_or_init(|| Histogram::new(HIST_SIGFIG).expect("valid sigfig"))
}

/// Whether an accumulator holds fractions (scaled) or counts (exact integers).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Kind {
    /// A fraction in `[0, 1]`: summed in fixed point at 2^-40, bucketed after scaling by 10^6.
    Fraction,
    /// A whole-number count: summed and bucketed exactly.
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
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Acc {
    kind: Kind,
    n: u64,
    missing: u64,
    sum: i128,
    sumsq: i128,
    /// Exact extremes; meaningless (and stored as 0) while `n == 0`.
    min: f64,
    max: f64,
    /// (bucket's lowest value, count), buckets strictly increasing, counts > 0.
    hist: Vec<(u64, u64)>,
}

/// One row of statistics, ready to print.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Summary {
    /// Caves with a value (NaNs not counted).
    pub n: u64,
    /// Mean, from the exact fixed-point sums (NaN, like every field but `n`, when `n == 0`).
    pub mean: f64,
    /// Sample standard deviation (divided by `n - 1`); 0 when `n == 1`.
    pub sd: f64,
    /// Smallest value (exact).
    pub min: f64,
    /// 5th percentile, from the histogram (within 0.1% of a recorded value).
    pub p05: f64,
    /// Median, from the histogram (within 0.1% of a recorded value).
    pub p50: f64,
    /// 95th percentile, from the histogram (within 0.1% of a recorded value).
    pub p95: f64,
    /// Largest value (exact).
    pub max: f64,
}

impl Acc {
    /// An empty accumulator of values of `kind`.
    pub fn new(kind: Kind) -> Acc {
        Acc {
            kind,
            n: 0,
            missing: 0,
            sum: 0,
            sumsq: 0,
            min: 0.0,
            max: 0.0,
            hist: Vec::new(),
        }
    }

    /// Add another accumulator of the same kind (exact, order independent).
    pub fn merge(&mut self, o: &Acc) {
        debug_assert_eq!(self.kind, o.kind);
        if o.n > 0 {
            if self.n == 0 {
                (self.min, self.max) = (o.min, o.max);
            } else {
                self.min = self.min.min(o.min);
                self.max = self.max.max(o.max);
            }
        }
        self.n += o.n;
        self.missing += o.missing;
        self.sum += o.sum;
        self.sumsq += o.sumsq;
        if o.hist.is_empty() {
            return;
        }
        if self.hist.is_empty() {
            self.hist.clone_from(&o.hist);
            return;
        }
        let mut out = Vec::with_capacity(self.hist.len() + o.hist.len());
        let (mut a, mut b) = (self.hist.iter().peekable(), o.hist.iter().peekable());
        loop {
            match (a.peek(), b.peek()) {
                (Some(&&(ka, ca)), Some(&&(kb, cb))) => {
                    if ka == kb {
                        out.push((ka, ca + cb));
                        a.next();
                        b.next();
                    } else if ka < kb {
                        out.push((ka, ca));
                        a.next();
                    } else {
                        out.push((kb, cb));
                        b.next();
                    }
                }
                (Some(&&x), None) => {
                    out.push(x);
                    a.next();
                }
                (None, Some(&&x)) => {
                    out.push(x);
                    b.next();
                }
                (None, None) => break,
            }
        }
        self.hist = out;
    }

    /// Values recorded (NaNs not counted).
    pub fn n(&self) -> u64 {
        self.n
    }
    /// NaN values seen: not measured, or empty (such as the path length to an unreachable exit).
    pub fn missing(&self) -> u64 {
        self.missing
    }

    /// `hdrhistogram::Histogram::value_at_quantile` on the sparse counts (the oracle of
    /// [`Acc::p05_p50_p95`]).
    #[cfg(test)]
    fn value_at_quantile(&self, q: f64) -> u64 {
        let want = ((q.min(1.0) * self.n as f64).ceil() as u64).max(1);
        let mut seen = 0;
        for &(k, c) in &self.hist {
            seen += c;
            if seen >= want {
                return if q == 0.0 {
                    k
                } else {
                    buckets().highest_equivalent(k)
                };
            }
        }
        0
    }

    /// `Acc::value_at_quantile` (the test oracle) of 0.05, 0.5 and 0.95 in one walk of the
    /// counts (their ranks never decrease): a 100,000-point grid summarises ~20 accumulators
    /// per point.
    fn p05_p50_p95(&self) -> [u64; 3] {
        let n = self.n as f64;
        let want = [0.05, 0.5, 0.95].map(|q: f64| ((q * n).ceil() as u64).max(1));
        let mut out = [0; 3];
        let (mut i, mut seen) = (0, 0);
        let b = buckets();
        for &(k, c) in &self.hist {
            seen += c;
            while i < 3 && seen >= want[i] {
                out[i] = b.highest_equivalent(k);
                i += 1;
            }
            if i == 3 {
                break;
            }
        }
        out
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
        let [p05, p50, p95] = self.p05_p50_p95().map(|v| v as f64 / self.kind.hist());
        // Fixed-point rounding and histogram buckets can land a hair outside the exact range.
        let clamp = |v: f64| v.clamp(self.min, self.max);
        Summary {
            n: self.n,
            mean: clamp(mean),
            sd,
            min: self.min,
            p05: clamp(p05),
            p50: clamp(p50),
            p95: clamp(p95),
            max: self.max,
        }
    }

    /// Postcard's encoding of this accumulator (see [`PointStats::encode_into`]).
    fn encode(&self, w: &mut wire::Writer) {
        w.u64(match self.kind {
            Kind::Fraction => 0,
            Kind::Count => 1,
        });
        w.u64(self.n);
        w.u64(self.missing);
        w.i128(self.sum);
        w.i128(self.sumsq);
        w.f64(self.min);
        w.f64(self.max);
        w.pairs(&self.hist);
    }

    /// Internal consistency of a stored accumulator against the caves it claims to cover.
    fn check(&self, kind: Kind, caves: u64) -> Result<(), String> {
        if self.kind != kind {
            return Err("an accumulator has the wrong kind".into());
        }
        if self.n.checked_add(self.missing) != Some(caves) {
            return Err(format!(
                "an accumulator covers {} + {} caves, not {caves}",
                self.n, self.missing
            ));
        }
        let mut total = 0u64;
        for (i, &(k, c)) in self.hist.iter().enumerate() {
            if c == 0 || (i > 0 && self.hist[i - 1].0 >= k) || buckets().lowest_equivalent(k) != k {
                return Err("a histogram is malformed".into());
            }
            total = total.checked_add(c).ok_or("a histogram count overflows")?;
        }
        if total != self.n {
            return Err(format!(
                "a histogram holds {total} values, its accumulator {}",
                self.n
            ));
        }
        if self.n > 0 && !(self.min.is_finite() && self.max.is_finite() && self.min <= self.max) {
            return Err("an accumulator's extremes are invalid".into());
        }
        if self.n > 0 && self.kind == Kind::Fraction && !(self.min >= 0.0 && self.max <= 1.0) {
            return Err("a fraction lies outside [0, 1]".into());
        }
        Ok(())
    }
}

/// `x.round() as i128`, without the libm call that `round` becomes in code compiled for baseline
/// x86-64 (no SSE4.1 outside the SIMD clones): two of them per recorded value showed up in grid
/// sweep profiles. Exact: below 2^52 the truncation and the remainder `x - t` are exact; from
/// 2^52 on every f64 is an integer already.
#[inline]
fn round_i128(x: f64) -> i128 {
    if x.abs() < 4_503_599_627_370_496.0 {
        let t = x as i64;
        let f = x - t as f64;
        (t + (f >= 0.5) as i64 - (f <= -0.5) as i64) as i128
    } else {
        x.round() as i128
    }
}

/// The histogram of `values` (histogram values, not yet bucketed) into `hist`, by bucketing
/// each value with `hdrhistogram` and sorting the keys: the general method, for values past
/// [`Tally`]'s range. It was the only method before the tally, whose table made 1-thread
/// sweeps 2.5-5.7% faster.
fn hist_by_sort(b: &Histogram<u64>, values: &mut [u64], hist: &mut Vec<(u64, u64)>) {
    for h in values.iter_mut() {
        *h = b.lowest_equivalent(*h);
    }
    values.sort_unstable();
    for &k in values.iter() {
        match hist.last_mut() {
            Some((lk, c)) if *lk == k => *c += 1,
            _ => hist.push((k, 1)),
        }
    }
}

thread_local! {
    /// Each worker thread's tally table, reused by every accumulator it finishes.
    static TALLY: std::cell::RefCell<Tally> = const { std::cell::RefCell::new(Tally::new()) };
}

/// Counts histogram values per bucket in a table indexed by bucket, instead of sorting the
/// bucket keys: a chunk's values fall in a few hundred buckets, so the table is touched in a
/// few hundred places, and only those indices are sorted.
///
/// The bucket index of value `h` is the position of its bucket among all buckets of the
/// histogram ([`HIST_SIGFIG`] = 3: 2048 sub-buckets, of which buckets past the first use the
/// upper 1024), in increasing order of value: `s = max(0, bits(h) - 11)` is the bucket's
/// shift (its values share `h >> s`) and `index = s * 1024 + (h >> s)`. Bucket order is value
/// order, so sorted indices give sorted keys, and the key (the bucket's lowest value, what
/// `lowest_equivalent` returns) is `(index - s * 1024) << s`. The tests check both against
/// `hdrhistogram` on every magnitude.
#[derive(Debug)]
pub(crate) struct Tally {
    /// Values per bucket index, all zero between calls; allocated on first use.
    counts: Vec<u32>,
    /// The indices counted in this call.
    touched: Vec<u16>,
}

/// Bucket indices the table covers: values below 2^25 (fractions at the histogram's 1e6
/// scale, and counts up to 33.5 million); larger ones take the sort.
const TALLY_LEN: usize = 1 << 14;

// The tally's index arithmetic (2048 sub-buckets, 1024 per bucket past the first) is that of
// 3 significant digits.
const _: () = assert!(HIST_SIGFIG == 3);

impl Tally {
    const fn new() -> Tally {
        Tally {
            counts: Vec::new(),
            touched: Vec::new(),
        }
    }

    /// The bucket index of histogram value `h` (see [`Tally`]).
    #[inline(always)]
    fn index(h: u64) -> u64 {
        let s = 53 - (h | 2047).leading_zeros() as u64;
        (s << 10) + (h >> s)
    }

    /// The lowest value of bucket `index`: `hdrhistogram`'s key for every value in it.
    #[inline(always)]
    fn key(index: u64) -> u64 {
        let s = (index >> 10).saturating_sub(1);
        (index - (s << 10)) << s
    }

    /// Appends `(key, count)` for the buckets of `values` to `hist` in increasing key order,
    /// leaving the table empty. `false` (nothing appended, the table still empty) when a value
    /// lies past the table or there are more values than a count holds.
    fn count(&mut self, values: &[u64], hist: &mut Vec<(u64, u64)>) -> bool {
        if values.len() > u32::MAX as usize {
            return false;
        }
        if self.counts.is_empty() {
            self.counts = vec![0; TALLY_LEN];
        }
        self.touched.clear();
        let counts = &mut self.counts[..];
        for &h in values {
            let i = Self::index(h) as usize;
            let Some(c) = counts.get_mut(i) else {
                for &t in &self.touched {
                    counts[t as usize] = 0;
                }
                return false;
            };
            if *c == 0 {
                self.touched.push(i as u16);
            }
            *c += 1;
        }
        self.touched.sort_unstable();
        hist.extend(self.touched.iter().map(|&t| {
            let c = std::mem::take(&mut counts[t as usize]);
            (Self::key(t as u64), c as u64)
        }));
        true
    }
}

/// Records values into an [`Acc`] cheaply: a value is only appended to a reused buffer, and
/// [`AccBuilder::finish`] does the arithmetic for all of them in one loop (sums, extremes,
/// histogram values), then counts the values per bucket (`Tally`).
///
/// Why deferred: a sweep records ten or more values per cave (metrics and trajectory steps);
/// done one call at a time, each paid its rounding, 128-bit sums, extremes and buffer bookkeeping
/// behind a call, 5% of a chapter-strict sweep. The loop in `finish` keeps the accumulators in
/// registers. The result is the same, value for value and in the same order.
#[derive(Debug, Clone)]
pub struct AccBuilder {
    kind: Kind,
    /// The values recorded (`f64::to_bits`), overwritten in place by their histogram values in
    /// `finish`: one buffer, so a worker's memory is what it was when values were bucketed
    /// one at a time.
    raw: Vec<u64>,
    /// Values already folded into an accumulator: every [`FOLD_AT`] values, so a builder holds
    /// at most that many whatever the chunk size. Merging is exact and order independent, so
    /// the result is the one a single fold gives.
    folded: Option<Acc>,
}

/// Values an [`AccBuilder`] keeps before folding them: the largest default chunk, so sweeps
/// with default chunks never fold (and run exactly as before).
const FOLD_AT: usize = 16_384;

impl AccBuilder {
    /// An empty builder of values of `kind`.
    pub fn new(kind: Kind) -> AccBuilder {
        AccBuilder {
            kind,
            raw: Vec::new(),
            folded: None,
        }
    }

    /// Record one value (NaN counts as missing). Called once per cave and quantity: kept cheap.
    #[inline(always)]
    pub fn record(&mut self, v: f64) {
        self.raw.push(v.to_bits());
        if self.raw.len() >= FOLD_AT {
            self.fold();
        }
    }

    #[cold]
    fn fold(&mut self) {
        let mut part = Acc::new(self.kind);
        self.bucket_into(&mut part);
        match &mut self.folded {
            Some(f) => f.merge(&part),
            None => self.folded = Some(part),
        }
    }

    /// The accumulator of everything recorded since the last `finish`; the builder is emptied
    /// (keeping its buffer).
    pub fn finish(&mut self) -> Acc {
        let mut acc = Acc::new(self.kind);
        self.finish_into(&mut acc);
        acc
    }

    /// [`AccBuilder::finish`] into `out`, reusing its histogram's buffer.
    pub fn finish_into(&mut self, out: &mut Acc) {
        self.bucket_into(out);
        if let Some(f) = self.folded.take() {
            out.merge(&f);
        }
    }

    /// The accumulator of the values in `raw` (emptied), into `out`.
    fn bucket_into(&mut self, out: &mut Acc) {
        let (fix, scale) = (self.kind.fix(), self.kind.hist());
        // Locals, not fields: the loop's sums stay in registers.
        let (mut n, mut missing, mut sum, mut sumsq) = (0u64, 0u64, 0i128, 0i128);
        let (mut min, mut max) = (f64::INFINITY, f64::NEG_INFINITY);
        // Histogram value `j` overwrites value `i >= j` (NaNs get none) once `i` was read.
        let mut j = 0;
        for i in 0..self.raw.len() {
            let v = f64::from_bits(self.raw[i]);
            if v.is_nan() {
                missing += 1;
                continue;
            }
            let q = round_i128(v * fix);
            min = min.min(v);
            max = max.max(v);
            n += 1;
            sum += q;
            sumsq += q * q;
            // The histogram value; its bucket is found below, for all values at once.
            self.raw[j] = round_i128(v * scale).clamp(0, u64::MAX as i128) as u64;
            j += 1;
        }
        let mut hist = std::mem::take(&mut out.hist);
        hist.clear();
        let values = &mut self.raw[..j];
        if !TALLY.with_borrow_mut(|t| t.count(values, &mut hist)) {
            hist_by_sort(buckets(), values, &mut hist);
        }
        self.raw.clear();
        *out = Acc {
            kind: self.kind,
            n,
            missing,
            sum,
            sumsq,
            // Acc keeps 0 while nothing was recorded.
            min: if n > 0 { min } else { 0.0 },
            max: if n > 0 { max } else { 0.0 },
            hist,
        };
    }
}

/// Everything collected for one grid point.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PointStats {
    /// Caves recorded.
    pub seeds: u64,
    /// Of those, caves that passed the gate.
    pub passed: u64,
    /// Per distinct gate clause: caves on which it was false.
    pub fails: Vec<u64>,
    /// Per named gate (`--gate NAME=EXPR`, in definition order): caves that passed it.
    pub named: Vec<u64>,
    /// Per metric in [`Metric::ALL`] order; `None` for metrics not measured.
    pub metrics: Vec<Option<Acc>>,
    /// Wall fraction after each trajectory step.
    pub trajectory: Vec<Acc>,
    /// (`components` value, number of caves), values strictly increasing.
    pub components: Vec<(u64, u64)>,
}

/// The shape of a point's statistics: which metrics, how many clauses and trajectory steps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shape {
    /// The metrics with statistics.
    pub metrics: MetricSet,
    /// Distinct gate clauses (the length of [`PointStats::fails`]).
    pub clauses: usize,
    /// Named gates.
    pub named: usize,
    /// Wall-fraction samples per cave (the trajectory's length).
    pub steps: usize,
}

impl PointStats {
    /// Empty statistics of `shape`.
    pub fn new(shape: Shape) -> PointStats {
        PointStats {
            seeds: 0,
            passed: 0,
            fails: vec![0; shape.clauses],
            named: vec![0; shape.named],
            metrics: Metric::ALL
                .iter()
                .map(|&m| shape.metrics.contains(m).then(|| Acc::new(Kind::of(m))))
                .collect(),
            trajectory: (0..shape.steps).map(|_| Acc::new(Kind::Fraction)).collect(),
            components: Vec::new(),
        }
    }

    /// Add another point's statistics (exact, order independent).
    pub fn merge(&mut self, o: &PointStats) {
        self.seeds += o.seeds;
        self.passed += o.passed;
        for (a, b) in self.fails.iter_mut().zip(&o.fails) {
            *a += b;
        }
        for (a, b) in self.named.iter_mut().zip(&o.named) {
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
        if !o.components.is_empty() {
            let mut all: Vec<(u64, u64)> = self.components.clone();
            all.extend_from_slice(&o.components);
            all.sort_unstable_by_key(|&(k, _)| k);
            let mut out: Vec<(u64, u64)> = Vec::with_capacity(all.len());
            for (k, c) in all {
                match out.last_mut() {
                    Some((lk, lc)) if *lk == k => *lc += c,
                    _ => out.push((k, c)),
                }
            }
            self.components = out;
        }
    }

    /// The stored form: postcard's encoding (compact varints), which [`PointStats::decode`]
    /// reads with `postcard`.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::new();
        self.encode_into(&mut out);
        out
    }

    /// [`PointStats::encode`], appended to `out`. Written by hand, byte for byte what
    /// `postcard::to_allocvec` gives (a test checks it on random statistics), because a big
    /// grid encodes a record per point on the workers' time and serde's generic path costs
    /// several times more (one buffer append per varint).
    pub fn encode_into(&self, out: &mut Vec<u8>) {
        let mut w = wire::Writer::new(out);
        w.u64(self.seeds);
        w.u64(self.passed);
        w.u64s(&self.fails);
        w.u64s(&self.named);
        w.u64(self.metrics.len() as u64);
        for m in &self.metrics {
            match m {
                None => w.byte(0),
                Some(acc) => {
                    w.byte(1);
                    acc.encode(&mut w);
                }
            }
        }
        w.u64(self.trajectory.len() as u64);
        for acc in &self.trajectory {
            acc.encode(&mut w);
        }
        w.pairs(&self.components);
    }

    /// Decode a stored form and check it: the shape this sweep expects, and counts that agree
    /// with each other and with the `seeds` caves it must cover.
    pub fn decode(bytes: &[u8], shape: Shape, seeds: u64) -> Result<PointStats, String> {
        let s: PointStats =
            postcard::from_bytes(bytes).map_err(|e| format!("statistics do not decode ({e})"))?;
        let expect = PointStats::new(shape);
        if s.fails.len() != expect.fails.len()
            || s.named.len() != expect.named.len()
            || s.trajectory.len() != expect.trajectory.len()
            || s.metrics.len() != expect.metrics.len()
            || s.metrics
                .iter()
                .zip(&expect.metrics)
                .any(|(a, b)| a.is_some() != b.is_some())
        {
            return Err("statistics have the wrong shape for this sweep".into());
        }
        if s.seeds != seeds {
            return Err(format!(
                "statistics cover {} caves, its done chunks {seeds}",
                s.seeds
            ));
        }
        if s.passed > s.seeds || s.fails.iter().chain(&s.named).any(|&f| f > s.seeds) {
            return Err(format!(
                "more caves passed or failed than were run ({} passed of {})",
                s.passed, s.seeds
            ));
        }
        for (m, acc) in Metric::ALL.iter().zip(&s.metrics) {
            if let Some(acc) = acc {
                acc.check(Kind::of(*m), s.seeds)?;
            }
        }
        for acc in &s.trajectory {
            acc.check(Kind::Fraction, s.seeds)?;
        }
        let mut total = 0u64;
        for (i, &(k, c)) in s.components.iter().enumerate() {
            if c == 0 || (i > 0 && s.components[i - 1].0 >= k) {
                return Err("the component-count distribution is malformed".into());
            }
            total = total.saturating_add(c);
        }
        if total > s.seeds {
            return Err("the component-count distribution covers more caves than were run".into());
        }
        Ok(s)
    }
}

/// Records one grid point's caves on a worker thread; [`PointBuilder::finish`] turns a chunk's
/// worth into [`PointStats`] and empties the builder for the next chunk (buffers are kept).
#[derive(Debug, Clone)]
pub struct PointBuilder {
    shape: Shape,
    seeds: u64,
    passed: u64,
    fails: Vec<u64>,
    named: Vec<u64>,
    metrics: Vec<Option<AccBuilder>>,
    trajectory: Vec<AccBuilder>,
    components: Vec<u64>,
}

impl PointBuilder {
    /// An empty builder of statistics of `shape`.
    pub fn new(shape: Shape) -> PointBuilder {
        PointBuilder {
            shape,
            seeds: 0,
            passed: 0,
            fails: vec![0; shape.clauses],
            named: vec![0; shape.named],
            metrics: Metric::ALL
                .iter()
                .map(|&m| {
                    shape
                        .metrics
                        .contains(m)
                        .then(|| AccBuilder::new(Kind::of(m)))
                })
                .collect(),
            trajectory: (0..shape.steps)
                .map(|_| AccBuilder::new(Kind::Fraction))
                .collect(),
            components: Vec::new(),
        }
    }

    /// The shape this builder records.
    pub fn shape(&self) -> Shape {
        self.shape
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
        for (j, n) in self.named.iter_mut().enumerate() {
            *n += gate.named_pass(j) as u64;
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
            self.components.push(c as u64);
        }
    }

    /// [`PointBuilder::finish`] into `out`, reusing its buffers (a worker closing point after
    /// point allocates nothing).
    pub fn finish_into(&mut self, out: &mut PointStats) {
        if out.fails.len() != self.fails.len()
            || out.named.len() != self.named.len()
            || out.trajectory.len() != self.trajectory.len()
            || out
                .metrics
                .iter()
                .map(Option::is_some)
                .ne(self.metrics.iter().map(Option::is_some))
        {
            *out = PointStats::new(self.shape);
        }
        self.components.sort_unstable();
        out.components.clear();
        for &c in &self.components {
            match out.components.last_mut() {
                Some((k, n)) if *k == c => *n += 1,
                _ => out.components.push((c, 1)),
            }
        }
        self.components.clear();
        out.seeds = std::mem::take(&mut self.seeds);
        out.passed = std::mem::take(&mut self.passed);
        out.fails.copy_from_slice(&self.fails);
        self.fails.fill(0);
        out.named.copy_from_slice(&self.named);
        self.named.fill(0);
        for (b, a) in self.metrics.iter_mut().zip(&mut out.metrics) {
            if let (Some(b), Some(a)) = (b, a) {
                b.finish_into(a);
            }
        }
        for (b, a) in self.trajectory.iter_mut().zip(&mut out.trajectory) {
            b.finish_into(a);
        }
    }

    /// The statistics recorded since the last call.
    pub fn finish(&mut self) -> PointStats {
        self.components.sort_unstable();
        let mut components: Vec<(u64, u64)> = Vec::new();
        for &c in &self.components {
            match components.last_mut() {
                Some((k, n)) if *k == c => *n += 1,
                _ => components.push((c, 1)),
            }
        }
        self.components.clear();
        let out = PointStats {
            seeds: self.seeds,
            passed: self.passed,
            fails: std::mem::replace(&mut self.fails, vec![0; self.shape.clauses]),
            named: std::mem::replace(&mut self.named, vec![0; self.shape.named]),
            metrics: self
                .metrics
                .iter_mut()
                .map(|a| a.as_mut().map(AccBuilder::finish))
                .collect(),
            trajectory: self.trajectory.iter_mut().map(AccBuilder::finish).collect(),
            components,
        };
        self.seeds = 0;
        self.passed = 0;
        out
    }
}

/// The pieces of postcard's wire format the statistics use: LEB128 varints, zigzag for signed
/// integers, little-endian `f64`, a varint length before a sequence.
mod wire {
    /// Bytes gathered on the stack before they are appended to the output: a 10-seed grid
    /// point's whole record (~1.5 KB with 5 metrics and 13 steps) fits, so it reaches its `Vec`
    /// in one append, allocated at its exact size.
    const BUF: usize = 2048;
    /// The longest single write: a varint of a `u128` (19 bytes), rounded up.
    const MAX_WRITE: usize = 20;

    /// Postcard's varint wire format, written into a stack buffer that is flushed to the output
    /// when nearly full and when the writer is dropped. Why not push to the `Vec` directly: a
    /// record is ~1,000 varints of 1-3 bytes, and a `Vec::push` per byte (capacity check, length
    /// stored back through the reference) made encoding ~5% of a 100,000-point grid's worker
    /// time; here the position stays in a register.
    pub struct Writer<'a> {
        out: &'a mut Vec<u8>,
        buf: [u8; BUF],
        len: usize,
    }

    impl<'a> Writer<'a> {
        pub fn new(out: &'a mut Vec<u8>) -> Writer<'a> {
            Writer {
                out,
                buf: [0; BUF],
                len: 0,
            }
        }

        fn flush(&mut self) {
            self.out.extend_from_slice(&self.buf[..self.len]);
            self.len = 0;
        }

        /// Make room for one write of at most [`MAX_WRITE`] bytes.
        #[inline]
        fn room(&mut self) {
            if self.len > BUF - MAX_WRITE {
                self.flush();
            }
        }

        #[inline]
        pub fn byte(&mut self, b: u8) {
            self.room();
            self.buf[self.len] = b;
            self.len += 1;
        }
        /// Why not one loop of `u128` shifts: `Σq²` of fractions is ~2^84, 13 groups of two-word
        /// shifts and compares. A value of 2^64 or more takes at least ten groups, so its nine low
        /// groups (63 bits) are all continued: they are written from one `u64`.
        #[inline]
        pub fn u128(&mut self, mut v: u128) {
            while v > u64::MAX as u128 {
                self.room();
                let mut low = v as u64;
                for _ in 0..9 {
                    self.buf[self.len] = low as u8 | 0x80;
                    low >>= 7;
                    self.len += 1;
                }
                v >>= 63;
            }
            self.u64(v as u64);
        }
        #[inline]
        pub fn u64(&mut self, mut v: u64) {
            self.room();
            let mut i = self.len;
            while v >= 0x80 {
                self.buf[i] = v as u8 | 0x80;
                v >>= 7;
                i += 1;
            }
            self.buf[i] = v as u8;
            self.len = i + 1;
        }
        #[inline]
        pub fn i128(&mut self, v: i128) {
            self.u128(((v << 1) ^ (v >> 127)) as u128);
        }
        #[inline]
        pub fn f64(&mut self, v: f64) {
            self.room();
            self.buf[self.len..self.len + 8].copy_from_slice(&v.to_bits().to_le_bytes());
            self.len += 8;
        }
        pub fn u64s(&mut self, vs: &[u64]) {
            self.u64(vs.len() as u64);
            vs.iter().for_each(|&v| self.u64(v));
        }
        pub fn pairs(&mut self, vs: &[(u64, u64)]) {
            self.u64(vs.len() as u64);
            for &(a, b) in vs {
                self.u64(a);
                self.u64(b);
            }
        }
    }

    impl Drop for Writer<'_> {
        fn drop(&mut self) {
            self.flush();
        }
    }
}

#[cfg(test)]
mod fold_tests {
    use super::*;

    /// A builder fed more than [`FOLD_AT`] values (so it folds several times) gives exactly the
    /// accumulator of the same values bucketed in small pieces and merged, and of the values
    /// recorded one piece per builder: folding changes memory, not results.
    #[test]
    fn folding_gives_the_unfolded_result() {
        let mut x = 0x2545_f491_4f6c_dd1du64;
        let values: Vec<f64> = (0..3 * FOLD_AT + 123)
            .map(|i| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                if i % 997 == 0 {
                    f64::NAN
                } else {
                    (x >> 11) as f64 / (1u64 << 53) as f64
                }
            })
            .collect();
        let mut big = AccBuilder::new(Kind::Fraction);
        for &v in &values {
            big.record(v);
        }
        let folded = big.finish();
        let mut merged = Acc::new(Kind::Fraction);
        for piece in values.chunks(1000) {
            let mut b = AccBuilder::new(Kind::Fraction);
            for &v in piece {
                b.record(v);
            }
            merged.merge(&b.finish());
        }
        assert_eq!(folded, merged);
        assert_eq!(folded.n + folded.missing, values.len() as u64);
        // The builder is empty again and reusable.
        big.record(0.5);
        assert_eq!(big.finish().n, 1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn acc_of(kind: Kind, values: &[f64]) -> Acc {
        let mut b = AccBuilder::new(kind);
        values.iter().for_each(|&v| b.record(v));
        b.finish()
    }

    /// Histogram values at every magnitude: each power of two and its neighbours, runs at the
    /// table's ends, and random values of random bit length.
    fn magnitudes() -> Vec<u64> {
        let mut v: Vec<u64> = (0..5000).collect();
        for e in 0..64 {
            for d in -3i64..=3 {
                v.push((1u64 << e).wrapping_add_signed(d));
            }
        }
        v.extend((1u64 << 25) - 5000..(1u64 << 25) + 5000);
        v.push(u64::MAX);
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        for _ in 0..200_000 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            v.push(x >> (x >> 58)); // 0 to 63 bits
        }
        v
    }

    #[test]
    fn tally_buckets_are_hdrhistograms() {
        let b = buckets();
        let mut v = magnitudes();
        v.sort_unstable();
        v.dedup();
        for w in v.windows(2) {
            let (h, g) = (w[0], w[1]);
            let (i, j) = (Tally::index(h), Tally::index(g));
            assert_eq!(Tally::key(i), b.lowest_equivalent(h), "value {h}");
            // Bucket order is value order, and two values share an index iff they share a key.
            assert!(i <= j, "{h} -> {i}, {g} -> {j}");
            assert_eq!(
                i == j,
                b.lowest_equivalent(h) == b.lowest_equivalent(g),
                "{h}, {g}"
            );
            assert_eq!((i as usize) < TALLY_LEN, h < 1 << 25, "value {h}");
        }
    }

    #[test]
    fn tally_counts_like_the_sort_and_is_left_empty() {
        let all = magnitudes();
        let mut t = Tally::new();
        let mut x = 1u64;
        let mut past = 0;
        for case in 0..300 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let n = (x >> 40) as usize % 3000;
            // Mostly a narrow range (as a chunk's values are), sometimes any magnitude.
            let values: Vec<u64> = (0..n)
                .map(|k| {
                    let r = all[(x as usize ^ k.wrapping_mul(2654435761)) % all.len()];
                    if case % 4 == 0 { r } else { r % 2_000_000 }
                })
                .collect();
            let (mut by_tally, mut by_sort) = (vec![(7, 7)], vec![(7, 7)]);
            let counted = t.count(&values, &mut by_tally);
            hist_by_sort(buckets(), &mut values.clone(), &mut by_sort);
            if counted {
                assert_eq!(by_tally, by_sort, "case {case}");
            } else {
                past += 1;
                assert!(values.iter().any(|&h| h >= 1 << 25), "case {case}");
                assert_eq!(by_tally, vec![(7, 7)], "nothing appended");
            }
            assert!(
                t.counts.iter().all(|&c| c == 0),
                "case {case}: table left dirty"
            );
        }
        assert!(past > 10 && past < 150, "{past} cases past the table");
    }

    /// The quantiles `hdrhistogram` itself gives for the same values.
    fn hdr_quantile(kind: Kind, values: &[f64], q: f64) -> f64 {
        let mut h = Histogram::<u64>::new(HIST_SIGFIG).unwrap();
        for &v in values {
            h.record((v * kind.hist()).round().max(0.0) as u64).unwrap();
        }
        h.value_at_quantile(q) as f64 / kind.hist()
    }

    fn any_acc() -> impl Strategy<Value = Acc> {
        (
            any::<bool>(),
            (any::<u64>(), any::<u64>(), any::<i128>(), any::<i128>()),
            (any::<f64>(), any::<f64>()),
            prop::collection::vec((any::<u64>(), any::<u64>()), 0..20),
        )
            .prop_map(|(count, (n, missing, sum, sumsq), (min, max), hist)| Acc {
                kind: if count { Kind::Count } else { Kind::Fraction },
                n,
                missing,
                sum,
                sumsq,
                min,
                max,
                hist,
            })
    }

    proptest! {
        /// `round_i128` is `f64::round` (halves away from zero) on any finite value, halves,
        /// integers and values around 2^52 included.
        #[test]
        fn round_i128_is_round(
            x in prop_oneof![
                any::<f64>().prop_filter("finite", |x| x.is_finite()),
                (-1e6f64..1e6).prop_map(|x| x.trunc() + 0.5),
                (-4.6e15f64..4.6e15),
                (0u64..1 << 41).prop_map(|k| k as f64 / 1_099_511_627_776.0 * 1e6),
            ]
        ) {
            prop_assert_eq!(round_i128(x), x.round() as i128);
        }

        /// The hand-written encoder is postcard's encoding, byte for byte (so `decode`, which
        /// uses postcard, reads it), on arbitrary field values.
        #[test]
        fn encode_is_postcards_encoding(
            seeds in any::<u64>(), passed in any::<u64>(),
            fails in prop::collection::vec(any::<u64>(), 0..4),
            named in prop::collection::vec(any::<u64>(), 0..3),
            metrics in prop::collection::vec(prop::option::of(any_acc()), 0..6),
            trajectory in prop::collection::vec(any_acc(), 0..6),
            components in prop::collection::vec((any::<u64>(), any::<u64>()), 0..8),
        ) {
            let st = PointStats { seeds, passed, fails, named, metrics, trajectory, components };
            prop_assert_eq!(st.encode(), postcard::to_allocvec(&st).unwrap());
        }

        /// `finish_into` (reusing the previous point's buffers) equals `finish`.
        #[test]
        fn finish_into_reuses_buffers_and_equals_finish(
            points in prop::collection::vec(
                prop::collection::vec((0.0f64..1.0, 0u32..40, any::<bool>()), 0..30), 1..4),
        ) {
            let shape = Shape { metrics: MetricSet::ALL, clauses: 0, named: 0, steps: 3 };
            let (mut a, mut b) = (PointBuilder::new(shape), PointBuilder::new(shape));
            let mut reused = PointStats::new(Shape { metrics: MetricSet::ALL, clauses: 0, named: 0, steps: 1 });
            for caves in &points {
                for &(f, c, nan) in caves {
                    let mut values = cavesweep_core::measure::EMPTY_VALUES;
                    for (i, v) in values.iter_mut().enumerate() {
                        *v = if nan && i % 3 == 0 { f64::NAN } else if i % 2 == 0 { f } else { c as f64 };
                    }
                    let gate = cavesweep_core::query::Gate::default().eval(&values);
                    a.record(&[f, 1.0 - f, f / 2.0], &values, gate);
                    b.record(&[f, 1.0 - f, f / 2.0], &values, gate);
                }
                b.finish_into(&mut reused);
                prop_assert_eq!(&reused, &a.finish());
            }
        }

        #[test]
        fn merge_in_any_split_equals_one_pass(
            values in prop::collection::vec(0.0f64..1.0, 1..300), cut in 0usize..300,
        ) {
            let cut = cut.min(values.len());
            let all = acc_of(Kind::Fraction, &values);
            let (mut a, b) = (acc_of(Kind::Fraction, &values[..cut]), acc_of(Kind::Fraction, &values[cut..]));
            let mut ba = b.clone();
            ba.merge(&a);
            a.merge(&b);
            prop_assert_eq!(&a, &all);
            prop_assert_eq!(&ba, &all);
            prop_assert_eq!(a.summary(), all.summary());
        }

        #[test]
        fn one_walk_gives_the_three_quantiles(
            values in prop::collection::vec(0.0f64..1.0, 1..400), counts in any::<bool>(),
        ) {
            let vals: Vec<f64> = if counts { values.iter().map(|v| (v * 50.0).floor()).collect() } else { values };
            let a = acc_of(if counts { Kind::Count } else { Kind::Fraction }, &vals);
            prop_assert_eq!(a.p05_p50_p95(), [0.05, 0.5, 0.95].map(|q| a.value_at_quantile(q)));
        }

        #[test]
        fn quantiles_equal_hdrhistogram(values in prop::collection::vec(0.0f64..1.0, 1..400)) {
            let a = acc_of(Kind::Fraction, &values);
            let s = a.summary();
            let clamp = |v: f64| v.clamp(s.min, s.max);
            prop_assert_eq!(s.p05, clamp(hdr_quantile(Kind::Fraction, &values, 0.05)));
            prop_assert_eq!(s.p50, clamp(hdr_quantile(Kind::Fraction, &values, 0.5)));
            prop_assert_eq!(s.p95, clamp(hdr_quantile(Kind::Fraction, &values, 0.95)));
        }

        #[test]
        fn summary_matches_direct_computation(values in prop::collection::vec(0u32..500, 2..300)) {
            let vals: Vec<f64> = values.iter().map(|&v| v as f64).collect();
            let s = acc_of(Kind::Count, &vals).summary();
            let n = values.len() as f64;
            let mean = vals.iter().sum::<f64>() / n;
            let var = vals.iter().map(|&v| (v - mean).powi(2)).sum::<f64>() / (n - 1.0);
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

        #[test]
        fn point_stats_round_trip_and_merge_in_any_order(
            caves in prop::collection::vec((0.0f64..1.0, 0u32..40, 0.0f64..1.0), 1..120),
            cut in 0usize..120,
        ) {
            let shape = Shape {
                metrics: MetricSet::EMPTY.with(Metric::FloorFraction).with(Metric::Components),
                clauses: 1,
                named: 2,
                steps: 2,
            };
            let record = |b: &mut PointBuilder, (f, c, w): (f64, u32, f64)| {
                let mut v = cavesweep_core::measure::EMPTY_VALUES;
                v[Metric::FloorFraction.index()] = f;
                v[Metric::Components.index()] = c as f64;
                let failed = (c > 20) as u64;
                let gate = GateResult { failed, pass: failed == 0, named: (c % 4) as u64 };
                b.record(&[w, 1.0 - w], &v, gate);
            };
            let cut = cut.min(caves.len());
            let mut one = PointBuilder::new(shape);
            caves.iter().for_each(|&c| record(&mut one, c));
            let all = one.finish();
            let named = |bit: u32| {
                caves.iter().filter(|&&(_, c, _)| ((c % 4) >> bit) & 1 == 1).count() as u64
            };
            prop_assert_eq!(&all.named, &vec![named(0), named(1)]);
            let mut parts = PointBuilder::new(shape);
            caves[..cut].iter().for_each(|&c| record(&mut parts, c));
            let mut a = parts.finish();
            caves[cut..].iter().for_each(|&c| record(&mut parts, c));
            let b = parts.finish();
            let mut ba = b.clone();
            ba.merge(&a);
            a.merge(&b);
            prop_assert_eq!(&a, &all);
            prop_assert_eq!(&ba, &all);
            let back = PointStats::decode(&all.encode(), shape, caves.len() as u64).unwrap();
            prop_assert_eq!(&back, &all);
            prop_assert!(PointStats::decode(&all.encode(), shape, caves.len() as u64 + 1).is_err());
        }
    }

    #[test]
    fn constant_values_summarise_to_themselves() {
        let v = 839.0 / 1463.0;
        let s = acc_of(Kind::Fraction, &[v; 1000]).summary();
        assert_eq!(
            (s.min, s.max, s.mean, s.p05, s.p50, s.p95),
            (v, v, v, v, v, v)
        );
        assert_eq!(s.sd, 0.0);
    }

    #[test]
    fn nan_is_missing() {
        let a = acc_of(Kind::Count, &[f64::NAN, 3.0]);
        assert_eq!((a.n(), a.missing()), (1, 1));
        assert_eq!(a.summary().mean, 3.0);
        assert!(Acc::new(Kind::Count).summary().mean.is_nan());
    }

    #[test]
    fn damaged_statistics_are_refused() {
        let shape = Shape {
            metrics: MetricSet::EMPTY.with(Metric::Boundary),
            clauses: 1,
            named: 1,
            steps: 1,
        };
        let mut b = PointBuilder::new(shape);
        let mut v = cavesweep_core::measure::EMPTY_VALUES;
        for i in 0..10 {
            v[Metric::Boundary.index()] = i as f64;
            b.record(
                &[0.5],
                &v,
                GateResult {
                    failed: i & 1,
                    pass: i & 1 == 0,
                    named: (i % 3 == 0) as u64,
                },
            );
        }
        let good = b.finish();
        assert!(PointStats::decode(&good.encode(), shape, 10).is_ok());
        let wrong_shape = Shape {
            clauses: 2,
            ..shape
        };
        assert!(PointStats::decode(&good.encode(), wrong_shape, 10).is_err());
        let mut bad = good.clone();
        bad.passed = 11;
        bad.seeds = 10;
        assert!(PointStats::decode(&bad.encode(), shape, 10).is_err());
        assert_eq!(good.named, vec![4]);
        let wrong_named = Shape { named: 2, ..shape };
        assert!(PointStats::decode(&good.encode(), wrong_named, 10).is_err());
        let mut bad = good.clone();
        bad.named[0] = 11;
        assert!(PointStats::decode(&bad.encode(), shape, 10).is_err());
        let mut bad = good.clone();
        bad.trajectory[0].n += 1;
        assert!(PointStats::decode(&bad.encode(), shape, 10).is_err());
        let mut bad = good.clone();
        bad.metrics[Metric::Boundary.index()].as_mut().unwrap().hist[0].1 += 1;
        assert!(PointStats::decode(&bad.encode(), shape, 10).is_err());
        let bytes = good.encode();
        assert!(PointStats::decode(&bytes[..bytes.len() / 2], shape, 10).is_err());
    }

    /// The encoder at the edges of its varints (one more group at every 7th bit, the 63-bit
    /// split of `u128`s, the extremes of `i128` and `u64`) and of its stack buffer (a record many
    /// times its size, appended after other bytes), against postcard.
    #[test]
    fn encode_is_postcards_at_varint_and_buffer_edges() {
        let mut wide: Vec<i128> = vec![0, 1, -1, i128::MAX, i128::MIN];
        for b in 0..127 {
            let p = 1i128 << b;
            wide.extend([p - 1, p, p + 1, -p, -p - 1, -p + 1]);
        }
        let mut narrow: Vec<u64> = vec![u64::MAX];
        for b in 0..64 {
            let p = 1u64 << b;
            narrow.extend([p - 1, p, p.wrapping_add(1)]);
        }
        let (w, n) = (wide.len(), narrow.len());
        let acc = |i: usize| Acc {
            kind: if i.is_multiple_of(2) {
                Kind::Fraction
            } else {
                Kind::Count
            },
            n: narrow[i % n],
            missing: narrow[(i * 7 + 1) % n],
            sum: wide[i % w],
            sumsq: wide[(i * 5 + 3) % w],
            min: f64::from_bits(narrow[(i * 3) % n]),
            max: -(i as f64),
            hist: (0..i % 300)
                .map(|j| (narrow[j % n], narrow[(j * 3 + i) % n]))
                .collect(),
        };
        let st = PointStats {
            seeds: u64::MAX,
            passed: 1 << 63,
            fails: narrow.clone(),
            named: vec![0, 127, 128],
            metrics: (0..6).map(|i| (i != 2).then(|| acc(i))).collect(),
            trajectory: (0..w).map(acc).collect(),
            components: narrow.iter().map(|&v| (v, !v)).collect(),
        };
        let want = postcard::to_allocvec(&st).unwrap();
        assert!(want.len() > 100 * 2048, "{} bytes", want.len());
        assert_eq!(st.encode(), want);
        let mut out = b"before".to_vec();
        st.encode_into(&mut out);
        assert_eq!(&out[..6], b"before");
        assert_eq!(&out[6..], &want[..]);
    }
}
