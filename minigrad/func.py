"""`torch.func`: function transforms for per-sample gradients, Jacobians, Hessians and model ensembles.

    from minigrad.func import functional_call, grad, vmap
    def loss_of(params, x, y):
        return F.cross_entropy(functional_call(model, params, (x[None],)), y[None])
    per_sample_grads = vmap(grad(loss_of), in_dims=(None, 0, 0))(params, xs, ys)

PyTorch's torch.func rewrites the program; minigrad's transforms run it. `grad` runs the function under
autograd and differentiates it with `minigrad.autograd.grad`, keeping the graph so that a transform
around it (a `grad` of a `grad`, a `jacrev` of a `grad`) differentiates again; `vmap` runs the function
once per slice along the mapped dims and stacks the results. The values are PyTorch's; vmap's cost is
one call per slice, not one batched call. Nested tuples, lists, dicts and namedtuples of tensors
("pytrees") are taken as inputs and given back as outputs, as PyTorch's.
"""
import functools

import numpy as np

from . import autograd
from . import random as _random
from .autograd.grad_mode import enable_grad
from .ops.shape import stack
from .tensor import Tensor
from .utils._pytree import tree_flatten as _flatten, tree_unflatten as _unflatten, treespec_pprint


# ---- the autograd the transforms run ---------------------------------------------------------------------

def _argnums(argnums, args):
    if not isinstance(argnums, (int, tuple)):
        raise RuntimeError(f"argnums must be int or Tuple[int, ...], got: {type(argnums)}")
    nums = []
    for n in (argnums,) if isinstance(argnums, int) else argnums:
        if not isinstance(n, int):
            raise RuntimeError(f"argnum must be int, got: {type(n)}")
        if not -len(args) <= n < len(args):
            raise RuntimeError(f"Got argnum={n}, but only {len(args)} positional inputs")
        nums.append(n % len(args))
    if isinstance(argnums, tuple):
        if not nums:
            raise RuntimeError("argnums must be non-empty")
        if len(set(nums)) != len(nums):  # (differentiating twice at one input would alias its leaf)
            raise RuntimeError(f"argnums elements must be unique, got {tuple(nums)}")
    return nums


def _tracked(args, nums):
    """`args` with each tensor of args[n] (n in nums) replaced by one autograd differentiates at, and those
    tensors per argnum (with their structure). A tensor no outer autograd tracks becomes a leaf of its
    own; one that is tracked (an outer transform's, a parameter) is seen through a view, so the
    derivatives computed here stay differentiable for the outer one."""
    args, tracked = list(args), []
    for n in nums:
        leaves, spec = _flatten(args[n])
        new = []
        for leaf in leaves:
            if not isinstance(leaf, Tensor):
                raise ValueError(f"Thing passed to transform API must be Tensor, got {type(leaf)}")
            if not leaf.is_floating_point():
                raise RuntimeError("only Tensors of floating point dtype can require gradients")
            new.append(leaf.view_as(leaf) if leaf.requires_grad else leaf.detach().requires_grad_())
        args[n] = _unflatten(new, spec)
        tracked.append((new, spec))
    return args, tracked


def _own_leaves(tracked):
    return {id(t) for leaves, _ in tracked for t in leaves if t.grad_fn is None}


def _outside(value, own):
    """`value` (a pytree) with each tensor detached whose graph reaches only the transform's own leaves:
    what PyTorch gives back as not requiring grad. A tensor that depends on a parameter, or on an outer
    transform's input, keeps its graph."""
    leaves, spec = _flatten(value)
    return _unflatten([t.detach() if isinstance(t, Tensor) and t.requires_grad and not _reaches_outside(t, own)
                       else t for t in leaves], spec)


def _reaches_outside(t, own):
    if t.grad_fn is None:
        return id(t) not in own
    seen, todo = set(), [t.grad_fn]
    while todo:
        fn = todo.pop()
        if fn is None or id(fn) in seen:
            continue
        seen.add(id(fn))
        variable = getattr(fn, "variable", None)  # an AccumulateGrad: a leaf
        if variable is not None:
            if id(variable) not in own:
                return True
            continue
        todo.extend(f for f, _ in fn.next_functions)
    return False


