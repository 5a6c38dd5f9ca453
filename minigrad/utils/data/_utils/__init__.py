"""The DataLoader's machinery: collation, fetching one index, and the worker processes."""
from . import collate, fetch, worker  # noqa: F401
