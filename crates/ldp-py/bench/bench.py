"""Reports per second through the Python API, beside multi-freq-ldpy and the Rust crates'
own materialized path, in one run (a benchmark, not a test).

    pip install ./crates/ldp-py "multi-freq-ldpy" "xxhash<4"
    python crates/ldp-py/bench/bench.py [--users 1000000]

Each figure is perturb + aggregate + estimate of `users` users at k = 1000, eps = 2, the
best of three runs; multi-freq-ldpy loops over users in Python, so it runs on fewer users
(its rate does not depend on their number). The Rust figure is
`cargo run --release -p ldp-core --example materialized`.
"""

import argparse
import pathlib
import subprocess
import time

import numpy as np

import ldp

ROOT = pathlib.Path(__file__).resolve().parents[3]
K, EPS = 1000, 2.0


def best_of(f, runs=3):
    best = float("inf")
    for _ in range(runs):
        start = time.perf_counter()
        f()
        best = min(best, time.perf_counter() - start)
    return best


def ours(protocol, items):
    m = ldp.mechanism(protocol, k=K, eps=EPS)

    def run():
        server = m.aggregator()
        server.add(m.perturb(items, seed=1))
        server.estimate()

    # GRR takes milliseconds: more runs to see past the machine's noise.
    return len(items) / best_of(run, runs=9 if protocol == "grr" else 3)


def rust(protocol, users):
    subprocess.run(
        ["cargo", "build", "-q", "--release", "-p", "ldp-core", "--example", "materialized"],
        cwd=ROOT,
        check=True,
    )
    out = subprocess.run(
        [str(ROOT / "target/release/examples/materialized"), protocol, str(K), str(EPS), str(users)],
        check=True,
        capture_output=True,
        text=True,
    )
    return float(out.stdout)


def peer(protocol, users):
    try:
        from multi_freq_ldpy.pure_frequency_oracles import GRR, LH, UE
    except ImportError:
        return None
    items = np.arange(users) % K
    if protocol == "grr":
        def run():
            GRR.GRR_Aggregator_MI([GRR.GRR_Client(int(v), K, EPS) for v in items], K, EPS)
    elif protocol == "oue":
        def run():
            UE.UE_Aggregator_MI([UE.UE_Client(int(v), K, EPS, optimal=True) for v in items], EPS, optimal=True)
    else:
        def run():
            LH.LH_Aggregator_MI([LH.LH_Client(int(v), K, EPS, optimal=True) for v in items], K, EPS, optimal=True)
    return users / best_of(run, runs=1)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--users", type=int, default=1_000_000)
    args = parser.parse_args()
    items = np.arange(args.users) % K
    peer_users = {"grr": 50_000, "oue": 20_000, "olh": 1_000}
    print(f"| protocol (k = {K}, eps = {EPS:g}) | ldp (Python) | Rust, materialized | ratio | multi-freq-ldpy | speed-up |")
    print("|---|---|---|---|---|---|")
    for protocol in ["grr", "oue", "olh"]:
        mine = ours(protocol, items)
        theirs = rust(protocol, args.users)
        other = peer(protocol, peer_users[protocol])
        shown = "not installed" if other is None else f"{other:,.0f}/s"
        speedup = "" if other is None else f"{mine / other:,.0f}x"
        print(
            f"| {protocol} | {mine:,.0f}/s | {theirs:,.0f}/s | {mine / theirs:.2f} | {shown} | {speedup} |"
        )


if __name__ == "__main__":
    main()
