//! The report's output folder, and how a report proves which files in it are its own.
//!
//! A folder is "an earlier report" only if it holds cavesweep's marker, [`MARKER`]: a text file
//! naming every file a report wrote there (`index.html`, `img/heat-fill.png`, ...). A rerun
//! replaces or removes only files the marker names, and only regular files (never a link, never
//! through `img/` when `img` is a link); a file the new report would write that the marker does
//! not name is somebody else's, and the report is refused before anything is written. The marker
//! is written *before* the files (naming the old and the new ones), so a report killed halfway is
//! still recognised as ours and finished by the rerun; once every file is in place it is
//! rewritten to name exactly this report's files.
//!
//! A folder without the marker must be empty (or absent). Reports written before the marker
//! existed are therefore refused: the message says to choose another folder or empty that one.

use std::collections::BTreeSet;
use std::path::Path;

use super::ReportError;
use cavesweep_engine::io::{Folder, Kind};

/// The marker's name, inside the report folder.
pub const MARKER: &str = ".cavesweep-report";
/// The marker's first line.
const HEADER: &str = "cavesweep report: the files below were written by cavesweep report";
/// The longest marker read (a report writes a few hundred files at most).
const MAX_MARKER_BYTES: u64 = 1 << 20;

fn out_err(msg: String) -> ReportError {
    ReportError::Output(msg)
}

/// A report folder, checked: absent, empty, or an earlier report.
pub struct ReportDir {
    path: std::path::PathBuf,
    /// The folder, once it exists.
    folder: Option<Folder>,
    /// The files the earlier report's marker names.
    earlier: BTreeSet<String>,
}

/// A name a report writes: `NAME` or `img/NAME`, plain components only.
fn split(rel: &str) -> Option<(Option<&str>, &str)> {
    let ok = |c: &str| !c.is_empty() && c != "." && c != ".." && !c.contains('/');
    match rel.split_once('/') {
        Some(("img", name)) if ok(name) => Some((Some("img"), name)),
        None if ok(rel) => Some((None, rel)),
        _ => None,
    }
}

