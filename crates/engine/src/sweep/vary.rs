//! `--vary KEY=VALUES`: one axis of a parameter grid, and the cartesian product of several.
//!
//! Value forms: a list `0.40,0.45`; an inclusive float range with a step `0.40:0.55:0.05`; a
//! half-open integer range `1..9` (like `--seeds`, `1..9` is 1 to 8) or an inclusive one `1..=8`.
//! Values are kept as the strings that [`cavesweep_core::recipe::Recipe::set`] takes, so any `--set` key
//! can be varied and the CSV columns show exactly what was set.
//!
//! Ranges are not expanded: an axis knows its length and computes its i-th value on demand, and
//! a grid point's values come from its index ([`params`]), so a grid of a million points costs a
//! few bytes until a point is run. An axis prints (and is fingerprinted) as it was written.

use crate::error::{Param, Worded, Words};
use cavesweep_core::quote::quote;
use std::fmt;
use std::str::FromStr;

/// The most grid points a sweep may have (a guard against `fill=0:1:0.0000001`).
pub const MAX_POINTS: usize = 1_000_000;

/// Why an axis of a parameter grid was rejected. Messages name settings through [`Words`]
/// ([`Worded`]); `Display` is the library's words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum VaryError {
    /// The axis is not `KEY=VALUES`: no `=`, or an empty key or value list (the text given).
    NotKeyValue(String),
    /// The axis's values are malformed: a bad number, an empty range, a float range that is not
    /// `START:END:STEP` with `START <= END` and `STEP > 0`.
    Bad {
        /// The whole axis, `KEY=VALUES`.
        flag: String,
        /// What is wrong with the key or its values.
        msg: String,
    },
    /// The key cannot be varied: a `y,x` cell (`spawn`, `exit`) holds the comma that separates
    /// a list.
    Unvariable {
        /// The whole axis, `KEY=VALUES`.
        flag: String,
        /// The key.
        key: String,
    },
    /// The same key is given to two axes (the key).
    Repeated(String),
    /// The axes' product is over [`MAX_POINTS`] grid points (the product, as a `u128`).
    TooMany(u128),
}

impl Worded for VaryError {
    fn message(&self, w: &Words) -> String {
        match self {
            VaryError::NotKeyValue(s) => format!(
                "{}: expected KEY=VALUES (e.g. fill=0.40,0.45 or steps=1..9)",
                w.given(Param::Vary, s)
            ),
            VaryError::Bad { flag, msg } => format!("{}: {msg}", w.given(Param::Vary, flag)),
            VaryError::Unvariable { flag, key } => format!(
                "{}: {key} cannot be varied (its y,x value holds the comma that separates a list): run one sweep per position with {}",
                w.given(Param::Vary, flag),
                w.set(key, "Y,X")
            ),
            VaryError::Repeated(key) => format!(
                "{}: key {} is varied twice",
                w.name(Param::Vary).trim_end_matches('='),
                quote(key)
            ),
            VaryError::TooMany(n) => {
                format!("the parameter grid has {n} points, more than the limit of {MAX_POINTS}")
            }
        }
    }
}

impl fmt::Display for VaryError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message(&Words::LIBRARY))
    }
}

impl std::error::Error for VaryError {}

/// An axis's values.
#[derive(Debug, Clone)]
enum Values {
    List(Vec<String>),
    Ints { start: i64, n: usize },
    Floats { start: f64, step: f64, n: usize },
}

/// One varied key and its values, in order.
#[derive(Debug, Clone)]
pub struct Vary {
    /// The recipe key being varied (any key `--set` takes), also its CSV column's name.
    pub key: String,
    /// The values as written after `=` (trimmed): the axis's printed and fingerprinted form.
    spec: String,
    values: Values,
}

impl PartialEq for Vary {
    fn eq(&self, o: &Vary) -> bool {
        self.key == o.key && self.spec == o.spec
    }
}

impl Eq for Vary {}

/// Shortest decimal that names `v` after rounding away float noise from repeated addition.
fn tidy(v: f64) -> String {
    let r = (v * 1e12).round() / 1e12;
    let s = format!("{r}");
    if s == "-0" { "0".into() } else { s }
}

impl Vary {
    /// Number of values.
    pub fn len(&self) -> usize {
        match &self.values {
            Values::List(v) => v.len(),
            Values::Ints { n, .. } | Values::Floats { n, .. } => *n,
        }
    }

    /// Never true: an axis has at least one value.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The `i`-th value (`i < len()`).
    pub fn value(&self, i: usize) -> String {
        match &self.values {
            Values::List(v) => v[i].clone(),
            Values::Ints { start, .. } => (start + i as i64).to_string(),
            Values::Floats { start, step, .. } => tidy(start + i as f64 * step),
        }
    }

