"""PyTorch's module paths that scripts import (`import torch` -> `import minigrad as torch`): each imports, and holds
minigrad's own objects (one module object under each name, never a second copy)."""
import importlib
import os
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

import minigrad
import minigrad.nn as nn

# (path, names a script imports from it, the module or object that holds those names in minigrad)
PATHS = [
    ("linalg", ["norm", "vector_norm", "matrix_norm", "inv", "solve", "svd"], "minigrad.linalg"),
    ("special", ["erf", "expit"], "minigrad.special"),
    ("fft", ["fft", "rfft"], "minigrad.fft"),
    ("nn.modules.batchnorm", ["BatchNorm1d", "BatchNorm2d", "SyncBatchNorm"], "minigrad.nn"),
    ("nn.modules.channelshuffle", ["ChannelShuffle"], "minigrad.nn"),
    ("nn.utils.clip_grad", ["clip_grad_norm_", "clip_grad_value_"], "minigrad.nn.utils"),
    ("nn.utils.convert_parameters", ["parameters_to_vector", "vector_to_parameters"], "minigrad.nn.utils"),
    ("optim.adamw", ["AdamW"], "minigrad.optim"),
    ("autograd.function", ["Function", "once_differentiable", "FunctionCtx", "BackwardCFunction", "InplaceFunction"],
     "minigrad.autograd.function"),
    ("autograd.profiler", ["profile", "record_function"], "minigrad.profiler"),
    ("autograd.anomaly_mode", ["detect_anomaly", "set_detect_anomaly"], "minigrad.autograd"),
    ("autograd.variable", ["Variable"], "minigrad.autograd"),
    ("distributions.chi2", ["Chi2"], "minigrad.distributions"),
    ("distributions.half_cauchy", ["HalfCauchy"], "minigrad.distributions"),
    ("distributions.one_hot_categorical", ["OneHotCategorical"], "minigrad.distributions"),
    ("utils.hooks", ["RemovableHandle"], "minigrad.autograd.function"),
    ("serialization", ["save", "load", "default_restore_location", "SourceChangeWarning"], "minigrad.serialization"),
    ("backends.cuda", ["sdp_kernel", "enable_flash_sdp", "flash_sdp_enabled", "math_sdp_enabled"],
     "minigrad.backends.cuda"),
    ("overrides", ["has_torch_function", "has_torch_function_unary", "has_torch_function_variadic",
                   "handle_torch_function", "is_tensor_like"], "minigrad.overrides"),
    ("types", ["Number", "_size", "_dtype", "_device", "Device", "_TensorOrTensors"], "minigrad.types"),
    ("nn.common_types", ["_size_1_t", "_size_2_t", "_size_3_t", "_size_any_t", "_ratio_2_t"], "minigrad.nn.common_types"),
    ("nn.modules.utils", ["_single", "_pair", "_triple", "_quadruple", "_ntuple", "_reverse_repeat_tuple"],
     "minigrad.nn.modules.utils"),
]
OPTIM = ["adam", "adamw", "sgd", "rmsprop", "adagrad", "adadelta", "adamax", "nadam", "radam", "rprop", "asgd", "lbfgs",
         "sparse_adam", "lr_scheduler", "swa_utils", "optimizer"]


@pytest.mark.parametrize("path,names,owner", PATHS, ids=[p for p, _, _ in PATHS])
def test_torch_paths_import_and_hold_minigrads_objects(path, names, owner):
    module = importlib.import_module(f"minigrad.{path}")
    assert sys.modules[f"minigrad.{path}"] is module
    holder = importlib.import_module(owner)
    for name in names:
        assert getattr(module, name) is getattr(holder, name), name


@pytest.mark.parametrize("path,names,owner", PATHS, ids=[p for p, _, _ in PATHS])
def test_the_names_are_torchs(path, names, owner):
    pytest.importorskip("torch")
    module = importlib.import_module(f"torch.{path}")
    for name in names:
        assert hasattr(module, name), name


