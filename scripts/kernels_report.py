#!/usr/bin/env python3
"""Write results/kernels.md from criterion's estimates of `cargo bench --bench kernels --bench inplace --bench fill`.

Reads target/criterion/<group>/<bench>/new/estimates.json (median point estimate, ns) and the
throughput (cells, or caves, per iteration) from benchmark.json beside it. Criterion stores the
bench id `a/b` as the directory `a_b`. The groups (see benches/kernels.rs and benches/inplace.rs):

  sync_<rows>x<cols>/<path>/row, .../<path>/lanes, .../oracle   one step of B5678/S5678
  chapter_4_steps_per_cave/<path>/row, .../<path>/lanes          the chapter's 4 steps, per cave
  nethack_pass1_19x77/{fast,oracle}_{col,row}_major, transpose_round_trip, fast_col_major_lanes<N>
  r1ge5_r2le2_<rows>x<cols>/{fast,oracle}
  fill_per_cave/bernoulli_90x140/<path>/{single,lanes}, exact_count_19x77_624/<path>, numpy_90x140

<path> is every SIMD path the bench machine runs (`Simd::available`); the highest of them is the
one it dispatches to (`Simd::detect`). The sync groups are required; the others are reported
when their directory exists. A missing or unreadable file inside a reported group is an error
that names the file.

Usage: scripts/kernels_report.py --out results/kernels.md --provenance "Made by ... on ..." \
           [--asm FILE] [--target DIR]
"""
import argparse
import json
import os
import re
import sys

# The SIMD paths, lowest first, as ordered by `simd::Path` (crates/core/src/simd/mod.rs): the highest one a
# CPU runs is the one `Simd::detect` dispatches to.
PATH_ORDER = ["scalar", "sse2", "avx2-slow-pdep", "avx2", "avx512", "avx512-vbmi2"]


class ReportError(Exception):
    pass


def fail(msg):
    sys.exit(f"kernels_report: {msg}")


def bench_dir(target, group, bench):
    # criterion: bench id "a/b" -> directory "a_b"
    return os.path.join(target, "criterion", group, bench.replace("/", "_"), "new")


def read_json(path, hint):
    try:
        with open(path) as f:
            return json.load(f)
    except FileNotFoundError:
        raise ReportError(f"missing criterion output {path}; {hint}")
    except (OSError, ValueError) as e:
        raise ReportError(f"cannot read {path}: {e}")


class Est:
    """One bench: median time of an iteration (ns) and elements (cells or caves) per iteration."""

    def __init__(self, target, group, bench, hint):
        base = bench_dir(target, group, bench)
        est_path = os.path.join(base, "estimates.json")
        meta_path = os.path.join(base, "benchmark.json")
        est = read_json(est_path, hint)
        meta = read_json(meta_path, hint)
        try:
            self.ns = float(est["median"]["point_estimate"])
            ci = est["median"]["confidence_interval"]
            self.lo, self.hi = float(ci["lower_bound"]), float(ci["upper_bound"])
        except (KeyError, TypeError, ValueError):
            raise ReportError(f"{est_path} has no median point estimate")
        tp = meta.get("throughput") or {}
        elems = tp.get("Elements") or tp.get("elements")
        if not elems:
            raise ReportError(f"{meta_path} has no Throughput::Elements (cells or caves per iteration)")
        if self.ns <= 0:
            raise ReportError(f"{est_path}: median {self.ns} ns is not positive")
        self.elems = int(elems)
        self.path = est_path
        self.mtime = os.path.getmtime(est_path)

    def rate(self):
        """elements per second"""
        return self.elems / (self.ns * 1e-9)


def fmt_rate(r):
    return f"{r / 1e9:.2f}e9" if r >= 1e9 else f"{r / 1e6:.1f}e6" if r >= 1e6 else f"{r / 1e3:.1f}e3"


def fmt_caves(r):
    return f"{r / 1e6:.2f}e6" if r >= 1e6 else f"{r / 1e3:.0f}e3"


