//! Engine tests in process: results against a brute force over `Generator::run`, chunk
//! records handed back as a resumed run's `prior`, the stop flag, seed lists.

use std::sync::atomic::AtomicBool;

use super::*;
use cavesweep_core::presets::preset;

#[derive(Default)]
struct VecSink {
    rows: Vec<Match>,
    chunks: Vec<ChunkRecord>,
    calls: usize,
}

impl Sink for VecSink {
    fn rows(&mut self, rows: &[Match]) -> Result<(), SearchError> {
        self.rows.extend_from_slice(rows);
        self.calls += 1;
        Ok(())
    }
    fn chunk(&mut self, r: &ChunkRecord) -> Result<(), SearchError> {
        self.chunks.push(r.clone());
        Ok(())
    }
}

fn recipe() -> Recipe {
    let mut r = preset("classic-4-5").unwrap();
    r.set_kv("rows=40").unwrap();
    r.set_kv("cols=60").unwrap();
    r.set_kv("exit=2,2").unwrap();
    r
}

fn spec(query: &str, seeds: Seeds, mode: Mode, chunk: u64) -> SearchSpec {
    SearchSpec {
        recipe: recipe(),
        query: query.parse().unwrap(),
        seeds,
        mode,
        extra: MetricSet::ALL,
        chunk: Some(chunk),
        png: None,
        save: None,
    }
}

fn run_search(s: &Search, threads: usize, prior: &[ChunkRecord]) -> (SearchSummary, VecSink) {
    let mut sink = VecSink::default();
    let r = s
        .run(threads, &AtomicBool::new(false), prior, &mut sink)
        .unwrap();
    (r, sink)
}

/// Every cave of `seeds`, fully measured, filtered by the query.
fn brute(query: &str, seeds: impl Iterator<Item = u64>) -> Vec<Match> {
    let q: Expr = query.parse().unwrap();
    let mut g = Generator::new(&recipe(), MetricSet::ALL).unwrap();
    seeds
        .filter_map(|seed| {
            let cave = g.run(seed).unwrap();
            q.eval(cave.values).then_some(Match {
                seed,
                values: *cave.values,
            })
        })
        .collect()
}

/// A validated, calibrated search of `spec(query, seeds, mode, chunk)`.
fn search(query: &str, seeds: Seeds, mode: Mode, chunk: u64) -> Search {
    Search::new(spec(query, seeds, mode, chunk)).unwrap()
}

/// `matches` sorted as `--top` ranks them by `by` (empty values last, ties by lower seed).
fn ranked(matches: &[Match], by: Metric, order: Order) -> Vec<Match> {
    let mut v = matches.to_vec();
    v.sort_by(|a, b| {
        let (x, y) = (a.values[by.index()], b.values[by.index()]);
        let best = if order == Order::Asc {
            x.partial_cmp(&y)
        } else {
            y.partial_cmp(&x)
        };
        x.is_nan()
            .cmp(&y.is_nan())
            .then(best.unwrap_or(CmpOrdering::Equal))
            .then(a.seed.cmp(&b.seed))
    });
    v
}

fn same(a: &[Match], b: &[Match]) -> bool {
    a.len() == b.len()
        && a.iter().zip(b).all(|(x, y)| {
            x.seed == y.seed
                && x.values
                    .iter()
                    .zip(&y.values)
                    .all(|(p, q)| p == q || (p.is_nan() && q.is_nan()))
        })
}

const QUERY: &str = "components>=3 && !(path_length<50)";

