//! The `use crate::`/`super::` edges between the files of each library crate's `src/`,
//! and the cycles among them: data should flow one way (docs/architecture.md), and a
//! cycle fails this test.

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Every `.rs` file under `dir`, as a module path relative to `src/` (`diff/changes`,
/// `load` for `load/mod.rs`).
fn files(dir: &Path, root: &Path, out: &mut BTreeMap<String, PathBuf>) {
    for e in std::fs::read_dir(dir).expect("src") {
        let p = e.expect("entry").path();
        if p.is_dir() {
            files(&p, root, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            let rel = p.strip_prefix(root).unwrap().with_extension("");
            let mut m = rel.to_string_lossy().replace('\\', "/");
            if let Some(stripped) = m.strip_suffix("/mod") {
                m = stripped.to_string();
            }
            out.insert(m, p);
        }
    }
}

/// The module a file's `use` path points into: the longest known module prefix.
fn resolve(path: &[String], known: &BTreeMap<String, PathBuf>) -> Option<String> {
    (1..=path.len())
        .rev()
        .map(|n| path[..n].join("/"))
        .find(|m| known.contains_key(m))
}

/// The modules `m`'s source refers to through `crate::` and `super::` paths.
fn edges(m: &str, src: &str, known: &BTreeMap<String, PathBuf>) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    // A file's parent module (`super`): `diff/changes` -> `diff`; `diff` (mod.rs) -> ``.
    let parent: Vec<String> = {
        let mut p: Vec<String> = m.split('/').map(str::to_string).collect();
        p.pop();
        p
    };
    let is_mod_rs = known[m].ends_with("mod.rs");
    for (prefix, base) in [
        ("crate::", Vec::new()),
        (
            "super::",
            if is_mod_rs {
                let mut p: Vec<String> = m.split('/').map(str::to_string).collect();
                p.pop();
                p
            } else {
                parent.clone()
            },
        ),
    ] {
        for (i, _) in src.match_indices(prefix) {
            let rest = &src[i + prefix.len()..];
            let words: Vec<String> = rest
                .split(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':'))
                .next()
                .unwrap_or("")
                .split("::")
                .filter(|w| !w.is_empty())
                .map(str::to_string)
                .collect();
            let mut path = base.clone();
            path.extend(words);
            if let Some(target) = resolve(&path, known)
                && target != m
                && !target.is_empty()
            {
                out.insert(target);
            }
        }
    }
    out
}

/// Strongly connected components of more than one file (Tarjan), each sorted.
fn cycles(graph: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    struct T<'g> {
        g: &'g BTreeMap<String, BTreeSet<String>>,
        index: BTreeMap<&'g str, usize>,
        low: BTreeMap<&'g str, usize>,
        stack: Vec<&'g str>,
        on: BTreeSet<&'g str>,
        next: usize,
        out: Vec<Vec<String>>,
    }
    fn visit<'g>(t: &mut T<'g>, v: &'g str) {
        t.index.insert(v, t.next);
        t.low.insert(v, t.next);
        t.next += 1;
        t.stack.push(v);
        t.on.insert(v);
        for w in t.g.get(v).into_iter().flatten() {
            let w = w.as_str();
            if !t.index.contains_key(w) {
                visit(t, w);
                let l = t.low[w].min(t.low[v]);
                t.low.insert(v, l);
            } else if t.on.contains(w) {
                let l = t.index[w].min(t.low[v]);
                t.low.insert(v, l);
            }
        }
        if t.low[v] == t.index[v] {
            let mut comp = Vec::new();
            while let Some(w) = t.stack.pop() {
                t.on.remove(w);
                comp.push(w.to_string());
                if w == v {
                    break;
                }
            }
            if comp.len() > 1 {
                comp.sort();
                t.out.push(comp);
            }
        }
    }
    let mut t = T {
        g: graph,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on: BTreeSet::new(),
        next: 0,
        out: Vec::new(),
    };
    for v in graph.keys() {
        if !t.index.contains_key(v.as_str()) {
            visit(&mut t, v);
        }
    }
    t.out.sort();
    t.out
}

/// The `crate::`/`super::` edges between the files of one crate's `src/`, with a
/// module tree's own ancestors left out.
fn graph(root: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let mut known = BTreeMap::new();
    files(root, root, &mut known);
    let library: BTreeMap<String, PathBuf> =
        known.into_iter().filter(|(m, _)| m != "lib").collect();
    library
        .iter()
        .map(|(m, p)| {
            let src = std::fs::read_to_string(p).expect("read");
            // Test modules (at the end of a file) are not part of the flow.
            let src = src.split("#[cfg(test)]\nmod ").next().unwrap_or(&src);
            let mut e = edges(m, src, &library);
            // A module's own ancestors (its `mod.rs` chain) are the module tree, not a
            // dependency between files of one level.
            e.retain(|t| !m.starts_with(&format!("{t}/")));
            (m.clone(), e)
        })
        .collect()
}

#[test]
fn the_library_crates_have_no_import_cycles() {
    // The workspace's crates depend one way (the binary on report on core), which cargo
    // enforces; inside each library crate the files must too. None remain: what
    // load/dwarf and load/lookup shared is load/unit's; `input` opens a file and calls
    // `load` or `snapshot` by its kind, neither of which knows `input`;
    // `snapshot::write` takes an `Image` (`InputFile::for_snapshot` reads it), and the
    // snapshot reader takes load/options only.
    for (krate, min_edges) in [("crates/core/src", 100), ("crates/report/src", 20)] {
        let Some(dir) = common::workspace_path(krate) else {
            return;
        };
        let g = graph(&dir);
        let edge_count: usize = g.values().map(BTreeSet::len).sum();
        assert!(
            edge_count > min_edges,
            "{krate}: only {edge_count} edges found"
        );
        assert_eq!(
            cycles(&g),
            Vec::<Vec<String>>::new(),
            "{krate}: import cycles"
        );
    }
}