    /// Every value, in order (for small axes: reports, tests).
    pub fn values(&self) -> Vec<String> {
        (0..self.len()).map(|i| self.value(i)).collect()
    }
}

impl FromStr for Vary {
    type Err = VaryError;
    fn from_str(flag: &str) -> Result<Vary, VaryError> {
        let (key, spec) = flag
            .split_once('=')
            .ok_or_else(|| VaryError::NotKeyValue(flag.into()))?;
        let bad = |msg: String| VaryError::Bad {
            flag: flag.into(),
            msg,
        };
        let key = key.trim().to_string();
        let spec = spec.trim();
        if key.is_empty() || spec.is_empty() {
            return Err(VaryError::NotKeyValue(flag.into()));
        }
        check_key(&key, flag)?;
        // Rules are listed with `;` when one holds commas (Larger than Life's
        // `R5,C0,M1,S34..58,B34..45,NM`); a lone such rule is one value.
        let rule_list = key == "rule"
            && (spec.contains(';') || spec.parse::<cavesweep_core::rule::Rule>().is_ok());
        // A listed axis: its values, each non-empty, at most MAX_POINTS of them.
        let list = |sep: char| -> Result<Values, VaryError> {
            let v: Vec<String> = spec.split(sep).map(|s| s.trim().to_string()).collect();
            if v.iter().any(String::is_empty) {
                return Err(bad("empty value in the list".into()));
            }
            if v.len() > MAX_POINTS {
                return Err(VaryError::TooMany(v.len() as u128));
            }
            Ok(Values::List(v))
        };
        let values = if rule_list {
            list(';')?
        } else if let Some((a, b)) = spec.split_once("..") {
            let (b, inclusive) = match b.strip_prefix('=') {
                Some(b) => (b, true),
                None => (b, false),
            };
            let int = |t: &str| {
                t.trim().parse::<i64>().map_err(|_| {
                    bad(format!(
                        "{t:?} is not an integer (ranges a..b are integers)"
                    ))
                })
            };
            let (a, b) = (int(a)?, int(b)?);
            let end = if inclusive { b + 1 } else { b };
            if end <= a {
                return Err(bad(format!("the range {spec} is empty")));
            }
            let n = (end as i128 - a as i128) as u128;
            if n > MAX_POINTS as u128 {
                return Err(VaryError::TooMany(n));
            }
            Values::Ints {
                start: a,
                n: n as usize,
            }
        } else if spec.contains(':') {
            let parts: Vec<&str> = spec.split(':').collect();
            let [a, b, step] = parts[..] else {
                return Err(bad("a float range is START:END:STEP".into()));
            };
            let num = |t: &str| {
                t.trim()
                    .parse::<f64>()
                    .ok()
                    .filter(|v| v.is_finite())
                    .ok_or_else(|| {
                        bad(format!(
                            "{} is not a number",
                            cavesweep_core::quote::quote(t)
                        ))
                    })
            };
            let (a, b, step) = (num(a)?, num(b)?, num(step)?);
            if step <= 0.0 || b < a {
                return Err(bad("need START <= END and STEP > 0".into()));
            }
            // Count with a tolerance so 0.40:0.55:0.05 includes 0.55.
            let n = ((b - a) / step + 1e-9).floor() + 1.0;
            if n > MAX_POINTS as f64 {
                return Err(VaryError::TooMany(n.min(u128::MAX as f64) as u128));
            }
            Values::Floats {
                start: a,
                step,
                n: n as usize,
            }
        } else {
            list(',')?
        };
        let vary = Vary {
            key,
            spec: spec.to_string(),
            values,
        };
        vary.check_distinct().map_err(bad)?;
        Ok(vary)
    }
}

/// Refuse the keys whose values cannot be listed: a `y,x` cell holds the comma that separates
/// a list. `flag` is the text the error quotes.
pub fn check_key(key: &str, flag: &str) -> Result<(), VaryError> {
    if key == "spawn" || key == "exit" {
        return Err(VaryError::Unvariable {
            flag: flag.into(),
            key: key.into(),
        });
    }
    Ok(())
}

