"""Every error the spec names, tested for its text (and against PyTorch's text where installed)."""
import re

import numpy as np
import pytest

import minigrad as mg

VERSION_MSG = (
    r"one of the variables needed for gradient computation has been modified by an inplace operation: "
    r"\[minigrad\.FloatTensor \[3\]\], which is output 0 of Exp, is at version 1; expected version 0 instead\."
)


def error_of(fn):
    """The exception `fn()` raises (the test fails if it raises nothing)."""
    try:
        fn()
    except Exception as e:  # noqa: BLE001 - any type, compared by the caller
        return e
    pytest.fail("no exception was raised")


def normalize(msg):
    """PyTorch's words with minigrad's names: torch.X -> minigrad.X."""
    return msg.replace("torch.", "minigrad.")


def same_error(torch, mg_fn, torch_fn, upto=None):
    """Both raise the same exception type with the same text (up to `upto`, after normalizing)."""
    got, want = error_of(mg_fn), error_of(torch_fn)
    g, w = normalize(str(got)), normalize(str(want))
    if upto is not None:
        g, w = g[: g.index(upto) + len(upto)], w[: w.index(upto) + len(upto)]
    assert g == w
    assert isinstance(got, type(want)) or type(got).__name__ == type(want).__name__
    return got


# ---- backward without a graph -------------------------------------------------------------
def test_backward_without_grad_fn():
    with pytest.raises(RuntimeError, match="^element 0 of tensors does not require grad and does not have a grad_fn$"):
        mg.ones(3).sum().backward()


def test_backward_without_grad_fn_names_the_element():
    x = mg.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match="element 1 of tensors does not require grad"):
        mg.autograd.backward([x.sum(), mg.ones(1).sum()])


def test_backward_without_grad_fn_like_torch(torch):
    same_error(torch, lambda: mg.ones(3).sum().backward(), lambda: torch.ones(3).sum().backward())


def test_non_scalar_backward():
    x = mg.ones(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="^grad can be implicitly created only for scalar outputs$"):
        (x * 2).backward()


def test_non_scalar_backward_like_torch(torch):
    same_error(
        torch,
        lambda: (mg.ones(3, requires_grad=True) * 2).backward(),
        lambda: (torch.ones(3, requires_grad=True) * 2).backward(),
    )


# ---- freed graph ---------------------------------------------------------------------------
def test_second_backward_through_freed_graph():
    x = mg.tensor(2.0, requires_grad=True)
    y = x.exp() * x
    y.backward()
    with pytest.raises(RuntimeError) as info:
        y.backward()
    msg = str(info.value)
    assert msg.startswith(
        "Trying to backward through the graph a second time (or directly access saved tensors after they "
        "have already been freed). "
    )
    assert "retain_graph=True" in msg


def test_freed_graph_like_torch(torch):
    def run(L):
        x = L.tensor(2.0, requires_grad=True)
        y = x.exp() * x
        y.backward()
        y.backward()

    same_error(torch, lambda: run(mg), lambda: run(torch), upto="Specify retain_graph=True")


def test_autograd_grad_twice_through_freed_graph():
    x = mg.tensor(2.0, requires_grad=True)
    y = x * x
    mg.autograd.grad(y, x)
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
        mg.autograd.grad(y, x)


def test_saved_tensor_access_after_free():
    x = mg.tensor(2.0, requires_grad=True)
    y = x.exp()
    y.backward()
    with pytest.raises(RuntimeError, match="directly access saved tensors after they have already been freed"):
        y.grad_fn._saved_result  # noqa: B018


