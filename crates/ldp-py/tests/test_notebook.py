"""Issue 30: the package as a notebook user meets it (round trips, arguments and errors in
Python's terms)."""

import pickle

import numpy as np
import pytest

import ldp

FAMILIES = ["grr", "ss", "oue", "olh", "she", "the", "hr", "cms"]


@pytest.mark.parametrize("protocol", FAMILIES)
def test_reports_pickle(protocol):
    m = ldp.mechanism(protocol, k=20, eps=2.0)
    r = m.perturb(np.arange(200) % 20, seed=4)
    back = pickle.loads(pickle.dumps(r))
    assert back == r and back.mechanism == m and len(back) == 200
    agg = m.aggregator()
    agg.add(back)
    assert agg.n == 200


def test_pickled_reports_keep_what_was_skipped():
    m = ldp.mechanism("grr", k=4, eps=1.0)
    r = ldp.Reports.from_arrays(m, y=np.array([1, 7, 2]), on_invalid="skip")
    back = pickle.loads(pickle.dumps(r))
    assert back.skipped == r.skipped and back.skipped["out-of-range"]["count"] == 1


def test_reports_cross_process_boundaries():
    from concurrent.futures import ProcessPoolExecutor

    m = ldp.mechanism("oue", k=10, eps=1.0)
    parts = [m.perturb(np.arange(100) % 10, seed=s) for s in range(2)]
    with ProcessPoolExecutor(max_workers=2) as pool:
        sizes = list(pool.map(len, parts))
    assert sizes == [100, 100]


def _estimate_in_a_worker(reports):
    agg = reports.mechanism.aggregator()
    agg.add(reports)
    again = reports.mechanism.perturb(np.zeros(50_000, dtype=np.int64), seed=1)
    return agg.estimate(), len(again)


@pytest.mark.filterwarnings("ignore::DeprecationWarning")  # 3.12 warns of fork with threads
@pytest.mark.parametrize("method", ["fork", "spawn", "forkserver"])
def test_workers_aggregate_in_every_start_method(method):
    """Issue 44, item 1: after the parent used the thread pool, a forked worker that
    aggregated waited forever on the parent's pool, whose threads it does not have."""
    import multiprocessing

    if method not in multiprocessing.get_all_start_methods():
        pytest.skip(f"{method} is not available here")
    m = ldp.mechanism("oue", k=10, eps=1.0)
    reports = m.perturb(np.arange(200_000) % 10, seed=3)  # the parent's pool, in use
    here = m.aggregator()
    here.add(reports)
    with multiprocessing.get_context(method).Pool(2) as pool:
        answers = [pool.apply_async(_estimate_in_a_worker, (reports,)) for _ in range(2)]
        for answer in answers:
            estimate, n = answer.get(timeout=60)
            assert np.array_equal(estimate, here.estimate()) and n == 50_000


def test_wrong_argument_types_name_the_argument():
    with pytest.raises(TypeError, match=r"eps must be a real number, not str '1'"):
        ldp.mechanism("olh", 100, "1")
    with pytest.raises(TypeError, match=r"k must be an integer, not float 100.0"):
        ldp.mechanism("olh", 100.0, 1.0)
    with pytest.raises(TypeError, match=r"k must be an integer, not bool"):
        ldp.mechanism("olh", True, 1.0)
    with pytest.raises(TypeError, match=r"eps_1 must be a real number"):
        ldp.longitudinal("l-grr", 10, 2.0, None)
    # numpy scalars are numbers.
    assert ldp.mechanism("olh", np.int64(100), np.float32(1.0)).k == 100


def test_seeds_are_whole_numbers_from_zero():
    m = ldp.mechanism("grr", k=10, eps=1.0)
    with pytest.raises(ldp.ParamError, match=r"seed = -1: a seed is a whole number in 0..2\*\*64"):
        m.perturb([1], seed=-1)
    with pytest.raises(TypeError, match="seed must be an integer, not float"):
        m.perturb([1], seed=1.5)
    assert m.perturb([1], seed=np.uint64(2**64 - 1)) == m.perturb([1], seed=2**64 - 1)


def test_a_missing_file_is_a_file_not_found_error(tmp_path):
    m = ldp.mechanism("grr", k=10, eps=1.0)
    with pytest.raises(FileNotFoundError) as e:
        ldp.Reports.from_jsonl("/nope", m)
    assert e.value.filename == "/nope" and e.value.errno == 2
    with pytest.raises(IsADirectoryError):
        ldp.Reports.from_jsonl(tmp_path, m)
    with pytest.raises(FileNotFoundError):
        m.perturb([1]).to_jsonl(tmp_path / "no" / "such" / "dir.jsonl")


def test_the_domain_reads_inclusively():
    m = ldp.mechanism("grr", k=100, eps=1.0)
    with pytest.raises(ldp.ItemError, match=r"items\[2\] = 100 is outside the domain: items are 0 to 99 \(k = 100\)"):
        m.perturb([0, 1, 100])


