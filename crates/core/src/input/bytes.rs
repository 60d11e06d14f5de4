//! An input's bytes, mapped when the file allows it and read into memory when it does
//! not (sysfs refuses a shared map of `/sys/kernel/btf/vmlinux`; a FIFO or pipe has no
//! size to map), so every reader borrows the same `&[u8]` either way.

use std::fs::File;
use std::io::Read;
use std::ops::Deref;
use std::path::Path;

use memmap2::{Mmap, MmapMut};

use crate::error::{Error, Result};

/// The most that is read of a file that cannot be mapped; past it the file is refused
/// (a device such as `/dev/zero` never ends). Far above any vmlinux.
pub const READ_LIMIT: u64 = 4 << 30;

/// The alignment the readers need of the first byte: `object` reads ELF headers in
/// place (without its `unaligned` feature), and an `Elf64_Ehdr` holds `u64`s.
const ALIGN: usize = 8;

/// An input's bytes: they deref to `[u8]`, whichever way they were got.
pub enum Bytes {
    /// The file mapped read-only, or bytes copied into an anonymous map.
    Mapped(Mmap),
    /// The file read to its end (it could not be mapped).
    Read(Vec<u8>),
    /// The part of a mapped file from this offset on (a cache entry's snapshot, after
    /// the entry's header).
    MappedFrom(Mmap, usize),
}

impl Deref for Bytes {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        match self {
            Bytes::Mapped(map) => map,
            Bytes::Read(bytes) => bytes,
            Bytes::MappedFrom(map, at) => map.get(*at..).unwrap_or_default(),
        }
    }
}

impl Bytes {
    /// The bytes of the file at `path`: mapped if it is a regular file of some size that
    /// can be mapped, else read to its end (at most `READ_LIMIT` bytes). Fails on a
    /// missing path, a directory, a file that holds no bytes, or one longer than the
    /// limit that had to be read.
    pub fn open(path: &Path) -> Result<Bytes> {
        let io = |err| Error::Io {
            path: path.to_path_buf(),
            err,
        };
        let meta = std::fs::metadata(path).map_err(io)?;
        if meta.is_dir() {
            return Err(Error::IsDirectory {
                path: path.to_path_buf(),
            });
        }
        let file = File::open(path).map_err(io)?;
        // A size of 0 is what a FIFO, a character device and a /proc file report: only
        // reading tells whether they hold anything.
        let mapped = if meta.is_file() && meta.len() > 0 {
            // SAFETY: the map is read-only and private to this process. A concurrent
            // truncation of the file by another process could fault; as with every
            // mmap-based reader (ripgrep, addr2line), that is accepted for speed.
            unsafe { Mmap::map(&file) }.ok()
        } else {
            None
        };
        let bytes = match mapped {
            Some(map) => Bytes::Mapped(map),
            None => {
                let read = read_to_limit(path, file, meta.len(), READ_LIMIT)?;
                aligned(path, read, ALIGN)?
            }
        };
        if bytes.is_empty() {
            return Err(Error::Empty {
                path: path.to_path_buf(),
            });
        }
        Ok(bytes)
    }

    /// `bytes` kept as they are: for a snapshot, whose reader needs no alignment (it
    /// decodes its records byte by byte).
    pub(crate) fn owned(bytes: Vec<u8>) -> Bytes {
        Bytes::Read(bytes)
    }

    /// `bytes` copied into an anonymous map (page-aligned); `name` stands for their
    /// path in errors. Fails on no bytes.
    pub fn copied(name: &Path, bytes: &[u8]) -> Result<Bytes> {
        if bytes.is_empty() {
            return Err(Error::Empty {
                path: name.to_path_buf(),
            });
        }
        Ok(Bytes::Mapped(anonymous_copy(name, bytes)?))
    }
}

/// The first room taken for a stream whose size metadata does not give.
const FIRST_ROOM: u64 = 64 << 10;

