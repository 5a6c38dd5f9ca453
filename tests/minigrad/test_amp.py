"""minigrad.amp (GradScaler, autocast), minigrad.cuda.amp and minigrad.cpu.amp, as nanoGPT uses them: a
disabled scaler changes nothing, one enabled without a GPU warns once and disables itself, and the dynamic
loss scaling (scale, unscale in place, skip on inf/NaN, backoff and growth) against PyTorch's CPU GradScaler,
which scales for real as minigrad's "cpu" scaler does."""
import pickle
import warnings

import numpy as np
import pytest

import minigrad
import minigrad.amp
import minigrad.cuda
import nn
from tests.conftest import CUDA_AVAILABLE

RNG = np.random.default_rng(5)
X, Y = RNG.standard_normal((8, 3)), RNG.standard_normal((8, 1))
W0, B0 = RNG.standard_normal((1, 3)), RNG.standard_normal(1)


def model_and_optimizer(lib, optim):
    """A Linear(3, 1) from fixed weights and its SGD, in minigrad or torch."""
    m = (nn if lib is minigrad else lib.nn).Linear(3, 1)
    with lib.no_grad():
        m.weight.copy_(lib.tensor(W0, dtype=lib.float32))
        m.bias.copy_(lib.tensor(B0, dtype=lib.float32))
    return m, optim(m.parameters(), lr=0.1, momentum=0.9)


def train(lib, optim, scaler=None, steps=5, blowups=()):
    """nanoGPT's loop: scale(loss).backward(), unscale_, clip, step, update. A step in `blowups` makes an inf
    gradient. Returns the weights and (with a scaler) its scale after each step."""
    m, opt = model_and_optimizer(lib, optim)
    x, y = lib.tensor(X, dtype=lib.float32), lib.tensor(Y, dtype=lib.float32)
    scales = []
    for step in range(steps):
        loss = ((m(x) - y) ** 2).mean()
        if step in blowups:
            loss = loss * float("inf")
        if scaler is None:
            loss.backward()
            opt.step()
        else:
            scaler.scale(loss).backward()
            scaler.unscale_(opt)
            scaler.step(opt)
            scaler.update()
            scales.append((scaler.get_scale(), scaler._get_growth_tracker()))
        opt.zero_grad(set_to_none=True)
    return np.concatenate([m.weight.detach().numpy().ravel(), m.bias.detach().numpy()]), scales


def test_the_paths_pytorch_code_uses():
    from minigrad.cpu.amp import GradScaler as CpuScaler
    from minigrad.cuda.amp import GradScaler, autocast

    assert minigrad.cuda.amp.GradScaler is GradScaler and minigrad.cuda.amp.autocast is autocast
    assert issubclass(GradScaler, minigrad.amp.GradScaler) and issubclass(CpuScaler, minigrad.amp.GradScaler)
    assert minigrad.autocast is minigrad.amp.autocast and minigrad.cpu.amp.GradScaler is CpuScaler


def test_disabled_scaler_changes_nothing():
    plain, _ = train(minigrad, nn.optim.SGD)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # enabled=False: nothing to warn about
        scaler = minigrad.amp.GradScaler("cuda", enabled=False)
        scaled, scales = train(minigrad, nn.optim.SGD, scaler)
    np.testing.assert_array_equal(scaled, plain)
    assert not scaler.is_enabled() and scaler.get_scale() == 1.0 and scales == [(1.0, 0)] * 5
    loss = minigrad.tensor(2.0)
    assert scaler.scale(loss) is loss and scaler.state_dict() == {}
    scaler.load_state_dict({})  # (ignored when disabled, as PyTorch)


@pytest.mark.skipif(CUDA_AVAILABLE, reason="a GPU is here: the scaler stays enabled")
def test_enabled_without_a_gpu_warns_once_and_is_disabled():
    plain, _ = train(minigrad, nn.optim.SGD)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        scaler = minigrad.cuda.amp.GradScaler(enabled=True)  # nanoGPT: enabled=(dtype == 'float16')
        scaled, _ = train(minigrad, nn.optim.SGD, scaler)
    assert [(w.category, str(w.message)) for w in caught] == [  # (the deprecated name first, as PyTorch's)
        (FutureWarning, "`torch.cuda.amp.GradScaler(args...)` is deprecated. Please use "
                        "`torch.amp.GradScaler('cuda', args...)` instead."),
        (UserWarning, "minigrad.cuda.amp.GradScaler is enabled, but CUDA is not available.  Disabling.")]
    assert caught[0].filename == caught[1].filename == __file__  # they point at the line that made the scaler
    assert not scaler.is_enabled()
    np.testing.assert_array_equal(scaled, plain)
    with pytest.warns(UserWarning, match="CUDA is not available"):
        assert not minigrad.amp.GradScaler("cuda").is_enabled()


