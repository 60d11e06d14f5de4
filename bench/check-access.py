#!/usr/bin/env python3
# Why this exists: the access map (crates/core/src/access) is checked against objdump
# only on a small fixture (tests/access_fixtures.rs). This script checks it on a real
# vmlinux: for a seeded random sample of functions it reads `objdump -d` line by line,
# works out from the AT&T text alone which data object each instruction references
# (objdump's `# addr <sym+off>` annotation for RIP-relative and %gs: operands, the
# symbol table for absolute displacements and `mov $imm,%reg`), whether it reads,
# writes, read-modify-writes, updates atomically or only loads the address, and
# compares that, instruction by instruction, with what the map recorded
# (`examples/access_map VMLINUX refs STARTS`). Python 3, standard library only.
#
# Usage: python3 bench/check-access.py VMLINUX [--seed N] [--functions 200]
#                                      [--map-bin PATH] [--jobs 2] [--json OUT]
#
# Without --map-bin it runs `cargo run --release -p layout-diff --example
# access_map` from the repository. Compared per instruction: (object, offset) and the
# kind (read, write, read_write, atomic, address); for address loads also the callee
# (the first direct call or tail jump within 8 straight-line instructions receiving the
# register, stepping over calls to functions that change no register and write no
# memory, decided from their own objdump text). Left out, counted with examples: what
# the map does not record by design (targets inside functions, RIP-relative into no
# data symbol, plain addresses of per-CPU symbols without %gs, immediates other than
# `mov $X,%reg`, unnamed data such as strings).

import argparse
import bisect
import concurrent.futures
import json
import os
import random
import re
import subprocess
import sys
import tempfile
import threading
from collections import Counter, defaultdict

MASK = (1 << 64) - 1
REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PERCPU_SECTION = ".data..percpu"
# How far after an address load a direct call may receive it (scan.rs CALL_WINDOW).
CALL_WINDOW = 8
ARG_REGS = ["rdi", "rsi", "rdx", "rcx", "r8", "r9"]


# ---------------------------------------------------------------- symbol table


def run(cmd):
    return subprocess.run(cmd, check=True, capture_output=True, text=True).stdout


def read_sections(vmlinux):
    """Section index -> (name, address, size, executable)."""
    out = {}
    pat = re.compile(
        r"^\s*\[\s*(\d+)\]\s+(\S+)\s+(\S+)\s+([0-9a-f]+)\s+([0-9a-f]+)\s+([0-9a-f]+)"
        r"\s+([0-9a-f]+)\s+([A-Za-z]*)\s+\d+\s+\d+\s+\d+\s*$"
    )
    for line in run(["readelf", "-SW", vmlinux]).splitlines():
        m = pat.match(line)
        if not m:
            continue
        index, name, _type, addr, _off, size, _es, flags = m.groups()
        out[int(index)] = (name, int(addr, 16), int(size, 16), "X" in flags)
    return out


class Span:
    __slots__ = ("start", "end", "name", "size", "kind")

    def __init__(self, start, size, name, kind):
        self.start = start
        self.size = size
        self.end = start + max(size, 1)
        self.name = name
        self.kind = kind