#[test]
fn all_limit_and_top_match_brute_force() {
    let want = brute(QUERY, 100..900);
    assert!(want.len() > 20 && want.len() < 700, "{}", want.len());
    for (threads, chunk) in [(1, 64), (2, 5), (3, 1)] {
        let s = search(QUERY, Seeds::Range(100..900), Mode::All, chunk);
        let (r, sink) = run_search(&s, threads, &[]);
        assert!(same(&sink.rows, &want), "threads {threads} chunk {chunk}");
        assert_eq!(
            (r.outcome, r.examined, r.rows),
            (Outcome::Complete, 800, want.len() as u64)
        );
        for n in [1, 3, 40] {
            // A range far longer than the matches need: stopping must save most of it (how
            // far workers run ahead of the collector depends on timing, so the margin is wide).
            let long = 100..200_000;
            let s = search(QUERY, Seeds::Range(long.clone()), Mode::Limit(n), chunk);
            let (r, sink) = run_search(&s, threads, &[]);
            assert!(same(&sink.rows, &want[..n as usize]), "limit {n}");
            assert!(
                r.examined < (long.end - long.start) / 2,
                "--limit {n} did not stop early ({} examined)",
                r.examined
            );
        }
        let by = Metric::PathLength;
        let s = search(
            QUERY,
            Seeds::Range(100..900),
            Mode::Top {
                k: 7,
                by,
                order: Order::Asc,
            },
            chunk,
        );
        let (_, sink) = run_search(&s, threads, &[]);
        assert!(same(&sink.rows, &ranked(&want, by, Order::Asc)[..7]));
        assert_eq!(sink.calls, 1, "--top writes once, at the end");
    }
}

#[test]
fn prior_chunks_are_not_rerun_and_give_the_same_rows() {
    let s = search(QUERY, Seeds::Range(0..640), Mode::All, 64);
    let (_, full) = run_search(&s, 2, &[]);
    assert_eq!(full.chunks.len(), 10);
    // A resumed run that already has chunks 0, 1, 2 and 7.
    let prior: Vec<ChunkRecord> = full
        .chunks
        .iter()
        .filter(|c| [0, 1, 2, 7].contains(&c.id))
        .cloned()
        .collect();
    let (r, resumed) = run_search(&s, 2, &prior);
    assert!(same(&resumed.rows, &full.rows));
    assert_eq!(r.examined, 6 * 64);
    let mut ids: Vec<u64> = resumed.chunks.iter().map(|c| c.id).collect();
    ids.sort();
    assert_eq!(ids, [3, 4, 5, 6, 8, 9]);
    // Everything prior: nothing runs.
    let (r, again) = run_search(&s, 2, &full.chunks);
    assert!(same(&again.rows, &full.rows) && r.examined == 0);
    // With --limit, prior chunks count toward N.
    let s = search(QUERY, Seeds::Range(0..640), Mode::Limit(5), 64);
    let (_, lim) = run_search(&s, 1, &full.chunks[..0]);
    let (r, lim2) = run_search(&s, 1, &lim.chunks);
    assert!(same(&lim.rows, &lim2.rows) && r.examined == 0);
    // With --top, prior chunks' best K join the heap.
    let mode = Mode::Top {
        k: 5,
        by: Metric::Boundary,
        order: Order::Desc,
    };
    let s = search(QUERY, Seeds::Range(0..640), mode, 64);
    let (_, top) = run_search(&s, 2, &[]);
    let prior: Vec<ChunkRecord> = top
        .chunks
        .iter()
        .filter(|c| c.id % 2 == 0)
        .cloned()
        .collect();
    let (r, top2) = run_search(&s, 2, &prior);
    assert!(same(&top.rows, &top2.rows) && r.examined == 5 * 64);
    assert_eq!(top.rows.len(), 5);
}

#[test]
fn stop_flag_interrupts_with_the_finished_rows() {
    let s = search(QUERY, Seeds::Range(0..100_000), Mode::All, 64);
    let mut sink = VecSink::default();
    let r = s.run(2, &AtomicBool::new(true), &[], &mut sink).unwrap();
    assert_eq!(r.outcome, Outcome::Interrupted);
    assert_eq!((r.examined, r.rows), (0, 0));
}

