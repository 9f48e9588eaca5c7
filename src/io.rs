//! File input and output with the guarantees the CLI promises, used for every file cavesweep
//! reads from a user-given path or writes.
//!
//! Writing ([`AtomicFile`], [`write_atomic`]):
//! - never leaves a half-written file under its real name: bytes go to a temporary sibling,
//!   which is flushed to disk and renamed over the destination (and the folder is synced);
//! - writes *through* symbolic links: when the destination is a link (or a chain of links), the
//!   file it points to is replaced and the link stays a link. Replacing the link itself would
//!   silently cut it from the file the user meant;
//! - replaces only regular files: a directory, FIFO, socket or device file at the destination
//!   (or at the end of its links) is refused with an error instead of being renamed over. As
//!   root, renaming a PNG over `/dev/full` would otherwise replace the device node;
//! - keeps the permissions of the file it replaces.
//!
//! Reading ([`read_to_string_capped`]): at most a given number of bytes, so a path such as
//! `/dev/zero` or a multi-gigabyte file given where a small text file belongs fails at once
//! instead of filling memory.

use std::fs::{self, File, Permissions};
use std::io::{self, BufWriter, Read, Write};
use std::path::{Path, PathBuf};

/// Longest chain of symbolic links followed (Linux's own limit for path resolution).
const MAX_LINKS: usize = 40;

/// What a non-regular file is, for the refusal message.
fn kind_name(ft: &fs::FileType) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if ft.is_fifo() {
            return "a FIFO (named pipe)";
        }
        if ft.is_char_device() {
            return "a character device";
        }
        if ft.is_block_device() {
            return "a block device";
        }
        if ft.is_socket() {
            return "a socket";
        }
    }
    if ft.is_dir() {
        "a directory"
    } else {
        "not a regular file"
    }
}

/// The path a write to `path` must replace: `path` itself, or the end of its chain of symbolic
/// links (which need not exist yet: a dangling link creates its target). Relative link targets
/// are resolved against the link's folder, as the kernel does.
pub fn resolve_links(path: &Path) -> io::Result<PathBuf> {
    let mut p = path.to_path_buf();
    for _ in 0..MAX_LINKS {
        match fs::symlink_metadata(&p) {
            Ok(m) if m.file_type().is_symlink() => {
                let target = fs::read_link(&p)?;
                p = match p.parent() {
                    Some(dir) if target.is_relative() => dir.join(target),
                    _ => target,
                };
            }
            Ok(_) => return Ok(p),
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(p),
            Err(e) => return Err(e),
        }
    }
    Err(io::Error::other(format!(
        "more than {MAX_LINKS} levels of symbolic links"
    )))
}

/// Check that `target` (`path` with its links resolved) may be replaced: it is absent or a
/// regular file. Returns the permissions to keep.
fn check_replaceable(path: &Path, target: &Path) -> io::Result<Option<Permissions>> {
    match fs::symlink_metadata(target) {
        Ok(m) if m.is_file() => Ok(Some(m.permissions())),
        Ok(m) => {
            let what = kind_name(&m.file_type());
            let kind = if m.is_dir() {
                io::ErrorKind::IsADirectory
            } else {
                io::ErrorKind::InvalidInput
            };
            // The caller names `path`; name the link's target only when it is another file.
            let subject = if target == path {
                "it".to_string()
            } else {
                format!("its link target {}", target.display())
            };
            Err(io::Error::new(
                kind,
                format!(
                    "{subject} is {what}; cavesweep writes only regular files and does not replace it"
                ),
            ))
        }
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e),
    }
}

/// The temporary sibling `target` is first written to (in the same folder, so the rename is
/// atomic): `NAME.tmpPID`.
fn temp_path(target: &Path) -> io::Result<PathBuf> {
    let name = target.file_name().ok_or_else(|| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{} does not name a file", target.display()),
        )
    })?;
    let mut tmp = name.to_os_string();
    tmp.push(format!(".tmp{}", std::process::id()));
    Ok(target.with_file_name(tmp))
}

/// Sync the folder holding `path`, so a completed rename survives a crash. Best effort: some
/// file systems cannot sync a folder, and the data itself is already on disk.
fn sync_parent(path: &Path) {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    if let Ok(d) = File::open(dir) {
        let _ = d.sync_all();
    }
}

/// A file being written atomically: create it with [`AtomicFile::create`], write to it, then
/// [`AtomicFile::commit`]. Until the commit the destination is untouched; dropping an uncommitted
/// `AtomicFile` removes its temporary file. See the module docs for what it refuses.
pub struct AtomicFile {
    path: PathBuf,
    target: PathBuf,
    tmp: PathBuf,
    perms: Option<Permissions>,
    file: Option<BufWriter<File>>,
}

impl AtomicFile {
    /// Start writing `path` (resolving symbolic links; refusing anything but a regular file).
    pub fn create(path: &Path) -> io::Result<AtomicFile> {
        let target = resolve_links(path)?;
        let perms = check_replaceable(path, &target)?;
        let tmp = temp_path(&target)?;
        // A leftover from a crashed run with the same process id is ours to replace; removing it
        // first (rather than truncating through it) means a link planted there is not followed.
        match fs::remove_file(&tmp) {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            Err(e) => return Err(e),
        }
        let file = File::options().write(true).create_new(true).open(&tmp)?;
        Ok(AtomicFile {
            path: path.to_path_buf(),
            target,
            tmp,
            perms,
            // Large writes: a grid sweep streams hundreds of MB of rows in ~2 KB pieces.
            file: Some(BufWriter::with_capacity(256 << 10, file)),
        })
    }

    /// The file that the commit will replace (the end of the destination's links).
    pub fn target(&self) -> &Path {
        &self.target
    }

