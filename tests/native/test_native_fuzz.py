"""A small seeded batch of the IR fuzzer run through OpenVINO with ovpool's native extension
library loaded (tests/fuzz/fuzz_ir.py --native): every mutated model is compiled and run or
refused by OpenVINO or ovpool; a crash (the worker process dies) or a hang fails."""

import os

import fuzz_ir

FUZZ = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "fuzz")

CASES = 150


def test_native_extension_survives_a_seeded_ir_fuzz_batch(native_library, tmp_path):
    fuzz_ir.assert_clean_batch(
        os.path.join(FUZZ, "fuzz_ir.py"), CASES,
        ["--native", "--seed", "ci-native", "--timeout", "60", "--workers", "2"],
        tmp_path / "keep", timeout=600, min_ok=CASES // 10, min_clean=CASES // 10,
        env={**os.environ, "OMP_NUM_THREADS": "1"})
