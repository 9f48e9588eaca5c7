//! Quoting the user's input inside a one-line error: at most [`MAX_QUOTED`] characters of it,
//! so a 1 MB rule string or a 200 KB TOML value gives a readable line, not a 2 MB one.

/// The most characters of an input an error message repeats.
pub const MAX_QUOTED: usize = 80;

/// `s` as a Rust-style quoted string (`"abc"`), cut to [`MAX_QUOTED`] characters with an
/// ellipsis and the full length when longer: `"abcd"... (1048576 characters)`.
pub fn quote(s: &str) -> String {
    let n = s.chars().count();
    if n <= MAX_QUOTED {
        return format!("{s:?}");
    }
    let head: String = s.chars().take(MAX_QUOTED).collect();
    format!("{head:?}... ({n} characters)")
}

/// `s` itself when short, else cut like [`quote`] but without quotes (for messages that show
/// the input bare, as a TOML parser's excerpt).
pub fn cut(s: &str) -> String {
    let n = s.chars().count();
    if n <= MAX_QUOTED {
        return s.to_string();
    }
    let head: String = s.chars().take(MAX_QUOTED).collect();
    format!("{head}... ({n} characters)")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_inputs_are_cut_with_their_length() {
        assert_eq!(quote("B3/S23"), "\"B3/S23\"");
        let long = "x".repeat(1 << 20);
        let q = quote(&long);
        assert!(q.len() < 120, "{q}");
        assert!(q.ends_with("... (1048576 characters)"), "{q}");
        assert_eq!(
            cut(&"é".repeat(81)).chars().filter(|&c| c == 'é').count(),
            80
        );
        assert_eq!(quote(&"a".repeat(80)).len(), 82);
    }
}