def _derivatives(outputs, inputs, grad_outputs=None):
    """d outputs / d inputs (zeros where an input is not used), the graph kept for outer transforms."""
    pairs = [(o, g) for o, g in zip(outputs, grad_outputs or [None] * len(outputs)) if o.requires_grad]
    if not pairs:
        found = [None] * len(inputs)
    else:
        found = autograd.grad([o for o, _ in pairs], inputs, None if grad_outputs is None else [g for _, g in pairs],
                              retain_graph=True, create_graph=True, allow_unused=True)
    return [x.new_zeros(x.shape) if g is None else g for g, x in zip(found, inputs)]


def _per_argnum(flat, tracked, argnums):
    out, i = [], 0
    for leaves, spec in tracked:
        out.append(_unflatten(flat[i:i + len(leaves)], spec))
        i += len(leaves)
    return out[0] if isinstance(argnums, int) else tuple(out)


def _split_aux(out, has_aux, api):
    if not has_aux:
        return out, None
    if not (isinstance(out, tuple) and len(out) == 2):
        raise RuntimeError(f"{api}: output of function f should be a tuple: (output, aux) if has_aux is True")
    for leaf in _flatten(out[1])[0]:  # aux is given back detached from the transform: a pytree of tensors only
        if not isinstance(leaf, Tensor):
            raise RuntimeError(f"Expected tensors, got unsupported type {type(leaf)}")
    return out


# ---- grad, grad_and_value, vjp, jvp, jacrev, jacfwd, hessian --------------------------------------------

def grad_and_value(func, argnums=0, has_aux=False):
    """A function returning (the gradient of func's scalar output with respect to args[argnums], that output);
    with has_aux, func returns (output, aux) and the result is (gradient, (output, aux))."""
    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        nums = _argnums(argnums, args)
        with enable_grad():
            args, tracked = _tracked(args, nums)
            out, aux = _split_aux(func(*args, **kwargs), has_aux, "grad_and_value(f)(*args)")
            if not isinstance(out, Tensor):
                raise RuntimeError(f"grad_and_value(f)(*args): Expected f(*args) to return a Tensor, got {type(out)}")
            if out.ndim != 0:
                raise RuntimeError(f"grad_and_value(f)(*args): Expected f(*args) to return a scalar Tensor, got tensor "
                                   f"with {out.ndim} dims. Maybe you wanted to use the vjp or jacrev APIs instead?")
            flat = _derivatives([out], [t for leaves, _ in tracked for t in leaves])
        own = _own_leaves(tracked)
        grads = _outside(_per_argnum(flat, tracked, argnums), own)
        value = _outside(out, own)
        return (grads, (value, _outside(aux, own))) if has_aux else (grads, value)

    return wrapper


def grad(func, argnums=0, has_aux=False):
    """A function returning the gradient of func's scalar output with respect to args[argnums] (a tensor,
    or a pytree of them: a dict of parameters gives a dict of gradients); with has_aux, (gradient, aux)."""
    gv = grad_and_value(func, argnums, has_aux)

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        grads, value = gv(*args, **kwargs)
        return (grads, value[1]) if has_aux else grads

    return wrapper


def vjp(func, *primals, has_aux=False):
    """(func(*primals), vjp_fn): vjp_fn(cotangents) gives the vector-Jacobian product for each primal."""
    with enable_grad():
        args, tracked = _tracked(primals, range(len(primals)))
        out, aux = _split_aux(func(*args), has_aux, "vjp(f, *primals)")
    outs, out_spec = _flatten(out)
    _only_tensors(outs, "vjp(f, *primals): expected f(*primals) to return only tensors")
    inputs = [t for leaves, _ in tracked for t in leaves]
    own = _own_leaves(tracked)

    def vjp_fn(*cotangents):
        cot, cot_spec = _flatten(cotangents[0] if len(cotangents) == 1 else cotangents)
        if cot_spec != out_spec:
            raise RuntimeError(f"Expected pytree structure of cotangents to be the same as pytree structure of outputs "
                               f"to the function. cotangents: {treespec_pprint(cot_spec)}, primal output: "
                               f"{treespec_pprint(out_spec)}")
        with enable_grad():
            flat = _derivatives(outs, inputs, cot)
        return _outside(tuple(_per_argnum(flat, tracked, tuple(range(len(primals))))), own)

    result = (_outside(out, own), vjp_fn)
    return result + (_outside(aux, own),) if has_aux else result


