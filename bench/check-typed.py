#!/usr/bin/env python3
"""Check the typed access map (issue 47) against the kernel's own source.

Why this exists: the typed access map names, for every memory operand through a
base register, the struct type the register points to and the member at the
offset. On the fixture (testdata/typed) that is checked against FACTS.md; on a
real kernel nothing says what the right answer is but the source the kernel was
built from. This script draws a seeded random sample of typed accesses from
`examples/typed_map VMLINUX tsv`, finds each instruction's inline chain with
`addr2line -i` (one batched process), reads those source lines in the unpacked
source tree, and decides whether the source names the member.

Usage:
  python3 bench/check-typed.py VMLINUX --source DIR (--tsv FILE | --typed-map BIN)
                               [--seed 1] [--samples 300] [--objdump]
                               [--json OUT] [--quiet]

  --tsv FILE       the map's TSV (one line per typed access: address, function,
                   type, offset, size, member path, kind, cold, per-CPU, remote);
                   with --typed-map as well, the TSV is written there first.
  --typed-map BIN  run `BIN VMLINUX tsv` to produce the TSV (into --tsv FILE, or
                   a temporary file).
  --source DIR     the unpacked source tree the vmlinux was built from (the
                   directory holding Makefile and kernel/, or its parent when
                   that has a single such subdirectory).
  --objdump        print the disassembly around every miss (the instruction and
                   the 6 before it).

The sample is uniform without replacement (random.Random(seed).sample) over the
typed accesses whose member path is not `(padding)`; how many are `(padding)`
is reported beside it, with a few of them.

THE MATCHING RULE. For a sampled access with type T and member path P:

1. Alternatives. P is split at ` | ` into union alternatives, and at ` + `
   into the members one access spans (a byte of bitfields loaded whole, a
   struct copied by a wide load); the access agrees if any of them matches. Each alternative is split at `.` into
   components; an array subscript (`[2]`, `[*]`) is dropped from its component
   (`slots[2].x` -> `slots`, `x`).

2. Names. Every component of the alternative is a name: the last one
   (`nr_running`) or any earlier one (`d_lockref` for `d_lockref.count`). So is
   every alias: a `#define X Y.Z` (or `Y->Z`) line whose expansion is a pure
   member chain of two or more members, in any header, in a file that defines
   T (`struct T {`, `union T {`, `} T;`) or in a file of the inline chain,
   gives the name X when its expansion equals a contiguous run of the
   alternative's components (`#define sk_refcnt __sk_common.skc_refcnt` in
   include/net/sock.h gives `sk_refcnt` for `__sk_common.skc_refcnt.refs.
   counter`, and `sk_v6_daddr` for inet_sock's `sk.__sk_common.skc_v6_daddr`).

3. Lines seen. `addr2line -i` gives the inline chain, innermost frame first,
   out to the function. For each frame the whole statement at the reported
   line is read: forwards while parentheses are open or the line ends in a
   comma, a binary operator or a backslash (at most 80 lines, for a
   TRACE_EVENT(...) invocation), backwards while the previous line leaves a
   parenthesis open or ends in a comma or an operator, and is not a label or
   `case ...:` (at most 8 lines); a line ending in `= {` (a brace
   initializer) runs to its closing brace. Comments and string literals are blanked
   first. DWARF paths (Debian's build directory first) are mapped onto DIR by
   dropping leading components until the rest exists there.

4. A name matches when it occurs in those lines as an identifier token (regex
   `\\bNAME\\b`, never a substring) in member position:
     - member access: `->NAME` or `.NAME` (also a designated initializer);
     - a macro argument that the macro uses as a member: the token is a whole
       argument of a function-like macro whose body puts that parameter after
       `->` or `.`, or passes it to offsetof(), or passes it on as a whole
       argument to another macro that does (3 levels):
       `list_for_each_entry(pos, head, NAME)`, `container_of(p, struct T,
       NAME)`.
   A bare token anywhere else (a local variable that happens to share the
   name, `sk` in `sock_net(sk)`) does not count; it is shown for a miss.

5. Helpers named on the lines. The statement may reach the member through a
   macro or a static function whose own frame is not in the chain (gcc keeps
   no inline frame for a helper that left no instruction of its own, and
   macros never have one): `current_gid()`, `IPCB(skb)`, `EXT4_SB(sb)->...`,
   `pci_is_pcie(dev)`, `perf_arch_fetch_caller_regs(regs, ip)`. So, only when
   4 found nothing, every identifier on the lines that is a function-like
   macro, or that is called and is a static function (inline or not) defined
   in the same file or in a header, is replaced by its definition's text
   (macro body with its continuation lines, less `#define NAME(params)`;
   function from its signature to its closing brace; at most 40 lines each),
   and that text is matched as in 4, repeatedly, to 6 levels (SYSCALL_DEFINEn
   needs 6). Which definitions: those in the same file and those in include/
   and arch/x86/ (all of them: per-#ifdef variants, and an arch override of a
   generic macro such as __SYSCALL_DEFINEx); when there are none there, those
   sharing the longest directory prefix with the use, when that is the use's
   own directory or at least two components deep (security/apparmor/include/
   label.h for security/apparmor/label.c). Functions that are frames of the
   chain are not expanded (their line is already seen). Token pasting
   (`SYSCALL_PT_ARG##x`, `ops->get_##name`) is not resolved. A match found
   this way is reported with its expansion path.

6. Verdicts. agree: some name matched (4 or 5). disagree: every frame's source
   was read and no name matched. undecidable, with its reason: addr2line gave
   no line (`??`); or no frame's file exists under DIR (generated files); or a
   frame's line is past its file's end; or the lines read hold no code (blank,
   comment, only preprocessor lines), or some frames were read and others not
   and nothing matched in those read.

Beside each miss the script shows the lines seen, any bare-token occurrences,
member-position matches within 3 lines of a frame's line ("near", often the
neighbouring statement that gcc's line table mixed in), and hints read off the
lines (a memset/memcpy, a whole-object assignment `*a = *b`). Near matches and
hints are information only: they never count as agreement.

Output: one line per sample (verdict, address, function, type+offset, member,
how it matched), then the summary: agreement among decidable samples, how many
agreed directly on the chain's lines and how many only through a helper's text,
how many matched only the last component of a multi-component path (marked
`(leaf only)`; worth a look by hand: `v->counter` in an atomic helper, or a
pointer to an inner struct, is fine, but a wrong outer type whose member shares
the leaf's name also passes there), the undecidable ones by reason, and every
miss with its address, function, type, member, the source lines seen and the
hints.

Python 3, standard library only; needs binutils' addr2line (and objdump for
--objdump).
"""

