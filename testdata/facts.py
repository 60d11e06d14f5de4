#!/usr/bin/env python3
"""Write EXPECTED.md for the layout-diff fixtures to stdout.

Every number comes from an independent tool run on the built files:
  nm -n -S      the symbol listing shown verbatim,
  readelf -sW   symbol types, bindings, sections and the STT_FILE owner of
                each local symbol (nm cannot tell an object from a linker
                label, or which file a local belongs to),
  readelf -SW   the section table (to know which section is .data..percpu),
  pahole        struct layouts.
Line arithmetic (line index, offset in line, offset in 128-byte pair,
co-tenants) is done here from those numbers.  Python stdlib only.

Run from testdata/ (build.sh does): python3 facts.py > EXPECTED.md
"""

import os
import re
import subprocess
import sys

LINE = 64
PAIR = 128

# Structs and unions defined in src/kernel.c, in source order.
STRUCTS = [
    "list_head", "hlist_node", "rcu_head", "mce", "tsc_adjust",
    "fixed_percpu_data", "desc_struct", "gdt_page", "rq", "tlb_state",
    "percpu_counter", "ratelimit_state", "user_struct", "user_namespace",
    "task_struct", "page", "ring_buffer_event", "sk_buff", "timer_list",
    "sigval", "stats", "lock_class_key",
]

OTHER_FILES = [
    "old-dwarf4.elf", "old-zlib.elf", "old-zstd.elf", "old-nodebug.elf",
    "old.o", "old-s390x.elf", "old-clang.elf",
]

KEY_SYMBOLS = [
    "root_user", "types__ptrace", "init_user_ns", "mces_seen", "injectm",
    "mce_exception_count", "mce_poll_count", "tsc_adjust", "arch_freq_scale",
    "vclock_new_counter", "xen_vcpu_id", "runqueues", "fixed_percpu_data",
]


def run(cmd):
    """Run cmd; return (rc, stdout, stderr)."""
    p = subprocess.run(cmd, capture_output=True, text=True,
                       env=dict(os.environ, LC_ALL="C"))
    return p.returncode, p.stdout, p.stderr


def out(cmd):
    rc, so, se = run(cmd)
    if rc != 0:
        sys.exit("facts.py: %s failed (%d): %s" % (" ".join(cmd), rc, se))
    return so


def first_line(cmd):
    try:
        rc, so, se = run(cmd)
    except FileNotFoundError:
        return "(not installed)"
    return (so or se).splitlines()[0] if (so or se) else "(no output)"


class Sym:
    def __init__(self, value, size, typ, bind, ndx, name, owner):
        self.value, self.size, self.typ = value, size, typ
        self.bind, self.ndx, self.name, self.owner = bind, ndx, name, owner

    @property
    def label(self):
        # Local symbols are named with the file that defines them, so the
        # two "counter"s stay apart.
        if self.bind == "LOCAL" and self.owner:
            return "%s (%s)" % (self.name, self.owner)
        return self.name


def sections(path):
    """Section index -> (name, addr, flags), from readelf -SW."""
    secs = {}
    pat = re.compile(r"^\s*\[\s*(\d+)\]\s+(\S*)\s+(\S+)\s+([0-9a-f]+)\s+"
                     r"([0-9a-f]+)\s+([0-9a-f]+)\s+([0-9a-f]+)\s+(\S*)\s+\d+")
    for line in out(["readelf", "-SW", path]).splitlines():
        m = pat.match(line)
        if m:
            idx, name, _typ, addr, _off, _size, _es, flags = m.groups()
            if name in ("NULL",):
                name = ""
            secs[int(idx)] = (name, int(addr, 16), flags)
    return secs


def symbols(path):
    """All symbols from readelf -sW, locals tagged with their STT_FILE."""
    syms = []
    owner = None
    pat = re.compile(r"^\s*\d+:\s+([0-9a-f]+)\s+(\S+)\s+(\S+)\s+(\S+)\s+"
                     r"(\S+)\s+(\S+)\s*(.*)$")
    for line in out(["readelf", "-sW", path]).splitlines():
        m = pat.match(line)
        if not m:
            continue
        value, size, typ, bind, _vis, ndx, name = m.groups()
        if typ == "FILE":
            owner = name
            continue
        if bind != "LOCAL":
            owner_here = None
        else:
            owner_here = owner
        syms.append(Sym(int(value, 16), int(size, 0), typ, bind,
                        int(ndx) if ndx.isdigit() else ndx, name, owner_here))
    return syms


