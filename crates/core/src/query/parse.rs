//! The query parser: a small lexer and a recursive-descent parser with the precedence
//! `!` > `&&` > `||`. Every error names the column (1-based, in characters) of the offending
//! token, on one line.

use std::str::FromStr;

use super::ast::{Clause, CmpOp, Expr};
use crate::measure::Metric;

/// Deepest nesting of `(` and `!` accepted (deeper input would only exhaust the stack).
pub const MAX_DEPTH: usize = 200;

/// Why a query (or a gate) could not be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}", self.render())]
pub struct QueryError {
    /// The text that was parsed.
    pub query: String,
    /// 1-based character column of the problem; 0 when it concerns the whole query.
    pub column: usize,
    /// What is wrong, without the query or column (those are added when it is displayed),
    /// e.g. `expected a comparison ... found the end of the query`.
    pub message: String,
}

impl QueryError {
    pub(crate) fn at(query: &str, column: usize, message: impl Into<String>) -> QueryError {
        QueryError {
            query: query.to_string(),
            column,
            message: message.into(),
        }
    }

    fn render(&self) -> String {
        if self.column == 0 {
            format!(
                "query {}: {}",
                crate::quote::quote(&self.query),
                self.message
            )
        } else if self.query.chars().count() <= crate::quote::MAX_QUOTED {
            format!(
                "query {:?}, column {}: {}",
                self.query, self.column, self.message
            )
        } else {
            // A long query is shown as the stretch around the column, so the line stays short.
            let from = self.column.saturating_sub(1 + crate::quote::MAX_QUOTED / 2);
            let near: String = self
                .query
                .chars()
                .skip(from)
                .take(crate::quote::MAX_QUOTED)
                .collect();
            format!(
                "query of {} characters, column {}, near {near:?}: {}",
                self.query.chars().count(),
                self.column,
                self.message
            )
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Ident(String),
    Num(f64),
    Op(CmpOp),
    And,
    Or,
    Not,
    LParen,
    RParen,
    End,
}

impl Tok {
    fn describe(&self) -> String {
        match self {
            Tok::Ident(s) => crate::quote::quote(s),
            Tok::Num(v) => format!("the number {v}"),
            Tok::Op(op) => format!("{:?}", op.as_str()),
            Tok::And => "\"&&\"".into(),
            Tok::Or => "\"||\"".into(),
            Tok::Not => "\"!\"".into(),
            Tok::LParen => "\"(\"".into(),
            Tok::RParen => "\")\"".into(),
            Tok::End => "the end of the query".into(),
        }
    }
}

/// A token and its 1-based column.
type Spanned = (Tok, usize);

fn is_ident_start(c: char) -> bool {
    c.is_ascii_alphabetic() || c == '_'
}
fn is_ident(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

fn lex(src: &str) -> Result<Vec<Spanned>, QueryError> {
    let chars: Vec<char> = src.chars().collect();
    let err = |col: usize, msg: String| Err(QueryError::at(src, col, msg));
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let col = i + 1;
        let next = chars.get(i + 1).copied();
        if c.is_whitespace() {
            i += 1;
            continue;
        }
        let two = |a: char, b: char| c == a && next == Some(b);
        let (tok, len) = if two('&', '&') {
            (Tok::And, 2)
        } else if two('|', '|') {
            (Tok::Or, 2)
        } else if two('<', '=') {
            (Tok::Op(CmpOp::Le), 2)
        } else if two('>', '=') {
            (Tok::Op(CmpOp::Ge), 2)
        } else if two('=', '=') {
            (Tok::Op(CmpOp::Eq), 2)
        } else if two('!', '=') {
            (Tok::Op(CmpOp::Ne), 2)
        } else {
            match c {
                '<' => (Tok::Op(CmpOp::Lt), 1),
                '>' => (Tok::Op(CmpOp::Gt), 1),
                '!' => (Tok::Not, 1),
                '(' => (Tok::LParen, 1),
                ')' => (Tok::RParen, 1),
                '&' => return err(col, "single \"&\": write \"&&\" for and".into()),
                '|' => return err(col, "single \"|\": write \"||\" for or".into()),
                '=' => {
                    return err(
                        col,
                        "\"=\" is not a comparison operator: use \"==\" (operators: < <= > >= == !=)"
                            .into(),
                    );
                }
                c if is_ident_start(c) => {
                    let end = (i..chars.len())
                        .find(|&j| !is_ident(chars[j]))
                        .unwrap_or(chars.len());
                    (Tok::Ident(chars[i..end].iter().collect()), end - i)
                }
                c if c.is_ascii_digit() || matches!(c, '.' | '+' | '-') => {
                    let len = number_len(&chars[i..]);
                    let text: String = chars[i..i + len].iter().collect();
                    if chars.get(i + len).is_some_and(|&c| is_ident(c) || c == '.') {
                        let end = (i + len..chars.len())
                            .find(|&j| !(is_ident(chars[j]) || chars[j] == '.'))
                            .unwrap_or(chars.len());
                        let bad: String = chars[i..end].iter().collect();
                        return err(
                            col,
                            format!("{} is not a number", crate::quote::quote(&bad)),
                        );
                    }
                    match text.parse::<f64>() {
                        Ok(v) if v.is_finite() => (Tok::Num(v), len),
                        Ok(_) => {
                            return err(
                                col,
                                format!("{} is not a finite number", crate::quote::quote(&text)),
                            );
                        }
                        Err(_) => {
                            return err(
                                col,
                                format!("{} is not a number", crate::quote::quote(&text)),
                            );
                        }
                    }
                }
                c => return err(col, format!("unexpected character {c:?}")),
            }
        };
        out.push((tok, col));
        i += len;
    }
    out.push((Tok::End, chars.len() + 1));
    Ok(out)
}

/// Length of the longest prefix shaped like a decimal number: `[+-]? digits [. digits]
/// [e [+-] digits]` (either side of the point may be empty, not both).
fn number_len(c: &[char]) -> usize {
    let digits = |mut i: usize| {
        while c.get(i).is_some_and(|d| d.is_ascii_digit()) {
            i += 1;
        }
        i
    };
    let mut i = usize::from(matches!(c.first(), Some('+' | '-')));
    let int_end = digits(i);
    let mut mantissa = int_end > i;
    i = int_end;
    if c.get(i) == Some(&'.') {
        let frac_end = digits(i + 1);
        mantissa |= frac_end > i + 1;
        i = frac_end;
    }
    if !mantissa {
        return i.max(1);
    }
    if matches!(c.get(i), Some('e' | 'E')) {
        let mut j = i + 1;
        if matches!(c.get(j), Some('+' | '-')) {
            j += 1;
        }
        let e_end = digits(j);
        if e_end > j {
            i = e_end;
        }
    }
    i
}

struct Parser<'a> {
    src: &'a str,
    toks: Vec<Spanned>,
    pos: usize,
}

impl Parser<'_> {
    fn peek(&self) -> &Spanned {
        &self.toks[self.pos]
    }
    fn bump(&mut self) -> Spanned {
        let t = self.toks[self.pos].clone();
        if self.pos + 1 < self.toks.len() {
            self.pos += 1;
        }
        t
    }
    fn err<T>(&self, col: usize, msg: String) -> Result<T, QueryError> {
        Err(QueryError::at(self.src, col, msg))
    }

