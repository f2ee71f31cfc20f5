"""Data larger than memory: the ERM problems from Parquet files, streamed a chunk at a time
(docs/mathematics.md#setting-and-notation, docs/mathematics.md#the-two-learning-problems,
docs/data-preparation.md#scaling-into-the-unit-ball, docs/mathematics.md#a-public-norm-bound).

Everything after the problem — noise reduction, the tests, sweeps — needs only what the problem keeps, so the files are
read in passes: ``files`` finds them and checks their schemas (footers only), ``chunks`` reads a chunk of rows into a
block divided by the public bounds and clipped, ``passes`` sums a statistic of every chunk with Dask (its one importer),
and ``problems`` builds the ridge problem from one pass and the logistic one from a pass per Newton step. Nothing else
in the package imports this package but the command line's ``--parquet``.
"""

from accfirst.scale.problems import problem_from_parquet

__all__ = ["problem_from_parquet"]
