"""Bad input raises a Python exception (an ldp.LdpError, a ValueError) with the crate's
message; nothing crashes the interpreter."""

import numpy as np
import pytest

import ldp


@pytest.mark.parametrize(
    "call, error, message",
    [
        (lambda: ldp.mechanism("nope", k=10, eps=1.0), ldp.ParamError, "unknown protocol"),
        (lambda: ldp.mechanism("grr", k=1, eps=1.0), ldp.ParamError, "k = 1"),
        (lambda: ldp.mechanism("grr", k=-3, eps=1.0), ldp.ParamError, "positive"),
        (lambda: ldp.mechanism("grr", k=10, eps=0.0), ldp.ParamError, "eps = 0"),
        (lambda: ldp.mechanism("grr", k=10, eps=float("nan")), ldp.ParamError, "eps = NaN"),
        (lambda: ldp.mechanism("grr", k=2**30, eps=1.0), ldp.ParamError, "k"),
        (lambda: ldp.mechanism("oue", k=10, eps=1e-300), ldp.ParamError, "no signal"),
        (lambda: ldp.longitudinal("l-grr", k=10, eps_perm=1.0, eps_1=1e-300), ldp.ParamError, "no signal"),
        (lambda: ldp.mechanism("oue", k=10, eps=1.0, param=0.3), ldp.ParamError, "fixes p"),
        (lambda: ldp.mechanism("grr", k=10, eps=1.0, param=2), ldp.ParamError, "has no parameter"),
        (lambda: ldp.mechanism("ss", k=10, eps=1.0, param=2.5), ldp.ParamError, "whole number"),
        (lambda: ldp.mechanism("ss", k=10, eps=1.0, param=11), ldp.ParamError, "omega"),
        (lambda: ldp.mechanism("ss", k=10, eps=1.0, param={"w": 3}), ldp.ParamError, "no parameter `w`"),
        (lambda: ldp.mechanism("ss", k=10, eps=1.0, param="omega="), ldp.ParamError, "name=value"),
        (lambda: ldp.mechanism("ss", k=10, eps=1.0, param=[3]), ldp.ParamError, "a dict of numbers"),
        (lambda: ldp.mechanism("oue", k=10, eps=1.0, w_asr=0.3), ldp.ParamError, "w_asr: oue is not tuned"),
        (lambda: ldp.mechanism("aue", k=10, eps=1.0, w_asr=1.5), ldp.ParamError, r"w_asr: the ASR weight must lie in \[0, 1\].*got 1.5"),
        (lambda: ldp.mechanism("aue", k=10, eps=1.0, w_epg=0.5, strategy="elbow"), ldp.ParamError, "strategy: the elbow"),
        (lambda: ldp.tune("aue", 10, 1.0, asr_after=0), ldp.ParamError, "asr_after: the number of collections must be at least 1"),
        (lambda: ldp.mechanism("aue", k=10, eps=1.0, strategy="best"), ldp.ParamError, "strategy"),
        (lambda: ldp.mechanism("aue", k=10, eps=1.0, strategy="utopia", asr_max=0.1), ldp.ParamError, "takes no bound"),
        (lambda: ldp.mechanism("aue", k=10, eps=1.0, beta=0.1), ldp.ParamError, "poisoning setting"),
        (lambda: ldp.tune("oue", 10, 1.0), ldp.ParamError, "only ass, aue"),
        (lambda: ldp.tune("all", 10, 1.0), ldp.ParamError, "bounds"),
        (lambda: ldp.frontier("ass", 10, 1.0, ["asr"]), ldp.ParamError, "two or more"),
        (lambda: ldp.frontier("ass", 10, 1.0, ["asr", "speed"]), ldp.ParamError, "objective"),
        (lambda: ldp.analyze("grr", 10, 1.0, lh_asr="best"), ldp.ParamError, "lh_asr"),
        (lambda: ldp.analyze(["grr", "oue"], 10, 1.0, param=2), ldp.ParamError, "single protocol"),
    ],
)
def test_bad_parameters(call, error, message):
    with pytest.raises(error, match=message):
        call()
    assert issubclass(error, ValueError)


def test_bad_items_name_the_position():
    m = ldp.mechanism("oue", k=10, eps=1.0)
    with pytest.raises(ldp.ItemError, match=r"items\[2\] = 10 is outside the domain: items are 0 to 9 \(k = 10\)"):
        m.perturb(np.array([0, 1, 10]))
    with pytest.raises(ldp.ItemError, match=r"items\[0\] = -1"):
        m.perturb([-1])
    with pytest.raises(ldp.ItemError, match="18446744073709551615"):
        m.perturb(np.array([2**64 - 1], dtype=np.uint64))
    with pytest.raises(TypeError, match="integers"):
        m.perturb(np.array([1.5]))
    with pytest.raises(ldp.ParamError, match="one-dimensional"):
        m.perturb(np.zeros((2, 2), dtype=int))


