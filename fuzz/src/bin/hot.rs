//! Fuzz target: a `--hot` file (perf c2c, data-type or symbol profile, or a name list,
//! recognised by its header words) and a `--hot-list` TOML file.
fn main() {
    afl::fuzz!(|data: &[u8]| {
        if let Ok(text) = std::str::from_utf8(data) {
            let _ = layout_diff_core::perf::read(text);
            let _ = layout_diff_core::evidence::KnownList::parse(text);
        }
    });
}
