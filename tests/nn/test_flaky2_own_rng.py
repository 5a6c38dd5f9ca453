"""own_rng: a module's tests that draw from its RNG draw the same data whichever tests ran before them."""
import zlib

import numpy as np
import pytest

import test_functional
import test_grid_sample

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
