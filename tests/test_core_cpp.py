"""The C++ core on its own: a small program built against ``ovpool/core`` with a C++17
compiler and no Python headers, which runs average and max jobs against hand-worked results
(and the float16 conversions against the portable ones). Proves the core is free of Python, as
the native OpenVINO extension needs it to be."""

import os
import platform
import shutil
import subprocess

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
SOURCE = os.path.join(HERE, "core_cpp", "core_smoke.cpp")

BUILDS = {
    "baseline": [],
    "avx2": ["-mavx2", "-mfma", "-mf16c", "-DOVPOOL_CORE_ISA=avx2"],
}


def _compiler():
    compiler = os.environ.get("CXX") or shutil.which("g++") or shutil.which("c++")
    assert compiler, "no C++ compiler found (g++ or c++, or set CXX)"
    return compiler


def _runnable_builds():
    """The builds this machine can run: the AVX2 one only on an x86-64 CPU with AVX2 + FMA +
    F16C (elsewhere it cannot be executed, so it is not a test case at all)."""
    from ovpool import _kernels

    avx2 = (platform.machine().lower() in ("x86_64", "amd64")
            and _kernels.cpu_has_avx2_f16c())
    return [build for build in sorted(BUILDS) if build != "avx2" or avx2]


@pytest.mark.parametrize("build", _runnable_builds())
def test_core_runs_without_python(build, tmp_path):
    program = str(tmp_path / f"core_smoke_{build}")
    command = [_compiler(), "-std=c++17", "-O2", "-Wall", "-Wextra", "-Werror",
               "-I", os.path.join(ROOT, "ovpool"), *BUILDS[build], SOURCE, "-o", program]
    built = subprocess.run(command, capture_output=True, text=True)
    assert built.returncode == 0, built.stderr
    ran = subprocess.run([program], capture_output=True, text=True, timeout=120)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert ran.stdout.startswith("ok:"), ran.stdout
    assert f"have_avx2={int(build == 'avx2')}" in ran.stdout
