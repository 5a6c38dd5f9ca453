"""Review of day 28's merges: batch_norm's running statistics given one without the other, in and out of vmap,
against torch."""
import numpy as np
import pytest

import minigrad
import nn.functional as F
from minigrad.func import vmap

torch = pytest.importorskip("torch")


def _outcome(fn):
    try:
        fn()
    except Exception as e:  # (the outcome compared is the error's type and text)
        return type(e).__name__, str(e)
    return "ok", ""


def _x(lib, shape=(4, 2, 5)):
    return lib.tensor(np.random.default_rng(0).standard_normal(shape).astype(np.float32))


@pytest.mark.parametrize("training", [True, False])
@pytest.mark.parametrize("missing", ["running_mean", "running_var"])
def test_batch_norm_one_running_statistic_missing_as_torch(training, missing):
    def call(lib, f):
        stats = {"running_mean": lib.zeros(2), "running_var": lib.ones(2)}
        stats[missing] = None
        return lambda: f.batch_norm(_x(lib), stats["running_mean"], stats["running_var"], training=training)

    expected = _outcome(call(torch, torch.nn.functional))
    assert expected[0] != "ok"
    assert _outcome(call(minigrad, F)) == expected


def test_vmap_batch_norm_refuses_an_unbatched_running_var_as_torch():
    def call(lib, f, vmap_):
        x, means, var = _x(lib, (3, 4, 2, 5)), lib.zeros(3, 2), lib.ones(2)
        return lambda: vmap_(lambda xi, m: f.batch_norm(xi, m, var, training=True))(x, means)

    expected = _outcome(call(torch, torch.nn.functional, torch.func.vmap))
    assert expected[0] == "RuntimeError"
    assert _outcome(call(minigrad, F, vmap)) == expected


def test_vmap_batch_norm_with_no_running_mean_refuses_an_unbatched_running_var_as_torch():
    def call(lib, f, vmap_):
        x, var = _x(lib, (3, 4, 2, 5)), lib.ones(2)
        return lambda: vmap_(lambda xi: f.batch_norm(xi, None, var, training=True))(x)

    expected = _outcome(call(torch, torch.nn.functional, torch.func.vmap))
    assert expected[0] == "RuntimeError"
    assert _outcome(call(minigrad, F, vmap)) == expected
