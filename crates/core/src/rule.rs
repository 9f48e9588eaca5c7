//! The rule language: Golly-style B/S rules over WALL neighbours, the two-radius R1/R2 rule, and
//! a *pass* (rule + outside + update order + border + repeat count).
//!
//! Strict parsing with errors that name the offending part, and a canonical `Display` so that
//! `parse(display(r)) == r` for every rule and pass.

use std::fmt;
use std::str::FromStr;

/// Why a rule, pass option or pass string was rejected.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RuleError {
    /// The rule text is empty or only whitespace.
    #[error("empty rule: expected something like B5678/S45678")]
    Empty,
    /// A B/S rule without the `/`; holds the (trimmed) rule text.
    #[error("rule {f0}: missing '/' between the B and S parts (e.g. B5678/S45678)", f0 = crate::quote::quote(.0))]
    MissingSlash(String),
    /// A B/S rule with more than one `/`; holds the rule text.
    #[error("rule {f0}: one '/' between the B and S parts, not several (e.g. B5678/S45678)", f0 = crate::quote::quote(.0))]
    ExtraSlash(String),
    /// Text that is neither a B/S rule nor an `R1>=` rule; holds the rule text.
    #[error("rule {f0}: expected B<counts>/S<counts> (e.g. B5678/S45678) or R1>=N[/R2<=M] (e.g. R1>=5/R2<=2)", f0 = crate::quote::quote(.0))]
    Unrecognised(String),
    /// A part of a B/S rule does not start with its letter (`B` first, `S` second).
    #[error("rule {rule}: part {part} must start with '{expected}'", rule = crate::quote::quote(.rule), part = crate::quote::quote(.part))]
    BadPrefix {
        /// The whole rule text, trimmed.
        rule: String,
        /// The offending part (the text before or after the `/`).
        part: String,
        /// The letter it should start with: `'B'` or `'S'` (either case is accepted).
        expected: char,
    },
    /// A character after `B` or `S` that is not a digit 0..=8.
    #[error("rule {rule}: {ch:?} is not a neighbour count (counts are the digits 0..8)", rule = crate::quote::quote(.rule))]
    BadCount {
        /// The whole rule text, trimmed.
        rule: String,
        /// The offending character.
        ch: char,
    },
    /// A neighbour count listed twice in one part (`B556/S5`).
    #[error("rule {rule}: count {digit} appears twice in part {part}", rule = crate::quote::quote(.rule), part = crate::quote::quote(.part))]
    Repeated {
        /// The whole rule text, trimmed.
        rule: String,
        /// The repeated count, 0..=8.
        digit: u8,
        /// The part it appears twice in (`B...` or `S...`).
        part: String,
    },
    /// A malformed two-radius rule (`R1>=N[/R2<=M]`).
    #[error("rule {rule}: {msg}", rule = crate::quote::quote(.rule))]
    TwoRadius {
        /// The rule text, trimmed and upper-cased.
        rule: String,
        /// What is wrong with it (e.g. the R1 threshold is not 0..=9).
        msg: String,
    },
    /// An [`Outside`] keyword other than `floor`, `wall` or `wrap`; holds the trimmed text.
    #[error("unknown outside mode {f0}: expected floor, wall or wrap", f0 = crate::quote::quote(.0))]
    Outside(String),
    /// An [`Update`] keyword other than `sync`, `inplace-row-major` or `inplace-col-major`;
    /// holds the trimmed text.
    #[error("unknown update order {f0}: expected sync, inplace-row-major or inplace-col-major", f0 = crate::quote::quote(.0))]
    Update(String),
    /// A [`Border`] keyword other than `none` or `solid`; holds the trimmed text.
    #[error("unknown border mode {f0}: expected none or solid", f0 = crate::quote::quote(.0))]
    Border(String),
}