def _only_tensors(outs, what):
    if not outs or (len(outs) == 1 and outs[0] is None):
        raise RuntimeError(f"{what.split(':')[0]}: Expected f to be a function that has non-empty output (got output "
                           f"= {outs})")
    for o in outs:
        if not isinstance(o, Tensor):
            raise RuntimeError(f"{what}, got unsupported type {type(o)}")


_JVP = "jvp(f, primals, tangents)"


def jvp(func, primals, tangents, *, strict=False, has_aux=False):
    """(func(*primals), the Jacobian-vector product with `tangents`), computed as two vector-Jacobian
    products: u -> J^T u is linear in u, so differentiating it at u with respect to u along the tangent
    gives J t."""
    if not isinstance(primals, tuple):
        raise RuntimeError(f"{_JVP}: Expected primals to be a tuple. E.g. it should be valid to call f(*primals).")
    flat_primals, primals_spec = _flatten(primals)
    tan, tangents_spec = _flatten(tangents)
    if primals_spec != tangents_spec:
        raise RuntimeError(f"{_JVP}: Expected primals and tangents to have the same python structure. For example, "
                           f"if primals is a tuple of 3 tensors, tangents also must be. Got primals with structure "
                           f"{primals_spec} and tangents with structure {tangents_spec}")
    for flat, name in ((flat_primals, "primals"), (tan, "tangents")):
        if not flat:
            raise RuntimeError(f"{_JVP}: Expected {name} to contain at least one Tensor.")
        for t in flat:
            if not isinstance(t, Tensor):
                raise RuntimeError(f"{_JVP}: Expected {name} to only contain Tensors, got {type(t)}")
    for p, t in zip(flat_primals, tan):
        if tuple(p.shape) != tuple(t.shape):
            raise RuntimeError(f"Trying to set a forward gradient that has a different size than that of the original "
                               f"Tensor, this is not supported. Tensor is of size {list(p.shape)} while the given "
                               f"forward gradient is of size {list(t.shape)}.")
    if autograd.forward_ad._level is not None:  # (PyTorch's jvp enters a dual level of its own: one at a time)
        raise RuntimeError("Nested forward mode AD is not supported at the moment")
    with enable_grad():
        args, tracked = _tracked(primals, range(len(primals)))
        out, aux = _split_aux(func(*args), has_aux, _JVP)
        outs, out_spec = _flatten(out)
        _only_tensors(outs, f"{_JVP}: expected f(*primals) to return only tensors")
        inputs = [t for leaves, _ in tracked for t in leaves]
        us = [o.new_zeros(o.shape).requires_grad_() for o in outs]
        vjps = _derivatives(outs, inputs, us)
        flat = _derivatives(vjps, us, tan)
    own = _own_leaves(tracked) | {id(u) for u in us}
    result = (_outside(out, own), _outside(_unflatten(flat, out_spec), own))
    return result + (_outside(aux, own),) if has_aux else result


def linearize(func, *primals):
    """(func(*primals), jvp_fn): jvp_fn(*tangents) gives the Jacobian-vector product at primals, func run once
    (the double-vjp of jvp kept, so each call differentiates the kept graph once more)."""
    primals_spec = _flatten(primals)[1]
    with enable_grad():
        args, tracked = _tracked(primals, range(len(primals)))
        out = func(*args)
        outs, out_spec = _flatten(out)
        _only_tensors(outs, "linearize(f, *primals): expected f(*primals) to return only tensors")
        inputs = [t for leaves, _ in tracked for t in leaves]
        us = [o.new_zeros(o.shape).requires_grad_() for o in outs]
        vjps = _derivatives(outs, inputs, us)
    own = _own_leaves(tracked) | {id(u) for u in us}

    def jvp_fn(*tangents):
        tan, tangents_spec = _flatten(tangents)
        if tangents_spec != primals_spec:
            raise RuntimeError(f"Expected the tangents {tangents_spec} to have the same argspec as the primals "
                               f"{primals_spec}")
        for i, (p, t) in enumerate(zip(inputs, tan)):
            for what, want, got in (("shape", p.shape, t.shape), ("dtype", p.dtype, t.dtype)):
                if got != want:
                    raise RuntimeError(f"tangent:{i} with {what} {got} in flattened pytree doesn't match the {what} "
                                       f"{want} of the corresponding primal.")
        with enable_grad():
            flat = _derivatives(vjps, us, tan)
        return _outside(_unflatten(flat, out_spec), own)

    return _outside(out, own), jvp_fn


