"""Shared pytest configuration.

``--long`` selects deeper randomised runs: the hypothesis profile ``long`` (many more examples
per property, no deadline, random seeds) and a larger seeded IR fuzz batch. Without it the
profile is ``ci``: a fixed budget of examples, derandomized, so CI runs are reproducible and
quick. ``HYPOTHESIS_PROFILE=<name>`` in the environment overrides both.

The fixture ``max_passes_on_small_planes`` keeps max pooling of planes of more than 128
elements on the separable passes (by default such planes of two or more axes may go side by
side through the tap table, core/max_lanes.hpp): tests of the passes' code paths use it so that
their small planes still reach those paths.

At the end of the run it prints the summary lines the test modules register with
``helpers.summary_line`` (tests/helpers.py also says how tests import shared code and the
test extra).
"""

import os

import pytest
from hypothesis import HealthCheck, settings

import helpers

_SLOW_OK = [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much]
settings.register_profile(
    "ci", max_examples=200, derandomize=True, deadline=None, print_blob=True,
    suppress_health_check=_SLOW_OK, database=None)
settings.register_profile(
    "long", max_examples=5000, derandomize=False, deadline=None, print_blob=True,
    suppress_health_check=_SLOW_OK)
settings.register_profile(
    "dev", max_examples=40, derandomize=False, deadline=None, print_blob=True,
    suppress_health_check=_SLOW_OK)


def pytest_addoption(parser):
    parser.addoption(
        "--long", action="store_true", default=False,
        help="deeper randomised runs: the 'long' hypothesis profile and a bigger IR fuzz batch")


def pytest_configure(config):
    profile = os.environ.get("HYPOTHESIS_PROFILE") or (
        "long" if config.getoption("--long") else "ci")
    settings.load_profile(profile)


def pytest_terminal_summary(terminalreporter):
    """The lines of the test modules' counters (``helpers.summary_line``)."""
    for line in helpers.SUMMARY_LINES:
        text = line()
        if text:
            terminalreporter.write_line(text)


@pytest.fixture
def max_passes_on_small_planes(monkeypatch):
    from ovpool import pooling
    monkeypatch.setattr(pooling, "_MID_PLANES_IN_LANES", False)
