#!/usr/bin/env python3
"""Compare layout-diff's struct layouts against pahole's on a real vmlinux.

Usage:
  bench/check-pahole.py VMLINUX LAYOUT_DIFF_JSON [--struct NAME ...] [--json-report FILE]
  bench/check-pahole.py VMLINUX - [...]        # runs target/release/layout-diff itself
  bench/check-pahole.py VMLINUX --selftest     # parser self-check + checker-vs-itself test
  bench/check-pahole.py VMLINUX --dump-pahole-json FILE   # pahole's layouts in layout-diff's schema

LAYOUT_DIFF_JSON is the output of
  layout-diff show VMLINUX --struct '*' --format json

pahole's full text output (`pahole -F dwarf VMLINUX`, ~14 s) and its size
table (`pahole -F dwarf -s VMLINUX`, ~10 s, the only place pahole prints the
size of a top-level union) are cached in bench/cache/ keyed by the vmlinux
path, size, mtime and the pahole version.

Exit status: 0 when every pahole struct has an identical layout-diff
counterpart and nothing is missing on either side; 1 otherwise; 2 on usage or
tool errors.

Python 3.11, standard library only.
"""

from __future__ import annotations

import argparse
import copy
import difflib
import fnmatch
import hashlib
import json
import os
import re
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
CACHE_DIR = os.environ.get("LAYOUT_DIFF_CACHE", os.path.join(HERE, "cache"))
PAHOLE = os.environ.get("PAHOLE", "pahole")
LINE_SIZE = 64

# --------------------------------------------------------------------------
# Running pahole, with a cache
# --------------------------------------------------------------------------


def pahole_version() -> str:
    try:
        out = subprocess.run([PAHOLE, "--version"], capture_output=True, text=True, check=True)
    except (OSError, subprocess.CalledProcessError) as e:
        sys.exit(f"check-pahole: cannot run {PAHOLE} --version: {e}")
    return out.stdout.strip()


def cache_path(vmlinux: str, what: str) -> str:
    real = os.path.realpath(vmlinux)
    st = os.stat(real)
    key = f"{real}|{st.st_size}|{st.st_mtime_ns}|{pahole_version()}|{what}"
    digest = hashlib.sha256(key.encode()).hexdigest()[:16]
    return os.path.join(CACHE_DIR, f"pahole-{what}-{digest}.txt")


def run_pahole_cached(vmlinux: str, what: str, args: list[str], quiet: bool = False) -> str:
    path = cache_path(vmlinux, what)
    if os.path.exists(path):
        with open(path, encoding="utf-8", errors="replace") as f:
            return f.read()
    cmd = [PAHOLE, "-F", "dwarf", *args, vmlinux]
    if not quiet:
        print(f"check-pahole: running {' '.join(cmd)} (cached afterwards in {path})", file=sys.stderr)
    proc = subprocess.run(cmd, capture_output=True)
    if proc.returncode != 0:
        sys.exit(f"check-pahole: {' '.join(cmd)} failed ({proc.returncode}): "
                 f"{proc.stderr.decode(errors='replace')[:2000]}")
    text = proc.stdout.decode("utf-8", errors="replace")
    os.makedirs(CACHE_DIR, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=CACHE_DIR, prefix=".pahole-", suffix=".tmp")
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(text)
    os.replace(tmp, path)
    return text


# --------------------------------------------------------------------------
# Parsing pahole's text output
# --------------------------------------------------------------------------

RE_TOP_OPEN = re.compile(r"^(struct|union) (\S+) \{$")
RE_TOP_CLOSE = re.compile(r"^\}((?: __attribute__\(\(__\w+__(?:\(\d+\))?\)\))*);$")
# offset comment at the end of a member line: /* off size */ or /* off:bit size */
RE_OFF_CMT = re.compile(r"/\*\s*(\d+)(?::\s*(\d+))?\s+(\d+)\s*\*/\s*$")
RE_ATTR = re.compile(r"\s*__attribute__\(\((__\w+__)(?:\((\d+)\))?\)\)")
RE_HOLE = re.compile(r"^/\* XXX (\d+) bytes? hole, try to pack \*/$")
RE_BIT_HOLE = re.compile(r"^/\* XXX (\d+) bits? hole, try to pack \*/$")
RE_LAST_PAD = re.compile(r"^/\* XXX last struct has (\d+) bytes? of padding \*/$")
RE_CACHELINE = re.compile(r"^/\* --- cacheline (\d+) boundary \((\d+) bytes\)(?: was (\d+) bytes? ago)? --- \*/$")
RE_SIZE = re.compile(r"^/\* size: (\d+), cachelines: (\d+), members: (\d+)(?:, static members: (\d+))? \*/$")
RE_SUM_MEMBERS = re.compile(r"^/\* sum members: (\d+)(?:, holes: (\d+), sum holes: (\d+))? \*/$")
RE_SUM_BITS = re.compile(
    r"^/\* sum bitfield members: (\d+) bits(?:, bit holes: (\d+), sum bit holes: (\d+) bits| \((\d+) bytes\))? \*/$")
RE_PADDING = re.compile(r"^/\* padding: (\d+) \*/$")
RE_PADDINGS = re.compile(r"^/\* paddings: (\d+), sum paddings: (\d+) \*/$")
RE_BIT_PADDING = re.compile(r"^/\* bit_padding: (\d+) bits \*/$")
RE_FORCED = re.compile(r"^/\* forced alignments: (\d+)(?:, forced holes: (\d+), sum forced holes: (\d+))? \*/$")
RE_LAST_CL = re.compile(r"^/\* last cacheline: (\d+) bytes \*/$")
RE_BRAIN = re.compile(r"^/\* BRAIN FART ALERT! (.*) \*/$")
RE_SYNTH_BITFIELD = re.compile(r"^\S.*\s:(\d+);$")  # "unsigned int :0;", "int :32;", "unsigned int :5;"
RE_NESTED_OPEN = re.compile(r"^(?:(const|volatile) )?(struct|union|enum) \{$")
RE_NESTED_CLOSE = re.compile(
    r"^\}(?P<attrs>(?:\s*__attribute__\(\(__\w+__(?:\(\d+\))?\)\))*)\s*(?P<ptr>\*\s*)?"
    r"(?P<name>[A-Za-z_]\w*)?(?P<dims>(?:\[\d*\])*)(?::(?P<bits>\d+))?"
    r"(?P<mattrs>(?:\s*__attribute__\(\(__\w+__(?:\(\d+\))?\)\))*)\s*;$")
RE_FNPTR_NAME = re.compile(r"\(\s*\*+\s*(?:(?:const|volatile|restrict)\s+)*([A-Za-z_]\w*)\s*((?:\[\d*\])*)\s*\)")
RE_PLAIN_NAME = re.compile(r"^(.*?)([A-Za-z_]\w*)\s*((?:\[\d*\])*)$")
RE_IDENT = re.compile(r"^[A-Za-z_]\w*$")
SKIP_COMMENTS = {
    "/* Bitfield combined with previous fields */",
    "/* Bitfield combined with next fields */",
    "/* Force alignment to the next boundary: */",
    "/* Force padding: */",
}


class ParseError(Exception):
    pass


