"""Repeated collection: the memoized protocols against multi-freq-ldpy's long_freq_est on
the same reports, the exact ASR after t linked reports against the ldp tool and against
measurement."""

import numpy as np
import pytest

import ldp
from conftest import optional

CHAINS = ["l-grr", "l-sue", "l-oue", "l-osue", "l-soue"]
THEIRS = {
    "l-grr": ("L_GRR", "L_GRR_Aggregator_MI"),
    "l-sue": ("L_SUE", "L_SUE_Aggregator_MI"),
    "l-oue": ("L_OUE", "L_OUE_Aggregator_MI"),
    "l-osue": ("L_OSUE", "L_OSUE_Aggregator_MI"),
    "l-soue": ("L_SOUE", "L_SOUE_Aggregator_MI"),
}


def their_aggregator(name, k, eps_perm, eps_1):
    module, function = THEIRS[name]
    mod = optional(f"multi_freq_ldpy.long_freq_est.{module}")
    agg = getattr(mod, function)
    if name == "l-grr":
        return lambda reports: agg(list(map(int, reports)), k, eps_perm, eps_1)
    return lambda reports: agg(np.asarray(reports, dtype=int), eps_perm, eps_1)


@pytest.mark.parametrize("name", CHAINS)
def test_reports_made_here_estimate_the_same_in_multi_freq_ldpy(name):
    # Their second rounds are closed forms (quadratic roots); ours are derived and solved
    # independently (rounds.rs): equal estimates on the same reports check both.
    # L-GRR only at k = 2: see test_l_grr_spends_exactly_eps_1_where_multi_freq_ldpy_spends_less.
    k, eps_perm, eps_1 = (2 if name == "l-grr" else 6), 2.0, 0.8
    l = ldp.longitudinal(name, k=k, eps_perm=eps_perm, eps_1=eps_1)
    items = np.arange(3_000) % k
    day = l.collect(items, collections=2, seed=3)[1]
    theirs = their_aggregator(name, k, eps_perm, eps_1)(day)
    np.testing.assert_allclose(l.estimate(day, "clip"), theirs, rtol=0, atol=1e-12)


@pytest.mark.parametrize("name", CHAINS)
def test_reports_made_by_multi_freq_ldpy_estimate_the_same_here(name):
    module, _ = THEIRS[name]
    mod = optional(f"multi_freq_ldpy.long_freq_est.{module}")
    client = getattr(mod, module + "_Client")
    k, eps_perm, eps_1 = (2 if name == "l-grr" else 5), 3.0, 1.0
    np.random.seed(11)
    reports = [client(int(v), k, eps_perm, eps_1) for v in np.arange(1_000) % k]
    theirs = their_aggregator(name, k, eps_perm, eps_1)(reports)
    l = ldp.longitudinal(name, k=k, eps_perm=eps_perm, eps_1=eps_1)
    ours = l.estimate(np.asarray(reports, dtype=np.int64), "clip")
    np.testing.assert_allclose(ours, theirs, rtol=0, atol=1e-12)


def test_l_grr_spends_exactly_eps_1_where_multi_freq_ldpy_spends_less():
    # multi-freq-ldpy's L-GRR (the closed form of Arcolezi et al. 2021) solves
    # (p1 p2 + q1 q2) / (p1 q2 + q1 p2) = e^eps_1, the ratio of a two-valued chain. A GRR
    # chain over k items keeps the value with p_s = p1 p2 + (1 - p1) q2 against
    # q_s = q1 p2 + p1 q2 + (k - 2) q1 q2, so for k > 2 that p2 spends less than eps_1.
    optional("multi_freq_ldpy.long_freq_est.L_GRR")
    eps_perm, eps_1 = 2.0, 1.0
    a = np.exp(eps_1)
    for k in [2, 5, 100]:
        p1 = np.exp(eps_perm) / (np.exp(eps_perm) + k - 1)
        q1 = (1 - p1) / (k - 1)
        p2 = (q1 - a * p1) / ((-p1 * a) + k * q1 * a - q1 * a - p1 * (k - 1) + q1)
        q2 = (1 - p2) / (k - 1)
        spent = np.log((p1 * p2 + (1 - p1) * q2) / (q1 * p2 + p1 * q2 + (k - 2) * q1 * q2))
        r = ldp.longitudinal("l-grr", k=k, eps_perm=eps_perm, eps_1=eps_1).rounds()
        assert np.log(r["p_s"] / r["q_s"]) == pytest.approx(eps_1, abs=1e-12)
        if k == 2:
            assert spent == pytest.approx(eps_1, abs=1e-12)
        else:
            assert spent < eps_1 - 0.05  # 0.166 at k = 100


