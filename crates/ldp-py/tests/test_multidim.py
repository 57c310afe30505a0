"""Several attributes per user: ldp.multidim against the truth, the ldp tool and its own
closed forms; DataFrames by codes and by labels; every bad input a named error."""

import json

import numpy as np
import pytest

import ldp

from conftest import optional


def users(n=6000, seed=0):
    """n users of three attributes (k = 4, 3, 2) with known, unequal marginals."""
    rng = np.random.default_rng(seed)
    a = rng.choice(4, n, p=[0.4, 0.3, 0.2, 0.1])
    b = rng.choice(3, n, p=[0.6, 0.3, 0.1])
    c = rng.choice(2, n, p=[0.75, 0.25])
    return np.column_stack([a, b, c])


def marginals(items, domains):
    return [np.bincount(items[:, j], minlength=k) / len(items) for j, k in enumerate(domains)]


@pytest.mark.parametrize(
    "protocol, solution",
    [("grr", "spl"), ("oue", "smp"), ("oue", "rsfd"), ("sue", "rsfd-z"), ("grr", "rsrfd"), ("olh", "rsfd"), ("aue", "rsfd")],
)
def test_estimates_are_near_the_truth(protocol, solution):
    items = users()
    domains = [4, 3, 2]
    prior = [np.full(k, 1 / k) for k in domains] if solution == "rsrfd" else None
    m = ldp.multidim(protocol, 4.0, domains, solution=solution, prior=prior)
    reports = m.perturb(items, seed=11)
    assert len(reports) == len(items)
    estimates = m.estimate(reports)
    assert isinstance(estimates, list) and len(estimates) == 3
    for estimate, truth in zip(estimates, marginals(items, domains)):
        assert estimate.shape == truth.shape
        assert np.abs(estimate - truth).max() < 0.06, (estimate, truth)
    # A post-processed estimate is a distribution.
    for estimate in m.estimate(reports, "simplex"):
        assert abs(estimate.sum() - 1) < 1e-9 and (estimate >= 0).all()


def test_the_client_is_the_tools():
    m = ldp.multidim("aue", 1.0, [74, 7, 16], solution="rsfd")
    assert (m.protocol, m.solution, m.eps, m.domains, len(m)) == ("aue", "rsfd", 1.0, [74, 7, 16], 3)
    assert m.report_eps == pytest.approx(np.log(3 * (np.e - 1) + 1))
    # Each attribute tuned for its own domain, at the per-report budget.
    for j, k in enumerate(m.domains):
        assert m.mechanism(j) == ldp.mechanism("aue", k=k, eps=m.report_eps)
        assert m.params[j] == m.mechanism(j).param
    assert ldp.multidim("grr", 1.0, [4, 3], solution="spl").report_eps == 0.5
    assert ldp.multidim("grr", 1.0, [4, 3], solution="smp").report_eps == 1.0


def test_seeds_reproduce_and_match_the_tool(cli):
    items = np.array([[30, 2, 9], [41, 4, 11], [0, 0, 0], [73, 6, 15]])
    for solution in ["rsfd", "smp", "spl"]:
        m = ldp.multidim("grr", 1.0, [74, 7, 16], solution=solution)
        a, b = m.perturb(items, seed=3), m.perturb(items, seed=3)
        assert a.to_jsonl() == b.to_jsonl()
        stdin = "".join(json.dumps(row.tolist()) + "\n" for row in items).encode()
        tool = cli("perturb", "--attributes", "74,7,16", "--solution", solution, "--protocol", "grr", "--eps", "1", "--seed", "3", stdin=stdin)
        assert a.to_jsonl() == tool.decode()
        assert [a[i] for i in range(len(a))] == [json.loads(l) for l in tool.decode().splitlines()]
    big = users(20_000)
    m = ldp.multidim("oue", 2.0, [4, 3, 2], solution="rsfd")
    assert m.perturb(big, seed=1).to_jsonl() != m.perturb(big, seed=2).to_jsonl()


def test_unseeded_reports_differ():
    m = ldp.multidim("oue", 2.0, [4, 3, 2], solution="rsfd")
    items = users(2000)
    assert m.perturb(items).to_jsonl() != m.perturb(items).to_jsonl()


def test_estimates_match_the_tools_aggregate(cli):
    items = users(9000)
    m = ldp.multidim("oue", 2.0, [4, 3, 2], solution="rsfd")
    reports = m.perturb(items, seed=7)
    out = cli("aggregate", "--attributes", "4,3,2", "--solution", "rsfd", "--protocol", "oue", "--eps", "2", stdin=reports.to_jsonl().encode())
    rows = [line.split(",") for line in out.decode().splitlines()[1:]]
    ours = m.estimate(reports)
    for j, i, value in rows:
        assert ours[int(j)][int(i)] == pytest.approx(float(value), rel=1e-12, abs=1e-15)


