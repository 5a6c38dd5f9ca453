"""The default random generators. `manual_seed(n)` makes every random function reproducible.

numpy's PCG64 drives CPU tensors. CUDA tensors draw from `CudaGenerator`, a counter-based
generator seeded from the same seed: its whole state is {"seed": int, "draws": int}, so
`get_rng_state()` stays JSON-serialisable and a checkpoint made on a GPU restores anywhere
(setting the state needs no GPU, nor cupy).

As in PyTorch, each process starts from a seed of its own (drawn from the OS's entropy), so two
runs differ unless `manual_seed` is called; `initial_seed()` reports the seed in use. A
`Generator` is a stream of its own, passed as `generator=` to the random functions; a new one
starts from PyTorch's fixed seed 67280421310721.
"""
import contextlib
import operator

import numpy as np

from .autograd import recording
from .device import _import_cupy
from .device import device as Device
from .tensor import Tensor

# why a minigrad.compile capture stops at a reseeding: a replay would draw on from where the stream is
_RESEED = ("setting a generator's seed or state (manual_seed, set_rng_state)",
           "a replay would not set it again, and its draws would go on from where the stream is; seed outside the "
           "compiled function")

_NEW_GENERATOR_SEED = 67280421310721  # PyTorch's seed for a freshly made torch.Generator()
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


def _checked_seed(seed):
    """PyTorch's seed rule: any int from -2**63 to 2**64 - 1, kept modulo 2**64."""
    seed = int(seed)
    if not -(2**63) <= seed < 2**64:
        raise ValueError("Overflow when unpacking long long")
    return seed % 2**64


def _fresh_seed():
    """A seed from the OS's entropy (64 bits, as PyTorch's)."""
    return int(np.random.SeedSequence().entropy % 2**64)


class Generator:
    """`torch.Generator`: a random stream of its own, for `generator=` of randn, randint, randperm, ...

    Its draws have numpy Generator's names (`random`, `standard_normal`, `integers`, `permutation`,
    `normal`, `uniform`), which is how the random functions call any generator. device='cuda' keeps
    a `CudaGenerator` (cupy is needed only for its first draw).
    """

    __module__ = "minigrad"  # (PyTorch's torch.Generator: its repr is object's, `<minigrad.Generator object at 0x...>`)
    _torch_type_name = "torch._C.Generator"  # (its argument parser's name for it, in an invalid combination's text)

    def __init__(self, device="cpu"):
        self.device = Device(device)
        self.manual_seed(_NEW_GENERATOR_SEED)

    def manual_seed(self, seed):
        """Restart the stream from `seed`; returns the generator (as PyTorch's)."""
        recording.escape(*_RESEED)
        self._seed = _checked_seed(seed)
        self._rng = np.random.default_rng(self._seed) if self.device.type == "cpu" else CudaGenerator(self._seed)
        return self

    def seed(self):
        """Restart from a seed drawn from the OS's entropy, and return it."""
        s = _fresh_seed()
        self.manual_seed(s)
        return s

    def initial_seed(self):
        return self._seed

    def get_state(self):
        """A JSON-serialisable snapshot ({"seed", ...}) that `set_state` restores."""
        if self.device.type == "cpu":
            return {"seed": self._seed, "cpu": self._rng.bit_generator.state}
        return dict(self._rng.state)

    def set_state(self, state):
        if self.device.type == "cpu":
            _check_state(state, "Generator.get_state()")
        recording.escape(*_RESEED)
        self._seed = int(state["seed"])
        if self.device.type == "cpu":
            self._rng = np.random.default_rng(self._seed)
            self._rng.bit_generator.state = state["cpu"]
        else:
            self._rng = CudaGenerator(state["seed"], state.get("draws", 0))
        return self

    # ---- draws (numpy Generator's names) -------------------------------------------------
    @property
    def bit_generator(self):
        return self._rng.bit_generator

    def _stream(self):
        """The stream to draw from; a draw that a minigrad.compile capture would freeze is reported, as
        for the default generator (`generator()`): an op's own draws (dropout's) happen inside the op."""
        recording.escape("a random draw outside an op (minigrad.randn, rand, ...)")
        return self._rng

    def random(self, *args, **kwargs):
        return self._stream().random(*args, **kwargs)

    def standard_normal(self, *args, **kwargs):
        return self._stream().standard_normal(*args, **kwargs)

    def normal(self, *args, **kwargs):
        return self._stream().normal(*args, **kwargs)

    def uniform(self, *args, **kwargs):
        return self._stream().uniform(*args, **kwargs)

    def integers(self, *args, **kwargs):
        return self._stream().integers(*args, **kwargs)

    def permutation(self, *args, **kwargs):
        return self._stream().permutation(*args, **kwargs)