class Layout:
    """The data objects and functions of one linked file."""

    def __init__(self, path):
        self.path = path
        self.secs = sections(path)
        self.syms = symbols(path)
        start = [s for s in self.syms if s.name == "__per_cpu_start"]
        self.pcpu_base = start[0].value if start else None
        self.objects = []   # (label, space, offset, size, section)
        self.funcs = []     # (label, addr, size)
        for s in self.syms:
            if not isinstance(s.ndx, int) or s.ndx not in self.secs:
                continue
            sname, _addr, flags = self.secs[s.ndx]
            if s.typ == "FUNC":
                self.funcs.append((s.label, s.value, s.size))
            elif s.typ == "OBJECT" and "A" in flags and "X" not in flags:
                if sname == ".data..percpu":
                    self.objects.append((s.label, "percpu",
                                         s.value - self.pcpu_base, s.size,
                                         sname))
                else:
                    self.objects.append((s.label, "kernel", s.value, s.size,
                                         sname))
        self.objects.sort(key=lambda o: (o[1] != "percpu", o[2], o[0]))
        self.funcs.sort(key=lambda f: (f[1], f[0]))

    def obj(self, label):
        for o in self.objects:
            if o[0] == label:
                return o
        return None

    def cotenants(self, o):
        lo, hi = lines_of(o)
        res = []
        for p in self.objects:
            if p is o or p[1] != o[1]:
                continue
            plo, phi = lines_of(p)
            if plo <= hi and lo <= phi:
                res.append(p[0])
        return res


def lines_of(o):
    """First and last 64-byte line index an object touches (size 0 -> 1)."""
    off, size = o[2], max(o[3], 1)
    return off // LINE, (off + size - 1) // LINE


def hx(v):
    return "0x%x" % v


def sdelta(v):
    return ("+0x%x" % v) if v >= 0 else ("-0x%x" % -v)


def code(text, lang=""):
    return "```%s\n%s\n```\n" % (lang, text.rstrip("\n"))


def table(head, rows):
    s = "| " + " | ".join(head) + " |\n"
    s += "|" + "|".join("---" for _ in head) + "|\n"
    for r in rows:
        s += "| " + " | ".join(str(c) for c in r) + " |\n"
    return s


def object_table(lay):
    rows = []
    for o in lay.objects:
        label, space, off, size, sname = o
        lo, hi = lines_of(o)
        rows.append([
            "`%s`" % label,
            "per-CPU" if space == "percpu" else sname,
            hx(off), hx(size), hx(lo),
            "%d" % (hi - lo + 1),
            hx(off % LINE), hx(off % PAIR),
            ", ".join("`%s`" % c for c in lay.cotenants(o)) or "-",
        ])
    return table(["object", "section", "address / per-CPU offset", "size",
                  "line (addr/64)", "lines", "off in line (addr%64)",
                  "off in pair (addr%128)", "co-tenants"], rows)


def percpu_table(lay):
    rows = []
    for o in lay.objects:
        if o[1] != "percpu":
            continue
        rows.append(["`%s`" % o[0], hx(o[2]), hx(o[3]), hx(o[2] % LINE),
                     hx(o[2] % PAIR)])
    return table(["per-CPU symbol", "offset (st_value - __per_cpu_start)",
                  "size", "offset % 64", "offset % 128"], rows)


def func_table(lay):
    rows = [["`%s`" % f[0], hx(f[1]), hx(f[2]), hx(f[1] % LINE)]
            for f in lay.funcs]
    return table(["function", "address", "size", "address % 64"], rows)


def pahole(path, name):
    rc, so, se = run(["pahole", "-F", "dwarf", "-C", name, path])
    if rc != 0 or not so.strip():
        return "(pahole rc=%d, no output) %s" % (rc, se.strip())
    return so


def file_section(lay):
    p = lay.path
    s = "## `%s`\n\n" % p
    s += "### `nm -n -S %s`\n\n" % p
    s += code(out(["nm", "-n", "-S", p]))
    s += "\n### `readelf -S -W %s`\n\n" % p
    s += code(out(["readelf", "-S", "-W", p]))
    s += ("\n### Per-CPU offsets\n\n`__per_cpu_start` = %s; `.data..percpu` "
          "is linked at address 0.\n\n" % hx(lay.pcpu_base))
    s += percpu_table(lay)
    s += ("\n### Data objects and their cache lines\n\n"
          "STT_OBJECT symbols in allocated, non-executable sections. Per-CPU "
          "objects are measured by their per-CPU offset and are co-tenants "
          "only of other per-CPU objects. A line is 64 bytes; a size-0 "
          "object counts as 1 byte. Co-tenants: other objects that touch any "
          "line this one touches.\n\n")
    s += object_table(lay)
    s += "\n### Functions\n\n"
    s += func_table(lay)
    s += "\n### `.rela.debug_info` in an executable\n\n"
    s += rel_facts(p, out(["readelf", "-SW", p]))
    return s