import argparse
import json
import os
import random
import re
import subprocess
import sys
import tempfile
from collections import Counter, defaultdict

STMT_BACK = 8
STMT_FORWARD = 80
BODY_LINES = 40
EXPAND_DEPTH = 6
MAX_EXPANSIONS = 400
NEAR = 3
IDENT = re.compile(r"[A-Za-z_]\w*")
KEYWORDS = set(
    "if else for while do switch case return sizeof typeof __typeof__ struct union enum "
    "unsigned signed int long short char void const volatile static inline break continue "
    "goto default bool u8 u16 u32 u64 s8 s16 s32 s64 true false NULL".split()
)


# ------------------------------------------------------------------ the map's TSV


def load_tsv(path):
    rows = []
    with open(path) as f:
        for line in f:
            cols = line.rstrip("\n").split("\t")
            if len(cols) < 10:
                continue
            rows.append(
                {
                    "addr": int(cols[0], 16),
                    "function": cols[1],
                    "type": cols[2],
                    "offset": int(cols[3]),
                    "size": int(cols[4]),
                    "member": cols[5],
                    "kind": cols[6],
                    "cold": cols[7] == "true",
                    "percpu": cols[8],
                    "remote": cols[9] == "true",
                }
            )
    return rows


# ------------------------------------------------------------------ source tree


def find_source_root(d):
    d = os.path.abspath(d)

    def is_root(x):
        return os.path.exists(os.path.join(x, "Makefile")) and os.path.isdir(os.path.join(x, "kernel"))

    if is_root(d):
        return d
    subs = [os.path.join(d, s) for s in sorted(os.listdir(d)) if is_root(os.path.join(d, s))]
    if len(subs) == 1:
        return subs[0]
    sys.exit(f"check-typed: {d} is not a kernel source tree (no Makefile and kernel/)")


def blank_comments_strings(lines):
    """Replace comments and string/char literals by spaces, keeping line structure."""
    out = []
    in_block = False
    for line in lines:
        res = []
        i = 0
        n = len(line)
        while i < n:
            if in_block:
                j = line.find("*/", i)
                if j < 0:
                    res.append(" " * (n - i))
                    i = n
                else:
                    res.append(" " * (j + 2 - i))
                    i = j + 2
                    in_block = False
                continue
            c = line[i]
            if c == "/" and line.startswith("/*", i):
                in_block = True
                res.append("  ")
                i += 2
            elif c == "/" and line.startswith("//", i):
                res.append(" " * (n - i))
                i = n
            elif c in "\"'":
                j = i + 1
                while j < n and line[j] != c:
                    j += 2 if line[j] == "\\" else 1
                res.append(c + " " * (min(j + 1, n) - i - 2) + (c if j < n else ""))
                i = j + 1
            else:
                res.append(c)
                i += 1
        out.append("".join(res))
    return out


