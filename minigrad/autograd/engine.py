"""The backward pass: replay the recorded graph in reverse, without recursion.

1. From the roots, walk `next_functions` once (an explicit stack) to count, for every node,
   how many edges lead into it.
2. Run nodes from a ready queue, later-created nodes first (as PyTorch orders them): a node is
   ready when every edge into it has delivered its gradient. Gradients arriving on the same
   edge are summed.
3. After a node runs, its saved tensors are released unless `retain_graph`.
A gradient's array is reused (summed into in place, adopted as a leaf's `.grad`) only when nothing
outside the engine can see it: `reusable` is that one test.
`AccumulateGrad` nodes add into the leaves' `.grad`; `autograd.grad` instead captures the
gradients flowing into the requested inputs and leaves `.grad` alone.
"""
import heapq
import sys
import warnings
from itertools import repeat
from operator import is_not

import numpy as np

from .._fp_errors import quiet as fp_quiet, restore as fp_restore
from .._warn_once import warn_once
from ..device import array_module
from . import function as _function  # its `Tensor`, bound by minigrad.tensor: no import per call
from . import grad_mode, recording
from .function import AccumulateGrad
from .grad_mode import state


def _make_grads(outputs, grad_outputs):
    if grad_outputs is not None and len(grad_outputs) != len(outputs):
        n = min(len(outputs), len(grad_outputs))
        _make_grads(outputs[:n], grad_outputs[:n])  # (the pairs are checked first, as PyTorch checks them)
        raise RuntimeError(f"got {len(outputs)} tensors and {len(grad_outputs)} gradients")
    Tensor = _function.Tensor
    grads = []
    for i, t in enumerate(outputs):
        g = None if grad_outputs is None else grad_outputs[i]
        if g is None:
            if not t._requires_grad:
                grads.append(None)
                continue
            if t.array.size != 1:
                raise RuntimeError("grad can be implicitly created only for scalar outputs")
            ones = t.array.copy()  # (one element: numpy's ones() is a Python function, some times dearer)
            ones.fill(1)
            g = Tensor._wrap(ones)
        else:
            if not isinstance(g, Tensor):
                raise TypeError(f"gradients can be either Tensors or None, but got {type(g).__name__}")
            if g.array.shape != t.array.shape:
                raise RuntimeError(
                    f"Mismatch in shape: grad_output[{i}] has a shape of {g.shape} and output[{i}] has "
                    f"a shape of {t.shape}."
                )
            if g.array.dtype != t.array.dtype:  # the output's dtype, as PyTorch's engine casts it (not across complex)
                if g.is_complex() != t.is_complex():
                    raise RuntimeError(
                        "For complex Tensors, both grad_output and output are required to have the same dtype. "
                        f"Mismatch in dtype: grad_output[{i}] has a dtype of {g.dtype} and output[{i}] has a "
                        f"dtype of {t.dtype}.")
                g = g.to(t.dtype)
        grads.append(g)
    return grads


def _roots(outputs):
    for i, t in enumerate(outputs):
        if not t._requires_grad:
            raise RuntimeError(f"element {i} of tensors does not require grad and does not have a grad_fn")


_NO_STOP = frozenset()


def _dependencies(root_nodes, stop=_NO_STOP):
    """Number of edges into each node reachable from the roots (iterative DFS); the roots are in it
    (with 0 unless another root leads to them). The graph past a node in `stop` is not walked."""
    deps = dict.fromkeys(root_nodes, 0)
    stack = list(deps)
    while stack:
        node = stack.pop()
        if stop and node in stop:
            continue
        for nxt, _ in node.next_functions:
            if nxt is None:
                continue
            if nxt in deps:
                deps[nxt] += 1
            else:
                deps[nxt] = 1
                stack.append(nxt)
    return deps


def _needed(root_nodes, deps, targets, stop=_NO_STOP):
    """Nodes with a target downstream: only those run when `inputs` is given (targets are captured
    before they would run). `root_nodes`: distinct nodes, each in `deps`."""
    # reverse topological order via the dependency counts, then propagate "reaches a target" (plain loops:
    # a generator per node would cost more than the node's own test, and this runs per autograd.grad call)
    order, counts = [], dict(deps)
    ready = [n for n in root_nodes if counts[n] == 0]
    while ready:
        node = ready.pop()
        order.append(node)
        if stop and node in stop:
            continue
        for nxt, _ in node.next_functions:
            if nxt is not None:
                left = counts[nxt] - 1
                counts[nxt] = left
                if left == 0:
                    ready.append(nxt)
    needed, reach = set(), set(targets)  # reach: the targets and the nodes found needed
    for node in reversed(order):
        for nxt, _ in node.next_functions:
            if nxt in reach:  # (None is in neither)
                needed.add(node)
                reach.add(node)
                break
    return needed


