//! The seed-search figures of `cavesweep bench --search`: how close a search that rejects
//! most caves by a popcount comes to generating alone, measured side by side in one run.
//!
//! Every figure is given twice: seeds per wall-clock second (what a user sees on a quiet
//! machine) and seeds per CPU-second of the process (all threads; steadier when the machine is
//! shared, since time spent descheduled does not count).

use std::hint::black_box;
use std::ops::{ControlFlow, Range};
use std::sync::atomic::AtomicBool;
use std::time::Instant;

use crate::fanout;
use crate::search::{self, Match, Mode, Search, SearchError, SearchSpec, Seeds, Sink};
use cavesweep_core::generate::Generator;
use cavesweep_core::measure::{Metric, MetricSet};
use cavesweep_core::recipe::{Recipe, RecipeError};

use super::Spread;

/// CPU time used so far by this process (all threads), in seconds.
pub fn process_cpu_seconds() -> f64 {
    let mut t = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes one timespec we own.
    let ok = unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut t) } == 0;
    if ok {
        t.tv_sec as f64 + t.tv_nsec as f64 * 1e-9
    } else {
        f64::NAN
    }
}

/// A throughput measured both ways: per wall-clock second and per CPU-second.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rate {
    /// Items per wall-clock second.
    pub wall: f64,
    /// Items per CPU-second of the whole process (all threads); NaN if the CPU clock could not
    /// be read.
    pub cpu: f64,
}

impl Rate {
    /// `n` items over the time since `(wall, cpu)` was taken.
    pub fn since(n: u64, wall: Instant, cpu: f64) -> Rate {
        Rate {
            wall: n as f64 / wall.elapsed().as_secs_f64(),
            cpu: n as f64 / (process_cpu_seconds() - cpu),
        }
    }
}

/// Wall and CPU spreads of repeated rates.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rates {
    /// Spread of the per-wall-clock-second rates.
    pub wall: Spread,
    /// Spread of the per-CPU-second rates.
    pub cpu: Spread,
}

impl Rates {
    /// Median, minimum and maximum of `v`, wall and CPU separately. Panics if `v` is empty.
    pub fn of(v: &[Rate]) -> Rates {
        Rates {
            wall: Spread::of(v.iter().map(|r| r.wall).collect()),
            cpu: Spread::of(v.iter().map(|r| r.cpu).collect()),
        }
    }
}

/// Caves per second of generation alone (fill, passes, post-steps; no metric), on `threads`
/// threads, with the search's own chunking and fan-out: the ceiling of any search.
pub fn generation_rate(
    recipe: &Recipe,
    seeds: Range<u64>,
    threads: usize,
) -> Result<Rate, RecipeError> {
    Generator::new(recipe, MetricSet::EMPTY)?;
    let n = seeds.end - seeds.start;
    let chunk = search::default_chunk(n);
    let (start, cpu) = (Instant::now(), process_cpu_seconds());
    let stop = AtomicBool::new(false);
    fanout::run::<_, _, _, fanout::ThreadsError>(
        threads,
        &stop,
        0..n.div_ceil(chunk),
        || Generator::new(recipe, MetricSet::EMPTY).expect("validated"),
        |g, id| {
            let lo = seeds.start + id * chunk;
            let hi = (lo + chunk).min(seeds.end);
            let _ = g
                .generate(lo..hi, |cave| {
                    black_box(&cave.trajectory);
                    ControlFlow::Continue(())
                })
                .expect("validated");
            Some(())
        },
        |()| Ok(ControlFlow::Continue(())),
    )
    .map_err(|e| RecipeError::Key {
        key: "--threads".into(),
        msg: e.to_string(),
    })?;
    Ok(Rate::since(n, start, cpu))
}

/// A sink that counts rows.
struct Count(u64);
impl Sink for Count {
    fn rows(&mut self, rows: &[Match]) -> Result<(), SearchError> {
        self.0 += rows.len() as u64;
        Ok(())
    }
}

/// Seeds per second of a prepared search on `threads` threads (rows counted, not written).
pub fn search_rate(s: &Search, threads: usize) -> Result<Rate, SearchError> {
    let (start, cpu) = (Instant::now(), process_cpu_seconds());
    let r = s.run(threads, &AtomicBool::new(false), &[], &mut Count(0))?;
    Ok(Rate::since(r.examined, start, cpu))
}