def test_reports_by_attribute_and_json_lines():
    items = users(5000)
    smp = ldp.multidim("oue", 2.0, [4, 3, 2], solution="smp")
    reports = smp.perturb(items, seed=5)
    sampled = reports.attribute
    assert sampled.dtype == np.uint32 and len(sampled) == 5000 and set(sampled.tolist()) == {0, 1, 2}
    for j in range(3):
        part = reports.reports(j)
        assert part.mechanism == smp.mechanism(j) and len(part) == int((sampled == j).sum())
    first = reports[0]
    assert set(first) == {"sampled"} and first["sampled"]["attribute"] == sampled[0]
    back = ldp.MultidimReports.from_jsonl(smp, reports.to_jsonl())
    assert back.to_jsonl() == reports.to_jsonl()
    for a, b in zip(smp.estimate(back), smp.estimate(reports)):
        assert np.array_equal(a, b)
    rsfd = ldp.multidim("grr", 2.0, [4, 3, 2], solution="rsfd")
    every = rsfd.perturb(items, seed=5)
    assert every.attribute is None
    assert [len(every.reports(j)) for j in range(3)] == [5000] * 3
    assert len(every[-1]["every"]) == 3


def test_data_frames_by_labels():
    pandas = optional("pandas")
    rng = np.random.default_rng(3)
    n = 6000
    frame = pandas.DataFrame(
        {
            "sex": pandas.Categorical(rng.choice(["F", "M"], n, p=[0.3, 0.7]), categories=["F", "M"]),
            "job": rng.choice(["nurse", "clerk", "cook"], n, p=[0.5, 0.3, 0.2]),
        }
    )
    m = ldp.multidim("oue", 4.0, frame, solution="rsfd")
    assert m.names == ["sex", "job"]
    # A categorical column keeps its categories' order; another is coded by sorted labels.
    assert m.labels == [["F", "M"], ["clerk", "cook", "nurse"]]
    f = m.estimate(m.perturb(frame, seed=1))
    assert list(f) == ["sex", "job"]
    assert list(f["sex"].index) == ["F", "M"] and f["job"].index.name == "job"
    # Within five standard deviations of the closed form.
    sd = lambda j, v, f: 5 * m.variance(j, v, float(n), f) ** 0.5
    truth = frame["sex"].value_counts(normalize=True)["M"], (frame["job"] == "nurse").mean()
    assert abs(f["sex"]["M"] - truth[0]) < sd("sex", 1, truth[0])
    assert abs(f["job"]["nurse"] - truth[1]) < sd("job", 2, truth[1])
    # Columns are found by name: order and extra columns do not matter.
    shuffled = frame[["job", "sex"]].assign(other=1)
    assert m.perturb(shuffled, seed=1).to_jsonl() == m.perturb(frame, seed=1).to_jsonl()
    # A categorical column whose categories are ordered otherwise maps by label.
    relabelled = frame.assign(sex=frame["sex"].cat.reorder_categories(["M", "F"]))
    assert m.perturb(relabelled, seed=1).to_jsonl() == m.perturb(frame, seed=1).to_jsonl()
    # The same users as codes give the same reports.
    codes = np.column_stack([frame["sex"].cat.codes, pandas.Categorical(frame["job"], categories=m.labels[1]).codes])
    assert m.perturb(codes.astype(np.int64), seed=1).to_jsonl() == m.perturb(frame, seed=1).to_jsonl()


def test_data_frames_by_codes_and_dicts():
    pandas = optional("pandas")
    items = users(3000)
    frame = pandas.DataFrame(items, columns=["a", "b", "c"])
    m = ldp.multidim("grr", 2.0, {"a": 4, "b": 3, "c": 2}, solution="spl")
    assert m.names == ["a", "b", "c"] and m.labels is None
    assert m.perturb(frame, seed=2).to_jsonl() == m.perturb(items, seed=2).to_jsonl()
    f = m.estimate(m.perturb(items, seed=2))
    assert isinstance(f, dict) and list(f) == ["a", "b", "c"] and f["a"].shape == (4,)
    unnamed = ldp.multidim("grr", 2.0, [4, 3, 2], solution="spl")
    assert unnamed.perturb(frame, seed=2).to_jsonl() == m.perturb(items, seed=2).to_jsonl()
    labelled = ldp.multidim("grr", 2.0, {"s": ["F", "M"], "t": ["x", "y", "z"]}, solution="smp")
    assert labelled.labels == [["F", "M"], ["x", "y", "z"]]
    assert set(labelled.estimate(labelled.perturb(pandas.DataFrame({"t": ["x", "z"], "s": ["M", "F"]}), seed=1))) == {"s", "t"}