# ---- in-place errors --------------------------------------------------------------------------
@pytest.mark.parametrize(
    "op",
    [
        lambda t: t.add_(1), lambda t: t.mul_(2), lambda t: t.sub_(1), lambda t: t.div_(2), lambda t: t.zero_(),
        lambda t: t.fill_(1.0), lambda t: t.copy_(mg.zeros(3)), lambda t: t.clamp_(0, 1),
        lambda t: t.masked_fill_(mg.tensor([True, False, True]), 0.0), lambda t: t.__iadd__(1),
        lambda t: t.__imul__(2), lambda t: t.__setitem__(0, 1.0),
    ],
)
def test_inplace_on_leaf_that_requires_grad(op):
    x = mg.ones(3, requires_grad=True)
    # (t[0] = v writes a view of the leaf: PyTorch's text says so)
    with pytest.raises(RuntimeError, match=r"^(a view of )?a leaf Variable that requires grad is being used in an "
                                           r"in-place operation\.$"):
        op(x)
    assert x._version == 0
    np.testing.assert_array_equal(x.detach().numpy(), 1.0)


def test_inplace_on_leaf_like_torch(torch):
    same_error(torch, lambda: mg.ones(3, requires_grad=True).add_(1), lambda: torch.ones(3, requires_grad=True).add_(1))


def test_saved_output_modified_in_place():
    x = mg.ones(3, requires_grad=True)
    y = x.exp()
    with mg.no_grad():
        y.add_(1)
    with pytest.raises(RuntimeError, match="^" + VERSION_MSG):
        y.sum().backward()


def test_saved_input_modified_in_place_names_its_node():
    x = mg.ones(3, requires_grad=True)
    y = x.exp()
    z = y * y
    with mg.no_grad():
        y.add_(1)
    with pytest.raises(RuntimeError, match="^" + VERSION_MSG):
        z.sum().backward()


def test_saved_leaf_modified_in_place_has_no_node():
    x = mg.ones(3, requires_grad=True)
    z = x * x
    with mg.no_grad():
        x.add_(1)
    with pytest.raises(RuntimeError) as info:
        z.sum().backward()
    assert "[minigrad.FloatTensor [3]] is at version 1; expected version 0 instead." in str(info.value)


@pytest.mark.parametrize("case", ["output_no_grad", "output_rebased", "input_of_mul", "leaf", "other_leaf", "double"])
def test_version_errors_like_torch(torch, case):
    def run(L):
        dt = L.float64 if case == "double" else L.float32
        x = L.ones(2, 3, dtype=dt, requires_grad=True)
        w = L.ones(2, 3, dtype=dt)
        if case == "output_no_grad":
            y = x.exp()
            with L.no_grad():
                y.add_(1)
            out = y
        elif case == "output_rebased":
            y = x.exp()
            y.mul_(2)
            out = y
        elif case == "input_of_mul":
            y = x * 2
            out = y * y
            y.add_(1)
        elif case == "leaf":
            out = x * x
            with L.no_grad():
                x.add_(1)
        elif case == "other_leaf":
            out = x * w
            w.add_(1)
        else:
            y = x.exp()
            out = y.sum() * y
            y.mul_(2)
        out.sum().backward()

    same_error(torch, lambda: run(mg), lambda: run(torch), upto="instead.")


@pytest.mark.parametrize("dtype", ["int64", "int32", "uint8", "bool"])
@pytest.mark.parametrize("bounds", [(0.5, 2), (None, 1.5), ("t0.5", None), (0, "t1.5")])
def test_integer_clamp_inplace_float_bounds_like_torch(torch, dtype, bounds):
    """`ids.clamp_(0.5, 2)`: PyTorch refuses the float result in its words (the dtype's C++ name when a
    bound is a number, its legacy name when all are tensors), not numpy's casting complaint."""
    def run(L):
        lo, hi = (L.tensor(float(b[1:])) if isinstance(b, str) else b for b in bounds)
        return L.zeros(3, dtype=getattr(L, dtype)).clamp_(lo, hi)

    same_error(torch, lambda: run(mg), lambda: run(torch))


# ---- shapes ---------------------------------------------------------------------------------
def test_broadcast_mismatch_names_the_sizes():
    with pytest.raises(RuntimeError) as info:
        mg.ones(2, 3) + mg.ones(4, 3)
    assert str(info.value) == "The size of tensor a (2) must match the size of tensor b (4) at non-singleton dimension 0"