/// The rejecting-search figure for one recipe.
#[derive(Debug, Clone)]
pub struct RejectBench {
    /// The recipe's name (a preset's name when it came from one).
    pub preset: String,
    /// Threads every figure ran on.
    pub threads: usize,
    /// Seeds per measurement: each run covers `0..seeds`.
    pub seeds: u64,
    /// The query: `floor_fraction>=T && ...` with T the 95th percentile on a sample.
    pub query: String,
    /// Share of the calibration sample the first clause rejects.
    pub rejected: f64,
    /// Generation alone (no metric, no query): the ceiling of any search.
    pub generation: Rates,
    /// The search with the whole `query`.
    pub search: Rates,
    /// The first clause alone (`floor_fraction>=T`): what rejecting costs, without the clauses
    /// the passing caves go on to (their flood fills are the rest of the gap).
    pub first_only: Rates,
}

impl RejectBench {
    /// Search rate / generation rate (medians, wall clock).
    pub fn ratio(&self) -> f64 {
        self.search.wall.median / self.generation.wall.median
    }
    /// The same per CPU-second.
    pub fn cpu_ratio(&self) -> f64 {
        self.search.cpu.median / self.generation.cpu.median
    }
    /// The first clause alone / generation (medians: wall clock, CPU).
    pub fn first_only_ratios(&self) -> (f64, f64) {
        (
            self.first_only.wall.median / self.generation.wall.median,
            self.first_only.cpu.median / self.generation.cpu.median,
        )
    }
}

/// Measure generation alone and a search whose first clause (a fraction) rejects about 95% of
/// caves, alternately, `repeats` times each over `seeds` seeds.
pub fn reject_bench(
    recipe: &Recipe,
    threads: usize,
    seeds: u64,
    repeats: usize,
) -> Result<RejectBench, SearchError> {
    // The threshold: the 95th percentile of floor_fraction over 2000 caves past the bench seeds.
    let mut g = Generator::new(recipe, MetricSet::EMPTY.with(Metric::FloorFraction))?;
    let mut floor: Vec<f64> = (0..2000)
        .map(|i| g.run(u64::MAX / 2 + i).expect("validated").values[Metric::FloorFraction.index()])
        .collect();
    floor.sort_by(f64::total_cmp);
    let t = floor[floor.len() * 95 / 100];
    let first = format!("floor_fraction>={t}");
    let query = format!("{first} && components<=2 && min_width>=2");
    let search = |q: &str| {
        Search::new(SearchSpec {
            recipe: recipe.clone(),
            query: q.parse().expect("valid query"),
            seeds: Seeds::Range(0..seeds),
            mode: Mode::All,
            extra: MetricSet::EMPTY,
            chunk: None,
            png: None,
            save: None,
        })
    };
    let s = search(&query)?;
    let s1 = search(&first)?;
    let rejected = 1.0 - s.plan().order()[0].pass_rate.unwrap_or(f64::NAN);
    let (mut gen_rates, mut search_rates, mut first_rates) = (vec![], vec![], vec![]);
    // Interleaved, the order rotating each repeat, so drift on a shared machine does not
    // favour one figure.
    for r in 0..repeats.max(1) {
        for k in 0..3 {
            match (r + k) % 3 {
                0 => gen_rates.push(generation_rate(recipe, 0..seeds, threads)?),
                1 => search_rates.push(search_rate(&s, threads)?),
                _ => first_rates.push(search_rate(&s1, threads)?),
            }
        }
    }
    Ok(RejectBench {
        preset: recipe.name.clone(),
        threads,
        seeds,
        query: s.plan().ordered_expr().to_string(),
        rejected,
        generation: Rates::of(&gen_rates),
        search: Rates::of(&search_rates),
        first_only: Rates::of(&first_rates),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reject_bench_runs() {
        let r = cavesweep_core::presets::preset("chapter-strict").unwrap();
        let b = reject_bench(&r, 2, 3000, 1).unwrap();
        assert!(b.generation.wall.median > 0.0 && b.search.cpu.median > 0.0);
        assert!(b.ratio() > 0.0 && b.cpu_ratio() > 0.0);
        assert!(b.first_only_ratios().0 > 0.0 && b.first_only.cpu.median > 0.0);
        assert!(b.rejected > 0.8, "{}", b.rejected);
        assert!(b.query.starts_with("floor_fraction>="), "{}", b.query);
    }
}
