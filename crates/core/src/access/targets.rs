//! What an address in the code lands in: a data object (ordinary or per-CPU), the
//! start of a function (a call's callee), or code; the sorted tables the scan of
//! every function looks addresses up in.

use crate::model::{Image, Space, SymbolKind};

/// The bytes `[start, end)` one symbol covers (a zero-sized one covers one byte).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Span {
    pub start: u64,
    pub end: u64,
    pub symbol: u32,
}

/// The image's objects and functions, sorted by address for lookups.
pub(super) struct Targets {
    /// Data objects outside the per-CPU area.
    data: Vec<Span>,
    /// Per-CPU objects, by `st_value` (0-based on 6.1 x86-64, kernel addresses since
    /// about 6.15): what a `%gs:` operand computes either way.
    percpu: Vec<Span>,
    /// Functions (one per start address).
    functions: Vec<Span>,
    /// Functions that change no register and write no memory (`preserve`), by symbol,
    /// sorted.
    preserving: Vec<u32>,
}

/// A data object an address falls in, and the offset into it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Hit {
    pub object: u32,
    pub offset: u64,
}

/// The symbols of `image` that `keep` accepts, as spans sorted by address; of aliases
/// at one address, the largest (then the first symbol) stands for all.
pub(crate) fn spans(
    image: &Image<'_>,
    keep: impl Fn(&crate::model::Symbol<'_>) -> bool,
) -> Vec<Span> {
    let mut out: Vec<Span> = image
        .symbols
        .iter()
        .enumerate()
        .filter(|(_, s)| keep(s))
        .filter_map(|(i, s)| {
            Some(Span {
                start: s.address,
                end: s.address.saturating_add(s.size.max(1)),
                symbol: u32::try_from(i).ok()?,
            })
        })
        .collect();
    out.sort_by_key(|s| (s.start, std::cmp::Reverse(s.end), s.symbol));
    out.dedup_by_key(|s| s.start);
    out
}

impl Targets {
    pub fn new(image: &Image<'_>) -> Targets {
        let spans = |keep: &dyn Fn(&crate::model::Symbol<'_>) -> bool| spans(image, keep);
        Targets {
            data: spans(&|s| s.kind == SymbolKind::Object && s.space == Space::Global),
            percpu: spans(&|s| s.space == Space::Percpu),
            functions: spans(&|s| {
                s.kind == SymbolKind::Function && s.space == Space::Global && s.size > 0
            }),
            preserving: Vec::new(),
        }
    }

    /// The functions to decode: symbol index, start and end address, one per start.
    pub fn functions(&self) -> impl Iterator<Item = (u32, u64, u64)> + '_ {
        self.functions.iter().map(|s| (s.symbol, s.start, s.end))
    }

    /// The data object at `address`: per-CPU objects for a `%gs:` operand (`percpu`),
    /// ordinary ones otherwise.
    pub fn data(&self, address: u64, percpu: bool) -> Option<Hit> {
        let table = if percpu { &self.percpu } else { &self.data };
        let span = containing(table, address)?;
        Some(Hit {
            object: span.symbol,
            offset: address - span.start,
        })
    }

    /// The function that starts exactly at `address` (a call's or tail jump's callee).
    pub fn function_at(&self, address: u64) -> Option<u32> {
        let i = self
            .functions
            .binary_search_by_key(&address, |s| s.start)
            .ok()?;
        Some(self.functions[i].symbol)
    }

    /// Records the functions that change no register and write no memory (sorted).
    pub fn set_preserving(&mut self, symbols: Vec<u32>) {
        self.preserving = symbols;
    }

    /// Whether a call to `function` leaves every register as it was.
    pub fn preserves(&self, function: u32) -> bool {
        self.preserving.binary_search(&function).is_ok()
    }

    /// The lowest function start and the highest function end, if any function.
    pub fn code_bounds(&self) -> Option<(u64, u64)> {
        let lo = self.functions.first()?.start;
        let hi = self.functions.iter().map(|s| s.end).max()?;
        Some((lo, hi))
    }

    /// Whether `address` lies inside a function (the address of code, not of data).
    pub fn in_code(&self, address: u64) -> bool {
        containing(&self.functions, address).is_some()
    }
}

/// The span of `table` (sorted by start) that holds `address`.
pub(crate) fn containing(table: &[Span], address: u64) -> Option<&Span> {
    let after = table.partition_point(|s| s.start <= address);
    let span = table.get(after.checked_sub(1)?)?;
    (address < span.end).then_some(span)
}
