"""The randomness of the differential fuzzers, behind one variable.

CI runs a fixed, derandomized slice of `default` examples; `<examples_var>=N` runs a longer one.
`MINIGRAD_FUZZ_SEED=<n>` runs another slice, the same one for the same n: hypothesis's draws take n as their
seed (as `--hypothesis-seed=<n>` would), and the fuzzers that draw with fixed seeds mix n into each through
`fuzz_rng` (a numpy generator) or `fuzz_seed` (an integer, for the other generators a case seeds). A failure
found at seed n reproduces with

    MINIGRAD_FUZZ_SEED=<n> PYTHONPATH=$PWD python -m pytest tests/<the fuzzer> -q -n 0

(tests/conftest.py keeps hypothesis's draws independent of the modules other tests loaded.)"""
import os

import numpy as np
from hypothesis import HealthCheck, seed, settings

SEED = os.environ.get("MINIGRAD_FUZZ_SEED")
SEED = None if SEED is None else int(SEED)


def fuzz_settings(examples_var, default):
    """hypothesis's settings for a fuzzer, as a decorator (above @given)."""
    chosen = settings(max_examples=int(os.environ.get(examples_var, default)), deadline=None,
                      derandomize=SEED is None, database=None,
                      suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                             HealthCheck.filter_too_much,
                                             HealthCheck.function_scoped_fixture])
    return chosen if SEED is None else lambda test: seed(SEED)(chosen(test))


def fuzz_rng(*key):
    """np.random.default_rng(key), with MINIGRAD_FUZZ_SEED mixed in when it is set (CI's slice: unchanged)."""
    return np.random.default_rng(key[0] if len(key) == 1 and SEED is None else [*key, *([] if SEED is None else [SEED])])


def fuzz_seed(seed):
    """The integer `seed`, or another drawn from it and MINIGRAD_FUZZ_SEED when that is set (CI's slice: unchanged):
    for a case whose draws take an integer seed (random.Random, manual_seed, RandomState)."""
    return seed if SEED is None else int(fuzz_rng(seed).integers(2**31))
