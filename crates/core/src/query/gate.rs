//! Gates for sweeps: the unnamed gate (`--gate EXPR`, several flags ANDed) that decides
//! `passed`, plus named gates (`--gate NAME=EXPR`) that are evaluated alongside it.
//!
//! All expressions of a [`Gate`] share one table of distinct clauses, so a clause written in
//! several places (or twice in one expression) is one clause with one failure column. A sweep
//! evaluates every clause of every cave ([`Gate::eval`]): it needs each clause's failure count
//! anyway, so nothing is short-circuited here (that is [`super::QueryPlan`]'s job).

use std::fmt;
use std::str::FromStr;

use super::ast::{Clause, Expr};
use super::parse::{QueryError, parse, split_named};
use crate::measure::{Metric, MetricSet, Values};

/// Most distinct clauses one gate may hold (failure bits live in a `u64`).
pub const MAX_CLAUSES: usize = 64;
/// Most named gates one sweep may define (pass bits live in a `u64`).
pub const MAX_NAMED: usize = 64;

/// An expression tree whose leaves index a clause table.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Node {
    Leaf(usize),
    Not(Box<Node>),
    And(Vec<Node>),
    Or(Vec<Node>),
}

impl Node {
    /// Compile `e` against `table`, adding its clauses not yet there.
    pub(crate) fn intern(e: &Expr, table: &mut Vec<Clause>) -> Node {
        match e {
            Expr::Cmp(c) => Node::Leaf(match table.iter().position(|t| t.same(c)) {
                Some(i) => i,
                None => {
                    table.push(*c);
                    table.len() - 1
                }
            }),
            Expr::Not(x) => Node::Not(Box::new(Node::intern(x, table))),
            Expr::And(k) => Node::And(k.iter().map(|x| Node::intern(x, table)).collect()),
            Expr::Or(k) => Node::Or(k.iter().map(|x| Node::intern(x, table)).collect()),
        }
    }

    /// Evaluate left to right with short-circuit `&&`/`||`; `leaf(i)` decides clause `i`.
    #[inline]
    pub(crate) fn eval(&self, leaf: &mut impl FnMut(usize) -> bool) -> bool {
        match self {
            Node::Leaf(i) => leaf(*i),
            Node::Not(x) => !x.eval(leaf),
            Node::And(k) => k.iter().all(|x| x.eval(leaf)),
            Node::Or(k) => k.iter().any(|x| x.eval(leaf)),
        }
    }

    /// Evaluate from clause results already known (bit `i` of `held` = clause `i` held).
    fn eval_bits(&self, held: u64) -> bool {
        self.eval(&mut |i| held >> i & 1 == 1)
    }
}

/// One `--gate` argument: an expression, named (`NAME=EXPR`) or not.
#[derive(Debug, Clone, PartialEq)]
pub struct GateArg {
    /// The gate's name (`NAME` of `NAME=EXPR`: letters, digits, `_` and `-`, not a metric
    /// name); `None` for an unnamed argument, which [`Gate::new`] ANDs into the unnamed gate.
    pub name: Option<String>,
    /// The parsed query the gate tests each cave with.
    pub expr: Expr,
}

impl FromStr for GateArg {
    type Err = QueryError;
    /// `EXPR` or `NAME=EXPR`. A NAME that is a metric (`components=3`) is read as a mistyped
    /// `==` and reported as such.
    fn from_str(s: &str) -> Result<GateArg, QueryError> {
        if let Some((name, body, before)) = split_named(s)
            && !Metric::ALL.iter().any(|m| m.name() == name)
        {
            let expr = parse(body).map_err(|mut e| {
                e.query = s.to_string();
                if e.column > 0 {
                    e.column += before;
                }
                e
            })?;
            return Ok(GateArg {
                name: Some(name.to_string()),
                expr,
            });
        }
        Ok(GateArg {
            name: None,
            expr: parse(s)?,
        })
    }
}

impl fmt::Display for GateArg {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.name {
            Some(n) => write!(f, "{n}={}", self.expr),
            None => write!(f, "{}", self.expr),
        }
    }
}

/// A sweep's gates: the unnamed gate (the AND of every unnamed `--gate`; none = every cave
/// passes) and the named gates, over one shared table of distinct clauses.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Gate {
    main: Option<Expr>,
    named: Vec<(String, Expr)>,
    clauses: Vec<Clause>,
    main_node: Option<Node>,
    named_nodes: Vec<Node>,
}

/// What [`Gate::eval`] found for one cave.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct GateResult {
    /// Bit `i` set: clause `i` of [`Gate::clauses`] was false. With `||` and `!` a cave can
    /// pass with false clauses, and fail with none false (`!(components<=3)`).
    pub failed: u64,
    /// The unnamed gate held (true when there is none).
    pub pass: bool,
    /// Bit `j` set: named gate `j` held.
    pub named: u64,
}

