//! Snapshots: one build's layout facts in a few megabytes, so a series of builds can be
//! kept and compared without their vmlinux files. The file is a fixed header (magic,
//! format version, CRC-32 of the rest, the lengths of the two parts, how they are
//! packed) and two blocks, LZ4 or stored, holding the postcard encodings of
//! `form::Names` and `form::Records`. Reading checks the header before decoding, so a
//! foreign, truncated or corrupted file fails with one line, never a panic. LZ4 names
//! are decompressed when the file is opened and live as long as it (the model borrows
//! them); LZ4 records, two thirds of the payload, are decompressed by each load and
//! freed once read. Stored blocks are read where they lie in the file's map.

mod error;
mod form;
mod read;
mod typed_form;

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
/// that they decode side by side; 13: how the blocks are packed, LZ4 or stored; 14: the
/// typed access map; 15: the direct call graph and the functions whose address is
/// taken); other versions are refused.
pub const VERSION: u32 = 15;
/// Magic, version, CRC-32, then the decompressed lengths of the names and the records,
/// the compressed length of the names, and how the blocks are packed (`STORED` or
/// `LZ4`).
const HEADER: usize = 8 + 4 + 4 + 4 * 8;
/// The blocks are LZ4 blocks.
const LZ4: u64 = 0;
/// The blocks are stored as they are.
const STORED: u64 = 1;
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

/// A snapshot file checked and opened: its names decompressed, or found in the file
/// when stored (an image borrows them), its records still in the file.
#[derive(Debug)]
pub struct Opened {
    names: Names,
    /// Where the records are in the file (compressed unless the names are stored in
    /// it: both blocks are packed alike).
    records: std::ops::Range<usize>,
    /// Their length once decompressed.
    records_len: usize,
    /// The names' type table, built by the first load (an image borrows it too).
    types: Types,
}

/// Where an opened snapshot's names are.
#[derive(Debug)]
enum Names {
    /// Decompressed when the file was opened.
    Unpacked(Vec<u8>),
    /// Stored in the file, at this range.
    InFile(std::ops::Range<usize>),
}

impl Opened {
    /// Whether the snapshot holds a typed access map that was built (a cache entry
    /// written for a diff has none). A compressed snapshot, as `layout-diff snapshot`
    /// writes them with the map, is taken to; `file` is the bytes this was opened from.
    pub fn has_typed_map(&self, file: &[u8]) -> bool {
        if !self.stored() {
            return true;
        }
        let Some(records) = file.get(self.records.clone()) else {
            return false;
        };
        // The map's first field is `supported`, one byte.
        read::split(records).is_ok_and(|parts| parts[form::PARTS - 1].first() == Some(&1))
    }

    /// Whether both blocks are stored as they are, not compressed.
    fn stored(&self) -> bool {
        matches!(self.names, Names::InFile(_))
    }

    /// The names' bytes; `file` must be the bytes this was opened from.
    fn names<'a>(&'a self, file: &'a [u8]) -> &'a [u8] {
        match &self.names {
            Names::Unpacked(bytes) => bytes,
            Names::InFile(range) => file.get(range.clone()).unwrap_or_default(),
        }
    }
}

/// Granule of the source lines a snapshot keeps: `show --line` asks for the line of
/// each function's first byte on a cache line, so every 64-byte boundary is kept
/// (enough for any line size of 64 bytes or more).
pub const LINE_GRANULE: u64 = 64;

