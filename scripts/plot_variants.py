#!/usr/bin/env python3
"""Plots and tables for results/variants/, from one 10,000-seed sweep per preset.

Why this exists: `cavesweep sweep` evaluates one gate per sweep (its clauses ANDed), but the
report wants pass rates for several *named* gates ("playable", "open", ...) that share clauses.
So scripts/make_results.sh runs each preset once over seeds 0..10000 with `--per-seed all` and
with every clause of every named gate given as `--gate` (the engine then counts each clause's
failures in summary.csv's `fail[<clause>]` columns, and its `passed` is the AND of all of them).
This script re-evaluates every clause on seeds.csv, checks that its counts equal the engine's
`fail[...]` columns and `passed` column exactly (so the Python gate evaluation cannot silently
drift from the engine's), and then combines clauses into the named gates.

Usage (normally called by scripts/make_results.sh):
  plot_variants.py --print-gates
      print one `--gate` expression per clause, one a line, for the sweeps;
  plot_variants.py --work DIR --out results/variants --presets P1 P2 ... \
                   --date D --machine M --command C
      read DIR/<preset>/{manifest.json,summary.csv,trajectory.csv,components.csv,seeds.csv},
      write <out>/<preset>/trajectory.png, <out>/all-presets.png, <out>/README.md and
      DIR/typical_seeds.tsv (the seed whose final wall fraction is closest to the median).

Only matplotlib is needed (headless: the Agg backend).
"""

import argparse
import csv
import json
import math
import os
import re
import statistics
import sys
import tomllib

# The named gates of the report. Each is a list of clauses ANDed; a clause is `metric op value`
# exactly as the engine's gate language writes it, so the same strings go to `--gate`.
GATES = [
    ("playable", ["connected_fraction>=0.99", "floor_fraction>=0.4"],
     "the spawn reaches >= 99% of the floor and the floor is >= 40% of the map"),
    ("open", ["floor_fraction>=0.6"], "the floor is >= 60% of the map"),
    ("one piece", ["components<=1"], "all floor is one connected component (the recipe's connectivity)"),
    ("spawn on floor", ["min_width>=1"], "the spawn cell is FLOOR (min_width is 0 for a WALL spawn)"),
    ("no bottleneck", ["min_width>=2"],
     "every cell of the spawn's component lies in an all-floor 2x2 square (no 1-wide passage)"),
]

CLAUSE_RE = re.compile(r"^\s*([a-z_]+)\s*(<=|>=|==|!=|<|>)\s*([-+0-9.eE]+)\s*$")


def all_clauses():
    """Every distinct clause of GATES, in first-seen order."""
    seen = []
    for _, clauses, _ in GATES:
        for c in clauses:
            if c not in seen:
                seen.append(c)
    return seen


def parse_clause(text):
    m = CLAUSE_RE.match(text)
    if not m:
        sys.exit(f"plot_variants.py: cannot parse gate clause {text!r}")
    return m.group(1), m.group(2), float(m.group(3))


def holds(clause, value):
    """The engine's semantics: a NaN (empty) metric fails every comparison except `!=`."""
    _, op, ref = clause
    if math.isnan(value):
        return op == "!="
    return {
        "<": value < ref,
        "<=": value <= ref,
        ">": value > ref,
        ">=": value >= ref,
        "==": value == ref,
        "!=": value != ref,
    }[op]


def num(s):
    return float("nan") if s == "" else float(s)


