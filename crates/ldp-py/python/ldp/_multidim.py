"""Several attributes per user: where the attributes, their domains and their labels come
from (sizes, a mapping, a pandas DataFrame, a shipped table), and DataFrames as codes."""

from collections.abc import Mapping

import numpy as np

from . import _ldp
from ._ldp import ItemError, ParamError

DATASETS = ("adult", "acs-employment")


def _is_frame(obj):
    return hasattr(obj, "columns") and hasattr(obj, "dtypes") and hasattr(obj, "iloc")


def _frame_labels(column):
    """A DataFrame column's labels: its categories (in their order) when it is categorical,
    else its distinct values, sorted (as ``ldp simulate --dataset FILE.csv`` codes a CSV)."""
    import pandas

    if isinstance(column.dtype, pandas.CategoricalDtype):
        return [str(c) for c in column.cat.categories]
    values = column.dropna().unique()
    try:
        values = sorted(values)
    except TypeError:
        values = sorted(values, key=str)
    return [str(v) for v in values]


def domains_of(domains):
    """(sizes, names, labels, series) from what ``ldp.multidim`` takes as ``domains``."""
    if isinstance(domains, str):
        names, labels, _ = _ldp._table(domains)
        return [len(l) for l in labels], names, labels, False
    if _is_frame(domains):
        names = [str(c) for c in domains.columns]
        if len(set(names)) != len(names):
            raise ParamError(f"domains: the DataFrame's column names repeat: {names}")
        labels = [_frame_labels(domains[c]) for c in domains.columns]
        for name, l in zip(names, labels):
            if len(l) < 2:
                raise ParamError(
                    f"domains: column {name!r} has {len(l)} categories; an attribute needs at least 2"
                )
        return [len(l) for l in labels], names, labels, True
    if isinstance(domains, Mapping):
        names, sizes, labels = [], [], []
        for name, value in domains.items():
            names.append(str(name))
            if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
                sizes.append(int(value))
                labels.append(None)
            else:
                l = [str(v) for v in value]
                if len(set(l)) != len(l):
                    raise ParamError(f"domains: the labels of {name!r} repeat: {l}")
                sizes.append(len(l))
                labels.append(l)
        if all(l is None for l in labels):
            return sizes, names, None, False
        if any(l is None for l in labels):
            raise ParamError(
                "domains: give every attribute its labels, or every attribute its size"
            )
        return sizes, names, labels, False
    try:
        sizes = [int(k) if isinstance(k, (int, np.integer)) else k for k in domains]
    except TypeError:
        raise TypeError(
            "domains must be a list of domain sizes, a dict by attribute name, a DataFrame "
            f"or a table name ({', '.join(DATASETS)}), not {type(domains).__name__}"
        ) from None
    for j, k in enumerate(sizes):
        if not isinstance(k, int) or isinstance(k, bool):
            raise TypeError(f"domains[{j}] must be an integer, not {type(k).__name__} {k!r}")
    return sizes, None, None, False


def frame_codes(frame, names, labels, domains):
    """A DataFrame's users as an n x d int64 array of codes, columns by the client's
    attribute names (others are ignored), labels mapped to their codes."""
    by_name = {str(c): c for c in frame.columns}
    if names is None:
        if len(frame.columns) != len(domains):
            raise ItemError(
                f"the DataFrame has {len(frame.columns)} columns, but the client has "
                f"{len(domains)} unnamed attributes: one column per attribute"
            )
        names = list(by_name)
    else:
        missing = [n for n in names if n not in by_name]
        if missing:
            raise ItemError(
                f"the DataFrame has no column {missing[0]!r} (the client's attributes are "
                f"{', '.join(names)}; its columns {', '.join(by_name)})"
            )
    columns = []
    for j, name in enumerate(names):
        column = frame[by_name[name]]
        if labels is not None:
            columns.append(_codes(column, labels[j], name))
            continue
        values = column.to_numpy()
        if values.dtype.kind not in "iu":
            raise TypeError(
                f"column {name!r} must hold integer codes (the client has no labels), "
                f"not {values.dtype}"
            )
        if values.dtype.kind == "u":
            # Past 2**62 every value is outside its domain anyway.
            values = np.minimum(values, np.uint64(1 << 62))
        columns.append(values.astype(np.int64))
    if not columns:
        return np.zeros((len(frame), 0), dtype=np.int64)
    return np.column_stack(columns)


def _codes(column, labels, name):
    """A column's codes in ``labels``; a label outside them names the column and the row."""
    import pandas

    if isinstance(column.dtype, pandas.CategoricalDtype) and [
        str(c) for c in column.cat.categories
    ] == labels:
        codes = column.cat.codes.to_numpy().astype(np.int64)
    else:
        as_text = [None if pandas.isna(v) else str(v) for v in column.astype(object)]
        codes = pandas.Index(labels).get_indexer(as_text).astype(np.int64)
    bad = np.flatnonzero(codes < 0)
    if bad.size:
        row = int(bad[0])
        value = column.iloc[row]
        index = column.index[row]
        index = index.item() if hasattr(index, "item") else index
        if pandas.isna(value):
            raise ItemError(f"column {name!r}, row {row} (index {index!r}): a missing value")
        shown = ", ".join(labels[:10]) + (", ..." if len(labels) > 10 else "")
        raise ItemError(
            f"column {name!r}, row {row} (index {index!r}): label {str(value)!r} is "
            f"not among the attribute's categories ({shown})"
        )
    return codes


