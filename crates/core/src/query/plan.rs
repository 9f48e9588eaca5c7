//! Lazy, cost-ordered evaluation of a query: the heart of `cavesweep search`.
//!
//! A [`QueryPlan`] evaluates a query on one cave asking for a metric only when a clause needs it,
//! through a callback that computes and memoises it ([`crate::generate::Generated::metric`]).
//! `&&` stops at the first false child and `||` at the first true one, so the order of the
//! children decides what is computed. Each `&&`/`||` orders its children by
//!
//! ```text
//! cost / P(the child decides)      (&&: P(false), ||: P(true))
//! ```
//!
//! the classic order that minimises the expected cost of a short-circuit chain of independent
//! tests: cheap, decisive clauses first. `cost` is the measured cost of computing the child's
//! metrics from scratch ([`Costs`], e.g. a popcount for `floor_fraction`, a flood fill for
//! `components`, a BFS for `path_length`); `P` comes from a small sample of fully measured
//! caves, smoothed as `(k + 1) / (n + 2)` so no clause is ever taken to be certain. Order changes
//! only which metrics are computed, never the result: the clauses are pure.
//!
//! Shared work is not modelled (after `connected_fraction`, `components` costs less since the
//! spawn's flood is done); the estimate only orders clauses, and the memo makes sure nothing is
//! computed twice.

use super::ast::{Clause, Expr};
use super::gate::Node;
use crate::measure::{Metric, MetricSet, Stage, Values};

/// Cost in nanoseconds of computing each metric from scratch on one cave (its whole stage
/// chain: a flood needs the floor plane, and so on).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Costs {
    /// Nanoseconds per cave for each metric, indexed by [`Metric::index`].
    pub ns: [f64; Metric::COUNT],
}

impl Costs {
    /// Static estimates for a 90x140 cave (used when nothing was measured); only their order
    /// matters.
    pub fn estimated() -> Costs {
        let mut ns = [0.0; Metric::COUNT];
        for m in Metric::ALL {
            ns[m.index()] = match m.stage() {
                Stage::Count => 40.0,
                Stage::Boundary => 400.0,
                Stage::Spawn => 1500.0,
                Stage::Label => 2500.0,
                Stage::Width => 6000.0,
                Stage::Path => 4000.0,
                Stage::Depth => 5000.0,
                Stage::Plane => 200.0,
            };
        }
        Costs { ns }
    }

    /// Cost of `m` from scratch, ns per cave.
    pub fn of(&self, m: Metric) -> f64 {
        self.ns[m.index()]
    }

    /// Cost of computing every metric of `set` from scratch (sum of their costs: shared stages
    /// are counted once per metric, an overestimate).
    pub fn of_set(&self, set: MetricSet) -> f64 {
        set.iter().map(|m| self.of(m)).sum()
    }
}

/// One clause of a plan as `search --explain` shows it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ClauseInfo {
    /// The clause itself (one entry per distinct clause of the query).
    pub clause: Clause,
    /// Cost of its metric from scratch, ns per cave.
    pub cost_ns: f64,
    /// Share of the sample caves on which the clause holds (`None` without a sample).
    pub pass_rate: Option<f64>,
    /// Share of the sample caves on which the plan evaluates it (`None` without a sample).
    pub reached: Option<f64>,
}

/// A query compiled for lazy, cost-ordered evaluation. See the module docs.
#[derive(Debug, Clone)]
pub struct QueryPlan {
    expr: Expr,
    clauses: Vec<Clause>,
    root: Node,
    order: Vec<ClauseInfo>,
    sample: usize,
    expected_ns: Option<f64>,
}

/// Probability estimate `(k + 1) / (n + 2)` of an event seen `k` times in `n`.
fn smoothed(k: usize, n: usize) -> f64 {
    (k as f64 + 1.0) / (n as f64 + 2.0)
}

