"""Ctrl-C: long calls raise KeyboardInterrupt within about a second, and leave their
objects as they were. Each call runs in a child process, which gets SIGINT a second
after it starts the call; uninterrupted, each would take minutes (so that a call that
only raises once it returns fails the test)."""

import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

# The child prints READY just before the long call, then what happened.
PRELUDE = """
import signal, sys, time
# A child of a non-interactive shell may inherit SIGINT ignored: Python's handler, then.
signal.signal(signal.SIGINT, signal.default_int_handler)
import numpy as np, ldp

def run(call):
    print("READY", flush=True)
    start = time.monotonic()
    try:
        call()
    except KeyboardInterrupt:
        print(f"INTERRUPTED after {time.monotonic() - start:.1f} s", flush=True)
        return True
    print(f"FINISHED after {time.monotonic() - start:.1f} s", flush=True)
    return False
"""

# From SIGINT to the child's exit, at most (it takes a fraction of a second).
PROMPT = 20


def interrupt(body, after=1.0):
    """Runs `body` (after PRELUDE) in a child, sends it SIGINT `after` seconds after it
    prints READY, and returns its output and the seconds from SIGINT to its exit."""
    code = PRELUDE + textwrap.dedent(body)
    child = subprocess.Popen(
        [sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        line = child.stdout.readline()
        assert line.strip() == "READY", line + child.stderr.read()
        time.sleep(after)
        os.kill(child.pid, signal.SIGINT)
        sent = time.monotonic()
        out, err = child.communicate(timeout=PROMPT)
        return out, err, time.monotonic() - sent
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()


def check(out, err, elapsed):
    assert "INTERRUPTED" in out, out + err
    assert elapsed < PROMPT, elapsed


def test_ctrl_c_stops_an_audit_of_a_slow_python_client():
    # The client sleeps an hour a batch: it runs on the calling thread, where Ctrl-C
    # interrupts the sleep itself.
    out, err, elapsed = interrupt(
        """
        def slow(items):
            time.sleep(3600)
            return items
        run(lambda: ldp.audit(slow, shape="grr", k=10, eps=1.0, trials=2_000))
        """
    )
    check(out, err, elapsed)


def test_ctrl_c_stops_an_audit_of_a_python_client_between_batches():
    # Fast batches, a great many of them (2 x 10^6 of them, some ten minutes): the audit
    # stops at the next batch.
    out, err, elapsed = interrupt(
        """
        run(lambda: ldp.audit(lambda items: items, shape="grr", k=10, eps=1.0,
                              trials=10**9, batch=1_000))
        """
    )
    check(out, err, elapsed)


def test_ctrl_c_stops_an_audit_of_a_mechanism():
    # 10^10 trials of OUE at k = 1000: hours of work.
    out, err, elapsed = interrupt(
        """
        m = ldp.mechanism("oue", k=1000, eps=1.0)
        run(lambda: ldp.audit(m, trials=10**10))
        """
    )
    check(out, err, elapsed)


def test_ctrl_c_stops_an_audit_of_several_attributes():
    out, err, elapsed = interrupt(
        """
        m = ldp.multidim("oue", 1.0, [1000, 1000], solution="rsfd")
        run(lambda: ldp.audit(m, trials=10**10))
        """
    )
    check(out, err, elapsed)


def test_ctrl_c_stops_adding_a_batch_and_adds_none_of_it():
    # OLH at k = 100,000 counts each report against every item: 600,000 reports take
    # over a minute on two cores. Interrupted, the aggregator holds what it held.
    out, err, elapsed = interrupt(
        """
        m = ldp.mechanism("olh", k=100_000, eps=1.0)
        server = m.aggregator()
        server.add(m.perturb(np.arange(100), seed=1))
        reports = m.perturb(np.zeros(600_000, dtype=int), seed=2)
        if run(lambda: server.add(reports)):
            print("n =", server.n)
        """
    )
    check(out, err, elapsed)
    assert "n = 100" in out


def test_ctrl_c_stops_a_simulation_of_several_attributes():
    out, err, elapsed = interrupt(
        """
        m = ldp.multidim("olh", 2.0, "acs-employment", solution="smp")
        run(lambda: m.simulate("acs-employment", runs=100_000))
        """
    )
    check(out, err, elapsed)


@pytest.mark.parametrize("size", [1, 10])
def test_short_calls_return_at_once(size):
    # The watch for Ctrl-C costs nothing to calls that finish first.
    import numpy as np

    import ldp

    m = ldp.mechanism("grr", k=4, eps=1.0)
    start = time.monotonic()
    for _ in range(200):
        m.perturb(np.zeros(size, dtype=int))
    assert time.monotonic() - start < 2  # 50 ms per call would take 10 s
