"""Focused tests for what the scripts of test_dl_scripts13.py found minigrad doing unlike PyTorch."""
import warnings

import numpy as np
import pytest

import minigrad
import nn as mnn


def _error(fn, lib, nn):
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fn(lib, nn)
    except Exception as e:  # noqa: BLE001 (the type and text are what is compared)
        return type(e).__name__, str(e)
    return None


def _same_error(torch, fn):
    theirs = _error(fn, torch, torch.nn)
    assert theirs is not None
    assert _error(fn, minigrad, mnn) == theirs


X = np.random.default_rng(13).standard_normal((3, 4))


@pytest.mark.parametrize("target", [[0, 5, 1], [0, -1, 1], [4]])
@pytest.mark.parametrize("p", [1, 2])
def test_multi_margin_loss_target_out_of_range(torch, target, p):
    def fn(lib, nn):
        x = lib.tensor(X[:len(target)])
        return nn.functional.multi_margin_loss(x, lib.tensor(target), p=p)
    _same_error(torch, fn)


def test_multi_margin_loss_weight_of_two_dims(torch):
    _same_error(torch, lambda lib, nn: nn.functional.multi_margin_loss(lib.tensor(X), lib.tensor([0, 1, 1]),
                                                                       weight=lib.tensor(X)))
    _same_error(torch, lambda lib, nn: nn.MultiMarginLoss(weight=lib.ones(2, 4)))


def test_multi_margin_loss_weight_of_the_wrong_size(torch):
    _same_error(torch, lambda lib, nn: nn.MultiMarginLoss(weight=lib.ones(3, dtype=lib.float64))(
        lib.tensor(X), lib.tensor([0, 1, 1])))


@pytest.mark.parametrize("name", ["MultiLabelSoftMarginLoss", "GaussianNLLLoss", "MSELoss", "PoissonNLLLoss",
                                  "HuberLoss", "MultiMarginLoss", "CosineEmbeddingLoss"])
def test_a_loss_module_with_a_bad_reduction_is_built_and_its_call_says_so(torch, name):
    ours, theirs = getattr(mnn, name)(reduction="avg"), getattr(torch.nn, name)(reduction="avg")
    assert ours.reduction == theirs.reduction == "avg"

    def fn(lib, nn):
        x = lib.tensor(X)
        extra = {"MultiMarginLoss": (lib.tensor([0, 1, 1]),), "GaussianNLLLoss": (x, lib.ones_like(x)),
                 "CosineEmbeddingLoss": (x, lib.tensor([1.0, -1.0, 1.0]))}.get(name, (x.sigmoid(),))
        return (theirs if lib is torch else ours)(x, *extra)
    _same_error(torch, fn)
