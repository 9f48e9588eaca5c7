//! Dev probe for the cost of a search's survivors (the caves a first clause lets through):
//! generation alone and a search of the same seeds on one worker thread, alternately, CPU time
//! of the process (all threads: the worker and the collector) per cave, best of the repeats.
//! The difference over the search's survivors of the first clause is what one survivor costs.
//! Usage: `search_probe [QUERY] [SEEDS] [REPEATS]`; the default query is `cavesweep bench
//! --search`'s on chapter-strict.
use cavesweep::benchmark::search::{generation_rate, search_rate};
use cavesweep::measure::MetricSet;
use cavesweep::presets::preset;
use cavesweep::search::{Mode, Search, SearchSpec, Seeds};

fn main() {
    let mut args = std::env::args().skip(1);
    let query = args
        .next()
        .unwrap_or("floor_fraction>=0.9295238095238095 && min_width>=2 && components<=2".into());
    let n: u64 = args.next().map_or(200_000, |s| s.parse().unwrap());
    let repeats: usize = args.next().map_or(7, |s| s.parse().unwrap());
    let r = preset("chapter-strict").unwrap();
    let s = Search::new(SearchSpec {
        recipe: r.clone(),
        query: query.parse().unwrap(),
        seeds: Seeds::Range(0..n),
        mode: Mode::All,
        extra: MetricSet::EMPTY,
        chunk: None,
        png: None,
        save: None,
    })
    .unwrap();
    let pass = s.plan().order()[0].pass_rate.unwrap_or(f64::NAN);
    let (mut gen_best, mut search_best) = (f64::INFINITY, f64::INFINITY);
    for _ in 0..repeats {
        let g = generation_rate(&r, 0..n, 1).unwrap();
        gen_best = gen_best.min(1e6 / g.cpu);
        let q = search_rate(&s, 1).unwrap();
        search_best = search_best.min(1e6 / q.cpu);
    }
    println!("query: {query}");
    println!(
        "generation {gen_best:.3} us/cave, search {search_best:.3} us/cave (process CPU, 1 worker, best of {repeats} x {n}): ratio {:.3}",
        gen_best / search_best
    );
    println!(
        "first clause passes {:.1}% of the sample: {:.2} us per survivor beyond generation",
        pass * 100.0,
        (search_best - gen_best) / pass
    );
}
