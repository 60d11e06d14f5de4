//! The names the storage tables classify by: how storage is written (`Class`) and why
//! storage is cold by convention (`Cold`). Their own file because the tables, the
//! classifier and the evidence of hotness all name them.

use serde::{Deserialize, Serialize};

/// How the kernel writes storage, by where it lies and what it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Class {
    /// Init and exit code and data, freed after boot.
    Boot,
    /// Written while the kernel initialises, then mapped read-only (`__ro_after_init`).
    ReadOnlyAfterInit,
    /// Written rarely, read often (`__read_mostly`, static keys, tracepoints).
    ReadMostly,
    /// Never written after the image is mapped: code, `.rodata`, `const` objects.
    ReadOnly,
    /// A flag set once (`WARN_ONCE`, `DO_ONCE`, `static bool done`).
    Once,
    /// None of the above: written at run time, as far as the conventions say.
    Written,
}

impl Class {
    /// Whether storage of the class is judged as written at run time: the default,
    /// and a once flag (written, once; its writers are rare).
    pub fn at_run_time(self) -> bool {
        matches!(self, Class::Written | Class::Once)
    }

    /// Whether the class is a lifetime the diff never judges write-hot or straddling
    /// (boot-only, read-only after init, read-mostly): the report names it.
    pub fn is_lifetime(self) -> bool {
        matches!(
            self,
            Class::Boot | Class::ReadOnlyAfterInit | Class::ReadMostly
        )
    }
}

/// Why storage is cold.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Cold {
    /// Trace events, tracepoints, their formats and static calls: written when
    /// tracing is switched on (`include/trace/trace_events.h`, `tracepoint.h`).
    Tracing,
    /// Dynamic debug descriptors (`include/linux/dynamic_debug.h`).
    DynamicDebug,
    /// sysfs and kobject attributes (`DEVICE_ATTR`, `__ATTR`, attribute groups).
    SysfsAttribute,
    /// Rate limiters of log messages (`DEFINE_RATELIMIT_STATE`, `printk_ratelimited`).
    RateLimiter,
    /// ID allocators (`DEFINE_IDA`, `DEFINE_IDR`): used when something registers.
    IdAllocator,
    /// Module parameters (`module_param`): written by sysfs or the command line.
    ModuleParam,
    /// Drivers, buses, classes and operation tables: written when they register.
    Registration,
    /// `WARN_ONCE` and `printk_once` flags (`.data.once`).
    OnceFlag,
    /// Lockdep keys and other zero-work markers.
    LockdepKey,
}

impl Cold {
    /// Its name as reports print it.
    pub fn name(self) -> &'static str {
        match self {
            Cold::Tracing => "tracing metadata",
            Cold::DynamicDebug => "dynamic debug",
            Cold::SysfsAttribute => "sysfs attributes",
            Cold::RateLimiter => "rate limiters",
            Cold::IdAllocator => "id allocators",
            Cold::ModuleParam => "module parameters",
            Cold::Registration => "driver and ops registration",
            Cold::OnceFlag => "once flags",
            Cold::LockdepKey => "lockdep keys",
        }
    }
}