@pytest.mark.parametrize("name", OPTIM)
def test_every_optim_submodule_exposes_its_class(name):
    torch = pytest.importorskip("torch")
    ours, theirs = importlib.import_module(f"minigrad.optim.{name}"), importlib.import_module(f"torch.optim.{name}")
    classes = [n for n in dir(theirs) if isinstance(getattr(theirs, n), type)
               and issubclass(getattr(theirs, n), torch.optim.Optimizer) and getattr(theirs, n).__module__ ==
               theirs.__name__]
    assert classes or name in ("lr_scheduler", "swa_utils")
    for n in classes:
        assert getattr(ours, n) is getattr(minigrad.optim, n)


def test_every_torch_attribute_module_minigrad_has_is_an_importable_module():
    torch = pytest.importorskip("torch")
    import types

    for name in dir(torch):
        module = getattr(torch, name)
        if not isinstance(module, types.ModuleType) or module.__name__ != f"torch.{name}":
            continue  # (torch.functools, ...: the standard library's, not torch's modules)
        try:
            ours = getattr(minigrad, name)
        except AttributeError:
            continue
        assert importlib.import_module(f"minigrad.{name}") is ours, name
        assert sys.modules[f"minigrad.{name}"] is ours, name


def test_linalg_is_one_module_under_both_spellings():
    import minigrad.linalg
    from minigrad.linalg import norm

    assert minigrad.linalg is sys.modules["minigrad.linalg"]
    torch = pytest.importorskip("torch")
    x = [[1.0, -2.0], [3.0, 4.0]]
    assert norm(minigrad.tensor(x)).item() == pytest.approx(torch.linalg.norm(torch.tensor(x)).item())
    out = minigrad.empty(())
    minigrad.linalg.vector_norm(minigrad.tensor([3.0, 4.0]), out=out)  # (out= as PyTorch's)
    assert out.item() == 5.0


@pytest.mark.parametrize("value", [3, (3,), (3, 5), [1, 2], (1, 2, 3, 4), "ab", 2.5, None])
def test_ntuple_helpers_as_torchs(value):
    pytest.importorskip("torch")
    from torch.nn.modules import utils as theirs

    from minigrad.nn.modules import utils as ours

    for name in ("_single", "_pair", "_triple", "_quadruple"):
        assert getattr(ours, name)(value) == getattr(theirs, name)(value), name
        assert getattr(ours, name).__name__ == getattr(theirs, name).__name__
    assert ours._ntuple(5)(value) == theirs._ntuple(5)(value)
    if isinstance(value, (tuple, list)):
        assert ours._reverse_repeat_tuple(value, 2) == theirs._reverse_repeat_tuple(value, 2)


def test_common_types_and_types_are_torchs_aliases():
    pytest.importorskip("torch")
    import torch.nn.common_types as theirs
    import torch.types as their_types

    import minigrad.nn.common_types as ours
    import minigrad.types as our_types

    for name in [n for n in vars(theirs) if n.startswith(("_size", "_ratio", "_scalar"))]:
        assert str(getattr(ours, name)).replace("~", "") == str(getattr(theirs, name)).replace("~", ""), name
    assert our_types.Number == their_types.Number and our_types._Number == their_types._Number
    assert our_types._dtype is minigrad.dtype and our_types._device is minigrad.device


def test_norm_base_is_the_batch_and_instance_norms_base_as_torchs():
    torch = pytest.importorskip("torch")
    from minigrad.nn.modules.batchnorm import _BatchNorm, _NormBase

    for name in ("BatchNorm1d", "BatchNorm2d", "SyncBatchNorm", "InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d"):
        for base in ("_NormBase", "_BatchNorm"):
            theirs = getattr(torch.nn.modules.batchnorm, base)
            assert issubclass(getattr(nn, name), {"_NormBase": _NormBase, "_BatchNorm": _BatchNorm}[base]) == \
                issubclass(getattr(torch.nn, name), theirs), (name, base)


def test_hook_handles_are_one_class():
    from minigrad.utils.hooks import RemovableHandle

    m = nn.Linear(2, 2)
    t = minigrad.ones(2, requires_grad=True)
    y = t * 2
    handles = [m.register_forward_hook(lambda *a: None), m.register_forward_pre_hook(lambda *a: None),
               m.register_full_backward_hook(lambda *a: None), t.register_hook(lambda g: g),
               y.register_hook(lambda g: g), y.grad_fn.register_hook(lambda *a: None),
               y.grad_fn.register_prehook(lambda g: g), t.register_post_accumulate_grad_hook(lambda p: None)]
    assert all(isinstance(h, RemovableHandle) for h in handles)
    assert len({h.id for h in handles}) == len(handles)


