"""The package and the `ldp` tool agree: seeded reports, JSON lines both ways, attacks,
estimates, and the closed forms of analyze, tune and frontier."""

import csv
import io
import math

import numpy as np
import pytest

import ldp
from conftest import optional

CLASSIC = ["grr", "ss", "sue", "oue", "blh", "olh", "she", "the"]


def lines(items):
    return "".join(f"{x}\n" for x in items).encode()


@pytest.mark.parametrize("protocol", CLASSIC)
def test_seeded_reports_equal_the_tools(cli, tmp_path, protocol):
    # 10 000 items: the streams of three batches of 4096.
    items = (np.arange(10_000) * 7) % 30
    m = ldp.mechanism(protocol, k=30, eps=1.5)
    mine = m.perturb(items, seed=42)
    path = tmp_path / "r.jsonl"
    mine.to_jsonl(path)
    theirs = cli("perturb", "--protocol", protocol, "--k", 30, "--eps", 1.5, "--seed", 42, stdin=lines(items))
    assert path.read_bytes() == theirs
    # And back: the tool's file loads as the same reports.
    (tmp_path / "cli.jsonl").write_bytes(theirs)
    assert ldp.Reports.from_jsonl(tmp_path / "cli.jsonl", m) == mine


@pytest.mark.parametrize("protocol", ["grr", "oue", "olh", "she", "aue"])
def test_the_tool_aggregates_python_reports_to_the_same_estimate(cli, tmp_path, protocol):
    m = ldp.mechanism(protocol, k=16, eps=2.0, param=0.7 if protocol == "aue" else None)
    r = m.perturb(np.arange(5_000) % 16, seed=3)
    r.to_jsonl(tmp_path / "r.jsonl")
    args = ["--protocol", protocol, "--k", 16, "--eps", 2.0]
    if protocol == "aue":
        args += ["--param", 0.7]
    out = cli("aggregate", *args, stdin=(tmp_path / "r.jsonl").read_bytes()).decode()
    theirs = np.array([float(row["estimate"]) for row in csv.DictReader(io.StringIO(out))])
    server = m.aggregator()
    server.add(r)
    if protocol == "she":
        np.testing.assert_allclose(server.estimate(), theirs, rtol=0, atol=1e-12)
    else:
        assert np.array_equal(server.estimate(), theirs)


def test_attack_guesses_equal_the_tools(cli, tmp_path):
    m = ldp.mechanism("oue", k=20, eps=1.0)
    r = m.perturb(np.arange(9_000) % 20, seed=8)
    r.to_jsonl(tmp_path / "r.jsonl")
    out = cli("attack", "--protocol", "oue", "--k", 20, "--eps", 1.0, "--seed", 9, stdin=(tmp_path / "r.jsonl").read_bytes())
    theirs = np.array(out.split(), dtype=np.uint32)
    assert np.array_equal(ldp.attack(r, seed=9), theirs)


def rows(text):
    return list(csv.DictReader(io.StringIO(text.decode())))


def same(a, b):
    # The tool leaves a cell empty where there is no parameter (NaN here) or where EPG is
    # unbounded (SHE without clipping: inf here).
    if b == "":
        return a is None or math.isnan(a) or math.isinf(a)
    return float(a) == float(b)


def test_analyze_equals_the_tool(cli):
    mine = ldp.analyze("all", k=[10, 1000], eps=[0.5, 4.0], frame=False)
    theirs = rows(cli("analyze", "--protocol", "all", "--k", "10,1000", "--eps", "0.5,4"))
    protocols = list(dict.fromkeys(mine["protocol"]))
    assert protocols[:12] == ["grr", "ss", "sue", "oue", "blh", "olh", "she", "the", "ass", "aue", "alh", "athe"]
    assert len(theirs) == len(mine["protocol"]) == 4 * len(protocols)
    for i, row in enumerate(theirs):
        assert row["protocol"] == mine["protocol"][i]
        for column in ["k", "eps", "param", "asr", "mse", "epg", "bits", "server_cost", "client_cost"]:
            if column == "param" and "=" in row[column]:
                # Several parameters: the tool writes them by name, as `params` has them.
                assert mine["params"][i] == row[column] and math.isnan(mine["param"][i])
                continue
            assert same(mine[column][i], row[column]), (row, column, mine[column][i])


