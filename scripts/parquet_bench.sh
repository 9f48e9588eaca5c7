#!/usr/bin/env bash
# Parquet against CSV on a big per-seed table (issue 41), end to end: the same sweep of N seeds
# (default 10 million) with `--per-seed all`, written as CSV and as Parquet in the same run
# (alternated REPEATS times), each under /usr/bin/time -v; then the tables loaded by pandas and
# DuckDB. Writes results/parquet.md (or $OUT) with the commands and checks the issue's targets:
#
#   - seeds.parquet is at most 0.3x the size of seeds.csv;
#   - the Parquet sweep runs at >= 0.9x the CSV sweep's caves/s (best of the repeats of each);
#   - the Parquet sweep's peak RSS is under 100 MB;
#   - DuckDB's count(*) over seeds.parquet is exactly N, and every column's sum equals the CSV's
#     (to 1e-12: DuckDB adds in parallel, in no fixed order).
#
# Exits 1 if a target is missed. A benchmark, not a unit test: a few minutes on 2 cores.
#
#   scripts/parquet_bench.sh                       # release binary, 10M seeds, 2 threads
#   N=1000000 REPEATS=1 scripts/parquet_bench.sh   # a quick look
#
# Python (pandas, pyarrow, duckdb from PyPI) comes from a venv under target/ ($PARQUET_VENV,
# default target/parquet-venv), made on first use; never the system Python.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN="${BIN:-target/release/cavesweep}"
N="${N:-10000000}"
THREADS="${THREADS:-2}"
REPEATS="${REPEATS:-2}"
WORK="${WORK:-target/parquet-bench}"
OUT="${OUT:-results/parquet.md}"
VENV="${PARQUET_VENV:-target/parquet-venv}"
# classic-4-5 with the metrics whose columns a seed table typically holds: fractions, counts,
# the component count (a flood fill per cave). Every seed kept.
FLAGS=(--preset classic-4-5 --seeds "0..$N" --per-seed all
  --metrics floor_fraction,components,largest_fraction,connected_fraction,boundary
  --threads "$THREADS")

[ -x "$BIN" ] || { echo "parquet_bench: no $BIN (cargo build --release)" >&2; exit 1; }
if ! "$VENV/bin/python" -c 'import pandas, pyarrow, duckdb' >/dev/null 2>&1; then
  python3 -m venv "$VENV" >&2
  "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check pandas pyarrow duckdb >&2
fi
PY="$VENV/bin/python"

rm -rf "$WORK"
mkdir -p "$WORK"
# One sweep: prints "caves/s peak_rss_kb seconds".
run() {
  local fmt=$1 out="$WORK/$1-$2"
  /usr/bin/time -v "$BIN" sweep "${FLAGS[@]}" --format "$fmt" --out "$out" 2>"$out.log" >/dev/null
  local rate rss secs
  rate=$(grep -o '[0-9]* caves/s' "$out.log" | head -1 | cut -d' ' -f1)
  rss=$(grep 'Maximum resident set size' "$out.log" | grep -o '[0-9]*$')
  secs=$(grep -o 'in [0-9.]* s:' "$out.log" | head -1 | cut -d' ' -f2)
  echo "$rate $rss $secs"
}
declare -a CSV_RUNS PQ_RUNS
for i in $(seq 1 "$REPEATS"); do
  CSV_RUNS+=("$(run csv "$i")")
  PQ_RUNS+=("$(run parquet "$i")")
  # Keep the last pair's tables only (disk).
  if [ "$i" -lt "$REPEATS" ]; then rm -rf "$WORK/csv-$i" "$WORK/parquet-$i"; fi
done
CSV_DIR="$WORK/csv-$REPEATS"
PQ_DIR="$WORK/parquet-$REPEATS"
best() { printf '%s\n' "$@" | sort -k1,1n | tail -1; }
CSV_BEST=$(best "${CSV_RUNS[@]}")
PQ_BEST=$(best "${PQ_RUNS[@]}")
PQ_RSS_MAX=$(printf '%s\n' "${PQ_RUNS[@]}" | awk '{print $2}' | sort -n | tail -1)
CSV_RSS_MAX=$(printf '%s\n' "${CSV_RUNS[@]}" | awk '{print $2}' | sort -n | tail -1)
CSV_SIZE=$(stat -c %s "$CSV_DIR/seeds.csv")
PQ_SIZE=$(stat -c %s "$PQ_DIR/seeds.parquet")