class Symbols:
    """The symbols as the map's loader keeps them (load/elf.rs read_symbols) and the
    three tables the map looks addresses up in (access/targets.rs)."""

    def __init__(self, vmlinux):
        sections = read_sections(vmlinux)
        self.sections = sections
        percpu_index = next((i for i, s in sections.items() if s[0] == PERCPU_SECTION), None)
        rows = []
        per_cpu_start = None
        pat = re.compile(
            r"^\s*\d+:\s+([0-9a-f]+)\s+(\S+)\s+(\S+)\s+(\S+)\s+(\S+)\s+(\S+)\s*(\S*)"
        )
        for line in run(["readelf", "-sW", vmlinux]).splitlines():
            m = pat.match(line)
            if not m:
                continue
            value, size, typ, _bind, _vis, ndx, name = m.groups()
            value = int(value, 16)
            size = int(size, 0) if size.startswith("0x") else int(size)
            if name == "__per_cpu_start" and per_cpu_start is None:
                per_cpu_start = value
            rows.append((value, size, typ, ndx, name))
        percpu_base = per_cpu_start
        if percpu_base is None and percpu_index is not None:
            percpu_base = sections[percpu_index][1]
        self.percpu_base = percpu_base or 0
        data, percpu, functions = [], [], []
        self.func_starts_text = set()
        self.all_sorted = []  # (address, size, name, type) of every named symbol
        for value, size, typ, ndx, name in rows:
            if name:
                self.all_sorted.append((value, size, name, typ))
            if not ndx.isdigit() or typ == "FILE":
                continue
            index = int(ndx)
            sec = sections.get(index)
            if sec is None:
                continue
            exe = sec[3]
            if typ == "FUNC":
                kind = "function"
            elif typ == "OBJECT":
                kind = "object"
            elif typ == "TLS":
                kind = "tls"
            elif typ == "NOTYPE" and size > 0 and exe:
                kind = "function"
            else:
                continue
            if not name or name.startswith((".L", "__pfx_", "__cfi_")):
                continue
            is_percpu = index == percpu_index
            if is_percpu and value < self.percpu_base:
                continue
            size = min(size, max(sec[1] + sec[2] - value, 0))
            span = Span(value, size, name, kind)
            if is_percpu:
                percpu.append(span)
            elif kind == "object":
                data.append(span)
            elif kind == "function" and size > 0:
                functions.append(span)
                if typ == "FUNC" and sec[0] == ".text":
                    self.func_starts_text.add(value)
        self.all_sorted.sort()
        self.all_addrs = [s[0] for s in self.all_sorted]
        self.data = Table(data)
        self.percpu = Table(percpu)
        self.functions = Table(functions)
        self.function_by_start = {s.start: s for s in self.functions.spans}

    def section_of(self, address):
        """The name of the non-executable section of kernel addresses holding `address`."""
        for name, addr, size, exe in self.sections.values():
            if addr >= 0xFFFF800000000000 and addr <= address < addr + size and not exe:
                return name
        return None

    def data_hit(self, address, percpu):
        return (self.percpu if percpu else self.data).hit(address)

    def objdump_symbol(self, address):
        """What objdump would name `address` with: the last symbol at or before it."""
        i = bisect.bisect_right(self.all_addrs, address) - 1
        return self.all_sorted[i] if i >= 0 else None


class Table:
    """Spans sorted by start; aliases at one start: the largest, then the first name,
    stands for all (targets.rs `spans`)."""

    def __init__(self, spans):
        spans.sort(key=lambda s: (s.start, -s.end, s.name))
        out = []
        for s in spans:
            if out and out[-1].start == s.start:
                continue
            out.append(s)
        self.spans = out
        self.starts = [s.start for s in out]
        self.max_size = max((s.end - s.start for s in out), default=1)

    def hit(self, address):
        """(span, offset, nested): the innermost span holding `address`. `nested` is
        true when only an enclosing span that starts earlier holds it (the span just
        before it ends first): the map looks at the last span starting at or before
        an address only."""
        i = bisect.bisect_right(self.starts, address) - 1
        if i < 0:
            return None
        s = self.spans[i]
        if address < s.end:
            return s, address - s.start, False
        j = i - 1
        while j >= 0 and address - self.spans[j].start < self.max_size:
            t = self.spans[j]
            if address < t.end:
                return t, address - t.start, True
            j -= 1
        return None

    def contains(self, address):
        return self.hit(address) is not None


# ---------------------------------------------------------------- objdump text

PREFIXES = {
    "lock", "rep", "repz", "repnz", "repe", "repne", "data16", "data32", "addr32",
    "cs", "ds", "es", "fs", "gs", "ss", "notrack", "bnd", "xacquire", "xrelease",
}
BRANCHES = re.compile(r"^(j[a-z]+|call[lq]?|loop[a-z]*|xbegin)$")
# Not "straight-line" code for the callee window (iced FlowControl other than Next).
NOT_NEXT = re.compile(
    r"^(j[a-z]+|call[lq]?|ret[lqnw]*|lret[lqw]?|iret[lqwd]*|loop[a-z]*|int[13o]?|"
    r"ud[012]|ud2[ab]?|syscall|sysret[lq]?|sysenter|sysexit[lq]?|xbegin|xabort|hlt)$"
)
MEM = re.compile(
    r"^(?:%(?P<seg>[c-gs]s):)?(?P<disp>-?0x[0-9a-f]+|-?\d+)?"
    r"(?:\((?P<base>%[a-z0-9]+)?(?:,(?P<index>%[a-z0-9]+)(?:,(?P<scale>\d))?)?\))?$"
)
LINE = re.compile(r"^\s*([0-9a-f]+):\t(.*)$")
COMMENT = re.compile(r"^\s*([0-9a-f]+)(?:\s+<([^>]*)>)?")

