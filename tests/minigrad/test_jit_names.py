"""minigrad.jit: TorchScript's names run model code as Python (minigrad has no TorchScript)."""
import numpy as np
import pytest

import minigrad
import minigrad.jit as jit
import minigrad.nn as nn


@jit.script
def gelu_tanh(x):
    return 0.5 * x * (1.0 + minigrad.tanh(0.7978845608028654 * (x + 0.044715 * x ** 3)))


class Block(nn.Module):
    scale: jit.Final[float]

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.scale = 2.0

    @jit.ignore
    def python_only(self, x):
        return x

    @jit.unused
    def unused_branch(self, x):
        return x

    def forward(self, x):
        h = gelu_tanh(self.fc(x)) * self.scale
        if not jit.is_scripting() and not jit.is_tracing():
            h = self.python_only(h)
        return h.sum() if h.shape[0] > 2 else h


def test_scripted_and_traced_code_runs_as_python():
    minigrad.manual_seed(0)
    m = Block()
    x = minigrad.randn(3, 4)
    scripted, traced = jit.script(m), jit.trace(m, (x[:2],))
    assert scripted is m and traced is m and not isinstance(m, jit.ScriptModule)
    np.testing.assert_array_equal(traced(x[:2]).detach().numpy(), m(x[:2]).detach().numpy())
    # each call takes its own branch (PyTorch's trace would keep the example's)
    assert traced(x).ndim == 0 and traced(x[:2]).ndim == 2
    assert jit.annotate(list, []) == [] and jit.wait(jit.fork(lambda a, b: a + b, 1, b=2)) == 3


def test_gelu_written_for_torchscript_matches_pytorch():
    torch = pytest.importorskip("torch")
    x = np.linspace(-3, 3, 13, dtype=np.float32)
    def gelu(t):
        return 0.5 * t * (1.0 + torch.tanh(0.7978845608028654 * (t + 0.044715 * t ** 3)))

    want = torch.jit.script(gelu)
    np.testing.assert_allclose(gelu_tanh(minigrad.tensor(x)).numpy(), want(torch.tensor(x)).numpy(), rtol=1e-6, atol=1e-6)
    assert torch.jit.is_scripting() is jit.is_scripting() is False


@pytest.mark.parametrize("call", [lambda: jit.save(nn.Linear(2, 2), "m.pt"), lambda: jit.load("m.pt")])
def test_no_torchscript_archive_says_so_in_one_line(call):
    with pytest.raises(NotImplementedError, match=r"minigrad\.jit\.(save|load): .*state_dict") as e:
        call()
    assert "\n" not in str(e.value)


def test_ignore_with_and_without_arguments():
    def f(x):
        return x + 1

    assert jit.ignore(f) is f and jit.ignore(drop=True)(f) is f and jit.unused(f) is f and jit.export(f) is f
    assert minigrad.jit is jit
