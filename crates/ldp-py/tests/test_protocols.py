"""Every protocol perturbs and aggregates to an unbiased estimate; aggregators merge and
pickle; reports slice, concatenate and convert."""

import pickle

import numpy as np
import pytest

import ldp

ALL = ["grr", "ss", "sue", "oue", "blh", "olh", "she", "the", "ass", "aue", "alh", "athe", "hr", "hm", "flh", "cms", "hcms", "dbitflip"]


def test_parameters_by_name_keep_the_preset_for_the_rest():
    ss = ldp.mechanism("ss", k=100, eps=4.0, param={"omega": 7})
    assert ss.param == 7 and isinstance(ss.param, int) and ss == ldp.mechanism("ss", k=100, eps=4.0, param="omega=7")
    assert repr(ss) == 'ldp.mechanism("ss", k=100, eps=4, param=7)'
    hr = ldp.mechanism("hr", k=100, eps=4.0, param={"blocks": 4})
    assert hr.param == 4.0
    flh = ldp.mechanism("flh", k=100, eps=4.0, param={"seeds": 20})
    assert flh.param == {"g": 56, "seeds": 20} and all(isinstance(v, int) for v in flh.param.values())
    assert repr(flh) == 'ldp.mechanism("flh", k=100, eps=4, param={"g": 56, "seeds": 20})'
    assert eval(repr(flh)) == flh
    with pytest.raises(ldp.ParamError, match="give them by name"):
        ldp.mechanism("flh", k=100, eps=4.0, param=20)


@pytest.mark.parametrize("protocol", ALL)
def test_every_protocol_estimates_without_bias(protocol):
    k, n = 10, 60_000
    rng = np.random.default_rng(11)
    truth = np.array([0.3, 0.2, 0.1, 0.1, 0.1, 0.05, 0.05, 0.05, 0.03, 0.02])
    items = rng.choice(k, size=n, p=truth)
    f = np.bincount(items, minlength=k) / n
    m = ldp.mechanism(protocol, k=k, eps=2.0)
    server = m.aggregator()
    server.add(m.perturb(items, seed=5))
    assert server.n == n
    estimate = server.estimate()
    # The closed-form per-user MSE of `analyze` bounds the estimate's variance.
    mse = ldp.analyze(protocol, k, 2.0, m.param if m.protocol in ("ass", "alh", "athe", "aue") else None, frame=False)["mse"][0]
    sd = np.sqrt(mse / n)
    assert np.all(np.abs(estimate - f) < 5 * sd), (estimate - f) / sd


def test_pickled_partial_aggregators_merge_to_the_whole():
    m = ldp.mechanism("ss", k=30, eps=1.0)
    items = np.arange(30_000) % 30
    reports = m.perturb(items, seed=2)
    whole = m.aggregator()
    whole.add(reports)
    parts = [reports[:7_000], reports[7_000:20_000], reports[20_000:]]
    merged = m.aggregator()
    for part in parts:
        a = m.aggregator()
        a.add(part)
        merged.merge(pickle.loads(pickle.dumps(a)))
    assert merged.n == whole.n
    assert np.array_equal(merged.counts, whole.counts)
    assert np.array_equal(merged.estimate(), whole.estimate())
    assert pickle.loads(pickle.dumps(m)) == m


def test_she_servers_clip_unless_told_and_keep_float_sums():
    m = ldp.mechanism("she", k=5, eps=1.0)
    r = m.perturb(np.arange(5), seed=1)
    clipped, raw = m.aggregator(), m.aggregator(she_clip="none")
    clipped.add(r)
    raw.add(r)
    assert clipped.counts is None and clipped.sums.shape == (5,)
    assert np.all(np.abs(clipped.sums) <= 5 * (1 + 40 / 1.0))
    with pytest.raises(ldp.AggregateError, match="clipping"):
        clipped.merge(raw)
    assert r.values.shape == (5, 5)


def test_reports_slice_concatenate_and_round_trip_through_arrays():
    for protocol in ["grr", "oue", "olh", "she"]:
        m = ldp.mechanism(protocol, k=12, eps=1.5)
        r = m.perturb(np.arange(100) % 12, seed=4)
        assert ldp.Reports.concat([r[:40], r[40:]]) == r
        assert len(r[::3]) == 34 and r[::3][1] == r[3]
        again = ldp.Reports.from_arrays(m, **r.arrays())
        assert again == r


def test_reports_from_python_peers_reduce_64_bit_seeds():
    m = ldp.mechanism("olh", k=8, eps=1.0)
    seeds = np.array([2**40 + 5, 7], dtype=np.int64)
    r = ldp.Reports.from_arrays(m, seed=seeds, y=np.array([0, 1]))
    assert list(r.seed) == [5, 7]


def test_the_gil_is_released_while_reports_are_made():
    import threading

    m = ldp.mechanism("oue", k=2000, eps=1.0)
    items = np.arange(400_000) % 2000
    ticks = []
    done = threading.Event()

    def count():
        while not done.is_set():
            ticks.append(1)

    t = threading.Thread(target=count)
    t.start()
    try:
        before = len(ticks)
        m.perturb(items, seed=1)
        during = len(ticks) - before
    finally:
        done.set()
        t.join()
    # With the GIL held the counter could not have moved at all during the call.
    assert during > 0