def diff_section(old, new):
    s = "## `new.elf` vs `old.elf`\n\n"
    of = {f[0]: f for f in old.funcs}
    nf = {f[0]: f for f in new.funcs}

    s += "### Functions whose start address mod 64 changed\n\n"
    rows = []
    for f in old.funcs:
        n = nf.get(f[0])
        if n and f[1] % LINE != n[1] % LINE:
            rows.append(["`%s`" % f[0], hx(f[1]), hx(n[1]),
                         sdelta(n[1] - f[1]), hx(f[1] % LINE),
                         hx(n[1] % LINE)])
    s += table(["function", "old", "new", "delta", "old %64", "new %64"],
               rows) if rows else "None.\n"

    s += "\n### All functions (moves and size changes)\n\n"
    rows = []
    for f in old.funcs:
        n = nf.get(f[0])
        if not n:
            rows.append(["`%s`" % f[0], hx(f[1]), "(gone)", "", "", ""])
            continue
        rows.append(["`%s`" % f[0], hx(f[1]), hx(n[1]), sdelta(n[1] - f[1]),
                     "yes" if f[1] % LINE != n[1] % LINE else "no",
                     "%s -> %s" % (hx(f[2]), hx(n[2]))
                     if f[2] != n[2] else hx(f[2])])
    for n in new.funcs:
        if n[0] not in of:
            rows.append(["`%s`" % n[0], "(new)", hx(n[1]), "", "", hx(n[2])])
    s += table(["function", "old", "new", "delta", "phase changed", "size"],
               rows)

    s += ("\n### Data and per-CPU objects whose address changed\n\n"
          "Per-CPU objects by per-CPU offset.\n\n")
    no = {o[0]: o for o in new.objects}
    oo = {o[0]: o for o in old.objects}
    rows = []
    for o in old.objects:
        n = no.get(o[0])
        if n is None:
            rows.append(["`%s`" % o[0], o[1], hx(o[2]), "(gone)", "", "", ""])
        elif n[2] != o[2]:
            rows.append(["`%s`" % o[0], o[1], hx(o[2]), hx(n[2]),
                         sdelta(n[2] - o[2]),
                         "%s -> %s" % (hx(o[2] % LINE), hx(n[2] % LINE)),
                         "%s -> %s" % (hx(o[2] % PAIR), hx(n[2] % PAIR))])
    for n in new.objects:
        if n[0] not in oo:
            rows.append(["`%s`" % n[0], n[1], "(new)", hx(n[2]), "",
                         hx(n[2] % LINE), hx(n[2] % PAIR)])
    s += table(["object", "space", "old", "new", "delta", "off in line",
                "off in pair"], rows)

    s += "\n### Objects whose size changed\n\n"
    rows = []
    for o in old.objects:
        n = no.get(o[0])
        if n and n[3] != o[3]:
            rows.append(["`%s`" % o[0], hx(o[3]), hx(n[3])])
    s += table(["object", "old size", "new size"], rows)

    s += "\n### Co-tenants that changed\n\n"
    rows = []
    for o in old.objects:
        n = no.get(o[0])
        if not n:
            continue
        a, b = set(old.cotenants(o)), set(new.cotenants(n))
        if a != b:
            rows.append(["`%s`" % o[0],
                         ", ".join("`%s`" % x for x in sorted(b - a)) or "-",
                         ", ".join("`%s`" % x for x in sorted(a - b)) or "-"])
    s += table(["object", "gained", "lost"], rows)
    return s


def summary(old, new):
    rows = []
    for name in KEY_SYMBOLS:
        o, n = old.obj(name), new.obj(name)
        def cell(x):
            if x is None:
                return "-"
            return "%s size %s (line off %s, pair off %s)" % (
                hx(x[2]), hx(x[3]), hx(x[2] % LINE), hx(x[2] % PAIR))
        space = (o or n)[1]
        rows.append(["`%s`" % name, space, cell(o), cell(n)])
    return table(["symbol", "space", "old.elf", "new.elf"], rows)


