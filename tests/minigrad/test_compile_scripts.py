"""minigrad.compile on the code people write around a training or generation step: each compiled run
gives the eager run's values (same seed), or runs eagerly with a warning."""
import warnings

import numpy as np

import minigrad
import nn

from minigrad.compiler import RecompileWarning


def _quiet(fn, *args):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RecompileWarning)
        return fn(*args)


def test_a_module_hook_registered_or_removed_between_calls_is_another_program():
    minigrad.manual_seed(0)
    model = nn.Linear(3, 2)
    compiled = minigrad.compile(model)
    x = minigrad.randn(2, 3)
    _quiet(compiled, x)
    double = model.register_forward_hook(lambda m, args, out: out * 2)
    np.testing.assert_array_equal(_quiet(compiled, x).detach().numpy(), model(x).detach().numpy())
    plus = model.register_forward_hook(lambda m, args, out: out + 1)  # a second hook of the same kind
    np.testing.assert_array_equal(_quiet(compiled, x).detach().numpy(), model(x).detach().numpy())
    double.remove()
    plus.remove()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = compiled(x)
    np.testing.assert_array_equal(got.detach().numpy(), model(x).detach().numpy())
    assert "a hook was registered or removed" in str(caught[0].message)


def test_a_forward_hook_that_keeps_activations_makes_the_call_run_eagerly():
    minigrad.manual_seed(0)
    model = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2))
    kept = {}
    model[1].register_forward_hook(lambda m, args, out: kept.__setitem__("relu", out))
    compiled = minigrad.compile(model)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with minigrad.no_grad():
            for _ in range(3):
                x = minigrad.randn(2, 3)
                compiled(x)
                np.testing.assert_array_equal(kept["relu"].numpy(), model[1](model[0](x)).numpy())
    assert [str(w.message).split(": ")[2] for w in caught] == ["running eagerly"]
    assert "a forward hook that returns None" in str(caught[0].message)
