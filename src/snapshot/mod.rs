//! Snapshots: one build's layout facts in a few megabytes, so a series of builds can be
//! kept and compared without their vmlinux files. The file is a fixed header (magic,
//! format version, CRC-32 of the rest, payload length) and an LZ4 block holding the
//! postcard encoding of `form::Form`. Reading checks all four before decoding, so a
//! foreign, truncated or corrupted file fails with one line, never a panic.

mod form;
mod read;

use std::path::Path;

use crate::error::{Error, Result};
use crate::load::{InputFile, LoadOptions};
use crate::model::{Image, StructId};

/// First bytes of every snapshot.
pub const MAGIC: &[u8; 8] = b"LDSNAP\x00\x01";
/// Bumped whenever `form::Form` changes shape; other versions are refused.
pub const VERSION: u32 = 4;
const HEADER: usize = 8 + 4 + 4 + 8;
/// Largest payload accepted (guards against a forged length; an LZ4 block holds less
/// than 2 GiB).
const MAX_PAYLOAD: u64 = 1 << 30;
/// LZ4 at high-compression level 9, not zstd: a snapshot is read far more often than
/// written (once per query, per build of a series), and on the 6.1 cloud vmlinux's 9.2
/// MB payload LZ4 decompresses at 4.6 GB/s against zstd's 1.6 GB/s (2 ms against 6 ms
/// per file) for a file of 3.4 MB instead of 2.4 MB (zstd level 9).
const LZ4_LEVEL: i32 = 9;

/// True when `bytes` start like a snapshot.
pub fn is_snapshot(bytes: &[u8]) -> bool {
    bytes.starts_with(MAGIC)
}

fn bad(path: &Path, message: impl Into<String>) -> Error {
    Error::Input {
        path: path.to_path_buf(),
        message: format!("bad snapshot: {}", message.into()),
    }
}

/// Sizes of a written snapshot.
#[derive(Debug, Clone, Copy)]
pub struct Written {
    /// Bytes of the postcard encoding before compression.
    pub payload: u64,
    /// Bytes of the file.
    pub file: u64,
}

/// Granule of the source lines a snapshot keeps: `show --line` asks for the line of
/// each function's first byte on a cache line, so every 64-byte boundary is kept
/// (enough for any line size of 64 bytes or more).
pub const LINE_GRANULE: u64 = 64;

/// Reads `input` (a vmlinux) in full and writes its snapshot to `out`; with
/// `with_lines`, the source lines `show --line` prints are kept too.
pub fn write(input: &InputFile, out: &Path, with_lines: bool) -> Result<Written> {
    let full = LoadOptions {
        all_typedefs: true,
        ..LoadOptions::default()
    };
    let elf_only = LoadOptions {
        dwarf: false,
        ..LoadOptions::default()
    };
    let (image, bare) = rayon::join(|| input.load(&full), || input.load(&elf_only));
    let (image, bare) = (image?, bare?);
    let elf_files: Vec<Option<&str>> = if bare.symbols.len() == image.symbols.len() {
        bare.symbols.iter().map(|s| s.file).collect()
    } else {
        Vec::new()
    };
    let lines = if with_lines {
        source_lines(input, &image)?
    } else {
        None
    };
    let line_refs = lines
        .as_ref()
        .map(|l| l.iter().map(|(a, s)| (*a, s.as_str())).collect());
    let bytes = encode(&image, &elf_files, line_refs).map_err(|m| bad(out, m))?;
    std::fs::write(out, &bytes).map_err(|err| Error::Io {
        path: out.to_path_buf(),
        err,
    })?;
    Ok(Written {
        payload: u64::from_le_bytes(bytes[16..24].try_into().unwrap_or([0; 8])),
        file: bytes.len() as u64,
    })
}

