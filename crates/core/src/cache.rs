//! The snapshot cache: a session runs several commands on the same builds (the diff,
//! `--explain`, another format, `suggest`, `check`), and each read a whole vmlinux
//! again. The first read of a build now keeps its snapshot in a directory, under a key
//! that changes whenever the file does (its build-id, size and modification time), and
//! later reads take the snapshot instead. Entries are written to a temporary file in
//! the same directory and renamed into place, so a concurrent reader sees a whole entry
//! or none; the directory is kept under a size limit by evicting the least recently
//! used entries (a hit touches its entry's modification time). An entry written by
//! another build of the tool, or damaged, is a miss and is written again: never an
//! error. The directory and the limit are the caller's to choose (the binary reads the
//! environment); this module prints nothing.

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use crate::error::{Error, Result};
use crate::input::bytes::Bytes;

/// The limit when none is given: 2 GiB, a few hundred builds' snapshots.
pub const DEFAULT_LIMIT: u64 = 2 << 30;

/// First bytes of every cache entry; the snapshot file follows the entry's header.
const MAGIC: &[u8; 8] = b"LDCACHE\x01";
/// The file name ending of an entry.
const EXTENSION: &str = "ldc";
/// The name start of an entry being written (`tempfile` adds random characters).
const TEMP_PREFIX: &str = ".tmp-";
/// A temporary file older than this was left by a process that died while writing it.
const STALE_TEMP: Duration = Duration::from_secs(3600);
/// The longest header part accepted (the tool stamp, the source path).
const MAX_PART: usize = 1 << 16;

/// A cache directory, its size limit, and the stamp of the tool that reads and writes
/// it (entries with another stamp are misses).
#[derive(Debug, Clone)]
pub struct Cache {
    dir: PathBuf,
    limit: u64,
    stamp: String,
}

/// What names one build in the cache: its ELF build-id, the file's size and its
/// modification time (nanoseconds since the epoch). A rebuild changes the build-id; a
/// file rewritten in place changes the time.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Key {
    /// The build-id of the vmlinux, in hex.
    pub build_id: String,
    /// Its size in bytes.
    pub size: u64,
    /// Its modification time, in nanoseconds since the epoch.
    pub mtime_ns: u128,
}

impl Key {
    /// The entry's file name: `BUILDID-SIZE-MTIME.ldc`.
    fn file_name(&self) -> String {
        format!(
            "{}-{}-{}.{EXTENSION}",
            self.build_id, self.size, self.mtime_ns
        )
    }
}

/// One entry of the cache directory, as `Cache::entries` lists it.
#[derive(Debug, Clone)]
pub struct Entry {
    /// The entry's file.
    pub path: PathBuf,
    /// The entry file's size in bytes.
    pub bytes: u64,
    /// When it was last written or read (its modification time).
    pub used: SystemTime,
    /// The vmlinux it was written from, as that command named it (`None` when the
    /// header cannot be read).
    pub source: Option<PathBuf>,
    /// Whether this build of the tool reads it (its stamp matches).
    pub current: bool,
}

/// What `Cache::clear` removed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Cleared {
    /// Files removed.
    pub files: usize,
    /// Their bytes.
    pub bytes: u64,
}

impl Cache {
    /// The cache in `dir`, held to `limit` bytes (0 keeps nothing), read and written by
    /// the tool build `stamp` names (its version, and whatever tells its builds apart).
    pub fn new(dir: PathBuf, limit: u64, stamp: String) -> Cache {
        Cache { dir, limit, stamp }
    }

    /// The cache's directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The most bytes it keeps.
    pub fn limit(&self) -> u64 {
        self.limit
    }

    /// Every entry of the directory, the most recently used first (then by name); an
    /// empty list when the directory does not exist.
    pub fn entries(&self) -> Result<Vec<Entry>> {
        let mut entries = Vec::new();
        for path in self.files(EXTENSION)? {
            let Ok(meta) = std::fs::metadata(&path) else {
                continue;
            };
            let header = std::fs::read(&path).ok().and_then(|b| {
                let (stamp, source, _) = header(&b)?;
                Some((stamp == self.stamp, PathBuf::from(source)))
            });
            entries.push(Entry {
                bytes: meta.len(),
                used: meta.modified().unwrap_or(SystemTime::UNIX_EPOCH),
                current: header.as_ref().is_some_and(|h| h.0),
                source: header.map(|h| h.1),
                path,
            });
        }
        entries.sort_by(|a, b| b.used.cmp(&a.used).then_with(|| a.path.cmp(&b.path)));
        Ok(entries)
    }

    /// Removes every entry, and any temporary file left by a writer.
    pub fn clear(&self) -> Result<Cleared> {
        let mut cleared = Cleared::default();
        let mut doomed = self.files(EXTENSION)?;
        doomed.extend(self.temp_files()?);
        for path in doomed {
            let bytes = std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
            match std::fs::remove_file(&path) {
                Ok(()) => {
                    cleared.files += 1;
                    cleared.bytes += bytes;
                }
                // Removed meanwhile by another process's eviction.
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(err) => return Err(Error::Io { path, err }),
            }
        }
        Ok(cleared)
    }