class Source:
    """Maps DWARF paths onto the source tree and serves raw and blanked lines."""

    def __init__(self, root):
        self.root = root
        self.path_cache = {}
        self.file_cache = {}

    def resolve(self, dwarf_path):
        if dwarf_path in self.path_cache:
            return self.path_cache[dwarf_path]
        parts = [p for p in dwarf_path.split("/") if p not in ("", ".")]
        found = None
        for i in range(len(parts)):
            if os.path.isfile(os.path.join(self.root, *parts[i:])):
                found = "/".join(parts[i:])
                break
        self.path_cache[dwarf_path] = found
        return found

    def lines(self, rel):
        if rel not in self.file_cache:
            with open(os.path.join(self.root, rel), errors="replace") as f:
                raw = f.read().split("\n")
            self.file_cache[rel] = (raw, blank_comments_strings(raw))
        return self.file_cache[rel]


CONTINUES = re.compile(r"(,|\(|\[|&&|\|\||[-+*/%&|^=<>?!:~])\s*$")


def paren_delta(s):
    return s.count("(") - s.count(")")


def statement_range(blanked, idx):
    """(lo, hi) line indexes (0-based) of the statement around line idx."""
    lo = idx
    for _ in range(STMT_BACK):
        if lo == 0:
            break
        prev = blanked[lo - 1].rstrip()
        if not prev.strip() or prev.lstrip().startswith("#"):
            break
        if prev[-1] in ";{}" and paren_delta(prev) <= 0:
            break
        if prev.endswith(":") and "?" not in prev:
            break  # a label or case
        if paren_delta(prev) > 0 or CONTINUES.search(prev):
            lo -= 1
        else:
            break
    hi = idx
    depth = sum(paren_delta(blanked[k]) for k in range(lo, idx + 1))
    # a brace initializer (`struct x y = {`, `= (struct x){`) runs to its closing brace
    braces = 1 if re.search(r"=\s*(?:\([^()]*\)\s*)?\{\s*$", blanked[idx]) else 0
    for _ in range(STMT_FORWARD):
        cur = blanked[hi].rstrip()
        if hi + 1 >= len(blanked):
            break
        if depth > 0 or braces > 0 or (CONTINUES.search(cur) and not cur.endswith(":")) or cur.endswith("\\"):
            hi += 1
            depth += paren_delta(blanked[hi])
            if braces:
                braces += blanked[hi].count("{") - blanked[hi].count("}")
        else:
            break
    return lo, hi


# ------------------------------------------------------------------ definitions index

DEF_STRUCT = re.compile(r"^\s*(?:typedef\s+)?(?:struct|union)\s+(\w+)\s*\{")
DEF_TYPEDEF_END = re.compile(r"^\s*\}\s*(\w+)\s*;")
DEF_ALIAS = re.compile(r"^\s*#\s*define\s+(\w+)\s+\(?\s*(\w+(?:\s*(?:\.|->)\s*\w+)+)\s*\)?\s*$")
DEF_FMACRO = re.compile(r"^\s*#\s*define\s+(\w+)\(([^)]*)\)")
DEF_STATIC = re.compile(r"^static\s[\w\s\*]*?\b(\w+)\s*\(")
DEF_INLINE = re.compile(r"^\s*static\s+(?:[\w\s\*]*\s)?(?:inline|__always_inline)\b[\w\s\*]*?\b(\w+)\s*\(")
SKIP_TREES = ("tools/", "scripts/", "Documentation/", "samples/", "usr/")


