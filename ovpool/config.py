"""Process-wide settings: the kernels' thread count and the memory limit for outputs."""

import contextlib
import contextvars
import os

from .errors import BadArgumentError

__all__ = ["set_num_threads", "get_num_threads", "num_threads", "set_memory_limit",
           "get_memory_limit"]


def _default_num_threads():
    # OMP_NUM_THREADS may hold a nested list such as "4,2"; its first entry is ours.
    setting = os.environ.get("OMP_NUM_THREADS", "").split(",")[0].strip()
    if setting.isdigit() and int(setting) > 0:
        return int(setting)
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def physical_memory():
    """The machine's physical memory in bytes (16 GiB where the system does not say)."""
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (AttributeError, ValueError, OSError):
        return 16 << 30


_num_threads = _default_num_threads()
_memory_limit = physical_memory() // 2
# A per-thread (per-context) override, so that concurrent callers can each use their own count.
_num_threads_override = contextvars.ContextVar("ovpool_num_threads", default=None)


def positive_int(name, value):
    """``value`` when it is an int >= 1 (not a bool), else BadArgumentError naming ``name``."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise BadArgumentError(f"{name} must be a positive int, got {value!r}")
    return value


def set_num_threads(n):
    """Set how many threads the pooling kernels use (default: OMP_NUM_THREADS, else the
    number of cores available to this process)."""
    global _num_threads
    _num_threads = positive_int("num_threads", n)


def get_num_threads():
    """The number of threads the pooling kernels use (in this thread / context)."""
    override = _num_threads_override.get()
    return _num_threads if override is None else override


@contextlib.contextmanager
def num_threads(n):
    """Use ``n`` kernel threads inside the ``with`` block, in this thread only
    (``None`` keeps the process-wide setting)."""
    token = _num_threads_override.set(None if n is None else positive_int("num_threads", n))
    try:
        yield
    finally:
        _num_threads_override.reset(token)


def set_memory_limit(nbytes):
    """Refuse to allocate any single output larger than ``nbytes`` (default: half of the
    physical memory). Raises :class:`ovpool.errors.MemoryLimitError` before allocating."""
    global _memory_limit
    _memory_limit = positive_int("memory limit", nbytes)


def get_memory_limit():
    """The largest single output, in bytes, ovpool will allocate."""
    return _memory_limit
