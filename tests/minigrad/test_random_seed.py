"""The default seed as PyTorch's: a seed of its own per process unless manual_seed is called, initial_seed()
reporting it, PyTorch's seed range; minigrad.Generator as a stream of its own for generator=."""
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import minigrad

ROOT = Path(__file__).resolve().parents[2]


def fresh(code):
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120,
                         env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
    assert out.returncode == 0, out.stderr
    return out.stdout.strip()


def test_two_processes_draw_differently_unless_seeded():
    draw = "import minigrad; print(minigrad.initial_seed(), minigrad.randn(3).tolist())"
    a, b = fresh(draw), fresh(draw)
    assert a != b and a.split()[0] != b.split()[0]
    seeded = "import minigrad; minigrad.manual_seed(1234); print(minigrad.initial_seed(), minigrad.randn(3).tolist())"
    a, b = fresh(seeded), fresh(seeded)
    assert a == b and a.split()[0] == "1234"


def test_initial_seed_reports_the_seed_in_use():
    seed = minigrad.initial_seed()
    assert 0 <= seed < 2**64
    state = minigrad.get_rng_state()
    try:
        s = minigrad.seed()
        assert minigrad.initial_seed() == s and 0 <= s < 2**64
        assert minigrad.manual_seed(7) is minigrad.default_generator and minigrad.initial_seed() == 7
    finally:
        minigrad.set_rng_state(state)


@pytest.mark.parametrize("seed", [0, 5, 2**64 - 1, -1, -(2**63), 2**64, -(2**63) - 1, 1.9, True, "12"])
def test_seed_range_as_pytorch(torch, seed):
    state = minigrad.get_rng_state()
    try:
        outcomes = []
        for lib in (minigrad, torch):
            try:
                lib.manual_seed(seed)
                outcomes.append(lib.initial_seed())
            except (ValueError, TypeError, OverflowError) as e:
                outcomes.append((type(e), str(e)))
        assert outcomes[0] == outcomes[1]
    finally:
        minigrad.set_rng_state(state)


def test_a_generator_is_a_stream_of_its_own(torch):
    g = minigrad.Generator()
    assert g.initial_seed() == torch.Generator().initial_seed()  # PyTorch's fixed seed for a new generator
    assert g.manual_seed(3) is g and g.device == minigrad.device("cpu")
    before = minigrad.get_rng_state()
    a = [minigrad.randint(0, 100, (4,), generator=g).tolist(), minigrad.randn(3, generator=g).tolist(),
         minigrad.rand(2, generator=g).tolist(), minigrad.randperm(5, generator=g).tolist(),
         minigrad.ones(2, 5).multinomial(2, generator=g).tolist(), minigrad.empty(3).normal_(generator=g).tolist()]
    assert minigrad.get_rng_state() == before  # the default generator did not move
    g.manual_seed(3)
    b = [minigrad.randint(0, 100, (4,), generator=g).tolist(), minigrad.randn(3, generator=g).tolist(),
         minigrad.rand(2, generator=g).tolist(), minigrad.randperm(5, generator=g).tolist(),
         minigrad.ones(2, 5).multinomial(2, generator=g).tolist(), minigrad.empty(3).normal_(generator=g).tolist()]
    assert a == b
    state = g.get_state()
    x = minigrad.rand(3, generator=g)
    g.set_state(state)
    np.testing.assert_array_equal(minigrad.rand(3, generator=g).numpy(), x.numpy())
    assert g.seed() == g.initial_seed()


@pytest.mark.parametrize("low, high", [(0, 7), (-3, 3), (0, 2**32), (5, 2**40), (-(2**62), 2**62)])
def test_randint_and_random_draw_every_value_of_the_range_alike(low, high):
    # randint's and random_'s integers: in [low, high), each value of a small range about as often as the
    # others, the same values again from the same seed, from a Generator as from the default stream
    g = minigrad.Generator().manual_seed(3)
    drawn = minigrad.randint(low, high, (70000,), generator=g).numpy()
    assert drawn.dtype == np.int64 and drawn.min() >= low and drawn.max() < high
    assert np.array_equal(drawn, minigrad.randint(low, high, (70000,), generator=g.manual_seed(3)).numpy())
    if high - low <= 7:
        counts = np.bincount(drawn - low, minlength=high - low)
        assert counts.min() > 0.95 * 70000 / (high - low) and counts.max() < 1.05 * 70000 / (high - low)
    else:
        assert len(np.unique(drawn)) > 69000  # a wide range: (nearly) no value twice
        assert abs(drawn.astype(np.float64).mean() - (low / 2 + high / 2)) < 0.02 * (high - low)
    minigrad.manual_seed(3)
    filled = minigrad.zeros(70000, dtype=minigrad.int64).random_(low, high).numpy()
    assert np.array_equal(filled, drawn)
    assert minigrad.randint(low, high, (2, 3), dtype=minigrad.float64).dtype == minigrad.float64


