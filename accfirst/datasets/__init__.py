"""Datasets for accfirst: built-in sets and uploaded tables, prepared per SPEC §1 and §11.

``BUILTIN_DATASETS`` and ``load_builtin`` give two synthetic sets shaped like the
paper's experiments and two small real ones from scikit-learn; ``read_upload`` parses
a CSV or Parquet file held in memory and ``from_frame`` turns any table into a
``PreparedData`` with a ``PrepReport`` of every step. Every data problem raises
``DataError`` (a ``ValueError``) with a message the user can act on.
"""

from accfirst.datasets.builtin import BUILTIN_DATASETS, load_builtin
from accfirst.datasets.prepared import DatasetInfo, PreparedData, PrepReport
from accfirst.datasets.preprocess import from_frame
from accfirst.datasets.upload import UploadLimits, read_upload

__all__ = [
    "BUILTIN_DATASETS",
    "DatasetInfo",
    "PrepReport",
    "PreparedData",
    "UploadLimits",
    "from_frame",
    "load_builtin",
    "read_upload",
]