/// A cellular-automaton rule. WALL = 1 = alive.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Rule {
    /// Outer-totalistic on the 8 Moore neighbours: bit `k` of `birth` set means a FLOOR cell with
    /// `k` WALL neighbours becomes WALL; bit `k` of `survive` means a WALL cell with `k` WALL
    /// neighbours stays WALL. Written `B5678/S45678`.
    Moore {
        /// Birth mask: bit `k` (0..=8) set = FLOOR with `k` WALL neighbours becomes WALL.
        birth: u16,
        /// Survival mask: bit `k` (0..=8) set = WALL with `k` WALL neighbours stays WALL.
        survive: u16,
    },
    /// RogueBasin's two-radius rule: WALL iff `R1 >= r1_min` or (when set) `R2 <= r2_max`, where
    /// R1 counts walls in the 3x3 including the centre and R2 in the 5x5 minus its corners (21
    /// cells). Written `R1>=5/R2<=2` or `R1>=5`.
    TwoRadius {
        /// WALL when at least this many of the 3x3 (centre included) are WALL, 0..=9.
        r1_min: u8,
        /// Also WALL when at most this many of the 21-cell R2 area are WALL, 0..=21; `None`:
        /// the R1 test alone.
        r2_max: Option<u8>,
    },
}

impl Rule {
    /// A Moore rule from birth and survival count lists (each count 0..=8).
    pub fn moore(birth: &[u8], survive: &[u8]) -> Rule {
        let mask = |l: &[u8]| l.iter().fold(0u16, |m, &k| m | (1 << k));
        Rule::Moore {
            birth: mask(birth),
            survive: mask(survive),
        }
    }

    /// The chapter's strict rule, `B5678/S5678`.
    pub fn chapter_strict() -> Rule {
        Rule::moore(&[5, 6, 7, 8], &[5, 6, 7, 8])
    }

    /// The classic 4-5 rule, `B5678/S45678`.
    pub fn classic_4_5() -> Rule {
        Rule::moore(&[5, 6, 7, 8], &[4, 5, 6, 7, 8])
    }

    /// Next state of one cell from its state and its WALL-neighbour count (Moore rules only).
    #[inline]
    pub fn next_moore(birth: u16, survive: u16, wall: bool, count: u32) -> bool {
        let set = if wall { survive } else { birth };
        (set >> count) & 1 == 1
    }
}

fn parse_counts(rule: &str, part: &str, expected: char) -> Result<u16, RuleError> {
    let mut chars = part.chars();
    match chars.next() {
        Some(c) if c.eq_ignore_ascii_case(&expected) => {}
        _ => {
            return Err(RuleError::BadPrefix {
                rule: rule.into(),
                part: part.into(),
                expected,
            });
        }
    }
    let mut mask = 0u16;
    for ch in chars {
        let d = match ch.to_digit(10) {
            Some(d) if d <= 8 => d as u8,
            _ => {
                return Err(RuleError::BadCount {
                    rule: rule.into(),
                    ch,
                });
            }
        };
        if mask & (1 << d) != 0 {
            return Err(RuleError::Repeated {
                rule: rule.into(),
                digit: d,
                part: part.into(),
            });
        }
        mask |= 1 << d;
    }
    Ok(mask)
}

fn parse_two_radius(s: &str) -> Result<Rule, RuleError> {
    let err = |msg: &str| RuleError::TwoRadius {
        rule: s.into(),
        msg: msg.into(),
    };
    let mut parts = s.split('/');
    let p1 = parts.next().unwrap_or("");
    let r1 = p1
        .strip_prefix("R1>=")
        .ok_or_else(|| err("expected R1>=N first (e.g. R1>=5/R2<=2)"))?;
    let r1_min: u8 = r1
        .parse()
        .ok()
        .filter(|&n| n <= 9)
        .ok_or_else(|| err("R1 threshold must be an integer 0..9 (R1 counts the 3x3)"))?;
    let r2_max = match parts.next() {
        None => None,
        Some(p2) => {
            let r2 = p2
                .strip_prefix("R2<=")
                .ok_or_else(|| err("second part must be R2<=N"))?;
            Some(
                r2.parse()
                    .ok()
                    .filter(|&n| n <= 21)
                    .ok_or_else(|| err("R2 bound must be an integer 0..21 (R2 counts 21 cells)"))?,
            )
        }
    };
    if parts.next().is_some() {
        return Err(err("too many '/' parts"));
    }
    Ok(Rule::TwoRadius { r1_min, r2_max })
}

