//! An open folder, and every file operation cavesweep performs inside one, made relative to the
//! folder's descriptor (`openat`, `renameat`, `unlinkat`, `fstatat`) and never following a
//! symbolic link inside it.
//!
//! This is the one place the file-safety model (README, "What cavesweep touches") is enforced:
//! - the folder itself is the path the user named (following their links to it, as `cd` would);
//!   everything *inside* it is reached without following links, so a link planted where
//!   cavesweep expects its own file is refused, never written through or removed;
//! - files are created with `O_EXCL` (a temporary name this process owns), filled, synced and
//!   renamed over the destination only when the destination is absent or a regular file;
//! - only regular files are removed, and only those the caller proves are its own (recorded in
//!   a store or a report marker, or created by this process);
//! - reads open with `O_NONBLOCK` and check the kind with `fstat` before any byte is read, so a
//!   FIFO, socket or device is refused at once instead of blocking the process forever.
//!
//! Holding the descriptor (rather than re-resolving a path for every operation) also means a
//! folder renamed or replaced by a link while cavesweep runs cannot redirect its writes.

use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::io::{self, BufWriter, Read, Write};
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use rustix::fs::{AtFlags, CWD, FileType, Mode, OFlags};

/// What an entry of a folder is, seen without following links.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A regular file: the only kind cavesweep reads, writes or removes.
    File,
    /// A directory (a folder cavesweep may open, never remove).
    Dir,
    /// A symbolic link: never followed, written through, replaced or removed.
    Link,
    /// A FIFO, socket or device: never opened, written or removed.
    Special(&'static str),
}

impl Kind {
    fn of(ft: FileType) -> Kind {
        match ft {
            FileType::RegularFile => Kind::File,
            FileType::Directory => Kind::Dir,
            FileType::Symlink => Kind::Link,
            FileType::Fifo => Kind::Special("a FIFO (named pipe)"),
            FileType::Socket => Kind::Special("a socket"),
            FileType::CharacterDevice => Kind::Special("a character device"),
            FileType::BlockDevice => Kind::Special("a block device"),
            FileType::Unknown => Kind::Special("not a regular file"),
        }
    }

    /// `a symbolic link`, `a directory`, ...: for messages.
    pub fn name(self) -> &'static str {
        match self {
            Kind::File => "a regular file",
            Kind::Dir => "a directory",
            Kind::Link => "a symbolic link",
            Kind::Special(s) => s,
        }
    }
}

/// The error for an entry cavesweep will not touch because of its kind. Like the standard
/// library's errors it does not name the path: the caller's message does.
pub fn refused(kind: Kind) -> io::Error {
    let why = match kind {
        Kind::Link => "cavesweep does not follow or replace links it did not create",
        _ => "cavesweep reads and writes only regular files",
    };
    let errkind = if kind == Kind::Dir {
        io::ErrorKind::IsADirectory
    } else {
        io::ErrorKind::InvalidInput
    };
    io::Error::new(errkind, format!("it is {}; {why}", kind.name()))
}

/// The error for a regular file with other names (hard links) where cavesweep would write in
/// place: the write would change every name of it, files cavesweep did not write among them.
pub fn hard_linked(links: u64) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidInput,
        format!(
            "it has {links} names (hard links); cavesweep writes this file in place and would \
             change the others too: remove them or choose another name"
        ),
    )
}

/// An open folder ([`Folder::try_clone`] duplicates the descriptor).
#[derive(Debug)]
pub struct Folder {
    fd: OwnedFd,
    path: PathBuf,
}

/// One name inside a folder: a single path component, never `..` or empty.
fn component(name: &OsStr) -> io::Result<&OsStr> {
    let b = name.as_bytes();
    if b.is_empty() || b == b"." || b == b".." || b.contains(&b'/') || b.contains(&0) {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{:?} does not name a file", name),
        ));
    }
    Ok(name)
}