def fmt_time(ns):
    if ns >= 1e6:
        return f"{ns / 1e6:.2f} ms"
    return f"{ns / 1e3:.2f} us" if ns >= 1e3 else f"{ns:.0f} ns"


def fmt_ratio(x):
    return f"{x:.0f}x" if x >= 10 else f"{x:.1f}x"


def shape_groups(target, prefix):
    """Groups named <prefix><rows>x<cols> under target/criterion, smallest first."""
    root = os.path.join(target, "criterion")
    found = []
    for name in os.listdir(root) if os.path.isdir(root) else []:
        m = re.fullmatch(re.escape(prefix) + r"(\d+)x(\d+)", name)
        if m and os.path.isdir(os.path.join(root, name)):
            rows, cols = int(m.group(1)), int(m.group(2))
            found.append((rows * cols, rows, cols, name))
    return [(rows, cols, name) for _, rows, cols, name in sorted(found)]


def paths_in(target, group):
    """The SIMD paths with a `<path>/row` or `<path>/lanes` bench in `group`, lowest first."""
    gdir = os.path.join(target, "criterion", group)
    paths = set()
    for d in os.listdir(gdir):
        if not os.path.isdir(os.path.join(gdir, d)):
            continue
        for kind in ("_row", "_lanes"):
            if d.endswith(kind):
                paths.add(d[: -len(kind)])
    unknown = sorted(p for p in paths if p not in PATH_ORDER)
    if unknown:
        print(f"kernels_report: warning: {gdir} has unknown SIMD paths {unknown} "
              f"(listed last, not considered for dispatch)", file=sys.stderr)
    return [p for p in PATH_ORDER if p in paths] + unknown


def check_fresh(ests, what):
    """Warn when the estimates of one report span more than an hour: leftovers of older runs."""
    times = [e.mtime for e in ests]
    if times and max(times) - min(times) > 3600:
        old = min(ests, key=lambda e: e.mtime)
        print(f"kernels_report: warning: {what}: estimates written more than an hour apart "
              f"(oldest: {old.path}); stale output of an earlier run?", file=sys.stderr)


