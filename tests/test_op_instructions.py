"""bench/op_instructions.py's pieces of the mlp step: the same statements on minigrad and on PyTorch, named
in the order its counting run reports them, the same shapes, dtypes and grad flags on both (the counts
compare like with like)."""
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # bench/ (not a package here)

from bench import op_instructions  # noqa: E402

torch = pytest.importorskip("torch")


def test_mlp_pieces_are_named_in_order_and_run_on_both():
    for fw in ("minigrad", "torch"):
        calls = op_instructions.mlp_pieces(op_instructions.framework(fw))
        assert list(calls) + ["(loop)"] == op_instructions.mlp_pieces_names
        for call in calls.values():
            call()


def test_mlp_pieces_make_the_same_shapes_and_dtypes_on_both():
    # (not the same values: minigrad's generator draws its own stream; the work per statement is alike)
    mine = op_instructions.mlp_pieces(op_instructions.framework("minigrad"))
    theirs = op_instructions.mlp_pieces(op_instructions.framework("torch"))
    for name in ("randint", "X[ix]", "C[X[ix]]", ".view", "@ W1", "+ b1", "tanh", "@ W2", "+ b2", "Y[ix]",
                 "cross_entropy", "forward"):
        a, b = mine[name](), theirs[name]()
        assert (tuple(a.shape), str(a.dtype).split(".")[1]) == (tuple(b.shape), str(b.dtype).split(".")[1]), name
        assert a.requires_grad == b.requires_grad, name


def test_poly_pieces_are_named_in_order_and_run_on_both():
    for fw in ("minigrad", "torch"):
        calls = op_instructions.poly_pieces(op_instructions.framework(fw))
        assert list(calls) + ["(loop)"] == op_instructions.poly_pieces_names == op_instructions.PIECES_NAMES["poly"]
        for call in calls.values():
            call()


def test_poly_pieces_make_the_same_shapes_and_dtypes_on_both():
    mine = op_instructions.poly_pieces(op_instructions.framework("minigrad"))
    theirs = op_instructions.poly_pieces(op_instructions.framework("torch"))
    for name in ("randn", "x ** 2", "x ** 3", "x ** 4", "cat", "make_features", "f(x)", "fc", "smooth_l1"):
        a, b = mine[name](), theirs[name]()
        assert (tuple(a.shape), str(a.dtype).split(".")[1]) == (tuple(b.shape), str(b.dtype).split(".")[1]), name
        assert a.requires_grad == b.requires_grad, name
    assert type(mine["step"]()) is type(theirs["step"]()) is float