@pytest.mark.skipif(CUDA_AVAILABLE, reason="a GPU is here: the scaler stays enabled")
def test_disabling_matches_torch_without_cuda(torch):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        theirs = torch.amp.GradScaler("cuda")
        ours = minigrad.amp.GradScaler("cuda")
    messages = [str(w.message) for w in caught]
    assert messages == ["torch.cuda.amp.GradScaler is enabled, but CUDA is not available.  Disabling.",
                        "minigrad.cuda.amp.GradScaler is enabled, but CUDA is not available.  Disabling."]
    assert ours.is_enabled() == theirs.is_enabled() is False
    assert ours.state_dict() == theirs.state_dict() == {} and ours.get_scale() == theirs.get_scale()


@pytest.mark.filterwarnings("ignore:invalid value:RuntimeWarning")  # (numpy's, on the inf steps)
@pytest.mark.parametrize("kw,blowups", [
    ({}, ()),
    ({"init_scale": 4.0, "growth_interval": 2}, (2,)),
    ({"init_scale": 8.0, "growth_factor": 3.0, "backoff_factor": 0.3, "growth_interval": 1}, (0, 3, 4)),
])
def test_real_scaling_like_torch_cpu(torch, kw, blowups):
    ours = minigrad.amp.GradScaler("cpu", **kw)
    theirs = torch.amp.GradScaler("cpu", **kw)
    assert ours.is_enabled() and theirs.is_enabled()
    got, got_scales = train(minigrad, nn.optim.SGD, ours, steps=7, blowups=blowups)
    want, want_scales = train(torch, torch.optim.SGD, theirs, steps=7, blowups=blowups)
    assert got_scales == want_scales
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-7)
    assert ours.state_dict() == theirs.state_dict()


def test_scaling_unscaling_skip_backoff_and_growth():
    """The core on the CPU: each step of one iteration by hand, with its numbers."""
    scaler = minigrad.amp.GradScaler("cpu", init_scale=2.0**10, growth_interval=2)
    p = nn.Parameter(minigrad.tensor([1.0, 2.0]))
    opt = nn.optim.SGD([p], lr=1.0)
    assert scaler.get_scale() == 1024.0 and scaler.state_dict()["_growth_tracker"] == 0

    loss = (p * minigrad.tensor([3.0, 4.0])).sum()
    scaled = scaler.scale(loss)
    assert float(scaled) == 1024.0 * 11.0 and scaled.dtype == minigrad.float32
    scaled.backward()
    assert p.grad.tolist() == [3072.0, 4096.0]
    scaler.unscale_(opt)
    assert p.grad.tolist() == [3.0, 4.0]  # in place, before the step: clipping sees true gradients
    scaler.step(opt)
    assert p.tolist() == [-2.0, -2.0]
    scaler.update()
    assert (scaler.get_scale(), scaler._get_growth_tracker()) == (1024.0, 1)

    # an inf gradient: no step, the scale halves, the run of good steps starts again
    opt.zero_grad()
    scaler.scale((p * float("inf")).sum()).backward()
    assert scaler.step(opt) is None
    assert p.tolist() == [-2.0, -2.0]
    scaler.update()
    assert (scaler.get_scale(), scaler._get_growth_tracker()) == (512.0, 0)

    # a NaN too
    opt.zero_grad()
    scaler.scale((p * float("nan")).sum()).backward()
    scaler.step(opt)
    scaler.update()
    assert p.tolist() == [-2.0, -2.0] and scaler.get_scale() == 256.0

    # growth_interval good steps in a row: the scale doubles
    for _ in range(2):
        opt.zero_grad()
        scaler.scale(p.sum()).backward()
        scaler.step(opt)  # (step unscales when unscale_ was not called)
        scaler.update()
    assert (scaler.get_scale(), scaler._get_growth_tracker()) == (512.0, 0)
    assert p.tolist() == [-4.0, -4.0]

    # lists and tuples of outputs are scaled element by element
    a, b = scaler.scale((minigrad.tensor(1.0), minigrad.tensor(2.0)))
    assert (float(a), float(b)) == (512.0, 1024.0)
    assert [float(v) for v in scaler.scale([minigrad.tensor(1.0)])] == [512.0]
    scaler.update(new_scale=8.0)
    assert scaler.get_scale() == 8.0
    scaler.update(minigrad.tensor(4.0))
    assert scaler.get_scale() == 4.0


@pytest.mark.filterwarnings("ignore:overflow:RuntimeWarning")
def test_a_float16_loss_scales_to_float32_and_its_overflow_is_caught():
    # PyTorch's scale is a 0-d float32 tensor: times a 0-d float16 loss, float32 (65536000, finite); the
    # gradient 2**16 then overflows on its way back into float16, and the step is skipped
    scaler = minigrad.amp.GradScaler("cpu")  # 2**16: 1000 * 65536 is past float16's 65504
    p = nn.Parameter(minigrad.tensor([1.0]))
    opt = nn.optim.SGD([p], lr=1.0)
    loss = (p.to(minigrad.float16) * 1000.0).sum()
    scaled = scaler.scale(loss)
    assert scaled.dtype == minigrad.float32 and float(scaled) == 65536000.0
    scaled.backward()
    assert np.isinf(p.grad.numpy()).all()
    scaler.step(opt)
    scaler.update()
    assert p.tolist() == [1.0] and scaler.get_scale() == 2.0**15