    fn or(&mut self, depth: usize) -> Result<Expr, QueryError> {
        let mut kids = vec![self.and(depth)?];
        while self.peek().0 == Tok::Or {
            self.bump();
            kids.push(self.and(depth)?);
        }
        Ok(if kids.len() == 1 {
            kids.pop().expect("one")
        } else {
            Expr::Or(kids)
        })
    }

    fn and(&mut self, depth: usize) -> Result<Expr, QueryError> {
        let mut kids = vec![self.unary(depth)?];
        while self.peek().0 == Tok::And {
            self.bump();
            kids.push(self.unary(depth)?);
        }
        Ok(if kids.len() == 1 {
            kids.pop().expect("one")
        } else {
            Expr::And(kids)
        })
    }

    fn unary(&mut self, depth: usize) -> Result<Expr, QueryError> {
        let (tok, col) = self.peek().clone();
        if depth >= MAX_DEPTH {
            return self.err(col, format!("nested deeper than {MAX_DEPTH} levels"));
        }
        match tok {
            Tok::Not => {
                self.bump();
                Ok(Expr::Not(Box::new(self.unary(depth + 1)?)))
            }
            Tok::LParen => {
                self.bump();
                let e = self.or(depth + 1)?;
                let (close, ccol) = self.peek().clone();
                if close != Tok::RParen {
                    return self.err(
                        ccol,
                        format!(
                            "expected \")\" to close the \"(\" at column {col}, found {}",
                            close.describe()
                        ),
                    );
                }
                self.bump();
                Ok(e)
            }
            Tok::Ident(name) => self.clause(name, col),
            other => {
                let after = match self.pos.checked_sub(1).map(|p| &self.toks[p].0) {
                    Some(prev @ (Tok::And | Tok::Or | Tok::Not | Tok::LParen)) => {
                        format!(" after {}", prev.describe())
                    }
                    _ => String::new(),
                };
                self.err(
                    col,
                    format!(
                        "expected a comparison (metric op number, e.g. components<=3), \"(\" or \"!\"{after}, found {}",
                        other.describe()
                    ),
                )
            }
        }
    }

