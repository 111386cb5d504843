"""Validation does not depend on what was called before: every refusal is checked in a fresh
process and again after a warm-up call with the valid value (the plans are cached, and
``2``, ``2.0`` and ``True`` compare equal as cache keys)."""

import os
import subprocess
import sys
import textwrap

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# (name, warm-up call, refused call, expected error class); x is (1, 1, 8, 8) float32, y is
# (1, 1, 100000) uint8 with o its output.
CASES = [
    ("kernel float", "max_pool(x, 2)", "max_pool(x, 2.0)", "BadAttributeError"),
    ("kernel bool", "max_pool(x, 1)", "max_pool(x, True)", "BadAttributeError"),
    ("kernel float list", "avg_pool(x, [2, 2])", "avg_pool(x, [2.0, 2])", "BadAttributeError"),
    ("strides float", "avg_pool(x, 2, strides=2)", "avg_pool(x, 2, strides=2.0)",
     "BadAttributeError"),
    ("pads bool", "avg_pool(x, 2, pads_begin=(0, 0))", "avg_pool(x, 2, pads_begin=(False, 0))",
     "BadAttributeError"),
    ("dilations float", "max_pool(x, 2, dilations=1)", "max_pool(x, 2, dilations=1.0)",
     "BadAttributeError"),
    ("axis float", "max_pool(x, 2, axis=0)", "max_pool(x, 2, axis=0.0)", "BadAttributeError"),
    ("axis bool", "max_pool(x, 2, axis=0)", "max_pool(x, 2, axis=False)", "BadAttributeError"),
    ("return_indices int", "max_pool(x, 2, return_indices=True)",
     "max_pool(x, 2, return_indices=1)", "BadArgumentError"),
    ("adaptive return_indices int", "adaptive_max_pool(x, 2, return_indices=False)",
     "adaptive_max_pool(x, 2, return_indices=0)", "BadArgumentError"),
    ("output size float", "adaptive_avg_pool(x, 2)", "adaptive_avg_pool(x, 2.0)",
     "BadAttributeError"),
    ("output size bool", "adaptive_max_pool(x, (1, 1))", "adaptive_max_pool(x, (True, 1))",
     "BadAttributeError"),
    ("index type int", "max_pool(x, 2, index_element_type='i64')",
     "max_pool(x, 2, index_element_type=64)", "BadArgumentError"),
    ("exclude_pad int", "avg_pool(x, 2, exclude_pad=True)", "avg_pool(x, 2, exclude_pad=1)",
     "BadAttributeError"),
    ("rounding not a string", "max_pool(x, 2, rounding_type='floor')",
     "max_pool(x, 2, rounding_type=0)", "BadAttributeError"),
    ("memory limit lowered", "max_pool(y, 1, out=o, return_indices=False)",
     "set_memory_limit(50000); max_pool(y, 1, out=o, return_indices=False)",
     "MemoryLimitError"),
    ("adaptive memory limit lowered", "adaptive_avg_pool(y, 100000, out=o)",
     "set_memory_limit(50000); adaptive_avg_pool(y, 100000, out=o)", "MemoryLimitError"),
]

# Imports ovpool once, then forks one fresh child per case and per mode (fresh or warmed up),
# so each case starts from empty plan caches without paying for a new interpreter.
_SCRIPT = textwrap.dedent("""
    import os, sys
    import numpy as np
    import ovpool
    from ovpool import *
    from ovpool.errors import *
    x = np.arange(64, dtype=np.float32).reshape(1, 1, 8, 8)
    y = np.zeros((1, 1, 100000), np.uint8)
    o = np.empty_like(y)
    cases = eval(sys.stdin.read())
    for name, warm, refused, error in cases:
        for mode in ("fresh", "warm"):
            pid = os.fork()
            if pid == 0:
                try:
                    if mode == "warm":
                        exec(warm)
                    exec(refused)
                    print(f"{name} {mode}: accepted", flush=True)
                except Exception as caught:
                    ok = type(caught).__name__ == error
                    print(f"{name} {mode}: {'refused' if ok else 'WRONG'} "
                          f"{type(caught).__name__}: {caught}", flush=True)
                os._exit(0)
            os.waitpid(pid, 0)
""")


def test_refusals_fresh_and_after_warm_up():
    env = dict(os.environ, PYTHONPATH=ROOT, OMP_NUM_THREADS="1")
    result = subprocess.run([sys.executable, "-c", _SCRIPT], input=repr(CASES), env=env,
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert len(lines) == 2 * len(CASES), result.stdout + result.stderr
    bad = [line for line in lines if ": refused " not in line]
    assert not bad, "\n".join(bad)


@pytest.mark.parametrize("name,warm,refused,error", CASES[:3])
def test_warm_up_calls_are_valid(name, warm, refused, error):
    # the warm-up calls themselves succeed (so a refusal after them is the cache's test)
    import numpy as np
    import ovpool
    x = np.arange(64, dtype=np.float32).reshape(1, 1, 8, 8)
    eval("ovpool." + warm, {"ovpool": ovpool, "x": x})
