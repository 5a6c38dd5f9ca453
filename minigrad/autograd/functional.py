"""Higher-level derivatives, as `torch.autograd.functional`: jacobian, hessian, vjp, jvp, hvp, vhp.

All are built on `autograd.grad`, one reverse pass per row:
- vjp: one backward with v as the output gradient.
- jvp: the double-vjp trick. g(u) = J^T u is linear in a dummy output gradient u; differentiating
  <g(u), v> in u gives J v. Two backwards, the first with create_graph.
- jacobian: one backward per output element (grad_outputs a one-hot), rows stacked.
- hessian: the jacobian of the gradient (computed with create_graph).
- vhp: v^T H as the vjp of the gradient; hvp: H v by the double-vjp trick on the gradient.

The structure follows PyTorch: a tuple of inputs (or outputs) gives tuples, a lone Tensor gives Tensors.
Unless create_graph, the inputs are detached first and the results carry no graph. `vectorize` and
`strategy='forward-mode'` are accepted and change nothing here: the rows are computed by reverse mode,
one backward each (the same numbers PyTorch's other strategies give).
"""
from . import function as _function  # its `Tensor`, bound by minigrad.tensor
from .engine import grad as _grad
from .grad_mode import enable_grad


def _as_tuple(x, arg_name, fn_name):
    """(is_tuple, the tuple): a lone Tensor as a 1-tuple, or PyTorch's TypeError for anything else (a list too)."""
    Tensor = _function.Tensor
    is_tuple = isinstance(x, tuple)
    items = x if is_tuple else (x,)
    for i, el in enumerate(items):
        if not isinstance(el, Tensor):
            if is_tuple:
                raise TypeError(f"The {arg_name} given to {fn_name} must be either a Tensor or a tuple of Tensors but "
                                f"the value at index {i} has type {type(el)}.")
            raise TypeError(f"The {arg_name} given to {fn_name} must be either a Tensor or a tuple of Tensors but the "
                            f"given {arg_name} has type {type(el)}.")
    return is_tuple, items


def _prepare(inputs, create_graph):
    """Inputs the function runs on: detached leaves that require grad, or (create_graph) views that keep the
    graph back to the originals, so the results can be differentiated in them."""
    out = []
    for t in inputs:
        if create_graph and t.requires_grad:
            out.append(t.view_as(t))
        else:
            out.append(t.detach().requires_grad_(True))
    return tuple(out)


def _finish(ts, create_graph):
    """The results as PyTorch returns them: detached unless create_graph."""
    return tuple(t if t is None or create_graph else t.detach() for t in ts)


def _zeros(t):
    z = t.array.copy()
    z[...] = 0
    return _function.Tensor._wrap(z)


def _ones(t):
    z = t.array.copy()
    z[...] = 1
    return _function.Tensor._wrap(z)


def _grads(outputs, inputs, grad_outputs, create_graph, strict, strict_what):
    """d<outputs, grad_outputs>/d inputs, zeros for an input the outputs do not reach (strict: an error)."""
    live = [(o, g) for o, g in zip(outputs, grad_outputs) if o.requires_grad and g is not None]
    if live:
        res = _grad([o for o, _ in live], inputs, [g for _, g in live], retain_graph=True, create_graph=create_graph,
                    allow_unused=True)
    else:
        res = (None,) * len(inputs)
    out = []
    for i, (r, t) in enumerate(zip(res, inputs)):
        if r is None:
            if strict:
                raise RuntimeError(strict_what(i))
            r = _zeros(t)
        out.append(r)
    return tuple(out)


def _check_v(v, like, like_is_tuple, fn_name):
    """v as a tuple shaped as `like` (the outputs for vjp, the inputs for the others), or PyTorch's error."""
    Size = type(like[0].shape)  # (minigrad.Size: prints as PyTorch's torch.Size)
    _, v = _as_tuple(v, "v", fn_name)
    if len(v) != len(like):
        if not like_is_tuple:
            raise RuntimeError("The given v should contain a single Tensor.")
        raise RuntimeError(f"v is a tuple of invalid length: should be {len(like)} but got {len(v)}.")
    for i, (a, b) in enumerate(zip(v, like)):
        if tuple(a.shape) != tuple(b.shape):
            where = f"Entry {i} in v" if like_is_tuple else "v"
            raise RuntimeError(f"{where} has invalid size: should be {Size(b.shape)} but got {Size(a.shape)}.")
    return v


def _run(func, inputs, fn_name):
    with enable_grad():
        out = func(*inputs)
    is_tuple, out = _as_tuple(out, "outputs of the user-provided function", fn_name)
    return is_tuple, out