def run_backward(outputs, grad_outputs, retain_graph, create_graph, capture=None, accumulate=True,
                 stop_at_capture=False):
    """Run the graph from `outputs`; returns {(node, nr): grad} for the `capture` edges.
    stop_at_capture: the capture edges' nodes do not run, nor the graph past them (minigrad.compile's
    recorded backward of a call: what lies past its inputs is the caller's graph, not the call's), and
    each capture edge's gradient comes back unsummed, as the list of the parts that reached it in order
    (the caller's engine sums them with its own, in eager's order)."""
    for t in outputs:
        if t._base is not None and t._view_version != t._version_counter[0]:  # (as Function.apply's inputs)
            t._regrow_view()
    _roots(outputs)
    grads = _make_grads(outputs, grad_outputs)
    if retain_graph is None:
        retain_graph = create_graph
    if create_graph and accumulate:
        _warn_reference_cycle()

    # this thread's autograd state through its thread-local's own dict: an item there costs half an attribute of
    # the thread-local (as in Function.apply)
    mode = state.__dict__
    buffers = {}  # node -> list of summed grads, one per output_nr; the roots' first
    for t, g in zip(outputs, grads):
        if g is not None:
            node, nr = t._edge()
            if nr == 0 and node not in buffers:  # (as in the loop below)
                buffers[node] = [g]
            else:
                _add_to_buffer(buffers, node, nr, g, mode["grad_enabled"])
    root_nodes = list(buffers)
    grads = g = results = None
    targets = needed = None
    if capture is not None:
        targets = {node for node, _ in capture}
    stop = frozenset(targets) if stop_at_capture else _NO_STOP
    deps = _dependencies(root_nodes, stop)
    if capture is not None:
        needed = _needed(root_nodes, deps, targets, stop)

    captured = {}
    parts = captured if stop else None
    # past the roots, a node becomes ready once: when its last incoming edge delivers. Every node's _seq is its
    # own (one counter), so the heap never compares two entries' nodes
    ready = []
    for node in root_nodes:  # (a loop: a comprehension is a function call of its own)
        if deps[node] == 0:
            ready.append((-node._seq, node))
    heapq.heapify(ready)

    push, pop = heapq.heappush, heapq.heappop
    anomaly = mode["anomaly"]  # (read once a backward, as nodes are many)
    prev_mode, prev_shown, prev_retain = mode["grad_enabled"], mode["grad_shown"], mode["retain_graph"]
    create_graph = bool(create_graph)  # (the grad mode of the nodes' backward: sums below are recorded in it)
    # (grad_shown off: is_grad_enabled() is create_graph in a node's backward, even under enable_grad in inference_mode)
    mode["grad_enabled"], mode["grad_shown"], mode["retain_graph"] = create_graph, False, bool(retain_graph)
    # Each node runs in the backward's grad mode, as PyTorch restores its thread-local state for every node: a
    # hook or a user Function's backward that changes the mode and leaves it changed does not reach the next
    # node. Only those can change it (a built-in op's backward leaves it as it found it), so the mode is
    # written again only after one of them ran: no thread-local write per node.
    restore = False
    fp = fp_quiet()  # the nodes' arithmetic without numpy's inf/nan warnings: once a pass, not once a node
    try:
        while ready:
            node = pop(ready)[1]
            if restore:
                mode["grad_enabled"], mode["grad_shown"] = create_graph, False
                restore = False
            node_grads = buffers.pop(node, None) or []
            leaf = type(node) is AccumulateGrad
            if node._hooked and (node._pre_hooks or node._node_pre_hooks) or (leaf and node.variable._hooks):
                node_grads = _run_pre_hooks(node, node_grads)
                restore = True
            if capture is not None:
                if node in targets:  # (one look per node: no (node, nr) pair made for every gradient of every node)
                    for nr, g in enumerate(node_grads):
                        if (node, nr) in capture:
                            captured[(node, nr)] = g
                if node in stop:
                    continue
                if node not in needed:  # no target past it: it runs as a node that got no gradient (the counts alone)
                    node_grads = None
            if leaf:
                if accumulate and node_grads and node_grads[0] is not None:
                    # drop the engine's other references, so that `reusable` counts exactly the
                    # _LEAF_HOLDERS it expects (the leaf may then adopt the gradient without a copy)
                    grad, node_grads, results, g = node_grads[0], None, None, None
                    node.apply(grad)
                    grad = None
                    if node.variable._post_accumulate_grad_hooks:
                        restore = True
                continue
            if not node_grads or (node_grads[0] is None and not any(map(is_not, node_grads, repeat(None)))):
                for nxt, _ in node.next_functions:  # nothing flows on: only the counts of the edges
                    if nxt is not None:
                        left = deps[nxt] - 1
                        deps[nxt] = left
                        if left == 0:
                            push(ready, (-nxt._seq, nxt))
                continue
            if len(node_grads) < len(node._output_meta):  # (the list is the engine's own: popped from the buffers)
                node_grads += [None] * (len(node._output_meta) - len(node_grads))
            results = node.apply(*node_grads)
            if anomaly:
                _check_anomaly(node, results)
            post_hooks = None
            if node._hooked:  # (a user Function's backward or a hook may have changed the grad mode)
                restore = True
                post_hooks = node._post_hooks
            if post_hooks:
                for hook in tuple(post_hooks.values()):
                    r = hook(results, tuple(node_grads))
                    if r is not None:
                        results = _hook_result(hook, r, len(results))  # (the edges below take one gradient each)
            if not retain_graph:
                node.release_saved()
            for (nxt, nr), g in zip(node.next_functions, results):  # (one gradient per edge: BackwardNode.apply's)
                if nxt is None:
                    continue
                if g is not None:
                    if stop and nxt in stop:
                        parts.setdefault((nxt, nr), []).append(g)
                    elif nr == 0 and nxt not in buffers:  # the first gradient into a node: no sum (inline: once an edge)
                        buffers[nxt] = [g]
                    else:  # (a post hook may have kept the results: then they are not the engine's alone)
                        _add_to_buffer(buffers, nxt, nr, g, create_graph, () if post_hooks else results)
                left = deps[nxt] - 1
                deps[nxt] = left
                if left == 0:
                    push(ready, (-nxt._seq, nxt))
            g = None  # no stray reference: a leaf adopts a gradient only no one else holds
    finally:
        mode["grad_enabled"], mode["grad_shown"], mode["retain_graph"] = prev_mode, prev_shown, prev_retain
        fp_restore(fp)
    return captured