    fn clause(&mut self, name: String, col: usize) -> Result<Expr, QueryError> {
        self.bump();
        let hint = match name.to_ascii_lowercase().as_str() {
            "and" => Some("&&"),
            "or" => Some("||"),
            "not" => Some("!"),
            _ => None,
        };
        if let Some(op) = hint {
            return self.err(col, format!("write {op:?} instead of {name:?}"));
        }
        let Some(metric) = Metric::ALL.into_iter().find(|m| m.name() == name) else {
            return self.err(
                col,
                format!(
                    "unknown metric {name:?}; valid metrics: {}",
                    Metric::ALL.map(Metric::name).join(", ")
                ),
            );
        };
        let (tok, ocol) = self.bump();
        let Tok::Op(op) = tok else {
            return self.err(
                ocol,
                format!(
                    "expected a comparison operator (< <= > >= == !=) after {name:?}, found {}",
                    tok.describe()
                ),
            );
        };
        let (tok, ncol) = self.bump();
        let Tok::Num(value) = tok else {
            return self.err(
                ncol,
                format!(
                    "expected a number after \"{name}{}\", found {}",
                    op.as_str(),
                    tok.describe()
                ),
            );
        };
        Ok(Expr::Cmp(Clause { metric, op, value }))
    }
}

/// Parse one query expression.
pub fn parse(src: &str) -> Result<Expr, QueryError> {
    let toks = lex(src)?;
    if toks.len() == 1 {
        return Err(QueryError::at(
            src,
            0,
            "empty query (write comparisons such as components<=3, joined by && || ! and parentheses)",
        ));
    }
    let mut p = Parser { src, toks, pos: 0 };
    let e = p.or(0)?;
    let (tok, col) = p.peek().clone();
    match tok {
        Tok::End => Ok(e),
        Tok::RParen => p.err(col, "\")\" without a matching \"(\"".into()),
        other => p.err(
            col,
            format!(
                "expected \"&&\", \"||\" or the end of the query, found {}",
                other.describe()
            ),
        ),
    }
}

/// If `src` has the shape `NAME=...` (a name, then a single `=`): the name, the text after the
/// `=`, and how many characters of `src` come before that text.
pub(crate) fn split_named(src: &str) -> Option<(&str, &str, usize)> {
    let trimmed = src.trim_start();
    let end = trimmed
        .find(|c: char| !(is_ident(c) || c == '-'))
        .unwrap_or(trimmed.len());
    let name = &trimmed[..end];
    if name.is_empty() || !name.starts_with(is_ident_start) {
        return None;
    }
    let body = trimmed[end..].trim_start().strip_prefix('=')?;
    if body.starts_with('=') {
        return None;
    }
    let before = src[..src.len() - body.len()].chars().count();
    Some((name, body, before))
}

impl FromStr for Expr {
    type Err = QueryError;
    /// Parse a query. `NAME=EXPR` (a named gate) is refused with a message saying where named
    /// gates go.
    fn from_str(s: &str) -> Result<Expr, QueryError> {
        if let Some((name, _, _)) = split_named(s)
            && !Metric::ALL.iter().any(|m| m.name() == name)
        {
            return Err(QueryError::at(
                s,
                0,
                format!(
                    "{name}=... defines a named gate (a sweep gate NAME=EXPR); a query is an expression such as components<=3"
                ),
            ));
        }
        parse(s)
    }
}