def _independent(i):
    """Strict mode's error for an input the output does not depend on."""
    return f"The output of the user-provided function is independent of input {i}. This is not allowed in strict mode."


_NOT_DIFFERENTIABLE = {
    "outputs": "Output {} of the user-provided function does not require gradients. The outputs must be computed in a "
               "differentiable manner from the input when running in strict mode.",
    "jacobian": "While computing the hessian, found that the jacobian of the user-provided function with respect to "
                "input {} is independent of the input. This is not allowed in strict mode. You should ensure that your "
                "function is twice differentiable and that the jacobian depends on the inputs (this would be violated "
                "by a linear function for example).",
}


def _check_requires_grad(ts, what, strict):
    """Strict mode: each of `ts` (the outputs, or the gradient a Hessian differentiates again) must depend
    on the inputs through recorded ops, else PyTorch's error naming the first that does not."""
    if strict:
        for i, t in enumerate(ts):
            if not t.requires_grad:
                raise RuntimeError(_NOT_DIFFERENTIABLE[what].format(i))


def _shape(is_tuple, ts):
    return tuple(ts) if is_tuple else ts[0]


def vjp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), v^T J): the vector-Jacobian product at `inputs`, one backward. v (shaped as the outputs)
    may be omitted when func returns a single element."""
    in_tuple, inputs = _as_tuple(inputs, "inputs", "vjp")
    xs = _prepare(inputs, create_graph)
    out_tuple, outs = _run(func, xs, "vjp")
    _check_requires_grad(outs, "outputs", strict)
    if v is None:
        if len(outs) != 1 or outs[0].numel() != 1:
            raise RuntimeError("The vector v can only be None if the user-provided function returns a single Tensor "
                               "with a single element.")
        v = (_ones(outs[0]),)
    else:
        v = _check_v(v, outs, out_tuple, "vjp")
    res = _grads(outs, xs, v, create_graph, strict, _independent)
    return _shape(out_tuple, _finish(outs, create_graph)), _shape(in_tuple, _finish(res, create_graph))


def jvp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), J v): the Jacobian-vector product, by the double-vjp trick. v (shaped as the inputs) may be
    omitted when there is one input of a single element."""
    in_tuple, inputs = _as_tuple(inputs, "inputs", "jvp")
    xs = _prepare(inputs, create_graph)
    if v is None:
        if len(xs) != 1 or xs[0].numel() != 1:
            raise RuntimeError("The vector v can only be None if the input to the user-provided function is a single "
                               "Tensor with a single element.")
        v = (_ones(xs[0]),)
    else:
        v = _check_v(v, xs, in_tuple, "jvp")
    out_tuple, outs = _run(func, xs, "jvp")
    _check_requires_grad(outs, "outputs", strict)
    # u: a dummy output gradient; g(u) = J^T u is linear in u, and d<g(u), v>/du = J v
    us = tuple(_zeros(o).requires_grad_(True) for o in outs)
    with enable_grad():
        gs = _grads(outs, xs, us, True, strict, _independent)
    pairs = [(g, w) for g, w in zip(gs, v) if g.requires_grad]
    if pairs:
        res = _grad([g for g, _ in pairs], us, [w for _, w in pairs], retain_graph=True, create_graph=create_graph,
                    allow_unused=True)
    else:
        res = (None,) * len(us)
    res = tuple(_zeros(o) if r is None else r for r, o in zip(res, outs))
    return _shape(out_tuple, _finish(outs, create_graph)), _shape(out_tuple, _finish(res, create_graph))


def _jacobian_rows(outs, xs, create_graph, strict):
    """jac[i][j]: d outs[i] / d xs[j] shaped outs[i].shape + xs[j].shape, one backward per element of outs[i]."""
    import minigrad  # (the engine's own package: stack and reshape are recorded ops, so create_graph works)

    jac = []
    for i, o in enumerate(outs):
        rows = [[] for _ in xs]
        flat = o.reshape(-1)
        independent = (lambda j, i=i: f"Output {i} of the user-provided function is independent of input {j}. This "
                                      f"is not allowed in strict mode.")
        for k in range(flat.numel()):
            onehot = _zeros(flat)
            onehot.array[k] = 1
            gs = _grads((flat,), xs, (onehot,), create_graph, strict, independent)
            for j, g in enumerate(gs):
                rows[j].append(g)
        block = []
        for j, x in enumerate(xs):
            if rows[j]:
                block.append(minigrad.stack(rows[j], 0).reshape(tuple(o.shape) + tuple(x.shape)))
            else:  # an empty output: a Jacobian with no rows
                block.append(_function.Tensor._wrap(x.array.reshape(-1)[:0].reshape(tuple(o.shape) + tuple(x.shape))))
        jac.append(tuple(block))
    return jac


