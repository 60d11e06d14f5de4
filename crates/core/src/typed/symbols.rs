//! The image's symbols as the typed scan looks addresses up: data objects and per-CPU
//! objects by address (a global's or a per-CPU pointer's type is found by its name),
//! the functions that own code (a `.cold` part's parent), and the two objects per-CPU
//! addressing goes through (`__per_cpu_offset[]`, `this_cpu_off`).

use crate::access::{Span, containing, spans};
use crate::model::{Image, Space, SymbolKind};

/// An object an address lands in: its symbol, its name and the offset into it.
#[derive(Debug, Clone, Copy)]
pub(super) struct Hit<'a> {
    pub symbol: u32,
    pub name: &'a str,
    pub offset: u64,
}

pub(super) struct Symbols<'a> {
    names: Vec<&'a str>,
    data: Vec<Span>,
    percpu: Vec<Span>,
    functions: Vec<Span>,
    /// `__per_cpu_offset`: `[start, end)`.
    pub per_cpu_offset: Option<(u64, u64)>,
    /// The per-CPU `this_cpu_off`: `[start, end)`.
    pub this_cpu_off: Option<(u64, u64)>,
}

impl<'a> Symbols<'a> {
    pub fn new(image: &'a Image<'_>) -> Symbols<'a> {
        let spans = |keep: &dyn Fn(&crate::model::Symbol<'_>) -> bool| spans(image, keep);
        let data = spans(&|s| s.kind == SymbolKind::Object && s.space == Space::Global);
        let percpu = spans(&|s| s.space == Space::Percpu);
        let functions =
            spans(&|s| s.kind == SymbolKind::Function && s.space == Space::Global && s.size > 0);
        let range = |space: Space, name: &str| {
            image
                .symbols
                .iter()
                .find(|s| s.space == space && s.name == name)
                .map(|s| (s.address, s.address + s.size.max(1)))
        };
        Symbols {
            names: image.symbols.iter().map(|s| s.name).collect(),
            per_cpu_offset: range(Space::Global, "__per_cpu_offset"),
            this_cpu_off: range(Space::Percpu, "this_cpu_off"),
            data,
            percpu,
            functions,
        }
    }

    /// The object at `address`: a per-CPU one when `percpu`, else an ordinary one.
    pub fn data(&self, address: u64, percpu: bool) -> Option<Hit<'a>> {
        let table = if percpu { &self.percpu } else { &self.data };
        let span = containing(table, address)?;
        Some(Hit {
            symbol: span.symbol,
            name: self.names[span.symbol as usize],
            offset: address - span.start,
        })
    }

    /// The function symbol holding `address`, and whether it is a `.cold` part.
    pub fn function(&self, address: u64) -> Option<(u32, bool)> {
        let span = containing(&self.functions, address)?;
        let name = self.names[span.symbol as usize];
        Some((span.symbol, name.contains(".cold")))
    }

    /// Whether `address` lies in `__per_cpu_offset[]`.
    pub fn is_per_cpu_offset(&self, address: u64) -> bool {
        self.per_cpu_offset
            .is_some_and(|(a, b)| address >= a && address < b)
    }

    /// Whether `address` is the per-CPU `this_cpu_off`.
    pub fn is_this_cpu_off(&self, address: u64) -> bool {
        self.this_cpu_off
            .is_some_and(|(a, b)| address >= a && address < b)
    }
}
