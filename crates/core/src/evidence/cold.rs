//! Storage that kernel conventions mark as cold: written when tracing or debugging is
//! switched on, when a device or module registers, at boot, or once. Recognised by
//! the type the kernel's macros give such objects, by the sections those macros put
//! them in and by the names they generate (`DEFINE_EVENT`, `DEFINE_DYNAMIC_DEBUG_
//! METADATA`, `DEVICE_ATTR`, `DEFINE_RATELIMIT_STATE`, `module_param`, `WARN_ONCE`).
//! Cold never outweighs evidence of hotness; it only keeps type guesses quiet. The
//! types, sections and names are entries of `conventions.toml`, each with its reason
//! and source; tracepoints and once flags are storage classes of the kernel's own
//! tables (`kernel/storage.toml`), whose entries name their cold kind too.

pub use crate::kernel::Cold;

/// Why an object named `name` (bare symbol name, clone suffixes included) in
/// `section`, of type `type_name` (C spelling), is cold, if it is.
pub fn of(name: &str, section: &str, type_name: Option<&str>) -> Option<Cold> {
    let conventions = super::conventions::conventions();
    if let Some(c) = conventions
        .cold_section(section)
        .or_else(|| crate::kernel::section(section).and_then(|e| e.cold))
    {
        return Some(c);
    }
    if let Some(c) = type_name
        .and_then(|t| by_type(t).or_else(|| crate::kernel::of_type(t).and_then(|e| e.cold)))
    {
        return Some(c);
    }
    // A function-local static is `name.N`; the macro's name is before the dot.
    let base = name.split('.').next().unwrap_or(name);
    conventions.cold_name(base, section)
}

/// Cold by the struct an object's type names (through `const`, arrays and typedef-free
/// C spelling: `const struct device_attribute`, `struct attribute *[4]` is not).
fn by_type(c: &str) -> Option<Cold> {
    // Pointers (and arrays of them) point at cold storage; they are not it.
    if c.contains('*') {
        return None;
    }
    use crate::model::trim_leading;
    let c = trim_leading(trim_leading(c, "const "), "volatile ");
    let name = c.strip_prefix("struct ")?;
    let name = name.split([' ', '[']).next().unwrap_or(name);
    super::conventions::conventions().cold_struct(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cold_by_section_type_and_name() {
        let cases: &[(&str, &str, Option<&str>, Option<Cold>)] = &[
            // DEFINE_EVENT's call and its class, in .data.
            (
                "event_sched_switch",
                ".data",
                Some("struct trace_event_call"),
                Some(Cold::Tracing),
            ),
            (
                "print_fmt_sched_switch",
                ".data",
                Some("char[201]"),
                Some(Cold::Tracing),
            ),
            (
                "__SCK__tp_func_sched_switch",
                ".data",
                None,
                Some(Cold::Tracing),
            ),
            (
                "__tracepoint_sched_switch",
                "__tracepoints",
                None,
                Some(Cold::Tracing),
            ),
            ("descriptor.12", "__dyndbg", None, Some(Cold::DynamicDebug)),
            (
                "dev_attr_online",
                ".data",
                Some("struct device_attribute"),
                Some(Cold::SysfsAttribute),
            ),
            (
                "_rs.3",
                ".data",
                Some("struct ratelimit_state"),
                Some(Cold::RateLimiter),
            ),
            ("_rs.7", ".data", None, Some(Cold::RateLimiter)),
            (
                "loop_index_ida",
                ".data",
                Some("struct ida"),
                Some(Cold::IdAllocator),
            ),
            ("__param_debug", "__param", None, Some(Cold::ModuleParam)),
            (
                "e1000_driver",
                ".data",
                Some("struct pci_driver"),
                Some(Cold::Registration),
            ),
            (
                "my_fops",
                ".data",
                Some("struct file_operations"),
                Some(Cold::Registration),
            ),
            (
                "__already_done.4",
                ".data.once",
                Some("bool"),
                Some(Cold::OnceFlag),
            ),
            // Hot storage and pointers to cold things are not cold.
            ("runqueues", ".data..percpu", Some("struct rq"), None),
            ("attrs", ".data", Some("struct attribute *[4]"), None),
            ("nr_threads", ".data", Some("int"), None),
            ("tasklist_lock", ".data", Some("rwlock_t"), None),
            // `struct idr_layer` is not `struct idr`.
            ("x", ".data", Some("struct idr_layer"), None),
        ];
        for &(name, section, ty, want) in cases {
            assert_eq!(of(name, section, ty), want, "{name} {section} {ty:?}");
        }
    }
}
