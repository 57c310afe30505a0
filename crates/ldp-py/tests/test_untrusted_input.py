"""Reports from outside: no single client can deny an aggregation (every reader skips
invalid reports on request, `on_invalid="skip"`, counts them by reason in
`Reports.skipped`, and keeps exactly the valid ones, as `ldp aggregate --on-invalid skip`
does), and the spec survives files that pyarrow and pandas rewrite."""

import json

import numpy as np
import pytest

import ldp

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")


def test_json_lines_skip_exactly_what_the_tool_skips(tmp_path, cli):
    m = ldp.mechanism("oue", k=6, eps=1.5)
    valid = m.perturb(np.arange(3000) % 6, seed=4)
    clean = tmp_path / "clean.jsonl"
    valid.to_jsonl(clean)
    lines = clean.read_text().splitlines()
    bad = ['{"ones":[3,1]}', "garbage", "x" * 50_000, '{"ones":[9]}', "", '{"ones":[2,2]}']
    for i, line in enumerate(bad):
        lines.insert(400 * i + 7, line)
    dirty = tmp_path / "dirty.jsonl"
    dirty.write_text("\n".join(lines) + "\n")
    with pytest.raises(ldp.ReportError, match="line 8"):
        ldp.Reports.from_jsonl(dirty, m)
    got = ldp.Reports.from_jsonl(dirty, m, on_invalid="skip")
    assert got == valid
    counts = {reason: v["count"] for reason, v in got.skipped.items()}
    assert counts == {"unsorted": 1, "malformed": 1, "too-long": 1, "out-of-range": 1, "duplicate": 1}
    assert got.skipped["unsorted"]["first_at"] == "line 8"
    # The tool skips the same lines and says so in its summary.
    summary = tmp_path / "summary.json"
    flags = ["--protocol", "oue", "--k", 6, "--eps", 1.5, "--on-invalid", "skip", "--summary", summary]
    out = cli("aggregate", *flags, stdin=dirty.read_bytes())
    tool = json.loads(summary.read_text())
    assert tool["accepted"] == len(valid)
    assert {r: v["count"] for r, v in tool["reasons"].items()} == counts
    server = m.aggregator()
    server.add(got)
    estimate = [float(line.split(",")[1]) for line in out.decode().splitlines()[1:]]
    assert estimate == server.estimate().tolist()


def test_arrow_tables_and_parquet_files_skip_nulls_and_invalid_rows(tmp_path):
    m = ldp.mechanism("grr", k=5, eps=1.0)
    table = pa.table(
        {"report": pa.array([1, 7, None, 2, 4], type=pa.uint32())},
        metadata={"ldp.spec": m.spec},
    )
    with pytest.raises(ldp.ReportError):
        ldp.Reports.from_arrow(table)
    got = ldp.Reports.from_arrow(table, on_invalid="skip")
    assert got.y.tolist() == [1, 2, 4]
    assert {r: v["count"] for r, v in got.skipped.items()} == {"null": 1, "out-of-range": 1}
    assert got.skipped["null"]["first_at"] == "row 2"
    path = tmp_path / "day.parquet"
    pq.write_table(table, path)
    from_file = ldp.Reports.read_parquet(path, on_invalid="skip")
    assert from_file == got
    assert from_file.skipped["out-of-range"]["first_at"] == f"{path} row 1"


def test_columns_skip_and_a_bad_policy_is_named():
    m = ldp.mechanism("she", k=3, eps=1.0)
    values = np.array([0.5, 0, 0, np.nan, 0, 0, 1e300, 0, 0, 0, 1, 0]).reshape(4, 3)
    r = ldp.Reports.from_arrays(m, values=values, on_invalid="skip")
    assert len(r) == 2
    assert {k: v["count"] for k, v in r.skipped.items()} == {"non-finite": 1, "magnitude": 1}
    assert ldp.Reports.from_arrays(m, values=values[:1]).skipped == {}
    # concat adds the parts' counts; a slice holds none of the skipped reports.
    both = ldp.Reports.concat([r, r])
    assert both.skipped["magnitude"]["count"] == 2 and len(both) == 4
    assert r[:1].skipped == {}
    with pytest.raises(ldp.ParamError, match="on_invalid"):
        ldp.Reports.from_arrays(m, values=values, on_invalid="ignore")