_REMOVE = ("mutations", "mutations_and_views")


def functionalize(func, *, remove="mutations"):
    """func as PyTorch's functionalized program runs it: each input it mutates ends with the mutated value (the
    program's copy back), while no output aliases a mutated input; with remove="mutations_and_views" no output
    is a view of an input either (an input given back unchanged stays itself)."""
    if remove not in _REMOVE:
        raise RuntimeError(
            f"functionalize(f, remove='mutations'): received invalid argument for remove={remove}. Valid options are:\n"
            "     remove='mutations': all inplace and out= operators will be removed from the program, and replaced "
            "with their out-of-place equivalents.\n"
            "     remove='mutations_and_views': In addition to the above, all aliasing operators {view} will be "
            "replaced with their non-aliasing counterparts, {view}_copy.\n")

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        inputs = [x for x in _flatten((args, kwargs))[0] if isinstance(x, Tensor)]
        versions = [x._version for x in inputs]
        outs, spec = _flatten(func(*args, **kwargs))
        mutated = {id(x) for x, v in zip(inputs, versions) if x._version != v}
        copied = [x for x in inputs if remove == "mutations_and_views" or id(x) in mutated]

        def detached(o):  # a copy of o where it shares memory with an input it may not alias
            if not isinstance(o, Tensor) or any(o is x and id(x) not in mutated for x in inputs):
                return o
            return o.clone() if any(np.may_share_memory(o.array, x.array) for x in copied) else o

        return _unflatten([detached(o) for o in outs], spec)

    return wrapper


def _jacobian(func, argnums, has_aux, api, chunk_size=None, randomness=None):
    """The Jacobian function jacrev and jacfwd both give: one backward per output element. `api` names the
    transform PyTorch reports an output it cannot differentiate through; `randomness` is jacfwd's (PyTorch
    maps its forward passes with vmap, so a random draw is refused unless allowed)."""
    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        if chunk_size is not None and not isinstance(chunk_size, int):  # (PyTorch's, from splitting the basis)
            raise TypeError(f"can't multiply sequence by non-int of type '{type(chunk_size).__name__}'")
        if randomness is not None and randomness not in ("error", "different", "same"):
            raise RuntimeError(f"Only allowed values for randomness are 'error', 'different', or 'same'. "
                               f"Got {randomness}")
        nums = _argnums(argnums, args)
        state = _random.get_rng_state() if randomness == "error" else None
        with enable_grad():
            args, tracked = _tracked(args, nums)
            out, aux = _split_aux(func(*args, **kwargs), has_aux, api)
            if state is not None:
                _refuse_random(state)
            outs, out_spec = _flatten(out)
            _only_tensors(outs, f"{api}: expected f(*primals) to return only tensors")
            inputs = [t for leaves, _ in tracked for t in leaves]
            jacobians = []
            for o in outs:
                rows = [_derivatives([e], inputs) for e in o.reshape(-1)]
                per_input = [stack([r[i] for r in rows]).reshape(tuple(o.shape) + tuple(x.shape)) if rows
                             else x.new_zeros(tuple(o.shape) + tuple(x.shape)) for i, x in enumerate(inputs)]
                jacobians.append(_per_argnum(per_input, tracked, argnums))
        own = _own_leaves(tracked)
        jac = _outside(_unflatten(jacobians, out_spec), own)
        return (jac, _outside(aux, own)) if has_aux else jac

    return wrapper


def jacrev(func, argnums=0, *, has_aux=False, chunk_size=None, _preallocate_and_copy=False):
    """A function returning the Jacobian of func's output(s) with respect to args[argnums]: for an output of
    shape O and an input of shape I, a tensor of shape O + I (one backward per output element)."""
    if not (chunk_size is None or chunk_size > 0):
        raise ValueError("jacrev: `chunk_size` should be greater than 0.")
    return _jacobian(func, argnums, has_aux, "vjp(f, *primals)", chunk_size=chunk_size)


def jacfwd(func, argnums=0, has_aux=False, *, randomness="error"):
    """The Jacobian, as jacrev (PyTorch computes it in forward mode; the values are the same). A random draw
    in func is refused unless randomness is 'same' or 'different', as PyTorch's."""
    return _jacobian(func, argnums, has_aux, _JVP, randomness=randomness)


