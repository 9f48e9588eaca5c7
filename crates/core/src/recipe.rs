//! Recipes: everything that defines a cave family except the seed. Grid size, fill, RNG, the
//! smoothing passes, post-steps, spawn/exit and connectivity.
//!
//! Recipes are data. They load from TOML ([`Recipe::from_toml`]), every preset prints as TOML
//! ([`Recipe::to_toml`]) and `--set KEY=VALUE` overrides go through [`Recipe::set`], so a sweep's
//! `--vary` can vary any key the same way. [`Recipe::validate`] is the one place that decides
//! whether a recipe can run; every error names the key at fault.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::grid::{GridError, check_shape};
use crate::measure::{Connectivity, PostStep};
use crate::rng::RngKind;
use crate::rule::{Border, Outside, Pass, Rule, Update};

/// Every key [`Recipe::set`] accepts (`--set KEY=VALUE`, `--vary KEY=...`), in the order the
/// README lists them.
pub const KEYS: [&str; 14] = [
    "rows",
    "cols",
    "fill",
    "floor",
    "steps",
    "rule",
    "outside",
    "border",
    "update",
    "rng",
    "spawn",
    "exit",
    "connectivity",
    "post",
];

/// Largest accepted repeat count of one pass (a guard against typos like `steps=40000000`).
pub const MAX_REPEAT: u32 = 100_000;

/// Most passes in a recipe, and most steps of all its passes together (the same bound as one
/// pass's [`MAX_REPEAT`]): a cave keeps its wall fraction after every step, and a sweep a
/// statistic per step, so without a bound on the sum a few kilobytes of recipe file (500
/// passes of `repeat = 100000`) asked for gigabytes.
pub const MAX_PASSES: usize = 1_000;
/// See [`MAX_PASSES`].
pub const MAX_STEPS: u64 = MAX_REPEAT as u64;

/// Largest recipe file read (`--recipe`): recipes are a few hundred bytes of TOML, so anything
/// bigger is a wrong path (`/dev/zero`, a data file), refused before it fills memory.
pub const MAX_RECIPE_BYTES: u64 = 4 << 20;

/// Why a recipe, a recipe file or an override was rejected.
#[derive(Debug, thiserror::Error)]
pub enum RecipeError {
    /// The file is not valid TOML or lacks a field (toml's message, which says "TOML").
    #[error("{0}")]
    Toml(String),
    /// A key's value is invalid or cannot run (from [`Recipe::validate`], [`Recipe::set`] or
    /// the TOML file's fields).
    #[error("{key}: {msg}")]
    Key {
        /// The key at fault, as in [`KEYS`] (`fill`, `spawn`, ...), or `pass N` (1-based) for
        /// one pass of the list.
        key: String,
        /// What is wrong with it, one line.
        msg: String,
    },
    /// The grid shape (`rows`, `cols`) is empty or too large.
    #[error(transparent)]
    Grid(#[from] GridError),
    /// [`Recipe::set`] got a key that is not in [`KEYS`]; holds the key.
    #[error("unknown recipe key {0:?}; known keys: {keys}", keys = KEYS.join(", "))]
    UnknownKey(String),
    /// [`Recipe::set_kv`] got a string without `=`; holds the whole string.
    #[error("{0:?} is not KEY=VALUE")]
    NotKeyValue(String),
}

fn key_err(key: &str, msg: impl fmt::Display) -> RecipeError {
    RecipeError::Key {
        key: key.to_string(),
        msg: msg.to_string(),
    }
}

/// How the grid is first filled.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Fill {
    /// Each cell WALL independently with probability `p`.
    Bernoulli {
        /// Wall probability per cell, `0.0..=1.0` (the `fill` key).
        p: f64,
    },
    /// All WALL except exactly `floor` FLOOR cells, uniformly placed (NetHack).
    ExactFloor {
        /// Number of FLOOR cells, at most `rows * cols` (the `floor` key).
        floor: usize,
    },
}

/// A cell position, or the grid's centre `(rows / 2, cols / 2)` whatever the shape.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Point {
    /// The centre cell `(rows / 2, cols / 2)`, resolved against the grid's shape when used
    /// (written `center` or `centre`), so it follows `rows`/`cols` overrides.
    Center,
    /// A fixed cell `(y, x)`: row, then column, both 0-based (written `y,x`).
    At(usize, usize),
}

impl Point {
    /// The position on a `rows x cols` grid.
    pub fn resolve(self, rows: usize, cols: usize) -> (usize, usize) {
        match self {
            Point::Center => (rows / 2, cols / 2),
            Point::At(y, x) => (y, x),
        }
    }