impl QueryPlan {
    /// Compile `expr`, ordering `&&`/`||` children by `costs` and by the pass rates observed on
    /// `sample` (caves with every metric of `expr` measured; may be empty).
    pub fn new(expr: &Expr, costs: &Costs, sample: &[Values]) -> QueryPlan {
        let mut clauses = Vec::new();
        let root = Node::intern(expr, &mut clauses);
        let root = reorder(root, &clauses, costs, sample);
        let n = sample.len();
        // Clause order: first visit in a depth-first walk of the ordered tree.
        let mut seen = Vec::new();
        first_visits(&root, &mut seen);
        let mut reached = vec![0usize; clauses.len()];
        let mut spent = 0.0;
        for v in sample {
            let mut touched = MetricSet::EMPTY;
            let mut hit = vec![false; clauses.len()];
            root.eval(&mut |i| {
                hit[i] = true;
                touched.insert(clauses[i].metric);
                clauses[i].holds(v)
            });
            for (r, h) in reached.iter_mut().zip(hit) {
                *r += h as usize;
            }
            spent += costs.of_set(touched);
        }
        let order = seen
            .into_iter()
            .map(|i| {
                let c = clauses[i];
                ClauseInfo {
                    clause: c,
                    cost_ns: costs.of(c.metric),
                    pass_rate: (n > 0)
                        .then(|| sample.iter().filter(|v| c.holds(v)).count() as f64 / n as f64),
                    reached: (n > 0).then(|| reached[i] as f64 / n as f64),
                }
            })
            .collect();
        QueryPlan {
            expr: expr.clone(),
            clauses,
            root,
            order,
            sample: n,
            expected_ns: (n > 0).then(|| spent / n as f64),
        }
    }

    /// Does the cave match? `metric(m)` must return the cave's value of `m` (computing it on
    /// first use and memoising it is the caller's business); it is called only for metrics a
    /// clause needs to decide.
    #[inline]
    pub fn matches(&self, mut metric: impl FnMut(Metric) -> f64) -> bool {
        let clauses = &self.clauses;
        self.root.eval(&mut |i| {
            let c = &clauses[i];
            c.test(metric(c.metric))
        })
    }

    /// The query as given.
    pub fn expr(&self) -> &Expr {
        &self.expr
    }

    /// The distinct clauses in evaluation order, with costs and sample rates.
    pub fn order(&self) -> &[ClauseInfo] {
        &self.order
    }

    /// The query with `&&`/`||` children in evaluation order.
    pub fn ordered_expr(&self) -> Expr {
        fn back(n: &Node, clauses: &[Clause]) -> Expr {
            match n {
                Node::Leaf(i) => Expr::Cmp(clauses[*i]),
                Node::Not(x) => Expr::Not(Box::new(back(x, clauses))),
                Node::And(k) => Expr::And(k.iter().map(|x| back(x, clauses)).collect()),
                Node::Or(k) => Expr::Or(k.iter().map(|x| back(x, clauses)).collect()),
            }
        }
        back(&self.root, &self.clauses)
    }

    /// Metrics the query may read.
    pub fn metrics(&self) -> MetricSet {
        self.expr.metrics()
    }

    /// Caves in the sample the plan was ordered on.
    pub fn sample_size(&self) -> usize {
        self.sample
    }

    /// Mean metric cost per cave on the sample under this order (the sum of the costs of the
    /// metrics each sample cave needed), ns.
    pub fn expected_ns(&self) -> Option<f64> {
        self.expected_ns
    }
}

fn first_visits(n: &Node, out: &mut Vec<usize>) {
    match n {
        Node::Leaf(i) => {
            if !out.contains(i) {
                out.push(*i);
            }
        }
        Node::Not(x) => first_visits(x, out),
        Node::And(k) | Node::Or(k) => k.iter().for_each(|x| first_visits(x, out)),
    }
}

fn node_metrics(n: &Node, clauses: &[Clause], out: &mut MetricSet) {
    match n {
        Node::Leaf(i) => out.insert(clauses[*i].metric),
        Node::Not(x) => node_metrics(x, clauses, out),
        Node::And(k) | Node::Or(k) => k.iter().for_each(|x| node_metrics(x, clauses, out)),
    }
}

/// Order every `&&`/`||` (bottom up) by cost / P(decides). Stable: equal ranks keep the
/// written order.
fn reorder(n: Node, clauses: &[Clause], costs: &Costs, sample: &[Values]) -> Node {
    let rank = |x: &Node, decides_on: bool| {
        let mut ms = MetricSet::EMPTY;
        node_metrics(x, clauses, &mut ms);
        let k = sample
            .iter()
            .filter(|v| x.eval(&mut |i| clauses[i].holds(v)) == decides_on)
            .count();
        costs.of_set(ms) / smoothed(k, sample.len())
    };
    let sorted = |kids: Vec<Node>, decides_on: bool| {
        let mut kids: Vec<(f64, Node)> = kids
            .into_iter()
            .map(|x| {
                let x = reorder(x, clauses, costs, sample);
                (rank(&x, decides_on), x)
            })
            .collect();
        kids.sort_by(|a, b| a.0.total_cmp(&b.0));
        kids.into_iter().map(|(_, x)| x).collect()
    };
    match n {
        Node::Leaf(_) => n,
        Node::Not(x) => Node::Not(Box::new(reorder(*x, clauses, costs, sample))),
        Node::And(k) => Node::And(sorted(k, false)),
        Node::Or(k) => Node::Or(sorted(k, true)),
    }
}
