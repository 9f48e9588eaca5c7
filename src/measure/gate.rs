//! Gates: `floor_fraction>=0.55 && connected_fraction>=0.99 && components<=3`.
//!
//! A gate is a list of clauses `metric op number` joined by `&&`; a cave passes when every clause
//! holds. Each clause's failure is reported separately (a bit per clause in [`GateResult`]) so a
//! sweep can count failures per clause; a clause's `Display` form (`components<=3`) is meant for
//! column names such as `fail[components<=3]`. Several gates given by the caller are ANDed by
//! concatenating their clauses ([`Gate::all`]).
//!
//! A NaN metric (an unreachable path, a metric not computed) fails every comparison except `!=`:
//! IEEE comparison semantics, which is what a "the value must be ..." reading wants.

use std::fmt;
use std::str::FromStr;

use super::{Metric, MetricSet, Values};

/// Most clauses a gate may hold (failure bits live in a `u64`).
pub const MAX_CLAUSES: usize = 64;

/// Why a gate could not be parsed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum GateError {
    #[error("gate {gate:?}: clause {index} is empty")]
    EmptyClause { gate: String, index: usize },
    #[error("gate clause {clause:?}: unknown metric {name:?}; valid metrics: {valid}")]
    UnknownMetric {
        clause: String,
        name: String,
        valid: String,
    },
    #[error(
        "gate clause {clause:?}: missing comparison operator after {metric:?} (use < <= > >= == !=)"
    )]
    MissingOperator { clause: String, metric: String },
    #[error("gate clause {clause:?}: bad operator {found:?} (use < <= > >= == !=)")]
    BadOperator { clause: String, found: String },
    #[error("gate clause {clause:?}: {token:?} is not a number")]
    BadNumber { clause: String, token: String },
    #[error("gate has {0} clauses; at most {MAX_CLAUSES} are supported")]
    TooManyClauses(usize),
}

/// A comparison operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CmpOp {
    Lt,
    Le,
    Gt,
    Ge,
    Eq,
    Ne,
}

impl CmpOp {
    pub fn as_str(self) -> &'static str {
        match self {
            CmpOp::Lt => "<",
            CmpOp::Le => "<=",
            CmpOp::Gt => ">",
            CmpOp::Ge => ">=",
            CmpOp::Eq => "==",
            CmpOp::Ne => "!=",
        }
    }
    /// `a op b` with IEEE semantics (NaN: only `!=` holds).
    pub fn holds(self, a: f64, b: f64) -> bool {
        match self {
            CmpOp::Lt => a < b,
            CmpOp::Le => a <= b,
            CmpOp::Gt => a > b,
            CmpOp::Ge => a >= b,
            CmpOp::Eq => a == b,
            CmpOp::Ne => a != b,
        }
    }
}

/// One `metric op value` comparison.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Clause {
    pub metric: Metric,
    pub op: CmpOp,
    pub value: f64,
}

impl Clause {
    pub fn holds(&self, v: &Values) -> bool {
        self.op.holds(v[self.metric.index()], self.value)
    }
}

impl fmt::Display for Clause {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}{}{}",
            self.metric.name(),
            self.op.as_str(),
            self.value
        )
    }
}

impl FromStr for Clause {
    type Err = GateError;
    fn from_str(s: &str) -> Result<Clause, GateError> {
        let clause = s.trim();
        let name_end = clause
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(clause.len());
        let name = &clause[..name_end];
        let metric: Metric = name.parse().map_err(|_| GateError::UnknownMetric {
            clause: clause.to_string(),
            name: name.to_string(),
            valid: Metric::valid_names(),
        })?;
        let rest = clause[name_end..].trim_start();
        let op_end = rest
            .find(|c: char| !matches!(c, '<' | '>' | '=' | '!'))
            .unwrap_or(rest.len());
        let op = match &rest[..op_end] {
            "" => {
                return Err(GateError::MissingOperator {
                    clause: clause.to_string(),
                    metric: name.to_string(),
                });
            }
            "<" => CmpOp::Lt,
            "<=" => CmpOp::Le,
            ">" => CmpOp::Gt,
            ">=" => CmpOp::Ge,
            "==" => CmpOp::Eq,
            "!=" => CmpOp::Ne,
            other => {
                return Err(GateError::BadOperator {
                    clause: clause.to_string(),
                    found: other.to_string(),
                });
            }
        };
        let token = rest[op_end..].trim();
        let value = token
            .parse::<f64>()
            .ok()
            .filter(|v| !v.is_nan())
            .ok_or_else(|| GateError::BadNumber {
                clause: clause.to_string(),
                token: token.to_string(),
            })?;
        Ok(Clause { metric, op, value })
    }
}

