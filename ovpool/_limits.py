"""Resource limits: checking an allocation against the memory limit before it happens, and
parsing a human-written memory size (for the CLI's ``--memory-limit``).

``check_allocation`` is what the runtime and the ops call before allocating an output or an
intermediate; ``parse_memory_size`` / ``memory_limit_argument`` are for ``ovpool run
--memory-limit 2G`` (the CLI wires them in: ``type=memory_limit_argument`` and then
``ovpool.set_memory_limit(args.memory_limit)``).
"""

import math
import re

import numpy as np

from .config import get_memory_limit, physical_memory
from .errors import BadArgumentError, MemoryLimitError

__all__ = ["MAX_RANK", "INT64_MAX", "check_allocation", "shape_text", "parse_memory_size",
           "memory_limit_argument"]

MAX_RANK = 64          # numpy's limit on the number of dimensions
INT64_MAX = 2**63 - 1
_UNITS = {"": 1, "b": 1, "k": 1 << 10, "kb": 10**3, "kib": 1 << 10, "m": 1 << 20, "mb": 10**6,
          "mib": 1 << 20, "g": 1 << 30, "gb": 10**9, "gib": 1 << 30, "t": 1 << 40,
          "tb": 10**12, "tib": 1 << 40}


def check_allocation(shape, dtype, what):
    """Refuse an array of ``shape`` and ``dtype`` that would exceed the memory limit, whose
    element count or byte size overflows int64, or whose rank numpy cannot hold.

    Raises :class:`ovpool.errors.MemoryLimitError` (for a rank above 64 too: numpy could not
    allocate it either) before anything is allocated. A shape with unknown (``None``) dims
    is only checked for its rank.
    """
    if shape is None:
        return
    if len(shape) > MAX_RANK:
        raise MemoryLimitError(f"{what} has rank {len(shape)}; arrays have at most {MAX_RANK} "
                               "dimensions")
    if any(d is None for d in shape):
        return          # (an unknown dim may be 0; checked again once it is known)
    count = math.prod(shape)
    nbytes = count * np.dtype(dtype).itemsize
    if count > INT64_MAX or nbytes > INT64_MAX:
        raise MemoryLimitError(f"{what} of shape {shape_text(shape)}: the element count "
                               "overflows a 64-bit integer")
    limit = get_memory_limit()
    if nbytes > limit:
        raise MemoryLimitError(f"{what} of shape {shape_text(shape)} and type "
                               f"{np.dtype(dtype)} needs {nbytes} bytes, over the memory limit "
                               f"of {limit} bytes (see ovpool.set_memory_limit)")


def shape_text(shape):
    """A shape of ints and None (unknown dims) as ``[2,?,3]``."""
    return "[" + ",".join("?" if d is None else str(d) for d in shape) + "]"


def parse_memory_size(text):
    """``"512M"``, ``"2G"``, ``"1.5GiB"``, ``"4000000000"``, ``"2 GB"`` -> bytes (an int > 0).

    Binary units for the single letters (K, M, G, T = 2**10 ...), decimal for KB, MB, GB, TB,
    binary for KiB ... TiB; case-insensitive. ``"50%"`` is that share of the physical memory.
    Raises :class:`ovpool.errors.BadArgumentError` for anything else.
    """
    if not isinstance(text, str):
        raise BadArgumentError(f"memory limit must be a string like 2G, got {text!r}")
    match = re.fullmatch(r"\s*([0-9]+(?:\.[0-9]*)?|\.[0-9]+)\s*([a-zA-Z]*|%)\s*", text)
    unit = match.group(2).lower() if match else None
    if match is None or (unit not in _UNITS and unit != "%") or len(match.group(1)) > 30:
        raise BadArgumentError(f"memory limit {text!r} is not a size like 512M, 2G, 1.5GiB, "
                               "4000000000 or 50%")
    number = float(match.group(1))
    if unit == "%":
        if not 0 < number <= 100:
            raise BadArgumentError(f"memory limit {text!r}: a percentage must be in (0, 100]")
        nbytes = int(physical_memory() * number / 100)
    else:
        nbytes = int(number * _UNITS[unit])
    if nbytes < 1 or nbytes > INT64_MAX:
        raise BadArgumentError(f"memory limit {text!r} must be between 1 byte and 2**63-1 bytes")
    return nbytes


def memory_limit_argument(text):
    """An argparse ``type=`` for ``--memory-limit``: bytes, or ArgumentTypeError."""
    import argparse
    try:
        return parse_memory_size(text)
    except BadArgumentError as error:
        raise argparse.ArgumentTypeError(str(error)) from None