impl FromStr for Rule {
    type Err = RuleError;
    fn from_str(s: &str) -> Result<Rule, RuleError> {
        let s = s.trim();
        if s.is_empty() {
            return Err(RuleError::Empty);
        }
        if s.starts_with("R1") || s.starts_with("r1") {
            return parse_two_radius(&s.to_ascii_uppercase());
        }
        if !s.starts_with(['B', 'b']) && !s.contains('/') {
            return Err(RuleError::Unrecognised(s.into()));
        }
        let (b, sv) = s
            .split_once('/')
            .ok_or_else(|| RuleError::MissingSlash(s.into()))?;
        if sv.contains('/') {
            return Err(RuleError::ExtraSlash(s.into()));
        }
        Ok(Rule::Moore {
            birth: parse_counts(s, b, 'B')?,
            survive: parse_counts(s, sv, 'S')?,
        })
    }
}

impl fmt::Display for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Rule::Moore { birth, survive } => {
                f.write_str("B")?;
                for k in 0..=8 {
                    if birth >> k & 1 == 1 {
                        write!(f, "{k}")?;
                    }
                }
                f.write_str("/S")?;
                for k in 0..=8 {
                    if survive >> k & 1 == 1 {
                        write!(f, "{k}")?;
                    }
                }
                Ok(())
            }
            Rule::TwoRadius { r1_min, r2_max } => {
                write!(f, "R1>={r1_min}")?;
                if let Some(m) = r2_max {
                    write!(f, "/R2<={m}")?;
                }
                Ok(())
            }
        }
    }
}

macro_rules! keyword_enum {
    ($(#[$m:meta])* $name:ident, $err:ident, { $($(#[$vm:meta])* $var:ident = $text:literal),+ $(,)? }) => {
        $(#[$m])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum $name { $($(#[$vm])* $var),+ }
        impl $name {
            /// Every value, in declaration order.
            pub const ALL: &'static [$name] = &[$($name::$var),+];
            /// The keyword used in rule files and flags.
            pub fn as_str(self) -> &'static str {
                match self { $($name::$var => $text),+ }
            }
        }
        impl FromStr for $name {
            type Err = RuleError;
            fn from_str(s: &str) -> Result<Self, RuleError> {
                match s.trim() {
                    $($text => Ok($name::$var),)+
                    other => Err(RuleError::$err(other.into())),
                }
            }
        }
        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.as_str())
            }
        }
    };
}

keyword_enum!(
    /// What cells beyond the grid read as.
    Outside, Outside, {
        /// Outside cells are FLOOR (the chapter's zero padding).
        Floor = "floor",
        /// Outside cells are WALL (NetHack's rock frame).
        Wall = "wall",
        /// The grid is a torus.
        Wrap = "wrap",
    }
);

keyword_enum!(
    /// How a pass writes its results.
    Update, Update, {
        /// Buffered: the next grid is computed entirely from the old one.
        Sync = "sync",
        /// In place, y outer and x inner: later cells read already-updated ones.
        InPlaceRowMajor = "inplace-row-major",
        /// In place, x outer and y inner (NetHack's pass 1).
        InPlaceColMajor = "inplace-col-major",
    }
);

keyword_enum!(
    /// What happens to the outer ring after a pass.
    Border, Border, {
        /// Nothing.
        None = "none",
        /// Forced to WALL (the chapter's `solid_border`).
        Solid = "solid",
    }
);

