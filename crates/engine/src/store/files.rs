//! A store's final files (summary.csv, seeds.csv, ...): streamed to a temporary sibling, fsynced,
//! renamed into place, and recorded by size and CRC-32 so a later run can tell whether the file
//! on disk is still the one that was written.

use std::io::{self, Read, Write};
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::failpoint;
use crate::io::{Folder, FolderFile};

/// What a finished file was: its size and checksum.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileRecord {
    /// The file's size in bytes.
    pub size: u64,
    /// The CRC-32 of its bytes.
    pub crc32: u32,
}

/// The temporary name `name` is written under before the rename (`NAME.tmpPID`).
pub fn temp_name(name: &str) -> String {
    format!("{name}.tmp{}", std::process::id())
}

/// Whether `file` is a temporary sibling of `name` left by some process (`NAME.tmpDIGITS`).
pub fn is_temp_of(file: &str, name: &str) -> bool {
    file.strip_prefix(name)
        .and_then(|rest| rest.strip_prefix(".tmp"))
        .is_some_and(|pid| !pid.is_empty() && pid.bytes().all(|b| b.is_ascii_digit()))
}

/// A writer that counts the bytes written through it and their CRC-32, so a file's
/// [`FileRecord`] is known the moment its last byte is written, without reading it back. The
/// one place a written file's size and checksum are computed: final files ([`Output`]) and a
/// search's CSV ([`crate::search::output`]) both write through it.
pub struct Counted<W> {
    inner: W,
    size: u64,
    crc: crc32fast::Hasher,
}

impl<W: Write> Counted<W> {
    /// Count what goes through to `inner`, starting from zero bytes.
    pub fn new(inner: W) -> Counted<W> {
        Counted {
            inner,
            size: 0,
            crc: crc32fast::Hasher::new(),
        }
    }

    /// What has been written so far.
    pub fn record(&self) -> FileRecord {
        FileRecord {
            size: self.size,
            crc32: self.crc.clone().finalize(),
        }
    }

    /// The writer inside.
    pub fn get_ref(&self) -> &W {
        &self.inner
    }

    /// The writer inside, giving up the count (take [`Counted::record`] first).
    pub fn into_inner(self) -> W {
        self.inner
    }
}

impl<W: Write> Write for Counted<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.size += n as u64;
        self.crc.update(&buf[..n]);
        Ok(n)
    }
    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

/// A final file being written: bytes go to a temporary sibling (through
/// [`crate::io::Folder::create_file`], so a link or anything but a regular file at `NAME` is
/// refused, never written through), counted and checksummed on the way; [`Output::finish`]
/// makes it durable and renames it into place. Dropped unfinished (an error on the way), the
/// temporary is removed and `NAME` is untouched.
pub struct Output {
    name: String,
    file: Counted<FolderFile>,
}

impl Output {
    /// Start writing the final file `name` in the folder `dir` (under its temporary name).
    pub fn create(dir: &Path, name: &str) -> io::Result<Output> {
        Ok(Output {
            name: name.to_string(),
            file: Counted::new(Folder::open(dir)?.create_file(name)?),
        })
    }

    /// Flush, fsync, rename into place (and fsync the folder). Failpoint `write:NAME` (before
    /// the rename, after the content is written).
    pub fn finish(self) -> io::Result<FileRecord> {
        let record = self.file.record();
        failpoint::io(&format!("write:{}", self.name))?;
        self.file.into_inner().commit()?;
        Ok(record)
    }
}

impl Write for Output {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.file.write(buf)
    }
    fn flush(&mut self) -> io::Result<()> {
        self.file.flush()
    }
}

/// Write `dir/name` atomically by streaming through `fill`; returns its record.
pub fn write_output(
    dir: &Path,
    name: &str,
    fill: impl FnOnce(&mut dyn Write) -> io::Result<()>,
) -> io::Result<FileRecord> {
    let mut out = Output::create(dir, name)?;
    fill(&mut out)?;
    out.finish()
}

/// Whether `dir/name` exists and matches `record`.
pub fn matches(dir: &Path, name: &str, record: &FileRecord) -> io::Result<bool> {
    // Not following links and refusing a FIFO before it can block: the file must be the
    // regular file we wrote.
    let mut f = match Folder::open(dir)?.open_read(name)? {
        Some(f) => f,
        None => return Ok(false),
    };
    if f.metadata()?.len() != record.size {
        return Ok(false);
    }
    let mut crc = crc32fast::Hasher::new();
    let mut buf = vec![0u8; 1 << 20];
    loop {
        let n = f.read(&mut buf)?;
        if n == 0 {
            break;
        }
        crc.update(&buf[..n]);
    }
    Ok(crc.finalize() == record.crc32)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    #[test]
    fn written_files_match_their_records_until_changed() {
        let dir = std::env::temp_dir().join(format!("cavesweep-files-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        let rec = write_output(&dir, "a.csv", |w| w.write_all(b"x,y\n1,2\n")).unwrap();
        assert_eq!(rec.size, 8);
        assert!(matches(&dir, "a.csv", &rec).unwrap());
        fs::write(dir.join("a.csv"), b"x,y\n1,3\n").unwrap();
        assert!(!matches(&dir, "a.csv", &rec).unwrap());
        assert!(!matches(&dir, "missing.csv", &rec).unwrap());
        // A failing writer leaves neither the file nor its temporary.
        let e = write_output(&dir, "b.csv", |_| Err(io::Error::other("boom")));
        assert!(e.is_err());
        assert!(!dir.join("b.csv").exists() && !dir.join(temp_name("b.csv")).exists());
        assert!(is_temp_of("seeds.csv.tmp123", "seeds.csv"));
        assert!(!is_temp_of("seeds.csv.tmp", "seeds.csv"));
        assert!(!is_temp_of("seeds.csv.tmpx1", "seeds.csv"));
        fs::remove_dir_all(&dir).unwrap();
    }
}
