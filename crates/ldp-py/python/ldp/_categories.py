"""Labels and items: ``ldp.Categories`` maps a domain's labels to the items 0..k-1 that
the mechanisms take, and back."""

import json
import math

import numpy as np

from ._ldp import ItemError, ParamError

# The types of a label that reports can carry: what JSON holds.
_STORED = (str, bool, int, float)


def _plain(value):
    """A numpy scalar as the Python value it holds; anything else as it is."""
    return value.item() if isinstance(value, np.generic) else value


def _is_missing(value):
    """None, NaN, or pandas' NA and NaT."""
    if value is None or type(value).__name__ in ("NAType", "NaTType"):
        return True
    return isinstance(value, float) and math.isnan(value)


def _object_array(values):
    """A numpy object array of ``values``, one entry each (a tuple is one label)."""
    out = np.empty(len(values), dtype=object)
    for i, v in enumerate(values):
        out[i] = v
    return out


def _objects(values):
    """``values`` (an array, a pandas Series, a list) as a one-dimensional object array."""
    if hasattr(values, "dtype"):
        flat = np.asarray(values, dtype=object)
        if flat.ndim != 1:
            raise ParamError(f"values must be one-dimensional, not {flat.ndim}-dimensional")
        return flat
    if isinstance(values, (str, bytes)):
        raise ParamError("values must be a sequence of labels, not one label")
    return _object_array(list(values))


def _pandas():
    try:
        import pandas
    except ImportError:
        return None
    return pandas


