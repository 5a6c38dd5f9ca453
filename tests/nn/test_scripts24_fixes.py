"""Focused tests for what the scripts of test_dl_scripts24.py found minigrad doing differently from PyTorch."""
import numpy as np
import pytest

import minigrad
import nn.functional as F


def test_custom_function_jvp_may_delete_what_forward_stashed_on_ctx(torch):
    """The forward-mode AD tutorial's Function keeps its result on ctx in forward and `del`s it in jvp."""
    def run(lib):
        class Exp(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.result = lib.exp(x)
                return ctx.result

            @staticmethod
            def jvp(ctx, g):
                out = g * ctx.result
                del ctx.result
                assert not hasattr(ctx, "result")
                return out

        fwAD = lib.autograd.forward_ad
        x = lib.tensor([0.5, -1.0, 2.0], dtype=lib.float64)
        with fwAD.dual_level():
            y = Exp.apply(fwAD.make_dual(x, lib.tensor([1.0, 2.0, 3.0], dtype=lib.float64)))
            return fwAD.unpack_dual(y).tangent.numpy()

    np.testing.assert_allclose(run(minigrad), run(torch), rtol=1e-15)
