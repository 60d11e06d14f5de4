//! Fuzz target: a symbol list (System.map, /proc/kallsyms) beside a BTF blob.
use std::path::Path;

use layout_diff_core::{InputFile, LoadOptions};

/// The smallest valid BTF: a header, no types, one empty string.
const BTF: &[u8] = &[
    0x9f, 0xeb, 1, 0, 24, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0,
];

fn main() {
    afl::fuzz!(|data: &[u8]| {
        let Ok(text) = std::str::from_utf8(data) else {
            return;
        };
        let Ok(file) = InputFile::from_bytes(Path::new("fuzz.btf"), BTF) else {
            return;
        };
        if let Ok(file) = file.with_symbol_text(Path::new("System.map"), text.to_string()) {
            let _ = file.load(&LoadOptions::default());
        }
    });
}
