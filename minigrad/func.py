"""`torch.func` on the define-by-run engine: `vmap`, `grad`, `grad_and_value`, `vjp`, `jvp`, `jacrev`,
`jacfwd`, `hessian`, `functional_call` and `stack_module_state`, with PyTorch's signatures, for the
tutorials' uses (per-sample gradients, model ensembling, Jacobians and Hessians).

There are no batching rules and no forward mode: `vmap` calls the function once per slice of the mapped
dimension and stacks the results (its work grows with the batch, as a Python loop's would); `grad`, `vjp`
and the Jacobians run the engine's reverse mode on fresh leaves standing for the differentiated
arguments (one backward per output element for a Jacobian, so `jacfwd` is `jacrev`), and `jvp` is two
reverse passes (the double-vjp trick). They compose: `vmap(grad(f))`, `jacrev(grad(f))`, `hessian`,
`jvp(grad(f), ...)`. A result stays differentiable for an enclosing transform or `.backward()` when the
function used a tensor that requires grad from outside (an argument, or a module's parameter it
closes over); otherwise it comes back detached, as PyTorch's. `randomness=` is accepted and not
enforced: random ops inside vmap draw per slice (PyTorch's 'different').
"""
from . import autograd
from .autograd.function import AccumulateGrad
from .autograd.grad_mode import enable_grad, state
from .factory import zeros_like
from .ops import stack
from .tensor import Tensor

__all__ = ["vmap", "grad", "grad_and_value", "vjp", "jvp", "jacrev", "jacfwd", "hessian", "functional_call",
           "stack_module_state"]


# ---- pytrees: tensors in tuples, lists and dicts -------------------------------------------------------------
def _flatten(tree):
    """(leaves, rebuild): the leaves of nested tuples/lists/dicts, and a function putting new leaves back."""
    if isinstance(tree, (tuple, list)):
        parts = [_flatten(x) for x in tree]
        leaves = [leaf for p in parts for leaf in p[0]]

        def rebuild(new):
            out, i = [], 0
            for p in parts:
                out.append(p[1](new[i:i + len(p[0])]))
                i += len(p[0])
            if isinstance(tree, tuple) and hasattr(tree, "_fields"):  # a namedtuple
                return type(tree)(*out)
            return type(tree)(out) if isinstance(tree, tuple) else out
        return leaves, rebuild
    if isinstance(tree, dict):
        keys = list(tree)
        parts = [_flatten(tree[k]) for k in keys]
        leaves = [leaf for p in parts for leaf in p[0]]

        def rebuild(new):
            out, i = {}, 0
            for k, p in zip(keys, parts):
                out[k] = p[1](new[i:i + len(p[0])])
                i += len(p[0])
            return type(tree)(out) if type(tree) is not dict else out
        return leaves, rebuild
    return [tree], lambda new: new[0]


def _broadcast_dims(dims, tree, what):
    """in_dims/out_dims for each leaf of tree: dims is an int or None for the whole tree, or a tree prefix."""
    if dims is None or isinstance(dims, int):
        return [dims] * len(_flatten(tree)[0])
    if isinstance(dims, (tuple, list)) and isinstance(tree, (tuple, list)) and len(dims) == len(tree):
        return [d for sub, t in zip(dims, tree) for d in _broadcast_dims(sub, t, what)]
    if isinstance(dims, dict) and isinstance(tree, dict) and set(dims) == set(tree):
        return [d for k in tree for d in _broadcast_dims(dims[k], tree[k], what)]
    raise ValueError(f"vmap: {what}={dims!r} does not match the structure of the value it is for")


