"""The Parquet tables (issue 41), read by real consumers: pyarrow, polars and DuckDB read every
column of a sweep's and a search's Parquet files, and every value equals the CSV's, row for row
(an empty CSV field is a null). Also ``read_table`` on either format, with and without pandas
and pyarrow, and ``sweep(format="parquet")``."""

import csv
import sys

import numpy as np
import pytest

import cavesweep as cs

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")
pl = pytest.importorskip("polars")
duckdb = pytest.importorskip("duckdb")

TABLES = ["summary", "trajectory", "components", "seeds"]

SWEEP = [
    "sweep", "--preset", "classic-4-5", "--set", "exit=5,5", "--seeds", "0..400",
    "--vary", "fill=0.40,0.45", "--vary", "post=bridge,keep-largest",
    "--gate", "components<=3", "--gate", "open=floor_fraction>=0.6", "--per-seed", "all",
]  # fmt: skip


def read_csv(path):
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    return rows[0], rows[1:]


def same(text, value):
    """A CSV field and a reader's value are the same: empty and null, 1/0 and True/False,
    numbers exactly (the CSV prints shortest round-trip forms), text as is."""
    if text == "":
        return value is None
    if value is None:
        return False
    if isinstance(value, (bool, np.bool_)):
        return text == ("1" if value else "0")
    if isinstance(value, (int, np.integer)):
        return int(text) == int(value)
    if isinstance(value, (float, np.floating)):
        return float(text) == float(value)
    return text == value


def assert_same_as_csv(csv_path, names, columns, who):
    header, rows = read_csv(csv_path)
    assert list(names) == header, who
    for j, name in enumerate(header):
        col = columns[j]
        assert len(col) == len(rows), (who, name)
        for i, (row, v) in enumerate(zip(rows, col)):
            assert same(row[j], v), f"{who}: {csv_path.name} row {i + 1} column {name}: {row[j]!r} vs {v!r}"


def check_readers(parquet, csv_path):
    """pyarrow, polars and DuckDB each read every column of `parquet` as the CSV has it."""
    t = pq.read_table(parquet)
    d = t.to_pydict()
    assert_same_as_csv(csv_path, t.column_names, [d[n] for n in t.column_names], "pyarrow")
    p = pl.read_parquet(parquet)
    assert_same_as_csv(csv_path, p.columns, [p[n].to_list() for n in p.columns], "polars")
    rel = duckdb.sql(f"SELECT * FROM read_parquet('{parquet}')")
    rows = rel.fetchall()
    assert_same_as_csv(csv_path, rel.columns, [[r[j] for r in rows] for j in range(len(rel.columns))], "duckdb")
    n = duckdb.sql(f"SELECT count(*) FROM read_parquet('{parquet}')").fetchall()[0][0]
    assert n == len(read_csv(csv_path)[1])
    return t


def test_pyarrow_polars_and_duckdb_read_a_sweeps_tables_as_the_csv(cli, tmp_path):
    out = tmp_path / "both"
    cli(*SWEEP, "--format", "both", "--out", out)
    for stem in TABLES:
        t = check_readers(out / f"{stem}.parquet", out / f"{stem}.csv")
        meta = {k.decode(): v.decode() for k, v in t.schema.metadata.items()}
        assert meta["cavesweep.table"] == stem
        assert meta["cavesweep.version"] == cs.__version__
        assert "classic-4-5" in meta["cavesweep.recipe"]
        assert meta["cavesweep.command"].startswith("cavesweep sweep --preset classic-4-5")
    seeds = pq.read_table(out / "seeds.parquet")
    types = dict(zip(seeds.column_names, seeds.schema.types))
    assert types["seed"] == pa.uint64()
    assert types["fill"] == pa.float64() and types["post"] == pa.string()
    assert types["passed"] == pa.bool_() and types["passed[open]"] == pa.bool_()
    assert types["path_length"] == pa.float64()
    assert seeds.column("path_length").null_count > 0
    summary = pq.read_table(out / "summary.parquet")
    types = dict(zip(summary.column_names, summary.schema.types))
    assert types["seeds"] == pa.uint64() and types["recipe"] == pa.string()


