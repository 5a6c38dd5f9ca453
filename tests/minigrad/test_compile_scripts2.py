"""minigrad.compile on more of the code people write around a step (a second round of probes): each
compiled run gives the eager run's values (same seed), or runs eagerly with one warning line."""
import warnings

import pytest

import minigrad
import nn

from minigrad.compiler import RecompileWarning
from tests.minigrad.test_compile_scripts import _same


def _run_both_warned(run, *args):
    """As test_compile_scripts' `_run_both`, with the compiled run's RecompileWarning lines."""
    want, _ = run(False, *args)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got, compiled = run(True, *args)
    _same(want, got)
    return compiled, [str(w.message) for w in caught if issubclass(w.category, RecompileWarning)]


@pytest.mark.parametrize("kind", ["list", "dict"])
def test_a_list_or_dict_argument_the_function_fills_makes_it_run_eagerly(kind):
    def run(compiled):
        minigrad.manual_seed(0)
        model = nn.Linear(3, 1)

        def step(x, out):
            y = model(x).sum()
            if kind == "list":
                out.append(y)
            else:
                out["y"] = y
            return y * 2

        f = minigrad.compile(step) if compiled else step
        values = []
        with minigrad.no_grad():
            for _ in range(4):
                out = [] if kind == "list" else {}
                values.append(f(minigrad.randn(2, 3), out).numpy())
                values.append((out[0] if kind == "list" else out["y"]).numpy())  # (a replay left it empty)
        return values, f

    compiled, caught = _run_both_warned(run)
    assert compiled.stats.replays == 0
    assert len(caught) == 1 and "a change to argument 1 (a list or dict passed in)" in caught[0]


_last = None


def _keeps_its_last_input_in_a_global(x):
    global _last
    _last = x * 3
    return x + 1


def test_a_global_or_closure_variable_the_function_assigns_makes_it_run_eagerly():
    def run(compiled, where):
        minigrad.manual_seed(0)
        last = None

        def step(x):
            nonlocal last
            last = x * 3
            return x + 1

        f = step if where == "closure" else _keeps_its_last_input_in_a_global
        f = minigrad.compile(f) if compiled else f
        values = []
        for _ in range(4):
            values.append(f(minigrad.randn(2)).numpy())
            values.append((last if where == "closure" else _last).numpy())  # (a replay left the capture's)
        return values, f

    for where, label in (("global", "global '_last'"), ("closure", "closure variable 'last'")):
        compiled, caught = _run_both_warned(run, where)
        assert compiled.stats.replays == 0
        assert len(caught) == 1 and f"an assignment to {label}" in caught[0]


def test_a_functions_default_arguments_are_guarded():
    def run(compiled, what):
        minigrad.manual_seed(0)

        def counted(x, log=[]):  # noqa: B006 (the mutable default is the point)
            log.append(x.sum())
            return x * len(log)

        def scaled(x, *, scale=2.0):
            return x * scale

        f = counted if what == "a list" else scaled
        c = minigrad.compile(f) if compiled else f
        values = []
        for i in range(4):
            if what == "a number":
                f.__kwdefaults__["scale"] = float(i)
            values.append(c(minigrad.randn(2)).numpy())
        return values, c

    compiled, caught = _run_both_warned(run, "a list")
    assert compiled.stats.replays == 0
    assert len(caught) == 1 and "running eagerly from now on: a change to the default of 'log'" in caught[0]
    compiled, caught = _run_both_warned(run, "a number")
    assert compiled.stats.captures == 4
    assert "capturing again: the default of 'scale' changed: 0.0 -> 1.0" in caught[0]