def dwarf_byte_size(path, name):
    """DW_AT_byte_size of the first struct/union DIE called name (readelf).

    Used where pahole prints no size comment (it has none for unions)."""
    rc, txt, _ = run(["readelf", "--debug-dump=info", path])
    die = None
    hdr = re.compile(r"^\s*<\d+><[0-9a-f]+>: Abbrev Number: \d+ \((DW_TAG_\w+)\)")
    for line in txt.splitlines() + ["<0><0>: Abbrev Number: 0 (DW_TAG_end)"]:
        m = hdr.match(line)
        if m or "Abbrev Number: 0" in line:
            if (die and die.get("tag") in ("DW_TAG_union_type",
                                          "DW_TAG_structure_type")
                    and die.get("name") == name and "size" in die):
                return die["size"]
            die = {"tag": m.group(1)} if m else None
            continue
        if die is None:
            continue
        m = re.search(r"DW_AT_name\s*:\s*(?:\([^)]*\):\s*)?(\S+)\s*$", line)
        if m:
            die["name"] = m.group(1)
        m = re.search(r"DW_AT_byte_size\s*:\s*(\d+)", line)
        if m:
            die["size"] = int(m.group(1))
    return None


def struct_sizes(path):
    rows = []
    for name in STRUCTS:
        text = pahole(path, name)
        m = re.search(r"/\* size: (\d+)", text)
        if m:
            rows.append((name, m.group(1)))
        else:
            sz = dwarf_byte_size(path, name)
            rows.append((name, "%s (DW_AT_byte_size; pahole prints no size "
                         "for unions)" % sz if sz is not None else None))
    return rows


def header_facts(path):
    h = out(["readelf", "-h", path])
    get = lambda k: re.search(r"^\s*%s:\s+(.*)$" % k, h, re.M).group(1).strip()
    return get("Class"), get("Data"), get("Type"), get("Machine")


def dwarf_versions(path):
    rc, so, _ = run(["readelf", "--debug-dump=info", path])
    vers = re.findall(r"^\s+Version:\s+(\d+)", so, re.M)
    return sorted(set(vers))


def other_section(path):
    s = "### `%s`\n\n" % path
    if not os.path.exists(path):
        return s + "Not built (compiler missing when build.sh ran).\n\n"
    cls, data, typ, mach = header_facts(path)
    s += "- ELF: %s, %s, %s, %s\n" % (cls, data, typ, mach)
    vers = dwarf_versions(path)
    s += "- DWARF unit versions (readelf): %s\n" % (
        ", ".join(vers) if vers else "none (no .debug_info)")
    secs = out(["readelf", "-SW", path])
    comp = [l.split("]")[1].split()[0] for l in secs.splitlines()
            if re.search(r"\]\s+\.debug", l) and
            re.search(r"\s[A-Z]*C[A-Z]*\s+\d+\s+\d+\s+\d+$", l)]
    if comp:
        t = out(["readelf", "-t", path])
        kinds = sorted(set(re.findall(r"^\s+(ZLIB|ZSTD|[A-Z]+), [0-9a-f]+, \d+",
                                      t, re.M)))
        s += "- SHF_COMPRESSED (flag C) sections: %s; ch_type: %s\n" % (
            ", ".join("`%s`" % c for c in comp), ", ".join(kinds))
    relas = [l.split("]")[1].split()[0] for l in secs.splitlines()
             if re.search(r"\]\s+\.rela\.debug", l)]
    s += "- `.rela.debug_*` sections: %s\n" % (
        ", ".join("`%s`" % r for r in relas) if relas else "none")
    rc, _, se = run(["pahole", "-F", "dwarf", path])
    s += "- `pahole -F dwarf %s`: exit %d%s\n" % (
        path, rc, (", stderr: `%s`" % se.strip()) if se.strip() else "")
    if typ.startswith("EXEC"):
        lay = Layout(path)
        s += "\nKey objects:\n\n"
        rows = []
        for name in KEY_SYMBOLS:
            o = lay.obj(name)
            if o:
                rows.append(["`%s`" % name, o[1], hx(o[2]), hx(o[3]),
                             hx(o[2] % LINE), hx(o[2] % PAIR)])
        s += table(["symbol", "space", "address / offset", "size",
                    "off in line", "off in pair"], rows)
    s += "\n"
    if path in ("old-s390x.elf", "old-clang.elf"):
        s += "`nm -n -S %s`:\n\n" % path
        s += code(out(["nm", "-n", "-S", path]))
        s += "\nStruct sizes (pahole):\n\n"
        s += table(["struct", "size"],
                   [[n, sz if sz is not None else "-"]
                    for n, sz in struct_sizes(path)])
        s += "\n"
    if path == "old-dwarf4.elf":
        s += "`pahole -F dwarf -C task_struct old-dwarf4.elf` (bitfields " \
             "from DW_AT_bit_offset + DW_AT_byte_size):\n\n"
        s += code(pahole(path, "task_struct"))
        s += "\n"
    if path == "old.o":
        s += "`readelf -S -W old.o`:\n\n" + code(secs) + "\n"
        s += rel_facts(path, secs)
    return s


