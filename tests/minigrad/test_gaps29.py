"""PyTorch's answers to calls that earlier sessions left answered otherwise: argument counts in the argument
parser's words (a method's counted without self), ..."""

import pytest

import minigrad as mg

torch = pytest.importorskip("torch")


def _raised(L, call):
    with pytest.raises(Exception) as info:
        call(L)
    return type(info.value), str(info.value)


def _same_error(call):
    assert _raised(mg, call) == _raised(torch, call)


ARITY = {
    "clone_method": lambda L: L.ones(2).clone(1),
    "clone_function": lambda L: L.clone(L.ones(2), 1),
    "transpose_function": lambda L: L.transpose(L.ones(2, 3), 0, 1, 2),
    "unsqueeze_none": lambda L: L.ones(2).unsqueeze(),
    "unsqueeze_two": lambda L: L.ones(2).unsqueeze(0, 1),
    "unsqueeze_function_none": lambda L: L.unsqueeze(L.ones(2)),
    "unsqueeze_inplace_two": lambda L: L.ones(2).unsqueeze_(0, 1),
    "logsumexp_no_dim": lambda L: L.ones(2).logsumexp(),
    "select_no_index": lambda L: L.ones(2, 3).select(0),
}


@pytest.mark.parametrize("name", sorted(ARITY))
def test_argument_count_is_answered_as_pytorch(name):
    _same_error(ARITY[name])


def test_argument_count_fix_keeps_the_calls_that_fit():
    x = torch.arange(6.).reshape(2, 3)
    t = mg.tensor(x.numpy())
    assert t.transpose(0, 1).tolist() == x.transpose(0, 1).tolist()
    assert mg.transpose(t, 1, 0).tolist() == torch.transpose(x, 1, 0).tolist()
    assert t.clone(memory_format=mg.contiguous_format).tolist() == x.clone(memory_format=torch.contiguous_format).tolist()
    assert t[0, 1].item() == x[0, 1].item() and t.detach().tolist() == x.detach().tolist()


@pytest.mark.parametrize("call", ["t.expand(2, 3)", "t.expand_as(t)", "t.expand(-1, 3)", "L.broadcast_to(t, (2, 3))",
                                  "t.reshape(2, 3)", "t.view(2, 3)", "t.contiguous()", "t.to(L.float32)", "t.float()",
                                  "t.detach()"])
def test_same_shape_views_are_new_tensors_where_pytorch_makes_them(call):
    def answer(L):
        t = L.ones(2, 3, requires_grad=True) * 1
        out = eval(call, {"L": L, "t": t})
        out.sum().backward() if out.requires_grad else None
        return out is t, type(out.grad_fn).__name__, out.shape == t.shape
    assert answer(mg) == answer(torch)