def test_a_memo_is_kept_across_collections_and_estimates_are_unbiased():
    l = ldp.longitudinal("l-grr", k=4, eps_perm=8.0, eps_1=0.5)
    days = l.collect(np.arange(20_000) % 4, collections=3, seed=5)
    # With eps_perm = 8 the memo is almost always the true value, and a report keeps the
    # memo with p2; the days of one user agree far more often than independent GRR
    # reports at eps_1 would.
    agree = np.mean(days[0] == days[1])
    p = l.rounds()["p2"]
    assert abs(agree - (p * p + (1 - p) ** 2 / 3)) < 0.02
    est = l.estimate(days[2])
    assert np.all(np.abs(est - 0.25) < 0.03)
    assert l.rounds()["p_s"] == pytest.approx(np.exp(0.5) / (np.exp(0.5) + 3), abs=1e-12)


def test_asr_after_t_reports_matches_the_tool(cli):
    grr = ldp.mechanism("grr", k=100, eps=1.0)
    out = cli("analyze", "--protocol", "grr,ss", "--k", "100", "--eps", "1", "--collections", "365").decode()
    rows = [line.split(",") for line in out.splitlines()[1:]]
    assert ldp.asr_after(grr, [365])[0] == pytest.approx(float(rows[0][-1]), abs=1e-12)
    assert ldp.asr_after(ldp.mechanism("ss", k=100, eps=1.0), [1, 365])[1] is None
    assert rows[1][-1] == ""
    l = ldp.longitudinal("l-adp", k=100, eps_perm=2.0, eps_1=1.0)
    assert l.protocol == "l-osue"
    assert l.asr_after(10_000) == pytest.approx(l.asr_limit, abs=1e-9)


def test_linked_attack_measured_matches_the_closed_form():
    for target in [ldp.mechanism("oue", k=100, eps=1.0), ldp.longitudinal("l-sue", k=100, eps_perm=2.0, eps_1=1.0)]:
        s = ldp.simulate_linked(target, [1, 5, 20], dataset="adult-age", users=4_000, seed=2)
        z = (s["asr"] - s["asr_expected"]) / s["asr_se"]
        assert np.all(np.abs(z) < 3), (target, s)