# ---- vmap --------------------------------------------------------------------------------------------------
def vmap(func, in_dims=0, out_dims=0, randomness="error", *, chunk_size=None):
    """func mapped over dimension in_dims of its arguments (None: not mapped), results stacked at out_dims.
    Keyword arguments are passed to each call unmapped."""
    if randomness not in ("error", "different", "same"):
        raise RuntimeError(f"Only allowed values for randomness are 'error', 'different', or 'same'. Got {randomness}")

    name = getattr(func, "__name__", repr(func))

    def wrapped(*args, **kwargs):
        where = f"vmap({name}, in_dims={in_dims}, ...)(<inputs>)"
        if not isinstance(in_dims, (int, tuple)):
            raise ValueError(f"{where}: expected `in_dims` to be int or a (potentially nested) tuple matching the "
                             f"structure of inputs, got: {type(in_dims)}.")
        dims = in_dims if isinstance(in_dims, tuple) else (in_dims,) * len(args)
        if isinstance(in_dims, tuple) and len(in_dims) != len(args):
            raise ValueError(f"{where}: in_dims is not compatible with the structure of `inputs`: in_dims has "
                             f"{len(in_dims)} elements but inputs has {len(args)}")
        leaves, rebuild = _flatten(list(args))
        leaf_dims = [d for a, sub in zip(args, dims) for d in _broadcast_dims(sub, a, "in_dims")]
        sizes = []
        for leaf, d in zip(leaves, leaf_dims):
            if d is None:
                continue
            if not isinstance(leaf, Tensor):
                raise ValueError(f"{where}: Got in_dim={d} for an input but "
                                 f"the input is of type {type(leaf)}. We cannot vmap over non-Tensor arguments, "
                                 "please use None as the respective in_dim")
            if not -leaf.dim() <= d < leaf.dim():
                raise ValueError(f"{where}: Got in_dim={d} for some input, but "
                                 f"that input is a Tensor of dimensionality {leaf.dim()} so expected in_dim to satisfy "
                                 f"-{leaf.dim()} <= in_dim < {leaf.dim()}.")
            sizes.append(leaf.shape[d])
        if not sizes:
            raise ValueError("vmap: Expected at least one Tensor to vmap over")
        if len(set(sizes)) != 1:
            raise ValueError(f"vmap: Expected all tensors to have the same size in the mapped dimension, got sizes "
                             f"{sizes} for the mapped dimension")
        results = []
        for i in range(sizes[0]):
            sliced = [leaf if d is None else leaf.select(d, i) for leaf, d in zip(leaves, leaf_dims)]
            results.append(func(*rebuild(sliced), **kwargs))
        out_leaves, out_rebuild = _flatten(results[0])
        per_call = [_flatten(r)[0] for r in results]
        odims = _broadcast_dims(out_dims, results[0], "out_dims")
        stacked = []
        for j, (first, d) in enumerate(zip(out_leaves, odims)):
            column = [p[j] for p in per_call]
            if not all(isinstance(c, Tensor) for c in column):
                raise ValueError(f"vmap({name}, ...): `{name}` must only return Tensors, got type {type(first)}. "
                                 "Did you mean to set out_dims= to None for output?")
            if d is None:
                stacked.append(first)
            else:
                stacked.append(stack(column, dim=d if d >= 0 else d + first.dim() + 1))
        return out_rebuild(stacked)

    return wrapped


# ---- reverse mode on fresh leaves --------------------------------------------------------------------------
def _fresh(leaf):
    """A tensor standing for `leaf` as a variable of its own: connected to leaf's graph when leaf requires grad
    (so an enclosing transform differentiates through it), a new leaf otherwise."""
    if not isinstance(leaf, Tensor):
        return leaf
    if leaf.requires_grad:
        return leaf.view_as(leaf)
    return leaf.detach().requires_grad_(leaf.is_floating_point())


def _reaches_outside(outputs, inside):
    """Whether the graph of outputs reaches a leaf other than the tensors `inside` (by id): then its results
    must stay differentiable for whatever differentiates them later (an enclosing transform, .backward())."""
    seen, todo = set(), [o.grad_fn for o in outputs if isinstance(o, Tensor) and o.grad_fn is not None]
    while todo:
        node = todo.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, AccumulateGrad):
            if id(node.variable) not in inside:
                return True
            continue
        todo.extend(fn for fn, _ in getattr(node, "next_functions", ()))
    return False


def _differentiate(outputs, inputs, grad_outputs, keep_graph):
    """d outputs / d inputs, one per input (zeros where unused, None for a non-tensor), differentiable when
    keep_graph, else detached. grad_outputs: one per output, or None for scalar outputs."""
    cts = grad_outputs if grad_outputs is not None else [None] * len(outputs)
    pairs = [(o, g) for o, g in zip(outputs, cts) if isinstance(o, Tensor) and o.requires_grad]
    diff = [i for i, t in enumerate(inputs) if isinstance(t, Tensor) and t.requires_grad]
    grads = {}
    if pairs and diff:
        got = autograd.grad([o for o, _ in pairs], [inputs[i] for i in diff],
                            grad_outputs=[g for _, g in pairs] if grad_outputs is not None else None,
                            retain_graph=True, create_graph=keep_graph, allow_unused=True)
        grads = dict(zip(diff, got))
    result = []
    for i, t in enumerate(inputs):
        g = grads.get(i)
        if isinstance(t, Tensor):
            g = zeros_like(t) if g is None else (g if keep_graph else g.detach())
        result.append(g)
    return result


