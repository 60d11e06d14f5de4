//! A developer's look at the access map of one vmlinux (not a command of the tool):
//! `cargo run --release --example access_map -- VMLINUX [time RUNS | refs | counts | writers]`.
//! `time` builds the map RUNS times and prints each time; `refs` writes every
//! reference as one JSON object a line (what bench/access-vs-objdump.py compares with
//! objdump); `writers` the functions that write through arguments (bit i: argument i);
//! `counts` prints the totals and the facts bench/README quotes.

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::time::Instant;

use anyhow::{Context, Result, bail};
use layout_diff_core::access::{self, AccessKind, AccessMap};
use layout_diff_core::model::{Image, Space};
use layout_diff_core::{InputFile, LoadOptions};

fn main() -> Result<()> {
    let mut args = std::env::args().skip(1);
    let path = PathBuf::from(
        args.next()
            .context("usage: access_map VMLINUX [time N|refs|counts]")?,
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
                let map = access::build(&image, &code);
                println!(
                    "{:.3} s, {} refs",
                    t.elapsed().as_secs_f64(),
                    map.refs.len()
                );
            }
        }
        "refs" => refs(&image, &access::build(&image, &code)),
        "counts" => counts(&image, &access::build(&image, &code)),
        "writers" => {
            for w in access::build(&image, &code).writers {
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

fn refs(image: &Image<'_>, map: &AccessMap) {
    for a in &map.refs {
        let object = &image.symbols[a.object as usize];
        let (callee, writes) = match a.kind {
            AccessKind::Address { callee, writes } => (callee.map(|c| name(image, c)), writes),
            _ => (None, false),
        };
        let line = serde_json::json!({
            "function": name(image, a.function),
            "function_address": format!("{:#x}", image.symbols[a.function as usize].address),
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