def read_csv(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def step_labels(recipe):
    """Names of trajectory steps: the fill, each pass application, each post-step."""
    labels = ["fill"]
    for p in recipe.get("pass", []):
        rep = int(p.get("repeat", 1))
        for r in range(rep):
            labels.append(p["rule"] + (f" #{r + 1}" if rep > 1 else ""))
    labels.extend(str(s) for s in recipe.get("post", []))
    return labels


class Preset:
    """One preset's sweep folder, parsed, with the gate counts cross-checked."""

    def __init__(self, name, folder):
        self.name = name
        with open(os.path.join(folder, "manifest.json")) as f:
            self.manifest = json.load(f)
        self.recipe = tomllib.loads(self.manifest["sweep"]["recipe"])
        summary = read_csv(os.path.join(folder, "summary.csv"))
        if len(summary) != 1:
            sys.exit(f"{folder}/summary.csv: expected 1 grid point, found {len(summary)}")
        self.summary = summary[0]
        self.traj = [{k: num(v) for k, v in r.items()} for r in read_csv(os.path.join(folder, "trajectory.csv"))]
        self.components = {int(r["components"]): int(r["caves"]) for r in read_csv(os.path.join(folder, "components.csv"))}
        self.seeds = []
        with open(os.path.join(folder, "seeds.csv"), newline="") as f:
            for r in csv.DictReader(f):
                self.seeds.append({k: (int(v) if k in ("seed", "passed") else num(v)) for k, v in r.items()})
        self.n = len(self.seeds)
        if self.n != int(self.summary["seeds"]):
            sys.exit(f"{folder}: seeds.csv has {self.n} rows, summary says {self.summary['seeds']}")
        self.labels = step_labels(self.recipe)
        if len(self.labels) != len(self.traj):
            self.labels = [str(i) for i in range(len(self.traj))]
        self.check_gates()

    def check_gates(self):
        """Count each clause's passes in Python; demand equality with the engine's counts."""
        self.clause_pass = {}
        engine_fail_cols = {}
        for col in self.summary:
            if col.startswith("fail[") and col.endswith("]"):
                engine_fail_cols[parse_clause(col[5:-1])] = int(self.summary[col])
        and_all = 0
        for text in all_clauses():
            cl = parse_clause(text)
            ok = [holds(cl, s[cl[0]]) for s in self.seeds]
            self.clause_pass[text] = ok
            fails = ok.count(False)
            if cl not in engine_fail_cols:
                sys.exit(f"{self.name}: summary.csv has no fail[{text}] column (sweep run without that gate?)")
            if engine_fail_cols[cl] != fails:
                sys.exit(f"{self.name}: clause {text}: Python counts {fails} failures, engine {engine_fail_cols[cl]}")
        for i, s in enumerate(self.seeds):
            mine = all(self.clause_pass[t][i] for t in all_clauses())
            if int(mine) != s["passed"]:
                sys.exit(f"{self.name}: seed {s['seed']}: Python AND={mine}, engine passed={s['passed']}")
            and_all += mine
        if and_all != int(self.summary["passed"]):
            sys.exit(f"{self.name}: Python AND passes {and_all}, engine {self.summary['passed']}")
        self.gate_rate = {}
        for gname, clauses, _ in GATES:
            passes = sum(all(self.clause_pass[c][i] for c in clauses) for i in range(self.n))
            self.gate_rate[gname] = passes / self.n
        self.gate_rate["all clauses (engine)"] = float(self.summary["pass_rate"])

    def stat(self, metric, s):
        return num(self.summary[f"{metric}_{s}"])

    def share(self, pred):
        return sum(1 for s in self.seeds if pred(s)) / self.n

    def typical_seed(self):
        """The seed whose final wall fraction is closest to the median (ties: lowest seed)."""
        med = statistics.median(s["wall_fraction"] for s in self.seeds)
        best = min(self.seeds, key=lambda s: (abs(s["wall_fraction"] - med), s["seed"]))
        return best["seed"], best["wall_fraction"], med


def pct(x, n=None):
    """A share as a percentage that never rounds a non-zero share to 0.0% or a partial one to
    100.0%: those are shown with the count (`x` is a fraction; `n` the number of caves)."""
    if n is None or x in (0, 1):
        return f"{100 * x:.1f}%" if x not in (0, 1) else f"{100 * x:.0f}%"
    k = round(x * n)
    text = f"{100 * x:.1f}%"
    if text in ("0.0%", "100.0%"):
        text = f"{100 * x:.2f}% ({k} of {n})"
    return text


def plot_one(ax, p, color, label=None):
    xs = list(range(len(p.traj)))
    ax.fill_between(xs, [r["p05"] for r in p.traj], [r["p95"] for r in p.traj], color=color, alpha=0.25,
                    linewidth=0, label=None if label is None else f"{label} p05-p95")
    ax.plot(xs, [r["mean"] for r in p.traj], color=color, marker="o", markersize=3, label=label and f"{label} mean")


def save(fig, path):
    # No "Software" chunk: the PNG bytes then depend only on the data and matplotlib's drawing.
    fig.savefig(path, dpi=110, metadata={"Software": None})


def plots(presets, out):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for p in presets:
        fig, ax = plt.subplots(figsize=(7, 4.2))
        xs = list(range(len(p.traj)))
        ax.fill_between(xs, [r["min"] for r in p.traj], [r["max"] for r in p.traj], color="0.85", linewidth=0,
                        label="min-max")
        ax.fill_between(xs, [r["p05"] for r in p.traj], [r["p95"] for r in p.traj], color=colors[0], alpha=0.35,
                        linewidth=0, label="p05-p95")
        ax.plot(xs, [r["mean"] for r in p.traj], color=colors[0], marker="o", markersize=4, label="mean")
        ax.set_xticks(xs)
        ax.set_xticklabels(p.labels, rotation=30, ha="right", fontsize=8)
        ax.set_ylabel("wall fraction")
        ax.set_xlabel("step (0 = after the fill, then each pass application, then each post-step)", fontsize=8)
        rows, cols = p.recipe["rows"], p.recipe["cols"]
        ax.set_title(f"{p.name}: wall fraction per step, {p.n} seeds, {rows}x{cols}", fontsize=10)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
        fig.tight_layout()
        os.makedirs(os.path.join(out, p.name), exist_ok=True)
        save(fig, os.path.join(out, p.name, "trajectory.png"))
        plt.close(fig)

    fig, ax = plt.subplots(figsize=(8, 4.6))
    for i, p in enumerate(presets):
        plot_one(ax, p, colors[i % len(colors)], label=p.name)
    ax.set_xlabel("step (0 = after the fill, then each pass application, then each post-step)")
    ax.set_ylabel("wall fraction")
    ax.set_title(f"Wall fraction per step, all presets (mean and p05-p95 over {presets[0].n} seeds)", fontsize=10)
    ax.set_xticks(range(max(len(p.traj) for p in presets)))
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7, ncol=2)
    fig.tight_layout()
    save(fig, os.path.join(out, "all-presets.png"))
    plt.close(fig)