@pytest.mark.parametrize(
    "op", [lambda a, b: a + b, lambda a, b: a - b, lambda a, b: a * b, lambda a, b: a / b, lambda a, b: a**b,
           lambda a, b: mg.maximum(a, b), lambda a, b: mg.where(a > 0, a, b), lambda a, b: a == b]
)
def test_every_binary_op_checks_broadcast(op):
    with pytest.raises(RuntimeError, match=r"^The size of tensor a \(3\) must match the size of tensor b \(2\) at "
                       r"non-singleton dimension 1$"):
        op(mg.ones(2, 3), mg.ones(3, 2))


def test_broadcast_mismatch_text_is_torchs(torch):
    got = error_of(lambda: mg.ones(2, 3) * mg.ones(3, 2))
    want = error_of(lambda: torch.ones(2, 3) * torch.ones(3, 2))
    assert str(got) == str(want)


@pytest.mark.parametrize("sizes, dim", [((32, 7, 7), 1), ((-1, 7, 7), 1), ((3, 5), -1), ((0, -1), 1), ((-1, 0), 1)])
def test_unflatten_mismatch_text_is_torchs(torch, sizes, dim):
    # nn.Unflatten(1, (32, 7, 7)) in a decoder fed the wrong width: PyTorch names the dim, not the whole shape
    same_error(torch, lambda: mg.zeros(2, 100).unflatten(dim, sizes), lambda: torch.zeros(2, 100).unflatten(dim, sizes))
    same_error(torch, lambda: mg.nn.Unflatten(dim, sizes)(mg.zeros(2, 100)),
               lambda: torch.nn.Unflatten(dim, sizes)(torch.zeros(2, 100)))


@pytest.mark.parametrize(
    "sa, sb",
    [((2, 3), (4, 3)), ((3,), (4,)), ((2, 3), (4,)), ((3,), (4, 5)), ((2, 2, 3), (2, 4, 3)), ((2, 3, 4), (3, 4, 5)),
     ((2, 3, 4), (5, 6)), ((5,), (2, 3, 4))],
)
def test_matmul_mismatch_is_pytorchs_text(torch, sa, sb):
    # the words of the kernel PyTorch's matmul runs for these ranks (dot, mv, a folded mm, bmm)
    same_error(torch, lambda: mg.ones(*sa) @ mg.ones(*sb), lambda: torch.ones(*sa) @ torch.ones(*sb))


def test_matmul_2d_mismatch_like_torch(torch):
    same_error(torch, lambda: mg.ones(2, 3) @ mg.ones(4, 3), lambda: torch.ones(2, 3) @ torch.ones(4, 3))


def test_matmul_of_scalars():
    with pytest.raises(RuntimeError, match="both arguments to matmul need to be at least 1D"):
        mg.tensor(1.0) @ mg.ones(2)


def test_backward_gradient_of_wrong_shape():
    x = mg.ones(3, requires_grad=True)
    with pytest.raises(RuntimeError, match=r"Mismatch in shape: grad_output\[0\] has a shape of .*\[4\].* and output\[0\] has a shape of .*\[3\]"):
        (x * 2).backward(mg.ones(4))


def test_backward_gradient_of_wrong_shape_like_torch(torch):
    same_error(
        torch,
        lambda: (mg.ones(3, requires_grad=True) * 2).backward(mg.ones(4)),
        lambda: (torch.ones(3, requires_grad=True) * 2).backward(torch.ones(4)),
    )


def test_autograd_grad_output_wrong_shape():
    x = mg.ones(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="Mismatch in shape"):
        mg.autograd.grad(x * 2, x, grad_outputs=mg.ones(2, 3))


