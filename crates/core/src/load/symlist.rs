//! Symbol lists: `System.map` (`nm -n` of the vmlinux) and `/proc/kallsyms`, one
//! `ADDRESS TYPE NAME [\[module\]]` a line. With a raw BTF blob they give the addresses
//! the blob lacks; beside an ELF they replace its symbol table. A list has no sizes:
//! a symbol's size is taken as the distance to the next address (an upper bound),
//! except for per-CPU variables that BTF describes, whose size is their type's.

use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::model::{Binding, Space, Symbol, SymbolKind};

/// A symbol list read and checked, kept as text: the `Image` borrows its names.
#[derive(Debug)]
pub struct SymbolList {
    path: PathBuf,
    text: String,
}

impl SymbolList {
    /// Reads the list at `path`; fails when it cannot be read or is not text.
    pub fn read(path: &Path) -> Result<SymbolList> {
        let text = std::fs::read(path).map_err(|err| Error::Io {
            path: path.to_path_buf(),
            err,
        })?;
        let text = String::from_utf8(text).map_err(|_| Error::Input {
            path: path.to_path_buf(),
            message: "not text (expected a System.map or kallsyms list)".into(),
        })?;
        Ok(SymbolList {
            path: path.to_path_buf(),
            text,
        })
    }

    /// A list given as text (fuzzing, tests), checked line by line at once.
    pub fn from_text(path: &Path, text: String) -> Result<SymbolList> {
        parse(path, &text)?;
        Ok(SymbolList {
            path: path.to_path_buf(),
            text,
        })
    }

    /// Its symbols, sorted as the model wants them.
    pub(crate) fn symbols(&self) -> Result<Vec<Symbol<'_>>> {
        parse(&self.path, &self.text)
    }
}

/// Symbols of a list, sorted by (space, address, name) as the model wants them.
pub(crate) fn parse<'d>(path: &Path, text: &'d str) -> Result<Vec<Symbol<'d>>> {
    let mut raw: Vec<(u64, char, &'d str)> = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let mut parts = line.split_ascii_whitespace();
        let (Some(addr), Some(kind), Some(name)) = (parts.next(), parts.next(), parts.next())
        else {
            if line.trim().is_empty() {
                continue;
            }
            return Err(bad(path, n, "not `ADDRESS TYPE NAME`"));
        };
        let address =
            u64::from_str_radix(addr, 16).map_err(|_| bad(path, n, "address is not hex"))?;
        let mut k = kind.chars();
        let (Some(kind), None) = (k.next(), k.next()) else {
            return Err(bad(path, n, "type is not one letter"));
        };
        raw.push((address, kind, name));
    }
    if !raw.is_empty() && raw.iter().all(|r| r.0 == 0) {
        return Err(Error::Input {
            path: path.to_path_buf(),
            message: "every address is 0: the kernel hides them (kptr_restrict); read \
/proc/kallsyms as root"
                .into(),
        });
    }
    raw.sort_by_key(|&(a, _, n)| (a, n));
    let find = |name: &str| raw.iter().find(|r| r.2 == name).map(|r| r.0);
    let percpu = find("__per_cpu_start").zip(find("__per_cpu_end"));
    let mut out = Vec::new();
    for (i, &(address, letter, name)) in raw.iter().enumerate() {
        let kind = match letter.to_ascii_lowercase() {
            't' | 'w' => SymbolKind::Function,
            'd' | 'b' | 'r' | 'g' | 's' | 'v' | 'a' => SymbolKind::Object,
            _ => continue,
        };
        let in_percpu = percpu.is_some_and(|(s, e)| address >= s && address < e);
        // Absolute symbols are linker marks, except per-CPU variables in kallsyms.
        if letter.eq_ignore_ascii_case(&'a') && !in_percpu {
            continue;
        }
        // The noise the ELF reader leaves out too, and the per-CPU area's linker marks
        // (`__per_cpu_start`, absolute in kallsyms).
        if crate::kernel::noise(name).is_some() || name.starts_with("__per_cpu_") {
            continue;
        }
        let next = raw[i + 1..]
            .iter()
            .map(|r| r.0)
            .find(|&a| a > address)
            .unwrap_or(address);
        let section = match (in_percpu, letter.to_ascii_lowercase()) {
            (true, _) => super::elf::PERCPU_SECTION,
            (_, 't' | 'w') => ".text",
            (_, 'r') => ".rodata",
            (_, 'b') => ".bss",
            _ => ".data",
        };
        let (space, place) = match percpu {
            Some((s, _)) if in_percpu => (Space::Percpu, address.saturating_sub(s)),
            _ => (Space::Global, address),
        };
        out.push(Symbol {
            name,
            file: None,
            unit: None,
            compile_unit: None,
            group: 0,
            kind,
            binding: if letter.is_ascii_uppercase() {
                Binding::Global
            } else {
                Binding::Local
            },
            section,
            address,
            size: next.saturating_sub(address),
            space,
            place,
        });
    }
    out.sort_by(|a, b| (a.space, a.address, a.name).cmp(&(b.space, b.address, b.name)));
    Ok(out)
}

