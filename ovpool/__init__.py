"""ovpool: exact, fast pooling for OpenVINO IR models.

The public API: numpy-level pooling functions with OpenVINO's semantics, their output-shape
rules, the process-wide settings, and the IR runtime (read_model, compile_model).
"""

import os as _os

# Idle OpenMP threads spin briefly, then sleep. Sleeping at once (OMP_WAIT_POLICY=PASSIVE) made
# every call wait for its second thread's wake-up, about 20 us on a 0.1 ms pooling; libgomp's
# default spin (300000 rounds, or forever when ACTIVE) steals a core from other processes for
# milliseconds after each call. 1000 rounds spin for tens of microseconds, and libgomp cuts them
# to 100 when there are more threads than CPUs. LLVM's libomp (KMP_BLOCKTIME) sleeps at once,
# as before. Settings the user made are kept; this must run before the OpenMP runtime loads.
if "OMP_WAIT_POLICY" not in _os.environ and "GOMP_SPINCOUNT" not in _os.environ:
    _os.environ["GOMP_SPINCOUNT"] = "1000"
    _os.environ.setdefault("KMP_BLOCKTIME", "0")

from . import errors  # noqa: E402
from ._kernel_select import kernel_variant, kernels as _selected_kernels
from ._shapes import adaptive_output_shape, pool_output_shape
from .config import (get_memory_limit, get_num_threads, num_threads, set_memory_limit,
                     set_num_threads)
from .errors import OvpoolError
from .ir import Model, read_model
from .explanation import explain
from .pooling import adaptive_avg_pool, adaptive_max_pool, avg_pool, max_pool
from .runtime import CompiledModel, compile_model
from . import directml, onnx  # noqa: E402  (dialects; ovpool.onnx never imports the onnx package)

__version__ = "0.1.0"
openmp_enabled = _selected_kernels.openmp_enabled

__all__ = [
    "avg_pool",
    "max_pool",
    "adaptive_avg_pool",
    "adaptive_max_pool",
    "pool_output_shape",
    "adaptive_output_shape",
    "set_num_threads",
    "get_num_threads",
    "num_threads",
    "set_memory_limit",
    "get_memory_limit",
    "openmp_enabled",
    "kernel_variant",
    "errors",
    "OvpoolError",
    "read_model",
    "compile_model",
    "Model",
    "CompiledModel",
    "onnx",
    "directml",
    "explain",
]