def _check_anomaly(node, results):
    """Anomaly mode: PyTorch's error for a node whose backward returned NaN in some gradient."""
    if not state.anomaly_check_nan:
        return
    for i, g in enumerate(results):
        a = g._values().array if getattr(g, "is_sparse", False) else getattr(g, "array", None)
        if a is not None and a.dtype.kind in "fc" and bool(array_module(a).isnan(a).any()):
            raise RuntimeError(f"Function '{node.name()}' returned nan values in its {i}th output.")


def _add_to_buffer(buffers, node, nr, g, grad_enabled, siblings=()):
    """Put `g` in `node`'s input buffer at `nr`, summed with what other edges brought there. `grad_enabled`:
    the grad mode the caller runs in (a backward's: create_graph), known to it without a thread-local read.
    `siblings`: the engine's own tuple of the gradients g came with (x * x's two), which may hold the buffer's."""
    buf = buffers.get(node)
    if buf is None:
        buf = buffers[node] = [None] * (nr + 1)
    elif len(buf) <= nr:
        buf += [None] * (nr + 1 - len(buf))
    if buf[nr] is None:
        buf[nr] = g
    elif buf[nr].is_sparse or g.is_sparse:
        buf[nr] = _sum_with_sparse(buf[nr], g)
    elif grad_enabled or recording.recorders_made and recording.hook.recorder is not None \
            or not _add_in_place(buf, nr, g, siblings):
        buf[nr] = buf[nr] + g  # a Tensor add, so create_graph (and minigrad.compile) records it


