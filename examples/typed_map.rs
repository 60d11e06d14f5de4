//! A developer's look at the typed access map of one build (not a command of the
//! tool): `cargo run --release --example typed_map -- VMLINUX [coverage | tsv | time]`.
//! `coverage` prints the operands typed and the untyped ones by reason; `tsv` writes
//! every typed access as one tab-separated line (instruction address, function, type,
//! offset, size, member path, kind, cold, per-CPU object, remote): what
//! bench/check-typed.py samples and checks against the kernel source; `time` loads the
//! build with and without the map and prints both times.

use std::path::PathBuf;
use std::time::Instant;

use anyhow::{Context, Result};
use layout_diff_core::load::StructFilter;
use layout_diff_core::typed::{NONE, UNTYPED};
use layout_diff_core::{InputFile, LoadOptions};

fn main() -> Result<()> {
    let mut args = std::env::args().skip(1);
    let path = PathBuf::from(
        args.next()
            .context("usage: typed_map VMLINUX [coverage|tsv|time]")?,
    );
    let mode = args.next().unwrap_or_else(|| "coverage".into());
    let file = InputFile::open(&path)?;
    let options = |typed: bool| LoadOptions {
        structs: StructFilter::None,
        variables: false,
        pahole_text: false,
        code: false,
        typed,
        ..LoadOptions::default()
    };
    if mode == "plain" {
        file.load(&options(false))?;
        return Ok(());
    }
    if mode == "time" {
        for typed in [false, true, false, true] {
            let t = Instant::now();
            let image = file.load(&options(typed))?;
            println!(
                "typed {typed}: {:.3} s ({} accesses)",
                t.elapsed().as_secs_f64(),
                image.typed.accesses.len()
            );
        }
        return Ok(());
    }
    let image = file.load(&options(true))?;
    let map = &image.typed;
    match mode.as_str() {
        "tsv" => {
            let mut out = String::new();
            for a in &map.accesses {
                let function = image.symbols[a.function as usize].name;
                let member = map.member(a).unwrap_or("(padding)");
                let percpu = match a.percpu {
                    NONE => "-",
                    p => image.symbols[p as usize].name,
                };
                out.push_str(&format!(
                    "{:x}\t{function}\t{}\t{}\t{}\t{member}\t{:?}\t{}\t{percpu}\t{}\n",
                    a.insn, map.types[a.ty as usize], a.offset, a.size, a.kind, a.cold, a.remote
                ));
            }
            print!("{out}");
        }
        _ => {
            let c = &map.coverage;
            let pct = |n: u64| 100.0 * n as f64 / c.operands.max(1) as f64;
            println!("operands (base register, not the stack): {}", c.operands);
            println!("typed: {} ({:.1}%)", c.typed(), pct(c.typed()));
            println!(
                "  struct or union members: {} ({:.1}%)",
                c.members,
                pct(c.members)
            );
            println!(
                "  pointers to scalars: {} ({:.1}%)",
                c.scalars,
                pct(c.scalars)
            );
            for why in UNTYPED {
                let n = c.untyped[why as usize];
                println!("untyped, {}: {n} ({:.1}%)", why.label(), pct(n));
            }
            println!("stack operands: {}", c.stack);
            println!(
                "accesses recorded: {} on {} types, {} member paths",
                map.accesses.len(),
                map.types.len(),
                map.members.len()
            );
        }
    }
    Ok(())
}
