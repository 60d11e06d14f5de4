//! What perf measured hot, read from its text reports: data-type profiles (`perf
//! report --stdio --sort type,typeoff`, flat or `--hierarchy`; `perf mem report -T`;
//! `perf annotate --stdio --data-type`) and symbol profiles (`perf report --stdio
//! --sort sym`). Each kind is recognised by its header words. A type and an offset
//! apply to every instance of the type and to the member at that offset.

use rustc_hash::FxHashMap;

use super::Evidence;

/// The kinds of perf text this reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `perf report --sort type,typeoff` or `perf mem report -T`: `Data Type Offset`.
    TypeProfile,
    /// `perf annotate --data-type`: `Annotate type: 'struct x' ...` blocks.
    AnnotateType,
    /// `perf report --sort sym`: an `Overhead` and a `Symbol` column.
    SymbolProfile,
}

impl Kind {
    /// The perf command whose report this kind is.
    pub fn tool(self) -> &'static str {
        match self {
            Kind::TypeProfile => "perf data-type profile",
            Kind::AnnotateType => "perf annotate --data-type",
            Kind::SymbolProfile => "perf symbol profile",
        }
    }

    /// Which kind `text` is, by its header words.
    pub fn detect(text: &str) -> Option<Kind> {
        let headers = || text.lines().filter(|l| l.starts_with('#'));
        if text.lines().any(|l| l.starts_with("Annotate type: '")) {
            Some(Kind::AnnotateType)
        } else if headers().any(|l| l.contains("Data Type Offset")) {
            Some(Kind::TypeProfile)
        } else if headers().any(|l| l.contains("Overhead") && l.contains("Symbol")) {
            Some(Kind::SymbolProfile)
        } else {
            None
        }
    }
}

/// One measured entry: which report said it and what it said.
#[derive(Debug, Clone, PartialEq)]
pub struct Datum {
    /// The report kind that said it.
    pub tool: &'static str,
    /// The share of samples (and the member, for a type), as perf printed them.
    pub detail: String,
    /// Its share of samples, in percent.
    pub share: f64,
}

/// Everything measured hot, merged over every `--hot` file.
#[derive(Debug, Default)]
pub struct Measured {
    /// Objects by symbol name (a `--hot` name list, perf c2c lines mapped to objects,
    /// or a base-type variable a data-type profile names).
    objects: FxHashMap<String, Datum>,
    /// Struct types by name (without `struct `).
    types: FxHashMap<String, Datum>,
    /// Members by (type, byte offset), with the member path perf printed.
    members: FxHashMap<(String, u64), (String, Datum)>,
    functions: FxHashMap<String, Datum>,
}

/// Why a perf profile cannot be read as evidence.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ProfileError {
    /// A data-type profile's typeoff column has an offset that is no number.
    #[error("line {line}: bad offset {offset:?}")]
    BadOffset {
        /// The line, counted from 1.
        line: usize,
        /// The offset as printed.
        offset: String,
    },
    /// A data-type profile with no line carrying a share of samples.
    #[error("a data-type profile with no sample lines")]
    NoSamples,
    /// An annotate-data-type row without a member offset.
    #[error("line {line}: no member offset")]
    NoMemberOffset {
        /// The line, counted from 1.
        line: usize,
    },
    /// A report with nothing of the kernel in it.
    #[error("a {tool} with no kernel types or symbols in it")]
    Empty {
        /// The perf command that writes this kind of report.
        tool: &'static str,
    },
}

impl Measured {
    /// Reads a perf report of `kind`; an error names the line.
    pub fn parse(text: &str, kind: Kind) -> Result<Measured, ProfileError> {
        let mut m = Measured::default();
        match kind {
            Kind::TypeProfile => m.read_type_profile(text)?,
            Kind::AnnotateType => m.read_annotate(text)?,
            Kind::SymbolProfile => m.read_symbols(text),
        }
        if m.is_empty() {
            return Err(ProfileError::Empty { tool: kind.tool() });
        }
        Ok(m)
    }