def test_the_spec_survives_pyarrow_and_a_file_without_one_reads_as_named(tmp_path, cli):
    m = ldp.mechanism("olh", k=1000, eps=2.0)
    reports = m.perturb(np.arange(10_000) % 1000, seed=5)
    full = tmp_path / "full.parquet"
    pq.write_table(reports.to_arrow(), full)
    # A pyarrow user filtering one day keeps the spec: it is in the Arrow schema.
    table = pq.read_table(full)
    assert table.schema.metadata[b"ldp.spec"] == m.spec.encode()
    day = tmp_path / "day.parquet"
    pq.write_table(table.slice(0, 5000), day)
    flags = ["--protocol", "olh", "--k", 1000, "--eps", 2, "--input", day]
    cli("aggregate", *flags)
    # A writer that dropped the metadata: the flags (or `mechanism`) stand for the spec.
    bare = tmp_path / "bare.parquet"
    pq.write_table(table.slice(0, 5000).replace_schema_metadata(None), bare)
    flags[-1] = bare
    assert cli("aggregate", *flags) == cli("aggregate", *flags[:-1], day)
    assert ldp.Reports.read_parquet(bare, m) == reports[:5000]


def test_json_lines_follow_the_tools_rules(tmp_path, cli):
    # Issue 24, item 6: one reader's rules. A byte-order mark is accepted, a blank line
    # before a report is not (unless skipping), blank lines at the end are.
    m = ldp.mechanism("grr", k=4, eps=1.0)
    bom = tmp_path / "bom.jsonl"
    bom.write_bytes(b'\xef\xbb\xbf{"y":1}\n{"y":2}\n\n\n')
    assert ldp.Reports.from_jsonl(bom, m).y.tolist() == [1, 2]
    cli("aggregate", "--protocol", "grr", "--k", 4, "--eps", 1, stdin=bom.read_bytes())
    gap = tmp_path / "gap.jsonl"
    gap.write_bytes(b'{"y":1}\n\n{"y":2}\n')
    with pytest.raises(ldp.ReportError, match="line 2: blank line before line 3"):
        ldp.Reports.from_jsonl(gap, m)
    assert ldp.Reports.from_jsonl(gap, m, on_invalid="skip").y.tolist() == [1, 2]


def test_an_aggregator_shared_between_threads_counts_every_batch():
    # Issue 24, item 7: concurrent adds raised "Already borrowed" and lost batches.
    import threading

    m = ldp.mechanism("oue", k=50, eps=1.0)
    batches = [m.perturb(np.arange(20_000) % 50, seed=s) for s in range(8)]
    shared = m.aggregator()
    # One batch first: an estimate before any report is (rightly) an error, and the
    # threads below may not have added anything when the first estimate runs.
    shared.add(batches[0])
    threads = [threading.Thread(target=shared.add, args=(b,)) for b in batches[1:]]
    for t in threads:
        t.start()
    estimates = [shared.estimate() for _ in range(20)]  # while adding
    for t in threads:
        t.join()
    assert shared.n == 160_000 and all(len(e) == 50 for e in estimates)
    one_by_one = m.aggregator()
    for b in batches:
        one_by_one.add(b)
    assert shared.counts.tolist() == one_by_one.counts.tolist()
    shared.merge(shared)
    assert shared.n == 320_000


def test_an_unpickled_state_must_match_its_protocol():
    # Issue 24, item 8: an edited protocol name built "grr" around an OUE state.
    import pickle

    agg = ldp.mechanism("oue", k=4, eps=1.0).aggregator()
    fn, (state, protocol, clip) = agg.__reduce__()
    assert fn(state, protocol, clip).n == 0
    with pytest.raises(ldp.AggregateError, match='not of protocol "grr"'):
        fn(state, "grr", clip)
    assert pickle.loads(pickle.dumps(agg)).mechanism == agg.mechanism
