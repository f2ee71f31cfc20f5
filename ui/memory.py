"""Memory a session frees goes back to the system: process-wide settings for a server shared by every visitor.

Two allocators keep freed memory for reuse, so that one visitor's upload would stay in
the server's resident size after its session ended (measured: +188 MB of 340 MB after a
142 MB table was dropped) and add up to a restart on a 2.7 GB host:

- Arrow's default pool (mimalloc), which also reads a Parquet table with about twice
  its size at the peak: Arrow uses the system allocator instead;
- glibc's malloc, whose threshold for giving large blocks their own mapping rises up
  to 32 MB as blocks are freed, after which arrays of a few MB live in heaps that are
  not returned: the threshold is fixed at 128 kB (with it, +20 MB were left).

``configure()`` is called once when the app's modules are imported; worker processes
do not import the app and keep the defaults.
"""

from __future__ import annotations

import ctypes
import ctypes.util

import pyarrow as pa

M_MMAP_THRESHOLD = -3  # glibc's mallopt parameter
MMAP_THRESHOLD_BYTES = 128 * 1024


def configure() -> None:
    """Use the system allocator for Arrow and a fixed mmap threshold for glibc's malloc (where there is one)."""
    pa.set_memory_pool(pa.system_memory_pool())
    name = ctypes.util.find_library("c")
    try:
        libc = ctypes.CDLL(name) if name else None
        if libc is not None and hasattr(libc, "mallopt"):
            libc.mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD_BYTES)
    except OSError:  # no C library to load (not Linux): nothing to configure
        pass
