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
    /// Text that is neither a B/S rule, an `R1>=` rule nor Larger than Life; holds the rule
    /// text.
    #[error("rule {f0}: expected B<counts>/S<counts> (e.g. B5678/S45678, B2/S013V, B2/S34H), R1>=N[/R2<=M] (e.g. R1>=5/R2<=2) or Larger than Life (e.g. R5,C0,M1,S34..58,B34..45,NM)", f0 = crate::quote::quote(.0))]
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
    /// A count over the neighbourhood's size (`B5/S2V`: a von Neumann cell has 4 neighbours).
    #[error("rule {rule}: count {count} is over the {max} neighbours of the {hood} neighbourhood", rule = crate::quote::quote(.rule))]
    CountOver {
        /// The whole rule text, trimmed.
        rule: String,
        /// The count given.
        count: u8,
        /// The neighbourhood's size.
        max: u8,
        /// The neighbourhood's name.
        hood: &'static str,
    },
    /// A malformed Larger than Life rule (`Rr,Cc,Mm,Smin..max,Bmin..max,NM|NN`).
    #[error("rule {rule}: {msg} (Larger than Life is written R5,C0,M1,S34..58,B34..45,NM)", rule = crate::quote::quote(.rule))]
    Ltl {
        /// The rule text, trimmed.
        rule: String,
        /// What is wrong with it.
        msg: String,
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
    /// Outer-totalistic on a smaller neighbourhood, with Golly's meaning: bit `k` of `birth` /
    /// `survive` as for [`Rule::Moore`], `k` counting the [`Hood`]'s cells. Written
    /// `B2/S013V` (von Neumann) or `B2/S34H` (hexagonal).
    Hood {
        /// The neighbourhood.
        hood: Hood,
        /// Birth mask over the neighbourhood's counts.
        birth: u16,
        /// Survival mask over the neighbourhood's counts.
        survive: u16,
    },
    /// Larger than Life: counts over a box or diamond of radius `r`, with Golly's meaning.
    /// Written `R5,C0,M1,S34..58,B34..45,NM`.
    Ltl(Ltl),
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

/// The neighbourhood of a [`Rule::Hood`] rule, as Golly defines it on a square grid.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Hood {
    /// The 4 edge neighbours: N, S, W, E (Golly's `V` suffix).
    VonNeumann,
    /// 6 neighbours: N, S, W, E, NW and SE (Golly's `H` suffix: a hexagonal grid drawn on a
    /// square one, each row shifted half a cell from the one above; NE and SW are not
    /// neighbours).
    Hex,
}

impl Hood {
    /// The `(dy, dx)` offsets of the neighbours.
    pub fn offsets(self) -> &'static [(isize, isize)] {
        match self {
            Hood::VonNeumann => &[(-1, 0), (1, 0), (0, -1), (0, 1)],
            Hood::Hex => &[(-1, 0), (1, 0), (0, -1), (0, 1), (-1, -1), (1, 1)],
        }
    }

    /// How many neighbours a cell has.
    pub fn size(self) -> u8 {
        self.offsets().len() as u8
    }

    /// The rule suffix: `V` or `H`.
    pub fn suffix(self) -> char {
        match self {
            Hood::VonNeumann => 'V',
            Hood::Hex => 'H',
        }
    }

    /// The name used in messages.
    pub fn name(self) -> &'static str {
        match self {
            Hood::VonNeumann => "von Neumann",
            Hood::Hex => "hexagonal",
        }
    }
}

/// The largest Larger than Life radius (a box of 31 x 31 cells; Golly's own limit is 500, but
/// a cave is smoothed over a few cells and the kernel's counts fit 10 bit planes up to 15).
pub const MAX_LTL_RADIUS: u8 = 15;