/// Reads `reader` to its end, refusing it past `limit` bytes; `size` is what the file's
/// metadata says it holds (sysfs gives it; room for it and one byte more is taken at
/// once, so such a file is read without growing the buffer). The buffer doubles, never
/// past `limit`, so a stream that never ends costs at most `limit` bytes and a copy.
fn read_to_limit(path: &Path, mut reader: impl Read, size: u64, limit: u64) -> Result<Vec<u8>> {
    let io = |err| Error::Io {
        path: path.to_path_buf(),
        err,
    };
    let too_long = || Error::Input {
        path: path.to_path_buf(),
        message: format!("read past {limit} bytes, the most read of a file that cannot be mapped"),
    };
    let room = |want: u64| usize::try_from(want.min(limit).max(1)).unwrap_or(usize::MAX);
    let mut bytes = Vec::new();
    let first = size.saturating_add(1).max(FIRST_ROOM);
    bytes
        .try_reserve_exact(room(first))
        .map_err(|_| io(std::io::ErrorKind::OutOfMemory.into()))?;
    loop {
        // At most the room left: `read_to_end` then never grows the buffer itself.
        let left = bytes.capacity() - bytes.len();
        (&mut reader)
            .take(left as u64)
            .read_to_end(&mut bytes)
            .map_err(io)?;
        if bytes.len() < bytes.capacity() {
            return Ok(bytes);
        }
        // Full: whether the stream goes on, a small read says.
        let mut probe = [0u8; 4096];
        let n = loop {
            match reader.read(&mut probe) {
                Err(err) if err.kind() == std::io::ErrorKind::Interrupted => continue,
                got => break got.map_err(io)?,
            }
        };
        if n == 0 {
            return Ok(bytes);
        }
        let len = bytes.len() as u64 + n as u64;
        if len > limit {
            return Err(too_long());
        }
        let grown = room((bytes.capacity() as u64).saturating_mul(2)).max(len as usize);
        bytes
            .try_reserve_exact(grown - bytes.len())
            .map_err(|_| io(std::io::ErrorKind::OutOfMemory.into()))?;
        bytes.extend_from_slice(&probe[..n]);
    }
}

/// `bytes` kept as they are when they start at a multiple of `align` (what the system
/// allocator and mimalloc give a buffer this size), else copied into an anonymous map,
/// which starts on a page.
fn aligned(path: &Path, bytes: Vec<u8>, align: usize) -> Result<Bytes> {
    if bytes.is_empty() || (bytes.as_ptr() as usize).is_multiple_of(align) {
        return Ok(Bytes::Read(bytes));
    }
    Ok(Bytes::Mapped(anonymous_copy(path, &bytes)?))
}

/// `bytes` copied into an anonymous read-only map; `bytes` must not be empty.
fn anonymous_copy(path: &Path, bytes: &[u8]) -> Result<Mmap> {
    let io = |err| Error::Io {
        path: path.to_path_buf(),
        err,
    };
    let mut anon = MmapMut::map_anon(bytes.len()).map_err(io)?;
    anon.copy_from_slice(bytes);
    anon.make_read_only().map_err(io)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stream_past_the_limit_is_refused_in_one_line() {
        let path = Path::new("/dev/zero");
        let err = read_to_limit(path, std::io::repeat(0), 0, 1024).expect_err("refused");
        assert_eq!(
            err.to_string(),
            "/dev/zero: read past 1024 bytes, the most read of a file that cannot be mapped"
        );
    }

    #[test]
    fn a_stream_up_to_the_limit_is_read_whole() {
        let data: Vec<u8> = (0..=255).collect();
        let read = read_to_limit(Path::new("s"), &data[..], 0, 256).expect("read");
        assert_eq!(read, data);
        // A wrong size from metadata only sizes the first room; a stream of exactly
        // the room, or of the limit, ends without growing past it.
        for (size, limit) in [(10, 256), (255, 256), (256, 256), (0, 100_000), (40, 70)] {
            let want = &data[..data.len().min(limit as usize)];
            let read = read_to_limit(Path::new("s"), want, size, limit).expect("read");
            assert_eq!(read, want, "{size} {limit}");
            assert!(read.capacity() as u64 <= limit.max(1), "{size} {limit}");
        }
    }

    #[test]
    fn read_bytes_start_aligned_whether_kept_or_copied() {
        let data: Vec<u8> = (0..100).collect();
        // A page's alignment, which a small buffer seldom has: usually the copy.
        let bytes = aligned(Path::new("s"), data.clone(), 4096).expect("aligned");
        assert_eq!(&bytes[..], &data[..]);
        assert!((bytes.as_ptr() as usize).is_multiple_of(4096));
        let bytes = aligned(Path::new("s"), data.clone(), ALIGN).expect("aligned");
        assert_eq!(&bytes[..], &data[..]);
        assert!((bytes.as_ptr() as usize).is_multiple_of(ALIGN));
    }

    #[test]
    fn an_empty_file_is_refused_as_empty() {
        let path =
            std::env::temp_dir().join(format!("layout-diff-bytes-empty-{}", std::process::id()));
        std::fs::write(&path, b"").expect("temp file");
        let err = Bytes::open(&path).err();
        std::fs::remove_file(&path).ok();
        assert!(matches!(err, Some(Error::Empty { .. })), "{err:?}");
    }
}