class Index:
    """Struct/union/typedef definitions, member-chain #defines, function-like macros and
    static inline functions, by file; from one `grep -rE` over the tree's .c and .h files."""

    def __init__(self, root, src):
        self.root = root
        self.src = src
        self.type_files = defaultdict(set)
        self.aliases = defaultdict(list)  # file -> [(name, [components])]
        self.macros = defaultdict(list)  # name -> [(file, line0, [params])]
        self.inlines = defaultdict(list)  # name -> [(file, line0)]
        self.body_cache = {}
        pats = [
            r"^\s*(typedef\s+)?(struct|union)\s+\w+\s*\{",
            r"^\s*\}\s*\w+\s*;",
            r"^\s*#\s*define\s+\w+(\(|\s+\(?\s*\w+\s*(\.|->))",
            r"^\s*static\s.*\b(inline|__always_inline)\b",
        ]
        cmd = ["grep", "-rIEn", "--include=*.h", "--include=*.c"]
        for p in pats:
            cmd += ["-e", p]
        cmd.append(".")
        out = subprocess.run(cmd, cwd=root, capture_output=True, text=True, errors="replace").stdout
        pending = defaultdict(list)
        for line in out.split("\n"):
            parts = line.split(":", 2)
            if len(parts) < 3:
                continue
            path, lno, text = parts
            if path.startswith("./"):
                path = path[2:]
            if path.startswith(SKIP_TREES):
                continue
            m = DEF_STRUCT.match(text) or DEF_TYPEDEF_END.match(text)
            if m:
                self.type_files[m.group(1)].add(path)
                continue
            m = DEF_ALIAS.match(text)
            if m:
                comps = re.split(r"\s*(?:\.|->)\s*", m.group(2).strip())
                self.aliases[path].append((m.group(1), comps))
                continue
            m = DEF_FMACRO.match(text)
            if m:
                params = [x.strip() for x in m.group(2).split(",")]
                self.macros[m.group(1)].append((path, int(lno) - 1, params))
                continue
            if text.rstrip().endswith("\\"):
                continue  # a function generated inside a macro definition
            text = re.sub(r"__attribute__\s*\(\(.*?\)\)", " ", text)
            m = DEF_INLINE.match(text)
            if m and m.group(1) not in KEYWORDS:
                self.inlines[m.group(1)].append((path, int(lno) - 1))
            elif "(" not in text and re.match(r"^\s*static\s.*\b(?:inline|__always_inline)\b", text):
                pending[path].append(int(lno) - 1)
        # static functions that are not marked inline, in headers (folio_flags() in
        # page-flags.h); those of a .c file are found in the file itself (file_statics)
        out = subprocess.run(["grep", "-rIEn", "--include=*.h", "-e", r"^static\s", "."],
                             cwd=root, capture_output=True, text=True, errors="replace").stdout
        for line in out.split("\n"):
            parts = line.split(":", 2)
            if len(parts) < 3:
                continue
            path, lno, text = parts
            path = path[2:] if path.startswith("./") else path
            if path.startswith(SKIP_TREES) or re.search(r"\b(?:inline|__always_inline)\b", text):
                continue
            if text.rstrip().endswith("\\"):
                continue
            text = re.sub(r"__attribute__\s*\(\(.*?\)\)", " ", text)
            m = DEF_STATIC.match(text)
            if m and m.group(1) not in KEYWORDS:
                self.inlines[m.group(1)].append((path, int(lno) - 1))
            elif "(" not in text and "=" not in text and ";" not in text:
                pending[path].append(int(lno) - 1)
        self.statics_cache = {}
        # `static inline` alone on its line: the name is on the next one
        for path, lines in pending.items():
            raw, _ = src.lines(path)
            for l0 in lines:
                if l0 + 1 < len(raw):
                    m = re.match(r"^[\w\s\*]*?\b(\w+)\s*\(", raw[l0 + 1])
                    if m:
                        self.inlines[m.group(1)].append((path, l0))

    def aliases_for(self, typ, files):
        """Member-chain #defines of the files defining typ, of the chain's files, and of every
        header (an inner struct's aliases: sk_v6_daddr for inet_sock's sk.__sk_common...)."""
        seen = set()
        out = []
        hdrs = {f for f in self.aliases if f.endswith(".h")}
        for f in sorted(self.type_files.get(typ, set()) | set(files) | hdrs):
            for name, comps in self.aliases.get(f, ()):
                key = (name, tuple(comps))
                if key not in seen:
                    seen.add(key)
                    out.append((name, comps, f))
        return out

    @staticmethod
    def prefer(defs, use_file):
        """The definitions a use in use_file can see: those in the same file and those in
        include/ and arch/x86/ (an arch override of a generic macro, __SYSCALL_DEFINEx, is
        defined in another header than its caller); else those sharing the longest directory prefix with use_file,
        when that prefix is the use's own directory or at least two components deep
        (security/apparmor/include/label.h for security/apparmor/label.c)."""
        same = [d for d in defs if d[0] == use_file]
        hdr = [d for d in defs if d[0] != use_file and (d[0].startswith("include/") or d[0].startswith("arch/x86/"))]
        if same or hdr or not use_file:
            return same + hdr
        here = use_file.split("/")[:-1]

        def common(p):
            there = p.split("/")[:-1]
            k = 0
            while k < min(len(here), len(there)) and here[k] == there[k]:
                k += 1
            return k

        best = max((common(d[0]) for d in defs), default=0)
        if best >= 2 or (best >= 1 and best == len(here)):
            return [d for d in defs if common(d[0]) == best]
        return []

    def body(self, kind, path, line0):
        """(first line number, blanked text) of a macro or inline function definition."""
        key = (kind, path, line0)
        if key in self.body_cache:
            return self.body_cache[key]
        _, blanked = self.src.lines(path)
        res = None
        if kind == "macro":
            hi = line0
            while hi + 1 < len(blanked) and blanked[hi].rstrip().endswith("\\") and hi - line0 < BODY_LINES:
                hi += 1
            if hi - line0 < BODY_LINES:
                text = "\n".join(blanked[line0: hi + 1])
                # drop `#define NAME(params)`, keeping the line structure
                m = re.match(r"\s*#\s*define\s+\w+\([^)]*\)", text)
                if m:
                    text = " " * m.end() + text[m.end():]
                res = (line0 + 1, text)
        else:
            depth = 0
            opened = False
            hi = line0
            while hi < len(blanked) and hi - line0 <= BODY_LINES:
                t = blanked[hi]
                if not opened and ";" in t and "{" not in t:
                    break  # a prototype
                depth += t.count("{") - t.count("}")
                if "{" in t:
                    opened = True
                if opened and depth <= 0:
                    res = (line0 + 1, "\n".join(blanked[line0: hi + 1]))
                    break
                hi += 1
        self.body_cache[key] = res
        return res

    def macro_defs(self, name, use_file):
        return self.prefer(self.macros.get(name, []), use_file)

    def file_statics(self, path):
        """name -> [(path, line0)] for the static functions defined in one file."""
        if path not in self.statics_cache:
            found = defaultdict(list)
            _, blanked = self.src.lines(path)
            for k, t in enumerate(blanked):
                if not t.startswith("static"):
                    continue
                m = DEF_STATIC.match(re.sub(r"__attribute__\s*\(\(.*?\)\)", " ", t))
                if not m and "(" not in t and ";" not in t and "=" not in t and k + 1 < len(blanked):
                    m = re.match(r"^[\w\s\*]*?\b(\w+)\s*\(", blanked[k + 1])
                if m and m.group(1) not in KEYWORDS:
                    found[m.group(1)].append((path, k))
            self.statics_cache[path] = found
        return self.statics_cache[path]

    def inline_defs(self, name, use_file):
        defs = self.prefer([d for d in self.inlines.get(name, []) if d[0] != use_file], use_file)
        if use_file and use_file.endswith(".c"):
            defs = self.file_statics(use_file).get(name, []) + defs
        elif use_file:
            defs = [d for d in self.inlines.get(name, []) if d[0] == use_file] + defs
        return defs

    def member_param(self, name, argi, use_file, depth=0, _memo=None):
        """Does macro NAME use its argi-th parameter as a member designator?"""
        if _memo is None:
            _memo = {}
        key = (name, argi)
        if key in _memo:
            return _memo[key]
        _memo[key] = False
        if name in ("offsetof", "__builtin_offsetof", "offsetofend", "sizeof_field", "typeof_member"):
            _memo[key] = argi == 1
            return _memo[key]
        if depth >= 3:
            return False
        for path, line0, params in self.macro_defs(name, use_file):
            if argi >= len(params) or params[argi].endswith("..."):
                continue
            p = params[argi]
            b = self.body("macro", path, line0)
            if not b:
                continue
            text = b[1]
            if re.search(r"(?:->|\.)\s*" + re.escape(p) + r"\b", text):
                _memo[key] = True
                return True
            for inner, j in whole_args(text, p):
                if self.macros.get(inner) and self.member_param(inner, j, path, depth + 1, _memo):
                    _memo[key] = True
                    return True
                if inner in ("offsetof", "__builtin_offsetof") and j == 1:
                    _memo[key] = True
                    return True
        return False


