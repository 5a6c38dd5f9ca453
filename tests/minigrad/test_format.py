"""format(tensor, spec) as PyTorch's Tensor.__format__: a 0-d tensor formats its number; others follow object's rule."""
import pytest

import minigrad
import nn

SPECS = ["", ".4f", "+.2f", ">10", "<12.3", "e", ".3e", "g", "%", "08.2f", "^9"]


def outcome(fn):
    try:
        return "ok", fn()
    except Exception as e:  # noqa: BLE001 - the error's type and text are what is compared
        return type(e).__name__, str(e).replace("torch.", "").replace("minigrad.", "")


@pytest.mark.parametrize("spec", SPECS + ["d", "x", ",", "b"])
@pytest.mark.parametrize("value, dtype", [(1.2345, "float32"), (-2.5, "float64"), (7, "int64"), (True, "bool"),
                                          (0.1, "float16")])
def test_a_0d_tensor_formats_its_number(torch, spec, value, dtype):
    ours = minigrad.tensor(value, dtype=getattr(minigrad, dtype))
    theirs = torch.tensor(value, dtype=getattr(torch, dtype))
    assert outcome(lambda: format(ours, spec)) == outcome(lambda: format(theirs, spec))


def test_the_spellings_scripts_use(torch):
    loss = minigrad.tensor(2.0, requires_grad=True) * 1.5  # a loss with a graph formats without detach()
    tloss = torch.tensor(2.0, requires_grad=True) * 1.5
    for t in (loss, tloss):
        assert f"{t:.4f}" == "3.0000" and "{:+.2f}".format(t) == "+3.00" and f"{t:>10}" == "       3.0"
        assert format(t, "e") == "3.000000e+00"


@pytest.mark.parametrize("spec", SPECS)
@pytest.mark.parametrize("values", [[1.5], [1.0, 2.0], [[3]]])
def test_other_tensors_follow_object_format(torch, spec, values):
    got = outcome(lambda: format(minigrad.tensor(values), spec))
    want = outcome(lambda: format(torch.tensor(values), spec))
    assert got == want
    if spec == "":
        assert got == ("ok", str(minigrad.tensor(values)))


@pytest.mark.parametrize("spec", ["", ".2f"])
def test_a_0d_parameter_is_not_a_plain_tensor(torch, spec):
    got = outcome(lambda: format(nn.Parameter(minigrad.tensor(2.0)), spec))
    want = outcome(lambda: format(torch.nn.Parameter(torch.tensor(2.0)), spec))
    assert got[0] == want[0]
    if spec:
        assert got == want == ("TypeError", "unsupported format string passed to Parameter.__format__")
