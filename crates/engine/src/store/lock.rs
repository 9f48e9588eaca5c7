//! One writer per folder: an OS advisory lock (`flock`, through `std::fs::File::try_lock`) on
//! `cavesweep.lock` inside the folder.
//!
//! The kernel releases the lock when its holder exits, however it exits (kill -9 included), so a
//! crash never leaves a stale lock behind, unlike a PID file. The file's *content* only names the
//! holder (pid, host, start time, command) so the second process can say who is in the way; the
//! content is never trusted for the decision. On NFS, Linux maps `flock` onto the server's
//! byte-range locks, so two machines sharing a folder also exclude each other.

use std::ffi::OsStr;
use std::fs::{File, TryLockError};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use rustix::fs::OFlags;

use crate::io::Folder;

/// The lock file's name inside a locked folder.
pub const LOCK_FILE: &str = "cavesweep.lock";

/// A held lock; released when dropped (or when the process dies).
#[derive(Debug)]
pub struct FolderLock {
    _file: File,
    path: PathBuf,
}

/// Why a folder could not be locked.
#[derive(Debug, thiserror::Error)]
pub enum LockError {
    /// Another process holds the lock: a writer, or (when taking it to write) readers.
    #[error("{dir} is in use by another cavesweep ({holder}); wait for it to finish or stop it")]
    Busy {
        /// The folder, as displayed.
        dir: String,
        /// The holder's own description from the lock file (pid, host, start time, command).
        holder: String,
    },
    /// A file named `cavesweep.lock` is there that no cavesweep wrote (it holds other text):
    /// it is the user's, so it is neither locked and rewritten nor removed.
    #[error("{path} is not a cavesweep lock file (it holds other text); move it away")]
    NotOurs {
        /// The lock file's path, as displayed.
        path: String,
    },
    /// The folder or its lock file could not be opened, or the lock not taken or described.
    #[error("cannot lock {path}")]
    Io {
        /// The lock file's path, as displayed.
        path: String,
        /// What the operating system reported.
        source: std::io::Error,
    },
}

/// This host's name, for the lock's description.
fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|_| "?".into())
}

/// Who holds a lock, as written into the lock file by [`FolderLock::acquire`].
fn describe_self(what: &str) -> String {
    format!(
        "pid {} on {}, since {}: {what}",
        std::process::id(),
        hostname(),
        humantime::format_rfc3339_seconds(std::time::SystemTime::now())
    )
}

impl FolderLock {
    /// Take the exclusive lock of `dir` (which must exist), describing the holder as `what`
    /// (e.g. the command line). Fails at once, naming the holder, if another process has it.
    /// Returns whether this call created the lock file (so a refusal can remove just that).
    ///
    /// The lock file is opened without following links and must be a regular file: a link
    /// planted at `cavesweep.lock` would otherwise have the lock text written into its target.
    pub fn acquire(dir: &Path, what: &str) -> Result<(FolderLock, bool), LockError> {
        let path = dir.join(LOCK_FILE);
        let io = |source| LockError::Io {
            path: path.display().to_string(),
            source,
        };
        let folder = Folder::open(dir).map_err(io)?;
        let name = OsStr::new(LOCK_FILE);
        // Never truncate on open: the current holder's description must survive our attempt.
        let (mut file, created) =
            match folder.open_regular(name, OFlags::RDWR | OFlags::CREATE | OFlags::EXCL, 0o666) {
                Ok(Some(f)) => (f, true),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                    match folder.open_regular(name, OFlags::RDWR, 0).map_err(io)? {
                        Some(f) => (f, false),
                        None => return Err(io(std::io::ErrorKind::NotFound.into())),
                    }
                }
                Ok(None) => return Err(io(std::io::ErrorKind::NotFound.into())),
                Err(e) => return Err(io(e)),
            };
        match file.try_lock() {
            Ok(()) => {}
            Err(TryLockError::WouldBlock) => {
                return Err(LockError::Busy {
                    dir: dir.display().to_string(),
                    holder: read_holder(&mut file),
                });
            }
            Err(TryLockError::Error(e)) => return Err(io(e)),
        }
        // A lock file found there is rewritten only when it is one: empty (a holder that died
        // before describing itself) or a holder's description. Anything else is a file of the
        // user's that happens to have the name.
        if !created && !is_lock_text(&mut file).map_err(io)? {
            return Err(LockError::NotOurs {
                path: path.display().to_string(),
            });
        }
        let text = describe_self(what);
        let write = |f: &mut File| -> std::io::Result<()> {
            f.set_len(0)?;
            f.seek(SeekFrom::Start(0))?;
            f.write_all(text.as_bytes())?;
            f.write_all(b"\n")
        };
        write(&mut file).map_err(io)?;
        Ok((FolderLock { _file: file, path }, created))
    }

    /// Take a shared lock of `dir` for reading it (`merge` inputs): several readers may hold
    /// it, no writer can start meanwhile. The lock file is opened read-only, so a folder on a
    /// read-only mount can be read; a folder without a lock file (or one this user may not
    /// read) gets no lock (`None`): a writer creates the file before it writes anything, and
    /// the caller checks the store's own consistency either way.
    pub fn acquire_shared(dir: &Path) -> Result<Option<FolderLock>, LockError> {
        let path = dir.join(LOCK_FILE);
        let io = |source| LockError::Io {
            path: path.display().to_string(),
            source,
        };
        let folder = Folder::open(dir).map_err(io)?;
        let mut file = match folder.open_regular(OsStr::new(LOCK_FILE), OFlags::RDONLY, 0) {
            Ok(Some(f)) => f,
            Ok(None) => return Ok(None),
            Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied => return Ok(None),
            Err(e) => return Err(io(e)),
        };
        match file.try_lock_shared() {
            Ok(()) => Ok(Some(FolderLock { _file: file, path })),
            Err(TryLockError::WouldBlock) => Err(LockError::Busy {
                dir: dir.display().to_string(),
                holder: read_holder(&mut file),
            }),
            Err(TryLockError::Error(e)) => Err(io(e)),
        }
    }

    /// The lock file's path (`DIR/cavesweep.lock`).
    pub fn path(&self) -> &Path {
        &self.path
    }
}

