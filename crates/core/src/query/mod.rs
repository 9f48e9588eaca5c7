//! The query language: one grammar for `sweep --gate`, `search --where` and named gates.
//!
//! ```text
//! query  := or
//! or     := and ("||" and)*
//! and    := unary ("&&" unary)*
//! unary  := "!" unary | "(" or ")" | metric op number
//! op     := "<" | "<=" | ">" | ">=" | "==" | "!="
//! ```
//!
//! Precedence is `!` > `&&` > `||`: `!a && b || c` is `((!a) && b) || c`. Metrics are the
//! names of [`crate::measure::Metric`]; numbers are decimal (`3`, `0.55`, `-1`, `.5`, `1e-3`).
//! A named gate is `NAME=EXPR` ([`GateArg`]; names use letters, digits, `_` and `-`).
//!
//! **Errors** are one line naming the 1-based column of the offending character
//! (`query "components<=3 &&", column 17: expected a comparison ... found the end of the query`).
//!
//! **NaN.** A metric can be empty (NaN): `path_length` when the exit is unreachable or not
//! set, `reach_depth` for a WALL spawn. Comparisons follow IEEE: a NaN fails every operator
//! except `!=`, which it passes. So `path_length<50` is false for an unreachable exit, and
//! `!(path_length>=50)` is true: the two are *not* the same query.
//!
//! **Clauses and failures.** Each distinct leaf comparison is a *clause*; a clause written
//! twice (even as `components<=3` and `components <= 3.0`) is one clause. Sweeps count, per
//! clause, the caves on which it was *false* (`fail[<clause>]` in `summary.csv`). With only
//! `&&` that is "the caves this clause rejected"; with `||` and `!` a false clause need not
//! reject the cave (`a || b` passes with `a` false) and a true one can (`!a`), so read the
//! column as "the clause was false", not "the clause made the cave fail".
//!
//! Modules: [`ast`] (tree and printer; `parse(print(t)) == t`), `parse` (lexer and
//! recursive-descent parser), `gate` (sweep gates: every clause evaluated, named gates), `plan`
//! (search: lazy, cost-ordered, short-circuit evaluation).

pub mod ast;
mod gate;
mod parse;
mod plan;

pub use ast::{Clause, CmpOp, Expr};
pub use gate::{Gate, GateArg, GateResult, MAX_CLAUSES, MAX_NAMED};
pub use parse::{MAX_DEPTH, QueryError, parse};
pub use plan::{ClauseInfo, Costs, QueryPlan};

#[cfg(test)]
mod tests;