    /// The snapshot bytes kept for `key`, mapped, when its entry exists, whole, and
    /// this tool wrote it; the entry is touched (most recently used). Any failure is a
    /// miss. Mapping is safe from other processes: an entry is never written in place
    /// (a writer renames a whole new file over it, an eviction unlinks it), so the
    /// mapped file keeps its bytes.
    pub(crate) fn find(&self, key: &Key) -> Option<Bytes> {
        let path = self.dir.join(key.file_name());
        let file = File::open(&path).ok()?;
        // SAFETY: read-only and private; entries are never modified in place (above).
        let map = unsafe { memmap2::Mmap::map(&file) }.ok()?;
        let (stamp, _, at) = header(&map)?;
        if stamp != self.stamp {
            return None;
        }
        // Least recently used by modification time: reading does not change it, and
        // atime is often not kept (noatime, relatime).
        if let Ok(f) = File::options().write(true).open(&path) {
            let _ = f.set_modified(SystemTime::now());
        }
        Some(Bytes::MappedFrom(map, at))
    }

    /// Keeps `snapshot` (a snapshot file's bytes, written from `source`) under `key`:
    /// written to a temporary file in the directory and renamed over the entry's name,
    /// then older entries evicted to fit the limit. An entry larger than the limit is
    /// not kept.
    pub(crate) fn store(&self, key: &Key, source: &Path, snapshot: &[u8]) -> Result<()> {
        let io = |path: &Path| {
            let path = path.to_path_buf();
            move |err| Error::Io { path, err }
        };
        let source = std::path::absolute(source).unwrap_or_else(|_| source.to_path_buf());
        let source = source.to_string_lossy();
        let stamp = self.stamp.as_bytes();
        let head_len = MAGIC.len() + 8 + stamp.len() + source.len();
        if (head_len + snapshot.len()) as u64 > self.limit || source.len() > MAX_PART {
            return Ok(());
        }
        std::fs::create_dir_all(&self.dir).map_err(io(&self.dir))?;
        let mut temp = tempfile::Builder::new()
            .prefix(TEMP_PREFIX)
            .tempfile_in(&self.dir)
            .map_err(io(&self.dir))?;
        let mut out = Vec::with_capacity(head_len);
        out.extend_from_slice(MAGIC);
        out.extend_from_slice(&(stamp.len() as u32).to_le_bytes());
        out.extend_from_slice(stamp);
        out.extend_from_slice(&(source.len() as u32).to_le_bytes());
        out.extend_from_slice(source.as_bytes());
        let file = temp.as_file_mut();
        file.write_all(&out)
            .and_then(|_| file.write_all(snapshot))
            .map_err(io(temp.path()))?;
        let path = self.dir.join(key.file_name());
        temp.persist(&path).map_err(|e| Error::Io {
            path: path.clone(),
            err: e.error,
        })?;
        self.evict(&path);
        Ok(())
    }

    /// Removes the least recently used entries until the directory's entries fit the
    /// limit, never `keep` (just written), and temporary files a dead writer left.
    /// Failures are ignored: another process may be evicting the same files.
    fn evict(&self, keep: &Path) {
        let Ok(entries) = self.entries() else {
            return;
        };
        let mut total: u64 = entries.iter().map(|e| e.bytes).sum();
        for e in entries.iter().rev() {
            if total <= self.limit {
                break;
            }
            if e.path != keep && std::fs::remove_file(&e.path).is_ok() {
                total -= e.bytes;
            }
        }
        let now = SystemTime::now();
        for path in self.temp_files().unwrap_or_default() {
            let old = std::fs::metadata(&path)
                .and_then(|m| m.modified())
                .ok()
                .and_then(|t| now.duration_since(t).ok())
                .is_some_and(|age| age > STALE_TEMP);
            if old {
                let _ = std::fs::remove_file(&path);
            }
        }
    }

    /// The directory's files whose names end in `.EXT`, sorted.
    fn files(&self, ext: &str) -> Result<Vec<PathBuf>> {
        self.listed(|name| {
            name.strip_suffix(ext)
                .is_some_and(|stem| stem.ends_with('.') && !name.starts_with('.'))
        })
    }

    /// The temporary files of writers, finished or not.
    fn temp_files(&self) -> Result<Vec<PathBuf>> {
        self.listed(|name| name.starts_with(TEMP_PREFIX))
    }

    fn listed(&self, wanted: impl Fn(&str) -> bool) -> Result<Vec<PathBuf>> {
        let dir = match std::fs::read_dir(&self.dir) {
            Ok(dir) => dir,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(err) => {
                return Err(Error::Io {
                    path: self.dir.clone(),
                    err,
                });
            }
        };
        let mut out: Vec<PathBuf> = dir
            .filter_map(|e| e.ok())
            .filter(|e| e.file_name().to_str().is_some_and(&wanted))
            .map(|e| e.path())
            .collect();
        out.sort();
        Ok(out)
    }
}