/// One smoothing pass: a rule applied `repeat` times with the given modes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Pass {
    /// The rule applied to every cell.
    pub rule: Rule,
    /// What cells beyond the grid read as.
    pub outside: Outside,
    /// Buffered or in place, and in which order.
    pub update: Update,
    /// Whether the outer ring is forced to WALL after each application.
    pub border: Border,
    /// Applications of the rule, 0..=[`crate::recipe::MAX_REPEAT`] in a valid recipe (the
    /// `steps` key sets it on the last pass); each adds one wall-fraction sample.
    pub repeat: u32,
}

impl Pass {
    /// A buffered pass with the given rule, outside and border, applied once.
    pub fn sync(rule: Rule, outside: Outside, border: Border) -> Pass {
        Pass {
            rule,
            outside,
            update: Update::Sync,
            border,
            repeat: 1,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_display_round_trip() {
        for s in [
            "B5678/S5678",
            "B5678/S45678",
            "B3/S012345678",
            "B678/S012345678",
            "B/S",
            "B012345678/S",
            "B05678/S05678",
            "R1>=5/R2<=2",
            "R1>=5",
        ] {
            let r: Rule = s.parse().unwrap();
            assert_eq!(r.to_string(), s);
            assert_eq!(r.to_string().parse::<Rule>().unwrap(), r);
        }
        // Canonical form sorts counts and upper-cases.
        assert_eq!(
            "b8765/s54".parse::<Rule>().unwrap().to_string(),
            "B5678/S45"
        );
        assert_eq!(
            "B5678/S5678".parse::<Rule>().unwrap(),
            Rule::chapter_strict()
        );
    }

    #[test]
    fn every_moore_rule_round_trips() {
        for birth in (0u16..512).step_by(7) {
            for survive in (0u16..512).step_by(11) {
                let r = Rule::Moore { birth, survive };
                assert_eq!(r.to_string().parse::<Rule>().unwrap(), r);
            }
        }
    }

    #[test]
    fn rejections_name_the_problem() {
        let e = |s: &str| s.parse::<Rule>().unwrap_err();
        assert_eq!(e(""), RuleError::Empty);
        assert!(matches!(e("B5678S5678"), RuleError::MissingSlash(_)));
        assert!(matches!(e("B9/S5"), RuleError::BadCount { ch: '9', .. }));
        assert!(matches!(e("B5x/S5"), RuleError::BadCount { ch: 'x', .. }));
        assert!(matches!(
            e("X5/S5"),
            RuleError::BadPrefix { expected: 'B', .. }
        ));
        assert!(matches!(
            e("B5/5"),
            RuleError::BadPrefix { expected: 'S', .. }
        ));
        assert!(matches!(e("B55/S5"), RuleError::Repeated { digit: 5, .. }));
        assert!(matches!(e("B5/S5/S6"), RuleError::ExtraSlash(_)));
        assert!(matches!(e("R3>=5"), RuleError::Unrecognised(_)));
        assert!(e("R3>=5").to_string().contains("R1>=N"));
        assert!(matches!(e("R1>=x"), RuleError::TwoRadius { .. }));
        assert!(matches!(e("R1>=5/R3<=2"), RuleError::TwoRadius { .. }));
        assert!(matches!(e("R1>=5/R2<=22"), RuleError::TwoRadius { .. }));
        assert!(e("B9/S5").to_string().contains("'9'"));
    }

    #[test]
    fn keywords() {
        for o in Outside::ALL {
            assert_eq!(o.to_string().parse::<Outside>().unwrap(), *o);
        }
        for u in Update::ALL {
            assert_eq!(u.to_string().parse::<Update>().unwrap(), *u);
        }
        for b in Border::ALL {
            assert_eq!(b.to_string().parse::<Border>().unwrap(), *b);
        }
        assert!("torus".parse::<Outside>().is_err());
        assert!("inplace".parse::<Update>().is_err());
    }
}
