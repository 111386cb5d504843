"""Build script: the Cython kernels, with OpenMP when the compiler has it.

OPENMP is probed by compiling a tiny program; without it the kernels build single-threaded and
a loud warning says so. Set OVPOOL_NATIVE=1 to tune the build for this machine's CPU
(-march=native): faster locally, but the result must not be copied to other machines.
"""

import os
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
            compile_flags, link_flags = ["/O2", "/openmp"], []
        else:
            compile_flags, link_flags = ["-O3"], []
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
            extension.extra_compile_args = compile_flags + extension.extra_compile_args
            extension.extra_link_args = link_flags + extension.extra_link_args
        super().build_extensions()


def _extensions():
    from Cython.Build import cythonize

    kernels = Extension(
        "ovpool._kernels",
        sources=["ovpool/_kernels.pyx"],
        include_dirs=["ovpool"],
        define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION")],
    )
    return cythonize([kernels], compiler_directives={"language_level": 3},
                     annotate=os.environ.get("OVPOOL_ANNOTATE") == "1")


TEST_REQUIRES = [
    "pytest>=7",
    "hypothesis>=6.80",
    "ml_dtypes>=0.3",
    "openvino>=2024.4",
    "onnx>=1.16",
    "onnxruntime>=1.18",
]

setup(
    name="ovpool",
    version="0.1.0",
    description="Exact, fast pooling for OpenVINO IR models, in Python and Cython",
    long_description=open("README.md", encoding="utf-8").read() if os.path.exists("README.md") else "",
    long_description_content_type="text/markdown",
    python_requires=">=3.9",
    packages=find_packages(include=["ovpool", "ovpool.*"]),
    package_data={"ovpool": ["*.pyx", "*.h"]},
    ext_modules=_extensions(),
    cmdclass={"build_ext": BuildExt},
    install_requires=["numpy>=1.23"],
    extras_require={
        "openvino": ["openvino>=2024.4"],
        "bfloat16": ["ml_dtypes>=0.3"],
        "test": TEST_REQUIRES,
    },
    zip_safe=False,
)
