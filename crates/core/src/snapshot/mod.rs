//! Snapshots: one build's layout facts in a few megabytes, so a series of builds can be
//! kept and compared without their vmlinux files. The file is a fixed header (magic,
//! format version, CRC-32 of the rest, the lengths of the two parts) and two LZ4
//! blocks holding the postcard encodings of `form::Names` and `form::Records`. Reading
//! checks the header before decoding, so a foreign, truncated or corrupted file fails
//! with one line, never a panic. The names are decompressed when the file is opened
//! and live as long as it (the model borrows them); the records, two thirds of the
//! payload, are decompressed by each load and freed once read.

mod error;
mod form;
mod read;

#[cfg(test)]
mod fields;

pub use error::SnapshotError;
pub use read::Types;

use std::path::Path;

use crate::error::{Error, Result};
use crate::load::options::LoadOptions;
use crate::model::{Image, StructId};

/// First bytes of every snapshot.
pub const MAGIC: &[u8; 8] = b"LDSNAP\x00\x01";
/// Bumped whenever `form::Form` changes shape or what it holds (7: members' type
/// gaps for pahole 1.32's notes, and the read-mostly boundary; 8: variables' definition
/// lines; 9: the access map; 10: the kernel release, optional, whether sizes came from
/// a symbol list, units' function alignments, variables' earlier declarations, and
/// source lines with each file named once; 11: the link model's alignment of each
/// symbol; 12: the records' fields encoded apart behind a table of their lengths, so
/// that they decode side by side); other versions are refused.
pub const VERSION: u32 = 12;
/// Magic, version, CRC-32, then the decompressed lengths of the names and the records
/// and the compressed length of the names.
const HEADER: usize = 8 + 4 + 4 + 3 * 8;
/// Largest payload accepted (guards against a forged length; an LZ4 block holds less
/// than 2 GiB).
const MAX_PAYLOAD: u64 = 1 << 30;
/// LZ4 at high-compression level 9, not zstd: a snapshot is read far more often than
/// written (once per query, per build of a series), and on the 6.1 cloud vmlinux's 9.2
/// MB payload LZ4 decompresses at 4.6 GB/s against zstd's 1.6 GB/s (2 ms against 6 ms
/// per file) for a file of 3.4 MB instead of 2.4 MB (zstd level 9).
const LZ4_LEVEL: i32 = 9;

fn bad(path: &Path, message: impl Into<String>) -> Error {
    Error::Input {
        path: path.to_path_buf(),
        message: format!("bad snapshot: {}", message.into()),
    }
}

/// Sizes of a written snapshot.
#[derive(Debug, Clone, Copy)]
pub struct Written {
    /// Bytes of the postcard encodings before compression.
    pub payload: u64,
    /// Bytes of the file.
    pub file: u64,
}

/// A snapshot file checked and opened: its names decompressed (an image borrows them),
/// its records still compressed in the file.
#[derive(Debug)]
pub struct Opened {
    names: Vec<u8>,
    /// Where the compressed records are in the file.
    records: std::ops::Range<usize>,
    /// Their length once decompressed.
    records_len: usize,
    /// The names' type table, built by the first load (an image borrows it too).
    types: Types,
}

/// Granule of the source lines a snapshot keeps: `show --line` asks for the line of
/// each function's first byte on a cache line, so every 64-byte boundary is kept
/// (enough for any line size of 64 bytes or more).
pub const LINE_GRANULE: u64 = 64;

/// How hard LZ4 works on a snapshot's two blocks. Reading is as fast either way.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Packing {
    /// High compression (`LZ4_LEVEL`): the files `layout-diff snapshot` writes, kept
    /// and copied around.
    Small,
    /// LZ4's default mode: a larger file written in a fraction of the time, for the
    /// cache, which writes one on the first read of a build, inside that command.
    Fast,
}

/// Writes the snapshot of `image` to `out`: `elf_files` are its symbols' file names as
/// the ELF alone gives them (what a load without DWARF shows; empty when unknown),
/// `lines` the source lines `show --line` prints, when kept. `input::InputFile::
/// for_snapshot` reads all three from a vmlinux.
pub fn write(
    image: &Image<'_>,
    elf_files: &[Option<&str>],
    lines: Option<&[(u64, String)]>,
    out: &Path,
) -> Result<Written> {
    let bytes = to_bytes(image, elf_files, lines, Packing::Small, out)?;
    std::fs::write(out, &bytes).map_err(|err| Error::Io {
        path: out.to_path_buf(),
        err,
    })?;
    let word = |at: usize| u64::from_le_bytes(bytes[at..at + 8].try_into().unwrap_or([0; 8]));
    Ok(Written {
        payload: word(16) + word(24),
        file: bytes.len() as u64,
    })
}