def _priors(prior, domains, sizes, names):
    """``prior`` as a list of weights per attribute: a list, a dict by attribute name, or
    ``"data"`` (the marginals of the DataFrame or table that ``domains`` is)."""
    if prior is None:
        return None
    if isinstance(prior, str):
        if prior != "data":
            raise ParamError(f'prior = {prior!r}: expected weights per attribute or "data"')
        if isinstance(domains, str):
            _, _, codes = _ldp._table(domains)
            return [np.bincount(codes[:, j], minlength=k) / len(codes) for j, k in enumerate(sizes)]
        if _is_frame(domains):
            codes = frame_codes(domains, names, [_frame_labels(domains[c]) for c in domains.columns], sizes)
            return [np.bincount(codes[:, j], minlength=k) / len(codes) for j, k in enumerate(sizes)]
        raise ParamError('prior="data" needs domains to be a DataFrame or a table name')
    if isinstance(prior, Mapping):
        if names is None:
            raise ParamError("prior: a dict by attribute name needs named attributes")
        unknown = [n for n in prior if n not in names]
        if unknown:
            raise ParamError(f"prior: no attribute {unknown[0]!r} (they are {', '.join(names)})")
        missing = [n for n in names if n not in prior]
        if missing:
            raise ParamError(f"prior: attribute {missing[0]!r} has no prior")
        return [prior[n] for n in names]
    return list(prior)


def multidim(protocol, eps, domains, solution="smp", prior=None, param=None, **options):
    """A client of several attributes per user (``ldp_core::multidim``): one instance of
    ``protocol`` per attribute, all at the per-report budget of ``solution``, built as
    ``ldp perturb --attributes ... --solution ...`` builds it.

    :param protocol: a protocol name, as ``ldp.mechanism`` takes it. A classic protocol
        runs at its preset, an adaptive one is tuned for each attribute's domain at the
        per-report budget (with the ``ldp.tune`` keywords in ``options``), unless
        ``param`` sets its parameter.
    :param eps: the user's total budget.
    :param domains: the attributes, as

        - a list of domain sizes ``[74, 7, 16]``: unnamed attributes, items are codes;
        - a dict by attribute name of sizes (``{"age": 74, ...}``: items are codes) or of
          labels (``{"sex": ["F", "M"], ...}``: a DataFrame's values are labels);
        - a pandas DataFrame: one attribute per column, named by it; a categorical
          column's categories are its labels (and its domain, in their order), any other
          column's distinct values, sorted;
        - a shipped table's name, ``"adult"`` or ``"acs-employment"``.

    :param solution: ``"spl"`` (every attribute at eps/d), ``"smp"`` (one sampled, at
        eps, named), ``"rsfd"`` (one sampled at eps' = ln(d (e^eps - 1) + 1), fakes of
        uniform items for the others), ``"rsfd-z"`` (fakes of no item: UE and THE only),
        ``"rsrfd"`` (fakes drawn from ``prior``).
    :param prior: rsrfd only: one array of weights per attribute (summing to one), a dict
        of them by attribute name, or ``"data"``: the marginals of the DataFrame or table
        given as ``domains``.
    :return: an ``ldp.Multidim``.

    Estimates come back as a list of arrays for unnamed attributes, a dict of arrays by
    name for named ones, and a dict of pandas Series indexed by the labels when the client
    was built from a DataFrame.

    >>> import ldp, numpy as np
    >>> m = ldp.multidim("oue", 2.0, {"a": 3, "b": 2}, solution="rsfd")
    >>> items = np.column_stack([np.arange(6000) % 3, np.arange(6000) % 4 == 0])
    >>> f = m.estimate(m.perturb(items.astype(int), seed=7))
    >>> sorted(f), bool(abs(f["b"][1] - 0.25) < 0.05)
    (['a', 'b'], True)
    """
    sizes, names, labels, series = domains_of(domains)
    priors = _priors(prior, domains, sizes, names)
    return _ldp.multidim(
        protocol,
        eps,
        sizes,
        solution,
        priors,
        param,
        names=names,
        labels=labels,
        series=series,
        **options,
    )


def dataset(name):
    """A shipped table of several attributes as a pandas DataFrame of categorical columns:
    ``"adult"`` (UCI Adult's ten categorical attributes, 45,222 people) or
    ``"acs-employment"`` (ACSEmployment, Montana, 10,336 people x 18 attributes), as
    ``ldp simulate --dataset NAME`` reads it. Select columns to collect some attributes.

    >>> import ldp
    >>> ldp.dataset("acs-employment").shape
    (10336, 18)
    """
    try:
        import pandas
    except ImportError:
        raise ImportError("dataset needs pandas: pip install pandas") from None
    names, labels, codes = _ldp._table(name)
    return pandas.DataFrame(
        {
            n: pandas.Categorical.from_codes(codes[:, j].astype(np.int64), categories=labels[j])
            for j, n in enumerate(names)
        }
    )