def test_bad_reports_name_the_report():
    m = ldp.mechanism("oue", k=10, eps=1.0)
    with pytest.raises(ldp.ReportError, match="report 1"):
        ldp.Reports.from_arrays(m, offsets=[0, 1, 3], indices=[3, 5, 4])
    with pytest.raises(ldp.ParamError, match="offsets end at 2"):
        ldp.Reports.from_arrays(m, offsets=[0, 2], indices=[1])
    with pytest.raises(ldp.ParamError, match="given as offsets and indices"):
        ldp.Reports.from_arrays(m, y=[1])
    olh = ldp.mechanism("olh", k=10, eps=1.0)
    with pytest.raises(ldp.ReportError, match="report 0"):
        ldp.Reports.from_arrays(olh, seed=[1], y=[99])
    she = ldp.mechanism("she", k=3, eps=1.0)
    with pytest.raises(ldp.ReportError, match="report 0"):
        ldp.Reports.from_arrays(she, values=[[0.0, float("nan"), 1.0]])
    with pytest.raises(ldp.ParamError, match="n x 3"):
        ldp.Reports.from_arrays(she, values=[1.0, 2.0, 3.0])


def test_mixing_mechanisms_is_refused():
    a = ldp.mechanism("oue", k=10, eps=1.0)
    b = ldp.mechanism("oue", k=10, eps=2.0)
    reports = b.perturb([1, 2], seed=1)
    with pytest.raises(ldp.ReportError, match="cannot go into"):
        a.aggregator().add(reports)
    with pytest.raises(ldp.AggregateError, match="cannot merge"):
        a.aggregator().merge(b.aggregator())
    with pytest.raises(ldp.ReportError, match="cannot follow"):
        ldp.Reports.concat([a.perturb([1], seed=1), reports])
    with pytest.raises(ldp.ParamError, match="estimator"):
        a.aggregator().estimate("best")


def test_a_bad_json_line_is_named(tmp_path):
    m = ldp.mechanism("grr", k=5, eps=1.0)
    path = tmp_path / "r.jsonl"
    path.write_text('{"y": 1}\n{"y": 7}\n')
    with pytest.raises(ldp.ReportError, match="line 2"):
        ldp.Reports.from_jsonl(path, m)
    path.write_text('{"y": 1}\n[1]\n')
    with pytest.raises(ldp.ReportError, match="line 2"):
        ldp.Reports.from_jsonl(path, m)
    with pytest.raises(FileNotFoundError, match="missing"):
        ldp.Reports.from_jsonl(tmp_path / "missing.jsonl", m)


def test_simulate_checks_its_arguments():
    m = ldp.mechanism("grr", k=100, eps=1.0)
    with pytest.raises(ldp.ParamError, match="needs a prior"):
        ldp.simulate(m, dataset="adult-age", attack="map")
    with pytest.raises(ldp.ParamError, match="poisoning attack"):
        ldp.simulate(m, dataset="adult-age", beta=0.1)
    with pytest.raises(ldp.ParamError, match="adult-age"):
        ldp.simulate(ldp.mechanism("grr", k=10, eps=1.0), dataset="adult-age")
    with pytest.raises(ldp.TuningError, match="at least one run"):
        ldp.simulate(m, dataset="adult-age", runs=0)


def test_ctrl_c_stops_a_long_simulation():
    import os
    import signal
    import threading
    import time

    m = ldp.mechanism("oue", k=100, eps=1.0)
    # A process started in the background by a non-interactive shell (`nohup cmd &`)
    # inherits SIGINT ignored, and Python then installs no KeyboardInterrupt handler, so
    # Ctrl-C could not reach the simulation at all: install Python's default for the test.
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    timer = threading.Timer(0.5, lambda: os.kill(os.getpid(), signal.SIGINT))
    start = time.monotonic()
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            # About a minute of work on two cores, were it not interrupted.
            ldp.simulate(m, dataset="adult-age", runs=5_000)
    finally:
        timer.cancel()
        signal.signal(signal.SIGINT, previous)
    assert time.monotonic() - start < 30


def test_requests_that_cannot_fit_in_memory_raise_memory_error_before_allocating():
    # Issue 24, item 3: these aborted the interpreter in the allocator. 10^4 SHE reports
    # at k = 2^24 are 1.3 TB; 10^10 linked reports, 400 GB or more.
    she = ldp.mechanism("she", k=2**24, eps=1.0)
    with pytest.raises(MemoryError, match="perturb: SHE reports"):
        she.perturb(np.zeros(10_000, dtype=int))
    chain = ldp.longitudinal("l-grr", k=100, eps_perm=2.0, eps_1=1.0)
    with pytest.raises(MemoryError, match="users x collections"):
        chain.collect(np.zeros(10**6, dtype=int), collections=10_000)


def test_an_empty_list_of_items_is_no_items():
    # Issue 24, item 13: numpy makes [] a float64 array; it holds no non-integer.
    assert len(ldp.mechanism("grr", k=4, eps=1.0).perturb([])) == 0