def test_pyarrow_polars_and_duckdb_read_a_searchs_parquet_as_the_csv(cli, tmp_path):
    args = ["search", "--preset", "classic-4-5", "--set", "exit=5,5", "--seeds", "0..30000",
            "--where", "components<=2", "--metrics", "path_length,min_width"]  # fmt: skip
    cli(*args, "--out", tmp_path / "found.csv")
    cli(*args, "--out", tmp_path / "found.parquet")
    t = check_readers(tmp_path / "found.parquet", tmp_path / "found.csv")
    assert t.num_rows > 100
    # The Python search writes the same file.
    res = cs.search(
        "classic-4-5", exit=(5, 5), seeds=range(30000), where="components<=2",
        metrics=["path_length", "min_width"], out=tmp_path / "py.parquet", progress=False,
    )  # fmt: skip
    assert len(res) == t.num_rows
    # (Its metadata records the call's command line, in Python's spelling.)
    assert pq.read_table(tmp_path / "py.parquet").equals(t)


def test_read_table_reads_either_format_with_or_without_pandas_and_pyarrow(cli, tmp_path, monkeypatch):
    out = tmp_path / "both"
    cli(*SWEEP, "--format", "both", "--out", out)
    pd = pytest.importorskip("pandas")
    for stem in TABLES:
        a = cs.read_table(out / f"{stem}.csv")
        b = cs.read_table(out / f"{stem}.parquet")
        assert isinstance(a, pd.DataFrame) and isinstance(b, pd.DataFrame)
        assert list(a.columns) == list(b.columns)
        assert len(a) == len(b)
        for c in a.columns:
            if pd.api.types.is_numeric_dtype(a[c]) and pd.api.types.is_numeric_dtype(b[c]):
                assert np.array_equal(a[c].to_numpy(float), b[c].to_numpy(float), equal_nan=True), c
            else:
                assert list(a[c].astype(str)) == list(b[c].astype(str)), c
    # Without pyarrow (nor fastparquet): cavesweep's own reader, numpy columns in a DataFrame;
    # without pandas too: a dict of numpy columns.
    for missing in (["pyarrow", "fastparquet"], ["pyarrow", "fastparquet", "pandas"]):
        with monkeypatch.context() as m:
            for mod in missing:
                m.setitem(sys.modules, mod, None)
            for stem in TABLES:
                got = cs.read_table(out / f"{stem}.parquet")
                if "pandas" in missing:
                    assert isinstance(got, dict)
                    cols = got
                else:
                    assert isinstance(got, pd.DataFrame)
                    cols = {c: got[c].to_numpy() for c in got.columns}
                header, rows = read_csv(out / f"{stem}.csv")
                assert list(cols) == header
                for j, name in enumerate(header):
                    v = cols[name]
                    assert isinstance(v, np.ndarray) and len(v) == len(rows), name
                    for i, r in enumerate(rows):
                        x = v[i]
                        if r[j] == "":
                            assert isinstance(x, float) and np.isnan(x), (stem, name, i)
                        else:
                            assert same(r[j], x.item() if hasattr(x, "item") else x), (stem, name, i, r[j], x)
                if stem == "seeds":
                    assert cols["seed"].dtype == np.uint64
                    assert cols["passed"].dtype == np.bool_
                    assert cols["path_length"].dtype == np.float64


def test_sweep_format_parquet_writes_only_parquet(tmp_path):
    pd = pytest.importorskip("pandas")
    csv_df = cs.sweep("classic-4-5", seeds=range(300), vary={"fill": [0.40, 0.45]}, out=tmp_path / "c", progress=False)
    pq_df = cs.sweep(
        "classic-4-5", seeds=range(300), vary={"fill": [0.40, 0.45]}, out=tmp_path / "p",
        format="parquet", per_seed="all", progress=False,
    )  # fmt: skip
    assert sorted(p.name for p in (tmp_path / "p").iterdir() if p.suffix in (".csv", ".parquet")) == [
        "components.parquet", "seeds.parquet", "summary.parquet", "trajectory.parquet",
    ]  # fmt: skip
    assert list(csv_df.columns) == list(pq_df.columns)
    for c in csv_df.columns:
        if pd.api.types.is_numeric_dtype(csv_df[c]):
            assert np.array_equal(csv_df[c].to_numpy(float), pq_df[c].to_numpy(float), equal_nan=True), c
    assert duckdb.sql(f"SELECT count(*) FROM '{tmp_path / 'p' / 'seeds.parquet'}'").fetchall()[0][0] == 600
    with pytest.raises(ValueError, match="expected csv, parquet or both"):
        cs.sweep("classic-4-5", seeds=10, format="feather", progress=False)