/// The snapshot file bytes for `image`.
fn encode<'a>(
    image: &'a Image<'a>,
    elf_files: &[Option<&'a str>],
    lines: Option<Vec<(u64, &'a str)>>,
) -> std::result::Result<Vec<u8>, String> {
    let form = form::from_image(image, elf_files, lines);
    let payload = postcard::to_stdvec(&form).map_err(|e| e.to_string())?;
    file_bytes(&payload)
}

/// A snapshot file holding `payload`: the header, then the compressed payload.
fn file_bytes(payload: &[u8]) -> std::result::Result<Vec<u8>, String> {
    if payload.len() as u64 > MAX_PAYLOAD {
        return Err(format!(
            "payload of {} bytes is too large for a snapshot",
            payload.len()
        ));
    }
    let mode = lz4::block::CompressionMode::HIGHCOMPRESSION(LZ4_LEVEL);
    let body = lz4::block::compress(payload, Some(mode), false).map_err(|e| e.to_string())?;
    let mut out = Vec::with_capacity(HEADER + body.len());
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&VERSION.to_le_bytes());
    let mut rest = (payload.len() as u64).to_le_bytes().to_vec();
    rest.extend_from_slice(&body);
    out.extend_from_slice(&crc32fast::hash(&rest).to_le_bytes());
    out.extend_from_slice(&rest);
    Ok(out)
}

/// A snapshot file, valid in every other respect, whose one struct holds a chain of
/// `depth` structs nested in one another: for the test that such a crafted file is
/// refused with exit 2 rather than exhausting the reader's stack.
#[doc(hidden)]
pub fn nested_chain_file(depth: usize) -> Vec<u8> {
    file_bytes(&form::nested_chain(depth)).unwrap_or_default()
}

/// `file:line` at the start of every function and every `LINE_GRANULE` boundary inside
/// it (ordinary address space only; per-CPU offsets are not code).
fn source_lines(input: &InputFile, image: &Image<'_>) -> Result<Option<Vec<(u64, String)>>> {
    use crate::model::{Space, SymbolKind};
    let Some(lines) = input.source_lines()? else {
        return Ok(None);
    };
    let mut out = Vec::new();
    for s in image
        .symbols
        .iter()
        .filter(|s| s.kind == SymbolKind::Function && s.space == Space::Global)
    {
        let end = s.place.saturating_add(s.size);
        let mut at = s.place;
        while at < end.max(s.place + 1) {
            if let Some(loc) = lines.find(at) {
                out.push((at, loc));
            }
            at = (at / LINE_GRANULE + 1).saturating_mul(LINE_GRANULE);
        }
    }
    out.sort();
    out.dedup_by_key(|(a, _)| *a);
    Ok(Some(out))
}

/// The source lines kept in a decompressed payload (`None` when written without them).
pub fn lines(path: &Path, payload: &[u8]) -> Result<Option<Vec<(u64, String)>>> {
    let wanted = read::Wanted {
        listing: false,
        dwarf: false,
    };
    let read = read::read(payload, path, wanted).map_err(|m| bad(path, m))?;
    Ok(read
        .lines
        .map(|l| l.into_iter().map(|(a, s)| (a, s.to_string())).collect()))
}

/// Checks the header and checksum of a snapshot file's bytes and decompresses its
/// payload.
pub fn payload(path: &Path, bytes: &[u8]) -> Result<Vec<u8>> {
    if !is_snapshot(bytes) {
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
    let rest = &bytes[16..];
    if crc32fast::hash(rest) != word(12) {
        return Err(bad(path, "checksum mismatch (truncated or corrupted file)"));
    }
    let mut len = [0u8; 8];
    len.copy_from_slice(&rest[..8]);
    let len = u64::from_le_bytes(len);
    if len > MAX_PAYLOAD {
        return Err(bad(path, format!("payload of {len} bytes is too large")));
    }
    // `len` is at most `MAX_PAYLOAD` (1 GiB): it fits an `i32`.
    let out = lz4::block::decompress(&rest[8..], Some(len as i32))
        .map_err(|e| bad(path, format!("cannot decompress: {e}")))?;
    if out.len() as u64 != len {
        return Err(bad(path, "payload shorter than its header says"));
    }
    Ok(out)
}

/// The `Image` held in a decompressed payload, shaped as a load of the vmlinux with
/// `options` would shape it.
pub fn image<'d>(path: &Path, payload: &'d [u8], options: &LoadOptions) -> Result<Image<'d>> {
    let wanted = read::Wanted {
        listing: options.pahole_text,
        dwarf: options.dwarf,
    };
    let mut image = read::read(payload, path, wanted)
        .map_err(|m| bad(path, m))?
        .image;
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
        .map(|s| {
            if s.typedef {
                options.typedefs.iter().any(|t| t == s.name)
            } else {
                options.structs.accepts(s.name)
            }
        })
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