def rel_facts(path, secs):
    """What .rela.debug_info does to a few DW_OP_addr operands in old.o."""
    m = re.search(r"\]\s+\.debug_info\s+PROGBITS\s+[0-9a-f]+\s+([0-9a-f]+)",
                  secs)
    base = int(m.group(1), 16)
    data = open(path, "rb").read()
    syms = {x.name: x for x in symbols(path)}
    shn = sections(path)
    rows = []
    cur = None
    for line in out(["readelf", "-rW", path]).splitlines():
        if line.startswith("Relocation section"):
            cur = line.split("'")[1]
            continue
        f = line.split()
        if cur != ".rela.debug_info" or len(f) < 7 or f[2] != "R_X86_64_64":
            continue
        name = f[4]
        if name not in ("root_user", "mces_seen", "injectm"):
            continue
        off, addend = int(f[0], 16), int(f[6], 0)
        raw = int.from_bytes(data[base + off:base + off + 8], "little")
        sym = syms[name]
        if path.endswith(".o"):
            val = "%s + %s" % (shn[sym.ndx][0], hx(sym.value + addend))
        else:
            val = hx(sym.value + addend)
        rows.append(["`%s`" % name, hx(off), "R_X86_64_64", hx(raw), val])
    if path.endswith(".o"):
        intro = ("Relocations in `.rela.debug_info` that a reader of `%s` "
                 "must apply: the 8-byte `DW_OP_addr` operands of these "
                 "variables are zero in the file; the relocated value is the "
                 "symbol's section-relative value plus the addend.\n\n" % path)
    else:
        intro = ("`%s` was linked with `--emit-relocs`, like Debian's vmlinux. "
                 "Its `.rela.debug_info` must NOT be applied: the operands in "
                 "the file are already the final addresses (raw bytes equal "
                 "S + A).\n\n" % path)
    return intro + table(["variable", "offset in .debug_info", "type",
                          "raw bytes (LE u64)", "S + A"], rows) + "\n"


def main():
    old, new = Layout("old.elf"), Layout("new.elf")
    w = sys.stdout.write
    w("# EXPECTED.md: measured facts about the fixtures\n\n")
    w("Generated by `facts.py` (run by `build.sh`); do not edit by hand. "
      "Every value below was read from the built files with nm, readelf and "
      "pahole, not from layout-diff.\n\n")
    w("Tools:\n\n")
    for cmd in (["gcc", "--version"], ["ld", "--version"],
                ["readelf", "--version"], ["pahole", "--version"],
                ["clang", "--version"], ["s390x-linux-gnu-gcc", "--version"]):
        w("- `%s`: %s\n" % (cmd[0], first_line(cmd)))
    w("\nConventions: 64-byte lines, 128-byte adjacent-line pairs. Local "
      "symbols are written `name (file)` where `file` is the STT_FILE symbol "
      "before them in `.symtab`.\n\n")

    w("## Key facts\n\n")
    w(summary(old, new))
    w("\nStruct sizes (pahole):\n\n")
    so, sn = struct_sizes("old.elf"), struct_sizes("new.elf")
    w(table(["struct", "old.elf", "new.elf"],
            [[a[0], a[1], b[1]] for a, b in zip(so, sn)]))
    w("\n`pahole -C stats` prints only the first `struct stats` it meets "
      "(kernel.c's, 16 bytes); other.c defines another `struct stats` of 12 "
      "bytes (hits, misses, drops), visible with `readelf --debug-dump=info`.\n\n")

    w(file_section(old))
    w("\n")
    w(file_section(new))
    w("\n")
    w(diff_section(old, new))
    w("\n## Struct layouts (`pahole -F dwarf -C NAME`)\n\n")
    for path in ("old.elf", "new.elf"):
        w("### `%s`\n\n" % path)
        for name in STRUCTS:
            w("#### `%s`\n\n" % name)
            w(code(pahole(path, name), "c"))
            w("\n")
    w("## Other fixtures\n\n")
    for path in OTHER_FILES:
        w(other_section(path))
    w("### `bad/`\n\n")
    for f in sorted(os.listdir("bad")):
        p = os.path.join("bad", f)
        w("- `%s`: %d bytes; `file`: %s\n" % (
            p, os.path.getsize(p),
            first_line(["file", "-b", p])))
    w("\n")


if __name__ == "__main__":
    main()