/// A Larger than Life rule (Golly's "Larger than Life" algorithm, two states).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Ltl {
    /// The range `r`, 1..=[`MAX_LTL_RADIUS`].
    pub radius: u8,
    /// Whether the cell itself is counted (`M1`).
    pub middle: bool,
    /// A WALL cell stays WALL when its count is in `survive.0..=survive.1`.
    pub survive: (u16, u16),
    /// A FLOOR cell becomes WALL when its count is in `birth.0..=birth.1`.
    pub birth: (u16, u16),
    /// The neighbourhood's shape.
    pub shape: LtlShape,
}

/// The shape of a Larger than Life neighbourhood.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LtlShape {
    /// `NM`: the `(2r+1) x (2r+1)` box.
    Box,
    /// `NN`: the diamond `|dy| + |dx| <= r`.
    Diamond,
}

impl Ltl {
    /// Whether `(dy, dx)`, not the centre, is in the neighbourhood.
    pub fn contains(&self, dy: isize, dx: isize) -> bool {
        let r = self.radius as isize;
        match self.shape {
            LtlShape::Box => dy.abs() <= r && dx.abs() <= r,
            LtlShape::Diamond => dy.abs() + dx.abs() <= r,
        }
    }

    /// The largest count: every cell of the neighbourhood, the centre if counted.
    pub fn max_count(&self) -> u16 {
        let r = self.radius as u16;
        let all = match self.shape {
            LtlShape::Box => (2 * r + 1) * (2 * r + 1),
            LtlShape::Diamond => 2 * r * (r + 1) + 1,
        };
        all - !self.middle as u16
    }

    /// The next state of a cell from its state and its count.
    #[inline]
    pub fn next(&self, wall: bool, count: u32) -> bool {
        let (lo, hi) = if wall { self.survive } else { self.birth };
        (lo as u32..=hi as u32).contains(&count)
    }
}

