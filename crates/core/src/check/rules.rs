//! The rules file of `layout-diff check`: TOML tables `[struct.NAME]`,
//! `[symbol.NAME]`, `[function.NAME]` and `[group."STRUCT.GROUP"]` (NAME may be a
//! glob). Parsing is strict so that a typo never silently disables a rule: an unknown
//! table or key, or a value of the wrong type, is an error naming the file, the line
//! and the key.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// Limits on a struct's layout (laid at offset 0, as pahole shows it).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StructRule {
    /// Bytes the struct may take at most.
    pub max_size: Option<u64>,
    /// Lines it may span at most, laid at offset 0.
    pub max_cachelines: Option<u64>,
    /// Bytes the struct may grow by against OLD (needs `check OLD NEW`).
    pub max_growth: Option<u64>,
    /// Bytes of holes.
    pub max_holes: Option<u64>,
    /// Members that must start a line.
    #[serde(default)]
    pub line_start: Vec<String>,
    /// Sets of members of which no two may share a line.
    #[serde(default)]
    pub separate: Vec<Vec<String>>,
    /// Sets of members that must all share one line.
    #[serde(default)]
    pub together: Vec<Vec<String>>,
    /// Why the rule exists, printed with a failure.
    pub why: Option<String>,
}

/// Placement of a data or per-CPU object.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SymbolRule {
    /// The object starts at a multiple of this many bytes (64: it starts a line);
    /// `align`, the `[function]` spelling, is taken too.
    #[serde(alias = "align")]
    pub aligned: Option<u64>,
    /// No other object on any of its lines.
    pub alone: Option<bool>,
    /// Objects (names or globs) that must not share any of its lines.
    #[serde(default)]
    pub not_with: Vec<String>,
    /// Lines it may span at most.
    pub max_lines: Option<u64>,
    /// Why the rule exists, printed with a failure.
    pub why: Option<String>,
}

/// Placement of a function.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FunctionRule {
    /// Start address modulo this is 0; `aligned`, the `[symbol]` spelling, is taken too.
    #[serde(alias = "aligned")]
    pub align: Option<u64>,
    /// Why the rule exists, printed with a failure.
    pub why: Option<String>,
}

/// Limits on a cache-line group (`__cacheline_group_begin__G` .. `_end__G`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GroupRule {
    /// Bytes the group may take at most.
    pub max_size: Option<u64>,
    /// Lines it may span at most.
    pub max_lines: Option<u64>,
    /// The group starts a line.
    pub aligned: Option<bool>,
    /// Why the rule exists, printed with a failure.
    pub why: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    #[serde(default, rename = "struct")]
    structs: BTreeMap<String, StructRule>,
    #[serde(default, rename = "symbol")]
    symbols: BTreeMap<String, SymbolRule>,
    #[serde(default, rename = "function")]
    functions: BTreeMap<String, FunctionRule>,
    #[serde(default, rename = "group")]
    groups: BTreeMap<String, GroupRule>,
}

/// A rule with the name or glob it applies to and the line of its table header.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Named<T> {
    /// The table's name or glob.
    pub pattern: String,
    /// The line of its table header in the rules file.
    pub line: usize,
    /// The rule.
    pub rule: T,
}

/// A parsed rules file, each kind sorted by pattern.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Rules {
    /// The rules file.
    pub path: PathBuf,
    /// Struct rules, by pattern.
    pub structs: Vec<Named<StructRule>>,
    /// Symbol rules, by pattern.
    pub symbols: Vec<Named<SymbolRule>>,
    /// Function rules, by pattern.
    pub functions: Vec<Named<FunctionRule>>,
    /// Pattern `STRUCT.GROUP`.
    pub groups: Vec<Named<GroupRule>>,
}

impl Rules {
    /// Struct name patterns the rules need loaded (struct and group rules).
    pub fn struct_patterns(&self) -> Vec<String> {
        let mut v: Vec<String> = self.structs.iter().map(|r| r.pattern.clone()).collect();
        v.extend(
            self.groups
                .iter()
                .map(|g| split_group(&g.pattern).0.to_string()),
        );
        v.sort();
        v.dedup();
        v
    }

    /// Some rule compares with an older build (`max_growth`), so `check OLD NEW` is needed.
    pub fn needs_old(&self) -> bool {
        self.structs.iter().any(|r| r.rule.max_growth.is_some())
    }
}

