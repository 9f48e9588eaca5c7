//! File input and output with the guarantees the CLI promises, used for every file cavesweep
//! reads from a user-given path or writes. The rules themselves live in [`folder`]; this module
//! gives them to callers that hold a path rather than a [`Folder`].
//!
//! Writing ([`AtomicFile`], [`write_atomic`]):
//! - never leaves a half-written file under its real name: bytes go to a temporary sibling
//!   created by this process (`O_EXCL`), which is flushed to disk and renamed over the
//!   destination (and the folder is synced);
//! - never writes *through* a symbolic link: the folder is the user's path, but a link at the
//!   destination itself is refused, as are a directory, FIFO, socket or device file there (as
//!   root, renaming a PNG over `/dev/full` would otherwise replace the device node);
//! - keeps the permissions of the file it replaces.
//!
//! Reading ([`read_to_string_capped`], [`folder::open_input`]): at most a given number of bytes,
//! and only regular files, checked before the first read, so `/dev/zero`, a FIFO or a
//! multi-gigabyte file given where a small text file belongs fails at once instead of blocking
//! or filling memory.

pub mod folder;

use std::fs;
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};

pub use folder::{Folder, FolderFile, Kind, open_input};

/// A reader that fails once a line grows past `limit` bytes: CSV inputs (`--seeds-from`) are
/// read record by record, and a file with no newline (or one absurd line) would otherwise grow
/// the parser's buffer without bound.
pub struct LineCapped<R> {
    inner: R,
    limit: usize,
    run: usize,
}

impl<R: Read> LineCapped<R> {
    /// Wrap `inner`, failing a read once a line exceeds `limit` bytes (the newline not counted).
    pub fn new(inner: R, limit: usize) -> LineCapped<R> {
        LineCapped {
            inner,
            limit,
            run: 0,
        }
    }
}

impl<R: Read> Read for LineCapped<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        for &b in &buf[..n] {
            self.run = if b == b'\n' { 0 } else { self.run + 1 };
            if self.run > self.limit {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidData,
                    format!("a line is longer than {}", human_bytes(self.limit as u64)),
                ));
            }
        }
        Ok(n)
    }
}

/// A file being written atomically at a path: [`AtomicFile::create`], write, then
/// [`AtomicFile::commit`]. Until the commit the destination is untouched; dropping an uncommitted
/// `AtomicFile` removes its temporary file. See the module docs for what it refuses.
pub struct AtomicFile {
    file: FolderFile,
}

impl AtomicFile {
    /// Start writing `path` (refusing a link or anything but a regular file there).
    pub fn create(path: &Path) -> io::Result<AtomicFile> {
        let (dir, name) = Folder::of_file(path)?;
        Ok(AtomicFile {
            file: dir.create_file(name)?,
        })
    }

    /// The file that the commit will replace.
    pub fn target(&self) -> PathBuf {
        self.file.path()
    }

    /// Flush everything to disk and rename the temporary file over the destination.
    pub fn commit(self) -> io::Result<()> {
        self.file.commit()
    }

    /// Flush the bytes written so far to disk, without committing: what can fail for want of
    /// space fails here, before any file of a set is renamed into place ([`write_files`]).
    pub fn sync(&mut self) -> io::Result<()> {
        self.file.sync()
    }
}

impl Write for AtomicFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.file.write(buf)
    }
    fn flush(&mut self) -> io::Result<()> {
        self.file.flush()
    }
}

/// Write `bytes` to `path` atomically (see the module docs).
pub fn write_atomic(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let mut f = AtomicFile::create(path)?;
    f.write_all(bytes)?;
    f.commit()
}

/// Write several files all or none: each is written under its temporary name and synced first,
/// and only when every one of them is on disk are they renamed into place. A folder that is
/// missing or read-only, a full disk or a refused destination therefore leaves every file as it
/// was (a rename that fails after others succeeded, which needs the folder to change under us,
/// is the one way to leave part of a set). A path given twice is written once; given twice for
/// different bytes it is refused before anything is written ([`ReplaceError::Twice`]). The
/// error names the file that failed.
pub fn write_files(files: &[(&Path, &[u8])]) -> Result<(), ReplaceError> {
    let mut unique: Vec<(&Path, &[u8], Option<PathBuf>)> = Vec::new();
    for &(path, bytes) in files {
        let key = real_folder_path(path);
        let twin = unique
            .iter()
            .find(|(p, _, k)| *p == path || (key.is_some() && *k == key));
        match twin {
            Some((_, b, _)) if *b == bytes => {}
            Some(_) => return Err(ReplaceError::Twice(path.to_path_buf())),
            None => unique.push((path, bytes, key)),
        }
    }
    let mut staged = Vec::with_capacity(unique.len());
    for &(path, bytes, _) in &unique {
        let unwritable = |source| ReplaceError::Unwritable {
            path: path.to_path_buf(),
            source,
        };
        let mut f = AtomicFile::create(path).map_err(unwritable)?;
        f.write_all(bytes).map_err(unwritable)?;
        f.sync().map_err(unwritable)?;
        staged.push((path, f));
    }
    for (path, f) in staged {
        f.commit().map_err(|source| ReplaceError::Unwritable {
            path: path.to_path_buf(),
            source,
        })?;
    }
    Ok(())
}

