"""The hypothesis settings of the differential fuzzers: a fixed, derandomized slice of `default` examples in CI,
`<examples_var>=N` for a longer run, `MINIGRAD_FUZZ_SEED=<n>` for another random slice instead of the fixed one
(tests/conftest.py keeps their draws independent of the modules other tests loaded)."""
import os

from hypothesis import HealthCheck, settings


def fuzz_settings(examples_var, default):
    seed = os.environ.get("MINIGRAD_FUZZ_SEED")
    return settings(max_examples=int(os.environ.get(examples_var, default)), deadline=None, derandomize=seed is None,
                    database=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                                          HealthCheck.filter_too_much])
