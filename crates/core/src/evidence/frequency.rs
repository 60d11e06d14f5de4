//! How often a function runs, as far as the build and the tables can show it: false
//! sharing costs something only when both sides of a line are touched often, so the
//! judgement of shared lines asks this of every writer and reader it names. Three
//! classes, each with its reason; unknown is a class of its own and never counts as
//! frequent.
//!
//! - **Frequent:** measured by perf, on the known-hot list (`known-hot.toml`), or
//!   called directly from the body of a function that is (one call away, never
//!   further: a chain of calls is a guess about which paths run).
//! - **Rare:** boot and exit code (`.init*`, `.exit*`), a function's `.cold` part
//!   (GCC's own guess that the path is unlikely), a function `rare.toml` names
//!   (firmware calls, registration, configuration, error reports), and, by a fixed
//!   point over the direct call graph, a function whose every direct caller is rare
//!   and whose address is never taken (in code or in data).
//! - **Unknown:** everything else.
//!
//! Once-only storage (a static flag that a store guarded by a test of itself sets,
//! `static bool done`, `DO_ONCE`, `WARN_ONCE`) is a property of the object, not of the
//! function: the storage class `once` of the `kernel` module's classifier.

use std::sync::LazyLock;

use globset::{Glob, GlobSet, GlobSetBuilder};
use serde::{Deserialize, Serialize};

use super::{Hotness, Strength};
use crate::model::{Image, Symbol, SymbolKind};

/// Why a function runs often.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(tag = "why", rename_all = "snake_case")]
pub enum Often {
    /// perf saw it, or the known-hot list names it.
    Evidence {
        /// The evidence's strength: measured or known.
        strength: Strength,
    },
    /// Called directly from the body of `caller`, which has evidence of its own.
    CalledBy {
        /// The calling function's index in `Image::symbols`.
        #[serde(skip)]
        caller: u32,
    },
}

/// Why a function runs rarely.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(tag = "why", rename_all = "snake_case")]
pub enum Seldom {
    /// Boot or exit code, freed after boot.
    Boot,
    /// A `.cold` part: the compiler placed it as unlikely.
    Cold,
    /// A kernel convention of `rare.toml`: its class (`firmware`, `registration`,
    /// `configuration`, `error`) and its entry's index.
    Convention {
        /// The entry's class.
        kind: RareClass,
        /// The entry (`rare_entry`).
        #[serde(skip)]
        entry: u16,
    },
    /// Only rare functions call it directly, and its address is never taken.
    RareCallers,
    /// The storage is once-only (`kernel::Class::Once`): whoever writes it, writes it
    /// once.
    Once,
}

/// How often a function runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(tag = "class", rename_all = "snake_case")]
pub enum Frequency {
    /// Rarely, and why.
    Rare(Seldom),
    /// Nothing shows either way.
    Unknown,
    /// Often, and why.
    Frequent(Often),
}

impl Frequency {
    /// Ranks frequent first, then unknown, then rare (for ordering writers).
    pub fn rank(self) -> u8 {
        match self {
            Frequency::Frequent(Often::Evidence { .. }) => 3,
            Frequency::Frequent(Often::CalledBy { .. }) => 2,
            Frequency::Unknown => 1,
            Frequency::Rare(_) => 0,
        }
    }

    /// Whether it is frequent by evidence.
    pub fn is_frequent(self) -> bool {
        matches!(self, Frequency::Frequent(_))
    }

    /// Whether it is rare.
    pub fn is_rare(self) -> bool {
        matches!(self, Frequency::Rare(_))
    }

    /// How a report spells it, with the names it needs from `image`.
    pub fn describe(self, image: &Image<'_>) -> String {
        let caller = match self {
            Frequency::Frequent(Often::CalledBy { caller }) => {
                image.symbols.get(caller as usize).map(|s| s.name)
            }
            _ => None,
        };
        self.label(caller)
    }