def test_prior_from_the_data():
    pandas = optional("pandas")
    acs = ldp.dataset("acs-employment")
    assert acs.shape == (10336, 18)
    picked = acs[["SEX", "MAR"]]
    m = ldp.multidim("grr", 2.0, picked, solution="rsrfd", prior="data")
    expected = picked["SEX"].value_counts(normalize=True).reindex(m.labels[0]).to_numpy()
    assert np.allclose(m.priors[0], expected)
    by_name = ldp.multidim("grr", 2.0, picked, solution="rsrfd", prior={"SEX": m.priors[0], "MAR": m.priors[1]})
    assert by_name.perturb(picked, seed=1).to_jsonl() == m.perturb(picked, seed=1).to_jsonl()
    assert isinstance(pandas.Series(m.priors[1]), pandas.Series)


@pytest.mark.parametrize(
    "call, error, message",
    [
        # Attribute counts that disagree.
        (lambda: ldp.multidim("grr", 1.0, [4, 3, 2]).perturb(np.zeros((5, 2), dtype=int)), ldp.ItemError, "2 columns, but the client has 3 attributes"),
        (lambda: ldp.multidim("grr", 1.0, [4, 3, 2]).perturb(np.zeros(6, dtype=int)), ldp.ItemError, "two-dimensional"),
        (lambda: ldp.multidim("grr", 1.0, [4, 3], solution="rsrfd", prior=[[0.5, 0.5, 0, 0]]), ldp.ParamError, "1 priors for 2 attributes"),
        (lambda: ldp.multidim("grr", 1.0, [4, 3], solution="rsrfd", prior=[[0.5, 0.5], [1, 0, 0]]), ldp.ParamError, "prior of attribute 0: 2 weights, but its domain has 4 items"),
        (lambda: ldp.multidim("grr", 1.0, [], solution="smp"), ldp.ParamError, "at least one attribute"),
        # An item outside its attribute's domain, named by row and attribute.
        (lambda: ldp.multidim("grr", 1.0, [74, 7, 16]).perturb(np.array([[1, 2, 3], [4, 5, 16]])), ldp.ItemError, r"items\[1, 2\] = 16 is outside the domain of attribute 2: items are 0 to 15 \(k = 16\)"),
        (lambda: ldp.multidim("grr", 1.0, {"age": 74, "sex": 2}).perturb(np.array([[1, -1]])), ldp.ItemError, r'items\[0, 1\] = -1 is outside the domain of attribute 1 \("sex"\)'),
        (lambda: ldp.multidim("grr", 1.0, [4, 2]).perturb(np.array([[1, 2**64 - 1]], dtype=np.uint64)), ldp.ItemError, "18446744073709551615"),
        (lambda: ldp.multidim("grr", 1.0, [4, 2]).perturb(np.array([[1.0, 0.0]])), TypeError, "integers"),
        (lambda: ldp.multidim("grr", 1.0, [4, 1]), ldp.ParamError, "attribute 1: k = 1"),
        # Priors that are no distribution.
        (lambda: ldp.multidim("grr", 1.0, [3, 2], solution="rsrfd", prior=[[0.7, -0.1, 0.4], [0.5, 0.5]]), ldp.ParamError, "prior of attribute 0: the value of item 1 .* not a finite non-negative number"),
        (lambda: ldp.multidim("grr", 1.0, [3, 2], solution="rsrfd", prior=[[0.5, 0.2, 0.2], [0.5, 0.5]]), ldp.ParamError, "prior of attribute 0: its values sum to 0.89"),
        (lambda: ldp.multidim("grr", 1.0, [3, 2], solution="rsrfd"), ldp.ParamError, "draws its fakes from priors"),
        (lambda: ldp.multidim("grr", 1.0, [3, 2], solution="rsfd", prior=[[1, 0, 0], [1, 0]]), ldp.ParamError, "only solution \"rsrfd\""),
        # A family without a report of no item, in the library's words.
        (lambda: ldp.multidim("grr", 1.0, [3, 2], solution="rsfd-z"), ldp.ParamError, r"RS\+FD-z needs a report of no item, which the Grr family does not have \(UE and THE do\)"),
        (lambda: ldp.multidim("olh", 1.0, [3, 2], solution="rsfd-z"), ldp.ParamError, "which the LocalHashing family does not have"),
        (lambda: ldp.multidim("grr", 1.0, [3, 2], solution="rs"), ldp.ParamError, "unknown solution"),
        (lambda: ldp.multidim("nope", 1.0, [3, 2]), ldp.ParamError, "unknown protocol"),
        (lambda: ldp.multidim("aue", 1.0, [3, 2], w_asr=2.0), ldp.ParamError, r"attribute 0 \(k = 3, SMP report budget 1\): w_asr"),
        (lambda: ldp.multidim("grr", 1.0, [3, 2], colour=1), TypeError, "unexpected keyword argument 'colour'"),
        (lambda: ldp.multidim("grr", 1.0, "census"), ldp.ParamError, "adult"),
        (lambda: ldp.multidim("grr", 1.0, [3, 2]).simulate("adult"), ldp.ParamError, "domains"),
        (lambda: ldp.multidim("grr", 1.0, [3, 2]).simulate(np.zeros((3, 2), dtype=int), runs=0), ldp.ParamError, "runs = 0"),
        (lambda: ldp.multidim("grr", 1.0, [3, 2]).variance("age", 0, 100.0, 0.1), ldp.ParamError, "no such attribute"),
        (lambda: ldp.multidim("grr", 1.0, [3, 2]).variance(0, 5, 100.0, 0.1), ldp.ParamError, "item 5 of attribute 0"),
        (lambda: ldp.multidim("grr", 1.0, [3, 2]).estimate(ldp.multidim("grr", 2.0, [3, 2]).perturb([[0, 1]])), ldp.ReportError, "another client"),
        (lambda: ldp.multidim("grr", 1.0, [3, 2]).estimate(ldp.multidim("grr", 1.0, [3, 2]).perturb(np.zeros((0, 2), dtype=int))), ldp.AggregateError, "no reports"),
        (lambda: ldp.multidim("grr", 1.0, [3, 2]).estimate(ldp.multidim("grr", 1.0, [3, 2]).perturb([[0, 1]]), "best"), ldp.ParamError, "estimator"),
        (lambda: ldp.multidim("grr", 1.0, [3, 2], solution="rsrfd", prior=[[1, 0, 0], [1, 0]]).estimate(ldp.multidim("grr", 1.0, [3, 2], solution="rsrfd", prior=[[1, 0, 0], [1, 0]]).perturb([[0, 1]]), "ibu"), ldp.AggregateError, "RS\\+RFD"),
    ],
)
def test_bad_input_is_named(call, error, message):
    with pytest.raises(error, match=message):
        call()


