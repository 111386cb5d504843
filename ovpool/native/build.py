"""Build ovpool's native OpenVINO extension library (``libovpool_extension.so``).

The library is a CMake project (``ovpool/native/CMakeLists.txt``) built against the OpenVINO of
the running Python (``openvino.utils.get_cmake_path()``); it only loads into that OpenVINO
version. ``build()`` configures and builds it and copies it to ``ovpool/native/lib/``, with a
``build.json`` saying what it was built for; ``library_path()`` finds it afterwards.

Command line: ``python -m ovpool.native.build [--build-dir DIR] [--jobs N]`` prints the path.
"""

import argparse
import json
import os
import pathlib
import shlex
import shutil
import subprocess
import sys

from ..errors import UnsupportedError
from ..openvino import _openvino as _require_openvino

__all__ = ["build", "build_info", "library_path", "same_release", "LIBRARY_NAME"]

SOURCE_DIR = pathlib.Path(__file__).resolve().parent
LIB_DIR = SOURCE_DIR / "lib"
LIBRARY_NAME = {"win32": "ovpool_extension.dll", "darwin": "libovpool_extension.dylib"}.get(
    sys.platform, "libovpool_extension.so")


def _openvino():
    return _require_openvino("building ovpool's OpenVINO extension",
                             "install it with: pip install openvino")


def _cmake():
    # The cmake that `pip install 'ovpool[openvino]'` put beside this Python comes first: a
    # virtual environment's bin folder is often not on PATH.
    beside_python = os.path.join(os.path.dirname(sys.executable), "cmake")
    cmake = beside_python if os.access(beside_python, os.X_OK) else shutil.which("cmake")
    if cmake is None:
        raise UnsupportedError("building ovpool's OpenVINO extension needs cmake (3.16 or "
                               "newer) and a C++17 compiler; install them, e.g. "
                               "pip install cmake, or apt-get install cmake g++")
    return cmake


def _run(command, what):
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode != 0:
        output = (result.stdout + result.stderr).strip().splitlines()
        raise UnsupportedError(f"{what} failed (exit code {result.returncode}): "
                               f"{' '.join(map(str, command))}\n" + "\n".join(output[-40:]))
    return result.stdout


def _release(version):
    """``"2026.4.1"`` from ``"2026.4.1-22982-e213a147257-releases/2026/4"``."""
    return str(version).split("-", 1)[0]


def build(build_dir=None, jobs=2):
    """Configure and build the extension library; return the path of the copy in
    ``ovpool/native/lib/``.

    Parameters
    ----------
    build_dir : str or path, optional
        CMake build directory, kept so that the next build only recompiles what changed;
        default: ``ovpool/native/lib/cmake-build``.
    jobs : int
        Parallel compile jobs.

    The environment variable ``OVPOOL_NATIVE_CMAKE_ARGS`` adds arguments to the CMake
    configure step (e.g. ``-DCMAKE_CXX_COMPILER=clang++``).

    Raises
    ------
    ovpool.errors.UnsupportedError
        openvino or cmake is missing, or configuring or compiling failed (the message ends with
        the tool's output).
    """
    openvino = _openvino()
    cmake = _cmake()
    cmake_dir = openvino.utils.get_cmake_path()
    if not cmake_dir or not os.path.isfile(os.path.join(cmake_dir, "OpenVINOConfig.cmake")):
        raise UnsupportedError(f"the installed openvino ({openvino.__version__}) ships no CMake "
                               f"package (OpenVINOConfig.cmake not found in {cmake_dir!r})")
    work = pathlib.Path(build_dir) if build_dir is not None else LIB_DIR / "cmake-build"
    work.mkdir(parents=True, exist_ok=True)
    extra = shlex.split(os.environ.get("OVPOOL_NATIVE_CMAKE_ARGS", ""))
    _run([cmake, "-S", str(SOURCE_DIR), "-B", str(work), f"-DOpenVINO_DIR={cmake_dir}",
          "-DCMAKE_BUILD_TYPE=Release", *extra], "configuring ovpool's OpenVINO extension")
    _run([cmake, "--build", str(work), "--config", "Release", "--parallel", str(int(jobs))],
         "building ovpool's OpenVINO extension")
    built = next((p for p in (work / LIBRARY_NAME, work / "Release" / LIBRARY_NAME)
                  if p.is_file()), None)
    if built is None:
        raise UnsupportedError(f"the build of ovpool's OpenVINO extension produced no "
                               f"{LIBRARY_NAME} in {work}")
    LIB_DIR.mkdir(exist_ok=True)
    target = LIB_DIR / LIBRARY_NAME
    # Copy then rename: a process that has the old library mapped keeps its copy.
    partial = LIB_DIR / (LIBRARY_NAME + ".partial")
    shutil.copy2(built, partial)
    os.replace(partial, target)
    info = {"openvino": openvino.__version__, "openvino_release": _release(openvino.__version__),
            "library": LIBRARY_NAME, "python": sys.version.split()[0],
            "cmake": _run([cmake, "--version"], "cmake --version").splitlines()[0]}
    (LIB_DIR / "build.json").write_text(json.dumps(info, indent=2) + "\n")
    return target


def build_info():
    """What ``build.json`` records of the built library (``"openvino"``: the version it was
    built for, ...) with its ``"path"``, or None when no library has been built."""
    target = LIB_DIR / LIBRARY_NAME
    if not target.is_file():
        return None
    try:
        info = json.loads((LIB_DIR / "build.json").read_text())
    except (OSError, ValueError):
        info = {}
    return {**info, "path": str(target)}


def same_release(built_for, running):
    """Whether two OpenVINO version strings name the same release."""
    return bool(built_for) and _release(built_for) == _release(running)


def library_path():
    """The built library (``ovpool/native/lib/libovpool_extension.so``), or None when it has not
    been built or was built for another OpenVINO release than the installed one (the library
    refuses to load into another version)."""
    info = build_info()
    if info is None:
        return None
    try:
        from importlib.metadata import version
        installed = version("openvino")
    except Exception:  # noqa: BLE001 - openvino not installed as a package
        return pathlib.Path(info["path"])
    if "openvino" in info and not same_release(info["openvino"], installed):
        return None
    return pathlib.Path(info["path"])


def main(argv=None):
    parser = argparse.ArgumentParser(description="Build ovpool's OpenVINO extension library.")
    parser.add_argument("--build-dir", help="CMake build directory (default: temporary)")
    parser.add_argument("--jobs", type=int, default=2, help="parallel compile jobs (default 2)")
    args = parser.parse_args(argv)
    print(build(args.build_dir, args.jobs))


if __name__ == "__main__":
    main()
