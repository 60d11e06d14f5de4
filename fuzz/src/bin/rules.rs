//! Fuzz target: a `check` rules file (TOML).
use std::path::Path;

fn main() {
    afl::fuzz!(|data: &[u8]| {
        if let Ok(text) = std::str::from_utf8(data) {
            let _ = layout_diff_core::check::rules::parse(Path::new("rules.toml"), text);
        }
    });
}
