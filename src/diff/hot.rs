//! Decides whether a type is a write-hot candidate: it holds (directly or through
//! nested structs) an atomic, a refcount, a lock or a per-CPU counter.

use std::collections::HashMap;

use crate::model::{Image, StructId};

/// Type-name fragments that mark fields written by many CPUs.
const HOT_MARKERS: &[&str] = &[
    "atomic",
    "refcount",
    "spinlock",
    "rwlock",
    "mutex",
    "seqcount",
    "seqlock",
    "percpu_counter",
    "local_t",
    "rw_semaphore",
    "lockref",
    "kref",
    "qspinlock",
    "wait_queue_head",
    "arch_spinlock",
];

fn is_hot_name(type_name: &str) -> bool {
    HOT_MARKERS.iter().any(|m| type_name.contains(m))
}

/// Memoized answers for one image.
pub struct HotTypes<'a, 'd> {
    image: &'a Image<'d>,
    by_name: HashMap<&'d str, StructId>,
    memo: HashMap<StructId, bool>,
}

impl<'a, 'd> HotTypes<'a, 'd> {
    pub fn new(image: &'a Image<'d>) -> Self {
        let mut by_name = HashMap::new();
        for (i, s) in image.structs.iter().enumerate() {
            by_name.entry(s.name).or_insert(StructId(i));
        }
        HotTypes {
            image,
            by_name,
            memo: HashMap::new(),
        }
    }

    /// For a variable of type `type_name` (and struct `layout`, if any).
    pub fn is_hot(&mut self, type_name: &str, layout: Option<StructId>) -> bool {
        if is_hot_name(type_name) {
            return true;
        }
        layout.is_some_and(|id| self.struct_is_hot(id, 0))
    }

    fn struct_is_hot(&mut self, id: StructId, depth: usize) -> bool {
        if let Some(&v) = self.memo.get(&id) {
            return v;
        }
        if depth > 8 {
            return false;
        }
        // Guard cycles: assume not hot while computing.
        self.memo.insert(id, false);
        let image = self.image;
        let layout = image.struct_by_id(id);
        let mut hot = false;
        for (_, m) in layout.flat_members() {
            if is_hot_name(&m.type_name) {
                hot = true;
                break;
            }
            // Only embedded structs count: a pointer to a hot struct is not hot storage.
            if let Some(inner) = m
                .type_name
                .strip_prefix("struct ")
                .filter(|t| !t.contains(['*', '[']))
            {
                if let Some(&inner_id) = self.by_name.get(inner)
                    && self.struct_is_hot(inner_id, depth + 1)
                {
                    hot = true;
                    break;
                }
            }
        }
        self.memo.insert(id, hot);
        hot
    }
}