    /// Nothing measured.
    pub fn is_empty(&self) -> bool {
        self.objects.is_empty()
            && self.types.is_empty()
            && self.members.is_empty()
            && self.functions.is_empty()
    }

    /// (found, entries): how many of its types, objects and functions a build has, of
    /// how many; `has_type` answers for a struct name, `has_symbol` for a symbol name.
    /// A type's members count with it.
    pub fn found(
        &self,
        has_type: impl Fn(&str) -> bool,
        has_symbol: impl Fn(&str) -> bool,
    ) -> (usize, usize) {
        let types = self.types.keys().filter(|t| has_type(t)).count();
        let symbols = self.objects.keys().chain(self.functions.keys());
        let found = types + symbols.filter(|n| has_symbol(n)).count();
        let entries = self.types.len() + self.objects.len() + self.functions.len();
        (found, entries)
    }

    /// Adds every entry of `other` (the first one read wins on a repeat).
    pub fn extend(&mut self, other: Measured) {
        for (k, v) in other.objects {
            self.objects.entry(k).or_insert(v);
        }
        for (k, v) in other.types {
            self.types.entry(k).or_insert(v);
        }
        for (k, v) in other.members {
            self.members.entry(k).or_insert(v);
        }
        for (k, v) in other.functions {
            self.functions.entry(k).or_insert(v);
        }
    }

    /// Adds an object named in a `--hot` list or on a perf c2c line.
    pub fn add_object(&mut self, name: &str, tool: &'static str, detail: String) {
        self.objects.entry(name.to_string()).or_insert(Datum {
            tool,
            detail,
            share: 0.0,
        });
    }

    /// Adds a function named in a `--hot` list.
    pub fn add_function(&mut self, name: &str, tool: &'static str, detail: String) {
        self.functions.entry(name.to_string()).or_insert(Datum {
            tool,
            detail,
            share: 0.0,
        });
    }

