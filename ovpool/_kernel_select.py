"""Pick the kernel build for this CPU: the AVX2 + FMA + F16C one when the CPU has those
instructions, else the baseline. OVPOOL_KERNELS=baseline forces the baseline (for tests and
for comparing the two)."""

import os

from . import _kernels as _baseline


def _select():
    if os.environ.get("OVPOOL_KERNELS", "auto") != "baseline" and _baseline.cpu_has_avx2_f16c():
        try:
            from . import _kernels_avx2
        except ImportError:  # built on a platform without the AVX2 variant
            return _baseline, "baseline"
        return _kernels_avx2, "avx2"
    return _baseline, "baseline"


kernels, variant = _select()


def kernel_variant():
    """Which kernel build this process uses: "avx2" or "baseline"."""
    return variant
