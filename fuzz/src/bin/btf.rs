//! Fuzz target: a raw BTF blob (`/sys/kernel/btf/vmlinux`) with a small symbol list.
use std::path::Path;

use layout_diff_core::{InputFile, LoadOptions};

const MAP: &str = "0000000000000000 D __per_cpu_start\n0000000000000000 D fixed_percpu_data\n\
0000000000001160 D injectm\n0000000000002000 D __per_cpu_end\n";

fn main() {
    afl::fuzz!(|data: &[u8]| {
        let Ok(file) = InputFile::from_bytes(Path::new("fuzz.btf"), data) else {
            return;
        };
        let Ok(file) = file.with_symbol_text(Path::new("System.map"), MAP.to_string()) else {
            return;
        };
        let _ = file.load(&LoadOptions::default());
    });
}
