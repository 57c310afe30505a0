"""Fixtures: the `ldp` command-line tool of this checkout, built if needed."""

import os
import pathlib
import shutil
import subprocess

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[3]


@pytest.fixture(scope="session")
def cli():
    """A function running `ldp ARGS` with optional stdin, returning stdout bytes."""
    binary = os.environ.get("LDP_BIN")
    if not binary:
        # Built from this checkout (a no-op when up to date), never a stale binary.
        cargo = shutil.which("cargo")
        assert cargo, "the tests compare with the ldp tool: set LDP_BIN or install cargo"
        subprocess.run([cargo, "build", "-q", "-p", "ldp-cli"], cwd=ROOT, check=True)
        binary = str(ROOT / "target" / "debug" / "ldp")

    def run(*args, stdin=b""):
        done = subprocess.run([binary, *map(str, args)], input=stdin, capture_output=True)
        if done.returncode != 0:
            raise AssertionError(f"ldp {' '.join(map(str, args))}: {done.stderr.decode()}")
        return done.stdout

    return run


def optional(module):
    """`module`, or a skip when it is not installed, except in CI (LDP_REQUIRE_OPTIONAL=1),
    where its absence fails the test."""
    if os.environ.get("LDP_REQUIRE_OPTIONAL") == "1":
        import importlib

        return importlib.import_module(module)
    return pytest.importorskip(module, reason=f"{module} is not installed")
