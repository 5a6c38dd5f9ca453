"""The default random generator. `manual_seed(n)` makes every random function reproducible.

numpy's PCG64 drives CPU tensors; cupy's generator (seeded from the same seed) drives CUDA ones.
"""
import numpy as np

from .device import _import_cupy

_seed = 0
_cpu = np.random.default_rng(_seed)
_cuda = None


def manual_seed(seed):
    """Seed every generator (CPU and, once used, CUDA)."""
    global _seed, _cpu, _cuda
    _seed = int(seed)
    _cpu = np.random.default_rng(_seed)
    _cuda = None


def seed():
    """Seed from the OS's entropy and return the seed used."""
    s = int(np.random.SeedSequence().entropy % (2**63))
    manual_seed(s)
    return s


def initial_seed():
    return _seed


def generator(xp=np):
    """The default generator for array module `xp` (numpy Generator or cupy Generator)."""
    global _cuda
    if xp is np:
        return _cpu
    if _cuda is None:
        _cuda = _import_cupy().random.default_rng(_seed)
    return _cuda


def get_rng_state():
    """A JSON-serialisable snapshot of the generators, for checkpoints and recomputation."""
    state = {"cpu": _cpu.bit_generator.state}
    if _cuda is not None:
        state["cuda"] = _cuda.bit_generator.state if hasattr(_cuda.bit_generator, "state") else None
    return state


def set_rng_state(state):
    """Restore a snapshot taken by `get_rng_state`."""
    _cpu.bit_generator.state = state["cpu"]
    if state.get("cuda") is not None:
        generator(_import_cupy()).bit_generator.state = state["cuda"]
