//! A store's final files (summary.csv, seeds.csv, ...): streamed to a temporary sibling, fsynced,
//! renamed into place, and recorded by size and CRC-32 so a later run can tell whether the file
//! on disk is still the one that was written.

use std::fs::{self, File};
use std::io::{self, BufWriter, Read, Write};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::failpoint;

/// What a finished file was: its size and checksum.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileRecord {
    pub size: u64,
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

/// A writer that counts and checksums what passes through it.
struct Hashing<W> {
    inner: W,
    size: u64,
    crc: crc32fast::Hasher,
}

impl<W: Write> Write for Hashing<W> {
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

/// A final file being written: bytes go to `NAME.tmpPID`; [`Output::finish`] makes it durable
/// and renames it into place. Dropped unfinished (an error on the way), the temporary is removed
/// and `NAME` is untouched.
pub struct Output {
    dir: PathBuf,
    name: String,
    tmp: PathBuf,
    w: Option<Hashing<BufWriter<File>>>,
}

impl Output {
    pub fn create(dir: &Path, name: &str) -> io::Result<Output> {
        let tmp = dir.join(temp_name(name));
        let file = File::create(&tmp)?;
        Ok(Output {
            dir: dir.to_path_buf(),
            name: name.to_string(),
            tmp,
            w: Some(Hashing {
                inner: BufWriter::with_capacity(1 << 20, file),
                size: 0,
                crc: crc32fast::Hasher::new(),
            }),
        })
    }

    /// Flush, fsync, rename into place (and fsync the folder). Failpoint `write:NAME` (before
    /// the rename, after the content is on disk).
    pub fn finish(mut self) -> io::Result<FileRecord> {
        let w = self.w.take().expect("finished once");
        let record = FileRecord {
            size: w.size,
            crc32: w.crc.clone().finalize(),
        };
        let result = (|| {
            let file = w.inner.into_inner().map_err(|e| e.into_error())?;
            file.sync_all()?;
            failpoint::io(&format!("write:{}", self.name))?;
            fs::rename(&self.tmp, self.dir.join(&self.name))
        })();
        if let Err(e) = result {
            let _ = fs::remove_file(&self.tmp);
            return Err(e);
        }
        sync_dir(&self.dir)?;
        Ok(record)
    }
}

impl Write for Output {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.w.as_mut().expect("not finished").write(buf)
    }
    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        self.w.as_mut().expect("not finished").write_all(buf)
    }
    fn flush(&mut self) -> io::Result<()> {
        self.w.as_mut().expect("not finished").flush()
    }
}

impl Drop for Output {
    fn drop(&mut self) {
        if self.w.take().is_some() {
            let _ = fs::remove_file(&self.tmp);
        }
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

/// Make a rename in `dir` durable.
pub fn sync_dir(dir: &Path) -> io::Result<()> {
    File::open(dir)?.sync_all()
}

/// Whether `dir/name` exists and matches `record`.
pub fn matches(dir: &Path, name: &str, record: &FileRecord) -> io::Result<bool> {
    let path: PathBuf = dir.join(name);
    let mut f = match File::open(&path) {
        Ok(f) => f,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(false),
        Err(e) => return Err(e),
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
