# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
# cython: initializedcheck=False, nonecheck=False, embedsignature=True
# The same kernels compiled for x86-64 CPUs with AVX2, FMA and F16C (see setup.py: the core's
# AVX2 row kernels and F16C conversions are compiled in, and its symbols live in the
# ovpool::core::avx2 namespace); ovpool loads this module instead of _kernels when the CPU it
# runs on has those instructions.
include "_kernels.pyx"
