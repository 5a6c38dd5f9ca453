"""Small differences from PyTorch 2.13 (flip's dims, attention's head check, integer activations, sdp_kernel's
value, Module.bfloat16, complex buffers cast to real), each checked against torch."""
import warnings

import numpy as np
import pytest

import minigrad
import minigrad.nn.functional as F

torch = pytest.importorskip("torch")


def _raised(fn):
    with pytest.raises(Exception) as info:
        fn()
    return type(info.value), str(info.value)


@pytest.mark.parametrize("call", [
    lambda T, x: T.flip(x, 0),
    lambda T, x: T.flip(x),
    lambda T, x: x.flip(dims=0),
    lambda T, x: T.flip(x, [0.5]),
    lambda T, x: T.flip(x, (0, 0.5)),
    lambda T, x: x.flip(0, 0.5),
    lambda T, x: x.flip(0.5, 0),
    lambda T, x: x.flip(0.5),
    lambda T, x: x.flip([0.5]),
])
def test_flip_refuses_an_int_dims_as_torch(call):
    x = np.arange(6.0).reshape(2, 3)
    assert _raised(lambda: call(minigrad, minigrad.tensor(x))) == _raised(lambda: call(torch, torch.tensor(x)))


@pytest.mark.parametrize("call", [
    lambda T, x: x.flip(0), lambda T, x: x.flip(0, 1), lambda T, x: x.flip([1]), lambda T, x: x.flip(dims=(0,)),
    lambda T, x: T.flip(x, (0,)), lambda T, x: T.flip(x, [0, 1]), lambda T, x: T.Tensor.flip(x, 1),
    lambda T, x: T.fliplr(x), lambda T, x: T.flipud(x),
])
def test_flip_forms_torch_takes(call):
    x = np.arange(6.0).reshape(2, 3)
    np.testing.assert_array_equal(call(minigrad, minigrad.tensor(x)).numpy(), call(torch, torch.tensor(x)).numpy())


@pytest.mark.parametrize("heads", [(4, 2, 2), (2, 4, 4), (4, 4, 2), (4, 2, 4)])
@pytest.mark.parametrize("batch", [(1,), ()])
def test_sdpa_heads_that_do_not_broadcast_raise_as_torch(heads, batch):
    rng = np.random.default_rng(0)
    q, k, v = (rng.standard_normal(batch + (h, 3, 8)).astype(np.float32) for h in heads)
    ours = _raised(lambda: F.scaled_dot_product_attention(*map(minigrad.tensor, (q, k, v))))
    theirs = _raised(lambda: torch.nn.functional.scaled_dot_product_attention(*map(torch.tensor, (q, k, v))))
    assert ours == theirs


def test_sdpa_gqa_heads_that_do_not_divide_raise_as_torch():
    q, k = np.zeros((1, 4, 3, 8), np.float32), np.zeros((1, 3, 3, 8), np.float32)
    ours = _raised(lambda: F.scaled_dot_product_attention(*map(minigrad.tensor, (q, k, k)), enable_gqa=True))
    theirs = _raised(lambda: torch.nn.functional.scaled_dot_product_attention(*map(torch.tensor, (q, k, k)),
                                                                                enable_gqa=True))
    assert ours == theirs


@pytest.mark.parametrize("dtype", ["int64", "int32", "uint8", "bool"])
def test_logsigmoid_of_integers_raises_as_torch(dtype):
    x = np.array([1, 0]).astype(dtype)
    assert _raised(lambda: F.logsigmoid(minigrad.tensor(x))) == \
        _raised(lambda: torch.nn.functional.logsigmoid(torch.tensor(x)))


def test_sdp_kernel_enter_returns_torchs_value():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        with minigrad.backends.cuda.sdp_kernel(enable_flash=False) as ours:
            pass
        with torch.backends.cuda.sdp_kernel(enable_flash=False) as theirs:
            pass
    assert ours == theirs and type(ours) is type(theirs)


def test_module_bfloat16_refuses_in_one_line():
    assert torch.nn.Linear(2, 2).bfloat16().weight.dtype == torch.bfloat16  # (torch has the method)
    with pytest.raises(TypeError) as info:
        minigrad.nn.Linear(2, 2).bfloat16()
    assert "bfloat16" in str(info.value) and "\n" not in str(info.value)
    empty = minigrad.nn.Module()
    assert empty.bfloat16() is empty  # (nothing floating to convert, as torch's returns the module)