def _sum_with_sparse(old, new):
    """Two gradients on one edge, one of them sparse: sparse with sparse stays sparse, the newer one's
    elements first (PyTorch's order); with a dense one the sum is dense."""
    if old.is_sparse and new.is_sparse:
        return new + old
    dense, sparse = (new, old) if old.is_sparse else (old, new)
    return dense + sparse.to_dense()


def _add_in_place(buf, nr, g, siblings):
    """`buf[nr] += g` when the buffer's gradient may be reused (a sum of two branches, such as a
    residual stream's, then makes no new array); False, doing nothing, when it may not or when the
    sum would broadcast or promote."""
    old = buf[nr]  # references to `old` outside `reusable`: the buffer's slot, this local, its places in siblings
    # (no local names old.array: it would count as one more holder of the array)
    if not (type(old.array) is np.ndarray and type(g.array) is np.ndarray and old.array.shape == g.array.shape
            and old.array.dtype == g.array.dtype and reusable(old, 2 + sum(s is old for s in siblings))):
        return False
    np.add(old.array, g.array, out=old.array)
    old._version_counter[0] += 1  # (PyTorch's add_ into the buffer: the summed gradient's version shows it)
    return True


def _hook_result(hook, r, n):
    """What a node hook returned in place of `n` gradients, with PyTorch's refusals."""
    if not isinstance(r, tuple):
        raise TypeError(f"expected tuple, but hook returned '{type(r).__name__}'")
    if len(r) != n:
        raise RuntimeError(f"hook '{getattr(hook, '__name__', '<unknown>')}' has returned an incorrect number of "
                           f"values (got {len(r)}, but expected {n})")
    return r


def _run_pre_hooks(node, grads):
    """Tensor hooks on this node's outputs (register_hook, retain_grad) may replace a gradient; then the node's
    own pre-hooks (register_prehook) see all its gradients and may replace them."""
    hooks = node._pre_hooks
    if not hooks and not (isinstance(node, AccumulateGrad) and node.variable._hooks):
        return _run_node_pre_hooks(node, grads)
    grads = list(grads)
    if isinstance(node, AccumulateGrad):
        hooks = {0: node.variable._hooks or {}}
    for nr, fns in hooks.items():
        if nr >= len(grads) or grads[nr] is None:
            continue
        # retain_grad's hook runs last, so it sees what the other hooks made of the gradient
        fns = tuple(fns.values())
        ordered = [f for f in fns if not _is_retain(f)] + [f for f in fns if _is_retain(f)]
        for fn in ordered:
            r = fn(grads[nr])
            if r is not None:
                grads[nr] = _checked_hook_result(fn, grads[nr], r)
    return _run_node_pre_hooks(node, grads)


def _checked_hook_result(fn, grad, r):
    """A tensor hook's replacement gradient, checked as PyTorch checks it: a Tensor of the gradient's type and size."""
    if not isinstance(r, _function.Tensor) and not getattr(r, "is_sparse", False):
        raise TypeError(f"expected Variable, but hook returned '{type(r).__name__}'")
    name = getattr(fn, "__name__", "<unknown>")
    if r.dtype != grad.dtype:
        raise RuntimeError(f"hook '{name}' has changed the type of value (was {grad.type()} got {r.type()})")
    if r.shape != grad.shape:
        raise RuntimeError(f"hook '{name}' has changed the size of value")
    return r


def _run_node_pre_hooks(node, grads):
    hooks = node._node_pre_hooks
    if not hooks:
        return grads
    meta = getattr(node, "_output_meta", None)  # (a hook sees a slot per output, None where none came)
    grads = list(grads) + [None] * ((len(meta) if meta else 1) - len(grads))
    for fn in tuple(hooks.values()):
        r = fn(tuple(grads))
        if r is not None:
            grads = list(_hook_result(fn, r, len(grads)))
    return grads


def _is_retain(fn):
    return type(fn).__name__ == "_RetainGrad"


def _getrefcount_own():
    o = object()  # held by this local only
    return sys.getrefcount(o) - 1


# What sys.getrefcount adds for its own argument (1 up to Python 3.13; newer interpreters may pass
# it as a borrowed reference and add 0), measured rather than assumed.
_OWN = _getrefcount_own()