    fn parse(key: &str, s: &str) -> Result<Point, RecipeError> {
        let s = s.trim();
        if s == "center" || s == "centre" {
            return Ok(Point::Center);
        }
        let (y, x) = s.split_once(',').ok_or_else(|| {
            key_err(
                key,
                format!("{} is not `y,x` or `center`", crate::quote::quote(s)),
            )
        })?;
        let n = |t: &str| {
            t.trim().parse::<usize>().map_err(|_| {
                key_err(
                    key,
                    format!("{} is not a cell index", crate::quote::quote(t)),
                )
            })
        };
        Ok(Point::At(n(y)?, n(x)?))
    }
}

impl fmt::Display for Point {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Point::Center => f.write_str("center"),
            Point::At(y, x) => write!(f, "{y},{x}"),
        }
    }
}

/// A complete cave recipe. See the module docs.
#[derive(Debug, Clone, PartialEq)]
pub struct Recipe {
    /// Short name (the preset name, or the user's).
    pub name: String,
    /// Where the recipe comes from and how it deviates from its source.
    pub about: String,
    /// Grid height in cells, 1..=[`crate::grid::MAX_SIDE`] (`rows * cols` at most
    /// [`crate::grid::MAX_CELLS`]).
    pub rows: usize,
    /// Grid width in cells, 1..=[`crate::grid::MAX_SIDE`].
    pub cols: usize,
    /// How the grid is first filled (the `fill` and `floor` keys).
    pub fill: Fill,
    /// The random stream the fill draws from; [`RngKind::Numpy`] allows only
    /// [`Fill::Bernoulli`].
    pub rng: RngKind,
    /// The smoothing passes, applied in order; `steps` and `rule` overrides change the last.
    pub passes: Vec<Pass>,
    /// Connectivity repairs applied after the passes, in order (the `post` key).
    pub post: Vec<PostStep>,
    /// The cell the connectivity and path metrics start from; must lie inside the grid.
    pub spawn: Point,
    /// The target of `path_length`; `None` leaves that metric NaN. Must lie inside the grid.
    pub exit: Option<Point>,
    /// Adjacency for components, floods and paths, and for `keep-largest`/`remove-small`.
    pub connectivity: Connectivity,
}

impl Recipe {
    /// Check everything that could stop a run, naming the key at fault.
    pub fn validate(&self) -> Result<(), RecipeError> {
        check_shape(self.rows, self.cols)?;
        let cells = self.rows * self.cols;
        match self.fill {
            Fill::Bernoulli { p } if !(0.0..=1.0).contains(&p) => {
                return Err(key_err(
                    "fill",
                    format!("probability {p} is outside [0, 1]"),
                ));
            }
            Fill::ExactFloor { floor } if floor > cells => {
                return Err(key_err(
                    "fill",
                    format!(
                        "{floor} floor cells do not fit in {}x{}",
                        self.rows, self.cols
                    ),
                ));
            }
            _ => {}
        }
        if self.rng == RngKind::Numpy && !matches!(self.fill, Fill::Bernoulli { .. }) {
            return Err(key_err(
                "rng",
                "numpy replays only the Bernoulli fill (`random(shape) < p`)",
            ));
        }
        for (i, p) in self.passes.iter().enumerate() {
            if p.repeat > MAX_REPEAT {
                return Err(key_err(
                    &format!("pass {}", i + 1),
                    format!("repeat {} is over the limit {MAX_REPEAT}", p.repeat),
                ));
            }
        }
        if self.passes.len() > MAX_PASSES {
            return Err(key_err(
                "pass",
                format!(
                    "{} passes are over the limit {MAX_PASSES}",
                    self.passes.len()
                ),
            ));
        }
        let steps: u64 = self.passes.iter().map(|p| p.repeat as u64).sum();
        if steps > MAX_STEPS {
            return Err(key_err(
                "pass",
                format!("the passes' repeats add up to {steps} steps, over the limit {MAX_STEPS}"),
            ));
        }
        // A hexagonal rule makes a hex cave: its floor is joined by hex adjacency, so its
        // components, paths and pictures need connectivity 6.
        for (i, p) in self.passes.iter().enumerate() {
            if let Rule::Hood {
                hood: crate::rule::Hood::Hex,
                ..
            } = p.rule
                && self.connectivity != Connectivity::Six
            {
                return Err(key_err(
                    "rule",
                    format!(
                        "pass {} rule {} is hexagonal: set connectivity=6 so the cave is measured \
                         and drawn with hex adjacency",
                        i + 1,
                        p.rule
                    ),
                ));
            }
        }
        for (key, pt) in [("spawn", Some(self.spawn)), ("exit", self.exit)] {
            if let Some(pt) = pt {
                let (y, x) = pt.resolve(self.rows, self.cols);
                if y >= self.rows || x >= self.cols {
                    return Err(key_err(
                        key,
                        format!("({y},{x}) is outside the {}x{} grid", self.rows, self.cols),
                    ));
                }
            }
        }
        Ok(())
    }

