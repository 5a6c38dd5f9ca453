"""Review of the regression losses' refusals of integer and bool inputs: every pairing of dtypes as PyTorch."""
import numpy as np
import pytest

import minigrad
import nn.functional as F

torch = pytest.importorskip("torch")

_INTS = ["int64", "int32", "uint8", "bool"]
_ALL = _INTS + ["float32", "float64"]


def _outcome(lib, funcs, name, a, b, **kw):
    x, y = (lib.tensor(np.array(v).astype(dt)) for v, dt in zip(([1, 0, 1], [1, 1, 0]), (a, b)))
    try:
        r = getattr(funcs, name)(x, y, **kw)
        return "ok", str(r.dtype).split(".")[-1], r.detach().numpy().tolist()
    except Exception as e:  # noqa: BLE001 (the type and text are what is compared)
        return type(e).__name__, str(e).split("\n")[0]


@pytest.mark.parametrize("target", _ALL)
@pytest.mark.parametrize("input", _INTS)
@pytest.mark.parametrize("name", ["huber_loss", "soft_margin_loss", "binary_cross_entropy_with_logits",
                                  "binary_cross_entropy", "mse_loss", "smooth_l1_loss", "l1_loss"])
def test_integer_input_against_any_target_dtype_as_pytorch(name, input, target):
    assert _outcome(minigrad, F, name, input, target) == _outcome(torch, torch.nn.functional, name, input, target)