def reusable(grad, holders, contiguous=False):
    """Whether the engine may reuse gradient `grad`'s array: sum another gradient into it in place,
    or adopt it as a leaf's `.grad` without a copy (`contiguous`: only a C-contiguous one, a `.grad`'s
    layout). The one test behind both reuses.

    Reuse is safe only when nothing but the engine can see the tensor or its array, as PyTorch
    steals a gradient whose use count is one: `grad` has no references beyond the `holders` its
    caller counts (the engine's buffer slots and locals on the way here), its array none beyond
    `grad` itself (no hook kept it, no other leaf adopted it, no node saved it), and the array owns
    writeable memory (it is no view). Otherwise writing into it would change what someone else
    holds, and adopting it would let two `.grad`s alias each other.
    """
    if not (sys.getrefcount(grad) <= holders + 1 + _OWN  # + this call's parameter
            and sys.getrefcount(arr := grad.array) <= 2 + _OWN  # the tensor's slot and `arr` here
            and getattr(arr, "base", None) is None):
        return False
    flags = arr.flags  # (read once: each read makes a new flags object)
    return flags.writeable and (flags.c_contiguous or not contiguous)


# References to the gradient a leaf receives, outside accumulate_into_leaf: run_backward's local and
# AccumulateGrad.apply's argument, then accumulate_into_leaf's own argument.
_LEAF_HOLDERS = 3


def accumulate_into_leaf(variable, grad):
    """`.grad += grad`, in place when possible.

    The first gradient is adopted without a copy only when `reusable` says nothing else can see it
    (a hook may have kept the tensor, the user may have passed it to backward, another leaf may have
    adopted its array: `y = x + w` gives both the same gradient). Otherwise it is copied, so two
    leaves' `.grad` never alias each other or anything else.
    """
    Tensor = _function.Tensor
    if recording.recorders_made and recording.hook.recorder is not None:  # minigrad.compile is capturing
        return recording.hook.recorder.on_accumulate(variable, grad)
    if grad.is_sparse or variable._grad is not None and variable._grad.is_sparse:
        return _accumulate_sparse(variable, grad)
    if grad.array.shape != variable.array.shape:
        raise RuntimeError(
            f"Function AccumulateGrad returned an invalid gradient - got {list(grad.array.shape)} "
            f"but expected shape compatible with {list(variable.array.shape)}"
        )
    if grad.array.dtype != variable.array.dtype:
        g = grad.array.real if variable.array.dtype.kind != "c" else grad.array  # (a real leaf: the real part)
        grad = Tensor._wrap(g.astype(variable.array.dtype))  # fresh: held by this local alone
    old = variable._grad  # (the slot behind Tensor.grad: a capture never reaches here)
    if old is None:
        if state.grad_enabled:  # create_graph: keep the graph of the gradient
            variable._grad = grad
            return
        if reusable(grad, _LEAF_HOLDERS, contiguous=True):
            # no one else sees it: PyTorch steals such a gradient, and a plain tensor (no graph of its own,
            # no inference flag) is kept as it is: no new Tensor per leaf per backward
            if type(grad) is Tensor and grad.grad_fn is None and not grad._requires_grad and grad._base is None \
                    and not grad_mode.inference_tensors_made:
                variable._grad = grad
            else:
                variable._grad = Tensor._output(grad.array, None, grad._version_counter)
        else:
            variable._grad = Tensor._output(grad.array.copy(), None)
    elif state.grad_enabled or old._requires_grad:
        variable._grad = old + grad
    else:
        old.array += grad.array
        old._bump_version()


def _accumulate_sparse(variable, grad):
    """accumulate_into_leaf where the gradient or the `.grad` is sparse (Embedding(sparse=True)'s): sparse
    and sparse add up to a sparse `.grad` (as `+` adds them); with a dense one it is dense."""
    if tuple(grad.shape) != tuple(variable.array.shape):
        raise RuntimeError(
            f"Function AccumulateGrad returned an invalid gradient - got {list(grad.shape)} "
            f"but expected shape compatible with {list(variable.array.shape)}"
        )
    old = variable._grad
    if not state.grad_enabled:  # (create_graph keeps the gradient's graph)
        grad = grad.detach()  # a sparse one: a wrapper of its own, apart from any a hook kept
    if old is None:  # (a sparse one with contiguous values, as PyTorch's clone of it)
        variable._grad = grad._contiguous_values() if grad.is_sparse else grad
    elif old.is_sparse and grad.is_sparse:
        variable._grad = old + grad
    elif old.is_sparse:
        variable._grad = grad + old.to_dense()
    elif state.grad_enabled or old._requires_grad:
        variable._grad = old + grad.to_dense()
    else:
        old.array += grad.to_dense().array
        old._bump_version()