    /// How a report spells it; `caller` names the caller of `Often::CalledBy`.
    pub fn label(self, caller: Option<&str>) -> String {
        match self {
            Frequency::Frequent(Often::Evidence { strength }) => {
                format!("frequent: {} hot", strength.name())
            }
            Frequency::Frequent(Often::CalledBy { .. }) => {
                format!(
                    "frequent: called by {}()",
                    caller.unwrap_or("a hot function")
                )
            }
            Frequency::Unknown => "frequency unknown".to_string(),
            Frequency::Rare(Seldom::Boot) => "rare: boot code".to_string(),
            Frequency::Rare(Seldom::Cold) => "rare: a .cold part".to_string(),
            Frequency::Rare(Seldom::Convention { kind, entry }) => {
                let e = &rare_table().entries[entry as usize];
                format!("rare: {}, by name ({})", kind.name(), e.glob)
            }
            Frequency::Rare(Seldom::RareCallers) => "rare: only rare code calls it".to_string(),
            Frequency::Rare(Seldom::Once) => "rare: a once-only flag".to_string(),
        }
    }
}

/// Why a convention says a function runs rarely.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RareClass {
    /// Firmware calls (EFI, ACPI).
    Firmware,
    /// Registering drivers, protocols, handlers; probing devices; loading modules.
    Registration,
    /// Configuration: sysctl, sysfs, tracing switched on or off, hotplug, suspend.
    Configuration,
    /// Error reports.
    Error,
}

impl RareClass {
    /// Its name as `rare.toml` and reports spell it.
    pub fn name(self) -> &'static str {
        match self {
            RareClass::Firmware => "firmware",
            RareClass::Registration => "registration",
            RareClass::Configuration => "configuration",
            RareClass::Error => "error",
        }
    }
}

/// One entry of `rare.toml`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RareEntry {
    /// A glob over the function's whole name.
    pub glob: String,
    /// `firmware`, `registration`, `configuration` or `error`.
    pub class: RareClass,
    /// Why it runs rarely, in one line.
    pub reason: String,
    /// Where that is written down.
    pub source: String,
}

/// `rare.toml`, read and compiled.
#[derive(Debug)]
pub struct RareTable {
    /// The entries, in the file's order.
    pub entries: Vec<RareEntry>,
    globs: GlobSet,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RareFile {
    rare: Vec<RareEntry>,
}

const RARE: &str = include_str!("rare.toml");

impl RareTable {
    /// Reads a table in `rare.toml`'s form.
    pub fn parse(text: &str) -> Result<RareTable, String> {
        let file: RareFile = toml::from_str(text).map_err(|e| e.to_string())?;
        let mut b = GlobSetBuilder::new();
        for e in &file.rare {
            b.add(Glob::new(&e.glob).map_err(|x| format!("{}: {x}", e.glob))?);
        }
        let globs = b.build().map_err(|e| e.to_string())?;
        Ok(RareTable {
            entries: file.rare,
            globs,
        })
    }

    /// The first entry matching function `name` (its `.cold`/`.isra.N` suffix and
    /// the like left out).
    pub fn matching(&self, name: &str) -> Option<u16> {
        let base = name.split('.').next().unwrap_or(name);
        let first = self.globs.matches(base).into_iter().min()?;
        u16::try_from(first).ok()
    }
}

/// The shipped `rare.toml`.
pub fn rare_table() -> &'static RareTable {
    static TABLE: LazyLock<RareTable> = LazyLock::new(|| {
        // Checked by a unit test; a mistake here is a bug.
        RareTable::parse(RARE).unwrap_or_else(|e| panic!("rare.toml: {e}"))
    });
    &TABLE
}

/// How many direct calls away from a function with evidence a function is still
/// frequent. One: on the zoo (bench/replay), two calls reached no culprit one call did
/// not, and made one published fix look like a regression (page_counter).
const REACH: u8 = 1;

/// The class of every function of a build, by symbol index (data symbols are
/// `Unknown`).
#[derive(Debug, Clone, Default)]
pub struct Frequencies {
    classes: Vec<Frequency>,
}