def test_a_mechanism_mismatch_names_the_field():
    a = ldp.mechanism("oue", k=10, eps=1.0)
    b = ldp.mechanism("oue", k=20, eps=1.0)
    with pytest.raises(ldp.ReportError, match="k = 20 in the reports, 10 in the aggregator"):
        a.aggregator().add(b.perturb([1]))
    c = ldp.mechanism("oue", k=10, eps=2.0)
    with pytest.raises(ldp.AggregateError, match="eps = 1 in this aggregator, 2 in the other"):
        a.aggregator().merge(c.aggregator())
    with pytest.raises(ldp.ReportError, match="the family = GeneralizedRandomizedResponse|the family"):
        ldp.Reports.concat([a.perturb([1]), ldp.mechanism("grr", k=10, eps=1.0).perturb([1])])


def test_an_impossible_bound_says_what_is_reachable():
    with pytest.raises(ldp.TuningError, match=r"the lowest asr any instance reaches is 0.01 \(AUE at p = "):
        ldp.tune("all", 100, 1.0, asr_max=1e-9)


def test_asr_after_takes_one_number_or_several():
    oue = ldp.mechanism("oue", k=100, eps=1.0)
    one = ldp.asr_after(oue, 30)
    assert isinstance(one, float)
    assert ldp.asr_after(oue, [30]) == [one]
    with pytest.raises(TypeError, match="collections must be"):
        ldp.asr_after(oue, "30")


def test_a_notebook_round_trip(tmp_path):
    """docs/python.md's round trip: Parquet files and a directory back into Reports with their
    mechanism, aggregated from halves and merged, pickled."""
    pq = pytest.importorskip("pyarrow.parquet")
    m = ldp.mechanism("olh", k=100, eps=4.0)
    items = np.random.default_rng(0).integers(0, 100, 20_000)
    reports = m.perturb(items, seed=1)
    day = tmp_path / "day"
    day.mkdir()
    pq.write_table(reports[:10_000].to_arrow(), day / "part-0.parquet")
    pq.write_table(reports[10_000:].to_arrow(), day / "part-1.parquet")
    back = ldp.Reports.read_parquet(day)
    assert back.mechanism == m and back == reports
    spec = pq.read_table(day / "part-0.parquet").schema.metadata[b"ldp.spec"]
    assert ldp.Mechanism.from_spec(spec) == m  # bytes, as pyarrow gives them
    halves = [m.aggregator(), m.aggregator()]
    halves[0].add(ldp.Reports.from_arrow(pq.read_table(day / "part-0.parquet")))
    halves[1].add(ldp.Reports.read_parquet(day / "part-1.parquet"))
    halves[0].merge(halves[1])
    whole = m.aggregator()
    whole.add(reports)
    assert halves[0].counts.tolist() == whole.counts.tolist()
    server = pickle.loads(pickle.dumps(halves[0]))
    assert server.counts.tolist() == whole.counts.tolist()
    part = pickle.loads(pickle.dumps(back[:10]))
    assert part == reports[:10]


def test_tables_are_the_same_with_and_without_pandas(monkeypatch):
    with_pandas = ldp.analyze(["grr", "oue"], k=[10, 100], eps=1.0)
    frontier = ldp.frontier("alh", 100, 4.0)
    assert isinstance(with_pandas, ldp.Table) and isinstance(frontier, ldp.Table)
    assert with_pandas.rows == 4 and frontier.columns == ["param", "asr", "mse"]
    monkeypatch.setitem(__import__("sys").modules, "pandas", None)
    without = ldp.analyze(["grr", "oue"], k=[10, 100], eps=1.0)
    assert type(without) is type(with_pandas) and without == with_pandas
    with pytest.raises(ImportError, match="pip install pandas"):
        without.to_pandas()
    assert dict(without)["k"].tolist() == [10, 100, 10, 100]


def test_a_table_converts_on_request():
    pd = pytest.importorskip("pandas")
    pa = pytest.importorskip("pyarrow")
    t = ldp.analyze("oue", k=[10, 100], eps=[1.0, 4.0])
    assert isinstance(t.to_pandas(), pd.DataFrame) and t.to_pandas().shape[0] == 4
    assert isinstance(t.to_arrow(), pa.Table) and t.to_arrow().num_rows == 4
    with pytest.warns(DeprecationWarning, match="to_pandas"):
        assert isinstance(ldp.analyze("oue", 10, 1.0, frame=True), pd.DataFrame)


def test_whole_numbers_are_ints():
    t = ldp.tune("alh", 100, 4.0)
    assert isinstance(t["param"], int) and isinstance(t["k"], int)
    assert isinstance(ldp.tune("ass", 100, 4.0)["param"], int)
    assert isinstance(ldp.tune("aue", 100, 4.0)["param"], float)