def test_simulate_pairs_measurements_with_the_tools_closed_forms(cli):
    targets = "0,1,2"
    mine = ldp.simulate(ldp.mechanism("oue", k=100, eps=2.0), dataset="adult-age", runs=2, seed=3,
                        poison="mga", beta=0.05, targets=[0, 1, 2])
    (theirs,) = rows(cli("simulate", "--protocol", "oue", "--k", "100", "--eps", "2", "--dataset", "adult-age",
                         "--runs", "2", "--seed", "3", "--poison", "mga", "--beta", "0.05", "--targets", targets))
    for column in ["asr", "asr_expected", "mse", "mse_expected", "kl", "kl_se", "rank_corr", "rank_corr_se",
                   "gain", "epg"]:
        assert same(mine[column], theirs[column]), (column, mine[column], theirs[column])
    # The random item attack has no closed form.
    ria = ldp.simulate(ldp.mechanism("oue", k=100, eps=2.0), dataset="adult-age", runs=1,
                       poison="ria", beta=0.05, targets=[0, 1, 2])
    assert ria["epg"] is None


def test_analyze_filters_rows_as_the_tool_does(cli):
    mine = ldp.analyze("all", k=1000, eps=2.0, asr_max=0.2, bits_max=64, frame=False)
    theirs = rows(cli("analyze", "--protocol", "all", "--k", "1000", "--eps", "2", "--asr-max", "0.2", "--bits-max", "64"))
    everything = ldp.analyze("all", k=1000, eps=2.0, frame=False)
    assert 0 < len(theirs) == len(mine["protocol"]) < len(everything["protocol"])
    assert [r["protocol"] for r in theirs] == list(mine["protocol"])
    assert all(a <= 0.2 for a in mine["asr"]) and all(b <= 64 for b in mine["bits"])
    with pytest.raises(ldp.ParamError, match="asr_max: an ASR bound must lie in"):
        ldp.analyze("grr", 10, 1.0, asr_max=1.5)


@pytest.mark.parametrize(
    "kwargs, flags",
    [
        ({}, []),
        ({"w_asr": 0.8, "search": "refined"}, ["--w-asr", 0.8, "--search", "refined"]),
        ({"strategy": "utopia"}, ["--strategy", "utopia"]),
        ({"strategy": "eps-constraint"}, ["--strategy", "eps-constraint"]),
        ({"asr_max": 0.1}, ["--asr-max", 0.1]),
        ({"w_epg": 0.2, "beta": 0.1}, ["--w-epg", 0.2, "--beta", 0.1]),
    ],
)
@pytest.mark.parametrize("protocol", ["ass", "aue", "alh", "athe"])
def test_tune_equals_the_tool(cli, protocol, kwargs, flags):
    mine = ldp.tune(protocol, 100, 2.0, **kwargs)
    (row,) = rows(cli("tune", "--protocol", protocol, "--k", 100, "--eps", 2.0, *flags))
    for column in ["strategy", "param", "asr", "mse", "epg", "bits"]:
        if column == "strategy":
            assert mine[column] == row[column]
        else:
            assert same(mine[column], row[column]), (column, mine[column], row[column])