/// How a snapshot's two blocks are packed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Packing {
    /// LZ4 at high compression (`LZ4_LEVEL`): the files `layout-diff snapshot` writes,
    /// kept and copied around (3.8 MB for a 6.1 cloud vmlinux).
    Small,
    /// Not compressed (10.6 MB for the same build): read in place from the file's map,
    /// with nothing to decompress into fresh memory; the cache's entries, which stay on
    /// the machine that reads them.
    Stored,
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
/// packed as `packing` says.
fn file_bytes(
    names: &[u8],
    records: &[u8],
    packing: Packing,
) -> std::result::Result<Vec<u8>, SnapshotError> {
    let (packed_names, packed_records) = (pack(names, packing)?, pack(records, packing)?);
    let how = if packing == Packing::Stored {
        STORED
    } else {
        LZ4
    };
    let mut rest = Vec::with_capacity(HEADER - 16 + packed_names.len() + packed_records.len());
    for n in [names.len(), records.len(), packed_names.len()] {
        rest.extend_from_slice(&(n as u64).to_le_bytes());
    }
    rest.extend_from_slice(&how.to_le_bytes());
    rest.extend_from_slice(&packed_names);
    rest.extend_from_slice(&packed_records);
    let mut out = Vec::with_capacity(16 + rest.len());
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&VERSION.to_le_bytes());
    out.extend_from_slice(&crc32fast::hash(&rest).to_le_bytes());
    out.extend_from_slice(&rest);
    Ok(out)
}

/// One block of a snapshot file: `part` as `packing` says.
fn pack(
    part: &[u8],
    packing: Packing,
) -> std::result::Result<std::borrow::Cow<'_, [u8]>, SnapshotError> {
    use std::borrow::Cow;
    if part.len() as u64 > MAX_PAYLOAD {
        return Err(SnapshotError::TooLarge(part.len()));
    }
    if packing == Packing::Stored {
        return Ok(Cow::Borrowed(part));
    }
    let mode = lz4::block::CompressionMode::HIGHCOMPRESSION(LZ4_LEVEL);
    lz4::block::compress(part, Some(mode), false)
        .map(Cow::Owned)
        .map_err(|e| SnapshotError::Compress(e.to_string()))
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
pub fn lines(path: &Path, opened: &Opened, file: &[u8]) -> Result<Option<Vec<(u64, String)>>> {
    read::lines(opened.names(file)).map_err(|e| bad(path, e.to_string()))
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
    let stored = match length(40) {
        LZ4 => false,
        STORED => true,
        how => return Err(bad(path, format!("unknown packing {how}"))),
    };
    let names_end = usize::try_from(packed)
        .ok()
        .and_then(|p| HEADER.checked_add(p))
        .filter(|&end| end <= bytes.len())
        .ok_or_else(|| bad(path, "names block runs past the end of the file"))?;
    let names = if stored {
        if packed != names_len || (bytes.len() - names_end) as u64 != records_len {
            return Err(bad(path, "a stored part's length is not its header's"));
        }
        Names::InFile(HEADER..names_end)
    } else {
        Names::Unpacked(unpack(path, &bytes[HEADER..names_end], names_len)?)
    };
    Ok(Opened {
        names,
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
    file: &'d [u8],
    options: &LoadOptions,
) -> Result<Image<'d>> {
    let records = records(path, opened, file)?;
    decode(path, opened.names(file), &opened.types, &records, options)
}

/// The records, decompressed, or borrowed from `file` when stored.
fn records<'f>(path: &Path, opened: &Opened, file: &'f [u8]) -> Result<std::borrow::Cow<'f, [u8]>> {
    let block = file
        .get(opened.records.clone())
        .ok_or_else(|| bad(path, "records block out of range"))?;
    if opened.stored() {
        return Ok(std::borrow::Cow::Borrowed(block));
    }
    Ok(std::borrow::Cow::Owned(unpack(
        path,
        block,
        opened.records_len as u64,
    )?))
}

/// A snapshot file's two parts, decompressed: names, then records (for tests that
/// corrupt what the checksum covers).
#[doc(hidden)]
pub fn parts(path: &Path, file: &[u8]) -> Result<(Vec<u8>, Vec<u8>)> {
    let opened = open(path, file)?;
    let records = records(path, &opened, file)?.into_owned();
    Ok((opened.names(file).to_vec(), records))
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
        typed: options.typed,
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
