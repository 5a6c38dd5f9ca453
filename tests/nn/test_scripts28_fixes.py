"""Fixes found by the scripts of test_dl_scripts28.py (channels_last conversions, layouts kept by clone and
deepcopy), each checked against PyTorch."""
import numpy as np
import pytest

import minigrad

CASES = {
    "to": lambda lib, x: x.to(memory_format=lib.channels_last),
    "to_dtype": lambda lib, x: x.to(lib.float32, memory_format=lib.channels_last),
    "to_contiguous_format": lambda lib, x: x.to(memory_format=lib.channels_last).to(memory_format=lib.contiguous_format),
    "to_again": lambda lib, x: x.to(memory_format=lib.channels_last).to(memory_format=lib.channels_last),
    "contiguous": lambda lib, x: x.contiguous(memory_format=lib.channels_last),
    "contiguous_then_plain": lambda lib, x: x.contiguous(memory_format=lib.channels_last).contiguous(),
    "clone": lambda lib, x: x.clone(memory_format=lib.channels_last),
    "float": lambda lib, x: x.float(memory_format=lib.channels_last),
    "cast_keeps_layout": lambda lib, x: x.to(memory_format=lib.channels_last).to(lib.float32),
    "3d": lambda lib, x: x[..., None].contiguous(memory_format=lib.channels_last_3d),
    "3d_to": lambda lib, x: x[..., None].to(memory_format=lib.channels_last_3d),
    "n_c_1_1": lambda lib, x: x[:, :, :1, :1].contiguous().to(memory_format=lib.channels_last),
}


def outcome(lib, case, shape=(2, 3, 4, 5)):
    x = lib.tensor(np.arange(np.prod(shape), dtype=np.float64).reshape(shape), requires_grad=True)
    try:
        y = CASES[case](lib, x)
    except Exception as e:  # noqa: BLE001 (the type and text are what is compared)
        return type(e).__name__, str(e).split("\n")[0]
    fn = None if y.grad_fn is None else type(y.grad_fn).__name__
    facts = (tuple(y.stride()), y.is_contiguous(), fn, str(y.dtype).split(".")[-1],
             y.is_contiguous(memory_format=lib.channels_last) if y.dim() == 4 else None)
    (y * lib.tensor(np.arange(y.numel(), dtype=np.float64).reshape(tuple(y.shape)))).sum().backward()
    return facts, y.detach().numpy().tolist(), tuple(x.grad.stride()), x.grad.numpy().tolist()


@pytest.mark.parametrize("case", list(CASES))
def test_channels_last_layouts_as_pytorch(torch, case):
    assert outcome(minigrad, case) == outcome(torch, case)


@pytest.mark.parametrize("shape", [(2, 3, 4), (2, 3, 4, 5, 1)])
@pytest.mark.parametrize("case", ["to", "contiguous", "clone"])
def test_channels_last_rank_refusals(torch, case, shape):
    assert outcome(minigrad, case, shape) == outcome(torch, case, shape)


def formats(lib, make, fmt):
    try:
        return make(lib, fmt)
    except Exception as e:  # noqa: BLE001
        return type(e).__name__, str(e).replace("torch.", "minigrad.")


BAD_FORMATS = {
    "to": lambda lib, f: lib.ones(2, 3, 4, 5).to(memory_format=f),
    "to_dtype": lambda lib, f: lib.ones(2, 3, 4, 5).to(lib.float64, memory_format=f),
    "contiguous": lambda lib, f: lib.ones(2, 3, 4, 5).contiguous(memory_format=f),
    "clone": lambda lib, f: lib.ones(2, 3, 4, 5).clone(memory_format=f),
    "module_to": lambda lib, f: lib.nn.Conv2d(2, 2, 1).to(memory_format=f),
    "module_to_dtype": lambda lib, f: lib.nn.Conv2d(2, 2, 1).to(lib.float64, memory_format=f),
}


@pytest.mark.parametrize("case", list(BAD_FORMATS))
def test_memory_format_must_be_a_memory_format(torch, case):
    ours = formats(minigrad, BAD_FORMATS[case], "channels_last")
    theirs = formats(torch, BAD_FORMATS[case], "channels_last")
    assert ours == theirs and ours[0] == "TypeError"


def module_layouts(lib, fmt_name, dtype):
    model = lib.nn.Sequential(lib.nn.Conv2d(3, 4, 3), lib.nn.BatchNorm2d(4), lib.nn.Conv2d(4, 1, 1),
                              lib.nn.Linear(2, 2))
    model[0].weight.grad = lib.ones(4, 3, 3, 3)
    fmt = getattr(lib, fmt_name)
    try:
        returned = model.to(memory_format=fmt) if dtype is None else model.to(getattr(lib, dtype), memory_format=fmt)
    except Exception as e:  # noqa: BLE001
        return type(e).__name__, str(e)
    return (returned is model, [(n, tuple(t.stride()), str(t.dtype).split(".")[-1])
                                for n, t in model.state_dict().items()], tuple(model[0].weight.grad.stride()))


