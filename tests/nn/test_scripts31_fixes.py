"""Fixes found by the scripts of test_dl_scripts31.py (nn.DataParallel without a GPU; interpolate's and the adaptive
poolings' checks of a size naming the wrong number of dims, in PyTorch's order; prelu's one channel below two dims),
each checked against PyTorch."""
import numpy as np
import pytest

import minigrad
import nn


def test_data_parallel_without_a_gpu_keeps_only_the_module(torch):
    if torch.cuda.is_available() or minigrad.cuda.is_available():
        pytest.skip("PyTorch's DataParallel without a GPU")
    for kw in ({}, dict(device_ids=[0], output_device=0, dim=1)):
        ours, theirs = nn.DataParallel(nn.Linear(2, 2), **kw), torch.nn.DataParallel(torch.nn.Linear(2, 2), **kw)
        assert ours.device_ids == theirs.device_ids == []
        for name in ("dim", "output_device"):
            with pytest.raises(AttributeError) as ours_error:
                getattr(ours, name)
            with pytest.raises(AttributeError) as theirs_error:
                getattr(theirs, name)
            assert str(ours_error.value) == str(theirs_error.value)


def outcome(lib, fn):
    """('ok', shape) or (error type, its text with the library's name dropped)."""
    try:
        return "ok", tuple(fn(lib).shape)
    except Exception as e:  # noqa: BLE001 (the type and text are what is compared)
        return type(e).__name__, str(e).replace("torch.", "").replace("minigrad.", "")


def tensor(lib, shape):
    return lib.tensor(np.ones(shape))


# an image without its batch dim given a 2-D size (a frequent slip), and sizes of the wrong length for every rank
RESIZES = [(mode, shape, arg, value) for mode in ("nearest", "bilinear", "bicubic", "linear", "trilinear", "area")
           for shape in [(3, 4), (3, 4, 4), (1, 3, 4, 4), (1, 1, 2, 4, 4)]
           for arg, value in [("size", (2, 2)), ("size", (2,)), ("scale_factor", (2.0, 2.0, 2.0)), ("size", 2),
                              ("scale_factor", 2.0)]]


@pytest.mark.parametrize("mode, shape, arg, value", RESIZES)
def test_interpolate_checks_the_size_length_before_the_inputs_rank(torch, mode, shape, arg, value):
    def call(lib):
        funcs = lib.nn.functional
        return funcs.interpolate(tensor(lib, shape), mode=mode, **{arg: value})

    assert outcome(minigrad, call) == outcome(torch, call)


POOLS = [(name, shape, size) for name in ("adaptive_avg_pool2d", "adaptive_max_pool2d", "adaptive_avg_pool3d",
                                          "adaptive_max_pool3d")
         for shape in [(2,), (2, 2), (3, 3, 3), (2, 3, 3, 3)]
         for size in [1, (1, 1), (None, None), (1, 1, 1), [2, 2, 2, 2]]]


@pytest.mark.parametrize("name, shape, size", POOLS)
def test_adaptive_pools_check_a_sequence_size_against_the_inputs_rank_first(torch, name, shape, size):
    def call(lib):
        out = getattr(lib.nn.functional, name)(tensor(lib, shape), size)
        return out

    assert outcome(minigrad, call) == outcome(torch, call)


def test_adaptive_avg_pool2d_module_on_an_unbatched_vector(torch):
    calls = [lambda lib: lib.nn.AdaptiveAvgPool2d((1, 1))(tensor(lib, (2, 3))),
             lambda lib: lib.nn.AdaptiveMaxPool3d((1, 1, 1))(tensor(lib, (2, 3, 3)))]
    for call in calls:
        assert outcome(minigrad, call) == outcome(torch, call)
        assert outcome(minigrad, call)[0] == "ValueError"


@pytest.mark.parametrize("shape, n", [((3,), 3), ((1,), 3), ((3,), 1), ((), 1), ((), 3), ((2, 3), 3), ((2, 1), 3),
                                      ((2, 3, 4), 3)])
def test_prelu_counts_one_channel_below_two_dims(torch, shape, n):
    def call(lib):
        return lib.nn.functional.prelu(tensor(lib, shape), lib.tensor(np.full(n, 0.25)))

    assert outcome(minigrad, call) == outcome(torch, call)


@pytest.mark.parametrize("mode, size", [("nearest", (2.5, 2)), ("bilinear", [3.0, 3]), ("nearest", (np.int64(3), 5)),
                                        ("lanczos", (2,)), ("bilinear", (2, True))])
def test_interpolate_checks_the_sizes_types_and_length_first(torch, mode, size):
    def call(lib):
        return lib.nn.functional.interpolate(tensor(lib, (1, 1, 4, 4)), size=size, mode=mode)

    assert outcome(minigrad, call) == outcome(torch, call)
