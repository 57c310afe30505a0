"""Byte compatibility with multi-freq-ldpy: the same LH reports give the same estimates
with both libraries, in both directions."""

import warnings

import numpy as np

import ldp
from conftest import optional


def test_olh_reports_made_here_aggregate_the_same_in_multi_freq_ldpy():
    optional("xxhash")
    lh = optional("multi_freq_ldpy.pure_frequency_oracles.LH")
    k, eps = 12, 1.5
    m = ldp.mechanism("olh", k=k, eps=eps)
    r = m.perturb(np.arange(2_000) % k, seed=4)
    theirs = lh.LH_Aggregator_MI(list(zip(r.y.tolist(), r.seed.tolist())), k, eps, optimal=True)
    server = m.aggregator()
    server.add(r)
    np.testing.assert_allclose(server.estimate("clip"), theirs, rtol=0, atol=1e-12)


def test_blh_and_olh_reports_made_there_aggregate_the_same_here():
    optional("xxhash")
    lh = optional("multi_freq_ldpy.pure_frequency_oracles.LH")
    k, eps = 10, 2.0
    np.random.seed(7)
    for optimal, protocol in [(True, "olh"), (False, "blh")]:
        reports = [lh.LH_Client(int(v), k, eps, optimal=optimal) for v in np.arange(1_500) % k]
        theirs = lh.LH_Aggregator_MI(reports, k, eps, optimal=optimal)
        m = ldp.mechanism(protocol, k=k, eps=eps)
        # Their seeds are 63-bit; python-xxhash reduces a seed mod 2^32, and so do we.
        r = ldp.Reports.from_arrays(
            m,
            y=np.array([y for y, _ in reports]),
            seed=np.array([s for _, s in reports], dtype=np.int64),
        )
        server = m.aggregator()
        server.add(r)
        np.testing.assert_allclose(server.estimate("clip"), theirs, rtol=0, atol=1e-12)


def test_grr_and_oue_estimates_match_multi_freq_ldpy_on_the_same_reports():
    grr = optional("multi_freq_ldpy.pure_frequency_oracles.GRR")
    ue = optional("multi_freq_ldpy.pure_frequency_oracles.UE")
    k, eps = 9, 1.0
    m = ldp.mechanism("grr", k=k, eps=eps)
    r = m.perturb(np.arange(3_000) % k, seed=1)
    server = m.aggregator()
    server.add(r)
    np.testing.assert_allclose(server.estimate("clip"), grr.GRR_Aggregator_MI(r.y, k, eps), rtol=0, atol=1e-12)
    m = ldp.mechanism("oue", k=k, eps=eps)
    r = m.perturb(np.arange(3_000) % k, seed=2)
    bits = np.zeros((len(r), k), dtype=int)
    rows = np.repeat(np.arange(len(r)), np.diff(r.offsets))
    bits[rows, r.indices] = 1
    server = m.aggregator()
    server.add(r)
    np.testing.assert_allclose(server.estimate("clip"), ue.UE_Aggregator_MI(bits, eps, optimal=True), rtol=0, atol=1e-12)


def _bits(r, k):
    bits = np.zeros((len(r), k), dtype=int)
    rows = np.repeat(np.arange(len(r)), np.diff(r.offsets))
    bits[rows, r.indices] = 1
    return bits


def test_ibu_equals_multi_freq_ldpys_on_reports_made_here():
    optional("xxhash")
    grr = optional("multi_freq_ldpy.pure_frequency_oracles.GRR")
    ue = optional("multi_freq_ldpy.pure_frequency_oracles.UE")
    lh = optional("multi_freq_ldpy.pure_frequency_oracles.LH")
    k, eps = 8, 1.2
    items = np.minimum(np.random.default_rng(3).geometric(0.3, 2_500) - 1, k - 1)
    for protocol, theirs in [
        ("grr", lambda r, n: grr.GRR_Aggregator_IBU(r.y, k, eps, nb_iter=n)),
        ("oue", lambda r, n: ue.UE_Aggregator_IBU(_bits(r, k), k, eps, optimal=True, nb_iter=n)),
        ("olh", lambda r, n: lh.LH_Aggregator_IBU(list(zip(r.y.tolist(), r.seed.tolist())), k, eps, optimal=True, nb_iter=n)),
    ]:
        m = ldp.mechanism(protocol, k=k, eps=eps)
        r = m.perturb(items, seed=11)
        server = m.aggregator()
        server.add(r)
        # A few steps, a few hundred, and to convergence: the same iterate each time.
        for n in [1, 7, 300, 10_000]:
            mine = server.fit("ibu", max_iterations=n)
            np.testing.assert_allclose(mine["estimate"], theirs(r, n), rtol=0, atol=1e-9, err_msg=f"{protocol} at {n}")
            assert mine["iterations"] <= n


def test_ibu_equals_multi_freq_ldpys_on_reports_made_there():
    optional("xxhash")
    grr = optional("multi_freq_ldpy.pure_frequency_oracles.GRR")
    ue = optional("multi_freq_ldpy.pure_frequency_oracles.UE")
    lh = optional("multi_freq_ldpy.pure_frequency_oracles.LH")
    k, eps = 6, 2.0
    np.random.seed(5)
    values = np.arange(1_200) % k
    grr_reports = np.array([grr.GRR_Client(int(v), k, eps) for v in values])
    ue_reports = np.array([ue.UE_Client(int(v), k, eps, optimal=True) for v in values])
    lh_reports = [lh.LH_Client(int(v), k, eps, optimal=True) for v in values]
    cases = [
        ("grr", ldp.Reports.from_arrays(ldp.mechanism("grr", k=k, eps=eps), y=grr_reports),
         lambda n: grr.GRR_Aggregator_IBU(grr_reports, k, eps, nb_iter=n)),
        ("oue", ldp.Reports.from_arrays(ldp.mechanism("oue", k=k, eps=eps),
                                        offsets=np.concatenate([[0], np.cumsum(ue_reports.astype(int).sum(axis=1))]),
                                        indices=np.nonzero(ue_reports)[1]),
         lambda n: ue.UE_Aggregator_IBU(ue_reports, k, eps, optimal=True, nb_iter=n)),
        ("olh", ldp.Reports.from_arrays(ldp.mechanism("olh", k=k, eps=eps),
                                        y=np.array([y for y, _ in lh_reports]),
                                        seed=np.array([s for _, s in lh_reports], dtype=np.int64)),
         lambda n: lh.LH_Aggregator_IBU(lh_reports, k, eps, optimal=True, nb_iter=n)),
    ]
    for protocol, reports, theirs in cases:
        server = ldp.mechanism(protocol, k=k, eps=eps).aggregator()
        server.add(reports)
        for n in [3, 10_000]:
            with warnings.catch_warnings():
                # Stopping after 3 steps is the point here, not a mistake to warn about.
                warnings.filterwarnings("ignore", "ibu stopped at the cap", RuntimeWarning)
                mine = server.estimate("ibu", max_iterations=n)
            np.testing.assert_allclose(mine, theirs(n), rtol=0, atol=1e-9, err_msg=f"{protocol} at {n}")