impl Folder {
    /// Open the existing folder `path` (the user's own path: links to it are followed).
    pub fn open(path: &Path) -> io::Result<Folder> {
        let p = if path.as_os_str().is_empty() {
            Path::new(".")
        } else {
            path
        };
        let fd = rustix::fs::openat(
            CWD,
            p,
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .map_err(io::Error::from)?;
        Ok(Folder {
            fd,
            path: path.to_path_buf(),
        })
    }

    /// Open `path`, creating it (and its parents) first if it does not exist.
    /// Returns whether this call created it.
    pub fn create(path: &Path) -> io::Result<(Folder, bool)> {
        let existed = std::fs::symlink_metadata(path).is_ok();
        if !existed {
            std::fs::create_dir_all(path)?;
        }
        Ok((Folder::open(path)?, !existed))
    }

    /// Open the folder holding the file `path` names, and that file's name in it.
    pub fn of_file(path: &Path) -> io::Result<(Folder, OsString)> {
        let name = path.file_name().ok_or_else(|| {
            io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("{} does not name a file", path.display()),
            )
        })?;
        // A bare name's parent is "": the current folder, shown as nothing in messages.
        let dir = path.parent().unwrap_or(Path::new(""));
        Ok((Folder::open(dir)?, name.to_os_string()))
    }

    /// Another handle on the same open folder (the descriptor duplicated, so it still points at the
    /// folder this one opened even if the path has since been renamed or replaced).
    pub fn try_clone(&self) -> io::Result<Folder> {
        Ok(Folder {
            fd: self.fd.try_clone()?,
            path: self.path.clone(),
        })
    }

    /// The path the folder was opened by (for messages).
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// `path/name`, for messages.
    pub fn join(&self, name: impl AsRef<OsStr>) -> PathBuf {
        self.path.join(name.as_ref())
    }

    /// What `name` is, without following a link; `None` when absent.
    pub fn kind(&self, name: impl AsRef<OsStr>) -> io::Result<Option<Kind>> {
        let name = component(name.as_ref())?;
        match rustix::fs::statat(&self.fd, name, AtFlags::SYMLINK_NOFOLLOW) {
            Ok(st) => Ok(Some(Kind::of(FileType::from_raw_mode(st.st_mode)))),
            Err(rustix::io::Errno::NOENT) => Ok(None),
            Err(e) => Err(e.into()),
        }
    }

    /// The size and permission bits of the regular file `name`, if it is one.
    fn file_stat(&self, name: &OsStr) -> io::Result<Option<(u64, u32)>> {
        match rustix::fs::statat(&self.fd, name, AtFlags::SYMLINK_NOFOLLOW) {
            Ok(st) if FileType::from_raw_mode(st.st_mode) == FileType::RegularFile => {
                Ok(Some((st.st_size as u64, st.st_mode & 0o7777)))
            }
            Ok(st) => Err(refused(Kind::of(FileType::from_raw_mode(st.st_mode)))),
            Err(rustix::io::Errno::NOENT) => Ok(None),
            Err(e) => Err(e.into()),
        }
    }

    /// Every entry's name and kind (not following links), sorted by name.
    pub fn entries(&self) -> io::Result<Vec<(OsString, Kind)>> {
        let dir = rustix::fs::Dir::read_from(&self.fd).map_err(io::Error::from)?;
        let mut out = Vec::new();
        for entry in dir {
            let entry = entry.map_err(io::Error::from)?;
            let name = OsStr::from_bytes(entry.file_name().to_bytes());
            if name == "." || name == ".." {
                continue;
            }
            let kind = match entry.file_type() {
                FileType::Unknown => match self.kind(name)? {
                    Some(k) => k,
                    None => continue,
                },
                ft => Kind::of(ft),
            };
            out.push((name.to_os_string(), kind));
        }
        out.sort_by(|a, b| a.0.cmp(&b.0));
        Ok(out)
    }

    /// Open the subfolder `name`, creating it when `create` and it is absent. A link or
    /// anything but a directory at `name` is refused. Returns whether this call created it.
    pub fn sub(&self, name: impl AsRef<OsStr>, create: bool) -> io::Result<(Folder, bool)> {
        let name = component(name.as_ref())?;
        let mut made = false;
        if create {
            match rustix::fs::mkdirat(&self.fd, name, Mode::from_raw_mode(0o777)) {
                Ok(()) => made = true,
                Err(rustix::io::Errno::EXIST) => {}
                Err(e) => return Err(e.into()),
            }
        }
        let path = self.join(name);
        match rustix::fs::openat(
            &self.fd,
            name,
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::empty(),
        ) {
            Ok(fd) => Ok((Folder { fd, path }, made)),
            Err(rustix::io::Errno::NOTDIR | rustix::io::Errno::LOOP) => {
                let kind = self.kind(name)?.unwrap_or(Kind::Special("not a folder"));
                Err(refused(kind))
            }
            Err(e) => Err(e.into()),
        }
    }

