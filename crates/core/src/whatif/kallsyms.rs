//! `whatif --objects` and the kallsyms tables: the symbols recompiled objects add
//! or remove change the tables the link generates in `.rodata`
//! (`link::kallsyms`), and what follows them there moves with their new sizes.

use rustc_hash::{FxHashMap, FxHashSet};

use crate::link::kallsyms::Kallsyms;
use crate::link::{Edits, LinkMap};
use crate::model::{Binding, Image, Space, Symbol, SymbolKind};

/// The tables laid out again: the symbols standing for them (past the image's and
/// the objects' own, hidden from the prediction) and what `whatif` says of them.
pub struct Placed {
    /// The symbols that stand for the tables in the link model.
    pub hidden: FxHashSet<usize>,
    /// The `assumed:` line: the tables' new symbol count and names size.
    pub assumption: String,
}

/// Puts the build's kallsyms tables into `map` as an input section of their own,
/// sized for the build's symbols less `removed` plus `added` (the recompiled
/// objects' new symbols, indices from `image.symbols.len()`), with symbols for them
/// appended to `added` and their new sizes in `edits`. `None` when no output section
/// of the map holds them.
pub fn place<'d>(
    image: &Image<'d>,
    map: &mut LinkMap<'d>,
    tables: &Kallsyms,
    removed: &FxHashSet<usize>,
    added: &mut Vec<Symbol<'d>>,
    edits: &mut Edits,
) -> Option<Placed> {
    let start = tables.tables.first()?.place;
    let section = image
        .sections
        .iter()
        .find(|s| s.address <= start && start < s.address.saturating_add(s.size))?
        .name;
    let symbols = edited(image, tables, removed, added);
    let sizes = tables.sizes(&symbols);
    let n = image.symbols.len();
    let mut members = Vec::new();
    let mut hidden = FxHashSet::default();
    for (t, &size) in tables.tables.iter().zip(&sizes) {
        let index = n + added.len();
        added.push(Symbol {
            name: t.label,
            file: None,
            unit: None,
            compile_unit: None,
            group: 0,
            kind: SymbolKind::Object,
            binding: Binding::Global,
            section,
            address: t.place,
            size: t.size,
            space: Space::Global,
            place: t.place,
        });
        members.push((index, t.size));
        hidden.insert(index);
        if size != t.size {
            edits.size.insert(index, size);
        }
    }
    if !map.insert_generated(image, start, tables.align, &members, tables.after) {
        added.truncate(added.len() - members.len());
        return None;
    }
    let names = tables
        .tables
        .iter()
        .zip(&sizes)
        .find(|(t, _)| t.label == "kallsyms_names");
    let grew = |now: u64, was: u64| format!("{:+}", now as i64 - was as i64);
    let assumption = format!(
        "kallsyms tables: {} symbols ({}){}, compressed again as scripts/kallsyms does (it gives the build's tables back exactly), each {}-aligned",
        symbols.len(),
        grew(symbols.len() as u64, tables.symbols.len() as u64),
        names.map_or(String::new(), |(t, &now)| format!(
            ", {} B of names ({})",
            now,
            grew(now, t.size)
        )),
        tables.align
    );
    Some(Placed { hidden, assumption })
}

/// The tables' symbols (type letter, then name) with `removed` taken out and `added`
/// put in, as the link would list them: a function always, a data object when the
/// tables hold its section's objects (`CONFIG_KALLSYMS_ALL`).
fn edited(
    image: &Image<'_>,
    tables: &Kallsyms,
    removed: &FxHashSet<usize>,
    added: &[Symbol<'_>],
) -> Vec<Vec<u8>> {
    let mut by_name: FxHashMap<&[u8], Vec<usize>> = FxHashMap::default();
    for (i, s) in tables.symbols.iter().enumerate() {
        by_name.entry(&s[1..]).or_default().push(i);
    }
    let classes = data_letters(image, tables, &by_name);
    let mut gone = vec![false; tables.symbols.len()];
    for &i in removed {
        let s = &image.symbols[i];
        let Some(letter) = letter(s, &classes) else {
            continue;
        };
        if let Some(&k) = by_name.get(s.name.as_bytes()).and_then(|list| {
            list.iter()
                .find(|&&k| !gone[k] && tables.symbols[k][0] == letter)
        }) {
            gone[k] = true;
        }
    }
    let mut out: Vec<Vec<u8>> = tables
        .symbols
        .iter()
        .zip(&gone)
        .filter(|(_, g)| !**g)
        .map(|(s, _)| s.clone())
        .collect();
    for s in added {
        if let Some(letter) = letter(s, &classes) {
            let mut entry = vec![letter];
            entry.extend_from_slice(s.name.as_bytes());
            out.push(entry);
        }
    }
    out
}

/// The lower-case `nm` letter of each output section's data objects, as the tables
/// say of the objects whose names they hold once (none when they hold no data).
fn data_letters<'d>(
    image: &Image<'d>,
    tables: &Kallsyms,
    by_name: &FxHashMap<&[u8], Vec<usize>>,
) -> FxHashMap<&'d str, u8> {
    let mut out = FxHashMap::default();
    if !tables.all_symbols {
        return out;
    }
    for s in &image.symbols {
        if s.kind != SymbolKind::Object || out.contains_key(s.section) {
            continue;
        }
        if let Some([k]) = by_name.get(s.name.as_bytes()).map(Vec::as_slice) {
            out.insert(s.section, tables.symbols[*k][0].to_ascii_lowercase());
        }
    }
    out
}

/// The letter `nm` gives `s` in the tables, when they hold it.
fn letter(s: &Symbol<'_>, classes: &FxHashMap<&str, u8>) -> Option<u8> {
    let lower = match s.kind {
        SymbolKind::Function if s.binding == Binding::Weak => return Some(b'W'),
        SymbolKind::Function => b't',
        SymbolKind::Object if s.binding == Binding::Weak => return Some(b'V'),
        SymbolKind::Object => *classes.get(s.section)?,
        SymbolKind::Tls => return None,
    };
    Some(match s.binding {
        Binding::Local => lower,
        _ => lower.to_ascii_uppercase(),
    })
}