# Memory as the last (AT&T destination) operand: read and written.
RMW = {
    "add", "adc", "sub", "sbb", "and", "or", "xor", "inc", "dec", "neg", "not",
    "shl", "shr", "sal", "sar", "rol", "ror", "rcl", "rcr", "shld", "shrd",
    "bts", "btr", "btc", "xadd", "cmpxchg", "cmpxchg8b", "cmpxchg16b",
}
# Memory as the last operand: only read.
READ_LAST = {
    "cmp", "test", "bt", "push", "call", "jmp", "mul", "imul", "div", "idiv",
    "ucomiss", "ucomisd", "comiss", "comisd", "ptest", "vptest", "lgdt", "lidt",
    "lldt", "ltr", "verr", "verw", "fld", "fild", "bound", "clflush", "clflushopt",
    "clwb", "invlpg", "lmsw", "ldmxcsr", "fxrstor", "fxrstor64", "xrstor",
    "xrstor64", "xrstors", "xrstors64", "fldcw", "fldenv", "frstor", "pushf",
}
# Memory as the last operand: only written (anything else starting with "mov" too).
WRITE_LAST = {
    "pop", "sgdt", "sidt", "sldt", "str", "smsw", "stmxcsr", "fxsave", "fxsave64",
    "xsave", "xsave64", "xsaveopt", "xsaveopt64", "xsaves", "xsaves64", "xsavec",
    "xsavec64", "fst", "fstp", "fist", "fistp", "fisttp", "fnstsw", "fnstcw",
    "fnstenv", "fnsave", "extractps", "pextrb", "pextrw", "pextrd", "pextrq",
    "vextracti128", "vextractf128", "vpextrb", "vpextrw", "vpextrd", "vpextrq",
    "cvtps2ph", "vcvtps2ph", "movbe", "vmaskmovps", "vpmaskmovd", "vpmaskmovq",
}
# Memory operands the CPU does not access (the map skips them too).
NO_ACCESS = re.compile(r"^(nop[wlq]?|prefetch[a-z0-9]*|lea[wlq]?|endbr64|bndcl|bndcu|bndmk)$")


def split_operands(text):
    out, depth, cur = [], 0, []
    for ch in text:
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        if ch == "," and depth == 0:
            out.append("".join(cur).strip())
            cur = []
        else:
            cur.append(ch)
    if cur and "".join(cur).strip():
        out.append("".join(cur).strip())
    return out


def stem(mnemonic, table):
    """`mnemonic` without its AT&T size suffix when that is what `table` holds."""
    if mnemonic in table:
        return mnemonic
    if mnemonic[-1:] in "bwlq" and mnemonic[:-1] in table:
        return mnemonic[:-1]
    return None


class Insn:
    __slots__ = ("addr", "text", "prefixes", "mnemonic", "operands", "comment")

    def __init__(self, addr, text):
        self.addr = addr
        self.text = text
        code, _, comment = text.partition("#")
        self.comment = comment.strip() or None
        tokens = code.split()
        self.prefixes = []
        while tokens and (tokens[0] in PREFIXES or tokens[0].startswith(("rex", "{"))):
            self.prefixes.append(tokens.pop(0))
        self.mnemonic = tokens[0] if tokens else ""
        rest = code.strip()
        for p in self.prefixes:
            rest = rest[len(p):].lstrip()
        self.operands = split_operands(rest[len(self.mnemonic):].strip())

    def comment_address(self):
        if not self.comment:
            return None, None
        m = COMMENT.match(self.comment)
        if not m:
            return None, None
        return int(m.group(1), 16), m.group(2)


