//! Durable file primitives shared by every store under a data dir: whole-file
//! writes are atomic (temp file, fsync, rename, fsync of the directory), logs are
//! append-only JSONL written with one `write` per line.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// Replace `path` with `bytes` atomically: readers see the old or the new file,
/// never a torn one, even if the process dies mid-write.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    // Unique among this process's threads (a counter) and among processes
    // sharing the dir, on one machine (the pid) or several (the clock).
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    let tmp = dir.join(format!(".{name}.{}-{n}-{nanos:08x}.tmp", std::process::id()));
    let result = (|| {
        let mut f = File::create(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        std::fs::rename(&tmp, path)?;
        if let Ok(d) = File::open(dir) {
            let _ = d.sync_all();
        }
        Ok(())
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

/// Like [`write_atomic`] but the file is created with mode 0600 (secrets).
pub fn write_atomic_private(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    write_atomic(path, bytes)?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))?;
    }
    Ok(())
}

/// An append-only JSONL file. Each line goes to the kernel in one `write` (so a
/// crash of the server loses nothing already written, and a reader never sees two
/// lines interleaved); [`JsonlFile::sync`] flushes to the disk.
#[derive(Debug)]
pub struct JsonlFile {
    path: PathBuf,
    file: Mutex<Option<File>>,
}

impl JsonlFile {
    /// A log at `path` (created, with its directory, on first append).
    pub fn new(path: PathBuf) -> Self {
        Self { path, file: Mutex::new(None) }
    }

    /// The file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Append one value as a JSON line.
    pub fn append(&self, value: &impl serde::Serialize) -> std::io::Result<()> {
        let mut line = serde_json::to_vec(value).map_err(std::io::Error::other)?;
        line.push(b'\n');
        let mut guard = crate::lock(&self.file);
        if guard.is_none() {
            if let Some(dir) = self.path.parent() {
                std::fs::create_dir_all(dir)?;
            }
            let mut f = OpenOptions::new().create(true).append(true).read(true).open(&self.path)?;
            end_torn_line(&mut f, &self.path)?;
            *guard = Some(f);
        }
        match guard.as_mut() {
            Some(f) => f.write_all(&line),
            None => Ok(()),
        }
    }

    /// fsync what was appended so far.
    pub fn sync(&self) -> std::io::Result<()> {
        let guard = crate::lock(&self.file);
        match guard.as_ref() {
            Some(f) => f.sync_data(),
            None => Ok(()),
        }
    }
}

/// A log whose last line was torn by a crash mid-write gets a newline before
/// anything else is appended: the torn line stays a line of its own (readers
/// skip it) instead of gluing itself to the next entry.
fn end_torn_line(f: &mut File, path: &Path) -> std::io::Result<()> {
    use std::io::{Read, Seek, SeekFrom};
    let len = f.metadata()?.len();
    if len == 0 {
        return Ok(());
    }
    let mut last = [0u8];
    f.seek(SeekFrom::Start(len - 1))?;
    f.read_exact(&mut last)?;
    if last[0] != b'\n' {
        tracing::warn!(file = %path.display(), "the log ends in a torn line (the server died mid-write); it is closed and skipped by readers");
        f.write_all(b"\n")?;
    }
    Ok(())
}

/// Read a JSONL file, skipping (and logging) torn or non-JSON lines.
pub fn read_jsonl(path: &Path) -> std::io::Result<Vec<serde_json::Value>> {
    let bytes = match std::fs::read(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(e),
    };
    let mut skipped = 0usize;
    let out: Vec<serde_json::Value> = bytes
        .split(|b| *b == b'\n')
        .filter(|l| !l.iter().all(u8::is_ascii_whitespace))
        .filter_map(|l| {
            let v = serde_json::from_slice(l).ok();
            skipped += usize::from(v.is_none());
            v
        })
        .collect();
    if skipped > 0 {
        tracing::warn!(file = %path.display(), skipped, "lines that are not whole JSON entries were skipped (torn by a crash, or damaged)");
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn atomic_write_replaces_and_leaves_no_temp_files() {
        let dir = std::env::temp_dir().join(format!("ochre-store-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("dir");
        let p = dir.join("a.json");
        write_atomic(&p, b"one").expect("write");
        write_atomic(&p, b"two").expect("write");
        assert_eq!(std::fs::read(&p).expect("read"), b"two");
        let names: Vec<_> =
            std::fs::read_dir(&dir).expect("ls").map(|e| e.expect("entry").file_name()).collect();
        assert_eq!(names, [std::ffi::OsString::from("a.json")]);
        std::fs::remove_dir_all(&dir).expect("cleanup");
    }

    #[test]
    fn jsonl_survives_a_torn_last_line() {
        let dir = std::env::temp_dir().join(format!("ochre-jsonl-{}", std::process::id()));
        let log = JsonlFile::new(dir.join("log.jsonl"));
        log.append(&serde_json::json!({"n": 1})).expect("append");
        log.append(&serde_json::json!({"n": 2})).expect("append");
        log.sync().expect("sync");
        let mut f = OpenOptions::new().append(true).open(log.path()).expect("open");
        f.write_all(b"{\"n\": 3, \"tor").expect("torn");
        let lines = read_jsonl(log.path()).expect("read");
        assert_eq!(lines, [serde_json::json!({"n": 1}), serde_json::json!({"n": 2})]);
        // After a restart the next entry is a line of its own.
        let again = JsonlFile::new(log.path().to_path_buf());
        again.append(&serde_json::json!({"n": 4})).expect("append");
        let text = std::fs::read_to_string(log.path()).expect("read");
        assert!(text.ends_with("{\"n\": 3, \"tor\n{\"n\":4}\n"), "{text:?}");
        let lines = read_jsonl(log.path()).expect("read");
        assert_eq!(
            lines,
            [serde_json::json!({"n": 1}), serde_json::json!({"n": 2}), serde_json::json!({"n": 4})]
        );
        std::fs::remove_dir_all(&dir).expect("cleanup");
    }
}