# torch says its complex-to-real warning once a process (whichever cast comes first, in any test): its side
# of these two runs in a fresh interpreter, minigrad's with its once-flag reset
_COMPLEX_CASTS = {
    "module_to": "m = T.nn.Module(); m.register_buffer('c', T.tensor([1 + 2j, 3 - 1j])); m.to(T.float32); out = m.c",
    "copy_": "out = T.zeros(2).copy_(T.tensor([1 + 2j, -3j]))",
}
_RUN_CAST = """
import json, sys, warnings
import {lib} as T
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    {code}
print(json.dumps([[[w.category.__name__, str(w.message).split(" (Triggered")[0]] for w in caught], out.tolist(),
                  str(out.dtype).split(".")[-1]]))
"""


def _cast_in_fresh_process(lib, code):
    import json
    import os
    import subprocess
    import sys
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    run = subprocess.run([sys.executable, "-c", _RUN_CAST.format(lib=lib, code=code)], capture_output=True, text=True,
                         env=env, check=True)
    return json.loads(run.stdout.splitlines()[-1])


@pytest.mark.parametrize("case", sorted(_COMPLEX_CASTS))
def test_complex_to_real_warns_as_torch(monkeypatch, case):
    monkeypatch.setattr(minigrad._warn_once, "_said_once", set())
    scope = {"T": minigrad}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        exec(_COMPLEX_CASTS[case], scope)
    ours = [[[w.category.__name__, str(w.message)] for w in caught], scope["out"].tolist(),
            str(scope["out"].dtype).split(".")[-1]]
    theirs = _cast_in_fresh_process("torch", _COMPLEX_CASTS[case])
    assert ours == theirs
    assert theirs[0] == [["UserWarning", "Casting complex values to real discards the imaginary part"]]


def _reentrant(T, fn):
    x = T.tensor([1.0, -2.0], requires_grad=True)
    return x, T.utils.checkpoint.checkpoint(fn, x, use_reentrant=True)


def test_reentrant_checkpoint_refuses_backward_with_inputs_as_torch():
    def error(T):
        x, y = _reentrant(T, lambda t: (t * 2).tanh())
        with pytest.raises(RuntimeError) as info:
            y.sum().backward(inputs=[x])
        return str(info.value), x.grad
    ours, theirs = error(minigrad), error(torch)
    assert ours[0] == theirs[0] and ours[1] is None and theirs[1] is None


def test_reentrant_checkpoint_node_and_gradients_as_torch():
    got = {}
    for T in (torch, minigrad):
        x, (a, b) = _reentrant(T, lambda t: ((t * 2).tanh(), t * 3))
        (a.sum() + b.pow(2).sum()).backward()
        z = a * 1  # (grad not through the checkpoint node is allowed)
        (gz,) = T.autograd.grad(z.sum(), z)
        got[T] = (type(a.grad_fn).__name__, type(b.grad_fn).__name__, x.grad.tolist(), gz.tolist(),
                  T.autograd._is_checkpoint_valid())
    assert got[minigrad][:2] == got[torch][:2] == ("CheckpointFunctionBackward",) * 2
    np.testing.assert_allclose(got[minigrad][2], got[torch][2], rtol=1e-6)
    assert got[minigrad][3:] == got[torch][3:]


@pytest.mark.parametrize("with_bias", [True, False])
@pytest.mark.parametrize("shape", [(4,), (2, 4)])
def test_linear_nodes_values_and_gradients_as_torch(shape, with_bias):
    rng = np.random.default_rng(1)
    arrays = [rng.standard_normal(shape), rng.standard_normal((3, 4))] + ([rng.standard_normal(3)] if with_bias else [])
    got = {}
    for T in (torch, minigrad):
        ts = [T.tensor(a, requires_grad=True) for a in arrays]
        y = T.nn.functional.linear(*ts)
        (y * T.tensor(np.arange(1.0, 4.0))).sum().backward()
        got[T] = (type(y.grad_fn).__name__, tuple(y.shape), y.detach().numpy(), [t.grad.numpy() for t in ts])
    assert got[minigrad][:2] == got[torch][:2]
    for a, b in zip([got[minigrad][2]] + got[minigrad][3], [got[torch][2]] + got[torch][3]):
        np.testing.assert_allclose(a, b, rtol=1e-12)



def test_load_state_dict_takes_torchs_state_dict_as_it_is():
    """A torch state_dict's tensors load into a minigrad model directly (copy_ reads their arrays): real and
    complex-free, float32 and float64."""
    for dtype in ("float32", "float64"):
        t = torch.nn.GRU(3, 4, dtype=getattr(torch, dtype))
        m = minigrad.nn.GRU(3, 4, dtype=getattr(minigrad, dtype))
        m.load_state_dict(t.state_dict())
        for (name, p), (tname, tp) in zip(m.named_parameters(), t.named_parameters()):
            assert name == tname
            np.testing.assert_array_equal(p.detach().numpy(), tp.detach().numpy())