    /// The measured evidence for data object `name`.
    pub fn object(&self, name: &str) -> Option<Evidence<'_>> {
        self.objects.get(name).map(evidence)
    }

    /// What was measured of struct type `name`.
    pub fn type_(&self, name: &str) -> Option<&Datum> {
        self.types.get(name)
    }

    /// A member of `type_name` by its offset (perf's key), else by its name.
    pub fn member(&self, type_name: &str, member: &str, offset: u64) -> Option<Evidence<'_>> {
        // Asked of every member the judgement lays out, measured or not: without a
        // profile, no key is built to find nothing.
        if self.members.is_empty() {
            return None;
        }
        if let Some((_, d)) = self.members.get(&(type_name.to_string(), offset)) {
            return Some(evidence(d));
        }
        self.members
            .iter()
            .find(|((t, _), (path, _))| {
                t == type_name && (path == member || path.rsplit('.').next() == Some(member))
            })
            .map(|(_, (_, d))| evidence(d))
    }

    /// The measured evidence for function `name`.
    pub fn function(&self, name: &str) -> Option<Evidence<'_>> {
        self.functions.get(name).map(evidence)
    }

    /// A profile measured members of type `type_name`.
    pub fn has_members(&self, type_name: &str) -> bool {
        self.members.keys().any(|(t, _)| t == type_name)
    }

    /// Measured members of `type_name`, by offset: (offset, member path, datum).
    pub fn members_of(&self, type_name: &str) -> Vec<(u64, &str, &Datum)> {
        let mut v: Vec<(u64, &str, &Datum)> = self
            .members
            .iter()
            .filter(|((t, _), _)| t == type_name)
            .map(|((_, off), (path, d))| (*off, path.as_str(), d))
            .collect();
        v.sort_by_key(|e| e.0);
        v
    }

    /// Every measured object with its datum, largest share first.
    pub fn objects(&self) -> Vec<(&str, &Datum)> {
        let mut v: Vec<(&str, &Datum)> =
            self.objects.iter().map(|(k, d)| (k.as_str(), d)).collect();
        v.sort_by(|a, b| b.1.share.total_cmp(&a.1.share).then(a.0.cmp(b.0)));
        v
    }

    /// Every measured type with its share, largest first.
    pub fn types(&self) -> Vec<(&str, &Datum)> {
        let mut v: Vec<(&str, &Datum)> = self.types.iter().map(|(k, d)| (k.as_str(), d)).collect();
        v.sort_by(|a, b| b.1.share.total_cmp(&a.1.share).then(a.0.cmp(b.0)));
        v
    }

    /// `12.3%  struct x +0x8 (member)` anywhere on a line (flat, hierarchy, perf mem).
    fn read_type_profile(&mut self, text: &str) -> Result<(), ProfileError> {
        let tool = Kind::TypeProfile.tool();
        let mut seen = false;
        for (n, line) in text.lines().enumerate() {
            if line.starts_with('#') || line.trim().is_empty() {
                continue;
            }
            let Some(share) = first_percent(line) else {
                continue;
            };
            seen = true;
            let Some(entry) = type_offset(line) else {
                // A hierarchy parent (`17.65%  struct x`) or a special type.
                if let Some(t) = bare_type(line) {
                    self.add_type(t, tool, share);
                }
                continue;
            };
            let (ty, off, field) = entry.map_err(|offset| ProfileError::BadOffset {
                line: n + 1,
                offset: offset.to_string(),
            })?;
            match ty
                .strip_prefix("struct ")
                .or_else(|| ty.strip_prefix("union "))
            {
                Some(name) => {
                    self.add_type(name, tool, share);
                    if field != "no field" {
                        self.members
                            .entry((name.to_string(), off))
                            .or_insert((field.to_string(), datum(tool, share, field)));
                    }
                }
                // A base type with a variable's name (`long unsigned int +0 (var)`).
                None if field != "no field" && !field.contains(' ') => {
                    self.objects
                        .entry(field.to_string())
                        .or_insert(datum(tool, share, ty));
                }
                None => {}
            }
        }
        if !seen {
            return Err(ProfileError::NoSamples);
        }
        Ok(())
    }

    fn add_type(&mut self, name: &str, tool: &'static str, share: f64) {
        let d = self.types.entry(name.to_string()).or_insert(Datum {
            tool,
            detail: String::new(),
            share: 0.0,
        });
        d.share += share;
        d.detail = format!("{:.2}% of samples", d.share);
    }

    /// `Annotate type: 'struct x' in [kernel.kallsyms] (N samples):` then one row per
    /// member: share column(s), offset, size, type and name.
    fn read_annotate(&mut self, text: &str) -> Result<(), ProfileError> {
        let tool = Kind::AnnotateType.tool();
        let mut current: Option<String> = None;
        for (n, line) in text.lines().enumerate() {
            if let Some(rest) = line.strip_prefix("Annotate type: '") {
                let ty = rest.split('\'').next().unwrap_or("");
                current = ty
                    .strip_prefix("struct ")
                    .or_else(|| ty.strip_prefix("union "))
                    .map(str::to_string);
                continue;
            }
            let Some(ty) = &current else { continue };
            let words: Vec<&str> = line.split_whitespace().collect();
            // Leading shares, then offset and size, then the member's type and name.
            let shares: Vec<f64> = words
                .iter()
                .map_while(|w| {
                    (w.trim_end_matches('%').parse::<f64>().ok())
                        .or_else(|| number(w).map(|n| n as f64))
                })
                .collect();
            if shares.len() < 3 || line.trim_end().ends_with('{') || line.contains("offset") {
                continue;
            }
            let k = shares.len();
            let (Some(off), Some(name)) = (number(words[k - 2]), words.last()) else {
                return Err(ProfileError::NoMemberOffset { line: n + 1 });
            };
            let share: f64 = shares[..k - 2].iter().sum();
            if share <= 0.0 || *name == "}" || name.ends_with('}') {
                continue;
            }
            let name = name.trim_end_matches(';');
            self.add_type(ty, tool, share);
            self.members
                .entry((ty.clone(), off))
                .or_insert((name.to_string(), datum(tool, share, name)));
        }
        Ok(())
    }

    /// `  12.34%  [k] do_syscall_64`: kernel symbols only.
    fn read_symbols(&mut self, text: &str) {
        let tool = Kind::SymbolProfile.tool();
        for line in text.lines() {
            if line.starts_with('#') {
                continue;
            }
            let Some(share) = first_percent(line) else {
                continue;
            };
            let Some((_, sym)) = line.split_once("[k] ") else {
                continue;
            };
            let name = sym.split_whitespace().next().unwrap_or("");
            // perf may print `sym+0x12` or a clone suffix; the symbol is the name.
            let name = name.split('+').next().unwrap_or(name);
            if !name.is_empty() && share > 0.0 {
                self.functions
                    .entry(name.to_string())
                    .or_insert(datum(tool, share, name));
            }
        }
    }
}

