"""Helpers shared by the native extension's tests (paths, running the scripts)."""

import os
import subprocess
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
SAMPLES = os.path.join(ROOT, "samples")
HERE = os.path.dirname(os.path.abspath(__file__))


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