def split_args(text, open_pos):
    """Arguments (start, end) of the call whose '(' is at open_pos, up to the matching ')'."""
    depth = 0
    args = []
    start = open_pos + 1
    for i in range(open_pos, len(text)):
        c = text[i]
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
            if depth == 0:
                args.append((start, i))
                return args
        elif c == "," and depth == 1:
            args.append((start, i))
            start = i + 1
    return args


def whole_args(text, tok):
    """[(callee, argument index)] where tok stands alone as a whole argument of callee(...)."""
    out = []
    for m in re.finditer(r"\b" + re.escape(tok) + r"\b", text):
        enc = enclosing_call(text, m.start())
        if enc and text[enc[2][0]: enc[2][1]].strip() == tok:
            out.append((enc[0], enc[1]))
    return out


def enclosing_call(text, pos):
    """(callee, argument index, (arg start, arg end)) of the innermost call around pos."""
    depth = 0
    i = pos - 1
    while i >= 0:
        c = text[i]
        if c in ")]}":
            depth += 1
        elif c in "([{":
            if depth == 0:
                if c != "(":
                    return None
                m = re.search(r"(\w+)\s*$", text[:i])
                if not m:
                    return None
                for k, (a, b) in enumerate(split_args(text, i)):
                    if a <= pos <= b:
                        return (m.group(1), k, (a, b))
                return None
            depth -= 1
        i -= 1
    return None


# ------------------------------------------------------------------ addr2line / objdump


def addr2line_chains(vmlinux, addrs, tool="addr2line"):
    """addr -> [(function, file, line)] innermost first, from one batched addr2line -a -i -f."""
    inp = "".join(f"{a:x}\n" for a in addrs)
    out = subprocess.run(
        [tool, "-a", "-i", "-f", "-e", vmlinux], input=inp, capture_output=True, text=True, check=True
    ).stdout.split("\n")
    chains = {}
    cur = None
    i = 0
    while i < len(out):
        line = out[i]
        if re.fullmatch(r"0x[0-9a-f]+", line):
            cur = int(line, 16)
            chains[cur] = []
            i += 1
            continue
        if cur is None or i + 1 >= len(out) or line == "":
            i += 1
            continue
        loc = re.sub(r"\s*\(discriminator \d+\)$", "", out[i + 1])
        m = re.match(r"^(.*):(\d+|\?)$", loc)
        if m and m.group(2) != "?" and m.group(1) != "??":
            chains[cur].append((line, m.group(1), int(m.group(2))))
        else:
            chains[cur].append((line, None, 0))
        i += 2
    return chains