def test_change_detection_matches_the_closed_forms():
    grr = ldp.mechanism("grr", k=100, eps=2.0)
    s = ldp.simulate_changes(grr, 10, 0.2, dataset="adult-age", users=3_000, runs=4, seed=3)
    for rate in ["detect", "false_alarm", "flag_rate"]:
        assert abs(s[rate] - s[f"{rate}_expected"]) <= 3 * s[f"{rate}_se"], (rate, s)
    # dBitFlipPM: no false alarm, and at most d + 1 = 2 memos of eps per user.
    pm = ldp.simulate_changes(
        ldp.mechanism("dbitflip", k=100, eps=2.0), 10, 0.2, dataset="adult-age", users=3_000, runs=4, seed=3,
        permanent=True,
    )
    assert pm["false_alarm"] == 0.0 and pm["precision"] == 1.0
    assert abs(pm["detect"] - pm["detect_expected"]) <= 3 * pm["detect_se"], pm
    assert pm["budget_per_user"] <= 4.0
    # The memoized unary chains have no closed form: NaN, not a number made up.
    l = ldp.longitudinal("l-osue", k=100, eps_perm=2.0, eps_1=1.0)
    memo = ldp.simulate_changes(l, 5, 0.2, dataset="adult-age", users=1_000)
    assert np.isnan(memo["detect_expected"]) and memo["false_alarm"] > 0.5
    for bad, match in [(dict(days=1), "day"), (dict(change_rate=1.5), "change rate")]:
        args = dict(days=10, change_rate=0.2) | bad
        with pytest.raises(ldp.ParamError, match=match):
            ldp.simulate_changes(grr, args["days"], args["change_rate"], dataset="adult-age")
    with pytest.raises(ldp.ParamError, match="permanent"):
        ldp.simulate_changes(l, 5, 0.2, dataset="adult-age", permanent=True)


def test_replayed_values_give_the_tools_row(cli, tmp_path):
    """Recorded values, replayed: the same numbers as `ldp simulate --trajectories`."""
    rng = np.random.default_rng(5)
    days = rng.integers(0, 10, size=(300, 8))
    days[:, 1:] = np.where(rng.random((300, 7)) < 0.7, days[:, :1], days[:, 1:])
    grr = ldp.mechanism("grr", k=10, eps=2.0)
    mine = ldp.replay_changes(grr, days, runs=3, seed=4, permanent=True)
    path = tmp_path / "t.csv"
    path.write_text("user,day,value\n" + "".join(
        f"u{u},{d},{v}\n" for u in range(300) for d, v in enumerate(days[u])))
    out = cli("simulate", "--protocol", "grr", "--k", "10", "--eps", "2", "--runs", "3", "--seed", "4",
              "--permanent", "--trajectories", str(path))
    header, row = (line.split(",") for line in out.decode().splitlines())
    theirs = dict(zip(header, row))
    changes = np.count_nonzero(days[:, 1:] != days[:, :-1]) / days[:, 1:].size
    assert mine["change_rate_measured"] == float(theirs["change_rate_measured"]) == pytest.approx(changes, rel=1e-12)
    for column in ["detect", "false_alarm", "precision", "detect_expected", "values_per_user"]:
        assert mine[column] == pytest.approx(float(theirs[column]), rel=1e-12), column
    assert mine["false_alarm"] == 0.0
    with pytest.raises(ldp.ParamError, match=r"trajectories\[1\]"):
        ldp.replay_changes(grr, [[0, 1], "ab"])
    with pytest.raises(ldp.ParamError, match="outside"):
        ldp.replay_changes(grr, [[0, 10]])


def test_analyze_gives_the_change_detectors_closed_forms_as_the_tool(cli):
    mine = ldp.analyze(["grr", "hr"], 100, 2.0, change_rate=0.2)
    out = cli("analyze", "--protocol", "grr,hr", "--k", "100", "--eps", "2", "--change-rate", "0.2")
    header, *rows = (line.split(",") for line in out.decode().splitlines())
    theirs = [dict(zip(header, row)) for row in rows]
    for column in ["detect", "false_alarm", "precision"]:
        assert mine[column][0] == pytest.approx(float(theirs[0][column]), rel=1e-12)
        assert np.isnan(mine[column][1]) and theirs[1][column] == ""
    assert "detect" not in ldp.analyze("grr", 100, 2.0)
    with pytest.raises(ldp.ParamError, match="change_rate"):
        ldp.analyze("grr", 100, 2.0, change_rate=1.5)


def test_tuning_for_a_year_of_daily_reports():
    once = ldp.tune("aue", 100, 0.5)
    daily = ldp.tune("aue", 100, 0.5, asr_after=365)
    assert daily["asr"] > 0.97 > 0.02 > once["asr"]
    with pytest.raises(ldp.TuningError, match="no exact ASR after 30"):
        ldp.tune("ass", 100, 0.5, asr_after=30)


