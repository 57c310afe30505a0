"""Every public name has a docstring whose examples run, and a type stub."""

import ast
import doctest
import pathlib
import warnings

import numpy as np
import pytest

import ldp

STUB = pathlib.Path(ldp.__file__).with_name("_ldp.pyi")


def public_names():
    return [n for n in ldp.__all__ if not n.startswith("__")]


def test_every_public_name_has_a_stub():
    tree = ast.parse(STUB.read_text())
    stubbed = {
        node.name
        for node in tree.body
        if isinstance(node, (ast.FunctionDef, ast.ClassDef))
    }
    # The native module's names; the pure-Python ones (ldp.Table, the wrappers) carry
    # their annotations in their source.
    native = [n for n in public_names() if hasattr(ldp._ldp, n)]
    missing = [n for n in native if n not in stubbed]
    assert not missing, missing
    # And every method of the classes.
    for cls in [ldp.Mechanism, ldp.Reports, ldp.Aggregator, ldp.Longitudinal, ldp.Multidim, ldp.MultidimReports]:
        (node,) = [c for c in tree.body if isinstance(c, ast.ClassDef) and c.name == cls.__name__]
        methods = {f.name for f in node.body if isinstance(f, ast.FunctionDef)}
        public = {n for n in dir(cls) if not n.startswith("_")}
        assert public <= methods, (cls.__name__, public - methods)


def test_every_public_name_is_documented_and_its_examples_run():
    finder = doctest.DocTestFinder(recurse=False)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    examples = 0
    for name in public_names():
        obj = getattr(ldp, name)
        assert obj.__doc__ and obj.__doc__.strip(), name
        targets = [obj]
        if isinstance(obj, type) and not issubclass(obj, Exception):
            targets += [
                getattr(obj, m) for m in dir(obj) if not m.startswith("_") and getattr(obj, m).__doc__
            ]
        for target in targets:
            for test in finder.find(target, name=name, globs={}):
                examples += len(test.examples)
                runner.run(test)
    assert runner.failures == 0
    assert examples >= 12


def test_every_estimator_and_the_fit_of_the_iterative_ones():
    m = ldp.mechanism("oue", k=6, eps=1.0)
    agg = m.aggregator()
    agg.add(m.perturb(np.arange(600) % 3, seed=2))
    names = ["unbiased", "base-pos", "norm", "clip", "norm-cut", "norm-sub", "simplex",
             "base-cut", "mle-apx", "ibu-squarem", "mle"]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # each converges: no warning
        for name in names:
            est = agg.estimate(name)
            assert est.shape == (6,) and np.isfinite(est).all(), name
    fit = agg.fit("ibu", max_iterations=4)
    assert fit["stop"] == "cap" and fit["iterations"] == 4 and fit["estimate"].shape == (6,)
    # A capped estimate is said to be one, with what to use instead.
    with pytest.warns(RuntimeWarning, match="cap of 4 iterations.*ibu-squarem"):
        agg.estimate("ibu", max_iterations=4)
    assert agg.fit("ibu-squarem")["iterations"] < agg.fit("ibu")["iterations"]
    assert agg.fit("mle")["stop"] == "tolerance"
    assert agg.fit("simplex")["stop"] == "direct"
    with pytest.raises(ldp.ParamError, match="max_iterations: only"):
        agg.estimate("clip", max_iterations=3)
    with pytest.raises(ldp.ParamError, match="tolerance must be positive"):
        agg.estimate("ibu", tolerance=0.0)
    with pytest.raises(ldp.ParamError, match="max_iterations must lie in"):
        agg.estimate("ibu", max_iterations=-1)
    she = ldp.mechanism("she", k=3, eps=1.0)
    sums = she.aggregator()
    sums.add(she.perturb(np.array([0, 1, 2]), seed=1))
    with pytest.raises(ldp.AggregateError, match="keeps sums"):
        sums.estimate("mle")


def test_the_shuffle_accountant_gives_the_tools_numbers():
    # The reference code's example (apple/ml-shuffling-amplification): n = 10^5,
    # eps0 = 4, delta = 10^-6 lies in [0.16754, 0.17279]; closed form 0.5378040242374512.
    r = ldp.shuffle(100_000, 1e-6, eps0=4.0)
    assert 0.1675385583317841 <= r["central_eps_lower"] <= r["central_eps"] <= 0.172790550755978
    assert abs(r["closed_form"] - 0.5378040242374512) < 1e-12
    assert ldp.shuffle(100, 1e-6, eps0=1.0)["closed_form"] is None
    eps0 = ldp.shuffle(1_000_000, 1e-8, central_eps=1.0)["eps0_max"]
    assert 8.99 < eps0 < 9.0
    assert ldp.shuffle(1_000_000, 1e-8, eps0=eps0)["central_eps"] <= 1.0 + 1e-11


@pytest.mark.parametrize(
    "args, kwargs, needle",
    [
        ((1, 1e-6), {"eps0": 1.0}, "at least 2 reports"),
        ((-5, 1e-6), {"eps0": 1.0}, "at least 2 reports, got -5"),
        ((100, 0.0), {"eps0": 1.0}, "delta must lie strictly between 0 and 1"),
        ((100, 1e-6), {"eps0": -1.0}, "eps0 must be positive"),
        ((100, 1e-6), {"central_eps": 0.0}, "target central epsilon"),
        ((100, 1e-6), {}, "exactly one of eps0"),
        ((100, 1e-6), {"eps0": 1.0, "central_eps": 1.0}, "exactly one of eps0"),
        ((100, 1e-6), {"eps0": 1.0, "grr_k": 1}, "grr_k: randomized response needs"),
        ((100, 1e-6), {"eps0": 1.0, "grr_k": -3}, "grr_k: randomized response needs .* got k = -3"),
    ],
)
def test_the_shuffle_accountant_names_bad_settings(args, kwargs, needle):
    with pytest.raises(ldp.ParamError, match=needle):
        ldp.shuffle(*args, **kwargs)


def test_help_of_mechanism_names_every_protocol_and_parameter():
    # help(ldp.mechanism) is where a notebook user looks (issue 44, item 7).
    doc = ldp.mechanism.__doc__
    protocols = [str(p) for p in ldp.analyze("all", k=100, eps=1.0)["protocol"]]
    assert len(protocols) >= 18
    for name in protocols:
        assert f"``{name}``" in doc, name
        param = ldp.mechanism(name, k=100, eps=1.0).param
        for key in param if isinstance(param, dict) else []:
            assert f'"{key}"' in doc, (name, key)


def test_readers_take_the_path_first_and_the_old_jsonl_order_warns(tmp_path):
    # Issue 44, item 5: one argument order for from_jsonl, read_parquet and from_arrow.
    m = ldp.mechanism("olh", k=16, eps=1.0)
    reports = m.perturb(np.arange(50) % 16, seed=3)
    path = tmp_path / "r.jsonl"
    reports.to_jsonl(path)
    assert ldp.Reports.from_jsonl(path, m) == reports
    assert ldp.Reports.from_jsonl(str(path), mechanism=m) == reports
    with pytest.warns(DeprecationWarning, match=r"pass the path first"):
        assert ldp.Reports.from_jsonl(m, path) == reports
    with pytest.raises(TypeError, match=r"mechanism must be an ldp.Mechanism, not str 'olh'"):
        ldp.Reports.from_jsonl(path, "olh")
    with pytest.raises(TypeError, match=r"path must be a str or an os.PathLike, not int 3"):
        ldp.Reports.from_jsonl(3, m)