fn parse_ltl(s: &str) -> Result<Rule, RuleError> {
    let err = |msg: String| RuleError::Ltl {
        rule: s.into(),
        msg,
    };
    let parts: Vec<&str> = s.split(',').map(str::trim).collect();
    let [r, c, m, sv, b, n] = parts[..] else {
        return Err(err(format!(
            "{} comma-separated parts, expected 6",
            parts.len()
        )));
    };
    let num = |part: &str, prefix: &str| -> Result<u16, RuleError> {
        part.strip_prefix(prefix)
            .and_then(|v| v.parse::<u16>().ok())
            .ok_or_else(|| {
                err(format!(
                    "{} is not {prefix}<number>",
                    crate::quote::quote(part)
                ))
            })
    };
    let radius = num(r, "R")?;
    if !(1..=MAX_LTL_RADIUS as u16).contains(&radius) {
        return Err(err(format!("range R{radius} is not 1..{MAX_LTL_RADIUS}")));
    }
    match num(c, "C")? {
        0 | 2 => {}
        k => {
            return Err(err(format!(
                "C{k} has {k} states; caves have two (C0 or C2)"
            )));
        }
    }
    let middle = match num(m, "M")? {
        0 => false,
        1 => true,
        k => return Err(err(format!("M{k}: the middle is counted (M1) or not (M0)"))),
    };
    let shape = match n {
        "NM" => LtlShape::Box,
        "NN" => LtlShape::Diamond,
        _ => {
            return Err(err(format!(
                "neighbourhood {} is not NM (box) or NN (diamond)",
                crate::quote::quote(n)
            )));
        }
    };
    let mut ltl = Ltl {
        radius: radius as u8,
        middle,
        survive: (0, 0),
        birth: (0, 0),
        shape,
    };
    let max = ltl.max_count();
    let range = |part: &str, prefix: &str| -> Result<(u16, u16), RuleError> {
        let body = part.strip_prefix(prefix).ok_or_else(|| {
            err(format!(
                "{} does not start with {prefix}",
                crate::quote::quote(part)
            ))
        })?;
        let (lo, hi) = body.split_once("..").ok_or_else(|| {
            err(format!(
                "{} is not {prefix}min..max",
                crate::quote::quote(part)
            ))
        })?;
        let (lo, hi) = (lo.parse::<u16>(), hi.parse::<u16>());
        match (lo, hi) {
            (Ok(lo), Ok(hi)) if lo <= hi && hi <= max => Ok((lo, hi)),
            (Ok(lo), Ok(hi)) => Err(err(format!(
                "{prefix}{lo}..{hi}: a range from min to max within 0..{max}, the neighbourhood's count"
            ))),
            _ => Err(err(format!(
                "{} is not {prefix}min..max",
                crate::quote::quote(part)
            ))),
        }
    };
    ltl.survive = range(sv, "S")?;
    ltl.birth = range(b, "B")?;
    Ok(Rule::Ltl(ltl))
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

/// A count mask's highest count (bit index), for the neighbourhood check.
fn highest(mask: u16) -> u8 {
    15 - mask.leading_zeros().min(15) as u8
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
        if s.contains(',') {
            return parse_ltl(&s.to_ascii_uppercase());
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
        // Golly's neighbourhood suffix: `V` von Neumann, `H` hexagonal (none: Moore).
        let (sv, hood) = match sv.chars().last().map(|c| c.to_ascii_uppercase()) {
            Some('V') => (&sv[..sv.len() - 1], Some(Hood::VonNeumann)),
            Some('H') => (&sv[..sv.len() - 1], Some(Hood::Hex)),
            _ => (sv, None),
        };
        let (birth, survive) = (parse_counts(s, b, 'B')?, parse_counts(s, sv, 'S')?);
        let Some(hood) = hood else {
            return Ok(Rule::Moore { birth, survive });
        };
        let top = highest(birth | survive);
        if (birth | survive) != 0 && top > hood.size() {
            return Err(RuleError::CountOver {
                rule: s.into(),
                count: top,
                max: hood.size(),
                hood: hood.name(),
            });
        }
        Ok(Rule::Hood {
            hood,
            birth,
            survive,
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
            Rule::Hood {
                hood,
                birth,
                survive,
            } => {
                write!(f, "{}", Rule::Moore { birth, survive })?;
                write!(f, "{}", hood.suffix())
            }
            Rule::Ltl(l) => write!(
                f,
                "R{},C0,M{},S{}..{},B{}..{},{}",
                l.radius,
                l.middle as u8,
                l.survive.0,
                l.survive.1,
                l.birth.0,
                l.birth.1,
                match l.shape {
                    LtlShape::Box => "NM",
                    LtlShape::Diamond => "NN",
                }
            ),
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
            "B2/S013V",
            "B/S01234V",
            "B2/S34H",
            "B0123456/SH",
            "R5,C0,M1,S34..58,B34..45,NM",
            "R1,C0,M0,S2..3,B3..3,NM",
            "R7,C0,M0,S0..112,B10..20,NN",
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
        assert!(matches!(
            e("B5/S2V"),
            RuleError::CountOver {
                count: 5,
                max: 4,
                ..
            }
        ));
        assert!(matches!(
            e("B2/S7H"),
            RuleError::CountOver {
                count: 7,
                max: 6,
                ..
            }
        ));
        assert!(e("B2/S7H").to_string().contains("hexagonal"));
        for bad in [
            "R5,C0,M1,S34..58,B34..45",
            "R0,C0,M1,S1..2,B1..2,NM",
            "R16,C0,M1,S1..2,B1..2,NM",
            "R2,C3,M1,S1..2,B1..2,NM",
            "R2,C0,M2,S1..2,B1..2,NM",
            "R2,C0,M1,S3..2,B1..2,NM",
            "R1,C0,M0,S1..9,B1..2,NM",
            "R2,C0,M1,S1..2,B1..2,NC",
            "R2,C0,M1,S1-2,B1..2,NM",
        ] {
            assert!(matches!(e(bad), RuleError::Ltl { .. }), "{bad}");
        }
        assert!(e("R1,C0,M0,S1..9,B1..2,NM").to_string().contains("0..8"));
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