def test_bad_json_lines_are_named():
    m = ldp.multidim("grr", 1.0, [3, 2], solution="smp")
    with pytest.raises(ldp.ReportError, match=r"line 2: attribute 1: "):
        ldp.MultidimReports.from_jsonl(m, '{"sampled":{"attribute":0,"report":{"y":1}}}\n{"sampled":{"attribute":1,"report":{"y":5}}}\n')
    with pytest.raises(ldp.ReportError, match=r"line 1: .*SMP report naming its attribute"):
        ldp.MultidimReports.from_jsonl(m, '{"every":[{"y":1},{"y":0}]}\n')
    with pytest.raises(ldp.ReportError, match=r"line 1: malformed"):
        ldp.MultidimReports.from_jsonl(m, "[1, 2]\n")


def test_bad_data_frames_are_named():
    pandas = optional("pandas")
    frame = pandas.DataFrame({"sex": pandas.Categorical(["F", "M", "M"]), "job": ["a", "b", "a"]})
    m = ldp.multidim("grr", 1.0, frame, solution="smp")
    unseen = pandas.DataFrame({"sex": ["F", "M", "X"], "job": ["a", "a", "b"]}, index=[10, 11, 12])
    with pytest.raises(ldp.ItemError, match=r"column 'sex', row 2 \(index 12\): label 'X' is not among the attribute's categories \(F, M\)"):
        m.perturb(unseen)
    with pytest.raises(ldp.ItemError, match=r"column 'job', row 1 .*a missing value"):
        m.perturb(pandas.DataFrame({"sex": ["F", "M"], "job": ["a", None]}))
    with pytest.raises(ldp.ItemError, match="no column 'job'"):
        m.perturb(frame[["sex"]])
    with pytest.raises(ldp.ParamError, match="at least 2"):
        ldp.multidim("grr", 1.0, pandas.DataFrame({"one": ["a", "a"], "two": ["b", "c"]}))
    codes = ldp.multidim("grr", 1.0, {"a": 3, "b": 2})
    with pytest.raises(TypeError, match="integer codes"):
        codes.perturb(pandas.DataFrame({"a": ["x"], "b": [1]}))
    with pytest.raises(ldp.ItemError, match=r'items\[1, 0\] = 3 is outside the domain of attribute 0 \("a"\)'):
        codes.perturb(pandas.DataFrame({"a": [0, 3], "b": [1, 1]}))


