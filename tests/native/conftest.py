"""Fixtures of the native OpenVINO extension's tests.

The library is built once per session with ovpool.native.build into a temporary build
directory. These tests fail (they never skip) when it cannot be built: CI installs openvino and
cmake for them.
"""

import os
import subprocess
import sys

import pytest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
SAMPLES = os.path.join(ROOT, "samples")
HERE = os.path.dirname(os.path.abspath(__file__))


@pytest.fixture(scope="session")
def native_library(tmp_path_factory):
    # Set by test_native_vs_numpy's baseline run, which reuses the library this session built.
    given = os.environ.get("OVPOOL_NATIVE_TEST_LIBRARY")
    if given:
        return given
    from ovpool.native import build

    return str(build.build(build_dir=tmp_path_factory.mktemp("native-build"), jobs=2))


def run_script(name, *args, timeout=600, env=None):
    """Run tests/native/<name> in a fresh Python (which never imports ovpool unless the script
    does); return its stdout. A crash (signal) or non-zero exit fails the test. `env` adds
    environment variables."""
    env = {**{k: v for k, v in os.environ.items() if k != "PYTHONPATH"}, **(env or {})}
    result = subprocess.run([sys.executable, os.path.join(HERE, name), *map(str, args)],
                            capture_output=True, text=True, timeout=timeout, cwd=HERE, env=env)
    assert result.returncode == 0, (
        f"{name} exited with {result.returncode}\n--- stdout\n{result.stdout}\n"
        f"--- stderr\n{result.stderr}")
    return result.stdout
