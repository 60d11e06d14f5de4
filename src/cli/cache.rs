//! The snapshot cache as the binary sees it: where it lives (`$XDG_CACHE_HOME/layout-diff`,
//! else `~/.cache/layout-diff`), how large it may grow (`LAYOUT_DIFF_CACHE_SIZE`), which
//! runs use it (not `--no-cache`, not `--lang all`, whose Rust units no snapshot
//! holds), and the `cache` command that lists and clears it. The library
//! (`layout_diff_core::cache`) reads and writes the entries.

use std::path::PathBuf;
use std::time::SystemTime;

use anyhow::Result;

use super::Output;
use super::args::{CacheArgs, Common};
use layout_diff_core::cache::{Cache, DEFAULT_LIMIT};

/// The environment variable that sets the cache's size limit.
const SIZE_VAR: &str = "LAYOUT_DIFF_CACHE_SIZE";

/// The cache a command with these options reads through: none with `--no-cache` or
/// `--lang all`, with a limit of 0, or when no cache directory can be named.
pub(crate) fn for_command(common: &Common) -> Result<Option<Cache>> {
    if common.no_cache || common.rust() {
        return Ok(None);
    }
    Ok(located()?.filter(|c| c.limit() > 0))
}

/// The user's cache, when `$XDG_CACHE_HOME` (absolute, as the XDG base directory
/// specification asks) or `$HOME` names a directory for it.
fn located() -> Result<Option<Cache>> {
    let Some(dir) = directory() else {
        return Ok(None);
    };
    Ok(Some(Cache::new(dir, limit()?, stamp())))
}

fn directory() -> Option<PathBuf> {
    let absolute = |var: &str| {
        std::env::var_os(var)
            .map(PathBuf::from)
            .filter(|p| p.is_absolute())
    };
    let base = absolute("XDG_CACHE_HOME").or_else(|| absolute("HOME").map(|h| h.join(".cache")))?;
    Some(base.join("layout-diff"))
}

/// `LAYOUT_DIFF_CACHE_SIZE`, else the default.
fn limit() -> Result<u64> {
    match std::env::var(SIZE_VAR) {
        Ok(text) => parse_size(&text).map_err(|e| anyhow::anyhow!("{SIZE_VAR}={text:?}: {e}")),
        Err(std::env::VarError::NotPresent) => Ok(DEFAULT_LIMIT),
        Err(std::env::VarError::NotUnicode(_)) => anyhow::bail!("{SIZE_VAR}: not UTF-8"),
    }
}

/// A size in bytes, or a number followed by K, M, G or T (powers of 1024).
fn parse_size(text: &str) -> Result<u64, String> {
    let t = text.trim();
    let (digits, shift) = match t.char_indices().last() {
        Some((i, c)) if c.is_ascii_alphabetic() => {
            let shift = match c.to_ascii_uppercase() {
                'K' => 10,
                'M' => 20,
                'G' => 30,
                'T' => 40,
                _ => return Err("not a size (bytes, or a number with K, M, G or T)".into()),
            };
            (&t[..i], shift)
        }
        _ => (t, 0),
    };
    let n: u64 = digits
        .parse()
        .map_err(|_| "not a size (bytes, or a number with K, M, G or T)".to_string())?;
    n.checked_mul(1 << shift)
        .ok_or_else(|| "too large".to_string())
}

/// What tells this build of the tool from others: its version (with the commit it was
/// built from) and its executable's size and modification time, so that a rebuild of
/// the same commit with other code does not read entries the last one wrote.
fn stamp() -> String {
    let exe = std::env::current_exe()
        .and_then(std::fs::metadata)
        .ok()
        .map(|m| {
            let time = m
                .modified()
                .ok()
                .and_then(|t| t.duration_since(SystemTime::UNIX_EPOCH).ok())
                .map_or(0, |d| d.as_nanos());
            format!("{} {time}", m.len())
        })
        .unwrap_or_default();
    format!("layout-diff {} {exe}", env!("LAYOUT_DIFF_VERSION"))
}

/// `layout-diff cache [--clear]`.
pub fn cache(args: &CacheArgs) -> Result<Output> {
    let Some(cache) = located()? else {
        anyhow::bail!("no cache directory: neither XDG_CACHE_HOME nor HOME is an absolute path");
    };
    let dir = cache.dir().display();
    if args.clear {
        let cleared = cache.clear()?;
        return Ok(Output {
            text: format!(
                "{dir}: removed {} files, {}\n",
                cleared.files,
                size(cleared.bytes)
            ),
            code: 0,
            note: None,
        });
    }
    let entries = cache.entries()?;
    let total: u64 = entries.iter().map(|e| e.bytes).sum();
    let mut text = format!(
        "{dir}: {} snapshots, {} of {} ({SIZE_VAR})\n",
        entries.len(),
        size(total),
        size(cache.limit())
    );
    let now = SystemTime::now();
    for e in &entries {
        let age = now.duration_since(e.used).map_or(0, |d| d.as_secs());
        let source = e
            .source
            .as_ref()
            .map_or("(unreadable header)".to_string(), |p| {
                p.display().to_string()
            });
        let stale = if e.current {
            ""
        } else {
            "  (another build of layout-diff: a miss)"
        };
        text += &format!(
            "{:>9}  used {:>9}  {source}{stale}\n",
            size(e.bytes),
            ago(age)
        );
    }
    Ok(Output {
        text,
        code: 0,
        note: None,
    })
}

/// Bytes in the largest binary unit that keeps a whole number above 1.
fn size(bytes: u64) -> String {
    const UNITS: [&str; 4] = ["KiB", "MiB", "GiB", "TiB"];
    let mut value = bytes as f64;
    let mut unit = "B";
    for u in UNITS {
        if value < 1024.0 {
            break;
        }
        value /= 1024.0;
        unit = u;
    }
    if unit == "B" {
        format!("{bytes} B")
    } else {
        format!("{value:.1} {unit}")
    }
}

/// `secs` seconds as the largest unit: `12 s ago`, `3 min ago`, `5 h ago`, `2 d ago`.
fn ago(secs: u64) -> String {
    match secs {
        0..60 => format!("{secs} s ago"),
        60..3600 => format!("{} min ago", secs / 60),
        3600..86400 => format!("{} h ago", secs / 3600),
        _ => format!("{} d ago", secs / 86400),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_read_with_binary_suffixes() {
        assert_eq!(parse_size("0"), Ok(0));
        assert_eq!(parse_size("1234"), Ok(1234));
        assert_eq!(parse_size("2G"), Ok(2 << 30));
        assert_eq!(parse_size("500m"), Ok(500 << 20));
        assert_eq!(parse_size(" 64K "), Ok(64 << 10));
        assert_eq!(parse_size("1T"), Ok(1 << 40));
        for bad in ["", "G", "2X", "-1", "1.5G", "2GB"] {
            assert!(parse_size(bad).is_err(), "{bad}");
        }
        assert_eq!(parse_size("99999999999T"), Err("too large".to_string()));
    }

    #[test]
    fn sizes_and_ages_print_in_one_unit() {
        assert_eq!(size(0), "0 B");
        assert_eq!(size(1023), "1023 B");
        assert_eq!(size(3 << 20), "3.0 MiB");
        assert_eq!(size(2 << 30), "2.0 GiB");
        assert_eq!(ago(59), "59 s ago");
        assert_eq!(ago(60), "1 min ago");
        assert_eq!(ago(7200), "2 h ago");
        assert_eq!(ago(86400 * 3), "3 d ago");
    }
}