/// Whether the lock file holds what [`FolderLock::acquire`] writes: nothing, or one line
/// `pid N on HOST, since TIME: COMMAND` ([`describe_self`]; the command may hold line
/// breaks). Reads at most 64 KiB.
fn is_lock_text(file: &mut File) -> std::io::Result<bool> {
    let mut bytes = Vec::new();
    file.seek(SeekFrom::Start(0))?;
    file.take(64 << 10).read_to_end(&mut bytes)?;
    let Ok(text) = std::str::from_utf8(&bytes) else {
        return Ok(false);
    };
    let text = text.strip_suffix('\n').unwrap_or(text);
    if text.is_empty() {
        return Ok(true);
    }
    let Some(rest) = text.strip_prefix("pid ") else {
        return Ok(false);
    };
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    Ok(digits > 0 && rest[digits..].starts_with(" on ") && rest.contains(", since "))
}

/// The holder's self-description, read from the lock file (one line, never empty).
fn read_holder(file: &mut File) -> String {
    // The holder writes its description right after taking the lock; give it a moment.
    for _ in 0..20 {
        let mut s = String::new();
        if file.seek(SeekFrom::Start(0)).is_ok() && file.read_to_string(&mut s).is_ok() {
            let s = s.trim();
            if !s.is_empty() {
                return s.lines().next().unwrap_or(s).to_string();
            }
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    "a process that has not said who it is".into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn second_lock_is_refused_naming_the_first_and_released_on_drop() {
        let dir = std::env::temp_dir().join(format!("cavesweep-lock-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let (a, created) = FolderLock::acquire(&dir, "cavesweep sweep --seeds 0..10").unwrap();
        assert!(created);
        let e = FolderLock::acquire(&dir, "second").unwrap_err().to_string();
        assert!(e.contains("in use by another cavesweep"), "{e}");
        assert!(e.contains(&format!("pid {}", std::process::id())), "{e}");
        assert!(e.contains("--seeds 0..10"), "{e}");
        assert!(FolderLock::acquire_shared(&dir).is_err());
        drop(a);
        let s1 = FolderLock::acquire_shared(&dir).unwrap().unwrap();
        let s2 = FolderLock::acquire_shared(&dir).unwrap().unwrap();
        assert!(FolderLock::acquire(&dir, "writer").is_err());
        drop((s1, s2));
        assert!(!FolderLock::acquire(&dir, "writer").unwrap().1);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// A file of the user's named `cavesweep.lock` is refused and left as it was; an empty
    /// one, or one a dead holder described itself in, is taken over.
    #[test]
    fn a_lock_file_holding_other_text_is_refused_and_kept() {
        let dir = std::env::temp_dir().join(format!("cavesweep-lock-user-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        for text in ["USER DATA\n", "pid x on h, since t: c\n", "pid 1 at h\n"] {
            std::fs::write(dir.join(LOCK_FILE), text).unwrap();
            let e = FolderLock::acquire(&dir, "sweep").unwrap_err().to_string();
            assert!(e.contains("is not a cavesweep lock file"), "{e}");
            assert_eq!(std::fs::read_to_string(dir.join(LOCK_FILE)).unwrap(), text);
        }
        for text in [
            "",
            "pid 12 on host, since 2026-12-07T10:00:00Z: cavesweep sweep\n",
        ] {
            std::fs::write(dir.join(LOCK_FILE), text).unwrap();
            let (lock, created) = FolderLock::acquire(&dir, "mine").unwrap();
            assert!(!created);
            let now = std::fs::read_to_string(dir.join(LOCK_FILE)).unwrap();
            assert!(
                now.starts_with(&format!("pid {} on ", std::process::id())),
                "{now}"
            );
            drop(lock);
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_linked_lock_file_is_refused_and_its_target_untouched() {
        let dir = std::env::temp_dir().join(format!("cavesweep-lock-link-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("o")).unwrap();
        std::fs::write(dir.join("victim"), b"PRECIOUS").unwrap();
        std::os::unix::fs::symlink(dir.join("victim"), dir.join("o").join(LOCK_FILE)).unwrap();
        let e = crate::error::text(&FolderLock::acquire(&dir.join("o"), "x").unwrap_err());
        assert!(e.contains("symbolic link"), "{e}");
        assert!(FolderLock::acquire_shared(&dir.join("o")).is_err());
        assert_eq!(std::fs::read(dir.join("victim")).unwrap(), b"PRECIOUS");
        // A dangling link creates nothing.
        std::fs::remove_file(dir.join("victim")).unwrap();
        assert!(FolderLock::acquire(&dir.join("o"), "x").is_err());
        assert!(!dir.join("victim").exists());
        // No lock file: a reader takes no lock and creates nothing.
        std::fs::create_dir(dir.join("r")).unwrap();
        assert!(
            FolderLock::acquire_shared(&dir.join("r"))
                .unwrap()
                .is_none()
        );
        assert!(!dir.join("r").join(LOCK_FILE).exists());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