/// `STRUCT.GROUP` -> (STRUCT, GROUP); a name without a dot is all struct.
pub fn split_group(pattern: &str) -> (&str, &str) {
    pattern.split_once('.').unwrap_or((pattern, ""))
}

/// A rules file that cannot be used: `FILE:LINE: key `K`: problem`.
#[derive(Debug, thiserror::Error)]
#[error("{}{}: {message}", path.display(), line.map(|l| format!(":{l}")).unwrap_or_default())]
pub struct RulesError {
    /// The rules file.
    pub path: PathBuf,
    /// The line of the mistake, when known.
    pub line: Option<usize>,
    /// What is wrong.
    pub message: String,
}

/// Reads and parses a rules file.
pub fn load(path: &Path) -> Result<Rules, RulesError> {
    let text = std::fs::read_to_string(path).map_err(|e| RulesError {
        path: path.to_path_buf(),
        line: None,
        message: format!("cannot read rules file: {e}"),
    })?;
    parse(path, &text)
}

/// Parses rules from `text` (read from `path`, named in errors).
pub fn parse(path: &Path, text: &str) -> Result<Rules, RulesError> {
    let err = |line: Option<usize>, message: String| RulesError {
        path: path.to_path_buf(),
        line,
        message,
    };
    let file: File = toml::from_str(text).map_err(|e| {
        let at = e.span().map(|s| s.start).unwrap_or(0);
        let line = text[..at.min(text.len())].matches('\n').count() + 1;
        let key = key_at(text, at);
        let message = with_guess(e.message().trim());
        let message = match key {
            Some(k) if !message.contains(&format!("`{k}`")) => format!("key `{k}`: {message}"),
            _ => message,
        };
        err(Some(line), message)
    })?;
    let rules = Rules {
        path: path.to_path_buf(),
        structs: named(text, "struct", file.structs),
        symbols: named(text, "symbol", file.symbols),
        functions: named(text, "function", file.functions),
        groups: named(text, "group", file.groups),
    };
    validate(&rules).map_err(|(line, m)| err(Some(line), m))?;
    Ok(rules)
}

fn named<T>(text: &str, kind: &str, m: BTreeMap<String, T>) -> Vec<Named<T>> {
    m.into_iter()
        .map(|(pattern, rule)| Named {
            line: header_line(text, kind, &pattern),
            pattern,
            rule,
        })
        .collect()
}

/// Checks values that TOML's types cannot: globs, non-zero alignments, pairs.
fn validate(r: &Rules) -> Result<(), (usize, String)> {
    if r.structs.is_empty() && r.symbols.is_empty() && r.functions.is_empty() && r.groups.is_empty()
    {
        return Err((
            1,
            "no rules: expected [struct.NAME], [symbol.NAME], [function.NAME] or \
             [group.\"STRUCT.GROUP\"] tables"
                .into(),
        ));
    }
    no_empty_table(r)?;
    valid_values(r)
}

/// A table without a rule checks nothing: say so rather than pass (the first such
/// table, structs first, then symbols, functions and groups).
fn no_empty_table(r: &Rules) -> Result<(), (usize, String)> {
    fn empty<T: Clone + Default + PartialEq>(rule: &T, clear_why: impl Fn(&mut T)) -> bool {
        let mut r = rule.clone();
        clear_why(&mut r);
        r == T::default()
    }
    let no_rule =
        |line: usize, kind: &str, p: &str| Err((line, format!("[{kind}.{p}] has no rule")));
    for x in &r.structs {
        if empty(&x.rule, |r| r.why = None) {
            return no_rule(x.line, "struct", &x.pattern);
        }
    }
    for x in &r.symbols {
        if empty(&x.rule, |r| r.why = None) {
            return no_rule(x.line, "symbol", &x.pattern);
        }
    }
    for x in &r.functions {
        if empty(&x.rule, |r| r.why = None) {
            return no_rule(x.line, "function", &x.pattern);
        }
    }
    for x in &r.groups {
        if empty(&x.rule, |r| r.why = None) {
            return no_rule(x.line, "group", &format!("{:?}", x.pattern));
        }
    }
    Ok(())
}

