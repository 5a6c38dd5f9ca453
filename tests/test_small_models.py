"""The small models of bench/small_models_bench.py (our own scripts of the kinds users bring: makemore's
MLPs and recurrent cells, the tutorials' per-sample RNNs, a tagger, a seq2seq decoder, REINFORCE, a VAE,
...): each trains on minigrad, and its step run through `minigrad.compile` leaves every parameter,
buffer and the random stream bit for bit as the eager step does (a kind whose capture stops runs
eagerly behind its guard, and must still agree)."""
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

import minigrad
from minigrad.compiler import RecompileWarning

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # bench/ (not a package here)

from bench import small_models_bench as bench  # noqa: E402


def _state(step):
    """Copies of the arrays a step's closure reaches: its modules' parameters and buffers, its tensors
    (a hidden state carried from step to step), and those in its lists and tuples."""
    out, seen = [], set()

    def walk(v):
        if id(v) in seen:
            return
        seen.add(id(v))
        if isinstance(v, minigrad.Tensor):
            out.append(v.detach().numpy().copy())
        elif hasattr(v, "parameters") and hasattr(v, "buffers"):
            out.extend(p.detach().numpy().copy() for p in v.parameters())
            out.extend(b.detach().numpy().copy() for b in v.buffers())
        elif isinstance(v, (list, tuple)):
            for x in v:
                walk(x)
        elif callable(v) and getattr(v, "__closure__", None):
            for cell in v.__closure__:
                try:
                    walk(cell.cell_contents)
                except ValueError:  # (an empty cell)
                    pass

    walk(step)
    return out


def _seeded():
    torch = bench.minigrad_as_torch()
    torch.manual_seed(0)
    return torch


def _run(kind, compiled, steps=3):
    step = bench.build(_seeded(), kind)
    f = minigrad.compile(step) if compiled else step
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RecompileWarning)
        for _ in range(steps):
            f()
    return _state(step), minigrad.get_rng_state(), f


@pytest.mark.parametrize("kind", bench.KINDS)
def test_a_small_model_trains_and_its_compiled_step_is_the_eager_one(kind):
    before = _state(bench.build(_seeded(), kind))
    eager, rng, _ = _run(kind, compiled=False)
    compiled, rng_compiled, f = _run(kind, compiled=True)
    assert len(eager) == len(compiled) == len(before) and eager
    assert all(np.isfinite(a).all() for a in eager if a.dtype.kind == "f")
    assert any(not np.array_equal(a, b) for a, b in zip(before, eager))  # it trained
    for a, b in zip(eager, compiled):
        assert a.dtype == b.dtype and np.array_equal(a, b, equal_nan=True)
    assert rng == rng_compiled
    assert f.stats.captures >= 1