def objdump_around(vmlinux, addr, before=6):
    out = subprocess.run(
        ["objdump", "-d", "--no-show-raw-insn", f"--start-address=0x{addr - 64:x}",
         f"--stop-address=0x{addr + 16:x}", vmlinux],
        capture_output=True, text=True,
    ).stdout
    lines = [l for l in out.split("\n") if re.match(r"^\s*ffffffff[0-9a-f]+:", l)]
    idx = next((k for k, l in enumerate(lines) if l.strip().startswith(f"{addr:x}:")), None)
    if idx is None:
        return lines[-(before + 2):]
    return lines[max(0, idx - before): idx + 2]


# ------------------------------------------------------------------ matching


def alternatives(member):
    alts = []
    for alt in re.split(r" \| | \+ ", member):
        comps = [re.sub(r"\[[^\]]*\]", "", c) for c in alt.split(".")]
        comps = [c for c in comps if c]
        if comps:
            alts.append(comps)
    return alts


def names_for(alts, aliases):
    """name -> [(alternative index, first component, last component, how)]."""
    out = defaultdict(list)
    for ai, alt in enumerate(alts):
        for k, c in enumerate(alt):
            out[c].append((ai, k, k, "component"))
        for name, comps, f in aliases:
            n = len(comps)
            for k in range(len(alt) - n + 1):
                if alt[k: k + n] == comps:
                    out[name].append((ai, k, k + n - 1, f"alias {name} = {'.'.join(comps)} ({f})"))
    return out


def classify(text, pos, index, use_file):
    before = text[:pos]
    if re.search(r"(?:->|\.)\s*$", before) and not re.search(r"\d\.\s*$", before):
        return "member"
    enc = enclosing_call(text, pos)
    if enc:
        callee, k, (a, b) = enc
        if text[a:b].strip() == text[pos: pos + len(re.match(r"\w+", text[pos:]).group(0))] and (
            index.macros.get(callee) or callee in ("offsetof", "__builtin_offsetof")
        ):
            if index.member_param(callee, k, use_file):
                return "macro-arg"
    return "bare"


def match_text(text, names, index, use_file, line0):
    """[(name, line number, ctx)] for every occurrence of a name in text (line0: first line's number)."""
    res = []
    if not names:
        return res
    rx = re.compile(r"\b(" + "|".join(re.escape(n) for n in sorted(names, key=len, reverse=True)) + r")\b")
    for m in rx.finditer(text):
        ctx = classify(text, m.start(), index, use_file)
        res.append((m.group(1), line0 + text.count("\n", 0, m.start()), ctx))
    return res


def expandable(text, index, use_file, frames_fns):
    """[(name, kind, path, line0)] for macros and called inline functions named in text."""
    out = []
    seen = set()
    for m in IDENT.finditer(text):
        name = m.group(0)
        if name in KEYWORDS or name in frames_fns or name in seen:
            continue
        seen.add(name)
        for path, line0, _ in index.macro_defs(name, use_file):
            out.append((name, "macro", path, line0))
        if re.match(r"\s*\(", text[m.end():]):
            for path, line0 in index.inline_defs(name, use_file):
                out.append((name, "inline", path, line0))
    return out