/// Every name is a glob, every alignment a power of two, every `separate` and
/// `together` list two or more members, every group `STRUCT.GROUP`.
fn valid_values(r: &Rules) -> Result<(), (usize, String)> {
    let glob = |line: usize, p: &str| {
        globset::Glob::new(p)
            .map(drop)
            .map_err(|e| (line, format!("bad name or glob `{p}`: {e}")))
    };
    // An alignment is a power of two: the compiler and the linker take no other.
    let nonzero = |line: usize, key: &str, v: Option<u64>| match v {
        Some(0) => Err((line, format!("key `{key}`: must be at least 1"))),
        Some(n) if !n.is_power_of_two() => Err((
            line,
            format!(
                "key `{key}`: {n} is not a power of two (an alignment is 1, 2, 4, ... 64, ...)"
            ),
        )),
        _ => Ok(()),
    };
    for s in &r.structs {
        glob(s.line, &s.pattern)?;
        for (key, sets) in [
            ("separate", &s.rule.separate),
            ("together", &s.rule.together),
        ] {
            if sets.iter().any(|set| set.len() < 2) {
                return Err((
                    s.line,
                    format!("key `{key}`: each list needs two or more members"),
                ));
            }
        }
    }
    for s in &r.symbols {
        glob(s.line, &s.pattern)?;
        nonzero(s.line, "aligned", s.rule.aligned)?;
        for p in &s.rule.not_with {
            glob(s.line, p)?;
        }
    }
    for f in &r.functions {
        glob(f.line, &f.pattern)?;
        nonzero(f.line, "align", f.rule.align)?;
    }
    for g in &r.groups {
        let (s, name) = split_group(&g.pattern);
        if name.is_empty() {
            return Err((
                g.line,
                format!("group `{}`: write it as \"STRUCT.GROUP\"", g.pattern),
            ));
        }
        glob(g.line, s)?;
        glob(g.line, name)?;
    }
    Ok(())
}

/// The key of the `key = value` line holding byte `at`, if that line has one.
/// serde's "unknown field `X`, expected one of `a`, `b`" (or "variant"), with the
/// expected name closest to `X` suggested when one is close (edit distance at most 2,
/// or one is a prefix of the other: `align` for `aligned`, `max_line` for `max_lines`).
fn with_guess(message: &str) -> String {
    let ticked = |s: &str| -> Vec<String> {
        s.split('`')
            .skip(1)
            .step_by(2)
            .map(str::to_string)
            .collect()
    };
    let Some((head, expected)) = message.split_once(", expected") else {
        return message.to_string();
    };
    let (Some(got), names) = (ticked(head).pop(), ticked(expected)) else {
        return message.to_string();
    };
    if !head.starts_with("unknown ") {
        return message.to_string();
    }
    let close = |n: &String| {
        strsim::levenshtein(&got, n) <= 2 || n.starts_with(&got) || got.starts_with(n.as_str())
    };
    match names
        .iter()
        .filter(|n| close(n))
        .min_by_key(|n| strsim::levenshtein(&got, n))
    {
        Some(guess) => format!("{message}; did you mean `{guess}`?"),
        None => message.to_string(),
    }
}

fn key_at(text: &str, at: usize) -> Option<String> {
    let at = at.min(text.len());
    let start = text[..at].rfind('\n').map_or(0, |i| i + 1);
    let end = text[at..].find('\n').map_or(text.len(), |i| at + i);
    let (key, _) = text[start..end].split_once('=')?;
    let key = key.trim().trim_matches('"');
    (!key.is_empty() && !key.starts_with('[')).then(|| key.to_string())
}

