"""Every public name has a docstring whose examples run, and a type stub."""

import ast
import doctest
import pathlib

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
    missing = [n for n in public_names() if n not in stubbed]
    assert not missing, missing
    # And every method of the classes.
    for cls in [ldp.Mechanism, ldp.Reports, ldp.Aggregator, ldp.Longitudinal]:
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