impl GateResult {
    /// The unnamed gate held.
    pub fn pass(self) -> bool {
        self.pass
    }
    /// Clause `i` was false.
    pub fn failed(self, i: usize) -> bool {
        i < 64 && self.failed >> i & 1 == 1
    }
    /// Named gate `j` held.
    pub fn named_pass(self, j: usize) -> bool {
        j < 64 && self.named >> j & 1 == 1
    }
}

impl Gate {
    /// The gate of several `--gate` arguments: unnamed ones ANDed (in order), named ones kept
    /// in order. Errors on a repeated name or too many clauses / named gates.
    pub fn new(args: impl IntoIterator<Item = GateArg>) -> Result<Gate, QueryError> {
        let mut main = Vec::new();
        let mut named: Vec<(String, Expr)> = Vec::new();
        for a in args {
            match a.name {
                None => main.push(a.expr),
                Some(n) => {
                    if named.iter().any(|(m, _)| *m == n) {
                        return Err(QueryError::at(
                            &format!("{n}={}", a.expr),
                            0,
                            format!("named gate {n:?} is defined twice"),
                        ));
                    }
                    named.push((n, a.expr));
                }
            }
        }
        Gate::build(Expr::and_all(main), named)
    }

    fn build(main: Option<Expr>, named: Vec<(String, Expr)>) -> Result<Gate, QueryError> {
        if named.len() > MAX_NAMED {
            return Err(QueryError::at(
                "",
                0,
                format!(
                    "{} named gates; at most {MAX_NAMED} are supported",
                    named.len()
                ),
            ));
        }
        let mut clauses = Vec::new();
        let main_node = main.as_ref().map(|e| Node::intern(e, &mut clauses));
        let named_nodes = named
            .iter()
            .map(|(_, e)| Node::intern(e, &mut clauses))
            .collect();
        if clauses.len() > MAX_CLAUSES {
            let all = main
                .iter()
                .map(|e| e.to_string())
                .chain(named.iter().map(|(n, e)| format!("{n}={e}")))
                .collect::<Vec<_>>()
                .join(" ; ");
            return Err(QueryError::at(
                &all,
                0,
                format!(
                    "{} distinct clauses; at most {MAX_CLAUSES} are supported",
                    clauses.len()
                ),
            ));
        }
        Ok(Gate {
            main,
            named,
            clauses,
            main_node,
            named_nodes,
        })
    }

    /// The combination of several gates (unnamed parts ANDed, named gates concatenated).
    pub fn all(gates: &[Gate]) -> Result<Gate, QueryError> {
        Gate::new(gates.iter().flat_map(Gate::args))
    }

    /// The unnamed gate's expression (`None`: every cave passes).
    pub fn expr(&self) -> Option<&Expr> {
        self.main.as_ref()
    }

    /// The named gates, in definition order (the order of their columns).
    pub fn named(&self) -> &[(String, Expr)] {
        &self.named
    }

    /// The distinct clauses of every expression, in order of first appearance (the unnamed
    /// gate's first): one failure column each.
    pub fn clauses(&self) -> &[Clause] {
        &self.clauses
    }

    /// The metrics the clauses read (so the caller can compute just those).
    pub fn metrics(&self) -> MetricSet {
        self.clauses.iter().map(|c| c.metric).collect()
    }

    /// The `--gate` arguments that rebuild this gate (canonical text).
    pub fn args(&self) -> Vec<GateArg> {
        self.main
            .iter()
            .map(|e| GateArg {
                name: None,
                expr: e.clone(),
            })
            .chain(self.named.iter().map(|(n, e)| GateArg {
                name: Some(n.clone()),
                expr: e.clone(),
            }))
            .collect()
    }

    /// Evaluate every clause and every gate on one cave's values.
    pub fn eval(&self, v: &Values) -> GateResult {
        let mut held = 0u64;
        for (i, c) in self.clauses.iter().enumerate() {
            held |= (c.holds(v) as u64) << i;
        }
        let n = self.clauses.len();
        let mask = if n == 64 { !0 } else { (1u64 << n) - 1 };
        let mut named = 0u64;
        for (j, node) in self.named_nodes.iter().enumerate() {
            named |= (node.eval_bits(held) as u64) << j;
        }
        GateResult {
            failed: !held & mask,
            pass: self.main_node.as_ref().is_none_or(|n| n.eval_bits(held)),
            named,
        }
    }
}

impl FromStr for Gate {
    type Err = QueryError;
    /// One `--gate` argument (`EXPR` or `NAME=EXPR`).
    fn from_str(s: &str) -> Result<Gate, QueryError> {
        Gate::new([s.parse::<GateArg>()?])
    }
}

/// The unnamed gate's canonical text (empty when there is none). Named gates are not part of
/// it: [`Gate::args`] lists every argument.
impl fmt::Display for Gate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.main {
            Some(e) => write!(f, "{e}"),
            None => Ok(()),
        }
    }
}