# Loading: pandas and DuckDB, each table, timed; DuckDB's count and column sums compared.
LOADS=$("$PY" - "$CSV_DIR/seeds.csv" "$PQ_DIR/seeds.parquet" "$N" <<'EOF'
import sys, time
import duckdb, pandas as pd
csv_path, pq_path, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
def timed(f):
    # Best of two: the machine is shared, and the first read may find the file out of cache.
    best = None
    for _ in range(2):
        t = time.perf_counter(); r = f(); e = time.perf_counter() - t
        best = e if best is None else min(best, e)
    return best, r
t_pd_csv, a = timed(lambda: pd.read_csv(csv_path))
t_pd_pq, b = timed(lambda: pd.read_parquet(pq_path))
assert list(a.columns) == list(b.columns) and len(a) == len(b) == n
del a, b
con = duckdb.connect()
t_dk_csv, c_csv = timed(lambda: con.sql(f"SELECT count(*) FROM read_csv('{csv_path}')").fetchall()[0][0])
t_dk_pq, c_pq = timed(lambda: con.sql(f"SELECT count(*) FROM read_parquet('{pq_path}')").fetchall()[0][0])
cols = [r[0] for r in con.sql(f"DESCRIBE SELECT * FROM read_parquet('{pq_path}')").fetchall()]
sums = ", ".join(f'sum("{c}"::DOUBLE)' for c in cols)
t_dk_sum_csv, s_csv = timed(lambda: con.sql(f"SELECT {sums} FROM read_csv('{csv_path}')").fetchall()[0])
t_dk_sum_pq, s_pq = timed(lambda: con.sql(f"SELECT {sums} FROM read_parquet('{pq_path}')").fetchall()[0])
# DuckDB adds doubles in parallel, in no fixed order: equal to 1e-12, relatively.
same = len(s_csv) == len(s_pq) and all(abs(x - y) <= 1e-12 * max(abs(x), abs(y), 1.0) for x, y in zip(s_csv, s_pq))
print(f"{t_pd_csv:.2f} {t_pd_pq:.2f} {t_dk_csv:.2f} {t_dk_pq:.2f} {t_dk_sum_csv:.2f} {t_dk_sum_pq:.2f} {c_pq} {int(c_pq == n and c_csv == n)} {int(same)}")
EOF
)
read -r PD_CSV PD_PQ DK_CSV DK_PQ DKS_CSV DKS_PQ COUNT COUNT_OK SUMS_OK <<<"$LOADS"
read -r CSV_RATE _ CSV_SECS <<<"$CSV_BEST"
read -r PQ_RATE _ PQ_SECS <<<"$PQ_BEST"
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", a / b }'; }
SIZE_RATIO=$(ratio "$PQ_SIZE" "$CSV_SIZE")
RATE_RATIO=$(ratio "$PQ_RATE" "$CSV_RATE")
ok() { if awk "BEGIN { exit !($1) }"; then echo yes; else echo "**NO**"; fi; }
SIZE_OK=$(ok "$SIZE_RATIO <= 0.3")
RATE_OK=$(ok "$RATE_RATIO >= 0.9")
RSS_OK=$(ok "$PQ_RSS_MAX < 100 * 1024")
CNT_OK=$( [ "$COUNT_OK" = 1 ] && [ "$SUMS_OK" = 1 ] && echo yes || echo "**NO**")
mb() { awk -v k="$1" 'BEGIN { printf "%.1f", k / 1024 }'; }
mib() { awk -v b="$1" 'BEGIN { printf "%.1f", b / 1048576 }'; }

mkdir -p "$(dirname "$OUT")"
cat >"$OUT" <<EOF
# Parquet against CSV: a ${N}-row per-seed table (issue 41)

$(date -u +%Y-%m-%d), $(lscpu | sed -n 's/^Model name: *//p' | head -1), $(nproc) cores (shared), cavesweep $(git rev-parse --short HEAD),
\`scripts/parquet_bench.sh\` (N=$N, THREADS=$THREADS, REPEATS=$REPEATS), the release binary. The sweep, CSV then Parquet,
alternated $REPEATS times; best caves/s of each, peak RSS the largest of the runs:

\`\`\`sh
$BIN sweep ${FLAGS[*]} --format csv --out DIR
$BIN sweep ${FLAGS[*]} --format parquet --out DIR
\`\`\`

| | CSV | Parquet | Parquet / CSV | target | met |
|---|---:|---:|---:|---|---|
| seeds table size | $(mib "$CSV_SIZE") MiB | $(mib "$PQ_SIZE") MiB | $SIZE_RATIO | <= 0.3 | $SIZE_OK |
| sweep rate (write included) | $CSV_RATE caves/s ($CSV_SECS s) | $PQ_RATE caves/s ($PQ_SECS s) | $RATE_RATIO | >= 0.9 | $RATE_OK |
| peak RSS | $(mb "$CSV_RSS_MAX") MB | $(mb "$PQ_RSS_MAX") MB | | Parquet < 100 MB | $RSS_OK |
| pandas load (\`read_csv\` / \`read_parquet\`) | $PD_CSV s | $PD_PQ s | $(ratio "$PD_PQ" "$PD_CSV") | | |
| DuckDB \`count(*)\` | $DK_CSV s | $DK_PQ s | $(ratio "$DK_PQ" "$DK_CSV") | exact: $COUNT rows | $CNT_OK |
| DuckDB sum of every column | $DKS_CSV s | $DKS_PQ s | $(ratio "$DKS_PQ" "$DKS_CSV") | equal sums (1e-12) | $([ "$SUMS_OK" = 1 ] && echo yes || echo "**NO**") |

Load times are the best of two reads each (pandas 2 cores; DuckDB's its own threads).
Every run (caves/s, peak RSS in KB, seconds): CSV ${CSV_RUNS[*]/%/;} Parquet ${PQ_RUNS[*]/%/;}
EOF
cat "$OUT"
[ "$SIZE_OK" = yes ] && [ "$RATE_OK" = yes ] && [ "$RSS_OK" = yes ] && [ "$CNT_OK" = yes ]
