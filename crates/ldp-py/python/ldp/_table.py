"""Columnar results: one type whatever is installed, converted on request."""

from collections.abc import Mapping

import numpy as np


class Table(Mapping):
    """Columns of equal length by name, each a numpy array: what ``ldp.analyze`` and
    ``ldp.frontier`` return, with or without pandas installed.

    A ``Table`` is a read-only mapping (``t["mse"]``, ``list(t)``, ``dict(t)``), so code
    written for a dict of arrays keeps working; ``to_pandas()`` and ``to_arrow()`` convert
    it (pandas and pyarrow are imported only then). A plain mapping rather than a
    DataFrame, so that the result's type does not depend on the environment, and rather
    than dataclasses, since the columns differ from one call to the next.

    >>> import ldp
    >>> t = ldp.analyze("oue", k=100, eps=1.0)
    >>> type(t).__name__, t.rows, round(float(t["mse"][0]), 4)
    ('Table', 1, 3.6827)
    """

    def __init__(self, columns):
        self._columns = {name: np.asarray(values) for name, values in dict(columns).items()}
        lengths = {len(v) for v in self._columns.values()}
        if len(lengths) > 1:
            raise ValueError(f"columns of different lengths: {sorted(lengths)}")
        self._rows = lengths.pop() if lengths else 0

    def __getitem__(self, name):
        return self._columns[name]

    def __iter__(self):
        return iter(self._columns)

    def __len__(self):
        return len(self._columns)

    @property
    def rows(self):
        """The number of rows."""
        return self._rows

    @property
    def columns(self):
        """The column names, in order."""
        return list(self._columns)

    def to_pandas(self):
        """A pandas DataFrame of the columns (needs pandas)."""
        try:
            import pandas
        except ImportError:
            raise ImportError("to_pandas needs pandas: pip install pandas") from None
        return pandas.DataFrame(self._columns)

    def to_arrow(self):
        """A pyarrow Table of the columns (needs pyarrow)."""
        try:
            import pyarrow
        except ImportError:
            raise ImportError("to_arrow needs pyarrow: pip install pyarrow") from None
        return pyarrow.table(self._columns)

    def __repr__(self):
        head = ", ".join(self._columns)
        return f"<ldp.Table: {self._rows} rows; {head}>"

    def __eq__(self, other):
        if not isinstance(other, Mapping) or list(other) != list(self):
            return NotImplemented if not isinstance(other, Mapping) else False
        return all(_same(self[c], np.asarray(other[c])) for c in self)

    __hash__ = None  # type: ignore[assignment]  # mutable-looking mappings do not hash


def _same(a, b):
    """Equal arrays, NaN equal to NaN where the dtype has NaN."""
    try:
        return bool(np.array_equal(a, b, equal_nan=True))
    except TypeError:  # strings, objects
        return bool(np.array_equal(a, b))
