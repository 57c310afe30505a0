"""Labels: ldp.Categories encodes labels as items and back, reports carry the labels
through Arrow, Parquet and pickles, and estimates come back labelled."""

import pickle
import time

import numpy as np
import pytest

import ldp
from conftest import optional

FRUIT = ["apple", "pear", "plum"]


def test_labels_encode_as_items_and_decode_back():
    fruit = ldp.Categories(FRUIT)
    assert fruit.k == 3 and fruit.labels == FRUIT and fruit.other is None
    codes = fruit.encode(["plum", "apple", "plum", "pear"])
    assert codes.dtype == np.int64 and codes.tolist() == [2, 0, 2, 1]
    assert fruit.decode(codes).tolist() == ["plum", "apple", "plum", "pear"]
    assert fruit.encode(np.array(FRUIT)).tolist() == [0, 1, 2]  # numpy strings
    assert fruit.encode([]).tolist() == []
    # An unknown label names itself and its position.
    with pytest.raises(ldp.ItemError, match=r"values\[2\]: 'kiwi' is not a label"):
        fruit.encode(["pear", "plum", "kiwi"])
    with pytest.raises(ldp.ItemError, match=r"values\[1\]: a missing value"):
        fruit.encode(["pear", None])
    with pytest.raises(ldp.ItemError, match=r"items\[1\] = 3 is outside the domain"):
        fruit.decode([0, 3])
    # other= takes every label not listed, as the last item.
    some = ldp.Categories(FRUIT, other="other")
    assert some.k == 4 and some.encode(["kiwi", "pear", None]).tolist() == [3, 1, 3]
    assert some.decode([3]).tolist() == ["other"]


def test_labels_without_pandas_encode_the_same(monkeypatch):
    fruit = ldp.Categories(FRUIT, other="other")
    values = ["plum", "kiwi", "apple"]
    with_pandas = fruit.encode(values)
    monkeypatch.setitem(__import__("sys").modules, "pandas", None)
    assert fruit.encode(values).tolist() == with_pandas.tolist() == [2, 3, 0]
    with pytest.raises(ImportError, match="pip install pandas"):
        fruit.label(np.zeros(4))


def test_a_repeated_or_missing_label_is_refused():
    with pytest.raises(ValueError, match=r"labels\[2\] = 'apple' repeats labels\[0\]"):
        ldp.Categories(["apple", "pear", "apple"])
    with pytest.raises(ValueError, match=r"other = 'pear' is labels\[1\]"):
        ldp.Categories(FRUIT, other="pear")
    with pytest.raises(ValueError, match=r"labels\[1\] is a missing value"):
        ldp.Categories([1.0, float("nan")])
    with pytest.raises(TypeError, match="not hashable"):
        ldp.Categories([["a"], ["b"]])


def test_labels_from_pandas():
    pd = optional("pandas")
    sizes = pd.Series(["M", "S", "L", "M", None], dtype=pd.CategoricalDtype(["S", "M", "L"]))
    cats = ldp.Categories.from_pandas(sizes)
    assert cats.labels == ["S", "M", "L"]  # the categories' order, not sorted
    assert ldp.Categories.from_pandas(sizes.dtype) == cats
    assert ldp.Categories.from_pandas(pd.Categorical(["L", "S"], categories=["S", "M", "L"])) == cats
    # A categorical's codes are mapped through its categories, whatever their order.
    reordered = sizes.cat.reorder_categories(["L", "M", "S"])
    with_other = ldp.Categories.from_pandas(sizes, other="?")
    assert with_other.encode(reordered).tolist() == [1, 0, 2, 1, 3]
    with pytest.raises(ldp.ItemError, match=r"values\[4\]: a missing value"):
        cats.encode(reordered)
    # Any other Series: its distinct values, sorted, missing values left out.
    assert ldp.Categories.from_pandas(pd.Series([30, 10, 20, 10])).labels == [10, 20, 30]
    assert ldp.Categories.from_pandas(pd.Series(["b", None, "a"])).labels == ["a", "b"]
    ages = ldp.Categories.from_pandas(pd.Series([30, 10, 20]))
    assert all(type(v) is int for v in ages.labels)  # numpy scalars as Python's
    estimate = ages.label(np.array([0.2, 0.3, 0.5]))
    assert isinstance(estimate, pd.Series) and estimate.name == "estimate"
    assert estimate.to_dict() == {10: 0.2, 20: 0.3, 30: 0.5}
    with pytest.raises(ldp.ParamError, match="for k = 3 items"):
        ages.label(np.zeros(4))