def test_choosing_among_the_twelve_for_daily_reports_matches_the_tool(cli):
    mine = ldp.tune("all", 100, 1.0, asr_max=0.1, asr_after=30)
    out = cli("tune", "--protocol", "all", "--k", "100", "--eps", "1", "--asr-max", "0.1", "--asr-after", "30")
    header, row = (line.split(",") for line in out.decode().splitlines())
    theirs = dict(zip(header, row))
    assert mine["protocol"] == theirs["protocol"]
    for column in ["param", "asr", "mse", "bits"]:
        assert mine[column] == pytest.approx(float(theirs[column]), rel=1e-12)
    assert mine["asr"] <= 0.1 and mine["asr"] == pytest.approx(
        ldp.asr_after(ldp.mechanism(mine["protocol"], k=100, eps=1.0, param=mine["param"]), [30])[0], abs=1e-12
    )
    assert mine != ldp.tune("all", 100, 1.0, asr_max=0.1)


def test_choosing_under_a_bound_on_the_change_detector_matches_the_tool(cli):
    mine = ldp.tune("all", 100, 6.0, precision_max=0.2, change_rate=0.1)
    out = cli("tune", "--protocol", "all", "--k", "100", "--eps", "6", "--precision-max", "0.2",
              "--change-rate", "0.1")
    header, row = (line.split(",") for line in out.decode().splitlines())
    theirs = dict(zip(header, row))
    assert mine["protocol"] == theirs["protocol"] == "oue"
    assert mine["asr"] == pytest.approx(float(theirs["asr"]), rel=1e-12)
    # The pick's own detector, by the closed form, meets the bound; GRR's would not.
    chosen = ldp.analyze(mine["protocol"], 100, 6.0, change_rate=0.1)["precision"][0]
    grr = ldp.analyze("grr", 100, 6.0, change_rate=0.1)["precision"][0]
    assert chosen <= 0.2 < grr
    with pytest.raises(ldp.ParamError, match="change rate"):
        ldp.tune("all", 100, 6.0, precision_max=0.2)


def test_bad_input_is_a_typed_error():
    with pytest.raises(ldp.ParamError, match="below"):
        ldp.longitudinal("l-oue", k=10, eps_perm=2.0, eps_1=1.9)
    with pytest.raises(ldp.ParamError, match="unknown longitudinal protocol"):
        ldp.longitudinal("l-xyz", k=10, eps_perm=2.0, eps_1=1.0)
    l = ldp.longitudinal("l-osue", k=4, eps_perm=2.0, eps_1=1.0)
    with pytest.raises(ldp.ReportError, match="columns"):
        l.estimate(np.zeros((3, 5), dtype=int))
    with pytest.raises(ldp.ReportError, match="not 0 or 1"):
        l.estimate(np.full((3, 4), 2))
    with pytest.raises(ldp.ItemError):
        l.collect([4])
    with pytest.raises(ldp.ParamError, match="collections"):
        ldp.asr_after(l, [0])
    with pytest.raises(ldp.ParamError, match="at most 10000"):
        ldp.asr_after(l, [10_001])
    with pytest.raises(ldp.ParamError, match="at most 10000"):
        ldp.tune("aue", 100, 0.5, asr_after=20_000)


@pytest.mark.parametrize("name", ["l-sue", "l-osue"])
def test_collected_bits_go_to_multi_freq_ldpy_as_they_are(name):
    # Issue 30: the bits were uint8, and multi-freq-ldpy's aggregators, which add the
    # reports up in their dtype, wrapped at 255. They are float64 now, as its clients'.
    module, function = THEIRS[name]
    mod = optional(f"multi_freq_ldpy.long_freq_est.{module}")
    k, eps_perm, eps_1 = 6, 2.0, 0.8
    l = ldp.longitudinal(name, k=k, eps_perm=eps_perm, eps_1=eps_1)
    day = l.collect(np.zeros(3_000, dtype=int), collections=1, seed=3)[0]
    assert day.dtype == np.float64 and day[:, 0].sum() > 255
    theirs = getattr(mod, function)(day, eps_perm, eps_1)
    np.testing.assert_allclose(l.estimate(day, "clip"), theirs, rtol=0, atol=1e-12)