/// A conjunction of clauses.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Gate {
    clauses: Vec<Clause>,
}

/// The outcome of [`Gate::eval`]: bit i of `failed` is set when clause i did not hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct GateResult {
    pub failed: u64,
}

impl GateResult {
    /// Every clause held.
    pub fn pass(self) -> bool {
        self.failed == 0
    }
    /// Clause `i` did not hold.
    pub fn failed(self, i: usize) -> bool {
        i < 64 && self.failed >> i & 1 == 1
    }
}

impl Gate {
    /// A gate from clauses (at most [`MAX_CLAUSES`]). A clause given twice is kept once (so it
    /// gets one failure column).
    pub fn new(mut clauses: Vec<Clause>) -> Result<Gate, GateError> {
        let mut seen = std::collections::HashSet::new();
        clauses.retain(|c| seen.insert(c.to_string()));
        if clauses.len() > MAX_CLAUSES {
            return Err(GateError::TooManyClauses(clauses.len()));
        }
        Ok(Gate { clauses })
    }

    /// The AND of several gates: their clauses in order.
    pub fn all(gates: &[Gate]) -> Result<Gate, GateError> {
        Gate::new(
            gates
                .iter()
                .flat_map(|g| g.clauses.iter().copied())
                .collect(),
        )
    }

    pub fn clauses(&self) -> &[Clause] {
        &self.clauses
    }

    /// The metrics the clauses read (so the caller can compute just those).
    pub fn metrics(&self) -> MetricSet {
        self.clauses.iter().map(|c| c.metric).collect()
    }

    pub fn eval(&self, v: &Values) -> GateResult {
        let mut failed = 0u64;
        for (i, c) in self.clauses.iter().enumerate() {
            failed |= (!c.holds(v) as u64) << i;
        }
        GateResult { failed }
    }
}

impl FromStr for Gate {
    type Err = GateError;
    fn from_str(s: &str) -> Result<Gate, GateError> {
        let clauses = s
            .split("&&")
            .enumerate()
            .map(|(i, c)| {
                if c.trim().is_empty() {
                    Err(GateError::EmptyClause {
                        gate: s.to_string(),
                        index: i + 1,
                    })
                } else {
                    c.parse()
                }
            })
            .collect::<Result<Vec<_>, _>>()?;
        Gate::new(clauses)
    }
}

impl fmt::Display for Gate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, c) in self.clauses.iter().enumerate() {
            if i > 0 {
                f.write_str(" && ")?;
            }
            write!(f, "{c}")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::EMPTY_VALUES;

    fn vals(pairs: &[(Metric, f64)]) -> Values {
        let mut v = EMPTY_VALUES;
        for &(m, x) in pairs {
            v[m.index()] = x;
        }
        v
    }

    #[test]
    fn parse_display_and_eval() {
        let g: Gate = "floor_fraction>=0.55 && connected_fraction >= 0.99&&components<=3"
            .parse()
            .unwrap();
        assert_eq!(
            g.to_string(),
            "floor_fraction>=0.55 && connected_fraction>=0.99 && components<=3"
        );
        assert_eq!(g.clauses()[2].to_string(), "components<=3");
        let ok = vals(&[
            (Metric::FloorFraction, 0.6),
            (Metric::ConnectedFraction, 0.99),
            (Metric::Components, 3.0),
        ]);
        assert!(g.eval(&ok).pass());
        let mut bad = ok;
        bad[Metric::FloorFraction.index()] = 0.5;
        bad[Metric::Components.index()] = 4.0;
        let r = g.eval(&bad);
        assert!(!r.pass() && r.failed(0) && !r.failed(1) && r.failed(2));
        assert_eq!(r.failed, 0b101);
    }