fn bad(path: &Path, line: usize, what: &str) -> Error {
    Error::Input {
        path: path.to_path_buf(),
        message: format!(
            "line {}: {what} (expected a System.map or kallsyms line)",
            line + 1
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn system_map_and_kallsyms_lines() {
        let text = "0000000000000000 D __per_cpu_start\n\
                    0000000000000000 D fixed_percpu_data\n\
                    0000000000001000 A gdt_page\n\
                    0000000000002000 D __per_cpu_end\n\
                    ffffffff81000000 T _stext\n\
                    ffffffff81000010 t helper\t[ext4]\n\
                    ffffffff81000040 R rodata_thing\n\
                    ffffffff81000060 A _end\n";
        let syms = parse(Path::new("System.map"), text).unwrap();
        let names: Vec<_> = syms
            .iter()
            .map(|s| (s.name, s.space, s.place, s.size))
            .collect();
        assert_eq!(
            names,
            vec![
                ("_stext", Space::Global, 0xffffffff81000000, 0x10),
                ("helper", Space::Global, 0xffffffff81000010, 0x30),
                ("rodata_thing", Space::Global, 0xffffffff81000040, 0x20),
                ("fixed_percpu_data", Space::Percpu, 0, 0x1000),
                ("gdt_page", Space::Percpu, 0x1000, 0x1000),
            ]
        );
        assert_eq!(syms[1].binding, Binding::Local);
        assert_eq!(syms[1].kind, SymbolKind::Function);
    }

    /// A symbol list leaves out the names the ELF reader leaves out, by the kernel's
    /// noise table: local labels, `__pfx_` padding and, since the table, the kCFI
    /// `__cfi_` hashes, which were functions of their own (`("__cfi_helper",
    /// 0xffffffff81000000, 0x10)` first here) where the ELF reader had none.
    #[test]
    fn a_symbol_list_leaves_out_the_noise_the_elf_reader_does() {
        let text = "ffffffff81000000 t __cfi_helper\n\
                    ffffffff81000010 t helper\n\
                    ffffffff81000030 t __pfx_next\n\
                    ffffffff81000040 t next\n\
                    ffffffff81000048 t .Ltmp3\n\
                    ffffffff81000050 T _etext\n";
        let syms = parse(Path::new("kallsyms"), text).unwrap();
        let names: Vec<_> = syms.iter().map(|s| (s.name, s.place, s.size)).collect();
        assert_eq!(
            names,
            vec![
                ("helper", 0xffffffff81000010, 0x20),
                ("next", 0xffffffff81000040, 0x8),
                ("_etext", 0xffffffff81000050, 0),
            ]
        );
    }

    #[test]
    fn a_bad_line_names_its_number() {
        let err = parse(Path::new("m"), "ffff T a\nzz T b\n").unwrap_err();
        assert_eq!(
            err.to_string(),
            "m: line 2: address is not hex (expected a System.map or kallsyms line)"
        );
    }
}
