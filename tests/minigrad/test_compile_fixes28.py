"""Fixes found by the torch.compile script probes of tests/minigrad/test_compile_scripts28.py."""
import copy
import pickle

import numpy as np
import pytest

import minigrad
import nn

torch = pytest.importorskip("torch")


def test_a_module_compiled_with_the_eager_backend_is_an_optimized_module_that_runs_eagerly():
    t_model = torch.compile(torch.nn.Linear(3, 2), backend="eager")
    model = nn.Linear(3, 2)
    compiled = minigrad.compile(model, backend="eager")
    assert type(compiled).__name__ == type(t_model).__name__ == "OptimizedModule"
    assert compiled._orig_mod is model
    assert list(compiled.state_dict()) == list(t_model.state_dict()) == ["_orig_mod.weight", "_orig_mod.bias"]
    x = minigrad.randn(4, 3)
    for _ in range(3):
        np.testing.assert_array_equal(compiled(x).detach().numpy(), model(x).detach().numpy())
    assert compiled._compiled.stats.captures == 0 and compiled._compiled.stats.eager_calls == 3
    minigrad.compiler.reset()  # (forgets programs: the backend stays eager)
    compiled(x)
    # a copy and a pickle keep the backend
    for other in (copy.deepcopy(compiled), pickle.loads(pickle.dumps(compiled))):
        other(x)
        assert other._compiled.stats.captures == 0 and other._compiled.stats.eager_calls == 1
    assert compiled._compiled.stats.captures == 0
    # disable=True is the module itself, as PyTorch's
    assert minigrad.compile(model, disable=True) is model