    #[test]
    fn every_operator() {
        let v = vals(&[(Metric::Boundary, 2.0)]);
        for (op, expect) in [
            ("<", [false, false, true]),
            ("<=", [false, true, true]),
            (">", [true, false, false]),
            (">=", [true, true, false]),
            ("==", [false, true, false]),
            ("!=", [true, false, true]),
        ] {
            for (i, rhs) in ["1", "2", "3"].iter().enumerate() {
                let g: Gate = format!("boundary{op}{rhs}").parse().unwrap();
                assert_eq!(g.eval(&v).pass(), expect[i], "boundary {op} {rhs}");
            }
        }
    }

    #[test]
    fn nan_fails_all_but_ne() {
        let v = EMPTY_VALUES;
        for op in ["<", "<=", ">", ">=", "=="] {
            let g: Gate = format!("path_length{op}5").parse().unwrap();
            assert!(!g.eval(&v).pass(), "{op}");
        }
        let g: Gate = "path_length!=5".parse().unwrap();
        assert!(g.eval(&v).pass());
    }

    #[test]
    fn combine_gates() {
        let a: Gate = "components<=3".parse().unwrap();
        let b: Gate = "min_width>=2 && boundary<100".parse().unwrap();
        let g = Gate::all(&[a, b]).unwrap();
        assert_eq!(g.clauses().len(), 3);
        assert_eq!(
            g.to_string(),
            "components<=3 && min_width>=2 && boundary<100"
        );
        assert_eq!(
            g.metrics(),
            MetricSet::EMPTY
                .with(Metric::Components)
                .with(Metric::MinWidth)
                .with(Metric::Boundary)
        );
        let v = vals(&[
            (Metric::Components, 1.0),
            (Metric::MinWidth, 1.0),
            (Metric::Boundary, 5.0),
        ]);
        assert_eq!(g.eval(&v).failed, 0b010);
    }

    #[test]
    fn parse_errors_name_the_token() {
        let e = "floor_fraction>=0.5 && ".parse::<Gate>().unwrap_err();
        assert_eq!(
            e,
            GateError::EmptyClause {
                gate: "floor_fraction>=0.5 && ".into(),
                index: 2
            }
        );
        let e = "floor>=0.5".parse::<Gate>().unwrap_err();
        assert!(matches!(&e, GateError::UnknownMetric { name, .. } if name == "floor"));
        let msg = e.to_string();
        for m in Metric::ALL {
            assert!(msg.contains(m.name()), "{msg}");
        }
        let e = "components 3".parse::<Gate>().unwrap_err();
        assert!(matches!(&e, GateError::MissingOperator { metric, .. } if metric == "components"));
        let e = "components=<3".parse::<Gate>().unwrap_err();
        assert!(matches!(&e, GateError::BadOperator { found, .. } if found == "=<"));
        let e = "components=3".parse::<Gate>().unwrap_err();
        assert!(matches!(&e, GateError::BadOperator { found, .. } if found == "="));
        let e = "components<=three".parse::<Gate>().unwrap_err();
        assert!(matches!(&e, GateError::BadNumber { token, .. } if token == "three"));
        let e = "components<=".parse::<Gate>().unwrap_err();
        assert!(matches!(&e, GateError::BadNumber { token, .. } if token.is_empty()));
        let e = "components<=NaN".parse::<Gate>().unwrap_err();
        assert!(matches!(e, GateError::BadNumber { .. }));
        let e = "".parse::<Gate>().unwrap_err();
        assert!(matches!(e, GateError::EmptyClause { index: 1, .. }));
    }
}