def judge(row, chain, src, index):
    v = {"row": row, "chain": chain, "seen": [], "unread": [], "matches": [], "bare": [], "near": []}
    if not chain or all(f is None for _, f, _ in chain):
        v["verdict"], v["reason"] = "undecidable", "no line information (addr2line ??)"
        return v
    frames = []  # (frame index, function, file, lo, hi)
    files = []
    for fi, (fn, dpath, ln) in enumerate(chain):
        if dpath is None:
            v["unread"].append((fi, fn, "??", 0, "no line"))
            continue
        rel = src.resolve(dpath)
        if rel is None:
            v["unread"].append((fi, fn, dpath, ln, "file not in source tree"))
            continue
        raw, blanked = src.lines(rel)
        if ln < 1 or ln > len(raw):
            v["unread"].append((fi, fn, rel, ln, "line past end of file"))
            continue
        files.append(rel)
        lo, hi = statement_range(blanked, ln - 1)
        frames.append((fi, fn, rel, lo, hi, ln))
        for k in range(lo, hi + 1):
            v["seen"].append((fi, rel, k + 1, raw[k], fn))
    alts = alternatives(row["member"])
    names = names_for(alts, index.aliases_for(row["type"], files))
    frames_fns = {re.sub(r"\..*", "", fn) for fn, _, _ in chain}

    def record(hits, where, path):
        for name, ln, ctx in hits:
            rec = {"name": name, "file": where, "line": ln, "ctx": ctx, "via": path, "covers": names[name]}
            (v["matches"] if ctx != "bare" else v["bare"]).append(rec)

    # 4: the chain's own statements
    code = False
    queue = []
    for fi, fn, rel, lo, hi, ln in frames:
        _, blanked = src.lines(rel)
        text = "\n".join(blanked[lo: hi + 1])
        if any(IDENT.search(l) and not l.lstrip().startswith("#") for l in blanked[lo: hi + 1]):
            code = True
        record(match_text(text, names, index, rel, lo + 1), rel, [])
        queue.extend((e, [], rel) for e in expandable(text, index, rel, frames_fns))
    direct = bool(v["matches"])
    # 5: helpers named there
    if not direct:
        done = set()
        depth = 0
        while queue and depth < EXPAND_DEPTH and len(done) < MAX_EXPANSIONS and not v["matches"]:
            nxt = []
            for (name, kind, path, line0), via, use in queue:
                key = (kind, path, line0)
                if key in done:
                    continue
                done.add(key)
                b = index.body(kind, path, line0)
                if not b:
                    continue
                first, text = b
                step = via + [f"{name} ({path}:{first})"]
                hits = [h for h in match_text(text, names, index, path, first) if h[2] != "bare"]
                record(hits, path, step)
                nxt.extend((e, step, path) for e in expandable(text, index, path, frames_fns))
            queue = nxt
            depth += 1
    if v["matches"]:
        v["verdict"] = "agree"
        v["how"] = "direct" if direct else "helper"
        v["leaf_only"] = all(
            all(k0 == k1 == len(alts[ai]) - 1 and len(alts[ai]) > 1 for ai, k0, k1, _ in m["covers"])
            for m in v["matches"]
        )
        return v
    # near: member-position matches within NEAR lines of a frame's line (information only)
    for fi, fn, rel, lo, hi, ln in frames:
        _, blanked = src.lines(rel)
        a, b = max(0, ln - 1 - NEAR), min(len(blanked), ln + NEAR)
        text = "\n".join(blanked[a:b])
        for name, l2, ctx in match_text(text, names, index, rel, a + 1):
            if ctx != "bare" and not (lo + 1 <= l2 <= hi + 1):
                v["near"].append((name, rel, l2))
    if not frames:
        v["verdict"] = "undecidable"
        v["reason"] = "no frame's source read: " + "; ".join(f"{p}:{l} ({why})" for _, _, p, l, why in v["unread"])
    elif v["unread"]:
        v["verdict"] = "undecidable"
        v["reason"] = "no match in the frames read; unread: " + "; ".join(
            f"{p}:{l} ({why})" for _, _, p, l, why in v["unread"]
        )
    elif not code:
        v["verdict"], v["reason"] = "undecidable", "the lines hold no code (blank, comment or preprocessor)"
    else:
        v["verdict"] = "disagree"
        v["hints"] = miss_hints(v)
    return v


def miss_hints(v):
    """Likely reasons for a miss, read off the lines (information only, never a verdict)."""
    text = "\n".join(raw for _, _, _, raw, _ in v["seen"])
    hints = []
    if re.search(r"\b(?:memset|memcpy|memmove|memzero_explicit|__builtin_mem\w+)\s*\(", text):
        hints.append("the statement copies or clears whole memory (memset/memcpy)")
    if re.search(r"(?:^|[;{]|\n)\s*\*\s*\w+\s*=[^=]", text) or re.search(r"=\s*\*\s*\w+\s*;", text):
        hints.append("whole-object assignment through a pointer (*a = ... or ... = *b)")
    if v["near"]:
        hints.append(f"named within {NEAR} lines (line table mixes neighbouring statements)")
    if v["bare"]:
        hints.append("only bare tokens of a name (a variable, not a member)")
    return hints


# ------------------------------------------------------------------ main


def fmt_row(r):
    return f"{r['addr']:x} {r['function']} {r['type']}+{r['offset']} ({r['size']}B {r['kind']}) {r['member']}"


