"""Reports through Arrow and Parquet and back: the one columnar form is ldp-arrow's,
in Rust; pyarrow only carries it."""

import pickle

import numpy as np
import pytest

import ldp

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

PROTOCOLS = ["grr", "ss", "oue", "olh", "she", "the"]


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_a_parquet_round_trip_keeps_reports_and_mechanism(protocol, tmp_path):
    m = ldp.mechanism(protocol, k=20, eps=2.0)
    items = np.arange(1000) % 20
    reports = m.perturb(items, seed=3)
    table = reports.to_arrow()
    assert table.schema.metadata[b"ldp.spec"] == m.spec.encode()
    # The spec in pyarrow's metadata makes the mechanism back, bytes and all.
    assert ldp.Mechanism.from_spec(table.schema.metadata[b"ldp.spec"]) == m
    assert ldp.Reports.from_arrow(table) == reports
    # Parquet: a file, and a directory of two halves, written by pyarrow.
    pq.write_table(table, tmp_path / "all.parquet")
    back = ldp.Reports.read_parquet(tmp_path / "all.parquet")
    assert back == reports and back.mechanism == m
    halves = tmp_path / "halves"
    halves.mkdir()
    pq.write_table(table.slice(0, 400), halves / "a.parquet")
    pq.write_table(table.slice(400), halves / "b.parquet")
    assert ldp.Reports.from_arrow(str(halves)) == reports
    # Aggregating the halves apart and merging gives the whole estimate.
    first, second = m.aggregator(), m.aggregator()
    first.add(ldp.Reports.read_parquet(halves / "a.parquet"))
    second.add(ldp.Reports.read_parquet(halves / "b.parquet"))
    first.merge(pickle.loads(pickle.dumps(second)))
    whole = m.aggregator()
    whole.add(reports)
    np.testing.assert_allclose(first.estimate(), whole.estimate(), rtol=1e-12, atol=1e-12)


def test_bitmap_sets_and_tables_without_a_spec():
    m = ldp.mechanism("oue", k=12, eps=1.0)
    reports = m.perturb(np.arange(300) % 12, seed=5)
    bitmap = reports.to_arrow(encoding="bitmap")
    assert pa.types.is_fixed_size_binary(bitmap.schema.field("report").type)
    assert ldp.Reports.from_arrow(bitmap) == reports
    bare = bitmap.replace_schema_metadata(None)
    with pytest.raises(ldp.ParamError, match="give the mechanism"):
        ldp.Reports.from_arrow(bare)
    assert ldp.Reports.from_arrow(bare, m) == reports
    other = ldp.mechanism("oue", k=12, eps=2.0)
    with pytest.raises(ldp.ParamError, match="not the mechanism given"):
        ldp.Reports.from_arrow(bitmap, other)


def test_bad_tables_are_refused_naming_the_row(tmp_path):
    m = ldp.mechanism("grr", k=5, eps=1.0)
    table = pa.table({"report": pa.array([1, 7, 2], type=pa.uint32())})
    with pytest.raises(ldp.ReportError, match="row 1"):
        ldp.Reports.from_arrow(table, m)
    with pytest.raises(FileNotFoundError):
        ldp.Reports.read_parquet(tmp_path / "nope.parquet")
    with pytest.raises(TypeError):
        ldp.Reports.from_arrow(42, m)


def test_two_report_columns_are_ambiguous(tmp_path):
    """Issue 43, item 9: the first of two `report` columns was read silently."""
    m = ldp.mechanism("grr", k=5, eps=1.0)
    two = pa.Table.from_arrays(
        [pa.array([1, 2], type=pa.uint32()), pa.array([3, 4], type=pa.uint32())],
        names=["report", "report"],
    )
    with pytest.raises(ldp.ReportError, match="2 columns named `report`"):
        ldp.Reports.from_arrow(two, m)
    pq.write_table(two, tmp_path / "two.parquet")
    # (Which subclass a file's error gets is issue 44's item 4.)
    with pytest.raises(ldp.LdpError, match="2 columns named `report`"):
        ldp.Reports.read_parquet(tmp_path / "two.parquet", m)


@pytest.mark.parametrize("compression", ["zstd", "gzip", "brotli", "lz4", "snappy", "none"])
def test_files_in_every_compression_pyarrow_writes_are_read(compression, tmp_path):
    """Issue 43, item 14: zstd, gzip, brotli and lz4 files were refused ("Disabled feature
    at compile time")."""
    m = ldp.mechanism("oue", k=20, eps=2.0)
    reports = m.perturb(np.arange(1000) % 20, seed=3)
    pq.write_table(reports.to_arrow(), tmp_path / "r.parquet", compression=compression)
    assert ldp.Reports.read_parquet(tmp_path / "r.parquet") == reports


def test_reports_survive_pandas_and_one_cause_is_one_error(tmp_path):
    # Issue 44, item 4: pandas turns LH's seed and value into int64 (a struct of dicts);
    # they are cast losslessly, a value that does not fit is refused by name, and
    # read_parquet and from_arrow raise the same error for it.
    pytest.importorskip("pandas")
    m = ldp.mechanism("olh", k=16, eps=1.0)
    reports = m.perturb(np.arange(40) % 16, seed=5)
    frame = reports.to_arrow().to_pandas()
    table = pa.Table.from_pandas(frame, preserve_index=False)
    assert pa.types.is_int64(table.schema.field("report").type.field("seed").type)
    assert ldp.Reports.from_arrow(table, m) == reports
    g = ldp.mechanism("grr", k=16, eps=1.0)
    grr = pa.table({"report": pa.array([3, 0, 15], pa.int64())})
    assert ldp.Reports.from_arrow(grr, g).y.tolist() == [3, 0, 15]
    bad = pa.table({"report": pa.array([3, -1], pa.int64())})
    pq.write_table(bad, tmp_path / "bad.parquet")
    message = r"row 1: y = -1 does not fit in UInt32 \(the column is Int64"
    with pytest.raises(ldp.ReportError, match=message):
        ldp.Reports.from_arrow(bad, g)
    with pytest.raises(ldp.ReportError, match=message):
        ldp.Reports.read_parquet(tmp_path / "bad.parquet", g)
    floats = pa.table({"report": pa.array([3.0])})
    pq.write_table(floats, tmp_path / "floats.parquet")
    for read in (lambda: ldp.Reports.from_arrow(floats, g), lambda: ldp.Reports.read_parquet(tmp_path / "floats.parquet", g)):
        with pytest.raises(ldp.ReportError, match="column `report` has type Float64"):
            read()
