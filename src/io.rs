//! File output that never leaves a half-written file under its real name: write to a temporary
//! sibling, flush to disk, rename over. Used for every file cavesweep writes.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

/// The temporary sibling `path` is first written to.
fn temp_path(path: &Path) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(format!(".tmp{}", std::process::id()));
    path.with_file_name(name)
}

/// Write `bytes` to `path` atomically (write-then-rename, fsynced).
pub fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let tmp = temp_path(path);
    let result = (|| {
        let mut f = fs::File::create(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_and_replaces() {
        let dir = std::env::temp_dir().join(format!("cavesweep-io-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        let p = dir.join("a.txt");
        write_atomic(&p, b"one").unwrap();
        write_atomic(&p, b"two").unwrap();
        assert_eq!(fs::read(&p).unwrap(), b"two");
        assert!(write_atomic(&dir.join("missing/b.txt"), b"x").is_err());
        fs::remove_dir_all(&dir).unwrap();
    }
}