@pytest.mark.parametrize(
    "fn",
    [lambda L: L.ones(3).view(2, 2), lambda L: L.ones(2, 3).reshape(4), lambda L: L.ones(2, 3).sum(5),
     lambda L: L.cat([L.ones(2, 3), L.ones(2, 4)]), lambda L: L.ones(2, 3).expand(3, 3),
     lambda L: L.ones(3).item(), lambda L: L.ones(3, requires_grad=True).numpy(),
     lambda L: L.ones(3).masked_fill(L.tensor([1, 0, 1]), 0.0), lambda L: L.ones(3, 4)[1, 2, 3],
     lambda L: L.ones(3)[5], lambda L: L.ones(3, 4)[1, 7], lambda L: L.ones(3, 4)[:, -5],
     lambda L: L.ones(3, 4)[L.tensor([0, 5])], lambda L: L.ones(3)[::-1], lambda L: L.ones(2, 3).permute(0, 0),
     lambda L: L.ones(2, 3).transpose(0, 2), lambda L: L.ones(3).gather(0, L.tensor([5])),
     lambda L: L.autograd.grad((L.ones(3, requires_grad=True) * 2).sum(), L.ones(3))],
)
def test_misc_errors_like_torch(torch, fn):
    got, want = error_of(lambda: fn(mg)), error_of(lambda: fn(torch))
    assert isinstance(got, type(want)) or type(got).__name__ == type(want).__name__
    g, w = normalize(str(got)), normalize(str(want))
    # same leading words (minigrad may add the shapes involved in parentheses)
    assert g.startswith(w[:40]), (g, w)


# ---- bad input ----------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", [mg.int64, mg.int32, mg.bool])
def test_int_tensor_cannot_require_grad(dtype):
    pat = re.compile(r"only Tensors of floating point.*can require gradients", re.IGNORECASE)
    with pytest.raises(RuntimeError, match=pat):
        mg.tensor([1, 2], dtype=dtype, requires_grad=True)
    with pytest.raises(RuntimeError, match=pat):
        mg.ones(2, dtype=dtype).requires_grad_()
    with pytest.raises(RuntimeError, match=pat):
        mg.zeros(2, dtype=dtype, requires_grad=True)
    with pytest.raises(RuntimeError, match=pat):
        mg.arange(3, requires_grad=True)


def test_int_tensor_requires_grad_like_torch(torch):
    # PyTorch's two texts, word for word: the factory's names complex dtypes, requires_grad_'s does not
    for make in (lambda L: L.tensor([1, 2], requires_grad=True), lambda L: L.tensor([1, 2]).requires_grad_()):
        got, want = error_of(lambda make=make: make(mg)), error_of(lambda make=make: make(torch))
        assert type(got) is type(want) and str(got) == str(want)


def test_float_to_int_conversion_leaves_graph():
    x = mg.ones(3, requires_grad=True)
    i = x.long()
    assert i.dtype == mg.int64 and not i.requires_grad and i.grad_fn is None


@pytest.mark.parametrize(
    "index, text",
    [(5, "index 5 is out of bounds for dimension 0 with size 3"), (-4, "index -4 is out of bounds for dimension 0 with size 3"),
     ((0, 9), "index 9 is out of bounds for dimension 1 with size 4"), ((0, 1, 2), "too many indices for tensor of dimension 2"),
     ((Ellipsis, 4), "index 4 is out of bounds for dimension 1 with size 4")],
)
def test_indexing_out_of_range(index, text):
    t = mg.ones(3, 4, requires_grad=True)
    with pytest.raises(IndexError, match=re.escape(text)):
        t[index]
    with pytest.raises(IndexError, match=re.escape(text)):
        t.detach()[index]


def test_tensor_index_out_of_range():
    t = mg.ones(3, 4, requires_grad=True)
    with pytest.raises(IndexError, match="index 5 is out of bounds for dimension 0 with size 3"):
        t[mg.tensor([0, 5])]
    with pytest.raises(IndexError, match="out of bounds"):
        t[:, mg.tensor([4])]
    with pytest.raises(IndexError, match="mask"):
        t[mg.tensor([True, False])]
    with pytest.raises(IndexError, match="tensors used as indices must be long, int, byte or bool tensors"):
        t[mg.tensor([0.0])]
    with pytest.raises(IndexError, match="valid indices"):
        t[1.0]