def jacobian(func, inputs, create_graph=False, strict=False, vectorize=False, strategy="reverse-mode"):
    """The Jacobian of func at inputs: d out / d in shaped out.shape + in.shape, for each output and input
    (a Tensor for one of each, a tuple over inputs or over outputs, a tuple of tuples [out][in] for both).
    One backward per output element. An input the outputs do not depend on gets zeros (strict: an error)."""
    if strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError('Expected strategy to be either "forward-mode" or "reverse-mode". Hint: If your function '
                             'has more outputs than inputs, "forward-mode" tends to be more performant. Otherwise, '
                             'prefer to use "reverse-mode".')  # (PyTorch's assert)
    if strategy == "forward-mode" and not vectorize:
        # PyTorch's text, its missing space ("isonly") included
        raise NotImplementedError("Computing Jacobian using forward-AD or forward-over-reverse Hessian is"
                                  "only implemented for `vectorize=True`.")
    in_tuple, inputs = _as_tuple(inputs, "inputs", "jacobian")
    xs = _prepare(inputs, create_graph)
    out_tuple, outs = _run(func, xs, "jacobian")
    _check_requires_grad(outs, "outputs", strict)
    jac = [_finish(row, create_graph) for row in _jacobian_rows(outs, xs, create_graph, strict)]
    if out_tuple:
        return tuple(_shape(in_tuple, row) for row in jac)
    return _shape(in_tuple, jac[0])


def _scalar_output(func, fn_name):
    """func, checked to return a single one-element Tensor (what hessian, vhp and hvp need), returned as it is
    (vhp and hvp give it back in its own shape)."""
    def wrapped(*xs):
        out = func(*xs)
        is_tuple, outs = _as_tuple(out, "outputs of the user-provided function", fn_name)
        if is_tuple or len(outs) != 1:
            raise RuntimeError(f"The function given to {fn_name} should return a single Tensor")
        if outs[0].numel() != 1:
            raise RuntimeError(f"The Tensor returned by the function given to {fn_name} should contain a single "
                               f"element")
        return outs[0]
    return wrapped


def hessian(func, inputs, create_graph=False, strict=False, vectorize=False, outer_jacobian_strategy="reverse-mode"):
    """The Hessian of a scalar func at inputs: shaped in.shape + in.shape (a tuple of tuples [i][j] for a tuple of
    inputs): the jacobian of the gradient, whose graph is kept for that."""
    is_tuple, inputs = _as_tuple(inputs, "inputs", "hessian")
    f = _scalar_output(func, "hessian")

    def gradient(*xs):
        with enable_grad():
            out = f(*xs)
            _check_requires_grad((out,), "outputs", strict)
            gs = _grads((out,), xs, (_ones(out),), True, strict, _independent)
        _check_requires_grad(gs, "jacobian", strict)
        return gs

    res = jacobian(gradient, tuple(inputs), create_graph=create_graph, strict=strict, vectorize=vectorize,
                   strategy=outer_jacobian_strategy)
    return res if is_tuple else res[0][0]


def vhp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), v^T H) for a scalar func: the vjp of its gradient."""
    return _second_order(func, inputs, v, create_graph, strict, "vhp")


def hvp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), H v) for a scalar func, by the double-vjp trick on its gradient."""
    return _second_order(func, inputs, v, create_graph, strict, "hvp")


def _second_order(func, inputs, v, create_graph, strict, fn_name):
    in_tuple, inputs = _as_tuple(inputs, "inputs", fn_name)
    xs = _prepare(inputs, create_graph)
    if v is None:
        if len(xs) != 1 or xs[0].numel() != 1:
            raise RuntimeError("The vector v can only be None if the input to the user-provided function is a single "
                               "Tensor with a single element.")
        v = (_ones(xs[0]),)
    else:
        v = _check_v(v, xs, in_tuple, fn_name)
    f = _scalar_output(func, fn_name)
    independent = _independent
    with enable_grad():
        out = f(*xs)
        _check_requires_grad((out,), "outputs", strict)
        gs = _grads((out,), xs, (_ones(out),), True, strict, independent)
    _check_requires_grad(gs, "jacobian", strict)
    if fn_name == "vhp":  # v^T H = d<grad, v>/dx
        res = _grads(gs, xs, v, create_graph, strict, independent)
    else:  # H v: u -> H^T u = H u is linear in u, and d<H u, v>/du = H v (the double-vjp trick)
        us = tuple(_zeros(x).requires_grad_(True) for x in xs)
        with enable_grad():
            hu = _grads(gs, xs, us, True, strict, independent)
        res = _grads(hu, us, v, create_graph, False, independent)
    return _finish((out,), create_graph)[0], _shape(in_tuple, _finish(res, create_graph))
