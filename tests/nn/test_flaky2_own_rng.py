"""A test's data is its own: the same whichever tests ran before it (own_rng for a module's shared RNG; no draws
from numpy's global generator)."""
import zlib

import numpy as np
import pytest

import test_functional
import test_grid_sample
import test_torch_compat_nn

RNG = np.random.default_rng(0)
pytestmark = pytest.mark.usefixtures("own_rng")


def _own_draws(request):
    return np.random.default_rng(zlib.crc32(request.node.nodeid.encode())).standard_normal(5)


def test_a_test_that_draws():
    RNG.standard_normal(100)


def test_the_next_tests_draws_are_its_own(request):
    np.testing.assert_array_equal(RNG.standard_normal(5), _own_draws(request))


@pytest.mark.parametrize("module", [test_functional, test_grid_sample])
def test_modules_drawing_from_one_rng_restart_it_per_test(module):
    marks = module.pytestmark if isinstance(module.pytestmark, list) else [module.pytestmark]
    assert any(m.name == "usefixtures" and "own_rng" in m.args for m in marks)


def _global_draw(*a, **k):
    raise AssertionError("drew from numpy's global generator: its state is what the tests before left")


@pytest.mark.parametrize("test", [test_torch_compat_nn.test_mse_loss_broadcast_value_and_module,
                                  test_torch_compat_nn.test_kl_div_with_the_deprecated_args])
def test_value_comparisons_draw_from_their_own_generator(monkeypatch, test):
    pytest.importorskip("torch")
    for name in ("rand", "randn", "random", "standard_normal"):
        monkeypatch.setattr(np.random, name, _global_draw)
    test()
