"""Under an address-space limit (`ulimit -v`), requests that cannot fit raise
MemoryError before allocating, instead of aborting the interpreter in the allocator.
Each case runs in a child process limited to 2.5 GB of address space (RLIMIT_AS)."""

import json
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import ldp
from conftest import optional

resource = pytest.importorskip("resource")

LIMIT = 2_500_000_000

PRELUDE = f"""
import resource
resource.setrlimit(resource.RLIMIT_AS, ({LIMIT}, resource.RLIM_INFINITY))
import numpy as np, ldp
"""


def limited(body, expect="MemoryError:", **names):
    """Runs `body` in a child under the address-space limit, `names` (paths) bound as
    variables, and returns what it printed: the MemoryError's message (`expect`), or "no
    error" (`expect=None`)."""
    code = PRELUDE + "".join(f"{k} = {str(v)!r}\n" for k, v in names.items())
    code += textwrap.dedent(
        f"""
        try:
{textwrap.indent(textwrap.dedent(body), " " * 12)}
        except MemoryError as e:
            print("MemoryError:", e)
        else:
            print("no error")
        """
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    # A crash in the allocator ends the child with SIGABRT and "memory allocation of N
    # bytes failed" on stderr.
    assert done.returncode == 0, f"exit {done.returncode}: {done.stderr[-2000:]}"
    assert "memory allocation" not in done.stderr, done.stderr[-2000:]
    assert done.stdout.startswith(expect or "no error"), done.stdout + done.stderr[-2000:]
    return done.stdout


@pytest.mark.parametrize(
    "protocol, k, eps, n, needle",
    [
        ("she", 1000, 1.0, 300_000, "perturb: SHE reports"),  # 2.4 GB of reports
        ("cms", 2**24, 1.0, 10**6, "perturb: CMS reports"),  # 1.6 GB
        ("oue", 2**24, 1e-3, 200, "perturb: OUE reports"),  # 6.7 GB
        ("oue", 2**24, 1e-3, 4000, "perturb: OUE reports"),  # 134 GB
    ],
)
def test_perturbing_more_than_fits_is_a_memory_error(protocol, k, eps, n, needle):
    out = limited(f'ldp.mechanism("{protocol}", k={k}, eps={eps}).perturb(np.zeros({n}, dtype=int))')
    assert needle in out


def test_several_attributes_perturbing_more_than_fits_is_a_memory_error():
    out = limited(
        'ldp.multidim("she", 1.0, [1000, 1000], solution="spl").perturb(np.zeros((200_000, 2), dtype=int))'
    )
    assert "perturb: the reports" in out


def oue_parquet(path, copies):
    """A Parquet file of copies x 60,000 OUE reports at k = 1000 (about 1.1 KB each in
    memory), bitmap-encoded (125 bytes each on disk)."""
    pq = optional("pyarrow.parquet")
    m = ldp.mechanism("oue", k=1000, eps=1.0)
    table = m.perturb(np.zeros(60_000, dtype=int), seed=1).to_arrow(encoding="bitmap")
    with pq.ParquetWriter(path, table.schema) as writer:
        for _ in range(copies):
            writer.write_table(table)
    return path


def test_reading_more_parquet_reports_than_fit_is_a_memory_error(tmp_path):
    # 600,000 reports, 650 MB in memory: more than twice what the limit leaves.
    path = oue_parquet(tmp_path / "oue.parquet", 10)
    out = limited("ldp.Reports.read_parquet(path)", path=path)
    assert "read_parquet: the reports" in out


def test_converting_more_arrow_reports_than_fit_is_a_memory_error(tmp_path):
    path = oue_parquet(tmp_path / "oue.parquet", 10)
    out = limited(
        """
        import pyarrow.parquet as pq
        table = pq.read_table(path)  # 75 MB of bitmaps
        ldp.Reports.from_arrow(table)
        """,
        path=path,
    )
    assert "from_arrow: the reports" in out


def test_reading_more_json_lines_than_fit_is_a_memory_error(tmp_path):
    # SHE reports of zeros: 2 bytes a value in the file, 8 in memory. 250 MB of lines.
    k = 1000
    line = (json.dumps({"y": [0] * k}, separators=(",", ":")) + "\n").encode()
    path = tmp_path / "she.jsonl"
    try:
        with open(path, "wb") as f:
            for _ in range(125):
                f.write(line * 1000)
        out = limited("ldp.Reports.from_jsonl(path, ldp.mechanism('she', k=1000, eps=1.0))", path=path)
        assert "from_jsonl: the reports" in out
    finally:
        path.unlink(missing_ok=True)


def test_adding_holds_no_more_partial_counts_than_fit():
    # At k = 2^24 a state is 128 MB, and a batch of a million reports is counted in 62
    # pieces, each in a state of its own: 8 GB at once, were they all kept until merged.
    # They are merged as they come, as many at once as fit.
    out = limited(
        """
        m = ldp.mechanism("grr", k=2**24, eps=1.0)
        server = m.aggregator()
        server.add(m.perturb(np.zeros(1_000_000, dtype=int), seed=1))
        assert server.n == 1_000_000
        """,
        expect=None,
    )
    assert out == "no error\n"
