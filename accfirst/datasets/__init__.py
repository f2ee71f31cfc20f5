"""Datasets for accfirst: built-in sets and uploaded tables, prepared per docs/mathematics.md#setting-and-notation,
docs/data-preparation.md#scaling-into-the-unit-ball, docs/mathematics.md#preparing-the-data-privately.

``BUILTIN_DATASETS`` and ``load_builtin`` give two synthetic sets shaped like the
paper's experiments and two small real ones from scikit-learn; ``read_upload`` parses
a CSV or Parquet file held in memory and ``from_frame`` turns any table into a
``PreparedData``: privately by default (declared metadata in a ``Schema``, charged
mechanisms for the rest; ``data.prep_epsilon``, ``data.prep_delta`` and the steps in
``data.preparation``), or by the evaluation-only preparation. Every data problem raises
``DataError`` (a ``ValueError``) with a message the user can act on.
"""

from accfirst.datasets.builtin import BUILTIN_DATASETS, load_builtin
from accfirst.datasets.prepare.schema import ColumnSpec, Schema, load_schema
from accfirst.datasets.prepared import DatasetInfo, Preparation, PreparedData, PrepReport, StepRecord
from accfirst.datasets.preprocess import from_frame
from accfirst.datasets.upload import UploadLimits, read_upload

__all__ = [
    "BUILTIN_DATASETS",
    "ColumnSpec",
    "DatasetInfo",
    "PrepReport",
    "Preparation",
    "PreparedData",
    "Schema",
    "StepRecord",
    "UploadLimits",
    "from_frame",
    "load_builtin",
    "load_schema",
    "read_upload",
]