@pytest.mark.parametrize("dtype", [None, "float32"])
@pytest.mark.parametrize("fmt", ["channels_last", "contiguous_format", "preserve_format", "channels_last_3d"])
def test_module_to_memory_format(torch, fmt, dtype):
    assert module_layouts(minigrad, fmt, dtype) == module_layouts(torch, fmt, dtype)


def test_module_to_channels_last_refuses_a_5d_weight(torch):
    ours = formats(minigrad, lambda lib, f: lib.nn.Conv3d(2, 2, 1).to(memory_format=getattr(lib, f)), "channels_last")
    theirs = formats(torch, lambda lib, f: lib.nn.Conv3d(2, 2, 1).to(memory_format=getattr(lib, f)), "channels_last")
    assert ours == theirs == ("RuntimeError", "required rank 4 tensor to use channels_last format")


def test_channels_last_training_step_matches_row_major(torch):
    """A conv net converted to channels_last, on a channels_last input, takes the same SGD step."""
    def step(lib, convert):
        lib.manual_seed(0)
        net = lib.nn.Sequential(lib.nn.Conv2d(2, 3, 3, padding=1), lib.nn.BatchNorm2d(3), lib.nn.ReLU(),
                                lib.nn.Conv2d(3, 2, 2, stride=2)).double()
        net.load_state_dict({k: lib.tensor(v) for k, v in state.items()})
        x = lib.tensor(np.random.default_rng(3).standard_normal((2, 2, 4, 4)))
        if convert:
            net.to(memory_format=lib.channels_last)
            x = x.contiguous(memory_format=lib.channels_last)
        opt = lib.optim.SGD(net.parameters(), lr=0.1, momentum=0.9)
        for _ in range(2):
            loss = net(x).square().mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
        return [p.detach().numpy() for p in net.parameters()] + [net(x).detach().numpy()]

    torch.manual_seed(0)
    state = {k: v.double().numpy() for k, v in torch.nn.Sequential(
        torch.nn.Conv2d(2, 3, 3, padding=1), torch.nn.BatchNorm2d(3), torch.nn.ReLU(),
        torch.nn.Conv2d(3, 2, 2, stride=2)).state_dict().items()}
    theirs = step(torch, True)
    for ours in (step(minigrad, True), step(minigrad, False)):
        for a, b in zip(ours, theirs):
            np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


PRESERVED = {
    "transposed": lambda lib: lib.ones(3, 4).t(),
    "transposed_sliced": lambda lib: lib.ones(3, 4).t()[::2],
    "channels_last": lambda lib: lib.ones(2, 3, 4, 5).contiguous(memory_format=lib.channels_last),
    "channels_last_sliced": lambda lib: lib.ones(2, 3, 4, 5).contiguous(memory_format=lib.channels_last)[:, :, ::2],
    "permuted": lambda lib: lib.ones(2, 3, 4, 5).permute(0, 2, 3, 1),
    "permuted_sliced": lambda lib: lib.ones(2, 3, 4, 5).permute(0, 2, 3, 1)[:, ::2],
    "expanded": lambda lib: lib.ones(3, 1).expand(3, 4),
    "rows": lambda lib: lib.ones(4, 3)[::2],
}


@pytest.mark.parametrize("case", list(PRESERVED))
def test_clone_preserves_the_layout_as_pytorch(torch, case):
    """clone()'s default preserve_format keeps the order of the strides (a dense tensor's exactly);
    contiguous_format is row-major."""
    def layouts(lib):
        x = PRESERVED[case](lib).detach().requires_grad_()
        y = x.clone()
        return (tuple(y.stride()), tuple(lib.clone(x).stride()), tuple(x.clone(memory_format=lib.preserve_format).stride()),
                tuple(x.clone(memory_format=lib.contiguous_format).stride()), type(y.grad_fn).__name__)

    assert layouts(minigrad) == layouts(torch)


def test_deepcopied_channels_last_module_keeps_its_layout_not_its_grads(torch):
    """A model EMA deepcopied from a trained channels_last model (timm's) has channels_last parameters and no
    gradients (a Parameter's deepcopy leaves .grad behind; a plain tensor's takes it along)."""
    import copy

    def layouts(lib):
        model = lib.nn.Sequential(lib.nn.Conv2d(2, 3, 3), lib.nn.BatchNorm2d(3)).to(memory_format=lib.channels_last)
        model(lib.ones(2, 2, 4, 4)).sum().backward()
        twin = copy.deepcopy(model)
        x = lib.ones(2, requires_grad=True)
        x.grad = lib.full((2,), 3.0)
        return ([(n, tuple(t.stride())) for n, t in twin.state_dict().items()],
                [p.grad is None for p in twin.parameters()], [p.grad is None for p in model.parameters()],
                copy.deepcopy(x).grad.tolist(), copy.deepcopy(lib.nn.Parameter(x.detach())).grad)

    assert layouts(minigrad) == layouts(torch)
