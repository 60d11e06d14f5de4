//! Fuzz target: a `perf c2c report --stdio` text.
fn main() {
    afl::fuzz!(|data: &[u8]| {
        if let Ok(text) = std::str::from_utf8(data) {
            let _ = layout_diff_core::perf::c2c::is_c2c(text);
            let _ = layout_diff_core::perf::c2c::parse(text);
        }
    });
}