def test_a_million_labels_encode_in_a_moment():
    pd = optional("pandas")
    labels = [f"city-{i}" for i in range(1000)]
    cats = ldp.Categories(labels)
    values = np.random.default_rng(0).choice(np.array(labels, dtype=object), 1_000_000)
    start = time.monotonic()
    codes = cats.encode(values)
    plain = time.monotonic() - start
    categorical = pd.Categorical(values, categories=labels[::-1])
    start = time.monotonic()
    assert np.array_equal(cats.encode(categorical), codes)
    assert np.array_equal(cats.decode(codes), values)
    # A Python loop over 10^6 values takes seconds; these take a fraction of one.
    assert plain < 3 and time.monotonic() - start < 3


def test_perturbed_labels_estimate_labelled():
    pd = optional("pandas")
    fruit = ldp.Categories(FRUIT)
    m = ldp.mechanism("olh", k=fruit.k, eps=4.0)
    values = pd.Series(["apple"] * 5_000 + ["plum"] * 15_000)
    reports = m.perturb(values, seed=1, categories=fruit)
    assert reports.categories == fruit
    assert reports == m.perturb(fruit.encode(values), seed=1)  # equality: the reports
    server = m.aggregator()
    assert server.categories is None
    server.add(reports)
    assert server.categories == fruit
    f = server.estimate("simplex", labelled=True)
    assert isinstance(f, pd.Series) and list(f.index) == FRUIT
    assert abs(f["apple"] - 0.25) < 0.02 and abs(f["plum"] - 0.75) < 0.02
    assert np.array_equal(f.to_numpy(), server.estimate("simplex"))
    # An aggregator told its labels, and one without any.
    told = m.aggregator(categories=fruit)
    told.add(m.perturb(fruit.encode(values), seed=1))  # unlabelled reports are welcome
    assert told.estimate(labelled=True).index.tolist() == FRUIT
    with pytest.raises(ldp.ParamError, match="labelled=True: the aggregator has no labels"):
        m.aggregator().estimate(labelled=True)


def test_labels_travel_with_the_reports(tmp_path):
    pq = optional("pyarrow.parquet")
    sizes = ldp.Categories([1, 2.5, "three", "four"], other="more")
    m = ldp.mechanism("oue", k=sizes.k, eps=2.0)
    reports = m.perturb(np.arange(1000) % 5, seed=3).with_categories(sizes)
    assert reports.categories == sizes and reports.with_categories(None).categories is None
    # Slices, concatenations and pickles keep them.
    assert reports[:10].categories == sizes and reports[::7].categories == sizes
    both = ldp.Reports.concat([reports[:10], reports[10:].with_categories(None)])
    assert both == reports and both.categories == sizes
    assert pickle.loads(pickle.dumps(reports)).categories == sizes
    # Arrow and Parquet: the schema metadata, ldp.labels a JSON list, ldp.other.
    table = reports.to_arrow()
    assert table.schema.metadata[b"ldp.labels"] == b'[1, 2.5, "three", "four", "more"]'
    assert table.schema.metadata[b"ldp.other"] == b"true"
    assert ldp.Reports.from_arrow(table).categories == sizes
    day = tmp_path / "day"
    day.mkdir()
    pq.write_table(table.slice(0, 500), day / "part-0.parquet")
    pq.write_table(ldp.Reports.from_arrow(table.slice(500)).with_categories(None).to_arrow(), day / "part-1.parquet")
    back = ldp.Reports.read_parquet(day)
    assert back == reports and back.categories == sizes
    assert type(back.categories.labels[0]) is int and back.categories.labels[1] == 2.5
    # An aggregator pickles with its labels.
    server = m.aggregator()
    server.add(back)
    again = pickle.loads(pickle.dumps(server))
    assert again.categories == sizes and again.estimate(labelled=True).index[-1] == "more"
    # A table written elsewhere with labels of its own.
    plain = m.perturb([0, 1], seed=1).to_arrow()
    labelled = plain.replace_schema_metadata({**plain.schema.metadata, b"ldp.labels": b'["a", "b", "c", "d", "e"]'})
    assert ldp.Reports.from_arrow(labelled).categories.labels == ["a", "b", "c", "d", "e"]


