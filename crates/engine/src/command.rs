//! Command lines as an output folder records them, rendered in one place: the CLI's (its own
//! arguments, minus the flags that do not decide the results) and Python's (a call's values
//! rendered as the equivalent command line, by [`CommandLine`]), shell-quoted alike.
//!
//! Why the CLI records its own words rather than a rendering of the parsed plan: a folder's
//! `manifest.json` says how it was made, and the user's spelling (`--seeds 1e6`, the order of
//! `--set`s) is the one they can find in their shell history; a rendering would also change the
//! bytes older versions wrote for the same command.

/// The full command line of this process, shell-quoted, for the `runs` table and the lock.
/// Read with `args_os`: an argument that is not UTF-8 (a path such as `bad\xff`) is recorded
/// with `$'\xff'` escapes instead of panicking as `std::env::args` does.
pub fn this_argv() -> String {
    std::iter::once("cavesweep".to_string())
        .chain(std::env::args_os().skip(1).map(|a| shell_quote_os(&a)))
        .collect::<Vec<_>>()
        .join(" ")
}

/// The command line as recorded in an output folder: this process's arguments without the
/// flags in `with_value` (and their values) and those in `alone`, which do not decide the
/// results (`--threads`, `--out`, `--force`, ...), so the record is the same whatever machine,
/// thread count or shard ran it.
pub fn recorded_args(with_value: &[&str], alone: &[&str]) -> String {
    let mut out = vec!["cavesweep".to_string()];
    let mut args = std::env::args_os().skip(1);
    while let Some(a) = args.next() {
        let text = a.to_string_lossy();
        let flag = text.split('=').next().unwrap_or("");
        if with_value.contains(&flag) {
            if !text.contains('=') {
                args.next();
            }
        } else if !alone.contains(&flag) {
            out.push(shell_quote_os(&a));
        }
    }
    out.join(" ")
}

/// `line` (as [`recorded_args`] or [`CommandLine`] render it) without the flag `flag` and its
/// value (`--chunk 100`, `--chunk=100`). Words are split as a POSIX shell splits these lines:
/// at spaces outside `'...'` and `$'...'` quotes.
pub fn without_flag(line: &str, flag: &str) -> String {
    let mut words: Vec<String> = Vec::new();
    let mut word = String::new();
    let (mut quoted, mut dollar, mut escaped) = (false, false, false);
    for c in line.chars() {
        if quoted {
            word.push(c);
            if dollar && escaped {
                escaped = false;
            } else if dollar && c == '\\' {
                escaped = true;
            } else if c == '\'' {
                quoted = false;
            }
            continue;
        }
        match c {
            ' ' => {
                if !word.is_empty() {
                    words.push(std::mem::take(&mut word));
                }
            }
            '\'' => {
                dollar = word.ends_with('$');
                quoted = true;
                word.push(c);
            }
            _ => word.push(c),
        }
    }
    if !word.is_empty() {
        words.push(word);
    }
    let mut out = Vec::new();
    let mut it = words.into_iter();
    while let Some(w) = it.next() {
        if w == flag {
            it.next();
        } else if !w.starts_with(&format!("{flag}=")) {
            out.push(w);
        }
    }
    out.join(" ")
}

/// [`shell_quote`] for an argument that may not be UTF-8: such bytes are written as `\xHH`
/// inside bash's `$'...'` quoting, so the recorded line still reruns the command.
pub fn shell_quote_os(s: &std::ffi::OsStr) -> String {
    use std::os::unix::ffi::OsStrExt;
    if let Some(t) = s.to_str() {
        return shell_quote(t);
    }
    let mut q = String::from("$'");
    for &b in s.as_bytes() {
        match b {
            b'\\' => q.push_str("\\\\"),
            b'\'' => q.push_str("\\'"),
            0x20..=0x7e => q.push(b as char),
            _ => q.push_str(&format!("\\x{b:02x}")),
        }
    }
    q.push('\'');
    q
}

/// Quote `s` for a POSIX shell when it needs it.
pub fn shell_quote(s: &str) -> String {
    let plain = !s.is_empty()
        && s.bytes().all(|b| {
            b.is_ascii_alphanumeric() || b"-_./=:,+@%".contains(&b) || b == b'^' || b == b'~'
        });
    if plain {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

/// The command line equivalent to a library call (Python's `cavesweep.sweep(...)`): the
/// subcommand, the recipe's flags, then each flag with its value, shell-quoted as
/// [`recorded_args`] quotes the CLI's own.
#[derive(Debug, Clone)]
pub struct CommandLine(Vec<String>);

impl CommandLine {
    /// `cavesweep SUB`.
    pub fn new(sub: &str) -> CommandLine {
        CommandLine(vec!["cavesweep".to_string(), sub.to_string()])
    }

    /// `--preset NAME`.
    pub fn preset(&mut self, name: &str) {
        self.flag("--preset", name)
    }

    /// `--recipe FILE`: a recipe that is not a preset, named by the file it would be saved as.
    pub fn recipe_file(&mut self, file: &str) {
        self.flag("--recipe", file)
    }

    /// `--set KEY=VALUE`, one override of the recipe.
    pub fn set(&mut self, key: &str, value: &str) {
        self.flag("--set", &format!("{key}={value}"))
    }

    /// `FLAG VALUE`, the value quoted for a POSIX shell when it needs it.
    pub fn flag(&mut self, flag: &str, value: &str) {
        self.0.push(flag.to_string());
        self.0.push(shell_quote(value));
    }

    /// The line.
    pub fn render(&self) -> String {
        self.0.join(" ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_flag_is_taken_out_of_a_line() {
        let line = "cavesweep sweep --gate 'a --chunk 5' --chunk 100 --seeds 0..10 --chunk=7 $'x\\' --chunk 1'";
        assert_eq!(
            without_flag(line, "--chunk"),
            "cavesweep sweep --gate 'a --chunk 5' --seeds 0..10 $'x\\' --chunk 1'"
        );
    }

    #[test]
    fn values_are_quoted_as_a_shell_reads_them() {
        let mut c = CommandLine::new("sweep");
        c.preset("classic-4-5");
        c.set("fill", "0.5");
        c.flag("--gate", "components<=3 && floor_fraction>=0.4");
        c.flag("--seeds", "0..100");
        assert_eq!(
            c.render(),
            "cavesweep sweep --preset classic-4-5 --set fill=0.5 --gate 'components<=3 && floor_fraction>=0.4' --seeds 0..100"
        );
        assert_eq!(shell_quote("it's"), "'it'\\''s'");
        assert_eq!(shell_quote(""), "''");
        use std::os::unix::ffi::OsStrExt;
        assert_eq!(
            shell_quote_os(std::ffi::OsStr::from_bytes(b"a\xffb")),
            "$'a\\xffb'"
        );
    }
}