def objdump(vmlinux, start, end):
    text = run([
        "objdump", "-d", "--no-show-raw-insn",
        f"--start-address={start:#x}", f"--stop-address={end:#x}", vmlinux,
    ])
    insns = []
    for line in text.splitlines():
        m = LINE.match(line)
        if m:
            insns.append(Insn(int(m.group(1), 16), m.group(2).rstrip()))
    return insns


def parse_int(s):
    neg = s.startswith("-")
    v = int(s.lstrip("-"), 0)
    return -v if neg else v


def memory_operand(insn):
    """(index of the operand, match) of the instruction's memory operand, if any."""
    branch = BRANCHES.match(insn.mnemonic) or insn.mnemonic in ("jmp", "call")
    for i, op in enumerate(insn.operands):
        indirect = op.startswith("*")
        op = op.lstrip("*")
        if op.startswith("$") or (op.startswith("%") and ":" not in op):
            continue
        if branch and not indirect:
            continue  # a branch target `ffffffff81000000 <f>`
        m = MEM.match(op)
        if m and (m.group("disp") is not None or m.group("base") or m.group("index")):
            return i, m
    return None


def kind_of(insn, op_index):
    """read / write / read_write / atomic / None (not accessed) / '?' (unknown), read
    off the AT&T text: destination last, `lock` or `xchg` atomic."""
    m = insn.mnemonic
    if "lock" in insn.prefixes or stem(m, {"xchg"}):
        return "atomic"
    if NO_ACCESS.match(m):
        return None
    last = op_index == len(insn.operands) - 1
    if not last:
        return "read"
    if stem(m, RMW):
        return "read_write"
    if stem(m, READ_LAST):
        return "read"
    if m.startswith("set"):
        return "write"
    if m.startswith(("mov", "vmov", "cvt", "vcvt")) or stem(m, WRITE_LAST):
        return "write" if len(insn.operands) > 1 else "?"
    if len(insn.operands) == 1:
        return "?"
    return "?"


def register_family(reg):
    """`%edi` -> `rdi`, `%r8d` -> `r8`, `%sil` -> `rsi`."""
    r = reg.lstrip("%")
    m = re.match(r"^r(\d+)[dwb]?$", r)
    if m:
        return "r" + m.group(1)
    table = {
        "ax": "rax", "bx": "rbx", "cx": "rcx", "dx": "rdx", "si": "rsi", "di": "rdi",
        "bp": "rbp", "sp": "rsp",
    }
    for k, v in table.items():
        if r in (k, "e" + k, "r" + k) or r in (k[0] + "l", k[0] + "h") or r == k + "l":
            return v
    return r


def written_registers(insn):
    """Registers an instruction writes, as far as the AT&T text tells."""
    m = insn.mnemonic
    out = set()
    ops = insn.operands
    if ops and ops[-1].startswith("%") and ":" not in ops[-1]:
        if not (stem(m, {"cmp", "test", "bt", "push"}) or m.startswith(("cmp", "test", "ucomi", "comi"))):
            out.add(register_family(ops[-1]))
    if stem(m, {"xchg", "xadd"}) and ops and ops[0].startswith("%"):
        out.add(register_family(ops[0]))
    if re.match(r"^(movs|stos|lods|cmps|scas|ins|outs)[bwlq]?$", m):
        out.update({"rdi", "rsi", "rcx"})
    if m in ("cltq", "cqto", "cltd", "cwtl", "rdtsc", "rdtscp", "rdmsr", "rdpmc", "xgetbv") or (
        stem(m, {"mul", "div", "idiv"}) or (stem(m, {"imul"}) and len(ops) == 1)
    ):
        out.update({"rax", "rdx", "rcx"})
    if m == "cpuid":
        out.update({"rax", "rbx", "rcx", "rdx"})
    if stem(m, {"cmpxchg"}):
        out.add("rax")
    return out


