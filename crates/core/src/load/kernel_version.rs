//! Which kernel a build is, as the build itself says: the release in `linux_banner`
//! (`init/version.c`: "Linux version RELEASE (BUILDER) (COMPILER) #N ... DISTRO VERSION
//! (DATE)") or in a module's `.modinfo` `vermagic=RELEASE ...`.

/// `6.1.0-50-cloud-amd64 (Debian 6.1.176-1)` from a banner: the release, and the
/// distribution's package version when the build string after `#` names one.
pub(crate) fn of_banner(banner: &str) -> Option<String> {
    let rest = banner.strip_prefix("Linux version ")?;
    let release = rest.split_whitespace().next()?;
    let package = rest.rsplit_once('#').and_then(|(_, build)| {
        let words: Vec<&str> = build.split_whitespace().collect();
        words
            .windows(2)
            .find(|w| ["Debian", "Ubuntu"].contains(&w[0]))
            .map(|w| format!("{} {}", w[0], w[1]))
    });
    Some(match package {
        Some(p) => format!("{release} ({p})"),
        None => release.to_string(),
    })
}

/// The release of a module's `vermagic=` entry in `.modinfo` (NUL-separated strings).
pub(crate) fn of_modinfo(modinfo: &[u8]) -> Option<String> {
    modinfo
        .split(|&b| b == 0)
        .filter_map(|entry| std::str::from_utf8(entry).ok())
        .find_map(|entry| entry.strip_prefix("vermagic="))
        .and_then(|v| v.split_whitespace().next())
        .map(str::to_string)
}

#[cfg(test)]
mod tests {
    use super::{of_banner, of_modinfo};

    #[test]
    fn a_debian_banner_gives_the_release_and_the_package() {
        let banner = "Linux version 6.1.0-50-cloud-amd64 (debian-kernel@lists.debian.org) \
(gcc-12 (Debian 12.2.0-14+deb12u1) 12.2.0, GNU ld (GNU Binutils for Debian) 2.40) \
#1 SMP PREEMPT_DYNAMIC Debian 6.1.176-1 (2026-07-02)\n";
        assert_eq!(
            of_banner(banner).as_deref(),
            Some("6.1.0-50-cloud-amd64 (Debian 6.1.176-1)")
        );
    }

    #[test]
    fn a_plain_banner_gives_the_release() {
        let banner =
            "Linux version 7.3.4 (me@host) (gcc 14.2.0) #3 SMP Sat Nov 15 22:30:00 UTC 2026";
        assert_eq!(of_banner(banner).as_deref(), Some("7.3.4"));
        assert_eq!(of_banner("not a banner"), None);
    }

    #[test]
    fn vermagic_gives_the_release() {
        let modinfo = b"license=GPL\0vermagic=6.1.0-50-cloud-amd64 SMP preempt mod_unload modversions \0name=ext4\0";
        assert_eq!(of_modinfo(modinfo).as_deref(), Some("6.1.0-50-cloud-amd64"));
        assert_eq!(of_modinfo(b"license=GPL\0"), None);
    }
}