def test_simulate_on_acs_employment_has_a_row_per_attribute():
    m = ldp.multidim("sue", 4.0, "acs-employment", solution="rsfd")
    t = m.simulate("acs-employment", runs=1, seed=1)
    assert t.rows == 18 and t.columns == [
        "attribute", "k", "eps_report", "param", "mse", "mse_se", "asr", "asr_se",
        "joint_asr", "joint_asr_se", "inference", "inference_se", "inference_baseline",
    ]
    assert t["attribute"][0] == "AGEP" or len(set(t["attribute"].tolist())) == 18
    assert np.isnan(t["mse_se"]).all() and (t["inference_baseline"] == 1 / 18).all()
    assert (t["asr"] > 0).all() and (t["inference"] > 1 / 18).all()


def test_simulate_is_the_tools(cli):
    pandas = optional("pandas")
    acs = ldp.dataset("acs-employment")[["SEX", "MAR", "ESR", "DIS"]]
    for solution in ["rsfd", "smp"]:
        m = ldp.multidim("sue", 4.0, acs, solution=solution)
        ours = m.simulate(acs, runs=2, seed=1)
        out = cli("simulate", "--dataset", "acs-employment", "--attributes-of", "SEX,MAR,ESR,DIS", "--solution", solution, "--protocol", "sue", "--eps", "4", "--seed", "1", "--runs", "2")
        lines = out.decode().splitlines()
        assert lines[0].split(",") == ours.columns
        for j, line in enumerate(lines[1:]):
            cells = line.split(",")
            assert cells[0] == ours["attribute"][j]
            for name, cell in zip(ours.columns[1:], cells[1:]):
                value = float(cell) if cell else float("nan")
                assert np.isclose(ours[name][j], value, rtol=1e-12, equal_nan=True), (name, ours[name][j], cell)
    assert isinstance(ours.to_pandas(), pandas.DataFrame)


def test_simulate_on_arrays_and_the_closed_forms():
    items = users(20_000, seed=4)
    m = ldp.multidim("grr", 2.0, [4, 3, 2], solution="rsfd")
    t = m.simulate(items, runs=3, seed=2)
    assert t.rows == 3 and list(t["attribute"]) == ["0", "1", "2"]
    # GRR's attack finds a genuine report's item with probability p whatever the data,
    # and a uniform fake's with 1/k: the measured ASR is the closed form's.
    assert np.allclose(t["asr"], m.asr(), atol=0.015)
    assert (t["asr_se"] > 0).all()
    spl = ldp.multidim("grr", 2.0, [4, 3, 2], solution="spl")
    assert spl.asr_joint() == pytest.approx(np.prod(spl.asr()))
    assert spl.asr()[0] == pytest.approx(ldp.analyze("grr", 4, 2.0 / 3)["asr"][0])
    # Variances fall as 1/n, and the sampled population adds f (1 - f) / n.
    v1, v2 = m.variance(0, 1, 1000.0, 0.3), m.variance(0, 1, 2000.0, 0.3)
    assert v1 == pytest.approx(2 * v2)
    assert m.variance(0, 1, 1000.0, 0.3, "sampled") == pytest.approx(v1 + 0.3 * 0.7 / 1000)
    # The measured MSE agrees with the closed-form variance, averaged over the items.
    truth = marginals(items, [4, 3, 2])
    for j, f in enumerate(truth):
        expected = np.mean([m.variance(j, v, float(len(items)), f[v]) for v in range(len(f))])
        assert t["mse"][j] == pytest.approx(expected, rel=0.8)


def test_an_estimate_stopped_at_the_cap_names_the_attribute():
    import warnings

    m = ldp.multidim("oue", 4.0, {"a": 4, "b": 3, "c": 2}, solution="rsfd")
    reports = m.perturb(users(), seed=3)
    with pytest.warns(RuntimeWarning) as caught:
        capped = m.estimate(reports, "ibu", max_iterations=3)
    messages = [str(w.message) for w in caught]
    assert len(messages) == 3 and messages[1].startswith(
        'attribute 1 ("b"): ibu stopped at the cap of 3 iterations, not converged'
    )
    assert sorted(capped) == ["a", "b", "c"]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # converged: no warning
        m.estimate(reports, "ibu-squarem")
    with pytest.raises(ldp.ParamError, match="max_iterations: only"):
        m.estimate(reports, "clip", max_iterations=3)