def direct_target(insn):
    """A direct call's or jmp's (address, symbol text) when it has one."""
    if insn.mnemonic not in ("call", "jmp", "callq", "jmpq") or not insn.operands:
        return None
    m = re.match(r"^([0-9a-f]+)\s+<([^>]*)>$", insn.operands[0])
    return (int(m.group(1), 16), m.group(2)) if m else None


def callee_of(insns, i, register, syms, pres):
    """The function a direct call or tail jump within the next CALL_WINDOW instructions
    of straight-line code receives the address loaded into `register` at insns[i]
    (scan.rs `address_kind`), read off the text; calls to functions that change no
    register and write no memory (`pres`, e.g. `__fentry__`) are stepped over."""
    for k in range(i + 1, min(len(insns), i + 1 + CALL_WINDOW)):
        insn = insns[k]
        target = direct_target(insn)
        if target and target[0] in syms.function_by_start:
            if insn.mnemonic.startswith("call") and pres(target[0]):
                continue
            return syms.function_by_start[target[0]].name if register in ARG_REGS else None
        if NOT_NEXT.match(insn.mnemonic) or register in written_registers(insn):
            return None
    return None


class Preserving:
    """Whether a function changes no general register but %rsp, writes no memory
    operand and branches out only to such functions (preserve.rs), read off objdump's
    text of it; a function met again while being decided counts as preserving (the
    largest set, as the map's fixed point)."""

    def __init__(self, vmlinux, syms):
        self.vmlinux = vmlinux
        self.syms = syms
        self.known = {}
        self.lock = threading.RLock()

    def __call__(self, start):
        with self.lock:
            if start not in self.known:
                self.known[start] = True
                self.known[start] = self.decide(self.syms.function_by_start[start])
            return self.known[start]

    def decide(self, span):
        for insn in objdump(self.vmlinux, span.start, span.end):
            m = insn.mnemonic
            if m in ("(bad)", ""):
                continue
            if written_registers(insn) - {"rsp"}:
                return False
            mem = memory_operand(insn)
            if mem and kind_of(insn, mem[0]) in ("write", "read_write", "atomic"):
                return False
            if not NOT_NEXT.match(m) or re.match(r"^(ret[lqnw]*|int3|ud2|hlt)$", m):
                continue
            target = branch_target(insn)
            if target is None:
                return False  # indirect, or no target
            if span.start <= target < span.end:
                continue
            if target not in self.syms.function_by_start or not self(target):
                return False
        return True


def branch_target(insn):
    """A direct branch's target address (`jne ffffffff81000007 <f+0x7>`)."""
    if not insn.operands:
        return None
    m = re.match(r"^([0-9a-f]+)(?:\s+<[^>]*>)?$", insn.operands[0])
    return int(m.group(1), 16) if m else None


class Tally(Counter):
    """Counts by class, with the first few instructions of each as examples."""

    def __init__(self):
        super().__init__()
        self.examples = defaultdict(list)

    def add(self, key, insn):
        self[key] += 1
        if len(self.examples[key]) < 3:
            self.examples[key].append(f"{insn.addr:x}: {insn.text}")

    def merge(self, other):
        self.update(other)
        for k, v in other.examples.items():
            self.examples[k].extend(v[: 3 - len(self.examples[k])])