/// An entry's header: the stamp of the tool that wrote it, the path of its vmlinux,
/// and where the snapshot starts; `None` when the bytes are no entry.
fn header(bytes: &[u8]) -> Option<(&str, &str, usize)> {
    let rest = bytes.strip_prefix(MAGIC)?;
    let (stamp, rest) = part(rest)?;
    let (source, rest) = part(rest)?;
    Some((stamp, source, bytes.len() - rest.len()))
}

/// A length-prefixed UTF-8 string at the start of `bytes`, and what follows it.
fn part(bytes: &[u8]) -> Option<(&str, &[u8])> {
    let len = u32::from_le_bytes(bytes.get(..4)?.try_into().ok()?) as usize;
    if len > MAX_PART {
        return None;
    }
    let text = std::str::from_utf8(bytes.get(4..4 + len)?).ok()?;
    Some((text, &bytes[4 + len..]))
}

/// The key of the file at `path` whose ELF build-id is `build_id`, from its metadata.
pub(crate) fn key(path: &Path, build_id: String) -> Option<Key> {
    let meta = std::fs::metadata(path).ok()?;
    if !meta.is_file() {
        return None;
    }
    let mtime = meta
        .modified()
        .ok()?
        .duration_since(SystemTime::UNIX_EPOCH)
        .ok()?;
    Some(Key {
        build_id,
        size: meta.len(),
        mtime_ns: mtime.as_nanos(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!(
            "layout-diff-cache-unit-{name}-{}",
            std::process::id()
        ));
        let _ = std::fs::remove_dir_all(&dir);
        dir
    }

    fn key(n: u64) -> Key {
        Key {
            build_id: format!("{n:040x}"),
            size: n,
            mtime_ns: 7,
        }
    }

    #[test]
    fn a_stored_snapshot_is_found_by_its_key_and_stamp_only() {
        let dir = scratch("find");
        let cache = Cache::new(dir.clone(), DEFAULT_LIMIT, "tool 1".into());
        cache
            .store(&key(1), Path::new("/b/vmlinux"), b"SNAP")
            .unwrap();
        assert_eq!(cache.find(&key(1)).as_deref(), Some(&b"SNAP"[..]));
        assert!(cache.find(&key(2)).is_none());
        let other = Cache::new(dir.clone(), DEFAULT_LIMIT, "tool 2".into());
        assert!(other.find(&key(1)).is_none());
        let entries = cache.entries().unwrap();
        assert_eq!(entries.len(), 1);
        assert_eq!(entries[0].source.as_deref(), Some(Path::new("/b/vmlinux")));
        assert!(entries[0].current);
        // magic 8 + stamp 4 + 6 + path 4 + 10 + snapshot 4
        assert_eq!(entries[0].bytes, 36);
        assert!(!other.entries().unwrap()[0].current);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn the_least_recently_used_entries_go_first() {
        let dir = scratch("evict");
        // Each entry: 8 + 4 + 1 + 4 + 2 + 100 = 119 bytes; room for two.
        let cache = Cache::new(dir.clone(), 240, "t".into());
        let snap = [0u8; 100];
        cache.store(&key(1), Path::new("/a"), &snap).unwrap();
        cache.store(&key(2), Path::new("/b"), &snap).unwrap();
        // Key 1 read after key 2 was written: key 2 is then the least recently used.
        let past = SystemTime::now() - Duration::from_secs(60);
        let two = dir.join(key(2).file_name());
        File::options()
            .write(true)
            .open(&two)
            .unwrap()
            .set_modified(past)
            .unwrap();
        assert!(cache.find(&key(1)).is_some());
        cache.store(&key(3), Path::new("/c"), &snap).unwrap();
        let names: Vec<_> = cache
            .entries()
            .unwrap()
            .iter()
            .map(|e| e.source.clone().unwrap())
            .collect();
        let mut sorted = names.clone();
        sorted.sort();
        assert_eq!(sorted, vec![PathBuf::from("/a"), PathBuf::from("/c")]);
        // An entry larger than the limit is not kept.
        cache.store(&key(4), Path::new("/d"), &[0u8; 300]).unwrap();
        assert!(cache.find(&key(4)).is_none());
        assert_eq!(
            cache.clear().unwrap(),
            Cleared {
                files: 2,
                bytes: 238
            }
        );
        assert!(cache.entries().unwrap().is_empty());
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn damaged_headers_are_no_entry() {
        let mut bytes = MAGIC.to_vec();
        bytes.extend_from_slice(&3u32.to_le_bytes());
        bytes.extend_from_slice(b"abc");
        bytes.extend_from_slice(&1u32.to_le_bytes());
        bytes.extend_from_slice(b"p");
        bytes.extend_from_slice(b"rest");
        assert_eq!(header(&bytes), Some(("abc", "p", 20)));
        for cut in 0..20 {
            assert_eq!(header(&bytes[..cut]), None, "{cut}");
        }
        bytes[8] = 0xff;
        assert_eq!(header(&bytes), None);
    }
}