/// The file `path` names, as its folder's real path (links resolved, as `cd` follows them)
/// and its own name, the name itself not followed: `a.png`, `./a.png` and `/cwd/a.png` are
/// one file. `None` when the folder cannot be resolved (opening the file then says why).
pub fn real_folder_path(path: &Path) -> Option<PathBuf> {
    let name = path.file_name()?;
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    Some(fs::canonicalize(dir).ok()?.join(name))
}

/// Whether writing `bytes` to `path` loses nothing: `path` does not exist, or is not a regular
/// file (then [`write_atomic`] refuses it with its own error), or already holds exactly these
/// bytes, as when a deterministic command is rerun. Commands that write files a user did not
/// make through a store (`run --png`, `reproduce --out`, `bench --out`, `search --png-dir`)
/// ask this first and refuse a different file unless `--force`: an earlier result is never
/// replaced silently.
pub fn replaces_nothing(path: &Path, bytes: &[u8]) -> io::Result<bool> {
    let meta = match fs::symlink_metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(true),
        Err(e) => return Err(e),
    };
    if !meta.is_file() {
        return Ok(true);
    }
    if meta.len() != bytes.len() as u64 {
        return Ok(false);
    }
    let mut old = Vec::with_capacity(bytes.len());
    let (dir, name) = Folder::of_file(path)?;
    match dir.open_read(name)? {
        Some(f) => f.take(bytes.len() as u64 + 1).read_to_end(&mut old)?,
        None => return Ok(true),
    };
    Ok(old == bytes)
}

/// Why [`check_no_replace`] refused: a file holds other bytes, or cannot be read to tell.
#[derive(Debug, thiserror::Error)]
pub enum ReplaceError {
    /// The file exists with other contents (the caller's force replaces it).
    #[error("{} exists and holds something else", .0.display())]
    Holds(PathBuf),
    /// One file is named twice, for different contents (`run --png c.png --save c.png`, or a
    /// map saved as its own tileset's name): one would silently replace the other.
    #[error("{} is named for two different files", .0.display())]
    Twice(PathBuf),
    /// The file could not be read to compare it.
    #[error("cannot read {}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        source: io::Error,
    },
    /// Something that is never written is where the file goes (a link, folder, FIFO, socket
    /// or device): [`check_writable`].
    #[error("cannot write {}", path.display())]
    Unwritable {
        /// The file.
        path: PathBuf,
        /// What is there.
        source: io::Error,
    },
}

/// Check, before anything is written, that every path can be written the way cavesweep writes
/// files (atomically, by a rename over an absent name or a regular file): nothing else (a
/// link, folder, FIFO, socket or device) is there. A command writing several files calls this
/// on all of them first, with or without `--force` (which replaces other contents, never other
/// kinds), so a refusal leaves none written: a map without its tileset, a report mixing two
/// runs.
pub fn check_writable<'a>(paths: impl IntoIterator<Item = &'a Path>) -> Result<(), ReplaceError> {
    for path in paths {
        // A folder that cannot be opened (missing, not a folder, unreadable): the write says why.
        let kind = Folder::of_file(path)
            .and_then(|(dir, name)| dir.kind(name))
            .ok()
            .flatten();
        if let Some(kind) = kind.filter(|&k| k != Kind::File) {
            return Err(ReplaceError::Unwritable {
                path: path.to_path_buf(),
                source: folder::refused(kind),
            });
        }
    }
    Ok(())
}

impl ReplaceError {
    /// What the caller can do: force the replacement of a file that holds something else.
    pub fn remedy(&self) -> Option<crate::error::Remedy> {
        matches!(self, ReplaceError::Holds(_)).then_some(crate::error::Remedy::Force)
    }
}