default_generator = Generator()
default_generator.manual_seed(_fresh_seed())  # a seed of its own in every process, as PyTorch's


def manual_seed(seed):
    """Seed every generator (CPU and, once used, CUDA); returns the default generator."""
    global _cuda
    default_generator.manual_seed(seed)
    _cuda = None
    return default_generator


def set_cuda_seed(seed):
    """Seed the CUDA generator alone (`minigrad.cuda.manual_seed`)."""
    global _cuda
    recording.escape(*_RESEED)
    _cuda = CudaGenerator(_checked_seed(seed))


def seed():
    """Seed from the OS's entropy and return the seed used."""
    s = _fresh_seed()
    manual_seed(s)
    return s


def initial_seed():
    """The seed the default generator started from (drawn per process unless `manual_seed` set it)."""
    return default_generator.initial_seed()


def integers(rng, low, high, size):
    """Integers uniform in [low, high), an array of `size`, from `rng` (numpy's Generator, a `Generator`, or
    the CUDA one): randint's and random_'s draw.

    On the CPU, a span of at most 2**32 values takes each value as one 64-bit draw of the stream modulo the
    span, as PyTorch's CPU randint takes its draws (its own from 32 bits); the bias, span / 2**64, is at most
    2**-32 of a value's chance. numpy's `integers` (unbiased, by rejection) costs three times as long on a
    batch of indices, which a small model draws at every step; it still draws the wider spans."""
    if type(rng) is Generator:
        rng = rng._stream()
    if type(low) is not int or type(high) is not int:  # (a numpy int or a 0-d tensor bound: a Python int, which
        low, high = operator.index(low), operator.index(high)  # the in-place uint64 arithmetic below takes as uint64)
    span = high - low
    if type(rng) is np.random.Generator and 0 < span <= 1 << 32:
        raw = rng.bit_generator.random_raw(size)
        drawn = np.remainder(raw, span, out=raw).view(np.int64)  # (in place: each below 2**32, as an int64 too)
        return np.add(drawn, low, out=drawn) if low else drawn
    return rng.integers(low, high, size=size)


def floats(rng, kind, shape, dtype):
    """`shape` draws of U[0, 1) (kind "uniform") or N(0, 1) ("normal") in float dtype `dtype` from `rng`, with
    PyTorch's error for any other dtype. numpy (and cupy) draw float32 and float64 only: a float16 tensor's
    numbers are float32 draws rounded to it."""
    dtype = np.dtype(dtype)
    if dtype.kind == "c":  # PyTorch's: real and imaginary parts drawn alike, a normal's each of variance 1/2
        part = np.dtype(dtype.char.lower())  # (complex64's parts float32, complex128's float64)
        pairs = floats(rng, kind, tuple(shape) + (2,), part)
        if kind == "normal":
            pairs *= part.type(np.sqrt(0.5))
        return pairs.view(dtype).reshape(shape)
    if dtype.kind != "f":
        from .dtypes import from_numpy_dtype

        check_floating(kind, from_numpy_dtype(dtype))
    draw = rng.random if kind == "uniform" else rng.standard_normal
    if dtype == np.float16:
        return draw(shape, dtype=np.float32).astype(np.float16)
    return draw(shape, dtype=dtype)


RANDOM_OVERLOADS = ("*, torch.Generator generator = None", "int from, int to, *, torch.Generator generator = None",
                    "int to, *, torch.Generator generator = None")


def check_random_generator(generator, bounds=()):
    """PyTorch's parser's refusal of random_'s `generator=` that is no Generator (the DataLoader's seed is drawn
    with random_, so a loader given one refuses it there)."""
    if generator is not None and not isinstance(generator, (Generator, CudaGenerator, np.random.Generator)):
        from .tensor import invalid_arguments

        raise TypeError(invalid_arguments("random_", bounds, RANDOM_OVERLOADS, {"generator": generator}))


def check_floating(kind, dtype):
    """PyTorch's error for a draw of `kind` ("uniform" or "normal") into a tensor of a non-float minigrad dtype."""
    if not dtype.is_floating_point:
        kernel = "check_uniform_bounds" if kind == "uniform" else "normal_kernel_cpu"
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{dtype._legacy[:-6]}'")


