"""Differences from PyTorch found by the scripts of test_dl_scripts6.py, each checked on its own against PyTorch."""
import numpy as np
import pytest

import minigrad
import nn.functional as F


def error_of(fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001 (the type and text are what is compared)
        return type(e).__name__, str(e).split("\n")[0].replace("torch.", "minigrad.")
    return None


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])  # (no bfloat16 arrays here)
@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
@pytest.mark.parametrize("padding_idx", [None, 1])
@pytest.mark.parametrize("ids", [[1, 9, -1, 7], [[-3, 1]]])
def test_embedding_bag_out_of_range_id_text(torch, dtype, mode, padding_idx, ids):
    # PyTorch's CPU kernel for 'sum'/'mean' of 32- and 16-bit floats without padding_idx words it its own way
    weight = np.random.default_rng(0).standard_normal((6, 3))

    def call(lib, funcs):
        offsets = lib.tensor([0, 2]) if len(ids) > 1 else None
        w = lib.tensor(weight).to(getattr(lib, dtype))
        return lambda: funcs.embedding_bag(lib.tensor(ids), w, offsets, mode=mode, padding_idx=padding_idx)

    theirs = error_of(call(torch, torch.nn.functional))
    assert theirs is not None
    assert error_of(call(minigrad, F)) == theirs