def describe_match(v):
    ms = sorted(v["matches"], key=lambda m: (m["ctx"] != "member", len(m["via"])))
    m = ms[0]
    via = (" via " + " -> ".join(m["via"])) if m["via"] else ""
    return f"{m['ctx']}: {m['name']} at {m['file']}:{m['line']}{via}"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("vmlinux")
    ap.add_argument("--tsv")
    ap.add_argument("--typed-map")
    ap.add_argument("--source", required=True)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--samples", type=int, default=300)
    ap.add_argument("--objdump", action="store_true")
    ap.add_argument("--addr2line", default="addr2line")
    ap.add_argument("--json")
    ap.add_argument("--quiet", action="store_true", help="no per-sample lines")
    a = ap.parse_args()

    if not a.tsv and not a.typed_map:
        ap.error("give --tsv FILE or --typed-map BIN")
    tsv = a.tsv
    if a.typed_map:
        if not tsv:
            fd, tsv = tempfile.mkstemp(suffix=".tsv")
            os.close(fd)
        with open(tsv, "w") as f:
            subprocess.run([a.typed_map, a.vmlinux, "tsv"], stdout=f, check=True)
    rows = load_tsv(tsv)
    if not rows:
        sys.exit(f"check-typed: no rows in {tsv}")
    padding = [r for r in rows if r["member"] == "(padding)"]
    pool = [r for r in rows if r["member"] != "(padding)"]
    n = min(a.samples, len(pool))
    sample = sorted(random.Random(a.seed).sample(pool, n), key=lambda r: r["addr"])

    root = find_source_root(a.source)
    src = Source(root)
    index = Index(root, src)
    chains = addr2line_chains(a.vmlinux, [r["addr"] for r in sample], a.addr2line)
    verdicts = [judge(r, chains.get(r["addr"], []), src, index) for r in sample]

    def seen_text(v, indent="      "):
        out = []
        for fi, f, ln, raw, fn in v["seen"]:
            out.append(f"{indent}[{fi}] {f}:{ln} ({fn}): {raw.strip()}")
        for fi, fn, p, ln, why in v["unread"]:
            out.append(f"{indent}[{fi}] {p}:{ln} ({fn}): <{why}>")
        if v["bare"]:
            out.append(indent + "bare tokens (not counted): " + ", ".join(
                sorted({f"{m['name']} at {m['file']}:{m['line']}" for m in v["bare"]})))
        if v["near"]:
            out.append(indent + f"near (within {NEAR} lines, not counted): " + ", ".join(
                sorted({f"{n} at {f}:{l}" for n, f, l in v["near"]})))
        for h in v.get("hints", []):
            out.append(indent + "hint: " + h)
        return out

    if not a.quiet:
        for v in verdicts:
            r = v["row"]
            if v["verdict"] == "agree":
                extra = " (leaf only)" if v["leaf_only"] else ""
                print(f"agree       {fmt_row(r)}  [{describe_match(v)}{extra}]")
            elif v["verdict"] == "undecidable":
                print(f"undecidable {fmt_row(r)}  [{v['reason']}]")
            else:
                print(f"disagree    {fmt_row(r)}")
                for l in seen_text(v):
                    print(l)

    agree = [v for v in verdicts if v["verdict"] == "agree"]
    dis = [v for v in verdicts if v["verdict"] == "disagree"]
    und = [v for v in verdicts if v["verdict"] == "undecidable"]
    dec = len(agree) + len(dis)
    print()
    print(f"== summary: seed {a.seed}, {n} samples from {len(pool)} typed accesses with a member")
    print(f"   (padding): {len(padding)} of {len(rows)} typed accesses "
          f"({100.0 * len(padding) / len(rows):.2f}%), not sampled")
    for r in padding[:: max(1, len(padding) // 5)][:5]:
        print(f"      e.g. {fmt_row(r)}")
    print(f"   decidable: {dec}   agree: {len(agree)}   disagree: {len(dis)}   undecidable: {len(und)}")
    if dec:
        print(f"   agreement among decidable: {len(agree)}/{dec} = {100.0 * len(agree) / dec:.1f}%")
    ctxs = Counter(
        (v["how"], "member" if any(m["ctx"] == "member" for m in v["matches"]) else "macro-arg") for v in agree
    )
    for (how, ctx), c in sorted(ctxs.items()):
        where = "on the chain's lines" if how == "direct" else "only in a helper's text"
        print(f"   agree {where}, {ctx}: {c}")
    print(f"   agreements matching only the last component of a multi-component path: "
          f"{sum(1 for v in agree if v['leaf_only'])}")
    for why, c in Counter(re.sub(r":.*", "", v["reason"]) for v in und).most_common():
        print(f"   undecidable, {why}: {c}")
    if dis:
        print()
        print("== misses")
        for v in dis:
            r = v["row"]
            print(f"   {fmt_row(r)}")
            for l in seen_text(v, "      "):
                print(l)
            if a.objdump:
                for l in objdump_around(a.vmlinux, r["addr"]):
                    mark = ">>" if l.strip().startswith(f"{r['addr']:x}:") else "  "
                    print(f"      {mark} {l.strip()}")
    if a.json:
        with open(a.json, "w") as f:
            json.dump(
                [
                    {
                        **{k: (f"{x:x}" if k == "addr" else x) for k, x in v["row"].items()},
                        "verdict": v["verdict"],
                        "reason": v.get("reason"),
                        "how": v.get("how"),
                        "chain": v["chain"],
                        "matches": v["matches"],
                        "hints": v.get("hints", []),
                        "seen": [(f, ln, raw) for _, f, ln, raw, _ in v["seen"]],
                    }
                    for v in verdicts
                ],
                f,
                indent=1,
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
