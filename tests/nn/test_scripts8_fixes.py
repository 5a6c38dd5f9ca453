"""Differences from PyTorch found by the scripts of test_dl_scripts8.py, each checked on its own against PyTorch."""
import numpy as np
import pytest

import minigrad


def outcome(lib, call):
    """call(lib)'s error (type, text) or its values and dtype."""
    try:
        out = call(lib)
    except Exception as e:  # noqa: BLE001 (the type and text are what is compared)
        return type(e).__name__, str(e)
    return out.numpy().tolist(), str(out.dtype).split(".")[-1]


@pytest.mark.parametrize("name", ["triu_indices", "tril_indices"])
@pytest.mark.parametrize("args, kw", [
    ((-1, 3), {}), ((3, -2), {}), ((-1, -2), {}), ((0, 3), {}), ((4, 3, -1), {}), ((3, 4), dict(offset=5)),
    ((3.0, 3), {}), ((3, 2.5), {}), ((3, 3), dict(offset=1.5)), ((True, 3), {}), ((3, None), {}),
    ((np.int64(3), 3), {}), ((3, 3), dict(offset=True)), ((-1, 3), dict(dtype="float64")),
    ((3, 3), dict(dtype="int32")),
])
def test_triangle_indices_check_their_arguments(torch, name, args, kw):
    def call(lib):
        kwargs = {k: getattr(lib, v) if k == "dtype" else v for k, v in kw.items()}
        return getattr(lib, name)(*args, **kwargs)
    assert outcome(minigrad, call) == outcome(torch, call)