def commentary(p):
    """A few sentences built only from the measured numbers (so a rerun cannot make them stale)."""
    w0, wf = p.traj[0]["mean"], p.traj[-1]["mean"]
    deltas = [p.traj[i + 1]["mean"] - p.traj[i]["mean"] for i in range(len(p.traj) - 1)]
    big = max(range(len(deltas)), key=lambda i: abs(deltas[i]))
    rises = [i for i, d in enumerate(deltas) if d > 0]
    falls = [i for i, d in enumerate(deltas) if d < 0]
    if rises and falls:
        shape = (f"is not monotone: it rises at {len(rises)} step(s) and falls at {len(falls)}; the largest move is "
                 f"{deltas[big]:+.3f} at step {big + 1} ({p.labels[big + 1]})")
    else:
        shape = (f"{'falls' if falls else 'rises'} at every step, most at step {big + 1} "
                 f"({deltas[big]:+.3f}, {p.labels[big + 1]}) and least at the last ({deltas[-1]:+.3f})")
    s1 = (f"The wall fraction goes from {w0:.3f} after the fill to {wf:.3f} (sd {p.traj[-1]['sd']:.3f}) "
          f"and {shape}.")
    one = p.components.get(1, 0) / p.n
    cmax = max(p.components)
    s2 = (f"{pct(one, p.n)} of caves are one piece (mean {p.stat('components', 'mean'):.2f} components, at most {cmax}; the largest holds "
          f"{100 * p.stat('largest_fraction', 'mean'):.1f}% of the floor on average)")
    wall_spawn = p.share(lambda s: s["min_width"] == 0)
    s2 += (f"; the spawn is WALL in {pct(wall_spawn, p.n)} of caves" if wall_spawn > 0 else "; the spawn is always FLOOR")
    low = p.share(lambda s: s["min_width"] >= 1 and s["connected_fraction"] < 0.99)
    s2 += (f", and a FLOOR spawn reaches < 99% of the floor in a further {pct(low, p.n)}." if low > 0
           else ", and a FLOOR spawn always reaches >= 99% of the floor.")
    # What limits "playable": the share failing each of its clauses.
    pl = dict((g, c) for g, c, _ in GATES)["playable"]
    fail = {c: p.clause_pass[c].count(False) / p.n for c in pl}
    worst = max(pl, key=lambda c: fail[c])
    s3 = f"Playable: {pct(p.gate_rate['playable'], p.n)}"
    s3 += (f", limited mostly by `{worst}` (fails {pct(fail[worst], p.n)})." if fail[worst] > 0 else ".")
    s3 += f" A spawn component with no 1-wide cell (`min_width>=2`) occurs in {pct(p.gate_rate['no bottleneck'], p.n)}."
    return " ".join([s1, s2, s3])


