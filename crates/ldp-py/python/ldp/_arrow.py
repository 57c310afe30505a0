"""Reports and pyarrow: the columns cross as Arrow IPC streams in the schema of the
ldp-arrow crate, which owns it (this module spells no schema)."""

import os


def _pyarrow():
    try:
        import pyarrow as pa
    except ImportError as e:  # pragma: no cover - depends on the environment
        raise ImportError("Arrow conversions need pyarrow: pip install pyarrow") from e
    return pa


def from_ipc(stream):
    """A pyarrow Table from an Arrow IPC stream (bytes)."""
    pa = _pyarrow()
    return pa.ipc.open_stream(stream).read_all()


def to_ipc(data):
    """An Arrow IPC stream (bytes) of a pyarrow Table or RecordBatch."""
    pa = _pyarrow()
    if isinstance(data, pa.RecordBatch):
        data = pa.Table.from_batches([data])
    if not isinstance(data, pa.Table):
        raise TypeError(f"expected a pyarrow Table or RecordBatch, got {type(data).__name__}")
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, data.schema) as writer:
        writer.write_table(data)
    return sink.getvalue().to_pybytes()


def from_arrow(data, mechanism=None, on_invalid="refuse"):
    """Reports from a pyarrow Table or RecordBatch of ldp-arrow's schema, or from a
    Parquet file or directory (a path)."""
    from ._ldp import Reports

    if isinstance(data, (str, os.PathLike)):
        return Reports.read_parquet(data, mechanism, on_invalid)
    return Reports._from_arrow_ipc(to_ipc(data), mechanism, on_invalid)