def hessian(func, argnums=0):
    """The Hessian of func's scalar output with respect to args[argnums]: the Jacobian of its gradient."""
    return jacfwd(jacrev(func, argnums), argnums)


# ---- vmap ---------------------------------------------------------------------------------------------------

def _name(func):
    return getattr(func, "__name__", repr(func))


def _refuse_random(state):
    if _random.get_rng_state() != state:
        raise RuntimeError("vmap: called random operation while in randomness error mode. Please either use the "
                           "'same' or 'different' randomness flags on vmap or perform the randomness operation out "
                           "of vmap")


_mapped = []  # per vmap level entered, the inputs it maps (their slices are the level's batched tensors)


def _root(t):
    return t if t._base is None else t._base


def unbatched_in_vmap(*tensors):
    """Whether one of `tensors` (None: absent), used inside a vmap, is not a slice of an input the innermost level
    maps: a tensor every slice's call shares (PyTorch's unbatched tensor), which an in-place update would write
    once per slice."""
    return bool(_mapped) and any(t is not None and all(_root(t) is not _root(leaf) for leaf in _mapped[-1])
                                 for t in tensors)


def _dims_per_leaf(dims, spec):
    """The mapped dim of each leaf of a pytree with structure `spec`: `dims` is an int or None for a whole
    subtree, or a container of the subtree's type (PyTorch's prefix rule). None where they do not match."""
    dims_leaves, dims_spec = _flatten(dims)
    try:
        subtrees = dims_spec.flatten_up_to(_unflatten([0] * spec.num_leaves, spec))
    except ValueError:
        return None
    return [d for d, sub in zip(dims_leaves, subtrees) for _ in range(_flatten(sub)[1].num_leaves)]


def vmap(func, in_dims=0, out_dims=0, randomness="error", *, chunk_size=None):
    """func mapped over a dim of its inputs: each mapped input is sliced along its `in_dims` entry (None:
    passed whole to every call), func runs once per slice, and each output is stacked along `out_dims`.

    randomness: 'error' raises if func draws random numbers (as PyTorch's default), 'different' lets each
    slice draw its own, 'same' gives every slice the same draws. chunk_size is checked as PyTorch's;
    running one slice at a time already bounds the memory it would."""
    if randomness not in ("error", "different", "same"):
        raise RuntimeError(f"Only allowed values for randomness are 'error', 'different', or 'same'. Got {randomness}")
    if not (chunk_size is None or chunk_size > 0):
        raise ValueError(f"vmap: chunk_size should be None or greater than 0. (got {chunk_size})")
    name = _name(func)

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        for d in _flatten(out_dims)[0]:
            if d is not None and not isinstance(d, int):
                raise ValueError(f"vmap({name}, ..., out_dims={out_dims}): `out_dims` must be an int, None or a python "
                                 "collection of ints representing where in the outputs the vmapped dimension should "
                                 "appear.")
        if not isinstance(in_dims, (int, tuple)):
            raise ValueError(f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): expected `in_dims` to be int or a "
                             f"(potentially nested) tuple matching the structure of inputs, got: {type(in_dims)}.")
        if not args:
            raise ValueError(f"vmap({name})(<inputs>): got no inputs. Maybe you forgot to add inputs, or you are "
                             "trying to vmap over a function with no inputs. The latter is unsupported.")
        leaves, spec = _flatten(args)
        dims = _dims_per_leaf(in_dims, spec)
        if dims is None:
            raise ValueError(f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): in_dims is not compatible with the "
                             f"structure of `inputs`. in_dims has structure {_flatten(in_dims)[1]} but inputs "
                             f"has structure {spec}.")
        mapped = []
        for i, (leaf, d) in enumerate(zip(leaves, dims)):
            if d is None:
                continue
            if not isinstance(d, int):
                raise ValueError(f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): Got in_dim={d} for an input but "
                                 "in_dim must be either an integer dimension or None.")
            if not isinstance(leaf, Tensor):
                raise ValueError(f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): Got in_dim={d} for an input but the "
                                 f"input is of type {type(leaf)}. We cannot vmap over non-Tensor arguments, please use "
                                 "None as the respective in_dim")
            if not -leaf.ndim <= d < leaf.ndim:
                raise ValueError(f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): Got in_dim={d} for some input, but "
                                 f"that input is a Tensor of dimensionality {leaf.ndim} so expected in_dim to satisfy "
                                 f"-{leaf.ndim} <= in_dim < {leaf.ndim}.")
            mapped.append((i, leaf, d % leaf.ndim))
        if not mapped:
            raise ValueError("vmap: Expected at least one Tensor to vmap over")  # (PyTorch's words)
        sizes = [leaf.shape[d] for _, leaf, d in mapped]
        if len(set(sizes)) > 1:
            raise ValueError(f"vmap: Expected all tensors to have the same size in the mapped dimension, got sizes "
                             f"{sizes} for the mapped dimension")
        if chunk_size is not None and not isinstance(chunk_size, int):  # (PyTorch's, from splitting the inputs)
            raise TypeError(f"can't multiply sequence by non-int of type '{type(chunk_size).__name__}'")
        n = sizes[0]
        state = _random.get_rng_state() if randomness != "different" else None

        def call(slices):
            call_leaves = list(leaves)
            for (i, _, _), s in zip(mapped, slices):
                call_leaves[i] = s
            if randomness == "same":
                _random.set_rng_state(state)
            out = func(*_unflatten(call_leaves, spec), **kwargs)
            if randomness == "error":
                _refuse_random(state)
            return out

        _mapped.append([leaf for _, leaf, _ in mapped])
        try:
            if n == 0:  # the outputs' shapes come from one call on zeros of a slice's shape
                sample = call([leaf.new_zeros(tuple(leaf.shape[:d]) + tuple(leaf.shape[d + 1:]))
                               for _, leaf, d in mapped])
                return _stacked([sample], out_dims, name, empty=True)
            return _stacked([call([leaf.select(d, k) for _, leaf, d in mapped]) for k in range(n)], out_dims, name)
        finally:
            _mapped.pop()

    return wrapper