#[test]
fn seed_lists_group_into_runs() {
    let l = Seeds::list(vec![9, 3, 4, 5, 3, 20, 21, u64::MAX - 1]).unwrap();
    assert_eq!(l.len(), 7);
    assert_eq!(l.first(5), [3..6, 9..10, 20..21]);
    let mut out = vec![];
    l.runs(4, 7, &mut out);
    assert_eq!(out, [20..22, u64::MAX - 1..u64::MAX]);
    assert!(Seeds::list(vec![u64::MAX]).is_err());
    let r = Seeds::Range(u64::MAX - 615..u64::MAX);
    assert_eq!(r.len(), 615);
    assert_eq!(r.first(1000), vec![(u64::MAX - 615)..u64::MAX]);
    // A list search equals the range search restricted to the list.
    let seeds: Vec<u64> = (0..400).filter(|s| s % 3 != 1).collect();
    let want = brute(QUERY, seeds.iter().copied());
    let s = search(QUERY, Seeds::list(seeds).unwrap(), Mode::All, 16);
    let (_, sink) = run_search(&s, 2, &[]);
    assert!(same(&sink.rows, &want));
}

#[test]
fn explain_names_every_clause_with_cost_and_rate() {
    let s = search(
        "path_length<70 && floor_fraction>=0.7 && path_length<70",
        Seeds::Range(0..300),
        Mode::All,
        64,
    );
    let e = s.explain();
    assert!(
        e.contains("evaluation order: floor_fraction>=0.7 && path_length<70"),
        "{e}"
    );
    let lines: Vec<&str> = e
        .lines()
        .filter(|l| l.contains("ns/cave") || l.starts_with("  "))
        .collect();
    assert!(
        lines.iter().any(|l| l.contains("1  floor_fraction>=0.7")),
        "{e}"
    );
    assert!(lines.iter().any(|l| l.contains("2  path_length<70")), "{e}");
    assert_eq!(
        s.plan().order().len(),
        2,
        "a clause given twice is one clause"
    );
    let c = s.calibration();
    assert!(c.gen_ns > 0.0 && c.sample.len() == 256);
    assert!(c.costs.of(Metric::PathLength) > c.costs.of(Metric::FloorFraction));
}

/// A scratch folder for checkpoint tests: removed first, and again when dropped (a passing or
/// failing test leaves nothing behind in the temp folder).
struct ScratchDir(std::path::PathBuf);

impl std::ops::Deref for ScratchDir {
    type Target = std::path::Path;
    fn deref(&self) -> &std::path::Path {
        &self.0
    }
}