    /// Open the regular file `name` for reading. A link, FIFO, socket or device is refused
    /// before anything can block; `Ok(None)` when absent.
    pub fn open_read(&self, name: impl AsRef<OsStr>) -> io::Result<Option<File>> {
        let name = component(name.as_ref())?;
        let fd = match rustix::fs::openat(
            &self.fd,
            name,
            OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::NOCTTY | OFlags::CLOEXEC,
            Mode::empty(),
        ) {
            Ok(fd) => fd,
            Err(rustix::io::Errno::NOENT) => return Ok(None),
            Err(rustix::io::Errno::LOOP) => return Err(refused(Kind::Link)),
            Err(e) => return Err(e.into()),
        };
        regular_blocking(fd).map(Some)
    }

    /// Read the regular file `name` whole, at most `limit` bytes (longer is an error).
    pub fn read_capped(&self, name: impl AsRef<OsStr>, limit: u64) -> io::Result<Option<Vec<u8>>> {
        let name = name.as_ref();
        match self.open_read(name)? {
            None => Ok(None),
            Some(f) => read_all_capped(f, limit).map(Some),
        }
    }

    /// Start writing `name` atomically (see [`FolderFile`]): refused at once when `name` is a
    /// link, a folder or a special file.
    pub fn create_file(&self, name: impl AsRef<OsStr>) -> io::Result<FolderFile> {
        let name = component(name.as_ref())?.to_os_string();
        let perms = self.file_stat(&name)?.map(|(_, mode)| mode);
        let (tmp, fd) = self.create_temp(&name)?;
        Ok(FolderFile {
            dir: self.try_clone()?,
            name,
            tmp,
            perms,
            file: Some(BufWriter::with_capacity(256 << 10, File::from(fd))),
        })
    }

    /// Create `NAME.tmpPID` (or `NAME.tmpPIDn` when that exists: a leftover we cannot prove is
    /// ours is left alone, never removed or truncated) with `O_EXCL`.
    fn create_temp(&self, name: &OsStr) -> io::Result<(OsString, OwnedFd)> {
        let pid = std::process::id();
        for n in 0..1000u32 {
            let mut tmp = name.to_os_string();
            if n == 0 {
                tmp.push(format!(".tmp{pid}"));
            } else {
                tmp.push(format!(".tmp{pid}{n}"));
            }
            match rustix::fs::openat(
                &self.fd,
                tmp.as_os_str(),
                OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC,
                Mode::from_raw_mode(0o666),
            ) {
                Ok(fd) => return Ok((tmp, fd)),
                Err(rustix::io::Errno::EXIST) => continue,
                Err(e) => return Err(e.into()),
            }
        }
        Err(io::Error::new(
            io::ErrorKind::AlreadyExists,
            format!(
                "cannot create a temporary file beside {}: 1000 names are taken",
                self.join(name).display()
            ),
        ))
    }

    /// Open `name` for writing in place, truncated: for a file streamed as it is made and
    /// resumed by a checkpoint of its own (`search --out`), which a rename cannot serve. Only
    /// an absent name or a regular file is opened, never through a link, and never a file with
    /// other hard links: writing in place would change every name of it, files cavesweep did
    /// not write among them (a rename replaces one name; this cannot). The file is truncated
    /// only after that check.
    pub fn create_in_place(&self, name: impl AsRef<OsStr>) -> io::Result<File> {
        let name = component(name.as_ref())?;
        self.file_stat(name)?;
        let f = match self.open_regular(name, OFlags::WRONLY | OFlags::CREATE, 0o666) {
            Ok(Some(f)) => f,
            Ok(None) => return Err(io::Error::from(io::ErrorKind::NotFound)),
            Err(e) => return Err(e),
        };
        let links = rustix::fs::fstat(&f)?.st_nlink;
        if links > 1 {
            return Err(hard_linked(links as u64));
        }
        f.set_len(0)?;
        Ok(f)
    }