/// Line of the `[kind.name]` header (1-based), or 0 when written some other way.
fn header_line(text: &str, kind: &str, name: &str) -> usize {
    let forms = [format!("[{kind}.{name}]"), format!("[{kind}.\"{name}\"]")];
    text.lines()
        .position(|l| {
            let l: String = l.chars().filter(|c| !c.is_whitespace()).collect();
            forms.iter().any(|f| l.starts_with(f.as_str()))
        })
        .map_or(0, |i| i + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(text: &str) -> Result<Rules, RulesError> {
        parse(Path::new("r.toml"), text)
    }

    /// The one line a refused `text` is answered with.
    fn refused(text: &str) -> String {
        p(text).map(|_| ()).unwrap_err().to_string()
    }

    /// Issue 33, defect 10: an alignment that is no power of two is refused.
    #[test]
    fn an_alignment_that_is_no_power_of_two_is_refused() {
        let e = refused("[symbol.root_user]\naligned = 48\n");
        assert_eq!(
            e.to_string(),
            "r.toml:1: key `aligned`: 48 is not a power of two (an alignment is 1, 2, 4, ... 64, ...)"
        );
        let e = refused("[function.f]\nalign = 3\n");
        assert!(e.to_string().contains("3 is not a power of two"), "{e}");
        assert!(p("[symbol.root_user]\naligned = 64\n").is_ok());
    }

    #[test]
    fn every_table_and_key() {
        let r = p(r#"
[struct.user_struct]
max_size = 192
max_cachelines = 3
max_growth = 0
max_holes = 8
line_start = ["__count"]
separate = [["__count", "sigpending"]]
together = [["uid", "locked_vm"]]
why = "hot refcount"

[symbol.root_user]
aligned = 64
alone = true
not_with = ["init_*"]
max_lines = 2

[function.hot_path]
align = 64

[group."netdev_like.rx"]
max_size = 64
max_lines = 1
aligned = true
"#)
        .unwrap();
        assert_eq!(r.structs.len(), 1);
        assert_eq!(r.structs[0].line, 2);
        assert_eq!(r.structs[0].rule.separate, [["__count", "sigpending"]]);
        assert_eq!(r.structs[0].rule.why.as_deref(), Some("hot refcount"));
        assert_eq!(r.symbols[0].line, 12);
        assert_eq!(r.symbols[0].rule.aligned, Some(64));
        assert_eq!(r.functions[0].rule.align, Some(64));
        assert_eq!(r.groups[0].pattern, "netdev_like.rx");
        assert_eq!(r.groups[0].line, 21);
        assert_eq!(r.struct_patterns(), ["netdev_like", "user_struct"]);
        assert!(r.needs_old());
    }

    #[test]
    fn unknown_key_names_file_line_and_key() {
        let e = refused("[symbol.root_user]\naligned = 64\nallone = true\n");
        assert!(e.starts_with("r.toml:3: "), "{e}");
        assert!(e.contains("`allone`"), "{e}");
    }

    #[test]
    fn wrong_type_names_file_line_and_key() {
        let e = refused("[struct.mce]\n\nmax_size = \"120\"\n");
        assert!(e.starts_with("r.toml:3: key `max_size`: "), "{e}");
        assert!(e.contains("invalid type"), "{e}");
    }

    #[test]
    fn unknown_table_and_bad_values() {
        let e = refused("[structs.mce]\nmax_size = 1\n");
        assert!(e.starts_with("r.toml:1: "), "{e}");
        assert!(e.contains("`structs`"), "{e}");
        // Each table takes the other's spelling of alignment.
        let r = parse(
            Path::new("r.toml"),
            "[function.f]\naligned = 64\n[symbol.s]\nalign = 64\n",
        )
        .unwrap();
        assert_eq!(r.functions[0].rule.align, Some(64));
        assert_eq!(r.symbols[0].rule.aligned, Some(64));
        // A misspelt key or table is answered with the name probably meant.
        assert_eq!(
            refused("[symbol.s]\nalone = true\nmax_line = 2\n"),
            "r.toml:3: unknown field `max_line`, expected one of `align`, `aligned`, `alone`, `not_with`, `max_lines`, `why`; did you mean `max_lines`?"
        );
        assert_eq!(
            refused("[strct.x]\nmax_size = 1\n"),
            "r.toml:1: unknown field `strct`, expected one of `struct`, `symbol`, `function`, `group`; did you mean `struct`?"
        );
        assert_eq!(
            refused("[symbol.s]\nfoo = 1\n"),
            "r.toml:2: unknown field `foo`, expected one of `align`, `aligned`, `alone`, `not_with`, `max_lines`, `why`"
        );
        let e = refused("[function.f]\nalign = 0\n");
        assert_eq!(e, "r.toml:1: key `align`: must be at least 1");
        let e = refused("[group.rx]\nmax_size = 1\n");
        assert_eq!(e, "r.toml:1: group `rx`: write it as \"STRUCT.GROUP\"");
        let e = refused("# nothing\n");
        assert!(e.starts_with("r.toml:1: no rules"), "{e}");
        let e = refused("[symbol.a]\nalone = true\n[symbol.root_user]\nwhy = \"x\"\n");
        assert_eq!(e, "r.toml:3: [symbol.root_user] has no rule");
        let e = refused("[struct.s]\nseparate = [[\"a\"]]\n");
        assert_eq!(
            e,
            "r.toml:1: key `separate`: each list needs two or more members"
        );
    }
}