def test_a_list_of_collections_is_pooled_and_uint8_is_kept_for_memory():
    l = ldp.longitudinal("l-osue", k=5, eps_perm=3.0, eps_1=1.0)
    days = l.collect(np.arange(2_000) % 5, collections=3, seed=2)
    pooled = l.estimate(days)
    np.testing.assert_allclose(pooled, l.estimate(np.concatenate(days)), rtol=0, atol=1e-15)
    narrow = l.collect(np.arange(2_000) % 5, collections=3, seed=2, dtype="uint8")
    assert narrow[0].dtype == np.uint8
    np.testing.assert_array_equal(narrow[0], days[0])
    grr = ldp.longitudinal("l-grr", k=5, eps_perm=3.0, eps_1=1.0)
    g_days = grr.collect(np.arange(2_000) % 5, collections=2, seed=2)
    np.testing.assert_allclose(grr.estimate(g_days), grr.estimate(np.concatenate(g_days)), atol=1e-15)
    with pytest.raises(ldp.ReportError, match="4 columns for k = 5"):
        l.estimate([np.zeros((3, 4)), np.zeros((3, 4))])
    with pytest.raises(ldp.ParamError, match="dtype"):
        l.collect([1], dtype="int8")


def dense(reports, k):
    """A set-shaped Reports object as a users x k 0/1 array."""
    bits = np.zeros((len(reports), k))
    rows = np.repeat(np.arange(len(reports)), np.diff(reports.offsets))
    bits[rows, reports.indices] = 1.0
    return bits


@pytest.mark.parametrize("name", CHAINS + ["l-adp"])
def test_collected_reports_are_reports_of_the_one_shot_protocol(name, tmp_path):
    # Issue 30: the longitudinal reports had their own data model (dense arrays): no
    # aggregator, merge, Arrow or pickling. One collection's reports follow the one-shot
    # protocol `report_mechanism`, and `collect_reports` returns them as its Reports.
    pq = pytest.importorskip("pyarrow.parquet")
    import pickle

    k = 8
    l = ldp.longitudinal(name, k=k, eps_perm=3.0, eps_1=1.0)
    m = l.report_mechanism
    assert m.eps == 1.0 and m.k == k
    items = np.arange(6_000) % k
    days = l.collect(items, collections=3, seed=7)
    reports = l.collect_reports(items, collections=3, seed=7)
    assert len(reports) == 3
    for day, r in zip(days, reports):
        assert r.mechanism == m and len(r) == len(items)
        # The same draws as `collect`.
        np.testing.assert_array_equal(r.y if m.protocol == "grr" else dense(r, k), day)
        agg = m.aggregator()
        agg.add(r)
        np.testing.assert_allclose(agg.estimate(), l.estimate(day), rtol=0, atol=1e-12)
    if name in ("l-oue", "l-soue"):
        assert m.param < 0.5  # outside the paper's UE range, still eps_1-LDP
    # Parquet and back, halves merged, pickled.
    folder = tmp_path / "day0"
    folder.mkdir()
    pq.write_table(reports[0][:3_000].to_arrow(), folder / "a.parquet")
    pq.write_table(reports[0][3_000:].to_arrow(), folder / "b.parquet")
    back = ldp.Reports.read_parquet(folder)
    assert back == reports[0] and back.mechanism == m
    halves = [m.aggregator(), m.aggregator()]
    halves[0].add(ldp.Reports.read_parquet(folder / "a.parquet"))
    halves[1].add(pickle.loads(pickle.dumps(reports[0][3_000:])))
    halves[0].merge(pickle.loads(pickle.dumps(halves[1])))
    whole = m.aggregator()
    whole.add(reports[0])
    assert halves[0].counts.tolist() == whole.counts.tolist()