def _stacked(outs, out_dims, name, empty=False):
    first, spec = _flatten(outs[0])
    per_call = [first] + [_flatten(o)[0] for o in outs[1:]]
    if isinstance(outs[0], Tensor):  # (PyTorch's: one tensor out takes out_dims=(d,) as d, and no other container)
        dims = [out_dims[0]] if isinstance(out_dims, tuple) and len(out_dims) == 1 else \
            [out_dims] if out_dims is None or isinstance(out_dims, int) else None
    else:
        dims = _dims_per_leaf(out_dims, spec)
    if dims is None:
        raise ValueError(f"vmap({name}, ..., out_dims={out_dims})(<inputs>): out_dims is not compatible with the "
                         f"structure of `outputs`. out_dims has structure {_flatten(out_dims)[1]} but outputs has "
                         f"structure {spec}.")
    result = []
    for k, d in enumerate(dims):
        if d is None:  # an output the same for every slice: given once
            result.append(first[k])
            continue
        if not isinstance(first[k], Tensor):
            raise ValueError(f"vmap({name}, ...): `{name}` must only return Tensors, got type {type(first[k])}. Did you "
                             "mean to set out_dims= to None for output?")
        column = [c[k] for c in per_call]
        if empty:
            t = first[k].new_zeros((0,) + tuple(first[k].shape))
            result.append(t.movedim(0, d))
        else:
            result.append(stack(column, dim=d))
    return _unflatten(result, spec)


# ---- modules ------------------------------------------------------------------------------------------------

def functional_call(module, parameter_and_buffer_dicts, args=None, kwargs=None, *, tie_weights=True, strict=False):
    """module(*args, **kwargs) with its parameters and buffers replaced by the given tensors for the call
    (nn.utils.stateless's; the module is left as it was)."""
    from .nn.utils import stateless

    return stateless.functional_call(module, parameter_and_buffer_dicts, args, kwargs, tie_weights=tie_weights,
                                     strict=strict)


def stack_module_state(models):
    """(params, buffers): each name's tensors of `models` (same architecture) stacked along a new first dim,
    parameters as new leaves requiring grad: the state an ensemble's vmap over functional_call takes."""
    from .nn.utils import stateless

    return stateless.stack_module_state(models)


def replace_all_batch_norm_modules_(root):
    """root, each BatchNorm in it made to normalize by the batch's own statistics (no running stats kept): what
    vmap over a model with BatchNorm needs, each slice's statistics its own."""
    from .nn.modules.batchnorm import _BatchNorm

    for module in root.modules():
        if isinstance(module, _BatchNorm) and module.track_running_stats:
            module.running_mean = module.running_var = module.num_batches_tracked = None
            module.track_running_stats = False
    return root