def references(insns, syms, pres):
    """Every reference objdump's text gives for one function, each a dict; and
    counters of what is left out and why."""
    refs = []
    left = Tally()
    notes = Counter()
    for i, insn in enumerate(insns):
        if insn.mnemonic in ("(bad)", ""):
            left.add("objdump (bad)", insn)
            continue
        caddr, csym = insn.comment_address()
        mem = memory_operand(insn)
        cand = None
        if mem:
            op_index, m = mem
            seg = m.group("seg")
            base = m.group("base")
            index = m.group("index")
            disp = parse_int(m.group("disp")) if m.group("disp") else 0
            lea = stem(insn.mnemonic, {"lea"}) is not None
            percpu = seg == "gs" and not lea
            if base == "%rip":
                if caddr is None:
                    nxt = insns[i + 1].addr if i + 1 < len(insns) else None
                    if nxt is None:
                        left.add("RIP-relative, no annotation, last instruction", insn)
                        continue
                    caddr = (nxt + disp) & MASK
                cand = dict(address=caddr, form="rip_relative", indexed=False, percpu=percpu)
            elif m.group("disp") is not None and (base is None or not -128 <= disp <= 127):
                cand = dict(address=disp & MASK, form="absolute",
                            indexed=bool(base or index), percpu=percpu)
            else:
                continue
            if lea:
                cand["kind"] = "address"
                cand["register"] = register_family(insn.operands[-1])
            else:
                kind = kind_of(insn, op_index)
                if kind is None:
                    # An address the CPU does not access: the map skips it too, but it
                    # still counts it as to_code/rip_unresolved when it lands outside data.
                    hit = syms.data_hit(cand["address"], cand["percpu"])
                    if hit:
                        left.add(f"not an access ({insn.mnemonic}) naming data", insn)
                    continue
                cand["kind"] = kind
            # An immediate besides the memory operand (movq $sym,8(%rsp)) is not recorded.
            for op in insn.operands:
                if op.startswith("$"):
                    v = parse_int(op[1:]) & MASK
                    if syms.data.contains(v):
                        left.add("immediate naming data with a memory operand (mov $X,mem)", insn)
        else:
            ops = insn.operands
            if (
                insn.mnemonic in ("mov", "movabs")
                and len(ops) == 2
                and ops[0].startswith("$")
                and ops[1].startswith("%")
            ):
                cand = dict(address=parse_int(ops[0][1:]) & MASK, form="immediate",
                            indexed=False, percpu=False, kind="address",
                            register=register_family(ops[1]))
            else:
                for op in ops:
                    if op.startswith("$"):
                        v = parse_int(op[1:]) & MASK
                        if syms.data.contains(v):
                            left.add(f"immediate naming data in {insn.mnemonic} (not mov $X,%reg)", insn)
                continue
        hit = syms.data_hit(cand["address"], cand["percpu"])
        annotated = caddr is not None and cand["form"] == "rip_relative"
        if not hit:
            # What the map counts and does not record.
            if syms.functions.contains(cand["address"]) and not cand["percpu"]:
                left.add(f"target inside a function ({cand['form']})", insn)
            elif cand["form"] == "rip_relative":
                what = "per-CPU" if cand["percpu"] else "ordinary"
                sym = syms.objdump_symbol(cand["address"])
                if not cand["percpu"] and sym and syms.percpu.contains(cand["address"]):
                    left.add("RIP-relative without %gs into a per-CPU symbol", insn)
                else:
                    typ = sym[3] if sym else "-"
                    left.add(f"RIP-relative into no {what} data symbol (objdump: {typ} symbol)", insn)
            elif not cand["percpu"] and percpu_address(syms, cand["address"]):
                left.add(f"{cand['form']} address of a per-CPU symbol without %gs"
                         + (" (0-based area: a constant >= 0x10000 inside one)"
                            if syms.percpu_base < 0x10000 else ""), insn)
            elif cand["form"] != "rip_relative" and not cand["percpu"]:
                sec = syms.section_of(cand["address"])
                if sec:
                    # Unnamed data: strings (`.rodata.str` has no symbols), labels.
                    left.add(f"{cand['form']} into no symbol, in {sec}", insn)
            continue
        span, offset, nested = hit
        if cand["kind"] == "address":
            cand["callee"] = callee_of(insns, i, cand["register"], syms, pres)
        cand.update(insn=insn.addr, object=span.name, offset=offset, nested=nested,
                    line=f"{insn.addr:x}: {insn.text}", annotated=annotated)
        if annotated and csym is not None:
            # How objdump's own `<sym+off>` compares with the object found.
            name, _, off = csym.partition("+")
            off = int(off, 16) if off else 0
            if name == span.name and off == offset:
                notes["annotation = object+offset"] += 1
            elif cand["address"] - off in syms.names_at_addr(name):
                notes["annotation names another symbol at the same address (alias)"] += 1
            else:
                notes["annotation names another symbol (objdump: nearest symbol of any type)"] += 1
        refs.append(cand)
    return refs, left, notes