/// The bytes of the snapshot file of `image` (as `write` takes it), packed as `packing`
/// says; `out` names the file in an error.
pub fn to_bytes(
    image: &Image<'_>,
    elf_files: &[Option<&str>],
    lines: Option<&[(u64, String)]>,
    packing: Packing,
    out: &Path,
) -> Result<Vec<u8>> {
    let line_refs = lines.map(|l| l.iter().map(|(a, s)| (*a, s.as_str())).collect());
    encode(image, elf_files, line_refs, packing).map_err(|e| bad(out, e.to_string()))
}

/// The snapshot file bytes for `image`.
fn encode<'a>(
    image: &'a Image<'a>,
    elf_files: &[Option<&'a str>],
    lines: Option<Vec<(u64, &'a str)>>,
    packing: Packing,
) -> std::result::Result<Vec<u8>, SnapshotError> {
    let form = form::from_image(image, elf_files, lines);
    let names = postcard::to_stdvec(&form.names).map_err(SnapshotError::Encode)?;
    let records = form::records_bytes(&form.records).map_err(SnapshotError::Encode)?;
    file_bytes(&names, &records, packing)
}

/// A snapshot file holding the encoded `names` and `records`: the header, then each
/// compressed.
fn file_bytes(
    names: &[u8],
    records: &[u8],
    packing: Packing,
) -> std::result::Result<Vec<u8>, SnapshotError> {
    let pack = |part: &[u8]| {
        if part.len() as u64 > MAX_PAYLOAD {
            return Err(SnapshotError::TooLarge(part.len()));
        }
        let mode = match packing {
            Packing::Small => lz4::block::CompressionMode::HIGHCOMPRESSION(LZ4_LEVEL),
            Packing::Fast => lz4::block::CompressionMode::DEFAULT,
        };
        lz4::block::compress(part, Some(mode), false)
            .map_err(|e| SnapshotError::Compress(e.to_string()))
    };
    let (packed_names, packed_records) = if packing == Packing::Fast {
        // The two blocks side by side: the cache writes inside a command's run.
        let (n, r) = rayon::join(|| pack(names), || pack(records));
        (n?, r?)
    } else {
        (pack(names)?, pack(records)?)
    };
    let mut rest = Vec::with_capacity(24 + packed_names.len() + packed_records.len());
    for n in [names.len(), records.len(), packed_names.len()] {
        rest.extend_from_slice(&(n as u64).to_le_bytes());
    }
    rest.extend_from_slice(&packed_names);
    rest.extend_from_slice(&packed_records);
    let mut out = Vec::with_capacity(16 + rest.len());
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&VERSION.to_le_bytes());
    out.extend_from_slice(&crc32fast::hash(&rest).to_le_bytes());
    out.extend_from_slice(&rest);
    Ok(out)
}

/// A snapshot file, valid in every other respect, whose one struct holds a chain of
/// `depth` structs nested in one another: for the test that such a crafted file is
/// refused with exit 2 rather than exhausting the reader's stack.
#[doc(hidden)]
pub fn nested_chain_file(depth: usize) -> Vec<u8> {
    let (names, records) = form::nested_chain(depth);
    file_bytes(&names, &records, Packing::Small).unwrap_or_default()
}

/// The source lines kept in an opened snapshot (`None` when written without them).
pub fn lines(path: &Path, opened: &Opened) -> Result<Option<Vec<(u64, String)>>> {
    read::lines(&opened.names).map_err(|e| bad(path, e.to_string()))
}