impl Vary {
    /// The axis of `key` over `values`, given as values rather than as `--vary` text (the
    /// Python API's `vary={"fill": [0.4, 0.45]}`). It prints as `KEY=V1,V2,...`, and that text
    /// must read back as the same axis (a merge rebuilds axes from it): a value that is empty,
    /// has spaces around it or holds `,`, `..` or `:` (which the text form reads as a separator
    /// or a range) is refused, as are repeated values and keys that cannot be varied.
    pub fn list(key: &str, values: Vec<String>) -> Result<Vary, VaryError> {
        // Rules holding commas (Larger than Life) are listed with `;`, as `--vary` reads them.
        let semi = key == "rule" && values.iter().any(|v| v.contains(','));
        let spec = values.join(if semi { ";" } else { "," });
        let bad = |msg: String| VaryError::Bad {
            flag: format!("{key}={spec}"),
            msg,
        };
        if key.is_empty() || key.trim() != key || values.is_empty() {
            return Err(VaryError::NotKeyValue(format!("{key}={spec}")));
        }
        check_key(key, &format!("{key}={spec}"))?;
        if values.len() > MAX_POINTS {
            return Err(VaryError::TooMany(values.len() as u128));
        }
        for v in &values {
            let rule = key == "rule" && v.parse::<cavesweep_core::rule::Rule>().is_ok();
            if v.is_empty()
                || v.trim() != v
                || v.contains(';')
                || (!rule && (v.contains([',', ':']) || v.contains("..")))
            {
                return Err(bad(format!(
                    "{} cannot be a listed value (empty, spaces around it, or a `,`, `..` or `:` \
                     that the axis's text form reads as a separator or a range)",
                    cavesweep_core::quote::quote(v)
                )));
            }
        }
        let vary = Vary {
            key: key.to_string(),
            spec: spec.clone(),
            values: Values::List(values),
        };
        vary.check_distinct().map_err(bad)?;
        Ok(vary)
    }

    /// The axis of `key` over the integers `start..end` (half-open, as `--vary KEY=A..B`).
    pub fn ints(key: &str, start: i64, end: i64) -> Result<Vary, VaryError> {
        let flag = format!("{key}={start}..{end}");
        if key.is_empty() || key.trim() != key {
            return Err(VaryError::NotKeyValue(flag));
        }
        flag.parse()
    }

    /// Refuse an axis that names one value twice (`steps=4,4`, `fill=0.40,0.4`, a float step
    /// too small to tell values apart): two identical grid points would be written, and the
    /// report cannot tell them apart.
    fn check_distinct(&self) -> Result<(), String> {
        let same = |a: &str, b: &str| match (a.parse::<f64>(), b.parse::<f64>()) {
            (Ok(x), Ok(y)) => x == y,
            _ => a == b,
        };
        match &self.values {
            Values::Ints { .. } => Ok(()),
            Values::Floats { n, .. } => {
                for i in 1..*n {
                    let (a, b) = (self.value(i - 1), self.value(i));
                    if same(&a, &b) {
                        return Err(format!(
                            "the step is too small: values {} and {i} are both {a}",
                            i - 1
                        ));
                    }
                }
                Ok(())
            }
            Values::List(v) => {
                // Numbers by value (0.40 and 0.4 are one fill; -0 is 0), other values by text.
                let mut numbers = std::collections::HashSet::new();
                let mut texts = std::collections::HashSet::new();
                for t in v {
                    let dup = match t.parse::<f64>() {
                        Ok(x) => !numbers.insert(if x == 0.0 { 0 } else { x.to_bits() }),
                        Err(_) => !texts.insert(t.as_str()),
                    };
                    if dup {
                        return Err(format!(
                            "{} is listed twice (every value of an axis must differ)",
                            cavesweep_core::quote::quote(t)
                        ));
                    }
                }
                Ok(())
            }
        }
    }
}

impl fmt::Display for Vary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}={}", self.key, self.spec)
    }
}

/// Check the axes (no key twice) and return the number of grid points of their product (1
/// when there are no axes).
pub fn point_count(varies: &[Vary]) -> Result<usize, VaryError> {
    for (i, v) in varies.iter().enumerate() {
        if varies[..i].iter().any(|w| w.key == v.key) {
            return Err(VaryError::Repeated(v.key.clone()));
        }
    }
    let total: u128 = varies
        .iter()
        .fold(1u128, |n, v| n.saturating_mul(v.len() as u128));
    if total > MAX_POINTS as u128 {
        return Err(VaryError::TooMany(total));
    }
    Ok(total as usize)
}