# PyTorch's checks of a distribution's parameters, as its texts say them (numbers as C++ prints them: %g)
def check_uniform(a, b, dtype):
    """uniform_'s bounds for a tensor of minigrad dtype `dtype`: each within the dtype's range (NaN is not),
    a <= b, and b - a within the range too (else the draws would be inf). A complex tensor's parts are drawn
    alike, so its bounds are checked as its parts' dtype's."""
    if dtype.is_complex:
        from .dtypes import from_numpy_dtype

        dtype = from_numpy_dtype(np.dtype(np.dtype(dtype.np).char.lower()))
    check_floating("uniform", dtype)
    from .typeinfo import finfo

    name = dtype._legacy[:-6]
    big = finfo(dtype).max
    for v, what in ((a, "from"), (b, "to")):
        if not -big <= float(v) <= big:
            c_name = name.lower() if name in ("Float", "Double") else f"c10::{name}"
            raise RuntimeError(f"{what} is out of bounds for {c_name}")
    if a > b:
        raise RuntimeError(f"uniform_ expects to return a [from, to) range, but found from={float(a):g} > "
                           f"to={float(b):g}")
    if float(b) - float(a) > big:
        raise RuntimeError(f"uniform_ expects to-from <= std::numeric_limits<{name}>::max(), but found to={float(b):g} "
                           f"and from={float(a):g} which result in to-from to exceed the limit")


_P_IN = ("Expected p_in >= 0 && p_in <= 1 to be true, but got false.  (Could this error message be improved?  If so, "
         "please report an enhancement request to PyTorch.)")


def check_probability(p):
    """bernoulli's p: a number in [0, 1], or an array whose entries all are (NaN is not)."""
    if isinstance(p, (int, float, np.number)):
        if not 0 <= p <= 1:
            raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={float(p):g}")
    elif p.size and not bool(((p >= 0) & (p <= 1)).all()):
        raise RuntimeError(_P_IN)


def check_std(std):
    """normal's std: a number, or an array whose entries all are, >= 0 (NaN is not)."""
    if isinstance(std, (int, float, np.number)):
        if not std >= 0:
            raise RuntimeError(f"normal expects std >= 0.0, but found std {float(std):g}")
    elif std.size and not bool((std >= 0).all()):
        raise RuntimeError("normal expects all elements of std >= 0.0")


def generator(xp=np):
    """The default generator for array module `xp`: numpy's Generator, or the `CudaGenerator`."""
    global _cuda
    recording.escape("a random draw outside an op (minigrad.randn, rand, ...)")
    if xp is np:
        return default_generator._rng
    if _cuda is None:
        _cuda = CudaGenerator(default_generator.initial_seed())
    return _cuda


def get_rng_state():
    """A JSON-serialisable snapshot of the generators, for checkpoints and recomputation.

    {"cpu": numpy's PCG64 state} plus {"cuda": {"seed", "draws"}} once the CUDA generator is used."""
    state = {"cpu": default_generator._rng.bit_generator.state}
    if _cuda is not None:
        state["cuda"] = _cuda.state
    return state


def set_rng_state(state):
    """Restore a snapshot taken by `get_rng_state` (no GPU needed, also for the CUDA part).

    A snapshot without a CUDA part (taken before any CUDA draw) puts the CUDA generator back to
    its start: the first CUDA draw after this is the first one made after seeding."""
    _check_state(state, "minigrad.get_rng_state()")
    recording.escape(*_RESEED)
    _set_rng_state(state)


def _check_state(state, source):
    """A clear error for what is not a snapshot of minigrad's, above all PyTorch's own byte tensor, read back from
    a checkpoint PyTorch wrote: its Mersenne Twister state has no meaning for numpy's PCG64."""
    if isinstance(state, dict) and "cpu" in state:
        return
    if isinstance(state, Tensor) and state.array.dtype == np.uint8:
        raise TypeError(f"expected a state from {source} (a dict), but got a byte tensor: PyTorch's generator state "
                        "(as a checkpoint PyTorch wrote holds) cannot be restored by minigrad, whose generators are "
                        "numpy's PCG64; call minigrad.manual_seed instead")
    raise TypeError(f"expected a state from {source} (a dict), but got {type(state).__name__}")


def _set_rng_state(state):  # (checkpoint's recomputation restores the state it ran with: recorded with it)
    global _cuda
    default_generator._rng.bit_generator.state = state["cpu"]
    cuda = state.get("cuda")
    if isinstance(cuda, dict):
        _cuda = CudaGenerator(cuda["seed"], cuda.get("draws", 0))
    elif "cuda" not in state:
        _cuda = None
    # "cuda": None (snapshots of older minigrad, which could not save cupy's state): left as it is


@contextlib.contextmanager
def fork_rng(devices=None, enabled=True, _caller="fork_rng", _devices_kw="devices", device_type="cuda"):
    """A context manager (torch.random.fork_rng): the default generators' state (CPU's, and CUDA's once used) is
    saved on entry and restored on exit, so draws inside leave the streams outside as they were.
    `devices` is accepted for PyTorch's signature (minigrad keeps one CUDA generator); enabled=False does nothing."""
    if not enabled:
        yield
        return
    state = get_rng_state()
    try:
        yield
    finally:
        set_rng_state(state)