    /// Write `bytes` to `name` atomically.
    pub fn write(&self, name: impl AsRef<OsStr>, bytes: &[u8]) -> io::Result<()> {
        let mut f = self.create_file(name)?;
        f.write_all(bytes)?;
        f.commit()
    }

    /// Remove `name` if it is a regular file (the caller has proved it is its own); a link,
    /// folder or special file there is refused, an absent one is fine.
    pub fn remove_file(&self, name: impl AsRef<OsStr>) -> io::Result<()> {
        let name = component(name.as_ref())?;
        if self.file_stat(name)?.is_none() {
            return Ok(());
        }
        match rustix::fs::unlinkat(&self.fd, name, AtFlags::empty()) {
            Ok(()) | Err(rustix::io::Errno::NOENT) => Ok(()),
            Err(e) => Err(e.into()),
        }
    }

    /// Remove the empty subfolder `name` (one this process or its records made).
    pub fn remove_dir(&self, name: impl AsRef<OsStr>) -> io::Result<()> {
        let name = component(name.as_ref())?;
        match rustix::fs::unlinkat(&self.fd, name, AtFlags::REMOVEDIR) {
            Ok(()) | Err(rustix::io::Errno::NOENT) => Ok(()),
            Err(e) => Err(e.into()),
        }
    }

    /// Rename `from` to `to` inside this folder, replacing `to` only when it is absent or a
    /// regular file.
    pub fn rename(&self, from: &OsStr, to: &OsStr) -> io::Result<()> {
        let (from, to) = (component(from)?, component(to)?);
        self.file_stat(to)?;
        rustix::fs::renameat(&self.fd, from, &self.fd, to).map_err(io::Error::from)
    }

    /// Make completed renames and removals in this folder durable. Best effort: some file
    /// systems cannot sync a folder, and the data itself is already on disk.
    pub fn sync(&self) {
        let _ = rustix::fs::fsync(&self.fd);
    }

    /// The descriptor, for locks and SQLite-free helpers in this module's siblings.
    pub(crate) fn fd(&self) -> &OwnedFd {
        &self.fd
    }

    /// Open `name` with `flags` (always adding `NOFOLLOW`, `NONBLOCK`, `CLOEXEC`) and check it
    /// is a regular file; for the lock file. `Ok(None)` when absent.
    pub(crate) fn open_regular(
        &self,
        name: &OsStr,
        flags: OFlags,
        mode: u32,
    ) -> io::Result<Option<File>> {
        let name = component(name)?;
        let fd = match rustix::fs::openat(
            &self.fd,
            name,
            flags | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::NOCTTY | OFlags::CLOEXEC,
            Mode::from_raw_mode(mode),
        ) {
            Ok(fd) => fd,
            Err(rustix::io::Errno::NOENT) => return Ok(None),
            Err(rustix::io::Errno::EXIST) => {
                return Err(io::Error::from(io::ErrorKind::AlreadyExists));
            }
            Err(rustix::io::Errno::LOOP) => return Err(refused(Kind::Link)),
            // A FIFO opened for writing without a reader.
            Err(rustix::io::Errno::NXIO) => {
                return Err(refused(Kind::Special("a FIFO (named pipe)")));
            }
            Err(e) => return Err(e.into()),
        };
        regular_blocking(fd).map(Some)
    }
}

/// Check that `fd` is a regular file and make its reads and writes blocking again.
fn regular_blocking(fd: OwnedFd) -> io::Result<File> {
    let st = rustix::fs::fstat(&fd)?;
    let ft = FileType::from_raw_mode(st.st_mode);
    if ft != FileType::RegularFile {
        return Err(refused(Kind::of(ft)));
    }
    let flags = rustix::fs::fcntl_getfl(&fd)?;
    rustix::fs::fcntl_setfl(&fd, flags - OFlags::NONBLOCK)?;
    Ok(File::from(fd))
}

