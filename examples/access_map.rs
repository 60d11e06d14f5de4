//! A developer's look at the access map of one vmlinux (not a command of the tool):
//! `cargo run --release --example access_map -- VMLINUX [time RUNS | refs [STARTS] | counts | writers]`.
//! `time` builds the map RUNS times and prints each time; `refs` writes every
//! reference as one JSON object a line, or with STARTS (a file of function start
//! addresses in hex, one a line) only those of the functions decoded from those
//! starts: what bench/check-access.py compares with objdump; `writers` the functions
//! that write through arguments (bit i: argument i); `counts` prints the totals,
//! the references per kind and the distinct objects read, written and updated
//! atomically.

use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{Context, Result, bail};
use layout_diff_core::access::{self, AccessKind, AccessMap};
use layout_diff_core::model::{Image, Space};
use layout_diff_core::{InputFile, LoadOptions};

fn main() -> Result<()> {
    let mut args = std::env::args().skip(1);
    let path = PathBuf::from(
        args.next()
            .context("usage: access_map VMLINUX [time N|refs [STARTS]|counts|writers]")?,
    );
    let mode = args.next().unwrap_or_else(|| "counts".into());
    let file = InputFile::open(&path)?;
    let options = LoadOptions {
        dwarf: false,
        ..LoadOptions::default()
    };
    let image = file.load(&options)?;
    let code = file.code_sections()?;
    match mode.as_str() {
        "time" => {
            let runs: usize = args.next().as_deref().unwrap_or("5").parse()?;
            for _ in 0..runs {
                let t = Instant::now();
                let map = access::build(&image, &code, &[]);
                println!(
                    "{:.3} s, {} refs",
                    t.elapsed().as_secs_f64(),
                    map.refs.len()
                );
            }
        }
        "refs" => {
            let starts = match args.next() {
                Some(list) => Some(starts(&PathBuf::from(list))?),
                None => None,
            };
            refs(&image, &access::build(&image, &code, &[]), starts.as_ref());
        }
        "counts" => {
            let t = Instant::now();
            let map = access::build(&image, &code, &[]);
            let secs = t.elapsed().as_secs_f64();
            println!(
                "built in {secs:.3} s with {} threads",
                rayon::current_num_threads()
            );
            counts(&image, &map);
        }
        "writers" => {
            for w in access::build(&image, &code, &[]).writers {
                println!("{} {:06b}", name(&image, w.function), w.args);
            }
        }
        other => bail!("unknown mode {other}"),
    }
    Ok(())
}

fn name<'d>(image: &Image<'d>, i: u32) -> &'d str {
    image.symbols.get(i as usize).map_or("?", |s| s.name)
}

/// The function start addresses listed in `path` (hex, `0x` optional, one a line).
fn starts(path: &Path) -> Result<HashSet<u64>> {
    let text = std::fs::read_to_string(path).with_context(|| format!("{}", path.display()))?;
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .map(|l| {
            u64::from_str_radix(l.trim_start_matches("0x"), 16)
                .with_context(|| format!("{}: bad address {l}", path.display()))
        })
        .collect()
}

/// Every reference as a JSON line, or only those of the functions starting at `starts`.
fn refs(image: &Image<'_>, map: &AccessMap, starts: Option<&HashSet<u64>>) {
    for a in &map.refs {
        let start = image.symbols[a.function as usize].address;
        if starts.is_some_and(|s| !s.contains(&start)) {
            continue;
        }
        let object = &image.symbols[a.object as usize];
        let (callee, writes) = match a.kind {
            AccessKind::Address { callee, writes } => (callee.map(|c| name(image, c)), writes),
            _ => (None, false),
        };
        let line = serde_json::json!({
            "function": name(image, a.function),
            "function_address": format!("{start:#x}"),
            "insn": format!("{:#x}", a.insn),
            "object": object.name,
            "percpu": object.space == Space::Percpu,
            "address": format!("{:#x}", object.address.wrapping_add(a.offset)),
            "offset": a.offset,
            "size": a.size,
            "indexed": a.indexed,
            "form": a.form,
            "kind": a.kind,
            "callee": callee,
            "writes": writes,
        });
        println!("{line}");
    }
}

fn counts(image: &Image<'_>, map: &AccessMap) {
    let distinct = |f: &dyn Fn(&AccessKind) -> bool| {
        map.refs
            .iter()
            .filter(|a| f(&a.kind))
            .map(|a| a.object)
            .collect::<BTreeSet<_>>()
    };
    let all = distinct(&|_| true);
    let percpu = all
        .iter()
        .filter(|&&o| image.symbols[o as usize].space == Space::Percpu)
        .count();
    println!("supported {}", map.supported);
    println!("{:?}", map.counts);
    println!("references {}", map.refs.len());
    let mut kinds: BTreeMap<&str, usize> = BTreeMap::new();
    for a in &map.refs {
        *kinds.entry(kind_name(&a.kind)).or_default() += 1;
    }
    for (kind, n) in &kinds {
        println!("references {kind} {n}");
    }
    // One kind each: objects with a plain read; with a write or read-modify-write
    // without lock; with an atomic update.
    println!(
        "objects with a read reference {}",
        distinct(&|k| *k == AccessKind::Read).len()
    );
    println!(
        "objects with a write or read-write reference {}",
        distinct(&|k| matches!(k, AccessKind::Write | AccessKind::ReadWrite)).len()
    );
    println!("objects referenced {} (per-CPU {percpu})", all.len());
    println!(
        "objects read {}",
        distinct(&|k| matches!(k, AccessKind::Read | AccessKind::ReadWrite)).len()
    );
    println!(
        "objects written {}",
        distinct(&|k| matches!(
            k,
            AccessKind::Write | AccessKind::ReadWrite | AccessKind::Atomic
        ))
        .len()
    );
    println!(
        "objects updated atomically {}",
        distinct(&|k| *k == AccessKind::Atomic).len()
    );
    println!(
        "objects address-taken {}",
        distinct(&|k| matches!(k, AccessKind::Address { .. })).len()
    );
    println!(
        "objects passed to a writer {}",
        distinct(&|k| matches!(k, AccessKind::Address { writes: true, .. })).len()
    );
    let first = map.writers.iter().filter(|w| w.args & 1 != 0).count();
    println!("functions writing through their first argument {first}");
    println!(
        "functions writing through some argument {}",
        map.writers.len()
    );
}

fn kind_name(kind: &AccessKind) -> &'static str {
    match kind {
        AccessKind::Read => "read",
        AccessKind::Write => "write",
        AccessKind::ReadWrite => "read_write",
        AccessKind::Atomic => "atomic",
        AccessKind::Address { callee: None, .. } => "address",
        AccessKind::Address {
            writes: false,
            callee: Some(_),
        } => "address_to_callee",
        AccessKind::Address {
            writes: true,
            callee: Some(_),
        } => "address_to_writer",
    }
}