def test_setitem_out_of_range_and_bad_shape():
    t = mg.zeros(3, 4)
    with pytest.raises(IndexError, match="index 3 is out of bounds for dimension 0 with size 3"):
        t[3] = 1.0
    with pytest.raises(RuntimeError, match=r"The expanded size of the tensor \(4\) must match the existing size \(5\)"):
        t[0] = mg.ones(5)
    assert t._version == 0


def test_gather_out_of_range():
    with pytest.raises(RuntimeError, match="index 3 is out of bounds for dimension 1 with size 3"):
        mg.ones(2, 3).gather(1, mg.tensor([[0], [3]]))
    with pytest.raises(RuntimeError, match="index -1 is out of bounds for dimension 1 with size 3"):
        mg.ones(2, 3).gather(1, mg.tensor([[0], [-1]]))


def test_cuda_without_gpu_is_a_clear_error():
    if mg.cuda_is_available():
        pytest.skip("a GPU is present")
    for make in (lambda: mg.ones(3, device="cuda"), lambda: mg.tensor([1.0], device="cuda"),
                 lambda: mg.ones(3).to("cuda"), lambda: mg.ones(3).cuda(), lambda: mg.randn(2, device="cuda"),
                 lambda: mg.zeros(2, device=mg.device("cuda:0"))):
        with pytest.raises(RuntimeError, match="cuda") as info:
            make()
        assert "cupy" in str(info.value) or "GPU" in str(info.value)


def test_bad_device_string():
    with pytest.raises(RuntimeError, match="Expected one of cpu, cuda, ipu, xpu, .* device type at start of device string: tpu"):
        mg.ones(2, device="tpu")


def test_bool_of_multi_element_tensor():
    with pytest.raises(RuntimeError, match="Boolean value of Tensor with more than one value is ambiguous"):
        bool(mg.ones(2))


def test_mean_of_int_tensor():
    with pytest.raises(RuntimeError, match="mean\\(\\): could not infer output dtype"):
        mg.arange(3).mean()


def test_unsupported_operand():
    with pytest.raises(TypeError):
        mg.ones(2) + "a"


def test_negative_size():
    with pytest.raises(RuntimeError, match="non-negative"):
        mg.zeros(-1)


def test_from_numpy_unsupported_dtype():  # (complex64 and complex128 are supported; numpy's long double complex not)
    with pytest.raises(TypeError, match="can't convert np.ndarray of type numpy.clongdouble"):  # (PyTorch's text)
        mg.from_numpy(np.ones(2, dtype=np.clongdouble))


def test_no_numpy_traceback_for_common_mistakes():
    # errors are raised by minigrad's own checks, not from deep inside numpy
    for fn in (lambda: mg.ones(2, 3) @ mg.ones(2, 3), lambda: mg.ones(2, 3) + mg.ones(2),
               lambda: mg.ones(3)[7], lambda: mg.ones(2).view(3)):
        e = error_of(fn)
        tb = e.__traceback__
        while tb.tb_next is not None:
            tb = tb.tb_next
        assert "numpy" not in tb.tb_frame.f_code.co_filename


def test_arrays_of_strings_or_objects_are_refused_with_torchs_text(torch):
    # a pandas frame's `.values` of mixed columns is an object array: no tensor of it, in every factory
    for make in ("tensor", "as_tensor", "from_numpy"):
        for array in (np.array(["a", "b"]), np.array([1, "x"], dtype=object), np.array([b"a"])):
            with pytest.raises(TypeError) as expected:
                getattr(torch, make)(array)
            with pytest.raises(TypeError) as got:
                getattr(mg, make)(array)
            assert str(got.value) == str(expected.value)
        with pytest.raises(TypeError, match="can't convert np.ndarray of type numpy.clongdouble"):  # (PyTorch too)
            getattr(mg, make)(np.array([1j], dtype=np.clongdouble))