class Categories:
    """The labels of a domain: ``labels[i]`` is item ``i``, what the mechanisms take.
    ``encode`` turns labels into items, ``decode`` items into labels, and ``label`` an
    estimate into a pandas Series indexed by the labels.

    :param labels: distinct hashable labels, in item order (a repeated one is a
        ``ValueError`` naming it).
    :param other: a label not among ``labels``, standing for every label that is not:
        item ``len(labels)``. Without it, ``encode`` refuses a label it does not know.

    ``k`` is the number of items: ``len(labels)``, plus one with ``other``. Reports carry
    their labels (``Mechanism.perturb(..., categories=...)``, ``Reports.with_categories``)
    into Arrow and Parquet metadata, as JSON: there, labels are str, int, float or bool.

    >>> import ldp
    >>> browsers = ldp.Categories(["chrome", "firefox", "safari"], other="other")
    >>> browsers.k, browsers.encode(["safari", "chrome", "lynx"]).tolist()
    (4, [2, 0, 3])
    >>> browsers.decode([1, 3]).tolist()
    ['firefox', 'other']
    """

    def __init__(self, labels, *, other=None):
        labels = [_plain(label) for label in labels]
        index = {}
        for i, label in enumerate(labels):
            _check(label, f"labels[{i}]")
            if label in index:
                raise ValueError(
                    f"labels[{i}] = {label!r} repeats labels[{index[label]}]: labels are distinct"
                )
            index[label] = i
        kinds = {"bool" if isinstance(v, bool) else "number" for v in labels
                 if isinstance(v, (bool, int, float))}
        if len(kinds) == 2:
            # True == 1 and False == 0 in Python's lookups, not in the JSON they are kept as.
            raise ValueError("labels mix booleans and numbers, which Python takes for equal "
                             "(True == 1): make them all strings, say")
        if other is not None:
            other = _plain(other)
            _check(other, "other")
            if other in index:
                raise ValueError(
                    f"other = {other!r} is labels[{index[other]}]: other stands for the labels "
                    "not listed"
                )
        self._labels = labels
        self._other = other
        # Every item's label, other last.
        self._every = _object_array(labels + ([other] if other is not None else []))

    @classmethod
    def from_pandas(cls, values, *, other=None):
        """The labels of a pandas categorical (a Series of categorical dtype, a
        ``pandas.Categorical`` or a ``CategoricalDtype``): its categories, in their order.
        Of any other Series or array: its distinct values, sorted, missing values left
        out (as ``ldp.multidim`` reads a DataFrame's column).

        >>> import ldp, pandas as pd
        >>> sizes = pd.Categorical(["M", "S", "M"], categories=["S", "M", "L"])
        >>> ldp.Categories.from_pandas(sizes).labels
        ['S', 'M', 'L']
        >>> ldp.Categories.from_pandas(pd.Series(["b", "a", None, "b"])).labels
        ['a', 'b']
        """
        pandas = _pandas()
        if pandas is None:
            raise ImportError("from_pandas needs pandas: pip install pandas")
        dtype = values if isinstance(values, pandas.CategoricalDtype) else getattr(values, "dtype", None)
        if isinstance(dtype, pandas.CategoricalDtype):
            return cls(dtype.categories, other=other)
        distinct = [_plain(v) for v in pandas.Series(values).dropna().unique()]
        try:
            distinct.sort()
        except TypeError:  # labels of several types
            distinct.sort(key=lambda v: (type(v).__name__, str(v)))
        return cls(distinct, other=other)

    @property
    def k(self):
        """The number of items: one per label, and one for ``other`` if there is one."""
        return len(self._labels) + (self._other is not None)

    @property
    def labels(self):
        """The labels, in item order (``other`` left out)."""
        return list(self._labels)

    @property
    def other(self):
        """The label standing for every label not listed (item ``k - 1``), or None."""
        return self._other

    def encode(self, values):
        """The items of ``values`` (labels: a list, an array, a pandas Series or
        Categorical) as an int64 array, vectorized (with pandas when it is installed).
        A label not among the labels, or a missing value (None, NaN, pandas' NA), is item
        ``k - 1`` with ``other``, else an ``ldp.ItemError`` naming it and its position."""
        codes = self._codes(values)
        unknown = np.flatnonzero(codes < 0)
        if unknown.size and self._other is not None:
            codes[unknown] = len(self._labels)
        elif unknown.size:
            at = int(unknown[0])
            value = _plain(_objects(values)[at])
            what = "a missing value" if _is_missing(value) else f"{value!r} is not a label"
            shown = ", ".join(map(repr, self._labels[:10])) + (", ..." if len(self._labels) > 10 else "")
            raise ItemError(f"values[{at}]: {what} (the labels are {shown})")
        return codes

    def _codes(self, values):
        """Every value's item, -1 where it has none."""
        pandas = _pandas()
        if pandas is None:
            index = {label: i for i, label in enumerate(self._labels)}
            flat = _objects(values)
            return np.fromiter((index.get(_plain(v), -1) for v in flat), dtype=np.int64, count=len(flat))
        dtype = getattr(values, "dtype", None)
        if isinstance(dtype, pandas.CategoricalDtype):
            # One lookup per category, then the values' category codes (-1: missing).
            categories = self._codes(np.asarray(dtype.categories, dtype=object))
            raw = np.asarray(values.cat.codes if hasattr(values, "cat") else values.codes)
            # A code of -1 (missing) picks the -1 appended last; also with no categories.
            return np.append(categories, -1)[raw].astype(np.int64)
        labels = pandas.Index(self._every[: len(self._labels)], dtype=object, tupleize_cols=False)
        values = pandas.Index(_objects(values), dtype=object, tupleize_cols=False)
        return labels.get_indexer(values).astype(np.int64)

    def decode(self, items):
        """The labels of ``items`` (integers in 0..k-1) as a numpy object array; an item
        outside is an ``ldp.ItemError`` naming its position."""
        items = np.asarray(items)
        if items.size and items.dtype.kind not in "iu":
            raise TypeError(f"items must be integers, not {items.dtype}")
        bad = np.flatnonzero((items < 0) | (items >= self.k))
        if bad.size:
            at = int(bad[0])
            raise ItemError(
                f"items[{at}] = {items.ravel()[at]} is outside the domain: items are 0 to "
                f"{self.k - 1} (k = {self.k})"
            )
        return self._every[items.astype(np.intp)]

    def label(self, estimates):
        """``estimates`` (k numbers, one per item) as a pandas Series named "estimate" and
        indexed by the labels, ``other`` last (needs pandas).

        >>> import ldp, numpy as np
        >>> ldp.Categories(["no", "yes"]).label(np.array([0.25, 0.75])).to_dict()
        {'no': 0.25, 'yes': 0.75}
        """
        pandas = _pandas()
        if pandas is None:
            raise ImportError("label needs pandas: pip install pandas")
        values = np.asarray(estimates)
        if values.shape != (self.k,):
            raise ParamError(f"estimates of shape {values.shape} for k = {self.k} items: one per item")
        index = pandas.Index(self._every, dtype=object, tupleize_cols=False)
        return pandas.Series(values, index=index, name="estimate")

    def _metadata(self):
        """The labels as reports carry them: the JSON list of every item's label, and
        whether the last is ``other``."""
        for i, label in enumerate(self._every):
            if not isinstance(label, _STORED) or (isinstance(label, float) and not math.isfinite(label)):
                where = f"labels[{i}]" if i < len(self._labels) else "other"
                raise TypeError(
                    f"{where} = {label!r} ({type(label).__name__}) cannot be stored with reports: "
                    "labels in Arrow and Parquet metadata are JSON: str, int, float or bool"
                )
        return json.dumps(self._every.tolist(), ensure_ascii=False), self._other is not None

    @classmethod
    def _from_metadata(cls, text, other, source):
        """The labels recorded as ``text`` (``ldp.labels``) and ``other`` (``ldp.other``,
        or None) by ``source``, named in errors."""
        try:
            labels = json.loads(text)
            last = json.loads(other) if other is not None else False
        except ValueError as e:
            raise ParamError(f"{source}: the ldp.labels metadata is not JSON: {e}") from None
        if not isinstance(labels, list) or not all(isinstance(v, _STORED) for v in labels):
            raise ParamError(f"{source}: ldp.labels is not a JSON list of str, int, float or bool")
        if not isinstance(last, bool) or (last and not labels):
            raise ParamError(f"{source}: ldp.other is not true or false, or there is no label")
        try:
            if last:
                return cls(labels[:-1], other=labels[-1])
            return cls(labels)
        except (TypeError, ValueError) as e:
            raise ParamError(f"{source}: ldp.labels: {e}") from None

    def __eq__(self, other):
        if not isinstance(other, Categories):
            return NotImplemented
        return _typed(self._every) == _typed(other._every) and (self._other is None) == (
            other._other is None
        )

    def __hash__(self):
        return hash((tuple(_typed(self._every)), self._other is None))

    def __repr__(self):
        shown = ", ".join(map(repr, self._labels[:8])) + (", ..." if len(self._labels) > 8 else "")
        tail = f", other={self._other!r}" if self._other is not None else ""
        return f"ldp.Categories([{shown}]{tail})"


def _check(label, where):
    """A label is hashable and not missing."""
    try:
        hash(label)
    except TypeError:
        raise TypeError(f"{where} = {label!r} is not hashable: a label must be") from None
    if _is_missing(label):
        raise ValueError(f"{where} is a missing value ({label!r}), not a label")


def _typed(every):
    """Labels with their types: Categories([1]) is not Categories([1.0])."""
    return [(type(v).__name__, v) for v in every]
