//! The query tree (comparisons joined by `&&`, `||`, `!`) and its printer.
//!
//! `&&` and `||` nodes are n-ary: `a && b && c` is one `And` of three children, while
//! `a && (b && c)` keeps its parentheses as a nested `And`, so the printer can always write a tree
//! back in a form that parses to the same tree (`parse(print(t)) == t`, property-tested).

use std::fmt;

use crate::measure::{Metric, MetricSet, Values};

/// A comparison operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CmpOp {
    /// `<`
    Lt,
    /// `<=`
    Le,
    /// `>`
    Gt,
    /// `>=`
    Ge,
    /// `==` (exact float equality)
    Eq,
    /// `!=` (the one operator a NaN passes)
    Ne,
}

impl CmpOp {
    /// Every operator.
    pub const ALL: [CmpOp; 6] = [
        CmpOp::Lt,
        CmpOp::Le,
        CmpOp::Gt,
        CmpOp::Ge,
        CmpOp::Eq,
        CmpOp::Ne,
    ];

    /// The operator as written in queries and in `fail[...]` column names, e.g. `"<="`.
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

    /// `a op b` with IEEE semantics: a NaN on either side makes every operator false except
    /// `!=`, which is true.
    #[inline]
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

/// One leaf comparison `metric op value` (a "clause"). `value` is always finite.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Clause {
    /// The metric whose value is compared (the left-hand side).
    pub metric: Metric,
    /// How it is compared.
    pub op: CmpOp,
    /// The constant on the right-hand side; finite (the parser rejects anything else).
    pub value: f64,
}

impl Clause {
    /// Does the clause hold for the metric value `v`?
    #[inline]
    pub fn test(&self, v: f64) -> bool {
        self.op.holds(v, self.value)
    }

    /// Does the clause hold for a cave's values?
    #[inline]
    pub fn holds(&self, v: &Values) -> bool {
        self.test(v[self.metric.index()])
    }

    /// Two clauses are the same clause (one failure column) when metric, operator and value are
    /// equal: `components<=3` and `components <= 3.0` are one clause.
    pub fn same(&self, o: &Clause) -> bool {
        self.metric == o.metric && self.op == o.op && self.value == o.value
    }
}

/// `components<=3`: the form used in column names such as `fail[components<=3]`. The number is
/// Rust's shortest round-trip form, so the text parses back to the same value.
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

/// A query expression.
#[derive(Debug, Clone, PartialEq)]
pub enum Expr {
    /// A leaf comparison, `metric op value`.
    Cmp(Clause),
    /// `!e`: holds when the child does not.
    Not(Box<Expr>),
    /// Two or more children, all of which must hold.
    And(Vec<Expr>),
    /// Two or more children, one of which must hold.
    Or(Vec<Expr>),
}

impl Expr {
    /// The AND of `parts`, flattening top-level `And`s (so ANDing `a && b` with `c` prints as
    /// `a && b && c`). `None` for no parts.
    pub fn and_all(parts: impl IntoIterator<Item = Expr>) -> Option<Expr> {
        let mut kids = Vec::new();
        for p in parts {
            match p {
                Expr::And(v) => kids.extend(v),
                e => kids.push(e),
            }
        }
        match kids.len() {
            0 => None,
            1 => kids.pop(),
            _ => Some(Expr::And(kids)),
        }
    }

    /// Every leaf comparison, left to right (duplicates included).
    pub fn leaves(&self) -> Vec<Clause> {
        let mut out = Vec::new();
        self.walk(&mut |c| out.push(*c));
        out
    }

    fn walk(&self, f: &mut impl FnMut(&Clause)) {
        match self {
            Expr::Cmp(c) => f(c),
            Expr::Not(e) => e.walk(f),
            Expr::And(v) | Expr::Or(v) => v.iter().for_each(|e| e.walk(f)),
        }
    }

    /// The metrics the expression reads.
    pub fn metrics(&self) -> MetricSet {
        let mut s = MetricSet::EMPTY;
        self.walk(&mut |c| s.insert(c.metric));
        s
    }

    /// Evaluate directly on a cave's values (no short-circuit subtleties: every operand is a
    /// plain value here).
    pub fn eval(&self, v: &Values) -> bool {
        match self {
            Expr::Cmp(c) => c.holds(v),
            Expr::Not(e) => !e.eval(v),
            Expr::And(k) => k.iter().all(|e| e.eval(v)),
            Expr::Or(k) => k.iter().any(|e| e.eval(v)),
        }
    }

    fn write(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // A child is parenthesised when printing it bare would parse differently: an `||` inside
        // `&&` (precedence), an `&&`/`||` inside the same operator (it would flatten), and any
        // `&&`/`||` under `!`.
        let child = |f: &mut fmt::Formatter<'_>, e: &Expr, paren: bool| {
            if paren {
                f.write_str("(")?;
                e.write(f)?;
                f.write_str(")")
            } else {
                e.write(f)
            }
        };
        match self {
            Expr::Cmp(c) => write!(f, "{c}"),
            Expr::Not(e) => {
                f.write_str("!")?;
                child(f, e, matches!(**e, Expr::And(_) | Expr::Or(_)))
            }
            Expr::And(k) => {
                for (i, e) in k.iter().enumerate() {
                    if i > 0 {
                        f.write_str(" && ")?;
                    }
                    child(f, e, matches!(e, Expr::And(_) | Expr::Or(_)))?;
                }
                Ok(())
            }
            Expr::Or(k) => {
                for (i, e) in k.iter().enumerate() {
                    if i > 0 {
                        f.write_str(" || ")?;
                    }
                    child(f, e, matches!(e, Expr::Or(_)))?;
                }
                Ok(())
            }
        }
    }
}

/// The canonical text of the expression: it parses back to the same tree.
impl fmt::Display for Expr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.write(f)
    }
}