def percpu_address(syms, address):
    """Whether a plain address (no %gs) lands in a per-CPU symbol: the address of a
    per-CPU variable before `this_cpu_off` is added (`mov $runqueues,%rax`). With the
    area linked at 0 (6.1) small constants are everywhere: only those >= 0x10000."""
    hit = syms.percpu.hit(address)
    return hit is not None and (syms.percpu_base >= 0x10000 or address >= 0x10000)


def names_at_addr(self, name):
    """Addresses of symbols called `name` (any type)."""
    if not hasattr(self, "_by_name"):
        self._by_name = defaultdict(set)
        for a, _s, n, _t in self.all_sorted:
            self._by_name[n].add(a)
    return self._by_name.get(name, set())


Symbols.names_at_addr = names_at_addr


# ---------------------------------------------------------------- the map


def map_refs(args, starts):
    with tempfile.NamedTemporaryFile("w", suffix=".starts", delete=False) as f:
        for s in starts:
            f.write(f"{s:#x}\n")
        path = f.name
    try:
        if args.map_bin:
            cmd = [args.map_bin, args.vmlinux, "refs", path]
        else:
            cmd = ["cargo", "run", "--quiet", "--release", "-p", "layout-diff",
                   "--example", "access_map", "--", args.vmlinux, "refs", path]
        out = subprocess.run(cmd, check=True, capture_output=True, text=True, cwd=REPO).stdout
    finally:
        os.unlink(path)
    refs = []
    for line in out.splitlines():
        r = json.loads(line)
        r["insn"] = int(r["insn"], 16)
        r["function_address"] = int(r["function_address"], 16)
        k = r["kind"]
        r["kind_name"] = "address" if isinstance(k, dict) else k
        refs.append(r)
    return refs


def map_line(r):
    callee = f" callee={r['callee']} writes={r['writes']}" if r["kind_name"] == "address" else ""
    return (f"{r['insn']:x} {r['function']}: {r['object']}+{r['offset']:#x} "
            f"{r['kind_name']} {r['form']}{' indexed' if r['indexed'] else ''} "
            f"size={r['size']}{callee}")


# ---------------------------------------------------------------- main