_function.accumulate_into_leaf = accumulate_into_leaf  # function.py's AccumulateGrad calls it (no import per call)


def _is_checkpoint_valid():
    """False while this thread's engine runs for autograd.grad or backward(inputs=...), where PyTorch's
    reentrant checkpoint refuses to run its backward (asked by that node only: nothing per node here)."""
    return state.checkpoint_valid


def _warn_reference_cycle():
    """PyTorch's warning, once a process, for backward() with create_graph=True: each leaf's .grad then holds a
    graph leading back to the leaf."""
    warn_once("backward_create_graph", "Using backward() with create_graph=True will create a reference cycle "
              "between the parameter and its gradient which can cause a memory leak. We recommend using "
              "autograd.grad when creating the graph to avoid this. If you have to use this function, make sure to "
              "reset the .grad fields of your parameters to None after use to break the cycle and avoid the leak.")


def _run_with_inputs(outputs, grad_outputs, retain_graph, create_graph, capture):
    saved, state.checkpoint_valid = state.checkpoint_valid, False
    try:
        return run_backward(outputs, grad_outputs, retain_graph, create_graph, capture=capture, accumulate=False)
    finally:
        state.checkpoint_valid = saved


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False, inputs=None):
    """Accumulate d(tensors)/d(leaves) into the leaves' `.grad` (or only into `inputs`')."""
    Tensor = _function.Tensor
    if isinstance(tensors, Tensor):
        tensors = [tensors]
    if isinstance(grad_tensors, Tensor):
        grad_tensors = [grad_tensors]
    elif grad_tensors is not None:
        grad_tensors = tuple(grad_tensors)  # (PyTorch's: a number is "not iterable", an array's items are checked)
    if inputs is None:
        run_backward(list(tensors), grad_tensors, retain_graph, create_graph)
        return
    if isinstance(inputs, Tensor):
        inputs = [inputs]
    inputs = list(inputs)
    if not inputs:
        raise RuntimeError("`inputs` argument to `backward()` cannot be empty.")
    if not all(t._requires_grad for t in inputs):
        _roots(list(tensors))  # (the roots are checked first, as PyTorch checks them)
        raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
    edges = [t._edge() for t in inputs]
    if create_graph:
        _warn_reference_cycle()
    captured = _run_with_inputs(list(tensors), grad_tensors, retain_graph, create_graph, set(edges))
    # accumulate as the engine's AccumulateGrad does: in grad mode only with create_graph
    prev_mode = state.grad_enabled, state.grad_shown
    state.grad_enabled, state.grad_shown = bool(create_graph), False
    try:
        for t, e in zip(inputs, edges):
            # references here: `captured`, `g`, then accumulate_into_leaf's argument (the same count
            # as the engine's _LEAF_HOLDERS, so a gradient anyone else holds is copied)
            g = captured.get(e)
            if g is None:
                continue
            if t.grad_fn is None:
                accumulate_into_leaf(t, g)
            elif not t._retains_grad:  # (one that does: its retain hook has added g in the run)
                # a non-leaf named in inputs keeps its .grad from now on, as after retain_grad() (PyTorch's)
                t.grad = g if t._grad is None else t._grad + g
                t.retain_grad()
            g = None
    finally:
        state.grad_enabled, state.grad_shown = prev_mode


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False, only_inputs=True,
         allow_unused=None, is_grads_batched=False, materialize_grads=False):
    """Gradients of `outputs` w.r.t. `inputs`, returned (not accumulated into `.grad`).

    With `create_graph=True` the backward pass is itself recorded, so the result can be
    differentiated again (Hessian-vector products, gradient penalties). `only_inputs` is PyTorch's
    deprecated flag (ignored there too); `materialize_grads` gives zeros for unused inputs.
    """
    if not only_inputs:
        warnings.warn("only_inputs argument is deprecated and is ignored now (defaults to True). To accumulate "
                      "gradient for other parts of the graph, please use torch.autograd.backward.", FutureWarning,
                      stacklevel=2)
    if is_grads_batched:
        return _batched_grad(outputs, inputs, grad_outputs, retain_graph, create_graph, allow_unused,
                             materialize_grads)
    if materialize_grads:
        if allow_unused is False:
            raise ValueError("Expected allow_unused to be True or not passed when materialize_grads=True, "
                             "but got: allow_unused=False.")
        allow_unused = True
    Tensor = _function.Tensor
    single = isinstance(inputs, Tensor)
    outputs = [outputs] if isinstance(outputs, Tensor) else list(outputs)
    inputs = [inputs] if single else list(inputs)
    if not inputs:
        raise RuntimeError("`inputs` argument to `grad()` cannot be empty.")
    if isinstance(grad_outputs, Tensor):
        grad_outputs = [grad_outputs]
    elif grad_outputs is not None:
        grad_outputs = tuple(grad_outputs)
    _roots(outputs)  # (the outputs are checked next, as PyTorch checks them)
    for t in inputs:
        if not isinstance(t, Tensor):  # (a list in the list: `grad(loss, [params])`)
            raise RuntimeError(f"all inputs have to be Tensors or GradientEdges, but got {type(t).__name__}")
        if not t._requires_grad:
            raise RuntimeError("One of the differentiated Tensors does not require grad")
    edges = [t._edge() for t in inputs]
    captured = _run_with_inputs(outputs, grad_outputs, retain_graph, create_graph, set(edges))
    result = []
    for i, e in enumerate(edges):
        g = captured.get(e)
        if g is None and not allow_unused:
            raise RuntimeError(
                f"The differentiated Tensor at index {i} appears to not have been used in the graph. "
                "Set allow_unused=True if this is the desired behavior."
            )
        if g is None and materialize_grads:
            g = Tensor._wrap(_zeros_like(inputs[len(result)].array))
        result.append(g)
    return tuple(result)


