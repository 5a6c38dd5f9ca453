"""PyTorch's answers where the mistakes tables left gaps: optimizers over named_parameters(), Module.to with a
device index, the binary operators' texts, method argument counts, function-form dim positions, overload texts
and the layers built on shared bases. Each is compared with torch 2.13's own outcome."""

import numpy as np
import pytest

import minigrad as mg
from tests.nn.test_mistakes_vs_torch import assert_answered_as_pytorch

torch = pytest.importorskip("torch")

OPTIMIZERS = ["SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "Adadelta", "Adamax", "NAdam", "RAdam", "Rprop", "ASGD",
              "Adafactor", "Muon"]


def _model(L):  # the same weights in both libraries
    m = L.nn.Linear(4, 3)
    with L.no_grad():
        m.weight.copy_(L.tensor(np.linspace(-0.5, 0.5, 12, dtype=np.float32).reshape(3, 4)))
        m.bias.copy_(L.tensor(np.array([0.1, -0.2, 0.3], dtype=np.float32)))
    return m


def _run(L, name, named, steps=3):
    model = _model(L)
    params = model.named_parameters() if named else model.parameters()
    kw = {"lr": 0.01} if name != "Muon" else {"lr": 0.01, "adjust_lr_fn": "original"}
    if name == "Muon":  # (Muon takes 2-d parameters only)
        params = [(n, p) for n, p in model.named_parameters() if p.ndim == 2] if named else [model.weight]
    opt = getattr(L.optim, name)(params, **kw)
    x = L.tensor(np.linspace(-1, 1, 8, dtype=np.float32).reshape(2, 4))
    for _ in range(steps):
        opt.zero_grad()
        model(x).square().sum().backward()
        opt.step()
    return opt, model


@pytest.mark.parametrize("name", OPTIMIZERS)
def test_optimizer_over_named_parameters_steps_and_saves_names_as_pytorch(name):
    opt, model = _run(mg, name, named=True)
    topt, tmodel = _run(torch, name, named=True)
    plain, pmodel = _run(mg, name, named=False)
    assert "param_names" not in plain.param_groups[0]
    for a, b, c in zip(model.parameters(), tmodel.parameters(), pmodel.parameters()):
        np.testing.assert_array_equal(a.detach().numpy(), c.detach().numpy())  # names change nothing in a step
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-5, atol=1e-6)
    saved, tsaved = opt.state_dict()["param_groups"], topt.state_dict()["param_groups"]
    assert [g["param_names"] for g in saved] == [g["param_names"] for g in tsaved]
    assert [list(g) for g in saved] == [list(g) for g in tsaved]  # the keys and their order
    assert opt.param_groups[0]["params"][0] is dict(model.named_parameters())[saved[0]["param_names"][0]]


def _groups(L):
    m = _model(L)
    return L.optim.SGD([{"params": [("w", m.weight)]}, {"params": [("b", m.bias)], "lr": 0.5}], lr=0.1)


def _load_keeps_own_names(L):
    m = _model(L)
    opt = L.optim.SGD(m.named_parameters(), lr=0.1)
    saved = L.optim.SGD(_model(L).parameters(), lr=0.2).state_dict()
    opt.load_state_dict(saved)
    return opt.param_groups[0]["param_names"], opt.param_groups[0]["lr"]


def _load_takes_saved_names(L):
    saved = L.optim.SGD([("a", _model(L).weight), ("b", _model(L).bias)], lr=0.1).state_dict()
    opt = L.optim.SGD(_model(L).parameters(), lr=0.1)
    opt.load_state_dict(saved)
    return opt.param_groups[0]["param_names"]


def _add_unnamed_group(L):
    m = _model(L)
    L.optim.SGD([("w", m.weight)], lr=0.1).add_param_group({"params": [m.bias]})


def _add_named_group(L):
    m = _model(L)
    L.optim.SGD([m.weight], lr=0.1).add_param_group({"params": [("b", m.bias)]})


