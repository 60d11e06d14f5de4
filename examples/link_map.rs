//! A developer's look at the link model around objects of one vmlinux (not a command
//! of the tool): `cargo run --release --example link_map -- VMLINUX NAME...` prints the
//! input section holding each named object, member by member: place, size, the
//! alignment the model asks and what the compiler asked, lead bytes.

use std::path::PathBuf;

use anyhow::{Context, Result};
use layout_diff_core::link::{LinkMap, align};
use layout_diff_core::{InputFile, LoadOptions};

fn main() -> Result<()> {
    let mut args = std::env::args().skip(1);
    let path = PathBuf::from(args.next().context("usage: link_map VMLINUX NAME...")?);
    let names: Vec<String> = args.collect();
    let file = InputFile::open(&path)?;
    let image = file.load(&LoadOptions::default())?;
    let map = LinkMap::build(&image);
    let vars = image.variables_of_symbols();
    for o in &map.outputs {
        for input in &o.inputs {
            let hit = input
                .members
                .iter()
                .any(|m| names.iter().any(|n| image.symbols[m.symbol].name == n));
            if !hit {
                continue;
            }
            println!(
                "{} {:?}: align {} boundary {} lead {} guessed {:?} size {:?}",
                o.section,
                input.origin,
                input.align,
                input.boundary,
                input.lead,
                input.guessed,
                input.size
            );
            for m in &input.members {
                let s = &image.symbols[m.symbol];
                let asked = align::asked(&image, s, vars.of(s));
                println!(
                    "  {:#x} {:>6} {:<32} align {:>3} (asked {:>3}{}) lead {:>4} inside {:?} var {}",
                    s.place,
                    m.size,
                    s.name,
                    m.align,
                    asked.alignment,
                    if asked.explicit { " explicit" } else { "" },
                    m.lead,
                    m.inside,
                    vars.of(s).map_or("none".to_string(), |v| format!(
                        "{:?} {:?} line {:?} declared {:?}",
                        v.ctype.kind, v.alignment, v.decl_line, v.declared
                    )),
                );
            }
        }
    }
    Ok(())
}