def _batched_grad(outputs, inputs, grad_outputs, retain_graph, create_graph, allow_unused, materialize_grads):
    """grad() with a batch of grad_outputs along dim 0: one backward per row, each input's rows stacked."""
    import minigrad  # (the engine's own package: stack is a recorded op, so create_graph works)

    Tensor = _function.Tensor
    outs = [outputs] if isinstance(outputs, Tensor) else list(outputs)
    if grad_outputs is None:
        gs = [None] * len(outs)
    else:
        gs = [grad_outputs] if isinstance(grad_outputs, Tensor) else list(grad_outputs)
    for i, (o, g) in enumerate(zip(outs, gs)):
        if g is None:
            if o.ndim:
                raise RuntimeError("grad can be implicitly created only for scalar outputs")
            raise ValueError("vmap(vjp, in_dims=0, ...)(<inputs>): Got in_dim=0 for some input, but that input is a "
                             "Tensor of dimensionality 0 so expected in_dim to satisfy 0 <= in_dim < 0.")
        if tuple(g.shape[1:]) != tuple(o.shape):  # (PyTorch's text shows the grad_output's shape past dim 1)
            raise RuntimeError(
                "If `is_grads_batched=True`, we interpret the first dimension of each grad_output as the batch "
                "dimension. The sizes of the remaining dimensions are expected to match the shape of corresponding "
                f"output, but a mismatch was detected: grad_output[{i}] has a shape of {g.shape[2:]} and "
                f"output[{i}] has a shape of {o.shape}. If you only want some tensors in `grad_output` to be "
                "considered batched, consider using vmap.")
    sizes = [g.shape[0] for g in gs]
    if len(set(sizes)) > 1:
        raise ValueError(f"vmap: Expected all tensors to have the same size in the mapped dimension, got sizes "
                         f"{sizes} for the mapped dimension")
    n = sizes[0]
    if n == 0:
        raise IndexError("index 0 is out of bounds for dimension 0 with size 0")
    keep = create_graph if retain_graph is None else retain_graph
    rows = [grad(outs, inputs, [g[b] for g in gs], retain_graph=keep or b < n - 1, create_graph=create_graph,
                 allow_unused=allow_unused, materialize_grads=materialize_grads) for b in range(n)]
    return tuple(None if r[0] is None else minigrad.stack(list(r)) for r in zip(*rows))


def _zeros_like(a):
    """Zeros shaped and typed as the array `a`, on its device."""
    z = a.copy()
    z[...] = 0
    return z
