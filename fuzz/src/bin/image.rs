//! Fuzz target: an input image from bytes (ELF with DWARF, ELF with `.BTF`, or not an
//! ELF at all), loaded with everything (structs, variables, pahole's spellings), then
//! diffed against itself as the diff command would.
use std::path::Path;

use layout_diff::{InputFile, LoadOptions};

fn main() {
    afl::fuzz!(|data: &[u8]| {
        let Ok(file) = InputFile::from_bytes(Path::new("fuzz.elf"), data) else {
            return;
        };
        if let Ok(image) = file.load(&LoadOptions::default()) {
            let _ = layout_diff::show::summary(&image);
            let _ = layout_diff::diff::diff(&image, &image, &Default::default());
        }
    });
}