@dataclass
class Block:
    """One struct/union body being parsed: the top-level one or an inline nested one."""
    kind: str                      # struct | union | enum
    base: int | None = None        # absolute offset of the block (known at close for nested)
    members: list = field(default_factory=list)
    holes_raw: list = field(default_factory=list)      # (size, after_member_index)
    bit_holes_raw: list = field(default_factory=list)  # (bits, after_member_index)
    last_struct_paddings: list = field(default_factory=list)  # (bytes, member_index)
    cacheline_markers: list = field(default_factory=list)
    synthetic: list = field(default_factory=list)      # "unsigned int :0;" lines
    qualifier: str | None = None
    summary: dict = field(default_factory=dict)  # only a const-qualified nested struct gets one
    line: int = 0


def split_decl(decl: str) -> dict:
    """Split a member declaration (no trailing comment, no ';') into name/type/bits/align."""
    out = {"aligned": None, "packed": False, "bit_size": None, "array": ""}
    # attributes (pahole prints them after the name / bitfield width)
    while True:
        m = None
        for m in RE_ATTR.finditer(decl):
            pass
        if m is None or decl[m.end():].strip():
            break
        if m.group(1) == "__aligned__":
            out["aligned"] = int(m.group(2)) if m.group(2) else 0
        elif m.group(1) == "__packed__":
            out["packed"] = True
        decl = decl[:m.start()].rstrip()
    mb = re.match(r"^(.*[\w\])])\s*:\s*(\d+)$", decl)
    if mb and not decl.endswith(")"):
        decl, out["bit_size"] = mb.group(1).rstrip(), int(mb.group(2))
    if decl.endswith(")"):
        mf = RE_FNPTR_NAME.search(decl)
        if not mf:
            raise ParseError(f"cannot find a name in function-pointer declaration {decl!r}")
        out["name"] = mf.group(1)
        out["array"] = mf.group(2)
        out["type"] = re.sub(r"\s+", " ", decl[:mf.start(1)] + decl[mf.end(1):]).strip()
        return out
    mp = RE_PLAIN_NAME.match(decl)
    if not mp or not mp.group(1).strip():
        raise ParseError(f"cannot split declaration {decl!r}")
    out["name"] = mp.group(2)
    out["array"] = mp.group(3)
    out["type"] = re.sub(r"\s+", " ", mp.group(1)).strip() + (mp.group(3) or "")
    return out


def make_member(name, mtype, off, bit, size, bit_size, aligned=None) -> dict:
    return {
        "name": name,
        "type": mtype,
        "offset": off,
        "size": size,
        "bit_offset": bit if bit_size is not None else None,
        "bit_size": bit_size,
        "aligned": aligned,
    }


def member_end_bit(m: dict) -> int:
    if m["bit_size"] is not None:
        return m["offset"] * 8 + m["bit_offset"] + m["bit_size"]
    return (m["offset"] + m["size"]) * 8


def finalize_block(b: Block, size: int) -> dict:
    """Turn the raw hole annotations of a block into absolute hole records."""
    base = b.base or 0
    holes = []
    for hsize, after in b.holes_raw:
        nxt = b.members[after + 1] if after + 1 < len(b.members) else None
        if nxt is not None:
            start = nxt["offset"] - hsize
        elif after >= 0:
            start = member_end_bit(b.members[after]) // 8
        else:
            start = base
        holes.append({"offset": start, "size": hsize, "after": b.members[after]["name"] if after >= 0 else None})
    bit_holes = []
    for bits, after in b.bit_holes_raw:
        start_bit = member_end_bit(b.members[after]) if after >= 0 else base * 8
        bit_holes.append({"offset": start_bit // 8, "bit_offset": start_bit % 8, "bits": bits,
                          "after": b.members[after]["name"] if after >= 0 else None})
    return {
        "holes": holes,
        "bit_holes": bit_holes,
        "last_struct_paddings": [{"member": b.members[i]["name"] if i >= 0 else None, "bytes": n}
                                 for n, i in b.last_struct_paddings],
        "cacheline_markers": b.cacheline_markers,
        "synthetic_bitfields": b.synthetic,
    }


def parse_pahole(text: str) -> tuple[list[dict], list[dict]]:
    """Parse `pahole -F dwarf` output. Returns (structs, errors).

    Each struct: name, kind, size (None for unions until filled from -s),
    cachelines, members, holes, bit_holes, padding, bit_padding, summary, ...
    A struct whose body could not be parsed gets "parse_error" set and is
    still returned (so counts stay honest).
    """
    structs: list[dict] = []
    errors: list[dict] = []
    lines = text.split("\n")
    i = 0
    n = len(lines)
    while i < n:
        line = lines[i]
        i += 1
        if not line.strip():
            continue
        mt = RE_TOP_OPEN.match(line)
        if not mt:
            errors.append({"line": i, "text": line, "error": "unexpected line outside a struct"})
            continue
        st = {"name": mt.group(2), "kind": mt.group(1), "line": i, "index": len(structs),
              "size": None, "cachelines": None, "members": [], "holes": [], "bit_holes": [],
              "padding": 0, "bit_padding": 0, "summary": {}, "attributes": [], "parse_error": None}
        structs.append(st)
        stack = [Block(kind=mt.group(1), base=0, line=i)]
        try:
            while True:
                if i >= n:
                    raise ParseError("end of output inside a struct")
                raw = lines[i]
                i += 1
                s = raw.strip()
                if not s:
                    continue
                top = stack[-1]
                if len(stack) == 1:
                    mc = RE_TOP_CLOSE.match(raw)
                    if mc:
                        st["attributes"] = [a.group(1) + (f"({a.group(2)})" if a.group(2) else "")
                                            for a in RE_ATTR.finditer(mc.group(1))]
                        break
                if top.kind == "enum":
                    if s.startswith("}"):
                        close_nested(stack, s)
                    elif not re.match(r"^[A-Za-z_]\w*\s*=\s*-?\d+,$", s):
                        raise ParseError(f"unexpected line in enum body: {s!r}")
                    continue
                if s.startswith("/*"):
                    handle_comment(st, stack, s)
                    continue
                mo = RE_NESTED_OPEN.match(s)
                if mo:
                    stack.append(Block(kind=mo.group(2), qualifier=mo.group(1), line=i))
                    continue
                if s.startswith("}"):
                    if len(stack) == 1:
                        raise ParseError(f"unexpected closing line {s!r}")
                    close_nested(stack, s)
                    continue
                cm = RE_OFF_CMT.search(s)
                if cm is None:
                    if RE_SYNTH_BITFIELD.match(s):
                        top.synthetic.append({"text": re.sub(r"\s+", " ", s),
                                              "after": top.members[-1]["name"] if top.members else None})
                        continue
                    raise ParseError(f"member line without offset comment: {s!r}")
                decl = s[:cm.start()].rstrip()
                if not decl.endswith(";"):
                    raise ParseError(f"member declaration does not end with ';': {s!r}")
                d = split_decl(decl[:-1].rstrip())
                off, bit, size = int(cm.group(1)), cm.group(2), int(cm.group(3))
                if (bit is None) != (d["bit_size"] is None):
                    raise ParseError(f"bitfield width and ':bit' offset disagree: {s!r}")
                top.members.append(make_member(d["name"], d["type"], off, int(bit) if bit is not None else None,
                                               size, d["bit_size"], d["aligned"]))
            blk = stack[0]
            st["members"] = blk.members
            st["summary"] = blk.summary
            fin = finalize_block(blk, st["size"] or 0)
            st.update(fin)
            if len(stack) != 1:
                raise ParseError("unbalanced nested blocks")
        except ParseError as e:
            st["parse_error"] = f"line {i}: {e}"
            errors.append({"line": i, "text": lines[i - 1] if i - 1 < n else "", "error": str(e),
                           "struct": st["name"]})
            # resynchronise on the next top-level closing line
            if not RE_TOP_CLOSE.match(lines[i - 1]):
                while i < n:
                    i += 1
                    if RE_TOP_CLOSE.match(lines[i - 1]):
                        break
        s_ = st["summary"]
        if "size" in s_:
            st["size"] = s_["size"]
            st["cachelines"] = s_["cachelines"]
        st["padding"] = s_.get("padding", 0)
        st["bit_padding"] = s_.get("bit_padding", 0)
    return structs, errors