def build(a):
    t = a.target
    kern_hint = "run `cargo bench --bench kernels` first"
    inpl_hint = "run `cargo bench --bench inplace` first"
    ests = []
    out = []

    # --- sync step: every path, row and lanes, against the oracle -----------------------------
    sync = shape_groups(t, "sync_")
    if not sync:
        raise ReportError(
            f"no sync_<rows>x<cols> group under {os.path.join(t, 'criterion')} (expected e.g. "
            f"{os.path.join(bench_dir(t, 'sync_90x140', 'oracle'), 'estimates.json')}); {kern_hint}")
    sync_data = []
    all_paths = []
    for rows, cols, group in sync:
        cells = rows * cols
        oracle = Est(t, group, "oracle", kern_hint)
        paths = paths_in(t, group)
        if not paths:
            raise ReportError(f"{os.path.join(t, 'criterion', group)} has no <path>_row / <path>_lanes "
                              f"bench; {kern_hint}")
        per_path = []
        for p in paths:
            row = Est(t, group, f"{p}/row", kern_hint)
            lanes = Est(t, group, f"{p}/lanes", kern_hint)
            if row.elems != cells or oracle.elems != cells or lanes.elems % cells:
                raise ReportError(f"{group}: throughput is not cells of {rows}x{cols} "
                                  f"(row {row.elems}, lanes {lanes.elems}, oracle {oracle.elems})")
            per_path.append((p, row, lanes))
            ests += [row, lanes]
        ests.append(oracle)
        sync_data.append((rows, cols, group, oracle, per_path))
        all_paths.append(paths)
    known = [p for p in all_paths[0] if p in PATH_ORDER]
    for (_, _, group, _, _), paths in zip(sync_data, all_paths):
        if paths != all_paths[0]:
            print(f"kernels_report: warning: {group} has paths {paths}, {sync_data[0][2]} has "
                  f"{all_paths[0]}: not all from one run?", file=sys.stderr)
    if not known:
        raise ReportError(f"no known SIMD path ({', '.join(PATH_ORDER)}) in {sync_data[0][2]}")
    dispatched = known[-1]

    def path_cell(p):
        return f"**{p}** (dispatched)" if p == dispatched else p

    out.append("# Step kernels: every SIMD path vs the scalar oracle\n")
    if a.provenance:
        out.append(a.provenance + "\n")
    out.append(
        "Commands: `cargo bench --bench kernels` and `cargo bench --bench inplace` (criterion, one "
        "thread; medians), then `scripts/kernels_report.py`. Cell updates per second = cells "
        "stepped / time, on one thread. The oracle is `crates/core/src/oracle.rs` (one byte per cell, the "
        "obvious loops).\n")
    out.append(
        f"The benches run every SIMD path this CPU can run (`Simd::available`: "
        f"{', '.join(f'`{p}`' for p in all_paths[0])}); the one it dispatches to, the highest, is "
        f"**`{dispatched}`** (`Simd::detect`; what the generator and `Stepper::new` use unless "
        f"`CAVESWEEP_SIMD` says otherwise). Two kernels per path:\n")
    out.append(
        "- **row**: one grid, the vector's lanes across the words of a row (`kernel::Stepper`: "
        "4 words per vector, or on AVX-512 8 when the padded row holds whole 8-word vectors, "
        "as 1024 columns do), stepping on from the last state (the kernel has no branch on a "
        "cell, so its work does not depend on the contents);\n"
        "- **lanes**: one cave per lane of the widest vector (1 scalar, 2 SSE2, 4 AVX2, 8 "
        "AVX-512; `kernel::batch::Lanes`), all stepped in lock-step, the walls of each lane "
        "counted on the way; timed per step of the whole batch, going on from the last state "
        "(loading the caves into the lanes and copying them out is not included).\n")
    for rows, cols, group, oracle, per_path in sync_data:
        cells = rows * cols
        orate = oracle.rate()
        out.append(f"## Sync step B5678/S5678, {rows}x{cols}, outside floor, solid border "
                   f"(`{group}`)\n")
        out.append("| path | row, per step | row cell-updates/s | row / oracle "
                   "| lanes: caves | lanes, per step of the batch | lanes cell-updates/s | lanes / oracle |")
        out.append("|---|---|---|---|---|---|---|---|")
        for p, row, lanes in per_path:
            out.append(f"| {path_cell(p)} | {fmt_time(row.ns)} | {fmt_rate(row.rate())} "
                       f"| {fmt_ratio(row.rate() / orate)} | {lanes.elems // cells} "
                       f"| {fmt_time(lanes.ns)} | {fmt_rate(lanes.rate())} "
                       f"| {fmt_ratio(lanes.rate() / orate)} |")
        out.append(f"| oracle | {fmt_time(oracle.ns)} | {fmt_rate(orate)} | 1x | | | | |")
        out.append("")

    # --- the chapter's 4 steps per cave ---------------------------------------------------------
    chap = "chapter_4_steps_per_cave"
    if os.path.isdir(os.path.join(t, "criterion", chap)):
        paths = paths_in(t, chap)
        if not paths:
            raise ReportError(f"{os.path.join(t, 'criterion', chap)} has no <path>_row / "
                              f"<path>_lanes bench; {kern_hint}")
        out.append(f"## The chapter's whole smoothing: 4 steps of 90x140 (B5678/S5678, outside "
                   f"floor, solid border), per cave (`{chap}`)\n")
        out.append("| path | row, per cave | row caves/s | lanes: caves | lanes, per cave "
                   "| lanes caves/s | lanes / row |")
        out.append("|---|---|---|---|---|---|---|")
        for p in paths:
            row = Est(t, chap, f"{p}/row", kern_hint)
            lanes = Est(t, chap, f"{p}/lanes", kern_hint)
            ests += [row, lanes]
            row_cave = row.ns / row.elems
            lanes_cave = lanes.ns / lanes.elems
            out.append(f"| {path_cell(p)} | {fmt_time(row_cave)} | {fmt_caves(row.rate())} "
                       f"| {lanes.elems} | {fmt_time(lanes_cave)} | {fmt_caves(lanes.rate())} "
                       f"| {fmt_ratio(row_cave / lanes_cave)} |")
        out.append("")
        o90 = next((o for r, c, _, o, _ in sync_data if (r, c) == (90, 140)), None)
        scale = (f" For scale, 4 oracle steps of 90x140 take {fmt_time(4 * o90.ns)} "
                 f"(4 x `sync_90x140/oracle`)." if o90 else "")
        out.append("Row: one grid, copied back to its start before each pass; lanes: a batch of "
                   "caves going on from the last state, its time divided by the caves in it."
                   + scale + "\n")
    else:
        print(f"kernels_report: warning: no {chap} group: section left out", file=sys.stderr)

    # --- the fills, per cave (benches/fill.rs) ---------------------------------------------------
    fg = "fill_per_cave"
    fill_hint = "run `cargo bench --bench fill`"
    if os.path.isdir(os.path.join(t, "criterion", fg)):
        gdir = os.path.join(t, "criterion", fg)
        fpaths = set()
        for d in os.listdir(gdir):
            m = re.fullmatch(r"bernoulli_90x140_(.+)_(single|lanes)", d)
            if m:
                fpaths.add(m.group(1))
        fpaths = [p for p in PATH_ORDER if p in fpaths] + sorted(p for p in fpaths if p not in PATH_ORDER)
        out.append(f"## The fills, per cave (`{fg}`, benches/fill.rs)\n")
        out.append("| path | Bernoulli(0.45) 90x140, one cave | in lanes: caves | in lanes, per cave "
                   "| exact count 624 of 19x77 (NetHack) |")
        out.append("|---|---|---|---|---|")
        for p in fpaths:
            single = Est(t, fg, f"bernoulli_90x140/{p}/single", fill_hint)
            lanes = Est(t, fg, f"bernoulli_90x140/{p}/lanes", fill_hint)
            exact = Est(t, fg, f"exact_count_19x77_624/{p}", fill_hint)
            ests += [single, lanes, exact]
            out.append(f"| {path_cell(p)} | {fmt_time(single.ns / single.elems)} | {lanes.elems} "
                       f"| {fmt_time(lanes.ns / lanes.elems)} | {fmt_time(exact.ns / exact.elems)} |")
        out.append("")
        numpy = Est(t, fg, "numpy_90x140", fill_hint)
        ests.append(numpy)
        verdict = "met" if numpy.ns <= 10_000 else "**not met**"
        out.append(f"numpy's generator replayed bit for bit (`rng = \"numpy\"`, what `reproduce chapter` "
                   f"uses; SeedSequence + PCG64 + `random() < p`, the PCG chains in the active SIMD path's lanes): "
                   f"**{fmt_time(numpy.ns)}** per 90x140 cave (`numpy_90x140`; target <= 10 us: {verdict}).\n")
    else:
        print(f"kernels_report: warning: no {fg} group: section left out", file=sys.stderr)

    # --- in place and two radii: the dispatched path against the oracle --------------------------
    rows_out = []
    nh = "nethack_pass1_19x77"
    rt = None
    lanes_note = None
    if os.path.isdir(os.path.join(t, "criterion", nh)):
        for order, label in [("col_major", "in place col-major B678/S45678 (NetHack pass 1), 19x77, outside wall"),
                             ("row_major", "in place row-major B678/S45678, 19x77, outside wall")]:
            fast = Est(t, nh, f"fast_{order}", inpl_hint)
            oracle = Est(t, nh, f"oracle_{order}", inpl_hint)
            ests += [fast, oracle]
            rows_out.append((label, fast, oracle))
        rt = Est(t, nh, "transpose_round_trip", inpl_hint)
        ests.append(rt)
        # The generator's path: a batch of caves in SIMD lanes (`fast_col_major_lanes<N>`).
        lanes = sorted(d for d in os.listdir(os.path.join(t, "criterion", nh))
                       if d.startswith("fast_col_major_lanes"))
        for d in lanes:
            n = int(d[len("fast_col_major_lanes"):])
            fast = Est(t, nh, d, inpl_hint)
            ests.append(fast)
            single = rows_out[0][1]
            lanes_note = (f"NetHack's pass 1 as the generator runs it, {n} caves in the SIMD lanes "
                          f"(`{d}`): {fmt_time(fast.ns / n)} per cave per step, transposes included, "
                          f"{fmt_ratio(fast.rate() / single.rate())} the one-grid kernel above.\n")
    else:
        print(f"kernels_report: warning: no {nh} group: in-place rows left out", file=sys.stderr)
    two = shape_groups(t, "r1ge5_r2le2_")
    for rows, cols, group in two:
        fast = Est(t, group, "fast", inpl_hint)
        oracle = Est(t, group, "oracle", inpl_hint)
        ests += [fast, oracle]
        rows_out.append((f"two-radius R1>=5/R2<=2, {rows}x{cols}, outside floor", fast, oracle))
    if not two:
        print("kernels_report: warning: no r1ge5_r2le2_<rows>x<cols> group: two-radius rows left out",
              file=sys.stderr)
    if rows_out:
        out.append("## In place and two radii (`cargo bench --bench inplace`)\n")
        out.append(f"The fast kernels run on the dispatched path (`Simd::active()`: `{dispatched}` "
                   f"here).\n")
        out.append("| kernel | fast, per step | fast cell-updates/s | oracle cell-updates/s | fast / oracle |")
        out.append("|---|---|---|---|---|")
        for label, fast, oracle in rows_out:
            out.append(f"| {label} | {fmt_time(fast.ns)} | {fmt_rate(fast.rate())} "
                       f"| {fmt_rate(oracle.rate())} | {fmt_ratio(fast.rate() / oracle.rate())} |")
        out.append("")
        if rt is not None:
            out.append(f"The column-major in-place step is a row-major one on the transposed grid; "
                       f"the two transposes of the 19x77 area cost {fmt_time(rt.ns)} of it.\n")
        if lanes_note is not None:
            out.append(lanes_note)

    check_fresh(ests, "target/criterion")

    # --- instruction census ------------------------------------------------------------------------
    if a.asm:
        text = ""
        if os.path.exists(a.asm):
            with open(a.asm) as f:
                text = f.read().strip()
        if text:
            out.append("## Instruction census\n")
            out.append("Instruction census of the release binary's dispatched AVX-512 clone richest in "
                       "`vpternlog` (the carry-save adders of the step kernels; `objdump -d` piped "
                       "through `scripts/asm_census.py`): proof that the 512-bit path is compiled in, "
                       "and what it is made of. Its first line names the clone and its size:\n")
            out.append("```text\n" + text + "\n```\n")
        else:
            why = "is empty" if os.path.exists(a.asm) else "does not exist"
            print(f"kernels_report: warning: instruction census {a.asm} {why}: the census section says so",
                  file=sys.stderr)
            out.append("## Instruction census\n")
            out.append(f"Not available in this run: the census of the AVX-512 step clone "
                       f"(`objdump -d` of the release binary, `{a.asm}`) {why}.\n")
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--target", default=os.environ.get("CARGO_TARGET_DIR", "target"))
    ap.add_argument("--out", default="results/kernels.md")
    ap.add_argument("--provenance", default="")
    ap.add_argument("--asm", default="", help="file with the instruction census of step_sync")
    a = ap.parse_args()
    try:
        out = build(a)
    except ReportError as e:
        fail(str(e))
    except OSError as e:
        fail(f"cannot read criterion output: {e}")
    with open(a.out, "w") as f:
        f.write("\n".join(out).rstrip("\n") + "\n")
    print(f"wrote {a.out}")


if __name__ == "__main__":
    main()
