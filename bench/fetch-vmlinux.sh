#!/usr/bin/env bash
# Fetch the two real Debian 6.1 cloud vmlinux builds used for checks and
# benchmarks into bench/cache/ (ignored by git). Skips what is already there.
# Prints the two vmlinux paths, OLD then NEW. Other packages of the same archive are
# named as arguments, e.g. `bench/fetch-vmlinux.sh linux-image-6.1.0-54-cloud-amd64-dbg`.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cache="${LAYOUT_DIFF_CACHE:-$here/cache}"
mkdir -p "$cache"
cd "$cache"
pkgs=("$@")
[ ${#pkgs[@]} -gt 0 ] || pkgs=(linux-image-6.1.0-47-cloud-amd64-dbg linux-image-6.1.0-50-cloud-amd64-dbg)
for pkg in "${pkgs[@]}"; do
  out="$cache/$pkg/vmlinux"
  [ -s "$out" ] && continue
  if ! ls "$cache"/"${pkg}"_*.deb >/dev/null 2>&1; then
    [ -n "$(find /var/lib/apt/lists -name '*Packages*' 2>/dev/null | head -1)" ] || apt-get update -qq >&2
    # Lists older than the archive name a package it no longer holds: update once, retry.
    apt-get download "$pkg" >&2 || { apt-get update -qq >&2 && apt-get download "$pkg" >&2; }
  fi
  deb=$(ls "$cache"/"${pkg}"_*.deb | head -1)
  mkdir -p "$cache/$pkg.tmp"
  dpkg-deb --fsys-tarfile "$deb" | tar -x -C "$cache/$pkg.tmp" --wildcards './usr/lib/debug/boot/vmlinux-*'
  mkdir -p "$cache/$pkg"
  mv "$cache/$pkg.tmp"/usr/lib/debug/boot/vmlinux-* "$out"
  rm -rf "$cache/$pkg.tmp"
done
for pkg in "${pkgs[@]}"; do echo "$cache/$pkg/vmlinux"; done
