//! The one walk over a unit's DIEs that knows each entry's nearest open parent. The
//! whole read (`dies::read_unit`) and the lookup's reads of single subtrees
//! (`lookup::Sparse`) share it; they differ only in what they keep of an entry and in
//! the mark they leave on an open parent (an index, an offset).

use gimli::{Abbreviation, DwTag, EndianSlice, EntriesRaw, RunTimeEndian, UnitOffset};

/// What `dies` reads with (its `Reader` and `Unit`, spelled here so that the walk does
/// not import the table it feeds).
type Reader<'d> = EndianSlice<'d, RunTimeEndian>;
type Unit<'d> = gimli::Unit<Reader<'d>>;

/// A walk over raw entries in file order, with the stack of entries whose children
/// it is inside. Each entry's attributes must be read or skipped (`raw`, `skip`)
/// before the next one.
pub(crate) struct Tree<'a, 'd, M> {
    raw: EntriesRaw<'a, Reader<'d>>,
    /// Open entries with children: (depth, the caller's mark, tag).
    open: Vec<(isize, M, DwTag)>,
    /// Ends after the subtree of the first entry.
    subtree: bool,
    started: bool,
}

/// One entry of the walk, its attributes not read yet.
pub(crate) struct Entry<'a, M> {
    /// Offset in the unit.
    pub offset: usize,
    pub abbrev: &'a Abbreviation,
    depth: isize,
    /// The nearest open entry with children: the mark it was opened with, and its tag.
    pub parent: Option<(M, DwTag)>,
}

impl<M> Entry<'_, M> {
    pub fn tag(&self) -> DwTag {
        self.abbrev.tag()
    }

    pub fn parent_tag(&self) -> Option<DwTag> {
        self.parent.as_ref().map(|(_, t)| *t)
    }
}

impl<'a, 'd, M: Copy> Tree<'a, 'd, M> {
    /// Every entry of `unit`, from its root.
    pub fn whole(unit: &'a Unit<'d>) -> gimli::Result<Self> {
        Ok(Self::new(unit.entries_raw(None)?, false))
    }

    /// The entry at `offset` and its descendants.
    pub fn subtree(unit: &'a Unit<'d>, offset: u32) -> gimli::Result<Self> {
        let raw = unit.entries_raw(Some(UnitOffset(offset as usize)))?;
        Ok(Self::new(raw, true))
    }

    fn new(raw: EntriesRaw<'a, Reader<'d>>, subtree: bool) -> Self {
        Tree {
            raw,
            open: Vec::new(),
            subtree,
            started: false,
        }
    }

    /// The next entry (null entries are passed over), or `None` at the end.
    #[inline]
    pub fn next(&mut self) -> gimli::Result<Option<Entry<'a, M>>> {
        while !self.raw.is_empty() {
            let depth = self.raw.next_depth();
            if self.subtree && self.started && depth <= 0 {
                return Ok(None);
            }
            self.started = true;
            let offset = self.raw.next_offset().0;
            let Some(abbrev) = self.raw.read_abbreviation()? else {
                continue;
            };
            while self.open.last().is_some_and(|(d, _, _)| *d >= depth) {
                self.open.pop();
            }
            let parent = self.open.last().map(|&(_, m, t)| (m, t));
            return Ok(Some(Entry {
                offset,
                abbrev,
                depth,
                parent,
            }));
        }
        Ok(None)
    }

    /// Where the current entry's attributes are read from.
    pub fn raw(&mut self) -> &mut EntriesRaw<'a, Reader<'d>> {
        &mut self.raw
    }

    /// Passes over the entry's attributes without decoding them.
    #[inline]
    pub fn skip(&mut self, entry: &Entry<'a, M>) -> gimli::Result<()> {
        self.raw.skip_attributes(entry.abbrev.attributes())
    }

    /// After its attributes: an entry with children becomes the open parent of the
    /// entries that follow, with `mark`.
    #[inline]
    pub fn open(&mut self, entry: &Entry<'a, M>, mark: M) {
        if entry.abbrev.has_children() {
            self.open.push((entry.depth, mark, entry.tag()));
        }
    }
}