def _argnums_tuple(argnums, nargs, who):
    nums = argnums if isinstance(argnums, tuple) else (argnums,)
    if not nums:
        raise RuntimeError(f"{who}: argnums must be non-empty")
    for n in nums:
        if not isinstance(n, int):
            raise RuntimeError(f"{who}: argnums must be int or Tuple[int, ...], got: {type(n)}")
        if not -nargs <= n < nargs:
            raise RuntimeError(f"Got argnum={n}, but only {nargs} positional inputs")
    return tuple(n % nargs for n in nums)


class _Call:
    """func(*args) with the arguments at argnums replaced by fresh variables: their leaves, the output."""

    def __init__(self, func, args, kwargs, argnums, who):
        nums = _argnums_tuple(argnums, len(args), who)
        self.single = not isinstance(argnums, tuple)
        args = list(args)
        self.rebuilds, self.leaves = [], []
        with enable_grad():
            for n in nums:
                leaves, rebuild = _flatten(args[n])
                fresh = [_fresh(leaf) for leaf in leaves]
                self.rebuilds.append(rebuild)
                self.leaves.append(fresh)
                args[n] = rebuild(fresh)
            self.output = func(*args, **kwargs)

    def all_leaves(self):
        return [t for group in self.leaves for t in group]

    def keep_graph(self, outputs):
        inside = {id(t) for t in self.all_leaves() if isinstance(t, Tensor)}
        return state.grad_enabled and _reaches_outside(outputs, inside)

    def shaped(self, flat):
        """Gradients of all_leaves() in the arguments' structure (one per argnum, or the one)."""
        out, i = [], 0
        for rebuild, group in zip(self.rebuilds, self.leaves):
            out.append(rebuild(flat[i:i + len(group)]))
            i += len(group)
        return out[0] if self.single else tuple(out)


def _scalar_output(output, has_aux, who):
    if has_aux:
        if not (isinstance(output, tuple) and len(output) == 2):
            raise RuntimeError(f"{who}(f)(*args): output of function f should be a tuple: (output, aux) if "
                               "has_aux is True")
        output, aux = output
    else:
        aux = None
    if not isinstance(output, Tensor):
        raise RuntimeError(f"{who}(f)(*args): Expected f(*args) to return a Tensor, got {type(output)}")
    if output.dim() != 0:
        raise RuntimeError(f"{who}(f)(*args): Expected f(*args) to return a scalar Tensor, got tensor with "
                           f"{output.dim()} dims. Maybe you wanted to use the vjp or jacrev APIs instead?")
    return output, aux


def grad_and_value(func, argnums=0, has_aux=False):
    """(gradient of func's scalar output w.r.t. the arguments at argnums, the output); with has_aux func
    returns (output, aux) and this (gradient, (output, aux))."""
    def wrapper(*args, **kwargs):
        call = _Call(func, args, kwargs, argnums, "grad_and_value")
        output, aux = _scalar_output(call.output, has_aux, "grad_and_value")
        keep = call.keep_graph([output])
        grads = call.shaped(_differentiate([output], call.all_leaves(), None, keep))
        value = output if keep else output.detach()
        if has_aux and not keep:  # aux comes out at the caller's level: no history through the fresh variables
            leaves, rebuild = _flatten(aux)
            aux = rebuild([t.detach() if isinstance(t, Tensor) else t for t in leaves])
        return (grads, (value, aux)) if has_aux else (grads, value)
    return wrapper


def grad(func, argnums=0, has_aux=False):
    """The gradient of func's scalar output w.r.t. the arguments at argnums (a tensor, or a tuple/list/dict of
    them, as the argument is); with has_aux, (gradient, aux)."""
    gv = grad_and_value(func, argnums, has_aux)

    def wrapper(*args, **kwargs):
        grads, value = gv(*args, **kwargs)
        return (grads, value[1]) if has_aux else grads
    return wrapper


