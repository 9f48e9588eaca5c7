#!/usr/bin/env python3
"""Instruction census of the step kernel's AVX-512 code, for results/kernels.md.

The kernels are monomorphised into the SIMD clones (`cavesweep::simd::clones::<level>`, one
function per task and level, all of the same name), so no symbol names the sync step. The
census takes, among the AVX-512 clones of the binary (those of the highest AVX-512 level the
binary has, `avx512_vbmi2` before `avx512`: the one an AVX-512 CPU dispatches to), the one with
the most `vpternlogq` (the
three-input logic of the carry-save adder tree: the step kernels' signature instruction) and
counts its instructions that use zmm registers, by mnemonic: proof that the 512-bit path is
compiled in, and what it is made of.

Usage: objdump -d --no-show-raw-insn -C BINARY | scripts/asm_census.py > census.txt
"""
import collections
import re
import sys

HEAD = re.compile(r"^[0-9a-f]+ <(.*)>:$")
INSN = re.compile(r"^\s*[0-9a-f]+:\s+(\S+)\s+(.*)$")


def main():
    best = None
    name, ops = None, []
    def close():
        nonlocal best
        if name and "simd::clones::avx512" in name:
            level = 1 if "avx512_vbmi2" in name else 0
            tern = sum(1 for m, _ in ops if m.startswith("vpternlog"))
            if tern and (best is None or (level, tern) > best[:2]):
                best = (level, tern, name, list(ops))
    for line in sys.stdin:
        h = HEAD.match(line.rstrip("\n"))
        if h:
            close()
            name, ops = h.group(1), []
            continue
        m = INSN.match(line)
        if m and name:
            ops.append((m.group(1), m.group(2)))
    close()
    if best is None:
        return  # no AVX-512 clone: the report says the census is empty
    _, tern, fn, ops = best
    zmm = collections.Counter(m for m, args in ops if "%zmm" in args)
    print(f"{fn}: {len(ops)} instructions, {sum(zmm.values())} on zmm registers, {tern} vpternlog")
    for m, c in zmm.most_common(12):
        print(f"{c:7d} {m}")


if __name__ == "__main__":
    main()