def handle_comment(st: dict, stack: list[Block], s: str) -> None:
    top = stack[-1]
    idx = len(top.members) - 1
    summ = top.summary
    if (m := RE_HOLE.match(s)):
        top.holes_raw.append((int(m.group(1)), idx))
    elif (m := RE_BIT_HOLE.match(s)):
        top.bit_holes_raw.append((int(m.group(1)), idx))
    elif (m := RE_LAST_PAD.match(s)):
        top.last_struct_paddings.append((int(m.group(1)), idx))
    elif (m := RE_CACHELINE.match(s)):
        top.cacheline_markers.append({"cacheline": int(m.group(1)), "bytes": int(m.group(2)),
                                      "ago": int(m.group(3)) if m.group(3) else 0})
    elif s in SKIP_COMMENTS:
        pass
    elif (m := RE_SIZE.match(s)):
        summ.update(size=int(m.group(1)), cachelines=int(m.group(2)), members=int(m.group(3)))
        if m.group(4):
            summ["static_members"] = int(m.group(4))
    elif (m := RE_SUM_MEMBERS.match(s)):
        summ["sum_members"] = int(m.group(1))
        if m.group(2):
            summ.update(holes=int(m.group(2)), sum_holes=int(m.group(3)))
    elif (m := RE_SUM_BITS.match(s)):
        summ["sum_bitfield_members"] = int(m.group(1))
        if m.group(2):
            summ.update(bit_holes=int(m.group(2)), sum_bit_holes=int(m.group(3)))
    elif (m := RE_PADDING.match(s)):
        summ["padding"] = int(m.group(1))
    elif (m := RE_PADDINGS.match(s)):
        summ.update(paddings=int(m.group(1)), sum_paddings=int(m.group(2)))
    elif (m := RE_BIT_PADDING.match(s)):
        summ["bit_padding"] = int(m.group(1))
    elif (m := RE_FORCED.match(s)):
        summ["forced_alignments"] = int(m.group(1))
        if m.group(2):
            summ.update(forced_holes=int(m.group(2)), sum_forced_holes=int(m.group(3)))
    elif (m := RE_LAST_CL.match(s)):
        summ["last_cacheline"] = int(m.group(1))
    elif (m := RE_BRAIN.match(s)):
        summ["brain_fart"] = m.group(1)
    else:
        raise ParseError(f"unknown comment {s!r}")


def close_nested(stack: list[Block], s: str) -> None:
    blk = stack.pop()
    parent = stack[-1]
    cm = RE_OFF_CMT.search(s)
    if cm is None:
        raise ParseError(f"nested block closing line without offset comment: {s!r}")
    tail = s[:cm.start()].rstrip()
    mc = RE_NESTED_CLOSE.match(tail)
    if not mc:
        raise ParseError(f"cannot parse nested block closing line {s!r}")
    off, bit, size = int(cm.group(1)), cm.group(2), int(cm.group(3))
    bits = int(mc.group("bits")) if mc.group("bits") else None
    if (bit is None) != (bits is None):
        raise ParseError(f"bitfield width and ':bit' offset disagree: {s!r}")
    aligned = None        # member alignment: attribute after the member name
    type_aligned = None   # alignment of the anonymous type: attribute right after '}'
    packed = False
    for a in RE_ATTR.finditer(mc.group("attrs") or ""):
        if a.group(1) == "__aligned__":
            type_aligned = int(a.group(2)) if a.group(2) else 0
        elif a.group(1) == "__packed__":
            packed = True
    for a in RE_ATTR.finditer(mc.group("mattrs") or ""):
        if a.group(1) == "__aligned__":
            aligned = int(a.group(2)) if a.group(2) else 0
    name = mc.group("name")
    pointer = bool(mc.group("ptr"))
    if pointer and not name:
        raise ParseError(f"pointer to anonymous type without a member name: {s!r}")
    tname = ((blk.qualifier + " ") if blk.qualifier else "") + blk.kind + " {...}"
    if pointer:
        tname += " *"
    tname += mc.group("dims") or ""
    mem = make_member(name, tname, off, int(bit) if bit is not None else None, size, bits, aligned)
    if blk.kind in ("struct", "union") and not pointer and not mc.group("dims"):
        blk.base = off
        mem["kind"] = blk.kind
        mem["packed"] = packed
        mem["type_aligned"] = type_aligned
        if blk.summary:
            mem["summary"] = blk.summary
        mem["members"] = blk.members
        fin = finalize_block(blk, size)
        mem["holes"] = fin["holes"]
        mem["bit_holes"] = fin["bit_holes"]
        mem["last_struct_paddings"] = fin["last_struct_paddings"]
        mem["synthetic_bitfields"] = fin["synthetic_bitfields"]
    elif blk.kind in ("struct", "union"):
        # pointer to / array of an anonymous struct: the body describes the pointee /
        # element type (with relative offsets), not bytes of this struct.
        mem["anon_type_members"] = len(blk.members)
    parent.members.append(mem)


# --------------------------------------------------------------------------
# pahole's own hole algorithm (dwarves.c: class__find_holes), re-implemented
# on the parsed members so that the parse can be cross-checked.
# --------------------------------------------------------------------------