impl Frequencies {
    /// Classifies the functions of `image` with the evidence of `hotness`.
    pub fn of(image: &Image<'_>, hotness: &Hotness) -> Frequencies {
        let table = rare_table();
        let mut classes: Vec<Frequency> = image
            .symbols
            .iter()
            .map(|s| seed(s, hotness, table))
            .collect();
        let map = &image.access;
        // Called from the body of a function with evidence, at most `REACH` calls away.
        let mut depth = vec![0u8; classes.len()];
        for step in 1..=REACH {
            let mut next = Vec::new();
            for &(callee, caller) in &map.calls {
                let (Some(&Frequency::Frequent(_)), Some(&Frequency::Unknown)) =
                    (classes.get(caller as usize), classes.get(callee as usize))
                else {
                    continue;
                };
                if depth[caller as usize] == step - 1 {
                    next.push((callee, caller));
                }
            }
            for (callee, caller) in next {
                if classes[callee as usize] == Frequency::Unknown {
                    classes[callee as usize] = Frequency::Frequent(Often::CalledBy { caller });
                    depth[callee as usize] = step;
                }
            }
        }
        rare_callers(image, &mut classes);
        Frequencies { classes }
    }

    /// The class of function `f` (an index into `Image::symbols`).
    pub fn get(&self, f: u32) -> Frequency {
        self.classes
            .get(f as usize)
            .copied()
            .unwrap_or(Frequency::Unknown)
    }
}

/// A function's class from itself alone: evidence, its section, its name.
fn seed(s: &Symbol<'_>, hotness: &Hotness, table: &RareTable) -> Frequency {
    if s.kind != SymbolKind::Function {
        return Frequency::Unknown;
    }
    if let Some(e) = hotness.function(s.name) {
        return Frequency::Frequent(Often::Evidence {
            strength: e.strength(),
        });
    }
    if crate::kernel::is_boot_code(s.section) {
        return Frequency::Rare(Seldom::Boot);
    }
    if s.name.contains(".cold") {
        return Frequency::Rare(Seldom::Cold);
    }
    match table.matching(s.name) {
        Some(entry) => Frequency::Rare(Seldom::Convention {
            kind: table.entries[entry as usize].class,
            entry,
        }),
        None => Frequency::Unknown,
    }
}

/// Marks rare every unknown function whose direct callers are all rare and whose
/// address is never taken, until nothing changes.
fn rare_callers(image: &Image<'_>, classes: &mut [Frequency]) {
    let map = &image.access;
    if !map.supported {
        return;
    }
    loop {
        let mut changed = false;
        let mut i = 0;
        while i < map.calls.len() {
            let callee = map.calls[i].0;
            let end = i + map.calls[i..].partition_point(|c| c.0 == callee);
            let open = classes.get(callee as usize) == Some(&Frequency::Unknown)
                && !map.address_taken(callee);
            if open
                && map.calls[i..end]
                    .iter()
                    .all(|&(_, caller)| caller == callee || classes[caller as usize].is_rare())
                && map.calls[i..end].iter().any(|&(_, c)| c != callee)
            {
                classes[callee as usize] = Frequency::Rare(Seldom::RareCallers);
                changed = true;
            }
            i = end;
        }
        if !changed {
            break;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The shipped table reads, every entry has a reason and a source, and a name
    /// matches its first entry whole, suffixes left out.
    #[test]
    fn the_rare_table_reads_and_matches_whole_names() {
        let t = rare_table();
        assert!(
            t.entries
                .iter()
                .all(|e| !e.reason.is_empty() && !e.source.is_empty())
        );
        let class = |n: &str| t.matching(n).map(|i| t.entries[i as usize].class.name());
        assert_eq!(class("efi_enter_mm"), Some("firmware"));
        assert_eq!(class("mptcp_pm_register"), Some("registration"));
        assert_eq!(
            class("pcibios_allocate_dev_resources"),
            Some("registration")
        );
        assert_eq!(class("proc_dointvec_minmax"), Some("configuration"));
        assert_eq!(class("ftrace_modify_all_code.cold"), Some("configuration"));
        assert_eq!(class("copy_process"), None);
        assert_eq!(class("tcp_sendmsg_locked"), None);
    }
}
