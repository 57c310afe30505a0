"""ldp.audit and ldp.exact_audit: our mechanisms, Python callables, and peers' clients."""

import math
import os
import subprocess
import sys

import numpy as np
import pytest

import ldp


def test_a_mechanism_is_audited_by_both_statistics():
    r = ldp.audit(ldp.mechanism("oue", k=25, eps=2.0), trials=200_000, seed=1)
    assert r["flagged"] is False
    lr, guess = r["statistics"]
    assert (lr["statistic"], guess["statistic"]) == ("lr", "guess")
    assert 1.8 < lr["eps_emp"] <= 2.0
    assert guess["eps_emp"] < lr["eps_emp"]


def test_the_exact_audit_of_thresholding_is_below_its_budget():
    exact = ldp.exact_audit(ldp.mechanism("the", k=25, eps=1.0))
    p = 1 - 0.5 * math.exp(-(1 - 0.6186) * 0.5)
    assert exact["eps_exact"] < 1.0
    assert exact["claimed_eps"] == 1.0
    assert p > 0.5
    assert exact["flagged"] is False


def test_the_exact_verdicts_are_the_tools():
    l = ldp.longitudinal("l-grr", k=100, eps_perm=2.0, eps_1=1.0)
    exact = ldp.exact_audit(l, collections=[1, 5, 1000])
    assert exact["flagged"] == [False, False, False]
    assert all(e <= exact["eps_perm"] * (1 + 1e-12) for _, e in exact["budgets"])


def test_a_client_of_several_attributes_is_audited_per_kind_of_change():
    """RS+FD[GRR] over unequal domains spends more than eps on one attribute (exactly 1.25
    at k = 2 and 100), within eps' on the whole tuple; the tool says the same."""
    m = ldp.multidim("grr", 1.0, [2, 100], solution="rsfd")
    exact = ldp.exact_audit(m)
    assert exact["flagged"] is True
    assert abs(exact["eps_whole"] - m.report_eps) < 1e-9
    assert abs(exact["eps_attribute"] - 1.2497) < 1e-3 and exact["worst_attribute"] == 1
    r = ldp.audit(m, trials=300_000, statistics=["lr", "guess"])
    assert r["flagged"] is True and r["claimed_whole"] == m.report_eps
    assert r["inputs"] == [[0, 0], [1, 99], [1, 0], [0, 99]]
    lr, guess = r["statistics"]
    assert 1.0 < lr["eps_attribute"] <= exact["eps_attribute"]
    assert 1.2 < lr["eps_whole"] <= exact["eps_whole"]
    assert guess["eps_whole"] < lr["eps_whole"]
    assert [p["v2"] for p in lr["pairs"]] == [[1, 99], [1, 0], [0, 99]]
    # SMP keeps eps for both; pairs other than the fixed tuples are refused.
    smp = ldp.multidim("oue", 1.0, [3, 4], solution="smp")
    assert ldp.audit(smp, trials=20_000)["flagged"] is False
    with pytest.raises(ldp.ParamError, match="fixed tuples"):
        ldp.audit(smp, trials=10, pairs="cycle")
    with pytest.raises(ldp.ParamError, match="by symmetry"):
        ldp.exact_audit(ldp.multidim("oue", 1.0, [3, 4], solution="rsfd"))


def _ue_client(k, eps, broken_bit=None, seed=0):
    """A correct SUE client in numpy, or one that leaves one bit unperturbed."""
    rng = np.random.default_rng(seed)
    p = math.exp(eps / 2) / (math.exp(eps / 2) + 1)

    def perturb(items):
        n = len(items)
        onehot = np.zeros((n, k), dtype=np.int64)
        onehot[np.arange(n), items] = 1
        keep = rng.random((n, k)) < p
        out = np.where(keep, onehot, 1 - onehot)
        if broken_bit is not None:
            out[:, broken_bit] = onehot[:, broken_bit]
        return out

    return perturb


def test_a_correct_numpy_client_passes_and_a_broken_one_is_flagged():
    k, eps = 10, 1.0
    correct = ldp.audit(_ue_client(k, eps), shape="set", k=k, eps=eps, trials=20_000, pairs="cycle")
    assert correct["flagged"] is False
    broken = ldp.audit(
        _ue_client(k, eps, broken_bit=k - 1), shape="set", k=k, eps=eps, trials=20_000, pairs="cycle"
    )
    assert broken["flagged"] is True
    worst = max(broken["statistics"], key=lambda s: s["eps_emp"])
    assert k - 1 in (worst["v1"], worst["v2"])