def main():
    ap = argparse.ArgumentParser(
        description="Check the access map against objdump -d on a seeded sample of functions.")
    ap.add_argument("vmlinux")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--functions", type=int, default=200)
    ap.add_argument("--map-bin", help="a built examples/access_map (else cargo run)")
    ap.add_argument("--jobs", type=int, default=2, help="objdump processes at once")
    ap.add_argument("--list", type=int, default=30, help="mismatches listed")
    ap.add_argument("--examples", type=int, default=2, help="examples per left-out class")
    ap.add_argument("--json", help="write the figures as JSON here")
    args = ap.parse_args()

    syms = Symbols(args.vmlinux)
    pres = Preserving(args.vmlinux, syms)
    candidates = sorted(s for s in syms.function_by_start if s in syms.func_starts_text)
    rng = random.Random(args.seed)
    sample = sorted(rng.sample(candidates, min(args.functions, len(candidates))))
    spans = [syms.function_by_start[s] for s in sample]

    mapped = defaultdict(list)
    for r in map_refs(args, sample):
        mapped[r["function_address"]].append(r)

    def one(span):
        insns = objdump(args.vmlinux, span.start, span.end)
        return span, insns, *references(insns, syms, pres)

    with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
        results = list(pool.map(one, spans))

    left = Tally()
    notes = Counter()
    totals = Counter()
    classes = Counter()
    mismatches = []
    unknown = Counter()
    for span, insns, refs, l, n in results:
        left.merge(l)
        notes.update(n)
        totals["instructions (objdump)"] += len(insns)
        theirs = {}
        for r in refs:
            theirs.setdefault(r["insn"], r)
        ours = {}
        for r in mapped.get(span.start, []):
            if not span.start <= r["insn"] < span.end:
                classes["map reference outside the function's range"] += 1
                continue
            ours.setdefault(r["insn"], r)
        totals["references (objdump)"] += len(theirs)
        totals["references (map)"] += len(ours)
        by_addr = {i.addr: i for i in insns}
        for addr in sorted(set(theirs) | set(ours)):
            t, o = theirs.get(addr), ours.get(addr)
            if t and t["kind"] == "?":
                unknown[by_addr[addr].mnemonic] += 1
            if t and o:
                same_ref = (t["object"], t["offset"]) == (o["object"], o["offset"])
                same_kind = t["kind"] == o["kind_name"]
                if same_ref and same_kind:
                    totals["matched"] += 1
                    if t["kind"] == "address":
                        if t["callee"] == o["callee"]:
                            totals["address callee agrees"] += 1
                        else:
                            totals["address callee differs"] += 1
                            classes[f"callee: objdump {t['callee'] is not None and 'named' or 'none'}, "
                                    f"map {o['callee'] is not None and 'named' or 'none'}"] += 1
                            if len(mismatches) < 1000:
                                mismatches.append(("callee", t["line"] + f"  [callee {t['callee']}]", map_line(o)))
                    if t["form"] != o["form"]:
                        classes["matched, form differs"] += 1
                    continue
                cls = ("object/offset differs" if not same_ref else
                       f"kind differs: objdump {t['kind']}, map {o['kind_name']}")
                if t.get("nested") and not same_ref:
                    cls += " (address in an enclosing object)"
            elif t:
                cls = f"objdump only ({t['form']}, {t['kind']})"
                if t.get("nested"):
                    cls += " in an enclosing object past a nested one"
            else:
                cls = f"map only ({o['form']}, {o['kind_name']})"
            classes[cls] += 1
            totals["mismatched"] += 1
            line_t = t["line"] + f"  [{t['object']}+{t['offset']:#x} {t['kind']}]" if t else (
                f"{addr:x}: {by_addr[addr].text}" if addr in by_addr else f"{addr:x}: (no objdump line)")
            mismatches.append((cls, line_t, map_line(o) if o else "(not in the map)"))

    kinds_t = Counter()
    forms_t = Counter()
    for _s, _i, refs, _l, _n in results:
        for r in refs:
            kinds_t[r["kind"]] += 1
            forms_t[r["form"] + (" %gs (per-CPU)" if r["percpu"] else "")
                    + (" indexed" if r["indexed"] else "")] += 1

    print(f"vmlinux {args.vmlinux}")
    print(f"seed {args.seed}; functions sampled {len(sample)} of {len(candidates)} sized FUNC "
          f"symbols in .text (distinct starts)")
    for k in ("instructions (objdump)", "references (objdump)", "references (map)",
              "matched", "mismatched", "address callee agrees", "address callee differs"):
        print(f"  {k}: {totals[k]}")
    print("  objdump references by kind: " + ", ".join(f"{k} {v}" for k, v in sorted(kinds_t.items())))
    print("  objdump references by form: " + ", ".join(f"{k} {v}" for k, v in sorted(forms_t.items())))
    print("mismatch classes:" + ("" if classes else " none"))
    for k, v in classes.most_common():
        print(f"  {v:6d}  {k}")
    if unknown:
        print("instructions whose read/write the AT&T rule does not know: "
              + ", ".join(f"{k} {v}" for k, v in unknown.most_common()))
    print("left out of the comparison (the map does not record these by design):")
    for k, v in sorted(left.items()):
        print(f"  {v:6d}  {k}")
        for e in left.examples[k][: args.examples]:
            print(f"            e.g. {e}")
    print("objdump's annotation of RIP-relative references vs the object found:")
    for k, v in notes.most_common():
        print(f"  {v:6d}  {k}")
    shown = [m for m in mismatches if m[0] != "callee"][: args.list]
    shown += [m for m in mismatches if m[0] == "callee"][: max(0, args.list - len(shown))]
    if shown:
        print(f"first {len(shown)} mismatches (objdump line / map line):")
        for cls, a, b in shown:
            print(f"  [{cls}]\n    objdump: {a}\n    map:     {b}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({
                "vmlinux": args.vmlinux, "seed": args.seed, "functions": len(sample),
                "totals": totals, "classes": classes, "left_out": left,
                "left_out_examples": left.examples, "annotations": notes,
                "objdump_kinds": kinds_t, "objdump_forms": forms_t, "unknown_rw": unknown,
                "mismatches": [list(m) for m in mismatches[:200]],
            }, f, indent=1, sort_keys=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