/// Check every `(path, bytes)` with [`replaces_nothing`] before any is written, so a refusal
/// leaves all of them as they were. The error names the first file that would be replaced.
pub fn check_no_replace<'a>(
    files: impl IntoIterator<Item = (&'a Path, &'a [u8])>,
) -> Result<(), ReplaceError> {
    for (path, bytes) in files {
        match replaces_nothing(path, bytes) {
            Ok(true) => {}
            Ok(false) => return Err(ReplaceError::Holds(path.to_path_buf())),
            // The name itself cannot be a file (too long, or a file where a folder should be):
            // nothing to read, the write would fail.
            Err(source)
                if matches!(
                    source.kind(),
                    io::ErrorKind::InvalidFilename | io::ErrorKind::NotADirectory
                ) =>
            {
                return Err(ReplaceError::Unwritable {
                    path: path.to_path_buf(),
                    source,
                });
            }
            Err(source) => {
                return Err(ReplaceError::Read {
                    path: path.to_path_buf(),
                    source,
                });
            }
        }
    }
    Ok(())
}

/// Read `path` as UTF-8 text of at most `limit` bytes; a longer input is an error, found after
/// reading `limit + 1` bytes at most (so `/dev/zero` fails at once).
pub fn read_to_string_capped(path: &Path, limit: u64) -> io::Result<String> {
    let bytes = folder::read_all_capped(open_input(path)?, limit)?;
    String::from_utf8(bytes)
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidData, "not UTF-8 text"))
}