def test_linked_reports_spend_more_than_one_and_less_than_the_memo():
    l = ldp.longitudinal("l-osue", k=20, eps_perm=2.0, eps_1=0.5)
    budgets = dict(ldp.exact_audit(l, collections=[1, 4, 1000])["budgets"])
    assert budgets[1] == pytest.approx(0.5)
    assert 0.5 < budgets[4] < budgets[1000] <= 2.0 + 1e-9
    r = ldp.audit(l, collections=4, trials=100_000)
    assert r["claimed_eps"] == pytest.approx(budgets[4])
    assert r["flagged"] is False and r["eps_emp"] > 0.5
    with pytest.raises(ldp.ParamError, match="collections"):
        ldp.audit(ldp.mechanism("grr", k=10, eps=1.0), collections=2)


def test_a_client_that_raises_raises_its_own_exception():
    def failing(items):
        raise KeyError("client broke")

    with pytest.raises(KeyError, match="client broke"):
        ldp.audit(failing, shape="grr", k=10, trials=100)


def test_bad_settings_are_named():
    with pytest.raises(ldp.ParamError, match="shape"):
        ldp.audit(lambda x: x, k=10, trials=10)
    with pytest.raises(ldp.ParamError, match="g: an lh client"):
        ldp.audit(lambda x: x, shape="lh", k=10, trials=10)
    with pytest.raises(ldp.ParamError, match="pairs"):
        ldp.audit(lambda x: x, shape="grr", k=10, trials=10, pairs="all")
    with pytest.raises(ldp.ParamError, match="the mechanism's own"):
        ldp.audit(ldp.mechanism("grr", k=10, eps=1.0), k=10)
    with pytest.raises(ldp.ParamError, match="client returned 9 reports for 10 items"):
        ldp.audit(lambda x: x[1:], shape="grr", k=10, trials=10)
    with pytest.raises(ldp.ParamError, match="outside the domain 0 to 9"):
        ldp.audit(lambda x: x + 10, shape="grr", k=10, trials=10)
    with pytest.raises(TypeError, match="callable"):
        ldp.audit(3, shape="grr", k=10)


def test_multi_freq_ldpy_l_grr_leaves_budget_unspent():
    """multi-freq-ldpy's L-GRR at k = 100, eps_perm = 2, eps_1 = 1: the first report's
    budget, audited on its reports beside our L-GRR's exact budget."""
    pytest.importorskip("multi_freq_ldpy")
    from multi_freq_ldpy.long_freq_est.L_GRR import L_GRR_Client

    k = 100

    def client(items):
        return np.array([L_GRR_Client(int(v), k, 2.0, 1.0) for v in items])

    theirs = ldp.audit(client, shape="grr", k=k, eps=1.0, trials=100_000, statistics=["lr"])
    assert theirs["flagged"] is False
    # What it spends: well below the eps_1 = 1 it claims for one report (exactly 0.166).
    assert theirs["eps_emp"] < 0.3
    ours = ldp.longitudinal("l-grr", k=k, eps_perm=2.0, eps_1=1.0)
    assert ldp.exact_audit(ours)["budgets"] == [(1, pytest.approx(1.0, abs=1e-9))]
    audit = ldp.audit(ours, collections=1, trials=100_000, statistics=["lr"])
    assert 0.75 < audit["eps_emp"] <= 1.0


PURE_LDP_112 = os.environ.get("LDP_PURE_LDP_112")


@pytest.mark.skipif(
    PURE_LDP_112 is None and os.environ.get("LDP_REQUIRE_OPTIONAL") != "1",
    reason="pure-ldp 1.1.2 is installed by .ci/run into the folder LDP_PURE_LDP_112",
)
def test_pure_ldp_1_1_2_unary_encoding_overspends():
    """pure-ldp 1.1.2's UEClient sets the true bit with probability p + (1 - p) q, not p
    (fixed in 1.2.0): at eps = 0.5 it spends ln(c^2 + c + 1) = 1.37 with c = e^(eps/2)."""
    assert PURE_LDP_112, "LDP_PURE_LDP_112 must name the folder pure-ldp 1.1.2 was installed to"
    script = """
import random, sys
import numpy as np
import pure_ldp
assert pure_ldp.__file__.startswith(sys.argv[1]), pure_ldp.__file__
from pure_ldp.frequency_oracles.unary_encoding import UEClient
import ldp
np.random.seed(0); random.seed(0)
client = UEClient(epsilon=0.5, d=25, use_oue=False, index_mapper=lambda x: x)
r = ldp.audit(lambda items: np.array([client.privatise(int(v)) for v in items]),
              shape="set", k=25, eps=0.5, trials=100_000, statistics=["lr"])
print(r["eps_emp"], r["flagged"])
"""
    env = dict(os.environ, PYTHONPATH=PURE_LDP_112)
    out = subprocess.run(
        [sys.executable, "-c", script, PURE_LDP_112], env=env, capture_output=True, text=True, check=True
    ).stdout.split()
    assert out[1] == "True", out
    assert float(out[0]) > 0.9, out