def readme(presets, out, args):
    L = []
    L.append("# Variants: every preset over 10,000 seeds")
    L.append("")
    L.append(f"Made by `{args.command}` on {args.date}, machine: {args.machine}.")
    L.append("")
    L.append("Each preset ran once as `cavesweep sweep --preset NAME --seeds 0..10000 --metrics all "
             "--per-seed all` with every gate clause below given as `--gate` (the exact command is in "
             "`NAME/manifest.json`). The engine counts each clause's failures (`fail[...]` in "
             "`NAME/summary.csv`) and its `passed` is all clauses ANDed. `scripts/plot_variants.py` "
             "re-evaluates every clause on the per-seed rows (seeds.csv, kept out of git under the work "
             "folder: ~0.7 MB per preset), checks that its counts equal the engine's exactly, and combines "
             "clauses into the named gates. The RNG is xoshiro (the presets' default), so these are not "
             "the chapter's numpy seeds (see `results/chapter/`).")
    L.append("")
    L.append("Files per preset: `NAME/summary.csv`, `NAME/trajectory.csv`, `NAME/components.csv`, "
             "`NAME/manifest.json` (the engine's output, copied), `NAME/trajectory.png`. "
             "All presets: `all-presets.png`.")
    L.append("")
    L.append("## Metrics (final cave)")
    L.append("")
    L.append("Means from the engine's exact sums; p05/p95 from its HDR histogram (3 significant digits); "
             "% one piece from components.csv.")
    L.append("")
    L.append("| preset | grid | steps | wall fraction after fill | final wall fraction mean (sd) [p05, p95] "
             "| components mean [max] | one piece | largest component / floor | connected fraction mean [p05] "
             "| reach depth mean |")
    L.append("|---|---|---|---|---|---|---|---|---|---|")
    for p in presets:
        L.append(
            f"| {p.name} | {p.recipe['rows']}x{p.recipe['cols']} | {len(p.traj) - 1} "
            f"| {p.traj[0]['mean']:.4f} "
            f"| {p.stat('wall_fraction', 'mean'):.4f} ({p.stat('wall_fraction', 'sd'):.4f}) "
            f"[{p.stat('wall_fraction', 'p05'):.4f}, {p.stat('wall_fraction', 'p95'):.4f}] "
            f"| {p.stat('components', 'mean'):.3f} [{max(p.components)}] "
            f"| {pct(p.components.get(1, 0) / p.n, p.n)} "
            f"| {p.stat('largest_fraction', 'mean'):.4f} "
            f"| {p.stat('connected_fraction', 'mean'):.4f} [{p.stat('connected_fraction', 'p05'):.4f}] "
            f"| {p.stat('reach_depth', 'mean'):.1f} |")
    L.append("")
    L.append("## Gate pass rates")
    L.append("")
    L.append("| gate | clauses | meaning | " + " | ".join(p.name for p in presets) + " |")
    L.append("|---|---|---|" + "---|" * len(presets))
    for gname, clauses, meaning in GATES:
        expr = " && ".join(clauses)
        L.append(f"| {gname} | `{expr}` | {meaning} | " + " | ".join(pct(p.gate_rate[gname], p.n) for p in presets) + " |")
    L.append("")
    L.append("The engine's own `pass_rate` in `NAME/summary.csv` is every clause above ANDed (so it is at "
             "most the `no bottleneck` rate): "
             + ", ".join(f"{p.name} {pct(p.gate_rate['all clauses (engine)'], p.n)}" for p in presets) + ". "
             "`no bottleneck` is strict by construction: a single floor cell of the spawn's component "
             "that no all-floor 2x2 square covers (a 1-wide nook or passage) fails it, which is why it "
             "almost never passes on these rules.")
    L.append("")
    conn = ", ".join(f"{p.name} {p.recipe.get('connectivity', 4)}" for p in presets)
    L.append(f"Connectivity per recipe (components, connected fraction, reach depth): {conn}.")
    L.append("")
    L.append("## Wall fraction per step")
    L.append("")
    L.append("![all presets](all-presets.png)")
    L.append("")
    for p in presets:
        L.append(f"### {p.name}")
        L.append("")
        L.append(commentary(p))
        L.append("")
        L.append(f"![{p.name}]({p.name}/trajectory.png)")
        L.append("")
    with open(os.path.join(out, "README.md"), "w") as f:
        f.write("\n".join(L))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--print-gates", action="store_true")
    ap.add_argument("--work")
    ap.add_argument("--out")
    ap.add_argument("--presets", nargs="+")
    ap.add_argument("--date", default="")
    ap.add_argument("--machine", default="")
    ap.add_argument("--command", default="scripts/make_results.sh")
    args = ap.parse_args()
    if args.print_gates:
        print("\n".join(all_clauses()))
        return
    if not (args.work and args.out and args.presets):
        ap.error("--work, --out and --presets are required (or --print-gates)")
    presets = [Preset(name, os.path.join(args.work, name)) for name in args.presets]
    os.makedirs(args.out, exist_ok=True)
    plots(presets, args.out)
    readme(presets, args.out, args)
    with open(os.path.join(args.work, "typical_seeds.tsv"), "w") as f:
        for p in presets:
            seed, wf, med = p.typical_seed()
            f.write(f"{p.name}\t{seed}\t{wf!r}\t{med!r}\n")
    for p in presets:
        print(f"{p.name}: " + ", ".join(f"{g} {pct(r, p.n)}" for g, r in p.gate_rate.items()))


if __name__ == "__main__":
    main()
