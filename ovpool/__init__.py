"""ovpool: exact, fast pooling for OpenVINO IR models.

The public API: numpy-level pooling functions with OpenVINO's semantics, their output-shape
rules, the process-wide settings, and the IR runtime (read_model, compile_model).
"""

import os as _os

# OpenMP threads that spin while idle steal the core from whatever else runs on the machine,
# and stall the next kernel call when another process holds a core; ovpool's kernels are
# coarse enough that sleeping costs nothing measurable. Must be set before libgomp loads.
_os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

from . import errors  # noqa: E402
from ._kernel_select import kernel_variant, kernels as _selected_kernels
from ._shapes import adaptive_output_shape, pool_output_shape
from .config import (get_memory_limit, get_num_threads, num_threads, set_memory_limit,
                     set_num_threads)
from .errors import OvpoolError
from .ir import Model, read_model
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
]