    /// Flush everything to disk and rename the temporary file over the destination.
    pub fn commit(mut self) -> io::Result<()> {
        let file = self.file.take().expect("not yet committed");
        let result = (|| {
            let file = file.into_inner().map_err(|e| e.into_error())?;
            if let Some(p) = &self.perms {
                file.set_permissions(p.clone())?;
            }
            file.sync_all()?;
            drop(file);
            // Checked again: something may have appeared at the destination meanwhile.
            check_replaceable(&self.path, &self.target)?;
            fs::rename(&self.tmp, &self.target)
        })();
        match result {
            Ok(()) => {
                sync_parent(&self.target);
                Ok(())
            }
            Err(e) => {
                let _ = fs::remove_file(&self.tmp);
                Err(e)
            }
        }
    }
}

impl Write for AtomicFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.file.as_mut().expect("not yet committed").write(buf)
    }
    fn flush(&mut self) -> io::Result<()> {
        self.file.as_mut().expect("not yet committed").flush()
    }
}

impl Drop for AtomicFile {
    fn drop(&mut self) {
        if self.file.take().is_some() {
            let _ = fs::remove_file(&self.tmp);
        }
    }
}

/// Write `bytes` to `path` atomically (see the module docs).
pub fn write_atomic(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let mut f = AtomicFile::create(path)?;
    f.write_all(bytes)?;
    f.commit()
}

/// Whether writing `bytes` to `path` loses nothing: `path` does not exist, or is not a regular
/// file (then [`write_atomic`] refuses it with its own error), or already holds exactly these
/// bytes, as when a deterministic command is rerun. Commands that write files a user did not
/// make through a store (`run --png`, `reproduce --out`, `bench --out`, `search --png-dir`)
/// ask this first and refuse a different file unless `--force`: an earlier result is never
/// replaced silently.
pub fn replaces_nothing(path: &Path, bytes: &[u8]) -> io::Result<bool> {
    let meta = match fs::metadata(path) {
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
    File::open(path)?
        .take(bytes.len() as u64 + 1)
        .read_to_end(&mut old)?;
    Ok(old == bytes)
}

/// Check every `(path, bytes)` with [`replaces_nothing`] before any is written, so a refusal
/// leaves all of them as they were. The error names the first file that would be replaced.
pub fn check_no_replace<'a>(
    files: impl IntoIterator<Item = (&'a Path, &'a [u8])>,
) -> Result<(), String> {
    for (path, bytes) in files {
        match replaces_nothing(path, bytes) {
            Ok(true) => {}
            Ok(false) => {
                return Err(format!(
                    "{} exists and holds something else: pass --force to replace it",
                    path.display()
                ));
            }
            Err(e) => return Err(format!("cannot read {}: {e}", path.display())),
        }
    }
    Ok(())
}

/// Read `path` as UTF-8 text of at most `limit` bytes; a longer input is an error, found after
/// reading `limit + 1` bytes at most (so `/dev/zero` fails at once).
pub fn read_to_string_capped(path: &Path, limit: u64) -> io::Result<String> {
    let file = File::open(path)?;
    let mut bytes = Vec::new();
    file.take(limit.saturating_add(1)).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > limit {
        return Err(io::Error::new(
            io::ErrorKind::FileTooLarge,
            format!("longer than the limit of {}", human_bytes(limit)),
        ));
    }
    String::from_utf8(bytes)
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidData, "not UTF-8 text"))
}

/// `4194304` -> `4 MiB`; other sizes in bytes.
fn human_bytes(n: u64) -> String {
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
        assert!(err.contains("a.txt") && err.contains("--force"), "{err}");
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
    fn writes_through_links_and_keeps_them() {
        use std::os::unix::fs::symlink;
        let dir = scratch("links");
        fs::create_dir(dir.join("sub")).unwrap();
        fs::write(dir.join("sub/real.txt"), b"old").unwrap();
        // A relative link, resolved against its own folder, reached through a second link.
        symlink("sub/real.txt", dir.join("link1")).unwrap();
        symlink(dir.join("link1"), dir.join("link2")).unwrap();
        write_atomic(&dir.join("link2"), b"new").unwrap();
        assert_eq!(fs::read(dir.join("sub/real.txt")).unwrap(), b"new");
        for l in ["link1", "link2"] {
            let m = fs::symlink_metadata(dir.join(l)).unwrap();
            assert!(m.file_type().is_symlink(), "{l} is still a link");
        }
        // A dangling link creates its target.
        symlink("made.txt", dir.join("dangling")).unwrap();
        write_atomic(&dir.join("dangling"), b"x").unwrap();
        assert_eq!(fs::read(dir.join("made.txt")).unwrap(), b"x");
        // A loop is an error, not a hang.
        symlink("loop-b", dir.join("loop-a")).unwrap();
        symlink("loop-a", dir.join("loop-b")).unwrap();
        assert!(write_atomic(&dir.join("loop-a"), b"x").is_err());
        fs::remove_dir_all(&dir).unwrap();
    }

    #[cfg(unix)]
    #[test]
    fn keeps_permissions() {
        use std::os::unix::fs::PermissionsExt;
        let dir = scratch("perms");
        let p = dir.join("a.txt");
        fs::write(&p, b"old").unwrap();
        fs::set_permissions(&p, Permissions::from_mode(0o640)).unwrap();
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
            ("to-dir", "directory"),
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
        let e = read_to_string_capped(Path::new("/dev/zero"), 4 << 20).unwrap_err();
        assert!(e.to_string().contains("4 MiB"), "{e}");
        fs::write(&p, [0xff, 0xfe]).unwrap();
        assert_eq!(
            read_to_string_capped(&p, 100).unwrap_err().kind(),
            io::ErrorKind::InvalidData
        );
        fs::remove_dir_all(&dir).unwrap();
    }
}