/// `4194304` -> `4 MiB`; other sizes in bytes.
pub(crate) fn human_bytes(n: u64) -> String {
    if n >= 1 << 20 && n.is_multiple_of(1 << 20) {
        format!("{} MiB", n >> 20)
    } else {
        format!("{n} bytes")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("cavesweep-io-{name}-{}", std::process::id()));
        if dir.exists() {
            fs::remove_dir_all(&dir).unwrap();
        }
        fs::create_dir_all(&dir).unwrap();
        dir
    }

    fn names(dir: &Path) -> Vec<String> {
        let mut v: Vec<String> = fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }

    #[test]
    fn replaces_nothing_only_for_missing_or_identical_files() {
        let dir = scratch("nothing");
        let p = dir.join("a.txt");
        assert!(replaces_nothing(&p, b"one").unwrap(), "missing");
        write_atomic(&p, b"one").unwrap();
        assert!(replaces_nothing(&p, b"one").unwrap(), "identical");
        assert!(
            !replaces_nothing(&p, b"two").unwrap(),
            "same length, other bytes"
        );
        assert!(!replaces_nothing(&p, b"one!").unwrap(), "longer");
        assert!(!replaces_nothing(&p, b"on").unwrap(), "shorter");
        assert!(
            replaces_nothing(&dir, b"x").unwrap(),
            "a folder is write_atomic's to refuse"
        );
        let q = dir.join("b.txt");
        let files: [(&Path, &[u8]); 2] = [(&q, b"new"), (&p, b"other")];
        let err = check_no_replace(files).unwrap_err();
        let words = crate::error::Words {
            another_out: "another --out",
            force: "--force",
            ..crate::error::Words::LIBRARY
        };
        let line = crate::error::line(&err, &words);
        assert!(
            matches!(&err, ReplaceError::Holds(p) if p.ends_with("a.txt")),
            "{err}"
        );
        assert!(
            line.ends_with("holds something else; pass --force to replace it"),
            "{line}"
        );
        assert_eq!(fs::read(&p).unwrap(), b"one");
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn writes_and_replaces() {
        let dir = scratch("replace");
        let p = dir.join("a.txt");
        write_atomic(&p, b"one").unwrap();
        write_atomic(&p, b"two").unwrap();
        assert_eq!(fs::read(&p).unwrap(), b"two");
        assert!(write_atomic(&dir.join("missing/b.txt"), b"x").is_err());
        assert_eq!(names(&dir), ["a.txt"], "no temporary file left behind");
        fs::remove_dir_all(&dir).unwrap();
    }

    #[cfg(unix)]
    #[test]
    fn never_writes_through_links() {
        use std::os::unix::fs::symlink;
        let dir = scratch("links");
        fs::create_dir(dir.join("sub")).unwrap();
        fs::write(dir.join("sub/real.txt"), b"old").unwrap();
        symlink("sub/real.txt", dir.join("link1")).unwrap();
        symlink(dir.join("link1"), dir.join("link2")).unwrap();
        symlink("made.txt", dir.join("dangling")).unwrap();
        symlink("loop-b", dir.join("loop-a")).unwrap();
        symlink("loop-a", dir.join("loop-b")).unwrap();
        let before = names(&dir);
        for l in ["link1", "link2", "dangling", "loop-a"] {
            let e = write_atomic(&dir.join(l), b"new").unwrap_err();
            assert!(e.to_string().contains("symbolic link"), "{l}: {e}");
        }
        assert_eq!(fs::read(dir.join("sub/real.txt")).unwrap(), b"old");
        assert!(
            !dir.join("made.txt").exists(),
            "a dangling link creates nothing"
        );
        assert_eq!(names(&dir), before, "nothing replaced, nothing left behind");
        // The folder part of the path is the user's own: a link to a folder is followed.
        symlink("sub", dir.join("to-sub")).unwrap();
        write_atomic(&dir.join("to-sub/new.txt"), b"n").unwrap();
        assert_eq!(fs::read(dir.join("sub/new.txt")).unwrap(), b"n");
        fs::remove_dir_all(&dir).unwrap();
    }

    #[cfg(unix)]
    #[test]
    fn keeps_permissions() {
        use std::os::unix::fs::PermissionsExt;
        let dir = scratch("perms");
        let p = dir.join("a.txt");
        fs::write(&p, b"old").unwrap();
        fs::set_permissions(&p, fs::Permissions::from_mode(0o640)).unwrap();
        write_atomic(&p, b"new").unwrap();
        assert_eq!(
            fs::metadata(&p).unwrap().permissions().mode() & 0o777,
            0o640
        );
        fs::remove_dir_all(&dir).unwrap();
    }

    #[cfg(unix)]
    #[test]
    fn refuses_what_is_not_a_regular_file() {
        use std::os::unix::fs::{FileTypeExt, symlink};
        let dir = scratch("refuse");
        let made = |args: &[&str]| {
            std::process::Command::new(args[0])
                .args(&args[1..])
                .current_dir(&dir)
                .stderr(std::process::Stdio::null())
                .status()
                .is_ok_and(|s| s.success())
        };
        assert!(made(&["mkfifo", "fifo"]));
        fs::create_dir(dir.join("d")).unwrap();
        symlink("d", dir.join("to-dir")).unwrap();
        let mut cases = vec![
            ("fifo", "FIFO"),
            ("d", "directory"),
            ("to-dir", "symbolic link"),
        ];
        // A device node of our own (a copy of /dev/null's numbers), only where we may make one
        // (root): never aim a test at a real /dev entry.
        if made(&["mknod", "dev", "c", "1", "3"]) {
            cases.push(("dev", "character device"));
        }
        let before = names(&dir);
        for (name, what) in cases {
            let e = write_atomic(&dir.join(name), b"x").unwrap_err();
            assert!(e.to_string().contains(what), "{name}: {e}");
        }
        assert!(
            fs::symlink_metadata(dir.join("fifo"))
                .unwrap()
                .file_type()
                .is_fifo()
        );
        assert!(fs::metadata(dir.join("d")).unwrap().is_dir());
        assert_eq!(names(&dir), before, "nothing replaced, nothing left behind");
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn uncommitted_file_leaves_nothing() {
        let dir = scratch("drop");
        let p = dir.join("a.txt");
        fs::write(&p, b"keep").unwrap();
        {
            let mut f = AtomicFile::create(&p).unwrap();
            f.write_all(b"half").unwrap();
        }
        assert_eq!(fs::read(&p).unwrap(), b"keep");
        assert_eq!(names(&dir), ["a.txt"]);
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn capped_read() {
        let dir = scratch("read");
        let p = dir.join("r.toml");
        fs::write(&p, "x".repeat(100)).unwrap();
        assert_eq!(read_to_string_capped(&p, 100).unwrap().len(), 100);
        let e = read_to_string_capped(&p, 99).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::FileTooLarge);
        assert!(e.to_string().contains("99 bytes"), "{e}");
        // A device is refused before the first read, not read up to the cap.
        let e = read_to_string_capped(Path::new("/dev/zero"), 4 << 20).unwrap_err();
        assert!(e.to_string().contains("character device"), "{e}");
        fs::write(&p, [0xff, 0xfe]).unwrap();
        assert_eq!(
            read_to_string_capped(&p, 100).unwrap_err().kind(),
            io::ErrorKind::InvalidData
        );
        fs::remove_dir_all(&dir).unwrap();
    }
}