def test_one_collections_reports_go_to_multi_freq_ldpy_past_255():
    # Their aggregators add the dense bits up in their dtype: from Reports, float64 as
    # their clients give, with an item held by more than 255 users.
    l = ldp.longitudinal("l-oue", k=6, eps_perm=2.0, eps_1=0.8)
    mod = optional("multi_freq_ldpy.long_freq_est.L_OUE")
    r = l.collect_reports(np.zeros(3_000, dtype=int), seed=3)[0]
    bits = dense(r, 6)
    assert bits[:, 0].sum() > 255
    theirs = mod.L_OUE_Aggregator_MI(bits, 2.0, 0.8)
    ours = l.report_mechanism.aggregator()
    ours.add(r)
    np.testing.assert_allclose(ours.estimate("clip"), theirs, rtol=0, atol=1e-12)


def test_collect_reports_refuses_bad_input():
    l = ldp.longitudinal("l-grr", k=5, eps_perm=3.0, eps_1=1.0)
    with pytest.raises(ldp.ItemError, match="items"):
        l.collect_reports([0, 5])
    with pytest.raises(ldp.ParamError, match="collections"):
        l.collect_reports([0], collections=0)
    with pytest.raises(ldp.ParamError, match="seed"):
        l.collect_reports([0], seed=-1)


@pytest.mark.parametrize("name", ["l-olh", "l-blh"])
def test_loloha_chains_are_local_hashing_with_one_seed_per_user(name):
    # Issue 42: LOLOHA (L-OLH) and BiLOLOHA (L-BLH). One report is LH at eps_1 with the
    # memo's g; a user's reports share its seed; the pooled estimate is unbiased.
    k, users = 20, 20_000
    l = ldp.longitudinal(name, k=k, eps_perm=4.0, eps_1=2.0)
    m = l.report_mechanism
    assert m.eps == 2.0 and (m.param == 2 if name == "l-blh" else m.param > 2)
    items = np.arange(users) % k
    days = l.collect_reports(items, collections=3, seed=3)
    assert all(d.mechanism == m for d in days)
    np.testing.assert_array_equal(days[0].seed, days[2].seed)
    assert len(np.unique(days[0].seed)) > users * 0.99
    agg = m.aggregator()
    for d in days:
        agg.add(d)
    est = agg.estimate()
    assert np.abs(est - 1 / k).max() < 6 * np.sqrt(l.variance / (3 * users))
    assert 0 < l.asr_after(50) <= l.asr_limit + 1e-12
    with pytest.raises(ldp.ParamError, match="collect_reports"):
        l.collect(items, collections=1)
    with pytest.raises(ldp.ParamError, match="collect_reports"):
        l.estimate(np.zeros(3))


def test_an_estimate_stopped_at_the_cap_says_so():
    # As Aggregator.estimate does: an iterative estimate capped before it converged is
    # its last iterate, and a RuntimeWarning says so.
    import warnings

    for name in ["l-grr", "l-osue"]:
        l = ldp.longitudinal(name, k=6, eps_perm=2.0, eps_1=1.0)
        day = l.collect(np.arange(600) % 3, collections=1, seed=2)[0]
        with pytest.warns(RuntimeWarning, match="ibu stopped at the cap of 3 iterations.*ibu-squarem"):
            l.estimate(day, "ibu", max_iterations=3)
        with pytest.warns(RuntimeWarning, match="ibu-squarem stopped at the cap of 1 iterations.*raise max_iterations"):
            l.estimate(day, "ibu-squarem", max_iterations=1)
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # converged: no warning
            l.estimate(day, "ibu-squarem")
