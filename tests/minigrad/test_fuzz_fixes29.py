"""Differences the fuzzers found at seeds 45-48, each reduced to a small case and compared with PyTorch."""
import copy

import pytest

import minigrad
import nn

torch = pytest.importorskip("torch")


def outcome(fn):
    """fn()'s value as a list, or its error as (type, text) in minigrad's words."""
    try:
        out = fn()
    except Exception as e:  # (the error itself is what is compared)
        return type(e).__name__, str(e).replace("torch.", "minigrad.")
    return [t.tolist() for t in out] if isinstance(out, tuple) else out.tolist()


@pytest.mark.parametrize("shape", [(0,), (2, 0), (0, 3), (3,), (2, 3), ()])
@pytest.mark.parametrize("name, dim", [("median", None), ("nanmedian", None), ("median", 0), ("nanmedian", 0),
                                       ("median", -1), ("kthvalue", 0), ("kthvalue", -1)])
def test_bool_median_and_kthvalue_check_in_pytorch_order(shape, name, dim):
    # an empty reduction dim is refused before the bool dtype; the whole tensor's median of nothing is NaN
    # (True as a bool); kthvalue refuses bool tensors (except 0-d ones)
    def run(lib):
        x = lib.zeros(shape, dtype=lib.bool)
        if name == "kthvalue":
            return x.kthvalue(1, dim)
        return getattr(x, name)() if dim is None else getattr(x, name)(dim)
    assert outcome(lambda: run(minigrad)) == outcome(lambda: run(torch))


def _buffer_after(lib, mod, convert, grad_mode):
    """A BatchNorm1d with a Parameter registered as a buffer (it requires grad), after a conversion: the buffer's
    class, requires_grad, leaf-ness and node name, then a deepcopy's outcome."""
    bn = mod.BatchNorm1d(2, affine=False)
    bn.register_buffer("fresh", mod.Parameter(lib.ones(2)), persistent=False)
    with lib.set_grad_enabled(grad_mode):
        convert(lib, bn)
    b = bn.fresh
    node = None if b.grad_fn is None else type(b.grad_fn).__name__
    return [type(b).__name__, b.requires_grad, b.is_leaf, node, str(b.dtype).replace("torch.", "minigrad."),
            outcome(lambda: (lib.tensor(copy.deepcopy(bn).fresh.shape),))]


CONVERSIONS = {"double": lambda lib, m: m.double(), "float": lambda lib, m: m.float(),
               "to64": lambda lib, m: m.to(lib.float64), "type64": lambda lib, m: m.type(lib.float64),
               "half": lambda lib, m: m.half(), "to_empty": lambda lib, m: m.to_empty(device="cpu")}


@pytest.mark.parametrize("grad_mode", [True, False])
@pytest.mark.parametrize("how", sorted(CONVERSIONS))
def test_a_buffer_that_requires_grad_is_converted_outside_no_grad(how, grad_mode):
    # PyTorch's Module._apply converts buffers without no_grad: one that requires grad becomes the conversion's
    # output (a ToCopyBackward0 non-leaf, which deepcopy refuses with its text) where the dtype changes
    ours = _buffer_after(minigrad, nn, CONVERSIONS[how], grad_mode)
    assert ours == _buffer_after(torch, torch.nn, CONVERSIONS[how], grad_mode)