CASES = {
    "named_groups": lambda L: [(g["param_names"], g["lr"], list(g)) for g in _groups(L).param_groups],
    "named_groups_state_dict": lambda L: _groups(L).state_dict()["param_groups"],
    "named_some_missing": lambda L: L.optim.Adam([("w", _model(L).weight), _model(L).bias]),
    "named_and_unnamed_groups": lambda L: L.optim.SGD([{"params": [("w", _model(L).weight)]},
                                                       {"params": [_model(L).bias]}], lr=0.1),
    "add_unnamed_group": _add_unnamed_group,
    "add_named_group": _add_named_group,
    "load_keeps_own_names": _load_keeps_own_names,
    "load_takes_saved_names": _load_takes_saved_names,
    "named_repr": lambda L: repr(L.optim.SGD(_model(L).named_parameters(), lr=0.1)),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_answered_as_pytorch(name):
    assert_answered_as_pytorch(CASES[name], None, False)


# --- layers built on shared bases: Python's argument errors name the class PyTorch's do
LAYERS = ["Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d", "BatchNorm1d",
          "BatchNorm2d", "BatchNorm3d", "LazyBatchNorm1d", "LazyInstanceNorm2d", "Dropout", "Dropout2d",
          "AlphaDropout", "MaxPool2d", "AvgPool3d", "AdaptiveAvgPool1d", "AdaptiveAvgPool3d", "AdaptiveMaxPool2d",
          "MaxUnpool2d", "LPPool2d", "ReflectionPad2d", "ReplicationPad1d", "CircularPad3d", "ConstantPad2d",
          "ZeroPad2d", "Tanh", "Softmax2d", "Hardshrink", "Softshrink", "ELU", "LeakyReLU", "MarginRankingLoss",
          "CosineEmbeddingLoss", "HingeEmbeddingLoss"]


@pytest.mark.parametrize("layer", LAYERS)
def test_unknown_keyword_names_the_layer_as_pytorch(layer):
    assert_answered_as_pytorch(lambda L: getattr(L.nn, layer)(bad_keyword=1), None, False)


def test_repeated_keyword_is_pythons_text():
    assert_answered_as_pytorch(lambda L: L.nn.ELU(1.0, alpha=2.0), None, False)


def test_conv_still_builds_and_subclasses_still_chain():
    class Mine(mg.nn.Conv2d):
        def __init__(self):
            super().__init__(1, 2, 3, padding=1)

    assert tuple(Mine().weight.shape) == (2, 1, 3, 3)
    assert tuple(mg.nn.Conv2d(1, 2, 3)(mg.ones(1, 1, 5, 5)).shape) == (1, 2, 3, 3)


# --- a bad operand of a binary operator: Python's text, as PyTorch's operators return NotImplemented
OPERANDS = {
    "add_list": lambda L: L.ones(2) + [1.0, 2.0],
    "add_none": lambda L: L.ones(2) + None,
    "radd_none": lambda L: None + L.ones(2),
    "sub_none": lambda L: L.ones(2) - None,
    "rsub_list": lambda L: [1.0] - L.ones(2),
    "mul_none": lambda L: L.ones(2) * None,
    "mul_str": lambda L: L.ones(2) * "a",
    "rmul_list": lambda L: [1.0, 2.0] * L.ones(2),
    "div_none": lambda L: L.ones(2) / None,
    "rdiv_none": lambda L: None / L.ones(2),
    "matmul_list": lambda L: L.ones(2, 2) @ [[1.0, 2.0], [3.0, 4.0]],
    "rmatmul_list": lambda L: [1.0, 2.0] @ L.ones(2, 2),
    "add_number_ok": lambda L: (L.ones(2) + 1).tolist(),
}


@pytest.mark.parametrize("name", sorted(OPERANDS))
def test_operator_operand_answered_as_pytorch(name):
    assert_answered_as_pytorch(OPERANDS[name], None, False)