def vjp(func, *primals, has_aux=False):
    """(func(*primals), vjp_fn[, aux]): vjp_fn(cotangents) gives the vector-Jacobian products, one per primal."""
    call = _Call(func, primals, {}, tuple(range(len(primals))), "vjp")
    output, aux = (call.output if has_aux else (call.output, None))
    outs, rebuild_out = _flatten(output)
    keep = call.keep_graph(outs)

    def vjp_fn(*cotangents):
        cts = _flatten(cotangents[0] if len(cotangents) == 1 else list(cotangents))[0]
        if len(cts) != len(outs):
            raise RuntimeError(f"Expected pytree structure of cotangents to be the same as pytree structure of "
                               f"outputs to the function: {len(cts)} tensors given for {len(outs)} outputs")
        keep_cts = keep or state.grad_enabled and any(isinstance(c, Tensor) and c.requires_grad for c in cts)
        return call.shaped(_differentiate(outs, call.all_leaves(), cts, keep_cts))

    value = rebuild_out([o if keep or not isinstance(o, Tensor) else o.detach() for o in outs])
    return (value, vjp_fn, aux) if has_aux else (value, vjp_fn)


def jacrev(func, argnums=0, *, has_aux=False, chunk_size=None, _preallocate_and_copy=False):
    """The Jacobian of func w.r.t. the arguments at argnums: output.shape + argument.shape per pair (a tuple over
    argnums when it is a tuple, over outputs when func returns a tuple). One backward per output element."""
    def wrapper(*args, **kwargs):
        call = _Call(func, args, kwargs, argnums, "jacrev")
        output, aux = (call.output if has_aux else (call.output, None))
        outs, rebuild_out = _flatten(output)
        keep = call.keep_graph(outs)
        leaves = call.all_leaves()
        per_output = []
        for o in outs:
            rows = []
            flat_o = o.reshape(-1)
            for j in range(flat_o.numel()):
                onehot = zeros_like(flat_o)
                onehot[j] = 1
                rows.append(_differentiate([o], leaves, [onehot.reshape(o.shape)], keep))
            jacs = []
            for k, leaf in enumerate(leaves):
                if rows:
                    jac = stack([r[k] for r in rows]).reshape(tuple(o.shape) + tuple(leaf.shape))
                else:
                    jac = zeros_like(leaf).reshape(tuple(o.shape) + tuple(leaf.shape))
                jacs.append(jac)
            per_output.append(call.shaped(jacs))
        result = rebuild_out(per_output)
        if has_aux:
            return result, aux
        return result
    return wrapper


def jacfwd(func, argnums=0, has_aux=False, *, randomness="error"):
    """The Jacobian, as jacrev computes it (there is no forward mode here)."""
    return jacrev(func, argnums, has_aux=has_aux)


def hessian(func, argnums=0):
    """The Hessian of func's output w.r.t. the arguments at argnums: jacfwd(jacrev(func))."""
    return jacfwd(jacrev(func, argnums), argnums)


def jvp(func, primals, tangents, *, strict=False, has_aux=False):
    """(func(*primals), the Jacobian-vector product with tangents), by two reverse passes."""
    if not isinstance(primals, tuple) or not isinstance(tangents, tuple):
        raise RuntimeError("jvp(f, primals, tangents): Expected primals and tangents to be tuples")
    if len(primals) != len(tangents):
        raise RuntimeError("jvp(f, primals, tangents): Expected primals and tangents to have the same python "
                           f"structure. For example, if primals is a tuple of 3 tensors, so should the tangents; "
                           f"got {len(primals)} primals and {len(tangents)} tangents")
    call = _Call(func, primals, {}, tuple(range(len(primals))), "jvp")
    output, aux = (call.output if has_aux else (call.output, None))
    outs, rebuild_out = _flatten(output)
    keep = call.keep_graph(outs)
    leaves = call.all_leaves()
    tans = _flatten(list(tangents))[0]
    with enable_grad():
        dummies = [zeros_like(o).requires_grad_(True) for o in outs]
        firsts = _differentiate(outs, leaves, dummies, True)  # u -> J^T u, linear in u
        pairs = [(f, t) for f, t in zip(firsts, tans) if isinstance(f, Tensor) and f.requires_grad]
        if pairs:
            products = _differentiate([f for f, _ in pairs], dummies, [t for _, t in pairs], keep)
        else:
            products = [zeros_like(o) for o in outs]
    value = rebuild_out([o if keep else o.detach() for o in outs])
    result = (value, rebuild_out(products))
    return result + (aux,) if has_aux else result


