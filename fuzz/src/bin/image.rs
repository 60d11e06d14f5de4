//! Fuzz target: an input image from bytes (ELF with DWARF, ELF with `.BTF`, or not an
//! ELF at all), loaded with everything (structs, variables, pahole's spellings), then
//! diffed against itself as the diff command would; and loaded again as `show --symbol
//! NAME` loads it (only the variables the view of its first data objects needs).
use std::path::Path;

use layout_diff_core::load::StructFilter;
use layout_diff_core::model::SymbolKind;
use layout_diff_core::{InputFile, LoadOptions};

fn main() {
    afl::fuzz!(|data: &[u8]| {
        let Ok(file) = InputFile::from_bytes(Path::new("fuzz.elf"), data) else {
            return;
        };
        let Ok(image) = file.load(&LoadOptions::default()) else {
            return;
        };
        let _ = layout_diff_core::show::summary(&image);
        let _ = layout_diff_core::diff::diff(&image, &image, &Default::default());
        let names: Vec<String> = image
            .symbols
            .iter()
            .filter(|s| s.kind != SymbolKind::Function)
            .take(2)
            .map(|s| s.name.to_string())
            .collect();
        let Ok(set) = layout_diff_core::show::globs(&names) else {
            return;
        };
        let sparse = LoadOptions {
            structs: StructFilter::None,
            variables_for: names,
            ..LoadOptions::default()
        };
        if let Ok(image) = file.load(&sparse) {
            let _ = layout_diff_core::show::symbols(&image, &set);
        }
    });
}