def test_the_labels_must_fit_the_mechanism():
    optional("pyarrow")
    m = ldp.mechanism("grr", k=4, eps=1.0)
    with pytest.raises(ldp.ParamError, match=r"categories has k = 3 \(3 labels\), but the mechanism has k = 4"):
        m.perturb(["pear"], categories=ldp.Categories(FRUIT))
    with pytest.raises(ldp.ParamError, match=r"k = 5 \(4 labels and other\), but the mechanism has k = 4"):
        m.aggregator(categories=ldp.Categories(FRUIT + ["fig"], other="?"))
    with pytest.raises(TypeError, match="must be an ldp.Categories, not list"):
        m.perturb([0]).with_categories(FRUIT)
    # Labels that JSON cannot hold encode, but do not travel.
    pairs = ldp.Categories([(0, 0), (0, 1), (1, 0), (1, 1)])
    assert pairs.encode([(1, 0), (0, 0)]).tolist() == [2, 0]
    with pytest.raises(TypeError, match=r"labels\[0\] = \(0, 0\) \(tuple\) cannot be stored with reports"):
        m.perturb([0], categories=pairs)
    # Labels a file records are checked as given ones are.
    table = m.perturb([0, 1]).to_arrow()
    for labels, message in [
        (b'["a", "b", "c"]', r"categories has k = 3 \(3 labels\), but the mechanism has k = 4"),
        (b'["a", "b", "c", "a"]', r"ldp.labels: labels\[3\] = 'a' repeats labels\[0\]"),
        (b"not json", "not JSON"),
        (b'{"a": 1}', "not a JSON list"),
    ]:
        bad = table.replace_schema_metadata({**table.schema.metadata, b"ldp.labels": labels})
        with pytest.raises(ldp.ParamError, match=message):
            ldp.Reports.from_arrow(bad)


def test_reports_labelled_otherwise_do_not_mix(tmp_path):
    pq = optional("pyarrow.parquet")
    m = ldp.mechanism("grr", k=3, eps=1.0)
    fruit, colours = ldp.Categories(FRUIT), ldp.Categories(["red", "green", "blue"])
    a = m.perturb(FRUIT, seed=1, categories=fruit)
    b = m.perturb(["red"], seed=1, categories=colours)
    with pytest.raises(ldp.ReportError, match=r'labelled \["red", "green", "blue"\] cannot join'):
        ldp.Reports.concat([a, b])
    server = m.aggregator()
    server.add(a)
    with pytest.raises(ldp.ReportError, match="cannot join this aggregator"):
        server.add(b)
    assert server.n == 3  # refused whole
    other = m.aggregator(categories=colours)
    with pytest.raises(ldp.AggregateError, match="cannot join this aggregator"):
        server.merge(other)
    pq.write_table(a.to_arrow(), tmp_path / "a.parquet")
    pq.write_table(b.to_arrow(), tmp_path / "b.parquet")
    with pytest.raises(ldp.ParamError, match="b.parquet labelled"):
        ldp.Reports.read_parquet(tmp_path)


def test_the_readme_example(tmp_path, monkeypatch, capsys):
    """The package README's example of labels runs as it reads."""
    import pathlib
    import re

    optional("pandas")
    optional("pyarrow")
    readme = (pathlib.Path(__file__).parents[1] / "README.md").read_text()
    (example,) = [b for b in re.findall(r"```python\n(.*?)```", readme, re.S) if "ldp.Categories" in b]
    monkeypatch.chdir(tmp_path)
    names = {}
    exec(example, names)
    f = names["server"].estimate("simplex", labelled=True)
    assert f.index.tolist() == ["chrome", "firefox", "safari", "other"]
    assert abs(f["chrome"] - 0.5) < 0.03 and abs(f["other"] - 0.25) < 0.03
    assert "chrome" in capsys.readouterr().out


def test_review_edge_cases():
    # A categorical with no categories: every value is missing, item k - 1 with other.
    pd = pytest.importorskip("pandas")
    empty = pd.Categorical([None, None], categories=[])
    assert ldp.Categories(["a"], other="rest").encode(empty).tolist() == [1, 1]
    with pytest.raises(ldp.ItemError, match="missing"):
        ldp.Categories(["a"]).encode(empty)
    # Booleans and numbers are equal to Python's lookups: refused together.
    with pytest.raises(ValueError, match="booleans and numbers"):
        ldp.Categories([1, 2.5, "three", False])
    assert ldp.Categories([True, False]).encode([False]).tolist() == [1]
