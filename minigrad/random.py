"""The default random generators. `manual_seed(n)` makes every random function reproducible.

numpy's PCG64 drives CPU tensors. CUDA tensors draw from `CudaGenerator`, a counter-based
generator seeded from the same seed: its whole state is {"seed": int, "draws": int}, so
`get_rng_state()` stays JSON-serialisable and a checkpoint made on a GPU restores anywhere
(setting the state needs no GPU, nor cupy).
"""
import numpy as np

from .autograd import recording
from .device import _import_cupy

_seed = 0
_cpu = np.random.default_rng(_seed)
_cuda = None


class CudaGenerator:
    """minigrad's CUDA generator, with numpy Generator methods that return cupy arrays.

    Counter-based: draw number k (k = 0, 1, ...) comes from a fresh cupy Generator over cuRAND's
    Philox4x32-10 (XORWOW where a cupy lacks Philox) seeded with numpy's
    `SeedSequence([seed, k])`, then k goes up by one. The state is therefore two integers; a
    restored state repeats the same draws exactly. (cupy keeps 32 bits of each draw's seed, so
    two draws of one run share a stream with probability ~ draws^2 / 2^33: harmless for
    initialisation and dropout.)

    Methods: random, standard_normal, normal, uniform, integers, permutation, with numpy's
    arguments (and `dtype` where numpy has it).
    """

    def __init__(self, seed=0, draws=0):
        self.seed = int(seed)
        self.draws = int(draws)

    def __repr__(self):
        return f"CudaGenerator(seed={self.seed}, draws={self.draws})"

    # ---- state -------------------------------------------------------------------------------
    @property
    def state(self):
        """{"seed": int, "draws": int}: JSON-serialisable."""
        return {"seed": self.seed, "draws": self.draws}

    @state.setter
    def state(self, value):
        self.seed, self.draws = int(value["seed"]), int(value.get("draws", 0))

    # ---- draws -------------------------------------------------------------------------------
    def _next(self):
        """The cupy Generator of the next draw (the counter advances once the draw succeeds)."""
        cp = _import_cupy()
        bitgen = getattr(cp.random, "Philox4x3210", None) or cp.random.XORWOW
        seq = np.random.SeedSequence([self.seed & 0xFFFFFFFFFFFFFFFF, self.draws])
        return cp.random.Generator(bitgen(seq))

    def _draw(self, method, *args, **kwargs):
        out = getattr(self._next(), method)(*args, **kwargs)
        self.draws += 1
        return out

    def random(self, size=None, dtype=np.float64, out=None):
        """Uniform floats in [0, 1)."""
        return self._draw("random", size, dtype=dtype, out=out)

    def standard_normal(self, size=None, dtype=np.float64, out=None):
        return self._draw("standard_normal", size, dtype=dtype, out=out)

    def normal(self, loc=0.0, scale=1.0, size=None):
        return self.standard_normal(size) * scale + loc

    def uniform(self, low=0.0, high=1.0, size=None, dtype=np.float64):
        return self.random(size, dtype=dtype) * (high - low) + low

    def integers(self, low, high=None, size=None, dtype=np.int64, endpoint=False):
        return self._draw("integers", low, high, size=size, dtype=dtype, endpoint=endpoint)

    def permutation(self, x):
        """A random permutation of range(x) (int64), or of array x's first axis."""
        cp = _import_cupy()
        n = int(x) if isinstance(x, (int, np.integer)) else len(x)
        order = cp.argsort(self.random(n)).astype(cp.int64, copy=False)
        if isinstance(x, (int, np.integer)):
            return order
        return cp.asarray(x)[order]


# torch.Generator()'s seed before any manual_seed
DEFAULT_SEED = 67280421310721


