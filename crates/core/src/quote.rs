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

/// The longest run of non-blank characters [`tame`] leaves whole.
const MAX_TOKEN: usize = 2 * MAX_QUOTED;

/// A one-line message made safe to print, whatever input it repeats: control characters
/// (an escape sequence in a path could recolour or clear the terminal) shown escaped
/// (`\u{1b}`), and every run of non-blank characters longer than 160 cut to its first 50 and
/// last 30 characters with its length (`abc...xyz (100000 characters)`). Messages quote input
/// through [`quote`] already; this is the net under the ones that repeat it otherwise (a
/// parser's or a library's message, a path).
pub fn tame(line: &str) -> String {
    let mut out = String::with_capacity(line.len().min(4096));
    let mut token: Vec<char> = Vec::new();
    let flush = |token: &mut Vec<char>, out: &mut String| {
        let n = token.len();
        let piece = |cs: &[char]| -> String {
            cs.iter()
                .map(|c| match c {
                    c if c.is_control() => c.escape_unicode().to_string(),
                    c => c.to_string(),
                })
                .collect()
        };
        if n > MAX_TOKEN {
            out.push_str(&piece(&token[..50]));
            out.push_str("...");
            out.push_str(&piece(&token[n - 30..]));
            out.push_str(&format!(" ({n} characters)"));
        } else {
            out.push_str(&piece(token));
        }
        token.clear();
    };
    for c in line.chars() {
        if c == ' ' {
            flush(&mut token, &mut out);
            out.push(' ');
        } else {
            token.push(c);
        }
    }
    flush(&mut token, &mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tame_cuts_long_runs_and_escapes_controls() {
        assert_eq!(tame("unknown preset \"abc\""), "unknown preset \"abc\"");
        let long = format!("preset \"{}\": unknown", "x".repeat(100_000));
        let t = tame(&long);
        assert!(t.len() < 200, "{t}");
        assert!(t.starts_with("preset \"xxxx"), "{t}");
        // The run cut is the quoted input with its colon: 100,003 characters.
        assert!(t.ends_with("xx\": (100003 characters) unknown"), "{t}");
        assert_eq!(tame("a\u{1b}[31mred b"), "a\\u{1b}[31mred b");
        // A run of exactly 160 is left whole; 161 is cut.
        assert_eq!(tame(&"y".repeat(160)), "y".repeat(160));
        assert!(tame(&"y".repeat(161)).ends_with("(161 characters)"));
    }

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