# ---- modules as functions --------------------------------------------------------------------------------------
def _resolve(module, name):
    *path, leaf = name.split(".")
    for part in path:
        module = getattr(module, part)
    return module, leaf


def functional_call(module, parameter_and_buffer_dicts, args=None, kwargs=None, *, tie_weights=True, strict=False):
    """module(*args, **kwargs) with its parameters and buffers replaced by the tensors of the given dict (or
    tuple of dicts) under their dotted names, put back afterwards; names it does not give keep the module's.
    With tie_weights, a tensor given for one name of a parameter the module holds under several is used for
    all of them."""
    if isinstance(parameter_and_buffer_dicts, dict):
        values = dict(parameter_and_buffer_dicts)
    else:
        values, repeated = {}, []
        for d in parameter_and_buffer_dicts:
            for k, v in d.items():
                if k in values and k not in repeated:
                    repeated.append(k)
                values[k] = v
        if repeated:
            raise ValueError(f"{repeated} appeared in multiple dictionaries; behavior of functional call is ambiguous")
    if tie_weights:
        names_of = {}
        for name, t in list(module.named_parameters(remove_duplicate=False)) + \
                list(module.named_buffers(remove_duplicate=False)):
            names_of.setdefault(id(t), []).append(name)
        for names in names_of.values():
            given = [n for n in names if n in values]
            if given:
                for n in names:
                    values.setdefault(n, values[given[0]])
    if strict:
        known = {n for n, _ in module.named_parameters(remove_duplicate=False)} | \
            {n for n, _ in module.named_buffers(remove_duplicate=False)}
        missing, unexpected = sorted(known - set(values)), sorted(set(values) - known)
        if missing or unexpected:
            raise RuntimeError(f"Error(s) in reparametrizing for {type(module).__name__}:\n\t"
                               f"Unexpected key(s): {', '.join(map(repr, unexpected))}.\n\t"
                               f"Missing key(s): {', '.join(map(repr, missing))}.")
    swapped = []
    try:
        for name, value in values.items():
            owner, leaf = _resolve(module, name)
            table = owner._parameters if leaf in owner._parameters else owner._buffers if leaf in owner._buffers \
                else None
            if table is None:
                swapped.append((owner, leaf, None, owner.__dict__.get(leaf, _MISSING)))
                object.__setattr__(owner, leaf, value)
            else:
                swapped.append((owner, leaf, table, table[leaf]))
                table[leaf] = value
        if args is None:
            args = ()
        elif not isinstance(args, tuple):
            args = (args,)
        return module(*args, **(kwargs or {}))
    finally:
        for owner, leaf, table, old in reversed(swapped):
            if table is not None:
                table[leaf] = old
            elif old is _MISSING:
                owner.__dict__.pop(leaf, None)
            else:
                object.__setattr__(owner, leaf, old)


_MISSING = object()


def stack_module_state(models):
    """(params, buffers): each name's tensors of the models stacked on a new first dimension (for vmap over
    functional_call); stacked parameters are new leaves that require grad where the models' do."""
    models = list(models)
    if len(models) == 0:
        raise RuntimeError("stack_module_state: Expected at least one model, got 0.")
    if not (all(m.training for m in models) or all(not m.training for m in models)):
        raise RuntimeError("stack_module_state: Expected all models to have the same training/eval mode.")
    if not all(type(m) is type(models[0]) for m in models):
        raise RuntimeError("stack_module_state: Expected all models to be of the same class.")

    def stacked(tensors, name):
        grads = [t.requires_grad for t in tensors]
        if any(grads) and not all(grads):
            raise RuntimeError(f"Expected {name} from each model to have the same .requires_grad")
        result = stack(tensors)
        return result.detach().requires_grad_() if all(grads) else result

    all_params = [dict(m.named_parameters()) for m in models]
    all_buffers = [dict(m.named_buffers()) for m in models]
    params = {k: stacked([p[k] for p in all_params], k) for k in all_params[0]}
    buffers = {k: stacked([b[k] for b in all_buffers], k) for k in all_buffers[0]}
    return params, buffers