/// Read all of the regular file `f`, failing once more than `limit` bytes have been seen: at
/// once when its size already says so (a 5 GB file given where a map belongs is refused
/// without reading a byte), else after `limit + 1` bytes (a file that grows as it is read).
pub fn read_all_capped(f: File, limit: u64) -> io::Result<Vec<u8>> {
    let too_long = || {
        io::Error::new(
            io::ErrorKind::FileTooLarge,
            format!("longer than the limit of {}", super::human_bytes(limit)),
        )
    };
    let size = f.metadata()?.len();
    if size > limit {
        return Err(too_long());
    }
    let mut bytes = Vec::with_capacity(size as usize);
    f.take(limit.saturating_add(1)).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > limit {
        return Err(too_long());
    }
    Ok(bytes)
}

/// Open the user-named input file `path` for reading: follows the user's own links (the path is
/// theirs), but a FIFO, socket or device is refused before any read can block.
pub fn open_input(path: &Path) -> io::Result<File> {
    let fd = rustix::fs::openat(
        CWD,
        path,
        OFlags::RDONLY | OFlags::NONBLOCK | OFlags::NOCTTY | OFlags::CLOEXEC,
        Mode::empty(),
    )?;
    regular_blocking(fd)
}

/// A file being written atomically inside a [`Folder`]: bytes go to a temporary name created by
/// this process; [`FolderFile::commit`] syncs it and renames it over the destination (absent or
/// a regular file, checked again at that moment), keeping the permissions of a file it
/// replaces. Dropped uncommitted, the temporary is removed and the destination is untouched.
pub struct FolderFile {
    dir: Folder,
    name: OsString,
    tmp: OsString,
    perms: Option<u32>,
    file: Option<BufWriter<File>>,
}

impl FolderFile {
    /// The destination's path, for messages.
    pub fn path(&self) -> PathBuf {
        self.dir.join(&self.name)
    }

    /// Flush the bytes written so far to disk (the temporary file; the destination is
    /// untouched until [`FolderFile::commit`]).
    pub fn sync(&mut self) -> io::Result<()> {
        let file = self.file.as_mut().expect("not yet committed");
        file.flush()?;
        file.get_ref().sync_all()
    }

    /// Flush everything to disk and rename the temporary file over the destination.
    pub fn commit(mut self) -> io::Result<()> {
        let file = self.file.take().expect("not yet committed");
        let result = (|| {
            let file = file.into_inner().map_err(|e| e.into_error())?;
            if let Some(mode) = self.perms {
                rustix::fs::fchmod(file.as_fd(), Mode::from_raw_mode(mode))?;
            }
            file.sync_all()?;
            drop(file);
            self.dir.rename(&self.tmp, &self.name)
        })();
        match result {
            Ok(()) => {
                self.dir.sync();
                Ok(())
            }
            Err(e) => {
                let _ = rustix::fs::unlinkat(self.dir.fd(), self.tmp.as_os_str(), AtFlags::empty());
                Err(e)
            }
        }
    }
}

impl Write for FolderFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.file.as_mut().expect("not yet committed").write(buf)
    }
    fn flush(&mut self) -> io::Result<()> {
        self.file.as_mut().expect("not yet committed").flush()
    }
}

