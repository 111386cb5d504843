"""Build script: the Cython kernels, with OpenMP when the compiler has it.

The kernels are the header-only C++17 core in ovpool/core; _kernels.pyx, compiled as C++, is
the numpy-facing layer over it.

OpenMP is probed by compiling a tiny program; without it the kernels build single-threaded and
a loud warning says so. On x86-64 the kernels are built twice: a baseline module and one for
CPUs with AVX2 + FMA + F16C, which ovpool picks at import time when the CPU has them, so one
build is both fast and safe to copy to other machines. Set OVPOOL_NATIVE=1 to tune both for
this machine's CPU (-march=native) instead: the result must then not be copied elsewhere.
"""

import glob
import os
import platform
import subprocess
import sys
import sysconfig
import tempfile
import textwrap

from setuptools import Extension, find_packages, setup
from setuptools.command.build_ext import build_ext

OPENMP_PROBE = textwrap.dedent(
    """
    #include <omp.h>
    int main(void) { return omp_get_max_threads() > 0 ? 0 : 1; }
    """
)


def _compiler_accepts(compiler_cmd, flags):
    with tempfile.TemporaryDirectory() as tmp:
        source = os.path.join(tmp, "probe.c")
        with open(source, "w") as handle:
            handle.write(OPENMP_PROBE)
        command = [*compiler_cmd, source, "-o", os.path.join(tmp, "probe"), *flags]
        try:
            result = subprocess.run(command, capture_output=True, cwd=tmp)
        except OSError:
            return False
        return result.returncode == 0


class BuildExt(build_ext):
    def build_extensions(self):
        compiler_cmd = list(getattr(self.compiler, "compiler_so", None) or
                            [sysconfig.get_config_var("CC") or "cc"])
        is_msvc = self.compiler.compiler_type == "msvc"
        if is_msvc:
            compile_flags, link_flags = ["/O2", "/openmp", "/std:c++17"], []
        else:
            compile_flags, link_flags = ["-O3", "-std=c++17"], []
            if _compiler_accepts(compiler_cmd[:1], ["-fopenmp"]):
                compile_flags.append("-fopenmp")
                link_flags.append("-fopenmp")
            else:
                print("\n" + "!" * 78 + "\nWARNING: the C compiler has no OpenMP; ovpool's "
                      "kernels will run on one thread only.\n" + "!" * 78 + "\n",
                      file=sys.stderr)
            if os.environ.get("OVPOOL_NATIVE") == "1":
                compile_flags.append("-march=native")
        for extension in self.extensions:
            extra = list(compile_flags)
            if extension.name.endswith("_avx2") and not is_msvc and "-march=native" not in extra:
                extra += ["-mavx2", "-mfma", "-mf16c"]
            extension.extra_compile_args = extra + extension.extra_compile_args
            extension.extra_link_args = link_flags + extension.extra_link_args
        if not self.parallel:
            self.parallel = min(len(self.extensions), os.cpu_count() or 1)
        super().build_extensions()


def _extensions():
    from Cython.Build import cythonize

    names = ["_kernels"]
    core_headers = sorted(glob.glob("ovpool/core/**/*.hpp", recursive=True))
    if platform.machine().lower() in ("x86_64", "amd64"):
        names.append("_kernels_avx2")
    # C++: the kernels are the header-only core in ovpool/core (shared with the native
    # OpenVINO extension); each build gets its own ISA namespace for the core's symbols.
    extensions = [
        Extension(f"ovpool.{name}", sources=[f"ovpool/{name}.pyx"], include_dirs=["ovpool"],
                  language="c++", depends=core_headers,
                  define_macros=[("OVPOOL_CORE_ISA", "avx2" if name.endswith("_avx2")
                                  else "baseline")])
        for name in names
    ]
    # Given here, not only in _kernels.pyx's header: _kernels_avx2.pyx includes that file, and
    # directive comments of an included file do not apply to the including module.
    directives = {"language_level": 3, "boundscheck": False, "wraparound": False,
                  "cdivision": True, "initializedcheck": False, "nonecheck": False,
                  "embedsignature": True}
    extensions.append(Extension("ovpool._rules", sources=["ovpool/_rules.pyx"],
                                include_dirs=["ovpool"], language="c++",
                                extra_compile_args=["-std=c++17"]))
    return cythonize(extensions, compiler_directives=directives,
                     annotate=os.environ.get("OVPOOL_ANNOTATE") == "1")


TEST_REQUIRES = [
    "pytest>=7",
    "hypothesis>=6.80",
    "ml_dtypes>=0.3",
    "openvino>=2024.4",
    "cmake>=3.16",
    "onnx>=1.16",
    "onnxruntime>=1.18",
    "dask[array]>=2023.6",
    "distributed>=2023.6",
    "matplotlib>=3.7",
]

# ovpool.dask and ``ovpool run --dask``.
DASK_REQUIRES = ["dask[array]>=2023.6", "distributed>=2023.6"]

setup(
    name="ovpool",
    version="0.1.0",
    description="Exact, fast pooling for OpenVINO IR models, in Python and Cython",
    long_description=open("README.md", encoding="utf-8").read() if os.path.exists("README.md") else "",
    long_description_content_type="text/markdown",
    python_requires=">=3.9",
    packages=find_packages(include=["ovpool", "ovpool.*"]),
    package_data={"ovpool": ["*.pyx", "core/*.hpp", "core/simd/*.hpp"],
                  # The native OpenVINO extension's sources, built by ovpool.native.build.
                  "ovpool.native": ["CMakeLists.txt", "src/*.cpp", "src/*.hpp", "src/*.map"]},
    ext_modules=_extensions(),
    cmdclass={"build_ext": BuildExt},
    # tqdm draws the progress bar of streaming runs (ovpool run --batch-size); it is small,
    # pure Python and has no dependencies of its own, so it is required rather than optional.
    install_requires=["numpy>=1.23", "lxml>=4.9", "tqdm>=4.60"],
    entry_points={"console_scripts": ["ovpool=ovpool.cli:main"]},
    extras_require={
        # cmake builds the native extension library (ovpool build-extension).
        "openvino": ["openvino>=2024.4", "cmake>=3.16"],
        "bfloat16": ["ml_dtypes>=0.3"],
        "dask": DASK_REQUIRES,
        # ovpool explain --png (layout="constrained", legends "outside" need 3.7).
        "explain": ["matplotlib>=3.7"],
        "test": TEST_REQUIRES,
    },
    zip_safe=False,
)