def pahole_find_holes(members: list[dict], size: int, base: int) -> dict:
    cur_bitfield_end = size * 8
    cur_bitfield_size = 0
    last_seen_bit = 0
    in_bitfield = False
    holes, bit_holes = [], []  # (after_index, n)
    for idx, m in enumerate(members):
        is_bf = m["bit_size"] is not None
        byte_offset = m["offset"] - base
        bit_start = byte_offset * 8 + (m["bit_offset"] if is_bf else 0)
        bit_end = bit_start + (m["bit_size"] if is_bf else m["size"] * 8)
        member_bit_size = m["size"] * 8  # pahole's pos->bit_size (storage unit for bitfields)
        bh = 0
        byh = 0
        if in_bitfield:
            bitfield_end = min(bit_start, cur_bitfield_end)
            bh = bitfield_end - last_seen_bit
            last_seen_bit = bitfield_end
        if is_bf:
            aligned_start = byte_offset * 8
            if last_seen_bit < aligned_start <= bit_start:
                byh = byte_offset - last_seen_bit // 8
                last_seen_bit = aligned_start
            bh += bit_start - last_seen_bit
        else:
            byh = bit_start // 8 - last_seen_bit // 8
        last_seen_bit = bit_end
        if is_bf:
            in_bitfield = True
            if bit_end > cur_bitfield_end or member_bit_size > cur_bitfield_size:
                cur_bitfield_size = member_bit_size
                cur_bitfield_end = byte_offset * 8 + cur_bitfield_size
                if bit_end > cur_bitfield_end:
                    cur_bitfield_end += cur_bitfield_size
        else:
            in_bitfield = False
            cur_bitfield_size = 0
            cur_bitfield_end = bit_end
        if bh:
            bit_holes.append((idx - 1, bh))
        if byh:
            holes.append((idx - 1, byh))
    if in_bitfield:
        bitfield_end = min(size * 8, cur_bitfield_end)
        bit_padding = bitfield_end - last_seen_bit
        last_seen_bit = bitfield_end
    else:
        bit_padding = 0
    padding = size - last_seen_bit // 8
    return {"holes": holes, "bit_holes": bit_holes, "padding": padding, "bit_padding": bit_padding}


def member_key_cmp(m):
    return (m["name"], m["offset"], m["size"], m["bit_offset"], m["bit_size"])


# --------------------------------------------------------------------------
# Parser self-check
# --------------------------------------------------------------------------

def self_check_struct(st: dict) -> list[str]:
    """Return a list of problems found in one parsed struct (empty == clean)."""
    probs = []
    if st["parse_error"]:
        return [f"parse error: {st['parse_error']}"]
    summ = st["summary"]
    mem = st["members"]
    size = st["size"]
    if size is None:
        return ["size unknown"]
    # names must be identifiers and unique once anonymous members are flattened
    seen = set()

    def walk(ms, path):
        for m in ms:
            if m["name"] is not None:
                if not RE_IDENT.match(m["name"]):
                    probs.append(f"bad member name {m['name']!r} at {path}")
                if m["name"] in seen and path == "":
                    probs.append(f"duplicate member name {m['name']!r}")
                if path == "":
                    seen.add(m["name"])
            elif "members" not in m:
                probs.append(f"anonymous member without nested members at {path}")
            if "members" in m:
                if m["name"] is None:
                    walk(m["members"], path)  # anonymous: its names belong to the parent's namespace
                else:
                    sub = seen.copy()
                    seen.clear()
                    walk(m["members"], path + m["name"] + ".")
                    seen.clear()
                    seen.update(sub)
    walk(mem, "")

    def check_block(kind, ms, bsize, base, holes, bit_holes, where, padding=None, bit_padding=None, lsp=()):
        for m in ms:
            # a bitfield's storage unit may stick out of a packed struct; its bits may not
            end_bit = member_end_bit(m)
            if m["offset"] < base or end_bit > (base + bsize) * 8:
                probs.append(f"{where}member {m['name']} [{m['offset']},+{m['size']}) outside [{base},+{bsize})")
            if m["bit_size"] is not None and m["bit_offset"] + m["bit_size"] > m["size"] * 8:
                probs.append(f"{where}bitfield {m['name']} bits {m['bit_offset']}+{m['bit_size']} exceed unit")
            if "members" in m:
                check_block(m["kind"], m["members"], m["size"], m["offset"], m.get("holes", []),
                            m.get("bit_holes", []), f"{where}{m['name'] or '<anon>'}.",
                            None, None, m.get("last_struct_paddings", []))
        if kind == "union":
            for m in ms:
                if m["offset"] != base:
                    probs.append(f"{where}union member {m['name']} at {m['offset']} != {base}")
            if holes or bit_holes:
                probs.append(f"{where}union with holes")
            return
        calc = pahole_find_holes(ms, bsize, base)
        got_h = [(h["size"]) for h in holes]
        exp_h = [n for _, n in calc["holes"]]
        if got_h != exp_h:
            probs.append(f"{where}holes {got_h} != recomputed {exp_h}")
        got_b = [h["bits"] for h in bit_holes]
        exp_b = [n for _, n in calc["bit_holes"]]
        if got_b != exp_b:
            probs.append(f"{where}bit holes {got_b} != recomputed {exp_b}")
        # hole offset = where it starts: recompute from member ends
        for h, (after, n) in zip(holes, calc["holes"]):
            nxt = ms[after + 1]
            if h["offset"] != nxt["offset"] - n:
                probs.append(f"{where}hole offset {h['offset']} != {nxt['offset'] - n}")
        if padding is not None and calc["padding"] != padding:
            probs.append(f"{where}padding {padding} != recomputed {calc['padding']}")
        if bit_padding is not None and calc["bit_padding"] != bit_padding:
            probs.append(f"{where}bit_padding {bit_padding} != recomputed {calc['bit_padding']}")
        # an inline struct member's own tail padding is what pahole prints after it as
        # "XXX last struct has N bytes of padding"
        inline = [m for m in ms if "members" in m and m["kind"] == "struct"]
        names = {m["name"] for m in inline}
        want = sorted((str(m["name"]), pahole_find_holes(m["members"], m["size"], m["offset"])["padding"])
                      for m in inline)
        want = [w for w in want if w[1] > 0]
        got = sorted((str(p_["member"]), p_["bytes"]) for p_ in lsp if p_["member"] in names)
        if want != got:
            probs.append(f"{where}inline struct paddings {got} != recomputed {want}")
        # offsets never go backwards except for bitfields sharing/overlapping a unit
        prev = None
        for m in ms:
            if prev is not None and m["offset"] < prev["offset"] and m["bit_size"] is None:
                probs.append(f"{where}offset goes backwards at {m['name']}")
            prev = m

    check_block(st["kind"], mem, size, 0, st["holes"], st["bit_holes"], "",
                st["padding"] if st["kind"] == "struct" else None,
                st["bit_padding"] if st["kind"] == "struct" else None, st.get("last_struct_paddings", []))

    if st["kind"] == "union":
        if summ:
            probs.append("union with a summary")
        ends = [m["offset"] + m["size"] for m in mem]
        if ends and max(ends) > size:
            probs.append(f"union member ends at {max(ends)} > size {size}")
        return probs

    if "members" not in summ:
        return probs + ["no summary line"]
    if summ["members"] != len(mem):
        probs.append(f"members {len(mem)} != summary {summ['members']}")
    if summ["cachelines"] != (size + LINE_SIZE - 1) // LINE_SIZE:
        probs.append(f"cachelines {summ['cachelines']} != ceil(size/{LINE_SIZE})")
    holes = st["holes"]
    bholes = st["bit_holes"]
    if len(holes) != summ.get("holes", 0) or sum(h["size"] for h in holes) != summ.get("sum_holes", 0):
        probs.append(f"holes {len(holes)}/{sum(h['size'] for h in holes)} != summary "
                     f"{summ.get('holes', 0)}/{summ.get('sum_holes', 0)}")
    if len(bholes) != summ.get("bit_holes", 0) or sum(h["bits"] for h in bholes) != summ.get("sum_bit_holes", 0):
        probs.append(f"bit holes {len(bholes)}/{sum(h['bits'] for h in bholes)} != summary "
                     f"{summ.get('bit_holes', 0)}/{summ.get('sum_bit_holes', 0)}")
    sum_bytes = sum(m["size"] for m in mem if m["bit_size"] is None)
    sum_bits = sum(m["bit_size"] for m in mem if m["bit_size"] is not None)
    if "sum_members" in summ and summ["sum_members"] != sum_bytes:
        probs.append(f"sum members {sum_bytes} != summary {summ['sum_members']}")
    if "sum_bitfield_members" in summ and summ["sum_bitfield_members"] != sum_bits:
        probs.append(f"sum bitfield members {sum_bits} != summary {summ['sum_bitfield_members']}")
    lp = st["last_struct_paddings"]
    if len(lp) != summ.get("paddings", 0) or sum(p["bytes"] for p in lp) != summ.get("sum_paddings", 0):
        probs.append(f"paddings {len(lp)} != summary {summ.get('paddings', 0)}")
    total = sum_bytes * 8 + sum_bits + sum(h["size"] for h in holes) * 8 + sum(h["bits"] for h in bholes) \
        + st["padding"] * 8 + st["bit_padding"]
    balanced = total == size * 8
    if balanced == ("brain_fart" in summ) and mem:
        probs.append(f"size identity {total} bits vs {size * 8} disagrees with BRAIN FART presence")
    if "last_cacheline" in summ and summ["last_cacheline"] != size % LINE_SIZE:
        probs.append("last cacheline mismatch")
    return probs