/// The values of grid point `index` of the product, one per axis; the first axis varies slowest.
pub fn params(varies: &[Vary], mut index: usize) -> Vec<String> {
    let mut p = vec![String::new(); varies.len()];
    for (k, v) in varies.iter().enumerate().rev() {
        p[k] = v.value(index % v.len());
        index /= v.len();
    }
    p
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vals(s: &str) -> Vec<String> {
        s.parse::<Vary>().unwrap().values()
    }

    #[test]
    fn value_forms() {
        assert_eq!(vals("fill=0.40,0.45"), ["0.40", "0.45"]);
        assert_eq!(vals("fill=0.40:0.55:0.05"), ["0.4", "0.45", "0.5", "0.55"]);
        assert_eq!(vals("steps=1..4"), ["1", "2", "3"]);
        assert_eq!(vals("steps=1..=4"), ["1", "2", "3", "4"]);
        assert_eq!(
            vals("rule=B5678/S5678,B5678/S45678"),
            ["B5678/S5678", "B5678/S45678"]
        );
        assert_eq!(vals("fill=0.1:0.3:0.1"), ["0.1", "0.2", "0.3"]);
        // Rules holding commas (Larger than Life) are listed with `;`; a lone one is one value.
        assert_eq!(
            vals("rule=B2/S013V;R2,C0,M1,S3..8,B4..6,NM;B2/S34H"),
            ["B2/S013V", "R2,C0,M1,S3..8,B4..6,NM", "B2/S34H"]
        );
        assert_eq!(
            vals("rule=R2,C0,M1,S3..8,B4..6,NN"),
            ["R2,C0,M1,S3..8,B4..6,NN"]
        );
        assert_eq!(vals("rule=B2/S013V,B2/S34H"), ["B2/S013V", "B2/S34H"]);
        let ltl = ["R2,C0,M1,S3..8,B4..6,NM".to_string(), "B3/S23H".to_string()];
        let axis = Vary::list("rule", ltl.to_vec()).unwrap();
        assert_eq!(axis.spec, "R2,C0,M1,S3..8,B4..6,NM;B3/S23H");
        assert_eq!(
            format!("rule={}", axis.spec)
                .parse::<Vary>()
                .unwrap()
                .values(),
            ltl
        );
        assert!(Vary::list("fill", vec!["0.4;0.5".into()]).is_err());
    }

    /// An axis made from values prints as text that reads back as the same axis; values the
    /// text form would misread are refused rather than silently split or turned into a range.
    #[test]
    fn from_values_round_trips() {
        let v = |xs: &[&str]| xs.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        for xs in [
            &["0.4", "0.45", "0.5"][..],
            &["B5678/S45678", "B678/S345678"],
            &["bridge+remove-small 3", "none"],
            &["7"],
        ] {
            let a = Vary::list("k", v(xs)).unwrap();
            let b: Vary = a.to_string().parse().unwrap();
            assert_eq!((a.values(), &a), (v(xs), &b));
        }
        for xs in [
            &["1,2"][..],
            &["1..3"],
            &["0.4:0.5:0.1"],
            &[" 0.4"],
            &[""],
            &["0.4", "0.40"],
            &[],
        ] {
            assert!(Vary::list("fill", v(xs)).is_err(), "{xs:?}");
        }
        assert!(Vary::list("spawn", v(&["1"])).is_err());
        assert!(Vary::list(" fill", v(&["1"])).is_err());
        let r = Vary::ints("steps", 1, 9).unwrap();
        assert_eq!((r.to_string(), r.len()), ("steps=1..9".to_string(), 8));
        assert!(Vary::ints("steps", 3, 3).is_err());
        assert!(matches!(
            Vary::ints("steps", 0, i64::MAX),
            Err(VaryError::TooMany(_))
        ));
    }

    #[test]
    fn rejections() {
        for bad in [
            "fill",
            "fill=",
            "=1",
            "steps=5..2",
            "steps=a..3",
            "fill=0.5:0.4:0.1",
            "fill=0:1:0",
            "fill=0:1",
            "fill=1,,2",
        ] {
            assert!(bad.parse::<Vary>().is_err(), "{bad}");
        }
        assert!(matches!(
            "fill=0:1:0.0000000001".parse::<Vary>(),
            Err(VaryError::TooMany(_))
        ));
    }

    #[test]
    fn product_first_axis_slowest() {
        let a: Vary = "fill=0.4,0.5".parse().unwrap();
        let b: Vary = "steps=1..4".parse().unwrap();
        let axes = [a.clone(), b];
        assert_eq!(point_count(&axes).unwrap(), 6);
        assert_eq!(params(&axes, 0), ["0.4", "1"]);
        assert_eq!(params(&axes, 1), ["0.4", "2"]);
        assert_eq!(params(&axes, 3), ["0.5", "1"]);
        assert_eq!(params(&axes, 5), ["0.5", "3"]);
        assert_eq!(point_count(&[]).unwrap(), 1);
        assert_eq!(params(&[], 0), Vec::<String>::new());
        assert!(matches!(
            point_count(&[a.clone(), a]),
            Err(VaryError::Repeated(_))
        ));
        // A million-point axis is not expanded, and prints as written.
        let big: Vary = "fill=0:0.999999:0.000001".parse().unwrap();
        assert_eq!(big.len(), 1_000_000);
        assert_eq!(big.value(999_999), "0.999999");
        assert_eq!(big.to_string(), "fill=0:0.999999:0.000001");
        assert!(matches!(
            point_count(&[big.clone(), "steps=1..3".parse().unwrap()]),
            Err(VaryError::TooMany(2_000_000))
        ));
    }
}