/// Checks the header and checksum of a snapshot file's bytes and decompresses its
/// names.
pub fn open(path: &Path, bytes: &[u8]) -> Result<Opened> {
    if !bytes.starts_with(MAGIC) {
        return Err(bad(path, "no snapshot magic"));
    }
    if bytes.len() < HEADER {
        return Err(bad(
            path,
            format!("truncated header ({} bytes)", bytes.len()),
        ));
    }
    let word =
        |at: usize| u32::from_le_bytes([bytes[at], bytes[at + 1], bytes[at + 2], bytes[at + 3]]);
    let version = word(8);
    if version != VERSION {
        return Err(bad(
            path,
            format!(
                "format version {version}, this layout-diff reads version {VERSION}; write it again with `layout-diff snapshot`"
            ),
        ));
    }
    if crc32fast::hash(&bytes[16..]) != word(12) {
        return Err(bad(path, "checksum mismatch (truncated or corrupted file)"));
    }
    let length = |at: usize| {
        let mut b = [0u8; 8];
        b.copy_from_slice(&bytes[at..at + 8]);
        u64::from_le_bytes(b)
    };
    let (names_len, records_len, packed) = (length(16), length(24), length(32));
    for len in [names_len, records_len] {
        if len > MAX_PAYLOAD {
            return Err(bad(path, format!("a part of {len} bytes is too large")));
        }
    }
    let names_end = usize::try_from(packed)
        .ok()
        .and_then(|p| HEADER.checked_add(p))
        .filter(|&end| end <= bytes.len())
        .ok_or_else(|| bad(path, "names block runs past the end of the file"))?;
    Ok(Opened {
        names: unpack(path, &bytes[HEADER..names_end], names_len)?,
        records: names_end..bytes.len(),
        records_len: records_len as usize,
        types: Types::default(),
    })
}

/// Decompresses one block of `len` bytes (at most `MAX_PAYLOAD`, so it fits an `i32`).
fn unpack(path: &Path, block: &[u8], len: u64) -> Result<Vec<u8>> {
    let out = lz4::block::decompress(block, Some(len as i32))
        .map_err(|e| bad(path, format!("cannot decompress: {e}")))?;
    if out.len() as u64 != len {
        return Err(bad(path, "a part is shorter than its header says"));
    }
    Ok(out)
}

/// The `Image` held in an opened snapshot (`file`: its bytes), shaped as a load of the
/// vmlinux with `options` would shape it. The records are decompressed here and freed
/// before returning.
pub fn image<'d>(
    path: &Path,
    opened: &'d Opened,
    file: &[u8],
    options: &LoadOptions,
) -> Result<Image<'d>> {
    let records = records(path, opened, file)?;
    decode(path, &opened.names, &opened.types, &records, options)
}

fn records(path: &Path, opened: &Opened, file: &[u8]) -> Result<Vec<u8>> {
    let block = file
        .get(opened.records.clone())
        .ok_or_else(|| bad(path, "records block out of range"))?;
    unpack(path, block, opened.records_len as u64)
}

/// A snapshot file's two parts, decompressed: names, then records (for tests that
/// corrupt what the checksum covers).
#[doc(hidden)]
pub fn parts(path: &Path, file: &[u8]) -> Result<(Vec<u8>, Vec<u8>)> {
    let opened = open(path, file)?;
    let records = records(path, &opened, file)?;
    Ok((opened.names, records))
}

/// The image that decompressed `names` and `records` hold, shaped by `options`, its
/// types kept in `types` (which must be empty or built from these names).
#[doc(hidden)]
pub fn decode<'d>(
    path: &Path,
    names: &'d [u8],
    types: &'d Types,
    records: &[u8],
    options: &LoadOptions,
) -> Result<Image<'d>> {
    let wanted = read::Wanted {
        listing: options.pahole_text,
        dwarf: options.dwarf,
    };
    let mut image =
        read::read(names, types, records, path, wanted).map_err(|e| bad(path, e.to_string()))?;
    if let Some(line_size) = options.line_size {
        (image.line_size, image.line_size_overridden) = (line_size, true);
    }
    select_structs(&mut image, options);
    Ok(image)
}

/// Keeps the structs a load of the vmlinux with `options` would build (those the filter
/// accepts, those variables are instances of, typedef-named ones only when asked for by
/// name), in the same order, and renumbers the variables' struct ids to match.
fn select_structs(image: &mut Image<'_>, options: &LoadOptions) {
    if !options.variables {
        image.variables.clear();
    }
    let mut keep: Vec<bool> = image
        .structs
        .iter()
        .map(|s| options.lists(s.name, s.typedef))
        .collect();
    for v in &image.variables {
        if let Some(StructId(i)) = v.layout
            && let Some(k) = keep.get_mut(i)
        {
            *k = true;
        }
    }
    if keep.iter().all(|k| *k) {
        return;
    }
    let mut ids = vec![None; keep.len()];
    let mut next = 0;
    for (i, k) in keep.iter().enumerate() {
        if *k {
            ids[i] = Some(StructId(next));
            next += 1;
        }
    }
    let mut i = 0;
    image.structs.retain(|_| {
        i += 1;
        keep[i - 1]
    });
    for v in &mut image.variables {
        v.layout = v
            .layout
            .and_then(|StructId(i)| ids.get(i).copied().flatten());
    }
}
