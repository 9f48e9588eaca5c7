//! `--vary KEY=VALUES`: one axis of a parameter grid, and the cartesian product of several.
//!
//! Value forms: a list `0.40,0.45`; an inclusive float range with a step `0.40:0.55:0.05`; a
//! half-open integer range `1..9` (like `--seeds`, `1..9` is 1 to 8) or an inclusive one `1..=8`.
//! Values are kept as the strings that [`crate::recipe::Recipe::set`] takes, so any `--set` key
//! can be varied and the CSV columns show exactly what was set.

use std::fmt;
use std::str::FromStr;

/// The most grid points a sweep may have (a guard against `fill=0:1:0.0000001`).
pub const MAX_POINTS: usize = 1_000_000;

/// Why a `--vary` flag was rejected.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum VaryError {
    #[error("--vary {0:?}: expected KEY=VALUES (e.g. fill=0.40,0.45 or steps=1..9)")]
    NotKeyValue(String),
    #[error("--vary {flag:?}: {msg}")]
    Bad { flag: String, msg: String },
    #[error("--vary: key {0:?} is varied twice")]
    Repeated(String),
    #[error("the parameter grid has {0} points, more than the limit of {MAX_POINTS}")]
    TooMany(usize),
}

/// One varied key and its values, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Vary {
    pub key: String,
    pub values: Vec<String>,
}

/// Shortest decimal that names `v` after rounding away float noise from repeated addition.
fn tidy(v: f64) -> String {
    let r = (v * 1e12).round() / 1e12;
    let s = format!("{r}");
    if s == "-0" { "0".into() } else { s }
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
        let values: Vec<String> = if let Some((a, b)) = spec.split_once("..") {
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
            if (end - a) as usize > MAX_POINTS {
                return Err(VaryError::TooMany((end - a) as usize));
            }
            (a..end).map(|v| v.to_string()).collect()
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
                    .ok_or_else(|| bad(format!("{t:?} is not a number")))
            };
            let (a, b, step) = (num(a)?, num(b)?, num(step)?);
            if step <= 0.0 || b < a {
                return Err(bad("need START <= END and STEP > 0".into()));
            }
            // Count with a tolerance so 0.40:0.55:0.05 includes 0.55.
            let n = ((b - a) / step + 1e-9).floor() as usize + 1;
            if n > MAX_POINTS {
                return Err(VaryError::TooMany(n));
            }
            (0..n).map(|i| tidy(a + i as f64 * step)).collect()
        } else {
            let v: Vec<String> = spec.split(',').map(|s| s.trim().to_string()).collect();
            if v.iter().any(String::is_empty) {
                return Err(bad("empty value in the list".into()));
            }
            v
        };
        Ok(Vary { key, values })
    }
}

impl fmt::Display for Vary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}={}", self.key, self.values.join(","))
    }
}

/// The cartesian product of the axes, the first axis varying slowest. One empty point when
/// there are no axes.
pub fn grid_points(varies: &[Vary]) -> Result<Vec<Vec<String>>, VaryError> {
    for (i, v) in varies.iter().enumerate() {
        if varies[..i].iter().any(|w| w.key == v.key) {
            return Err(VaryError::Repeated(v.key.clone()));
        }
    }
    let total = varies
        .iter()
        .try_fold(1usize, |n, v| n.checked_mul(v.values.len()))
        .filter(|&n| n <= MAX_POINTS)
        .ok_or(VaryError::TooMany(
            varies.iter().map(|v| v.values.len()).product::<usize>(),
        ))?;
    let mut points = Vec::with_capacity(total);
    for mut i in 0..total {
        let mut p = vec![String::new(); varies.len()];
        for (k, v) in varies.iter().enumerate().rev() {
            p[k] = v.values[i % v.values.len()].clone();
            i /= v.values.len();
        }
        points.push(p);
    }
    Ok(points)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vals(s: &str) -> Vec<String> {
        s.parse::<Vary>().unwrap().values
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
        let p = grid_points(&[a.clone(), b]).unwrap();
        assert_eq!(p.len(), 6);
        assert_eq!(p[0], ["0.4", "1"]);
        assert_eq!(p[1], ["0.4", "2"]);
        assert_eq!(p[3], ["0.5", "1"]);
        assert_eq!(grid_points(&[]).unwrap(), vec![Vec::<String>::new()]);
        assert!(matches!(
            grid_points(&[a.clone(), a]),
            Err(VaryError::Repeated(_))
        ));
    }
}