def test_tune_all_and_frontier_equal_the_tool(cli):
    mine = ldp.tune("all", 100, 2.0, asr_max=0.05)
    (row,) = rows(cli("tune", "--protocol", "all", "--k", 100, "--eps", 2.0, "--asr-max", 0.05))
    assert mine["protocol"] == row["protocol"] and same(mine["mse"], row["mse"])
    # A large domain and few bits: a family with several parameters wins, named in both.
    mine = ldp.tune("all", 100_000, 2.0, asr_max=0.01, bits_max=32)
    flags = ["--k", 100_000, "--eps", 2.0, "--asr-max", 0.01, "--bits-max", 32]
    (row,) = rows(cli("tune", "--protocol", "all", *flags))
    assert (mine["protocol"], row["protocol"]) == ("flh", "flh")
    assert row["param"] == ";".join(f"{n}={v}" for n, v in mine["param"].items()) == "g=8;seeds=1000"
    front = ldp.frontier("athe", 50, 1.0, ["asr", "mse", "bits"])
    theirs = rows(cli("frontier", "--protocol", "athe", "--k", 50, "--eps", 1.0, "--objectives", "asr,mse,bits"))
    assert len(theirs) == len(front["param"])
    for i, row in enumerate(theirs):
        for column in ["param", "asr", "mse", "bits"]:
            assert same(front[column][i], row[column])


def test_a_mechanism_tuned_in_python_is_the_tools(cli):
    m = ldp.mechanism("alh", k=100, eps=3.0, w_asr=0.3)
    (row,) = rows(cli("tune", "--protocol", "alh", "--k", 100, "--eps", 3.0, "--w-asr", 0.3))
    assert m.param == float(row["param"]) and m.tuning["strategy"] == "weighted"


def test_parquet_from_pyarrow_is_read_by_the_tool(cli, tmp_path):
    pq = optional("pyarrow.parquet")
    for protocol in ["grr", "ss", "olh", "she"]:
        m = ldp.mechanism(protocol, k=10, eps=1.0)
        r = m.perturb(np.arange(3_000) % 10, seed=6)
        pq.write_table(r.to_arrow(), tmp_path / f"{protocol}.parquet")
        out = cli("aggregate", "--protocol", protocol, "--k", 10, "--eps", 1.0, "--input", tmp_path / f"{protocol}.parquet")
        theirs = np.array([float(row["estimate"]) for row in rows(out)])
        server = m.aggregator()
        server.add(r)
        np.testing.assert_allclose(server.estimate(), theirs, rtol=0, atol=1e-12)


def test_the_shuffle_accountant_gives_the_tools_numbers(cli):
    out = cli("shuffle", "--users", 100000, "--delta", 1e-6, "--eps0", 4).decode()
    row = next(csv.DictReader(io.StringIO(out)))
    r = ldp.shuffle(100_000, 1e-6, eps0=4.0)
    assert float(row["central_eps"]) == r["central_eps"]
    assert float(row["closed_form"]) == r["closed_form"]
    out = cli("shuffle", "--users", 10**6, "--delta", 1e-8, "--central-eps", 1).decode()
    row = next(csv.DictReader(io.StringIO(out)))
    assert float(row["eps0_max"]) == ldp.shuffle(10**6, 1e-8, central_eps=1.0)["eps0_max"]


def test_the_randomized_response_bound_is_the_tools(cli):
    # k-RR's own bound (--grr / grr_k): the tool's numbers, and tighter than the generic
    # bound for binary randomized response.
    for k in (2, 10, 1000):
        out = cli("shuffle", "--users", 10**5, "--delta", 1e-6, "--eps0", 4, "--grr", k).decode()
        row = next(csv.DictReader(io.StringIO(out)))
        r = ldp.shuffle(100_000, 1e-6, eps0=4.0, grr_k=k)
        assert float(row["central_eps"]) == r["central_eps"]
        assert r["central_eps"] <= ldp.shuffle(100_000, 1e-6, eps0=4.0)["central_eps"]
    assert ldp.shuffle(100_000, 1e-6, eps0=4.0, grr_k=2)["central_eps"] < 0.12
    out = cli("shuffle", "--users", 10**6, "--delta", 1e-8, "--central-eps", 1, "--grr", 2)
    row = next(csv.DictReader(io.StringIO(out.decode())))
    assert float(row["eps0_max"]) == ldp.shuffle(10**6, 1e-8, central_eps=1.0, grr_k=2)["eps0_max"]
