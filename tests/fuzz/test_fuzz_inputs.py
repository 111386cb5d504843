"""A small seeded batch of the input-file fuzzer (tests/fuzz/fuzz_inputs.py) in CI.

Every mutated .npy / .npz input must either run or be refused with exit 2 and one error
line; an internal error, a traceback, a crash or a hang fails the test, which shows the
reproducer's files.
"""

import os

import fuzz_inputs
import fuzz_ir

HERE = os.path.dirname(os.path.abspath(__file__))

CI_CASES = 300
LONG_CASES = 3000


def test_seeded_batch_has_nothing_but_ok_and_clean_errors(request, tmp_path):
    cases = LONG_CASES if request.config.getoption("--long") else CI_CASES
    fuzz_ir.assert_clean_batch(os.path.join(HERE, "fuzz_inputs.py"), cases,
                               ["--seed", "ci-1", "--timeout", "30", "--workers", "2"],
                               tmp_path / "keep", timeout=120 + cases, min_ok=cases // 20,
                               min_clean=cases // 2)


def test_cases_are_deterministic_and_samples_run(tmp_path):
    samples = fuzz_inputs.load_samples()
    assert fuzz_inputs.make_case(samples, "s", 5) == fuzz_inputs.make_case(samples, "s", 5)
    assert fuzz_inputs.make_case(samples, "s", 5) != fuzz_inputs.make_case(samples, "t", 5)
    for name, _, data in samples:
        path = tmp_path / name
        path.write_bytes(data)
        # the model wants one f32 input: other dtypes and a second member are refused
        expected = "clean" if name in ("f16.npy", "i32.npy") or "2.npz" in name else "ok"
        assert fuzz_inputs.run_file(str(path)) == expected, name