fn evidence(d: &Datum) -> Evidence<'_> {
    Evidence::Measured {
        tool: d.tool,
        detail: Some(d.detail.as_str()),
    }
}

fn datum(tool: &'static str, share: f64, what: &str) -> Datum {
    Datum {
        tool,
        detail: format!("{share:.2}% of samples, {what}"),
        share,
    }
}

/// The first `N.NN%` on a line.
fn first_percent(line: &str) -> Option<f64> {
    line.split_whitespace()
        .find_map(|w| w.strip_suffix('%')?.parse::<f64>().ok())
}

/// A decimal or `0x` number.
fn number(w: &str) -> Option<u64> {
    match w.strip_prefix("0x") {
        Some(h) => u64::from_str_radix(h, 16).ok(),
        None => w.parse().ok(),
    }
}

/// `TYPE +OFF (FIELD)` as perf's typeoff column prints it (`%+d` before perf 6.12,
/// `+%#x` after): the last ` +` followed by a number and ` (`; the error is the offset
/// as printed when it is no number.
fn type_offset(line: &str) -> Option<Result<(&str, u64, &str), &str>> {
    let open = line.rfind(" (")?;
    let close = line[open..].find(')')? + open;
    let field = &line[open + 2..close];
    let plus = line[..open].rfind(" +")?;
    let off = number(&line[plus + 2..open]);
    let before = &line[..plus];
    // The type ends where the offset's ` +` starts; it begins after the share and, in
    // the flat form, after the same type's own column: take the last `struct`/`union`
    // or, for base types, the words after the last double space.
    let ty = match ["struct ", "union "]
        .iter()
        .filter_map(|k| before.rfind(k))
        .max()
    {
        Some(i) => before[i..].trim(),
        None => before.rsplit("  ").next().unwrap_or(before).trim(),
    };
    Some(match off {
        Some(o) => Ok((ty, o, field)),
        None => Err(&line[plus + 2..open]),
    })
}