@pytest.mark.parametrize("call", [
    "t.randn(2, 3, dtype=d)", "t.rand(2, 3, dtype=d)", "t.randn_like(t.ones(2, dtype=d))",
    "t.rand_like(t.ones(2, dtype=d))", "t.ones(2, dtype=d).normal_()", "t.ones(2, dtype=d).uniform_(-1, 1)",
    "t.normal(t.zeros(2, dtype=d), t.ones(2, dtype=d))", "t.normal(0.0, 1.0, (2,), dtype=d)",
    "t.nn.functional.rrelu(t.ones(2, dtype=d), training=True)",
])
@pytest.mark.parametrize("dtype", ["float16", "float64", "int64", "uint8", "bool"])
def test_draws_in_every_float_dtype_and_pytorchs_error_for_others(call, dtype):
    # numpy draws float32 and float64 only: a float16 tensor (a half model's noise) is drawn as float32
    torch = pytest.importorskip("torch")
    seen = []
    for lib in (minigrad, torch):
        try:
            r = eval(call, {"t": lib, "d": getattr(lib, dtype)})
            seen.append((str(r.dtype).split(".")[1], list(r.shape)))
        except Exception as e:  # noqa: BLE001 (the error is what is compared)
            seen.append((type(e).__name__, str(e)))
    if "rrelu" in call and dtype != "float64":  # (PyTorch's CPU rrelu has float kernels only; minigrad's draws)
        assert seen[0] == ("float16", [2]) if dtype == "float16" else seen[0][0] == "NotImplementedError"
        return
    assert seen[0] == seen[1]


@pytest.mark.parametrize("call", [
    "t.normal(t.zeros(2), -t.ones(2))", "t.normal(0., -1., (2,))", "t.normal(t.zeros(2), -0.25)",
    "t.zeros(2).normal_(0, -1)", "t.normal(t.zeros(2), t.tensor([float('nan'), 1.]))", "t.bernoulli(t.tensor([1.5]))",
    "t.bernoulli(t.tensor([-0.5]))", "t.bernoulli(t.zeros(2), p=1.5)", "t.zeros(2).bernoulli_(1.5)",
    "t.zeros(2).bernoulli_(t.tensor([1.5, 0.2]))", "t.bernoulli(t.tensor([float('nan')]))",
    "t.zeros(2).uniform_(1.5, 0)", "t.randperm(-1)", "t.zeros(2).exponential_(-1)", "t.normal(t.zeros(2), t.ones(2))",
    "t.bernoulli(t.full((2,), 0.5))", "t.zeros(2).uniform_(1, 1)", "t.normal(1., 0., (2,))",
    # nn.init's fills checked nothing (a word model's uniform_(w, initrange, -initrange) drew silently)
    "t.nn.init.uniform_(t.zeros(2), 0.1, -0.1)", "t.nn.init.normal_(t.zeros(2), std=-1.)",
    "t.nn.init.uniform_(t.zeros(2, dtype=t.long))", "t.zeros(2, dtype=t.long).uniform_(1, 0)",
    "t.nn.init.normal_(t.zeros(2, dtype=t.long))", "t.nn.init.xavier_normal_(t.zeros(2, 2, dtype=t.long))",
    "t.nn.init.kaiming_uniform_(t.zeros(2, 2, dtype=t.long))",
    # bounds outside the dtype's range, NaN, or a range too wide for it
    "t.zeros(2).uniform_(float('nan'), 1.)", "t.zeros(2).uniform_(0, float('inf'))", "t.zeros(2).uniform_(1e39, 0)",
    "t.zeros(2, dtype=t.double).uniform_(1e39, 0)", "t.zeros(2, dtype=t.half).uniform_(0, 1e5)",
    "t.zeros(2).uniform_(-3.4e38, 3.4e38)", "t.zeros(2, dtype=t.half).uniform_(-6e4, 6e4)",
    "t.zeros(2, dtype=t.double).uniform_(-1.7e308, 1.7e308)", "t.zeros(2, dtype=t.double).uniform_(-1e300, 1e300)",
])
def test_distribution_parameters_checked_as_pytorch(call):
    # a negative std or a probability above 1 (from a formula gone wrong) raises, where it drew silently
    torch = pytest.importorskip("torch")
    seen = []
    for lib in (minigrad, torch):
        try:
            r = eval(call, {"t": lib})
            seen.append((str(r.dtype).split(".")[1], list(r.shape)))
        except Exception as e:  # noqa: BLE001 (the error is what is compared)
            seen.append((type(e).__name__, str(e)))
    assert seen[0] == seen[1]


def test_a_pytorch_rng_state_from_a_checkpoint_is_refused_clearly(torch, tmp_path):
    # a resumed script: torch.set_rng_state(ck["rng"]) where PyTorch wrote ck; its bytes mean nothing to PCG64
    torch.save({"rng": torch.get_rng_state()}, tmp_path / "ck.pt")
    state = minigrad.load(tmp_path / "ck.pt")["rng"]
    before = minigrad.get_rng_state()
    for restore in (minigrad.set_rng_state, minigrad.Generator().set_state):
        with pytest.raises(TypeError, match="got a byte tensor: PyTorch's generator state"):
            restore(state)
        with pytest.raises(TypeError, match=r"\(a dict\), but got list"):
            restore([1, 2])
    assert minigrad.get_rng_state() == before