impl ReportDir {
    /// Check `out` before any work: it is absent, an empty folder, or a folder carrying the
    /// marker. Nothing is created or written yet. `default`: `out` is the name cavesweep chose
    /// (`DIR/report`), so a link there is refused, not followed (a folder the user names may be
    /// a link they made).
    pub fn check(out: &Path, default: bool) -> Result<ReportDir, ReportError> {
        let shown = out.display();
        let mut dir = ReportDir {
            path: out.to_path_buf(),
            folder: None,
            earlier: BTreeSet::new(),
        };
        if default && std::fs::symlink_metadata(out).is_ok_and(|m| m.file_type().is_symlink()) {
            return Err(out_err(format!(
                "{shown} is a symbolic link; cavesweep does not follow links it did not create: \
                 remove it, or name the report folder with --out"
            )));
        }
        match std::fs::metadata(out) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(dir),
            Err(e) => return Err(out_err(format!("cannot read {shown}: {e}"))),
            Ok(m) if !m.is_dir() => return Err(out_err(format!("--out {shown} is not a folder"))),
            Ok(_) => {}
        }
        let folder = Folder::open(out).map_err(|e| out_err(format!("cannot read {shown}: {e}")))?;
        let entries = folder
            .entries()
            .map_err(|e| out_err(format!("cannot read {shown}: {e}")))?;
        match folder.read_capped(MARKER, MAX_MARKER_BYTES) {
            Ok(Some(bytes)) => {
                let text = String::from_utf8_lossy(&bytes);
                let mut lines = text.lines();
                if lines.next() != Some(HEADER) {
                    return Err(out_err(format!(
                        "{} is not a cavesweep report marker; choose another --out",
                        folder.join(MARKER).display()
                    )));
                }
                dir.earlier = lines
                    .filter(|l| split(l).is_some())
                    .map(str::to_string)
                    .collect();
            }
            Ok(None) if entries.is_empty() => {}
            Ok(None) => {
                return Err(out_err(format!(
                    "--out {shown} is not empty and holds no earlier report (no {MARKER} marker); choose another folder"
                )));
            }
            Err(e) => return Err(out_err(format!("--out {shown}: {e}"))),
        }
        if let Some(k) = folder
            .kind("img")
            .map_err(|e| out_err(format!("cannot read {}: {e}", folder.join("img").display())))?
            && k != Kind::Dir
        {
            return Err(out_err(format!(
                "{} is {}, where the report keeps its pictures; cavesweep does not follow or replace it: move it away",
                folder.join("img").display(),
                k.name()
            )));
        }
        dir.folder = Some(folder);
        Ok(dir)
    }

    /// Check that every file in `names` may be written (absent, or a regular file the earlier
    /// report wrote), then create the folder and write the marker naming the earlier files and
    /// these. A refusal writes nothing.
    pub fn begin(&mut self, names: &[String]) -> Result<(), ReportError> {
        for rel in names {
            let (sub, name) = split(rel).expect("report file names are plain");
            let Some(folder) = &self.folder else { break };
            let kind = match sub {
                None => folder.kind(name),
                Some(s) => match folder.kind(s) {
                    Ok(Some(_)) => folder.sub(s, false).and_then(|(d, _)| d.kind(name)),
                    other => other.map(|_| None),
                },
            }
            .map_err(|e| {
                out_err(format!(
                    "cannot read {}: {e}",
                    self.path.join(rel).display()
                ))
            })?;
            match kind {
                None => {}
                Some(Kind::File) if self.earlier.contains(rel) => {}
                Some(k) => {
                    return Err(out_err(format!(
                        "{} is {} that no earlier report in {} wrote; cavesweep does not replace it: choose another --out or move it away",
                        self.path.join(rel).display(),
                        k.name(),
                        self.path.display()
                    )));
                }
            }
        }
        let (folder, _) = Folder::create(&self.path)
            .map_err(|e| out_err(format!("cannot create {}: {e}", self.path.display())))?;
        folder.sub("img", true).map_err(|e| {
            out_err(format!(
                "cannot create {}: {e}",
                folder.join("img").display()
            ))
        })?;
        let all: BTreeSet<String> = self.earlier.iter().chain(names).cloned().collect();
        self.folder = Some(folder);
        self.write_marker(&all)?;
        self.earlier = all;
        Ok(())
    }

    fn write_marker(&self, names: &BTreeSet<String>) -> Result<(), ReportError> {
        let mut text = format!("{HEADER}\n");
        for n in names {
            text.push_str(n);
            text.push('\n');
        }
        self.put_raw(MARKER, text.as_bytes())
    }

    fn put_raw(&self, rel: &str, bytes: &[u8]) -> Result<(), ReportError> {
        let folder = self.folder.as_ref().expect("begun");
        let (sub, name) = split(rel).expect("report file names are plain");
        let r = match sub {
            None => folder.write(name, bytes),
            Some(s) => folder.sub(s, false).and_then(|(d, _)| d.write(name, bytes)),
        };
        r.map_err(|e| {
            out_err(format!(
                "cannot write {}: {e}",
                self.path.join(rel).display()
            ))
        })
    }

    /// Write one of the files named to [`ReportDir::begin`].
    pub fn put(&self, rel: &str, bytes: &[u8]) -> Result<(), ReportError> {
        debug_assert!(self.earlier.contains(rel), "{rel} was not announced");
        self.put_raw(rel, bytes)
    }

    /// Every file is written: remove the earlier report's files this one did not write (regular
    /// files only), and leave the marker naming exactly `names`.
    pub fn finish(&mut self, names: &[String]) -> Result<(), ReportError> {
        let folder = self.folder.as_ref().expect("begun");
        let keep: BTreeSet<String> = names.iter().cloned().collect();
        for rel in self.earlier.difference(&keep) {
            let (sub, name) = split(rel).expect("report file names are plain");
            // Best effort: a stale picture left behind is harmless, and never a reason to fail.
            let _ = match sub {
                None => folder.remove_file(name),
                Some(s) => folder.sub(s, false).and_then(|(d, _)| d.remove_file(name)),
            };
        }
        self.write_marker(&keep)?;
        self.earlier = keep;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> std::path::PathBuf {
        let d =
            std::env::temp_dir().join(format!("cavesweep-reportdir-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        d
    }

    #[test]
    fn only_marked_files_are_replaced_or_removed() {
        let d = scratch("marked");
        let names = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let mut r = ReportDir::check(&d, false).unwrap();
        let first = names(&["index.html", "img/a.png", "img/b.png"]);
        r.begin(&first).unwrap();
        for n in &first {
            r.put(n, n.as_bytes()).unwrap();
        }
        r.finish(&first).unwrap();
        // The user adds files of their own; a rerun writes a, c and index.html.
        std::fs::write(d.join("notes.txt"), b"mine").unwrap();
        std::fs::write(d.join("img/logo.png"), b"mine").unwrap();
        let second = names(&["index.html", "img/a.png", "img/c.png"]);
        let mut r = ReportDir::check(&d, false).unwrap();
        r.begin(&second).unwrap();
        for n in &second {
            r.put(n, b"2").unwrap();
        }
        r.finish(&second).unwrap();
        assert!(
            !d.join("img/b.png").exists(),
            "the earlier report's stale picture is removed"
        );
        assert_eq!(std::fs::read(d.join("img/logo.png")).unwrap(), b"mine");
        assert_eq!(std::fs::read(d.join("notes.txt")).unwrap(), b"mine");
        // A report that would write over the user's file is refused, writing nothing.
        let third = names(&["index.html", "img/logo.png"]);
        let mut r = ReportDir::check(&d, false).unwrap();
        let e = r.begin(&third).err().unwrap().to_string();
        assert!(e.contains("logo.png"), "{e}");
        assert_eq!(std::fs::read(d.join("img/logo.png")).unwrap(), b"mine");
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn unmarked_folders_and_linked_img_are_refused() {
        let d = scratch("unmarked");
        std::fs::create_dir_all(d.join("img")).unwrap();
        std::fs::write(d.join("index.html"), b"<html>mine").unwrap();
        assert!(ReportDir::check(&d, false).is_err());
        std::fs::remove_dir_all(&d).unwrap();
        let other = scratch("other");
        std::fs::create_dir_all(&other).unwrap();
        std::fs::create_dir_all(&d).unwrap();
        std::os::unix::fs::symlink(&other, d.join("img")).unwrap();
        std::fs::write(d.join(MARKER), format!("{HEADER}\nimg/a.png\n")).unwrap();
        let e = ReportDir::check(&d, false).err().unwrap().to_string();
        assert!(e.contains("symbolic link"), "{e}");
        std::fs::remove_dir_all(&d).unwrap();
        std::fs::remove_dir_all(&other).unwrap();
    }
}