# --------------------------------------------------------------------------
# Loading pahole (full output + sizes), with --struct filtering
# --------------------------------------------------------------------------

def load_pahole(vmlinux: str, private: bool = False) -> tuple[list[dict], list[dict], dict]:
    extra = ["--show_private_classes"] if private else []
    tag = "-private" if private else ""
    text = run_pahole_cached(vmlinux, "full" + tag, extra)
    sizes_text = run_pahole_cached(vmlinux, "sizes" + tag, ["-s", *extra])
    structs, errors = parse_pahole(text)
    sizes = [ln.split("\t") for ln in sizes_text.splitlines() if ln.strip()]
    info = {"sizes_rows": len(sizes), "sizes_aligned": False, "size_table_mismatches": []}
    if len(sizes) == len(structs) and all(r[0] == s["name"] for r, s in zip(sizes, structs)):
        info["sizes_aligned"] = True
        for r, s in zip(sizes, structs):
            sz, nh = int(r[1]), int(r[2])
            if s["size"] is None:
                s["size"] = sz
                s["cachelines"] = (sz + LINE_SIZE - 1) // LINE_SIZE
            elif s["size"] != sz:
                info["size_table_mismatches"].append((s["name"], s["size"], sz))
            if s["kind"] == "struct" and s["parse_error"] is None and nh != len(s["holes"]):
                info["size_table_mismatches"].append((s["name"], "holes", len(s["holes"]), nh))
    else:
        # fall back: infer union sizes from their members (may miss alignment padding)
        for s in structs:
            if s["size"] is None:
                s["size"] = max([m["offset"] + m["size"] for m in s["members"]] or [0])
                s["cachelines"] = (s["size"] + LINE_SIZE - 1) // LINE_SIZE
                s["size_inferred"] = True
    for s in structs:
        if s["kind"] == "union":
            s["padding"] = 0
            s["bit_padding"] = 0
            s["holes"] = []
            s["bit_holes"] = []
    return structs, errors, info


# --------------------------------------------------------------------------
# Conversion to layout-diff's JSON schema (for --selftest / --dump-pahole-json)
# --------------------------------------------------------------------------

def to_ld_member(m: dict) -> dict:
    out = {"name": m["name"], "type": m["type"], "offset": m["offset"], "size": m["size"],
           "bit_offset": m["bit_offset"], "bit_size": m["bit_size"]}
    if "members" in m:
        out["kind"] = m["kind"]
        out["members"] = [to_ld_member(c) for c in m["members"]]
        if m["kind"] == "struct":
            calc = pahole_find_holes(m["members"], m["size"], m["offset"])
            out["holes"] = [{"offset": h["offset"], "size": h["size"]} for h in m["holes"]]
            out["bit_holes"] = [{"offset": h["offset"], "bit_offset": h["bit_offset"], "bits": h["bits"]}
                                for h in m["bit_holes"]]
            out["padding"] = calc["padding"]
            out["bit_padding"] = calc["bit_padding"]
        else:
            out["holes"], out["bit_holes"], out["padding"], out["bit_padding"] = [], [], 0, 0
    return out


def to_ld_json(structs: list[dict], vmlinux: str) -> dict:
    return {
        "format": "layout-diff-show", "version": 1, "file": vmlinux, "arch": "x86_64",
        "line_size": LINE_SIZE,
        "structs": [{
            "name": s["name"], "kind": s["kind"], "decl_file": None, "size": s["size"],
            "alignment": None, "cachelines": s["cachelines"],
            "members": [to_ld_member(m) for m in s["members"]],
            "holes": [{"offset": h["offset"], "size": h["size"]} for h in s["holes"]],
            "bit_holes": [{"offset": h["offset"], "bit_offset": h["bit_offset"], "bits": h["bits"]}
                          for h in s["bit_holes"]],
            "padding": s["padding"], "bit_padding": s["bit_padding"],
        } for s in structs if s["parse_error"] is None],
    }


# --------------------------------------------------------------------------
# Comparison
# --------------------------------------------------------------------------

def norm_ld_member(m: dict) -> dict:
    out = {"name": m.get("name"), "offset": m.get("offset"), "size": m.get("size"),
           "bit_offset": m.get("bit_offset"), "bit_size": m.get("bit_size")}
    if m.get("members") is not None:
        out["members"] = [norm_ld_member(c) for c in m["members"]]
        out["kind"] = m.get("kind")
    for k in ("holes", "bit_holes", "padding", "bit_padding"):
        if k in m:
            out[k] = m[k]
    return out


def top_key(s: dict) -> tuple:
    return (s["kind"], s["size"], tuple(member_key_cmp(m) for m in s["members"]))


def pahole_dedup_key(s: dict) -> tuple:
    """What pahole itself uses to collapse same-named structs (pahole.c type__compare)."""
    return (s["size"], len(s["members"]),
            tuple((m["name"], m["offset"] * 8 + (m["bit_offset"] or 0), m["bit_size"] or 0)
                  for m in s["members"]))


def bit_hole_abs(h: dict) -> tuple:
    return (h["offset"] * 8 + (h.get("bit_offset") or 0), h["bits"])