impl Drop for FolderFile {
    fn drop(&mut self) {
        if self.file.take().is_some() {
            let _ = rustix::fs::unlinkat(self.dir.fd(), self.tmp.as_os_str(), AtFlags::empty());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    fn scratch(name: &str) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("cavesweep-folder-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    /// A file whose size is over the cap is refused without reading a byte of it (the read
    /// position, shared with a clone of the descriptor, stays at 0); one within the cap is read
    /// whole.
    #[test]
    fn a_file_over_the_cap_is_refused_by_its_size_unread() {
        let dir = scratch("cap");
        let big = dir.join("big.npy");
        let f = File::create(&big).unwrap();
        f.set_len(5 << 30).unwrap(); // sparse: no disk used
        drop(f);
        let f = File::open(&big).unwrap();
        let mut twin = f.try_clone().unwrap();
        let e = read_all_capped(f, 1 << 20).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::FileTooLarge, "{e}");
        assert!(e.to_string().contains("1 MiB"), "{e}");
        use std::io::Seek;
        assert_eq!(twin.stream_position().unwrap(), 0, "nothing read");
        std::fs::write(dir.join("small"), b"12345").unwrap();
        let got = read_all_capped(File::open(dir.join("small")).unwrap(), 5).unwrap();
        assert_eq!(got, b"12345");
        let e = read_all_capped(File::open(dir.join("small")).unwrap(), 4).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::FileTooLarge, "{e}");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn links_inside_are_refused_not_followed() {
        let dir = scratch("links");
        std::fs::write(dir.join("victim"), b"precious").unwrap();
        symlink(dir.join("victim"), dir.join("out.csv")).unwrap();
        symlink(dir.join("nowhere"), dir.join("dangling")).unwrap();
        let f = Folder::open(&dir).unwrap();
        for name in ["out.csv", "dangling"] {
            let e = f.write(name, b"new").expect_err("refused");
            assert!(e.to_string().contains("symbolic link"), "{e}");
            assert!(f.open_read(name).is_err());
            assert!(f.remove_file(name).is_err());
        }
        assert_eq!(std::fs::read(dir.join("victim")).unwrap(), b"precious");
        assert!(!dir.join("nowhere").exists());
        // No temporary file left behind by the refusals.
        let names: Vec<_> = f.entries().unwrap().into_iter().map(|e| e.0).collect();
        assert_eq!(names, ["dangling", "out.csv", "victim"]);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn fifos_are_refused_without_blocking() {
        let dir = scratch("fifo");
        let fifo = dir.join("seeds.csv");
        rustix::fs::mknodat(CWD, &fifo, FileType::Fifo, Mode::from_raw_mode(0o644), 0).unwrap();
        let f = Folder::open(&dir).unwrap();
        let e = f.open_read("seeds.csv").unwrap_err();
        assert!(e.to_string().contains("FIFO"), "{e}");
        assert!(open_input(&fifo).unwrap_err().to_string().contains("FIFO"));
        assert!(f.write("seeds.csv", b"x").is_err());
        assert!(f.remove_file("seeds.csv").is_err());
        assert_eq!(
            f.kind("seeds.csv").unwrap(),
            Some(Kind::Special("a FIFO (named pipe)"))
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn writes_replace_regular_files_and_keep_their_mode() {
        use std::os::unix::fs::PermissionsExt;
        let dir = scratch("write");
        let f = Folder::open(&dir).unwrap();
        f.write("a.txt", b"one").unwrap();
        std::fs::set_permissions(dir.join("a.txt"), std::fs::Permissions::from_mode(0o600))
            .unwrap();
        f.write("a.txt", b"two").unwrap();
        assert_eq!(std::fs::read(dir.join("a.txt")).unwrap(), b"two");
        let mode = std::fs::metadata(dir.join("a.txt"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
        // A leftover with this process's temporary name is neither removed nor truncated.
        std::fs::write(
            dir.join(format!("b.txt.tmp{}", std::process::id())),
            b"keep",
        )
        .unwrap();
        {
            let mut w = f.create_file("b.txt").unwrap();
            w.write_all(b"dropped").unwrap();
        }
        assert!(!dir.join("b.txt").exists());
        f.write("b.txt", b"b").unwrap();
        assert_eq!(
            std::fs::read(dir.join(format!("b.txt.tmp{}", std::process::id()))).unwrap(),
            b"keep"
        );
        assert_eq!(f.entries().unwrap().len(), 3);
        // A folder where a file belongs is refused; a subfolder link is refused.
        std::fs::create_dir(dir.join("d")).unwrap();
        assert_eq!(
            f.write("d", b"x").unwrap_err().kind(),
            io::ErrorKind::IsADirectory
        );
        symlink(&dir, dir.join("img")).unwrap();
        assert!(
            f.sub("img", true)
                .unwrap_err()
                .to_string()
                .contains("symbolic link")
        );
        assert!(f.sub("sub", true).unwrap().1);
        assert!(!f.sub("sub", true).unwrap().1);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn reads_are_capped() {
        let dir = scratch("cap");
        std::fs::write(dir.join("x"), "x".repeat(100)).unwrap();
        let f = Folder::open(&dir).unwrap();
        assert_eq!(f.read_capped("x", 100).unwrap().unwrap().len(), 100);
        assert_eq!(
            f.read_capped("x", 99).unwrap_err().kind(),
            io::ErrorKind::FileTooLarge
        );
        assert!(f.read_capped("absent", 1).unwrap().is_none());
        assert!(f.kind("../x").is_err());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
