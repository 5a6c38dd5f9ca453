"""torch.backends' flags, minigrad.cuda's seeding and minigrad.onnx: readable and settable on a machine
without a GPU, with PyTorch's defaults, and the TF32 switch one switch under every spelling."""
import subprocess
import sys
from pathlib import Path

import pytest

import minigrad
import minigrad.backends.cudnn as cudnn

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def tf32_restored():
    before = minigrad.cuda.get_tf32()
    yield
    minigrad.cuda.set_tf32(before)


def test_defaults_as_pytorch_reports_them(torch):
    for name in ("enabled", "benchmark", "deterministic", "allow_tf32"):
        assert getattr(minigrad.backends.cudnn, name) == getattr(torch.backends.cudnn, name), name
    assert minigrad.backends.mps.is_available() is torch.backends.mps.is_available() is False
    m, tm = minigrad.backends.cuda.matmul, torch.backends.cuda.matmul
    assert m.allow_fp16_reduced_precision_reduction == tm.allow_fp16_reduced_precision_reduction
    assert m.allow_bf16_reduced_precision_reduction == tm.allow_bf16_reduced_precision_reduction
    assert minigrad.are_deterministic_algorithms_enabled() == torch.are_deterministic_algorithms_enabled()
    if not minigrad.cuda.is_available():
        assert m.allow_tf32 is tm.allow_tf32 is False
        assert minigrad.get_float32_matmul_precision() == torch.get_float32_matmul_precision() == "highest"


def test_flags_are_settable_from_each_spelling():
    before = (cudnn.benchmark, cudnn.deterministic)
    try:
        cudnn.benchmark, minigrad.backends.cudnn.deterministic = True, True
        assert minigrad.backends.cudnn.benchmark is True and cudnn.deterministic is True
    finally:
        cudnn.benchmark, cudnn.deterministic = before
    minigrad.use_deterministic_algorithms(True, warn_only=True)
    try:
        assert minigrad.are_deterministic_algorithms_enabled() and minigrad.is_deterministic_algorithms_warn_only_enabled()
    finally:
        minigrad.use_deterministic_algorithms(False)


def test_tf32_is_one_switch(torch, tf32_restored):
    minigrad.backends.cuda.matmul.allow_tf32 = True
    assert minigrad.cuda.get_tf32() and minigrad.get_float32_matmul_precision() == "high"
    minigrad.set_float32_matmul_precision("highest")
    assert minigrad.backends.cuda.matmul.allow_tf32 is False and not minigrad.cuda.get_tf32()
    minigrad.set_float32_matmul_precision("medium")
    assert minigrad.backends.cuda.matmul.allow_tf32 is True
    with pytest.warns(UserWarning, match="is not one of 'highest', 'high', or 'medium'") as ours:
        minigrad.set_float32_matmul_precision("x")
    with pytest.warns(UserWarning) as theirs:
        torch.set_float32_matmul_precision("x")
    assert str(ours[0].message).split(";")[0] in str(theirs[0].message)
    assert minigrad.backends.cuda.matmul.allow_tf32 is True  # a bad value changes nothing


def test_cuda_seeding_and_counting_need_no_gpu(torch):
    assert minigrad.cuda.manual_seed(1) is torch.cuda.manual_seed(1) is None
    assert minigrad.cuda.manual_seed_all(2) is torch.cuda.manual_seed_all(2) is None
    assert minigrad.cuda.seed() is None and minigrad.cuda.seed_all() is None
    if not minigrad.cuda.is_available():  # (no cupy or no GPU here: PyTorch's CPU build says the same)
        assert minigrad.cuda.is_available() is torch.cuda.is_available() is False
        assert minigrad.cuda.device_count() == torch.cuda.device_count() == 0
    else:
        assert minigrad.cuda.device_count() >= 1


def test_onnx():
    import minigrad.onnx

    assert minigrad.onnx.is_in_onnx_export() is False
    with pytest.raises(NotImplementedError, match="^minigrad.onnx.export: ONNX export is not built in minigrad"):
        minigrad.onnx.export(None, (minigrad.ones(1),), "model.onnx")


def test_these_imports_load_no_cupy_or_numba():
    code = ("import sys, minigrad, minigrad.backends.cudnn, minigrad.backends.mps, minigrad.onnx\n"
            "minigrad.backends.cuda.matmul.allow_tf32; minigrad.cuda.manual_seed(3)\n"
            "print('cupy' in sys.modules, 'numba' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120,
                         env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["False", "False"]