class Tally:
    def __init__(self):
        self.agree = 0
        self.total = 0

    def add(self, ok: bool):
        self.total += 1
        self.agree += bool(ok)

    def __str__(self):
        # floor, so that anything short of full agreement never prints as 100.00%
        pct = (10000 * self.agree // self.total) / 100 if self.total else 100.0
        return f"{self.agree}/{self.total} ({pct:.2f}%)"


@dataclass
class Stats:
    members: Tally = field(default_factory=Tally)
    holes: Tally = field(default_factory=Tally)          # hole entries (union of both sides)
    holes_structs: Tally = field(default_factory=Tally)  # structs whose hole lists agree
    bit_holes: Tally = field(default_factory=Tally)
    bit_holes_structs: Tally = field(default_factory=Tally)
    padding: Tally = field(default_factory=Tally)
    bit_padding: Tally = field(default_factory=Tally)
    nested_compared: int = 0
    nested_skipped: int = 0
    union_padding_skipped: int = 0
    info: dict = field(default_factory=dict)  # informational tallies (not in exit status)


def multiset_compare(a: list, b: list, tally: Tally) -> bool:
    from collections import Counter
    ca, cb = Counter(a), Counter(b)
    common = sum((ca & cb).values())
    union = sum((ca | cb).values())
    tally.agree += common
    tally.total += union
    return ca == cb


def align_members(pm: list[dict], lm: list[dict]) -> list[tuple]:
    """Pair members of one level. Returns [(p or None, l or None)]."""
    pn = [m["name"] if m["name"] is not None else f"<anon@{m['offset']}>" for m in pm]
    ln = [m["name"] if m["name"] is not None else f"<anon@{m['offset']}>" for m in lm]
    if pn == ln:
        return list(zip(pm, lm))
    out = []
    sm = difflib.SequenceMatcher(a=pn, b=ln, autojunk=False)
    for tag, i1, i2, j1, j2 in sm.get_opcodes():
        if tag == "equal":
            out.extend(zip(pm[i1:i2], lm[j1:j2]))
        else:
            k = min(i2 - i1, j2 - j1) if tag == "replace" else 0
            out.extend(zip(pm[i1:i1 + k], lm[j1:j1 + k]))
            out.extend((p, None) for p in pm[i1 + k:i2])
            out.extend((None, l) for l in lm[j1 + k:j2])
    return out


def compare_level(pm: list[dict], lm: list[dict], path: str, stats: Stats, diffs: list) -> None:
    for p, l in align_members(pm, lm):
        if p is None:
            stats.members.add(False)
            diffs.append((f"{path}{l.get('name') or '<anon>'}", "(absent)", "present"))
            continue
        pname = p["name"] or f"<anon@{p['offset']}>"
        if l is None:
            stats.members.add(False)
            diffs.append((f"{path}{pname}", "present", "(absent)"))
            continue
        ok = True
        for k in ("name", "offset", "size", "bit_offset", "bit_size"):
            if p[k] != l.get(k):
                ok = False
                diffs.append((f"{path}{pname}.{k}", p[k], l.get(k)))
                break
        stats.members.add(ok)
        if "members" in p and l.get("members") is not None:
            stats.nested_compared += 1
            sub = f"{path}{pname}."
            if p.get("kind") != l.get("kind"):
                diffs.append((f"{sub}kind", p.get("kind"), l.get("kind")))
            compare_level(p["members"], l["members"], sub, stats, diffs)
            compare_extras(p, l, sub, stats, diffs, nested=True)
        elif "members" in p and p["name"] is None:
            stats.nested_skipped += 1
            diffs.append((f"{path}{pname}.members", f"{len(p['members'])} nested", "missing"))


def compare_extras(p: dict, l: dict, path: str, stats: Stats, diffs: list, nested: bool = False) -> None:
    if "holes" in l or not nested:
        ph = [(h["offset"], h["size"]) for h in p.get("holes", [])]
        lh = [(h.get("offset"), h.get("size")) for h in (l.get("holes") or [])]
        ok = multiset_compare(ph, lh, stats.holes)
        stats.holes_structs.add(ok)
        if not ok:
            diffs.append((f"{path}holes", ph, lh))
    if "bit_holes" in l or not nested:
        pb = [bit_hole_abs(h) for h in p.get("bit_holes", [])]
        lb = [bit_hole_abs(h) for h in (l.get("bit_holes") or [])]
        ok = multiset_compare(pb, lb, stats.bit_holes)
        stats.bit_holes_structs.add(ok)
        if not ok:
            diffs.append((f"{path}bit_holes (abs start bit, bits)", pb, lb))
    if p.get("kind") == "union":
        # pahole never computes padding for a union (class__find_holes skips unions)
        # and prints none: nothing to agree with.
        stats.union_padding_skipped += 1
    elif "padding" in l or not nested:
        pp = p.get("padding")
        if nested and pp is None and p.get("kind") == "struct":
            pp = pahole_find_holes(p["members"], p["size"], p["offset"])["padding"]
        elif nested and pp is None:
            pp = 0
        ok = pp == l.get("padding")
        stats.padding.add(ok)
        if not ok:
            diffs.append((f"{path}padding", pp, l.get("padding")))
    if "bit_padding" in l and p.get("kind") != "union":
        pbp = p.get("bit_padding")
        if nested and pbp is None:
            pbp = pahole_find_holes(p["members"], p["size"], p["offset"])["bit_padding"] \
                if p.get("kind") == "struct" else 0
        ok = pbp == l.get("bit_padding")
        stats.bit_padding.add(ok)
        if not ok:
            diffs.append((f"{path}bit_padding", pbp, l.get("bit_padding")))


def compare_struct(p: dict, l: dict, stats: Stats) -> list:
    diffs = []
    if p["kind"] != l["kind"]:
        diffs.append(("kind", p["kind"], l["kind"]))
    if p["size"] != l["size"]:
        diffs.append(("size", p["size"], l["size"]))
    if len(p["members"]) != len(l["members"]):
        diffs.append(("members (count)", len(p["members"]), len(l["members"])))
    compare_level(p["members"], l["members"], "", stats, diffs)
    compare_extras(p, l, "", stats, diffs)
    if l.get("cachelines") is not None and p["cachelines"] != l["cachelines"]:
        diffs.append(("cachelines", p["cachelines"], l["cachelines"]))
    # Informational: summary numbers layout-diff may print, under pahole's definitions.
    extra = l.get("extra", {})
    pv = {
        "member_count": len(p["members"]),  # pahole "members:" (top level; an anonymous block is 1)
        "sum_members": sum(m["size"] for m in p["members"] if m["bit_size"] is None),  # bitfields excluded
        "sum_bitfield_members": sum(m["bit_size"] for m in p["members"] if m["bit_size"] is not None),
        "last_cacheline": p["size"] % LINE_SIZE,  # pahole omits the line when this is 0
    }
    for k, v in pv.items():
        if k in extra and (p["kind"] == "struct" or k == "member_count"):
            t = stats.info.setdefault(k, Tally())
            t.add(extra[k] == v)
            if extra[k] != v:
                stats.info.setdefault(k + ":examples", []).append((p["name"], v, extra[k]))
    return diffs


def similarity(p: dict, l: dict) -> int:
    score = 0
    if p["size"] == l["size"]:
        score += 1000
    if len(p["members"]) == len(l["members"]):
        score += 100
    lk = {member_key_cmp(m) for m in l["members"]}
    score += sum(1 for m in p["members"] if member_key_cmp(m) in lk)
    return score


def run_compare(pstructs: list[dict], ld: dict, only: list[str] | None) -> dict:
    def wanted(name):
        return not only or any(fnmatch.fnmatchcase(name, pat) for pat in only)

    lstructs = []
    anon_ld = 0
    for s in ld.get("structs", []):
        if not s.get("name"):
            anon_ld += 1
            continue
        if not wanted(s["name"]):
            continue
        t = {"name": s["name"], "kind": s.get("kind"), "size": s.get("size"),
             "cachelines": s.get("cachelines"),
             "members": [norm_ld_member(m) for m in s.get("members", [])],
             "holes": s.get("holes") or [], "bit_holes": s.get("bit_holes") or [],
             "padding": s.get("padding")}
        if "bit_padding" in s:
            t["bit_padding"] = s["bit_padding"]
        t["extra"] = {k: s[k] for k in ("member_count", "sum_members", "sum_bitfield_members",
                                        "last_cacheline") if k in s}
        lstructs.append(t)
    pstructs = [s for s in pstructs if wanted(s["name"])]
    p_unparsed = [s for s in pstructs if s["parse_error"]]
    pstructs = [s for s in pstructs if not s["parse_error"]]

    by_name_p: dict[str, list] = {}
    by_name_l: dict[str, list] = {}
    for s in pstructs:
        by_name_p.setdefault(s["name"], []).append(s)
    for s in lstructs:
        by_name_l.setdefault(s["name"], []).append(s)

    stats = Stats()
    matched, mismatched, missing_in_ld, missing_in_pahole, collapsed = [], [], [], [], []
    for name in list(by_name_p) + [n for n in by_name_l if n not in by_name_p]:
        P = list(by_name_p.get(name, []))
        L = list(by_name_l.get(name, []))
        pairs = []
        # 1. exact top-level key
        for p in list(P):
            k = top_key(p)
            for l in L:
                if top_key(l) == k:
                    pairs.append((p, l))
                    P.remove(p)
                    L.remove(l)
                    break
        # 2. best remaining by similarity
        while P and L:
            best = max(((similarity(p, l), pi, li) for pi, p in enumerate(P) for li, l in enumerate(L)))
            _, pi, li = best
            pairs.append((P.pop(pi), L.pop(li)))
        for p in P:
            missing_in_ld.append(p)
        for l in L:
            pk = pahole_dedup_key(l)
            if any(pahole_dedup_key(p) == pk for p in by_name_p.get(name, [])):
                collapsed.append(l)
            else:
                missing_in_pahole.append(l)
        for p, l in pairs:
            d = compare_struct(p, l, stats)
            (mismatched if d else matched).append((p, l, d))
    return {
        "pahole_structs": len(pstructs) + len(p_unparsed), "pahole_unparsed": p_unparsed,
        "ld_structs": len(lstructs), "ld_anonymous_ignored": anon_ld,
        "matched": matched, "mismatched": mismatched, "missing_in_ld": missing_in_ld,
        "missing_in_pahole": missing_in_pahole, "collapsed": collapsed, "stats": stats,
    }


def short(v, width=60) -> str:
    s = json.dumps(v) if not isinstance(v, str) else v
    return s if len(s) <= width else s[:width - 3] + "..."


def report(res: dict, out=sys.stdout, max_list: int = 20) -> bool:
    st: Stats = res["stats"]
    p = lambda *a: print(*a, file=out)
    p(f"structs in pahole:        {res['pahole_structs']}"
      + (f" ({len(res['pahole_unparsed'])} could not be parsed, excluded)" if res["pahole_unparsed"] else ""))
    p(f"structs in layout-diff:   {res['ld_structs']} (+{res['ld_anonymous_ignored']} anonymous, ignored)")
    p(f"matched exactly:          {len(res['matched'])}")
    p(f"mismatched:               {len(res['mismatched'])}")
    p(f"missing in layout-diff:   {len(res['missing_in_ld'])}")
    p(f"missing in pahole:        {len(res['missing_in_pahole'])}")
    p(f"collapsed by pahole:      {len(res['collapsed'])} (same name/size/member offsets as a printed "
      f"layout; pahole prints only the first)")
    p("agreement:")
    p(f"  members (offset+size+bits): {st.members}")
    p(f"  holes (entries):            {st.holes}   per block: {st.holes_structs}")
    p(f"  bit holes (entries):        {st.bit_holes}   per block: {st.bit_holes_structs}")
    p(f"  padding:                    {st.padding}")
    if st.bit_padding.total:
        p(f"  bit_padding:                {st.bit_padding}")
    p(f"  nested blocks compared:     {st.nested_compared} (skipped, no members on layout-diff side: "
      f"{st.nested_skipped})")
    p(f"  union padding not compared: {st.union_padding_skipped} (pahole computes no padding for unions)")
    info = [(k, v) for k, v in st.info.items() if not k.endswith(":examples")]
    if info:
        p("informational (pahole's definitions; not part of the exit status):")
        for k, v in info:
            ex = st.info.get(k + ":examples", [])[:3]
            exs = ("  e.g. " + ", ".join(f"{n}: pahole={a} layout-diff={b}" for n, a, b in ex)) if ex else ""
            p(f"  {k + ':':27} {v}{exs}")
    if res["mismatched"]:
        p(f"first differences (up to {max_list}):")
        for ps, ls, d in res["mismatched"][:max_list]:
            field_, pv, lv = d[0]
            p(f"  {ps['kind']} {ps['name']} (size {ps['size']}, pahole line {ps['line']}): {field_}: "
              f"pahole={short(pv)} layout-diff={short(lv)}")
    if res["missing_in_ld"]:
        p(f"missing in layout-diff (up to {max_list}):")
        for s in res["missing_in_ld"][:max_list]:
            p(f"  {s['kind']} {s['name']} size {s['size']} (pahole line {s['line']})")
    if res["missing_in_pahole"]:
        p(f"missing in pahole (up to {max_list}):")
        for s in res["missing_in_pahole"][:max_list]:
            p(f"  {s['kind']} {s['name']} size {s['size']}")
    if res["pahole_unparsed"]:
        p("pahole structs that could not be parsed:")
        for s in res["pahole_unparsed"][:max_list]:
            p(f"  {s['name']}: {s['parse_error']}")
    ok = not (res["mismatched"] or res["missing_in_ld"] or res["missing_in_pahole"] or res["pahole_unparsed"])
    p("RESULT: " + ("all layouts agree" if ok else "DISAGREEMENT"))
    return ok


def json_report(res: dict) -> dict:
    st: Stats = res["stats"]
    t = lambda x: {"agree": x.agree, "total": x.total}
    return {
        "pahole_structs": res["pahole_structs"], "ld_structs": res["ld_structs"],
        "matched": len(res["matched"]), "mismatched": len(res["mismatched"]),
        "missing_in_layout_diff": [(s["name"], s["size"]) for s in res["missing_in_ld"]],
        "missing_in_pahole": [(s["name"], s["size"]) for s in res["missing_in_pahole"]],
        "collapsed_by_pahole": [(s["name"], s["size"]) for s in res["collapsed"]],
        "agreement": {"members": t(st.members), "holes": t(st.holes), "holes_structs": t(st.holes_structs),
                      "bit_holes": t(st.bit_holes), "bit_holes_structs": t(st.bit_holes_structs),
                      "padding": t(st.padding), "bit_padding": t(st.bit_padding)},
        "mismatches": [{"name": p["name"], "size": p["size"], "pahole_line": p["line"],
                        "differences": [{"field": f, "pahole": a, "layout_diff": b} for f, a, b in d]}
                       for p, l, d in res["mismatched"]],
    }


# --------------------------------------------------------------------------
# main
# --------------------------------------------------------------------------

def parse_self_check(structs, errors, info, out=sys.stdout) -> bool:
    p = lambda *a: print(*a, file=out)
    clean = 0
    problems = []
    kinds = {"struct": 0, "union": 0}
    nested = 0
    bitfields = 0
    dup_names = {}
    for s in structs:
        kinds[s["kind"]] += 1
        dup_names[s["name"]] = dup_names.get(s["name"], 0) + 1
        pr = self_check_struct(s)
        if pr:
            problems.append((s, pr))
        else:
            clean += 1

        def count(ms):
            nonlocal nested, bitfields
            for m in ms:
                if "members" in m:
                    nested += 1
                    count(m["members"])
                if m["bit_size"] is not None:
                    bitfields += 1
        count(s["members"])
    total_members = sum(len(s["members"]) for s in structs)
    p(f"parsed top-level layouts: {len(structs)} ({kinds['struct']} struct, {kinds['union']} union)")
    p(f"  top-level members: {total_members}, inline nested struct/union blocks: {nested}, "
      f"bitfield members: {bitfields}")
    p(f"  names printed more than once: {sum(1 for v in dup_names.values() if v > 1)} "
      f"({sum(v for v in dup_names.values() if v > 1)} layouts)")
    p(f"  lines outside any struct / parse errors: {len(errors)}")
    p(f"  `pahole -s` rows: {info['sizes_rows']}, aligned with full output: {info['sizes_aligned']}, "
      f"disagreements: {len(info['size_table_mismatches'])}")
    p(f"  structs passing every self-check: {clean}/{len(structs)}")
    for s, pr in problems[:30]:
        p(f"  PROBLEM {s['kind']} {s['name']} (line {s['line']}): {'; '.join(pr[:3])}")
    for e in errors[:10]:
        p(f"  ERROR line {e['line']}: {e['error']}")
    return clean == len(structs) and not errors and info["sizes_aligned"] and not info["size_table_mismatches"]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    ap.add_argument("vmlinux")
    ap.add_argument("layout_diff_json", nargs="?",
                    help="layout-diff show --format json output, or '-' to run target/release/layout-diff")
    ap.add_argument("--struct", action="append", metavar="NAME", help="only these structs (glob ok); repeatable")
    ap.add_argument("--selftest", action="store_true",
                    help="self-check the pahole parser, then check pahole against itself via the JSON schema")
    ap.add_argument("--dump-pahole-json", metavar="FILE", help="write pahole's layouts in layout-diff's schema")
    ap.add_argument("--json-report", metavar="FILE", help="write a machine-readable report")
    ap.add_argument("--max-list", type=int, default=20)
    ap.add_argument("--private-classes", action="store_true",
                    help="also take pahole's function-local types (pahole --show_private_classes)")
    args = ap.parse_args()

    if not os.path.exists(args.vmlinux):
        print(f"check-pahole: {args.vmlinux}: no such file", file=sys.stderr)
        return 2
    structs, errors, info = load_pahole(args.vmlinux, args.private_classes)

    if args.dump_pahole_json:
        with open(args.dump_pahole_json, "w") as f:
            json.dump(to_ld_json(structs, args.vmlinux), f, indent=1)
        print(f"wrote {args.dump_pahole_json}")
        if not args.selftest and not args.layout_diff_json:
            return 0

    if args.selftest:
        print("== pahole parser self-check ==")
        parse_ok = parse_self_check(structs, errors, info)
        print("\n== checker against pahole's own layouts (round trip through the JSON schema) ==")
        ld = json.loads(json.dumps(to_ld_json(structs, args.vmlinux)))
        res = run_compare(structs, ld, args.struct)
        same_ok = report(res, max_list=args.max_list)
        print("\n== checker against a perturbed copy (one member offset +1) ==")
        bad = copy.deepcopy(ld)
        target = next((s for s in bad["structs"] if s["name"] == "task_struct"), bad["structs"][0])
        victim = target["members"][min(5, len(target["members"]) - 1)]
        victim["offset"] += 1
        print(f"perturbed: {target['name']}.{victim['name']}.offset -> {victim['offset']}")
        res2 = run_compare(structs, bad, args.struct)
        bad_ok = report(res2, max_list=args.max_list)
        caught = (not bad_ok) and len(res2["mismatched"]) == 1 and res2["mismatched"][0][0]["name"] == target["name"]

        print("\n== checker against a copy with a nested member, a hole and a padding perturbed ==")
        bad = copy.deepcopy(ld)
        want = []
        s1 = next((s for s in bad["structs"] if any(m.get("members") for m in s["members"])), None)
        if s1:
            nm = next(m for m in s1["members"] if m.get("members"))
            nm["members"][-1]["size"] += 1
            want.append(s1["name"])
            print(f"perturbed: {s1['name']}: last member of nested block at {nm['offset']}: size +1")
        s2 = next((s for s in bad["structs"] if s["holes"] and s["name"] not in want), None)
        if s2:
            s2["holes"][0]["offset"] += 1
            want.append(s2["name"])
            print(f"perturbed: {s2['name']}: first hole offset +1")
        s3 = next((s for s in bad["structs"] if s["padding"] and s["name"] not in want), None)
        if s3:
            s3["padding"] -= 1
            want.append(s3["name"])
            print(f"perturbed: {s3['name']}: padding -1")
        res3 = run_compare(structs, bad, args.struct)
        bad3_ok = report(res3, max_list=args.max_list)
        caught = caught and not bad3_ok and sorted(p["name"] for p, _, _ in res3["mismatched"]) == sorted(want)
        print(f"\nSELFTEST: parser {'OK' if parse_ok else 'FAILED'}, self-agreement "
              f"{'OK' if same_ok else 'FAILED'}, perturbation {'caught' if caught else 'NOT caught'}")
        return 0 if (parse_ok and same_ok and caught) else 1

    if not args.layout_diff_json:
        ap.error("LAYOUT_DIFF_JSON is required (or use --selftest)")
    if args.layout_diff_json == "-":
        exe = os.path.join(REPO, "target", "release", "layout-diff")
        cmd = [exe, "show", args.vmlinux, "--struct", "*", "--format", "json"]
        try:
            proc = subprocess.run(cmd, capture_output=True)
        except OSError as e:
            print(f"check-pahole: cannot run {exe}: {e} (build with cargo build --release)", file=sys.stderr)
            return 2
        if proc.returncode != 0:
            print(f"check-pahole: {' '.join(cmd)} exited {proc.returncode}: "
                  f"{proc.stderr.decode(errors='replace')[:2000]}", file=sys.stderr)
            return 2
        ld_text = proc.stdout.decode("utf-8", errors="replace")
    else:
        with open(args.layout_diff_json, encoding="utf-8") as f:
            ld_text = f.read()
    try:
        ld = json.loads(ld_text)
    except json.JSONDecodeError as e:
        print(f"check-pahole: layout-diff output is not JSON: {e}", file=sys.stderr)
        return 2
    if ld.get("format") != "layout-diff-show":
        print(f"check-pahole: warning: unexpected format {ld.get('format')!r}", file=sys.stderr)
    res = run_compare(structs, ld, args.struct)
    ok = report(res, max_list=args.max_list)
    if args.json_report:
        with open(args.json_report, "w") as f:
            json.dump(json_report(res), f, indent=1)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
