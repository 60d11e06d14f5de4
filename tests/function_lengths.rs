//! The length of every function in the crates' `src/` (tests left out): a function a
//! reader can hold is at most 120 lines, and at most 15 are over 80. Lines are counted
//! from `fn` to the closing brace, as the file spells them.

use std::path::{Path, PathBuf};

use syn::visit::Visit;

/// The longest a function may be.
const MOST: usize = 120;
/// Past this a function is long; only a few may be.
const LONG: usize = 80;
/// How many functions may be long.
const LONG_ALLOWED: usize = 15;

/// One function: where it is, its name and its length in lines.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Length {
    file: String,
    name: String,
    lines: usize,
}

/// Whether the attributes hold `#[test]` or `#[cfg(test)]`.
fn is_test(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|a| {
        a.path().is_ident("test")
            || (a.path().is_ident("cfg") && a.parse_args::<syn::Ident>().is_ok_and(|i| i == "test"))
    })
}

/// Collects the functions of one file, and the modules it declares as test-only
/// (`#[cfg(test)] mod tests;`), whose files are then left out.
struct Walk<'a> {
    file: &'a str,
    out: Vec<Length>,
    test_mods: Vec<String>,
    /// The enclosing `impl`'s type, to name methods `Type::name`.
    owner: Option<String>,
}

impl Walk<'_> {
    fn push(&mut self, name: &syn::Ident, sig: &syn::Signature, block: &syn::Block) {
        let start = sig.fn_token.span.start().line;
        let end = block.brace_token.span.close().end().line;
        let name = match &self.owner {
            Some(o) => format!("{o}::{name}"),
            None => name.to_string(),
        };
        self.out.push(Length {
            file: self.file.to_string(),
            name,
            lines: end + 1 - start,
        });
    }
}

impl<'ast> Visit<'ast> for Walk<'_> {
    fn visit_item_mod(&mut self, m: &'ast syn::ItemMod) {
        if is_test(&m.attrs) {
            if m.content.is_none() {
                self.test_mods.push(m.ident.to_string());
            }
            return;
        }
        syn::visit::visit_item_mod(self, m);
    }

    fn visit_item_fn(&mut self, f: &'ast syn::ItemFn) {
        if is_test(&f.attrs) {
            return;
        }
        self.push(&f.sig.ident, &f.sig, &f.block);
        syn::visit::visit_item_fn(self, f);
    }

    fn visit_item_impl(&mut self, i: &'ast syn::ItemImpl) {
        if is_test(&i.attrs) {
            return;
        }
        let ty = &i.self_ty;
        let previous = self.owner.replace(quote_type(ty));
        syn::visit::visit_item_impl(self, i);
        self.owner = previous;
    }

    fn visit_impl_item_fn(&mut self, f: &'ast syn::ImplItemFn) {
        if is_test(&f.attrs) {
            return;
        }
        self.push(&f.sig.ident, &f.sig, &f.block);
        syn::visit::visit_impl_item_fn(self, f);
    }

    fn visit_trait_item_fn(&mut self, f: &'ast syn::TraitItemFn) {
        if let Some(block) = &f.default {
            self.push(&f.sig.ident, &f.sig, block);
        }
        syn::visit::visit_trait_item_fn(self, f);
    }
}

/// An impl's type as a short name (`LinkMap`, `Pair`), for the report.
fn quote_type(ty: &syn::Type) -> String {
    match ty {
        syn::Type::Path(p) => p
            .path
            .segments
            .last()
            .map(|s| s.ident.to_string())
            .unwrap_or_default(),
        syn::Type::Reference(r) => quote_type(&r.elem),
        _ => String::from("_"),
    }
}

/// Every non-test function under `src`, walking modules as rustc would find them.
fn lengths_in(src: &Path, root: &Path) -> Vec<Length> {
    let mut out = Vec::new();
    let mut files: Vec<PathBuf> = Vec::new();
    let mut skip: Vec<PathBuf> = Vec::new();
    collect(src, &mut files);
    files.sort();
    // Parse each file once; a test module's file (and what is under it) is left out.
    let mut parsed = Vec::new();
    for p in &files {
        let text = std::fs::read_to_string(p).expect("source");
        let ast = syn::parse_file(&text).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
        let shown = p.strip_prefix(root).unwrap().display().to_string();
        let mut w = Walk {
            file: &shown,
            out: Vec::new(),
            test_mods: Vec::new(),
            owner: None,
        };
        w.visit_file(&ast);
        // `a/mod.rs` and `a.rs` declare their children in `a/`.
        let dir = if p
            .file_name()
            .is_some_and(|n| n == "mod.rs" || n == "lib.rs" || n == "main.rs")
        {
            p.parent().unwrap().to_path_buf()
        } else {
            p.with_extension("")
        };
        for m in &w.test_mods {
            skip.push(dir.join(format!("{m}.rs")));
            skip.push(dir.join(m));
        }
        parsed.push((p.clone(), w.out));
    }
    for (p, lengths) in parsed {
        if !skip.iter().any(|s| p.starts_with(s)) {
            out.extend(lengths);
        }
    }
    out
}

fn collect(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).expect("src") {
        let p = e.expect("entry").path();
        if p.is_dir() {
            collect(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

fn all_lengths() -> Option<Vec<Length>> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    // The library crates' sources are not in the binary's package (`cargo package`):
    // there is nothing to measure then.
    let dirs = ["src", "crates/core/src", "crates/report/src"];
    if !dirs.iter().all(|d| root.join(d).is_dir()) {
        return None;
    }
    let mut out = Vec::new();
    for d in dirs {
        out.extend(lengths_in(&root.join(d), root));
    }
    Some(out)
}

#[test]
fn no_function_is_over_120_lines_and_at_most_15_are_over_80() {
    let Some(all) = all_lengths() else {
        return;
    };
    let mut long: Vec<&Length> = all.iter().filter(|l| l.lines > LONG).collect();
    long.sort_by(|a, b| b.lines.cmp(&a.lines).then(a.name.cmp(&b.name)));
    let list: Vec<String> = long
        .iter()
        .map(|l| format!("{:>4} {} {}", l.lines, l.file, l.name))
        .collect();
    let over = long.iter().filter(|l| l.lines > MOST).count();
    assert!(
        over == 0 && long.len() <= LONG_ALLOWED,
        "{over} functions over {MOST} lines (none may be), {} over {LONG} (at most \
         {LONG_ALLOWED}):\n{}",
        long.len(),
        list.join("\n")
    );
}

#[test]
fn the_count_measures_from_fn_to_the_closing_brace_and_leaves_tests_out() {
    let src = "\
/// Doc lines are not counted.
fn three() {
    let _ = 1;
}

impl S {
    fn one(&self) {}
}

#[cfg(test)]
mod tests {
    fn hidden() {}
}

#[cfg(test)]
mod more;

#[test]
fn also_hidden() {}
";
    let ast = syn::parse_file(src).unwrap();
    let mut w = Walk {
        file: "x.rs",
        out: Vec::new(),
        test_mods: Vec::new(),
        owner: None,
    };
    w.visit_file(&ast);
    let got: Vec<(String, usize)> = w.out.into_iter().map(|l| (l.name, l.lines)).collect();
    assert_eq!(
        got,
        vec![("three".to_string(), 3), ("S::one".to_string(), 1)]
    );
    assert_eq!(w.test_mods, vec!["more".to_string()]);
}
