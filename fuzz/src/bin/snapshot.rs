//! Fuzz target: a snapshot file (`layout-diff snapshot`) from bytes, opened as every
//! command opens one (`InputFile::open`, which checks it), loaded with everything, then
//! summarised, diffed against itself, asked for its source lines (`--with-lines`) and,
//! when it has a struct, predicted with the first struct grown by 8 bytes (`whatif`).
//!
//! A snapshot's header holds a CRC-32 of the rest, so nearly every mutation would stop
//! at "checksum mismatch": the target writes the right checksum into the input first
//! (a corrupted file with a valid checksum is what the reader must survive anyway).
use std::path::Path;

use layout_diff_core::whatif::{Change, Size, predict};
use layout_diff_core::{InputFile, LoadOptions};

fn main() {
    afl::fuzz!(|data: &[u8]| {
        let mut bytes = data.to_vec();
        if bytes.len() >= 16 {
            let crc = crc32fast::hash(&bytes[16..]);
            bytes[12..16].copy_from_slice(&crc.to_le_bytes());
        }
        let Ok(file) = InputFile::from_bytes(Path::new("fuzz.snap"), &bytes) else {
            return;
        };
        if let Ok(Some(lines)) = file.source_lines() {
            let _ = lines.find(0);
        }
        let Ok(image) = file.load(&LoadOptions::default()) else {
            return;
        };
        let _ = layout_diff_core::show::summary(&image);
        let _ = layout_diff_core::diff::diff(&image, &image, &Default::default());
        if let Some(first) = image.structs.iter().find(|s| !s.name.is_empty()) {
            let change = Change::Resize {
                name: first.name.to_string(),
                size: Size::Grow(8),
            };
            let _ = predict(&image, &[change], &[]);
        }
    });
}