/// A hierarchy parent's type: `  17.65%     struct x`.
fn bare_type(line: &str) -> Option<&str> {
    let i = line.find("struct ").or_else(|| line.find("union "))?;
    let t = line[i..].trim();
    let name = t
        .strip_prefix("struct ")
        .or_else(|| t.strip_prefix("union "))?;
    (!name.contains(' ')).then_some(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The flat form of perf 6.8-6.11 (`%+d`) and 6.12 on (`+%#x`), and the hierarchy.
    #[test]
    fn type_profiles_flat_and_hierarchy() {
        let flat = "\
# To display the perf.data header info, please use --header/--header-only options.
#
# Overhead  Data Type  Data Type Offset
# ........  .........  ................
#
    23.95%  (stack operation)  (stack operation)
    10.81%  struct pcpu_hot  struct pcpu_hot +0 (current_task)
     4.80%  struct pcpu_hot  struct pcpu_hot +8 (preempt_count)
     2.24%  struct rq  struct rq +0x140 (curr)
     1.43%  long unsigned int  long unsigned int +0 (jiffies)
     0.50%  struct rq  struct rq +0x8 (no field)
";
        assert_eq!(Kind::detect(flat), Some(Kind::TypeProfile));
        let m = Measured::parse(flat, Kind::TypeProfile).unwrap();
        let ty = m.type_("pcpu_hot").unwrap();
        assert!((ty.share - 15.61).abs() < 1e-9, "{}", ty.share);
        assert_eq!(
            m.members_of("pcpu_hot")
                .iter()
                .map(|(o, p, _)| (*o, *p))
                .collect::<Vec<_>>(),
            vec![(0, "current_task"), (8, "preempt_count")]
        );
        assert_eq!(
            m.members_of("rq")
                .iter()
                .map(|(o, p, _)| (*o, *p))
                .collect::<Vec<_>>(),
            vec![(0x140, "curr")]
        );
        assert!(m.object("jiffies").is_some());
        assert!(m.member("rq", "curr", 0x140).is_some());
        assert!(m.member("rq", "curr", 0).is_some(), "by name too");
        assert!(m.member("rq", "clock", 0x10).is_none());
        let hier = "\
# Overhead  Data Type / Data Type Offset
# ..................................
#
    17.65%     struct paca_struct
        4.68%     struct paca_struct +2312 (__current)
        4.57%     struct paca_struct +2354 (irq_soft_mask)
";
        assert_eq!(Kind::detect(hier), Some(Kind::TypeProfile));
        let m = Measured::parse(hier, Kind::TypeProfile).unwrap();
        assert_eq!(m.members_of("paca_struct").len(), 2);
        assert_eq!(m.members_of("paca_struct")[1].0, 2354);
    }

    #[test]
    fn found_counts_types_objects_and_functions() {
        let text = "\
# Overhead  Data Type  Data Type Offset
    10.81%  struct pcpu_hot  struct pcpu_hot +0 (current_task)
     4.80%  struct pcpu_hot  struct pcpu_hot +8 (preempt_count)
     2.24%  struct rq  struct rq +0x140 (curr)
     1.43%  long unsigned int  long unsigned int +0 (jiffies)
";
        let m = Measured::parse(text, Kind::TypeProfile).unwrap();
        assert_eq!(m.found(|_| true, |_| true), (3, 3));
        assert_eq!(m.found(|t| t == "rq", |_| false), (1, 3));
        assert_eq!(m.found(|_| false, |n| n == "jiffies"), (1, 3));
        assert_eq!(m.found(|_| false, |_| false), (0, 3));
    }

    #[test]
    fn annotate_data_type_members_with_samples() {
        let text = "\
Annotate type: 'struct user_struct' in [kernel.kallsyms] (8 samples):
============================================================================
    Percent     offset       size  field
     100.00          0        136  struct user_struct\t {
      87.50          0          4      refcount_t\t__count;
       0.00          8          8      struct percpu_counter\tepoll_watches;
      12.50         72          8      long unsigned int\tunix_inflight;
";
        assert_eq!(Kind::detect(text), Some(Kind::AnnotateType));
        let m = Measured::parse(text, Kind::AnnotateType).unwrap();
        let members: Vec<(u64, &str)> = m
            .members_of("user_struct")
            .iter()
            .map(|(o, p, _)| (*o, *p))
            .collect();
        assert_eq!(members, vec![(0, "__count"), (72, "unix_inflight")]);
    }

    #[test]
    fn symbol_profiles_keep_kernel_symbols() {
        let text = "\
# Overhead  Command  Shared Object      Symbol
# ........  .......  .................  ......
#
    12.34%  futex3   [kernel.kallsyms]  [k] futex_wait
     3.10%  futex3   libc.so.6          [.] syscall
     2.00%  futex3   [kernel.kallsyms]  [k] entry_SYSCALL_64
";
        assert_eq!(Kind::detect(text), Some(Kind::SymbolProfile));
        let m = Measured::parse(text, Kind::SymbolProfile).unwrap();
        assert!(m.function("futex_wait").is_some());
        assert!(m.function("entry_SYSCALL_64").is_some());
        assert!(m.function("syscall").is_none());
        assert_eq!(Kind::detect("runqueues\njiffies\n"), None);
        let e = Measured::parse("# Overhead  Symbol\n", Kind::SymbolProfile).unwrap_err();
        assert_eq!(
            e.to_string(),
            "a perf symbol profile with no kernel types or symbols in it"
        );
    }
}