def test_growth_stops_where_float32_overflows():
    scaler = minigrad.amp.GradScaler("cpu", init_scale=2.0**127, growth_interval=1)
    p = nn.Parameter(minigrad.tensor([1.0]))
    opt = nn.optim.SGD([p], lr=0.0)
    scaler.scale(p.sum() * 1e-30).backward()
    scaler.step(opt)
    scaler.update()
    assert scaler.get_scale() == 2.0**127 and scaler._get_growth_tracker() == 0


@pytest.mark.filterwarnings("ignore:overflow:RuntimeWarning")
def test_misuse_raises_like_torch(torch):
    def misuses(lib, optim, scaler_cls):
        p = (nn.Parameter if lib is minigrad else lib.nn.Parameter)(lib.tensor([1.0]))
        opt = optim([p], lr=0.1)
        out = []

        def attempt(fn):
            try:
                fn()
                out.append(None)
            except Exception as e:  # noqa: BLE001 - the type and text are compared
                out.append((type(e).__name__, str(e)))

        s = scaler_cls("cpu")
        attempt(lambda: s.unscale_(opt))  # before scale()
        attempt(lambda: s.update())
        s.scale(p.sum()).backward()
        attempt(lambda: s.step(opt, closure=lambda: None))
        s.unscale_(opt)
        attempt(lambda: s.unscale_(opt))
        s.step(opt)
        attempt(lambda: s.unscale_(opt))
        attempt(lambda: s.step(opt))
        s.update()
        attempt(lambda: s.update())  # nothing recorded since
        attempt(lambda: scaler_cls("cpu", growth_factor=1.0))
        attempt(lambda: scaler_cls("cpu", backoff_factor=1.0))
        attempt(lambda: scaler_cls("cpu").load_state_dict({}))
        q = (nn.Parameter if lib is minigrad else lib.nn.Parameter)(lib.tensor([1.0], dtype=lib.float16))
        o16 = optim([q], lr=0.1)
        s16 = scaler_cls("cpu")
        s16.scale(q.sum()).backward()
        attempt(lambda: s16.unscale_(o16))
        return out

    assert misuses(minigrad, nn.optim.SGD, minigrad.amp.GradScaler) == misuses(torch, torch.optim.SGD,
                                                                              torch.amp.GradScaler)


def test_state_dict_round_trip_and_pickle(torch):
    s = minigrad.amp.GradScaler("cpu", init_scale=128.0, growth_interval=3)
    p = nn.Parameter(minigrad.tensor([1.0]))
    opt = nn.optim.SGD([p], lr=0.1)
    s.scale(p.sum()).backward()
    s.step(opt)
    s.update()
    state = s.state_dict()
    assert state == {"scale": 128.0, "growth_factor": 2.0, "backoff_factor": 0.5, "growth_interval": 3,
                     "_growth_tracker": 1}
    t = torch.amp.GradScaler("cpu")
    t.load_state_dict(state)  # PyTorch's keys: a state dict loads across
    assert t.state_dict() == state
    fresh = minigrad.amp.GradScaler("cpu")
    fresh.load_state_dict(state)
    assert fresh.state_dict() == state
    assert pickle.loads(pickle.dumps(s)).state_dict() == state
    assert (s.get_growth_factor(), s.get_backoff_factor(), s.get_growth_interval()) == (2.0, 0.5, 3)
    s.set_growth_factor(4.0)
    s.set_backoff_factor(0.25)
    s.set_growth_interval(10)
    assert (s.get_growth_factor(), s.get_backoff_factor(), s.get_growth_interval()) == (4.0, 0.25, 10)


def test_autocast_as_binds_the_context_as_torch(torch):
    for L in (torch, minigrad):
        with L.autocast(device_type="cpu", dtype=L.bfloat16, enabled=False) as ac:
            assert isinstance(ac, L.autocast) and ac.fast_dtype == L.bfloat16 and ac.device == "cpu"


def test_autocast_is_accepted_and_changes_nothing():
    x = minigrad.tensor([[1.0, 2.0]])
    w = minigrad.tensor([[3.0], [4.0]])
    with minigrad.autocast(device_type="cuda", dtype=minigrad.float16):
        y = x @ w
    with minigrad.cuda.amp.autocast():
        y2 = x @ w
    with minigrad.amp.autocast("cpu", enabled=False):
        y3 = x @ w

    @minigrad.autocast("cpu")
    def f(a):
        return a @ w

    assert y.dtype == y2.dtype == y3.dtype == f(x).dtype == minigrad.float32 and float(y) == 11.0
    with pytest.raises(ValueError, match="Expected `device_type` of type `str`"):
        minigrad.autocast(0)
    with pytest.raises(RuntimeError, match="device type"):
        minigrad.autocast("tpu")