impl Drop for ScratchDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn scratch_dir(name: &str) -> ScratchDir {
    let d = std::env::temp_dir().join(format!("cavesweep-unit-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    ScratchDir(d)
}

#[test]
fn checkpoints_give_back_the_finished_chunks_bit_for_bit() {
    // path_length is often empty (NaN) here: NaN must come back as NaN.
    let q = "components>=2 || path_length<30";
    for mode in [
        Mode::All,
        Mode::Limit(7),
        Mode::Top {
            k: 4,
            by: Metric::PathLength,
            order: Order::Asc,
        },
    ] {
        let s = search(q, Seeds::Range(0..700), mode, 64);
        let (_, full) = run_search(&s, 2, &[]);
        let dir = scratch_dir(&format!("ck-{mode:?}").replace([' ', '{', '}', ':', ','], ""));
        let (mut ck, prior) = Checkpoint::open(&s, &dir, "test", false).unwrap();
        assert!(prior.is_empty());
        let mut kept: Vec<&ChunkRecord> = full.chunks.iter().filter(|c| c.id != 2).collect();
        kept.sort_by_key(|c| c.id);
        for c in &kept {
            ck.record(c).unwrap();
        }
        ck.save().unwrap();
        drop(ck);
        let (ck, mut prior) = Checkpoint::open(&s, &dir, "test", false).unwrap();
        assert_eq!(ck.resumed(), (kept.len() as u64, 0));
        prior.sort_by_key(|c| c.id);
        assert_eq!(prior.len(), kept.len());
        for (a, b) in prior.iter().zip(&kept) {
            assert_eq!((a.id, a.examined), (b.id, b.examined));
            assert!(same(&a.matches, &b.matches), "chunk {}", a.id);
        }
        // Resuming from them gives the rows of the uninterrupted run.
        let (r, resumed) = run_search(&s, 1, &prior);
        assert!(same(&resumed.rows, &full.rows), "{mode:?}");
        assert!(r.examined <= 64);
        drop(ck);
        // A different search is refused; the folder is left alone.
        let other = search("components>=3", Seeds::Range(0..700), mode, 64);
        let e = Checkpoint::open(&other, &dir, "test", false).err().unwrap();
        assert!(e.to_string().contains("holds a different search"), "{e}");
        let (ck, _) = Checkpoint::open(&s, &dir, "test", false).unwrap();
        assert_eq!(ck.completed(), None);
        let mark = crate::search::checkpoint::Completed {
            size: 123,
            crc32: 456,
            rows: 7,
        };
        ck.finish(mark).unwrap();
        // Complete: the records are gone, the mark stays; a restart forgets it.
        let (mut ck, prior) = Checkpoint::open(&s, &dir, "test", false).unwrap();
        assert_eq!((ck.completed(), prior.len()), (Some(mark), 0));
        ck.restart().unwrap();
        drop(ck);
        let (ck, prior) = Checkpoint::open(&s, &dir, "test", false).unwrap();
        assert_eq!(
            (ck.completed(), prior.len(), ck.resumed()),
            (None, 0, (0, 0))
        );
    }
}

#[test]
fn damaged_checkpoint_records_are_rerun() {
    let s = search(QUERY, Seeds::Range(0..640), Mode::All, 64);
    let (_, full) = run_search(&s, 2, &[]);
    let with_rows: Vec<u64> = full
        .chunks
        .iter()
        .filter(|c| !c.matches.is_empty())
        .map(|c| c.id)
        .collect();
    assert!(with_rows.len() >= 2);
    let dir = scratch_dir("ck-damaged");
    let (mut ck, _) = Checkpoint::open(&s, &dir, "test", false).unwrap();
    for c in &full.chunks {
        ck.record(c).unwrap();
    }
    ck.save().unwrap();
    drop(ck);
    // Flip a byte of one chunk's rows behind the store's back.
    let conn = rusqlite::Connection::open(dir.join(crate::store::DB_FILE)).unwrap();
    let victim = with_rows[1] as i64;
    conn.execute(
        "UPDATE rows SET data = CAST(zeroblob(length(data)) AS BLOB) WHERE chunk = ?1",
        [victim],
    )
    .unwrap();
    drop(conn);
    let (ck, prior) = Checkpoint::open(&s, &dir, "test", false).unwrap();
    assert_eq!(ck.resumed(), (9, 1));
    assert!(prior.iter().all(|c| c.id != victim as u64));
    let (r, resumed) = run_search(&s, 2, &prior);
    assert_eq!(r.examined, 64);
    assert!(same(&resumed.rows, &full.rows));
    let mark = crate::search::checkpoint::Completed {
        size: 1,
        crc32: 2,
        rows: 3,
    };
    ck.finish(mark).unwrap();
}

/// Survivors of the fractions gathered into lane batches of their own (chosen for queries whose
/// fractions decide most caves) give exactly the rows of measuring each cave where it was made
/// and of the brute force: every mode, 1 and 2 threads, with caves that match on the fractions
/// alone mixed with gathered ones (so the chunk's rows come back out of order and are sorted),
/// on every SIMD path the process can run (the lane measurement itself is checked against the
/// oracle in `measure`).
#[test]
fn gathered_survivors_give_the_same_rows() {
    let mut g = Generator::new(&recipe(), MetricSet::ALL).unwrap();
    let mut floor: Vec<f64> = (0..600)
        .map(|s| g.run(s).unwrap().values[Metric::FloorFraction.index()])
        .collect();
    floor.sort_by(f64::total_cmp);
    let (t80, t95) = (floor[480], floor[570]);
    let queries = [
        format!("floor_fraction>={t80} && min_width>=2"),
        format!("floor_fraction>={t80} && (min_width<=1 || components<=2)"),
        format!("floor_fraction>={t95} || (floor_fraction>={t80} && !(components>=3))"),
        format!(
            "!(floor_fraction<{t80}) && min_width>=1 && path_length>=0 && connected_fraction>0.5"
        ),
        format!(
            "wall_fraction>={} || (floor_fraction>={t80} && min_width>=3)",
            1.0 - floor[60]
        ),
    ];
    let by = Metric::MinWidth;
    for q in &queries {
        let want = brute(q, 0..1200);
        assert!(!want.is_empty() && want.len() < 1000, "{q}: {}", want.len());
        let ranked = ranked(&want, by, Order::Desc);
        for mode in [
            Mode::All,
            Mode::Limit(3),
            Mode::Top {
                k: 5,
                by,
                order: Order::Desc,
            },
        ] {
            let expect = match mode {
                Mode::All => &want[..],
                Mode::Limit(n) => &want[..(n as usize).min(want.len())],
                Mode::Top { k, .. } => &ranked[..(k as usize).min(ranked.len())],
            };
            let mut s = search(q, Seeds::Range(0..1200), mode, 100);
            assert!(s.gathers(), "{q}: the fractions decide most caves");
            for gather in [true, false] {
                s.set_gather(gather);
                for threads in [1, 2] {
                    let (_, sink) = run_search(&s, threads, &[]);
                    assert!(
                        same(&sink.rows, expect),
                        "{q} {mode:?} gather {gather} threads {threads}"
                    );
                }
            }
        }
    }
    // Where most caves need more than the fractions, they are measured where they were made.
    assert!(!search("path_length>=0", Seeds::Range(0..1200), Mode::All, 100).gathers());
}

/// `certainly_empty` never claims a value is empty when it is not (every preset, an exit
/// often on WALL), and `--top` by `path_length` / `reach_depth`, which skips such caves once
/// the chunk's best are full of values, gives the brute force's ranking, 1 and 2 threads,
/// both orders.
#[test]
fn top_skips_only_caves_certainly_empty() {
    for name in cavesweep_core::presets::NAMES {
        let mut r = preset(name).unwrap();
        r.set_kv("rows=30").unwrap();
        r.set_kv("cols=50").unwrap();
        r.set_kv("exit=1,48").unwrap();
        let mut g = Generator::new(&r, MetricSet::ALL).unwrap();
        let cfg = *g.measure_config();
        let mut empty = 0;
        for seed in 0..400 {
            let cave = g.run(seed).unwrap();
            for m in Metric::ALL {
                if certainly_empty(m, &cfg, cave.grid) {
                    empty += 1;
                    assert!(cave.values[m.index()].is_nan(), "{name} seed {seed} {m}");
                }
            }
        }
        assert!(empty > 0, "{name}: the exit is never WALL");
    }
    let mut r = recipe();
    r.set_kv("exit=10,50").unwrap();
    let query = "path_length>=0 || components>=2";
    let q: Expr = query.parse().unwrap();
    let mut g = Generator::new(&r, MetricSet::ALL).unwrap();
    let want: Vec<Match> = (0..1500)
        .filter_map(|seed| {
            let cave = g.run(seed).unwrap();
            q.eval(cave.values).then_some(Match {
                seed,
                values: *cave.values,
            })
        })
        .collect();
    let nan = want
        .iter()
        .filter(|m| m.values[Metric::PathLength.index()].is_nan())
        .count();
    assert!(nan > 20 && nan < want.len() - 20, "{nan} of {}", want.len());
    for by in [Metric::PathLength, Metric::ReachDepth] {
        for order in [Order::Desc, Order::Asc] {
            let expect = ranked(&want, by, order);
            for (k, chunk) in [(3, 100), (9, 400), (40, 64)] {
                let mut sp = spec(
                    query,
                    Seeds::Range(0..1500),
                    Mode::Top { k, by, order },
                    chunk,
                );
                sp.recipe = r.clone();
                let s = Search::new(sp).unwrap();
                for threads in [1, 2] {
                    let (_, sink) = run_search(&s, threads, &[]);
                    assert!(
                        same(&sink.rows, &expect[..k as usize]),
                        "{by} {order:?} k {k} threads {threads}"
                    );
                }
            }
        }
    }
}