def test_a_tensor_hook_registered_twice_is_removed_once_per_handle():
    # (by its handle's id, as PyTorch's: the same function registered twice runs twice, then once)
    t = minigrad.ones(2, requires_grad=True)
    calls = []

    def hook(g):
        calls.append(1)

    first = t.register_hook(hook)
    t.register_hook(hook)
    (t * 2).sum().backward()
    assert len(calls) == 2
    with first:
        pass  # (leaving the block removes it)
    (t * 2).sum().backward()
    assert len(calls) == 3


def test_function_ctx_is_the_ctx_with_and_without_grad():
    from minigrad.autograd.function import BackwardCFunction, FunctionCtx

    seen = []

    class Double(minigrad.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            seen.append(isinstance(ctx, FunctionCtx))
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2

    x = minigrad.ones(2, requires_grad=True)
    y = Double.apply(x)
    with minigrad.no_grad():
        Double.apply(x)
    assert seen == [True, True] and isinstance(y.grad_fn, BackwardCFunction)


def test_overrides_say_no_argument_overrides_minigrad():
    from minigrad import overrides

    t = minigrad.ones(1)
    assert not overrides.has_torch_function((t,)) and not overrides.has_torch_function_unary(t)
    assert not overrides.has_torch_function_variadic(t, 1)
    assert overrides.is_tensor_like(t) and not overrides.is_tensor_like(1)
    # (a plain tensor's __torch_function__ runs the function, as PyTorch's does: tests/minigrad/test_api29.py)
    assert overrides.handle_torch_function(minigrad.add, (t,), t, t).tolist() == [2.0]
    with pytest.raises(TypeError, match="no implementation found for 'minigrad.add'"):
        overrides.handle_torch_function(minigrad.add, (1,), t, t)


def test_sdp_kernel_sets_and_restores_the_switches_as_torchs():
    torch = pytest.importorskip("torch")
    import minigrad.backends.cuda as ours

    theirs = torch.backends.cuda
    for b in (ours, theirs):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            with b.sdp_kernel(enable_flash=False, enable_math=True):
                inside = (b.flash_sdp_enabled(), b.math_sdp_enabled(), b.mem_efficient_sdp_enabled())
        assert [x.category for x in w] == [FutureWarning]
        assert inside == (False, True, True)
        assert b.flash_sdp_enabled() and b.cudnn_sdp_enabled()


def test_default_restore_location_in_map_location(tmp_path):
    from minigrad.serialization import default_restore_location

    path = tmp_path / "t.pt"
    minigrad.save({"w": minigrad.arange(3.0)}, path)
    got = minigrad.load(path, map_location=lambda storage, loc: default_restore_location(storage, "cpu"))
    assert got["w"].tolist() == [0.0, 1.0, 2.0]
    with pytest.raises(RuntimeError, match="don't know how to restore data location"):
        default_restore_location(minigrad.arange(3.0), "tpu")


def test_no_module_is_loaded_twice():
    for path, _, _ in PATHS:
        importlib.import_module(f"minigrad.{path}")
    packages = tuple(str(Path(p).resolve()) + os.sep for p in (minigrad.__path__[0], Path(minigrad.__path__[0]).parent / "nn"))
    by_file = {}
    for module in list(sys.modules.values()):  # (the packages' files: pytest may load a test file twice)
        f = getattr(module, "__file__", None)
        if f and str(Path(f).resolve()).startswith(packages):
            by_file.setdefault(f, set()).add(id(module))
    assert by_file
    assert not {f: ids for f, ids in by_file.items() if len(ids) > 1}


def test_import_minigrad_loads_none_of_the_new_modules():
    code = ("import sys, minigrad; print(sorted(m for m in sys.modules if m in ('minigrad.linalg', 'minigrad.types', "
            "'minigrad.overrides', 'minigrad.utils.hooks', 'nn', 'minigrad.profiler')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
