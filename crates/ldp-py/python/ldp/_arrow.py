"""Reports as pyarrow tables, in the schema of the ldp-arrow crate."""

import numpy as np


def to_arrow(reports):
    try:
        import pyarrow as pa
    except ImportError as e:  # pragma: no cover - depends on the environment
        raise ImportError("Reports.to_arrow needs pyarrow: pip install pyarrow") from e
    shape = reports.shape
    if shape == "value":
        column = pa.array(reports.y, type=pa.uint32())
    elif shape == "seed_value":
        column = pa.StructArray.from_arrays(
            [pa.array(reports.seed, type=pa.uint32()), pa.array(reports.y, type=pa.uint32())],
            fields=[pa.field("seed", pa.uint32(), nullable=False), pa.field("y", pa.uint32(), nullable=False)],
        )
    elif shape == "set":
        offsets = reports.offsets
        if offsets[-1] >= 2**31:
            raise ValueError("more than 2^31 indices: split the reports (List offsets are 32-bit)")
        column = pa.ListArray.from_arrays(
            pa.array(offsets.astype(np.int32)),
            pa.array(reports.indices, type=pa.uint32()),
            type=pa.list_(pa.field("item", pa.uint32(), nullable=False)),
        )
    else:
        values = reports.values
        column = pa.FixedSizeListArray.from_arrays(
            pa.array(values.ravel(), type=pa.float64()),
            type=pa.list_(pa.field("item", pa.float64(), nullable=False), values.shape[1]),
        )
    schema = pa.schema(
        [pa.field("report", column.type, nullable=False)],
        metadata={"ldp.spec": reports.mechanism.spec, "ldp.encoding": "list"},
    )
    return pa.Table.from_arrays([column], schema=schema)