    /// Spawn cell on this recipe's grid.
    pub fn spawn_cell(&self) -> (usize, usize) {
        self.spawn.resolve(self.rows, self.cols)
    }

    /// Exit cell, if the recipe has one.
    pub fn exit_cell(&self) -> Option<(usize, usize)> {
        self.exit.map(|p| p.resolve(self.rows, self.cols))
    }

    /// Number of wall-fraction samples per cave: after the fill, after each pass application,
    /// after each post-step.
    pub fn trajectory_len(&self) -> usize {
        1 + self.passes.iter().map(|p| p.repeat as usize).sum::<usize>() + self.post.len()
    }

    fn last_pass(&mut self, key: &str) -> Result<&mut Pass, RecipeError> {
        self.passes
            .last_mut()
            .ok_or_else(|| key_err(key, "the recipe has no smoothing pass to change"))
    }

    /// Apply one `KEY=VALUE` override. `steps` and `rule` change the *last* pass (the
    /// smoothing pass in every preset); `outside`, `border` and `update` change every pass;
    /// `rows`/`cols` keep an exact-count fill at the same density. The result is validated.
    pub fn set(&mut self, key: &str, value: &str) -> Result<(), RecipeError> {
        self.set_many([(key, value)])
    }

    /// Apply several overrides in order, then validate the result once: the recipe they make
    /// together is checked, not each step on the way, so `spawn=100,100` with `rows=200`
    /// works whichever comes first. On an error the recipe is left as it was.
    pub fn set_many<'a>(
        &mut self,
        pairs: impl IntoIterator<Item = (&'a str, &'a str)>,
    ) -> Result<(), RecipeError> {
        let mut r = self.clone();
        for (key, value) in pairs {
            r.apply(key, value)?;
        }
        r.validate()?;
        *self = r;
        Ok(())
    }

    /// One override, not validated (the caller validates the finished recipe).
    fn apply(&mut self, key: &str, value: &str) -> Result<(), RecipeError> {
        let v = value.trim();
        let bad = |what: &str| key_err(key, format!("{} is not {what}", crate::quote::quote(v)));
        match key {
            "rows" | "cols" => {
                let n: usize = v.parse().map_err(|_| bad("a whole number"))?;
                let old = self.rows * self.cols;
                if key == "rows" {
                    self.rows = n;
                } else {
                    self.cols = n;
                }
                if let Fill::ExactFloor { floor } = &mut self.fill {
                    let new = self.rows * self.cols;
                    *floor = ((*floor as f64) * new as f64 / old as f64).round() as usize;
                }
            }
            "fill" => {
                let p: f64 = v.parse().map_err(|_| bad("a probability"))?;
                if !(0.0..=1.0).contains(&p) {
                    return Err(key_err(key, format!("probability {v} is outside [0, 1]")));
                }
                self.fill = match self.fill {
                    Fill::Bernoulli { .. } => Fill::Bernoulli { p },
                    // An exact-count fill takes `fill` as its wall fraction.
                    Fill::ExactFloor { .. } => Fill::ExactFloor {
                        floor: ((1.0 - p) * (self.rows * self.cols) as f64).round() as usize,
                    },
                };
            }
            "floor" => {
                let floor: usize = v.parse().map_err(|_| bad("a cell count"))?;
                self.fill = Fill::ExactFloor { floor };
            }
            "steps" => {
                let n: u32 = v.parse().map_err(|_| bad("a whole number of steps"))?;
                self.last_pass(key)?.repeat = n;
            }
            "rule" => {
                let r: Rule = v.parse().map_err(|e| key_err(key, e))?;
                self.last_pass(key)?.rule = r;
            }
            "outside" => {
                let o: Outside = v.parse().map_err(|e| key_err(key, e))?;
                self.passes.iter_mut().for_each(|p| p.outside = o);
            }
            "border" => {
                let b: Border = v.parse().map_err(|e| key_err(key, e))?;
                self.passes.iter_mut().for_each(|p| p.border = b);
            }
            "update" => {
                let u: Update = v.parse().map_err(|e| key_err(key, e))?;
                self.passes.iter_mut().for_each(|p| p.update = u);
            }
            "rng" => self.rng = v.parse().map_err(|e| key_err(key, e))?,
            "spawn" => self.spawn = Point::parse(key, v)?,
            "exit" => {
                self.exit = if v == "none" {
                    None
                } else {
                    Some(Point::parse(key, v)?)
                }
            }
            "connectivity" => self.connectivity = v.parse().map_err(|e| key_err(key, e))?,
            "post" => {
                self.post = if v.is_empty() || v == "none" {
                    Vec::new()
                } else {
                    v.split('+')
                        .map(|s| s.trim().parse::<PostStep>().map_err(|e| key_err(key, e)))
                        .collect::<Result<_, _>>()?
                }
            }
            other => return Err(RecipeError::UnknownKey(other.to_string())),
        }
        Ok(())
    }

    /// The recipe's current value of a `--set` key, written so that `set(key, value)` gives
    /// this recipe back: what a tool shows in a control for the key (the explorer's form).
    /// `None` for a key the recipe has no value for (`floor` of a Bernoulli fill; `steps`,
    /// `rule` and the pass keys of a recipe without passes; passes that disagree on
    /// `outside`, `border` or `update`) and for unknown keys.
    pub fn value(&self, key: &str) -> Option<String> {
        let last = self.passes.last();
        let common = |f: fn(&Pass) -> String| {
            let first = f(self.passes.first()?);
            self.passes.iter().all(|p| f(p) == first).then_some(first)
        };
        Some(match key {
            "rows" => self.rows.to_string(),
            "cols" => self.cols.to_string(),
            "fill" => match self.fill {
                Fill::Bernoulli { p } => p.to_string(),
                Fill::ExactFloor { .. } => return None,
            },
            "floor" => match self.fill {
                Fill::ExactFloor { floor } => floor.to_string(),
                Fill::Bernoulli { .. } => return None,
            },
            "steps" => last?.repeat.to_string(),
            "rule" => last?.rule.to_string(),
            "outside" => common(|p| p.outside.to_string())?,
            "border" => common(|p| p.border.to_string())?,
            "update" => common(|p| p.update.to_string())?,
            "rng" => self.rng.to_string(),
            "spawn" => self.spawn.to_string(),
            "exit" => match self.exit {
                Some(e) => e.to_string(),
                None => "none".to_string(),
            },
            "connectivity" => self.connectivity.to_string(),
            "post" => {
                if self.post.is_empty() {
                    "none".to_string()
                } else {
                    self.post
                        .iter()
                        .map(|s| s.to_string())
                        .collect::<Vec<_>>()
                        .join("+")
                }
            }
            _ => return None,
        })
    }

    /// Apply a `KEY=VALUE` string (as given to `--set`).
    pub fn set_kv(&mut self, kv: &str) -> Result<(), RecipeError> {
        let (k, v) = kv
            .split_once('=')
            .ok_or_else(|| RecipeError::NotKeyValue(kv.to_string()))?;
        self.set(k.trim(), v)
    }

    /// Parse a recipe file.
    pub fn from_toml(text: &str) -> Result<Recipe, RecipeError> {
        let file: RecipeFile =
            toml::from_str(text).map_err(|e| RecipeError::Toml(one_line(&e.to_string())))?;
        let r = file.into_recipe()?;
        r.validate()?;
        Ok(r)
    }

    /// The recipe as a TOML file that [`Recipe::from_toml`] reads back to the same recipe.
    pub fn to_toml(&self) -> String {
        toml::to_string(&RecipeFile::from_recipe(self)).expect("recipe serialises")
    }
}

