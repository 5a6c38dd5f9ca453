"""Focused tests for what the scripts16 tutorials found, each against PyTorch."""
import io
import warnings

import pytest

import minigrad
import nn.functional as F

torch = pytest.importorskip("torch")


def _warned(call):
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        call()
    return [(x.category.__name__, str(x.message)) for x in w]


@pytest.mark.parametrize("name", ["script", "trace"])
def test_jit_script_and_trace_warn_deprecation_as_pytorch(name):
    def fn(lib):
        m = lib.nn.Linear(2, 2)
        return getattr(lib.jit, name)(m) if name == "script" else lib.jit.trace(lambda x: x, (lib.ones(1),))

    ours = _warned(lambda: fn(minigrad))
    # (PyTorch's words, less its `torch.export`, which minigrad has not)
    theirs = [(c, t.replace(" or `torch.export`", "").replace("torch", "minigrad")) for c, t in _warned(lambda: fn(torch))]
    assert ours == theirs[:1] and ours[0][0] == "DeprecationWarning"


def test_jit_warning_is_hidden_by_default_filters():
    # attributed to minigrad/jit.py, as PyTorch's to torch/jit: Python's default filters show it only from __main__
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        minigrad.jit.script(minigrad.nn.Linear(2, 2))
    assert w[0].filename.endswith("jit.py")


@pytest.mark.parametrize("size", ["tuple", "Size", "list"])
def test_affine_grid_shape_error_names_sizes_as_pytorch(size):
    def message(lib, F):
        s = {"tuple": (2, 1, 4, 4), "Size": lib.zeros(2, 1, 4, 4).size(), "list": [2, 1, 4, 4]}[size]
        with pytest.raises(ValueError) as e:
            F.affine_grid(lib.zeros(2, 3, 3), s, align_corners=False)
        return str(e.value)

    assert message(minigrad, F) == message(torch, torch.nn.functional).replace("torch", "minigrad")


def test_saving_a_local_class_is_refused_as_pytorch():
    def refusal(lib):
        class Local(lib.nn.Module):
            def forward(self, x):
                return x

        def helper():
            pass

        out = []
        for obj in (Local(), {"fn": helper}, [lambda x: x]):
            with pytest.raises(Exception) as e:
                lib.save(obj, io.BytesIO())
            out.append((type(e.value).__name__, str(e.value)))
        return out

    assert refusal(minigrad) == refusal(torch)