class Generator:
    """A random generator of one's own, as `torch.Generator`: pass it as `generator=` to the random
    functions (`randperm`, `rand`, `multinomial`, ...) to draw apart from the default generators.

        >>> g = minigrad.Generator().manual_seed(0)
        >>> minigrad.randperm(4, generator=g)   # the same permutation each time g is seeded with 0

    On the CPU it is numpy's PCG64; with `device="cuda"` a `CudaGenerator`. It has the numpy
    Generator methods the random functions call (random, standard_normal, normal, uniform,
    integers, permutation). `get_state()` is a dict (numpy's state, or {"seed", "draws"}), where
    PyTorch's is a byte tensor.
    """

    def __init__(self, device="cpu"):
        from .device import device as _device

        self.device = _device(device)
        self.manual_seed(DEFAULT_SEED)

    def __repr__(self):
        return f"<minigrad.Generator object at {hex(id(self))}>"

    def manual_seed(self, seed):
        """Restart from `seed` (any int; taken modulo 2**64, as PyTorch); returns the generator."""
        self._seed = int(seed) % 2**64
        self._rng = CudaGenerator(self._seed) if self.device.type == "cuda" else np.random.default_rng(self._seed)
        return self

    def seed(self):
        """Reseed from the OS's entropy; returns the new seed."""
        s = int(np.random.SeedSequence().entropy % 2**63)
        self.manual_seed(s)
        return s

    def initial_seed(self):
        return self._seed

    def get_state(self):
        return self._rng.state if self.device.type == "cuda" else self._rng.bit_generator.state

    def set_state(self, new_state):
        if self.device.type == "cuda":
            self._rng.state = new_state
        else:
            self._rng.bit_generator.state = new_state
        return self

    # ---- the draws the random functions make (numpy's Generator methods) -------------------------
    def random(self, *args, **kwargs):
        return self._rng.random(*args, **kwargs)

    def standard_normal(self, *args, **kwargs):
        return self._rng.standard_normal(*args, **kwargs)

    def normal(self, *args, **kwargs):
        return self._rng.normal(*args, **kwargs)

    def uniform(self, *args, **kwargs):
        return self._rng.uniform(*args, **kwargs)

    def integers(self, *args, **kwargs):
        return self._rng.integers(*args, **kwargs)

    def permutation(self, x):
        return self._rng.permutation(x)


def manual_seed(seed):
    """Seed every generator (CPU and, once used, CUDA)."""
    global _seed, _cpu, _cuda
    _seed = int(seed)
    _cpu = np.random.default_rng(_seed)
    _cuda = None


def set_cuda_seed(seed):
    """Seed the CUDA generator alone (`minigrad.cuda.manual_seed`)."""
    global _cuda
    _cuda = CudaGenerator(seed)


def seed():
    """Seed from the OS's entropy and return the seed used."""
    s = int(np.random.SeedSequence().entropy % (2**63))
    manual_seed(s)
    return s


def initial_seed():
    return _seed


def generator(xp=np):
    """The default generator for array module `xp`: numpy's Generator, or the `CudaGenerator`."""
    global _cuda
    if recording.recorder is not None:  # a draw outside any op, inside a minigrad.compile capture
        recording.recorder.on_escape("a random draw outside an op (minigrad.randn, rand, ...)")
    if xp is np:
        return _cpu
    if _cuda is None:
        _cuda = CudaGenerator(_seed)
    return _cuda


def get_rng_state():
    """A JSON-serialisable snapshot of the generators, for checkpoints and recomputation.

    {"cpu": numpy's PCG64 state} plus {"cuda": {"seed", "draws"}} once the CUDA generator is used."""
    state = {"cpu": _cpu.bit_generator.state}
    if _cuda is not None:
        state["cuda"] = _cuda.state
    return state


def set_rng_state(state):
    """Restore a snapshot taken by `get_rng_state` (no GPU needed, also for the CUDA part).

    A snapshot without a CUDA part (taken before any CUDA draw) puts the CUDA generator back to
    its start: the first CUDA draw after this is the first one made after seeding."""
    global _cuda
    _cpu.bit_generator.state = state["cpu"]
    cuda = state.get("cuda")
    if isinstance(cuda, dict):
        _cuda = CudaGenerator(cuda["seed"], cuda.get("draws", 0))
    elif "cuda" not in state:
        _cuda = None
    # "cuda": None (snapshots of older minigrad, which could not save cupy's state): left as it is