/// toml's errors span several lines (with a source excerpt); keep the CLI's errors to one.
/// A multi-line message (the TOML parser's, which quotes the offending source line and a caret
/// under it) as one line; a line of it longer than 400 characters (a quoted source line: a
/// recipe of one 3 MB line made a 3 MB error line) is cut to [`crate::quote::MAX_QUOTED`].
/// The parser's own explanations (the expected keys, ~200 characters) stay whole.
fn one_line(s: &str) -> String {
    s.lines()
        .map(|l| {
            let l = l.split_whitespace().collect::<Vec<_>>().join(" ");
            if l.chars().count() > 400 {
                crate::quote::cut(&l)
            } else {
                l
            }
        })
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

// ---- the file format ------------------------------------------------------------------------

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct RecipeFile {
    name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    about: Option<String>,
    rows: usize,
    cols: usize,
    #[serde(default = "default_rng")]
    rng: String,
    #[serde(default = "default_center")]
    spawn: PointFile,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    exit: Option<PointFile>,
    #[serde(default = "default_conn")]
    connectivity: u8,
    #[serde(default)]
    post: Vec<String>,
    fill: FillFile,
    #[serde(rename = "pass", default)]
    passes: Vec<PassFile>,
}

#[derive(Serialize, Deserialize)]
#[serde(untagged)]
enum PointFile {
    Named(String),
    At([usize; 2]),
}

#[derive(Serialize, Deserialize)]
#[serde(tag = "kind", deny_unknown_fields)]
enum FillFile {
    #[serde(rename = "bernoulli")]
    Bernoulli { p: f64 },
    #[serde(rename = "exact-floor")]
    ExactFloor { floor: usize },
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct PassFile {
    rule: String,
    #[serde(default = "default_outside")]
    outside: String,
    #[serde(default = "default_update")]
    update: String,
    #[serde(default = "default_border")]
    border: String,
    #[serde(default = "default_repeat")]
    repeat: u32,
}

fn default_rng() -> String {
    "xoshiro".into()
}
fn default_center() -> PointFile {
    PointFile::Named("center".into())
}
fn default_conn() -> u8 {
    4
}
fn default_outside() -> String {
    "floor".into()
}
fn default_update() -> String {
    "sync".into()
}
fn default_border() -> String {
    "none".into()
}
fn default_repeat() -> u32 {
    1
}

impl PointFile {
    fn to_point(&self, key: &str) -> Result<Point, RecipeError> {
        match self {
            PointFile::Named(s) => Point::parse(key, s),
            PointFile::At([y, x]) => Ok(Point::At(*y, *x)),
        }
    }
    fn from_point(p: Point) -> PointFile {
        match p {
            Point::Center => PointFile::Named("center".into()),
            Point::At(y, x) => PointFile::At([y, x]),
        }
    }
}

impl RecipeFile {
    fn into_recipe(self) -> Result<Recipe, RecipeError> {
        let passes = self
            .passes
            .iter()
            .enumerate()
            .map(|(i, p)| {
                let key = format!("pass {}", i + 1);
                Ok(Pass {
                    rule: p.rule.parse().map_err(|e| key_err(&key, e))?,
                    outside: p.outside.parse().map_err(|e| key_err(&key, e))?,
                    update: p.update.parse().map_err(|e| key_err(&key, e))?,
                    border: p.border.parse().map_err(|e| key_err(&key, e))?,
                    repeat: p.repeat,
                })
            })
            .collect::<Result<Vec<_>, RecipeError>>()?;
        Ok(Recipe {
            name: self.name,
            about: self.about.unwrap_or_default(),
            rows: self.rows,
            cols: self.cols,
            fill: match self.fill {
                FillFile::Bernoulli { p } => Fill::Bernoulli { p },
                FillFile::ExactFloor { floor } => Fill::ExactFloor { floor },
            },
            rng: self.rng.parse().map_err(|e| key_err("rng", e))?,
            passes,
            post: self
                .post
                .iter()
                .map(|s| s.parse().map_err(|e| key_err("post", e)))
                .collect::<Result<_, _>>()?,
            spawn: self.spawn.to_point("spawn")?,
            exit: self.exit.as_ref().map(|p| p.to_point("exit")).transpose()?,
            connectivity: self
                .connectivity
                .to_string()
                .parse()
                .map_err(|e| key_err("connectivity", e))?,
        })
    }

    fn from_recipe(r: &Recipe) -> RecipeFile {
        RecipeFile {
            name: r.name.clone(),
            about: (!r.about.is_empty()).then(|| r.about.clone()),
            rows: r.rows,
            cols: r.cols,
            rng: r.rng.to_string(),
            spawn: PointFile::from_point(r.spawn),
            exit: r.exit.map(PointFile::from_point),
            connectivity: match r.connectivity {
                Connectivity::Four => 4,
                Connectivity::Six => 6,
                Connectivity::Eight => 8,
            },
            post: r.post.iter().map(|p| p.to_string()).collect(),
            fill: match r.fill {
                Fill::Bernoulli { p } => FillFile::Bernoulli { p },
                Fill::ExactFloor { floor } => FillFile::ExactFloor { floor },
            },
            passes: r
                .passes
                .iter()
                .map(|p| PassFile {
                    rule: p.rule.to_string(),
                    outside: p.outside.to_string(),
                    update: p.update.to_string(),
                    border: p.border.to_string(),
                    repeat: p.repeat,
                })
                .collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    /// Every key's `value` set back gives the same recipe, for every preset and for
    /// recipes changed by `set` (hex, LtL and von Neumann rules, post lists, points).
    #[test]
    fn value_round_trips_through_set() {
        let mut recipes: Vec<Recipe> = crate::presets::NAMES
            .iter()
            .map(|n| crate::presets::preset(n).unwrap())
            .collect();
        let mut r = crate::presets::preset("classic-4-5").unwrap();
        r.set_many([
            ("rule", "B2/S34H"),
            ("connectivity", "6"),
            ("post", "remove-small 5+keep-largest"),
            ("exit", "3,4"),
            ("spawn", "10,11"),
            ("fill", "0.4137"),
        ])
        .unwrap();
        recipes.push(r);
        let mut r = crate::presets::preset("chapter-strict").unwrap();
        r.set_many([("rule", "R2,C0,M1,S8..12,B9..11,NM"), ("outside", "wrap")])
            .unwrap();
        recipes.push(r);
        for r in recipes {
            let mut shown = 0;
            for key in KEYS {
                let Some(v) = r.value(key) else { continue };
                shown += 1;
                let mut back = r.clone();
                back.set(key, &v).unwrap();
                assert_eq!(back, r, "{} {key}={v}", r.name);
            }
            assert!(shown >= 12, "{}: {shown} keys shown", r.name);
        }
        assert_eq!(
            crate::presets::preset("nethack-mines")
                .unwrap()
                .value("fill"),
            None
        );
        assert_eq!(
            crate::presets::preset("roguebasin").unwrap().value("nope"),
            None
        );
    }

    use super::*;

    /// A parse error quotes at most a cut of the offending line, however long the line.
    #[test]
    fn parse_errors_stay_short_for_huge_lines() {
        let text = format!("rows = 3\n{}\n", "a".repeat(1 << 20));
        let e = Recipe::from_toml(&text).unwrap_err().to_string();
        assert!(
            e.len() < 400 && !e.contains('\n'),
            "{} characters: {}",
            e.len(),
            &e[..200.min(e.len())]
        );
        assert!(e.contains("line 2") && e.contains("characters)"), "{e}");
    }

    /// The passes are bounded in number and in steps summed over them, not only per pass: a
    /// small file of many 100,000-step passes is refused (it asked for gigabytes), and the
    /// largest recipe within both limits is accepted.
    #[test]
    fn passes_and_their_total_steps_are_bounded() {
        let base = crate::presets::preset("classic-4-5").unwrap();
        let with = |n: usize, repeat: u32| {
            let mut r = base.clone();
            let mut p = base.passes[0];
            p.repeat = repeat;
            r.passes = vec![p; n];
            r
        };
        let text = with(500, MAX_REPEAT).to_toml();
        let e = Recipe::from_toml(&text).unwrap_err().to_string();
        assert!(e.contains("add up to 50000000 steps"), "{e}");
        let e = with(MAX_PASSES + 1, 1).validate().unwrap_err().to_string();
        assert!(e.contains("1001 passes are over the limit 1000"), "{e}");
        with(MAX_PASSES, (MAX_STEPS / MAX_PASSES as u64) as u32)
            .validate()
            .unwrap();
        with(1, MAX_REPEAT).validate().unwrap();
        let e = with(2, MAX_REPEAT / 2 + 1)
            .validate()
            .unwrap_err()
            .to_string();
        assert!(e.contains("100002 steps"), "{e}");
    }

    #[test]
    fn every_listed_key_is_a_set_key() {
        for key in KEYS {
            let mut r = crate::presets::preset("chapter-strict").unwrap();
            // Any value: the point is that the key is known (the error, if any, names it).
            match r.set(key, "?") {
                Err(RecipeError::UnknownKey(k)) => panic!("{k} is listed but not accepted"),
                Err(e) => assert!(e.to_string().starts_with(key), "{e}"),
                Ok(()) => {}
            }
        }
        let e = crate::presets::preset("chapter-strict")
            .unwrap()
            .set("colour", "red")
            .unwrap_err();
        assert!(e.to_string().contains(&KEYS.join(", ")), "{e}");
    }
}
