"""Where the speed lives: one setting, one registry of implementations, one way to pick one.

A fused op (linear, embedding, gelu, layer_norm, cross_entropy, dropout, scaled_dot_product_attention,
conv's grouped products, AdamW's update) is defined once, in nn/_functional/<op>.py (nn/optim/adam.py
for AdamW): its argument checks, its semantics and its plain array code (numpy on the CPU, cupy on a
GPU), one `Function` whose forward and backward run that code (sigmoid, softmax and log_softmax are
the engine's own ops, in minigrad/ops: `minigrad.sigmoid` and `F.sigmoid` are one op). Its reference,
written from minigrad's primitive ops and differentiated by autograd, is in nn/_functional/reference.py.

Which code runs is one setting, `MINIGRAD_KERNELS` in the environment or `set_kernels` here:

    reference   the references (a graph of primitive nodes: slow, for reading)
    numpy       the ops' own array code, and the registrations eligible under 'numpy'
    fast        (default) the registered implementations that take the arguments, else the ops' code

How an op runs (the only places that look at the setting are `pick` and `find`, here):

    pick(fused, reference)   nn.functional's function calls `pick(op, reference)(*args)`: the reference
                             (nn/_functional/reference.py) under 'reference', else the op (its checks,
                             then its Function); both take the same arguments
    find(op, *args)          inside the Function: the registered implementation of `op` that takes
                             these arrays, or None, and then the op runs its own array code

The registration protocol. An implementation is a module (or any object) that defines

    supports(*args) -> bool    whether it takes these arguments: array types and dtypes, layout, sizes,
                               options. Cheap, and with no side effect: it is asked on every call.
    forward(...)               the op's forward on the arrays supports() accepted (and what the op
                               computes after asking, such as a dropout mask); it never declines: no
                               None or False meaning "not here", that is supports()'s answer
    backward(...)              the op's backward, where the op's backward runs on the implementation
    prepared_forward(...)      optional: forward with what it decides for one layout decided once, as a
                               function of the arrays alone (a minigrad.compile replay without backward
                               calls it; attention and layer_norm on the CPU: a generated token's;
                               adamw: a replayed optimizer step, over its parameters' arrays)
    prepared_step(...)         optional: (forward, backward) of a compiled training step's array step, its
                               choices for one layout made once, or None (dropout on the CPU)

and is registered with `register(op, module, device, kernels=("fast",), first=False)`:

    op        the op's name ("gelu"); `find(op, *args)` passes `args` to each `supports`
    module    a dotted path under this package ("cpu.gelu"), imported on first use (so importing
              minigrad imports neither numba nor cupy), or an object
    device    "cpu" (numpy arrays) or "cuda" (cupy arrays): what find's first argument must be
    kernels   the settings under which it is eligible: ("fast",) for compiled kernels; ("numpy",
              "fast") for code that is the array library's own way of doing the op (cupyx's scatter-add)
    first     ask it before the op's other registrations (else after them)

`find` walks the op's eligible registrations in order and returns the first whose `supports`
accepts. On the CPU, until numba has started, it can first weigh the work: with `CPU_MIN_ELEMENTS`
set (0, off, by default), arrays of fewer elements in all run the op's own numpy code, so a small
model never starts numba (below). An implementation found at forward also runs that Function's backward (the op keeps it as
`ctx.impl`), so `supports` vouches for both. The CPU registrations need numba (they are skipped
without it); the thread team and BLAS they use are minigrad/backends/cpu/team.py's. The ops' calls:

    op              supports / find             forward                            backward
    linear          out, x, w (2-D)             out, x, w, b: out = x w^T (+ b)    g, x, w, gx, gw (None: not needed)
    embedding       g, ids, n                   (a take: the op's)                 g, ids, n -> (n, C) row sums
                                                                       (CPU: add_rows(out, ids, g) in place,
                                                                       for indexing's backward and index_add)
    gelu            x, approximate              x, approximate -> y                x, y, g, approximate -> gx
    layer_norm      y, mean, rstd, x, w, b, eps the same: fills y, mean, rstd      gx, g, x, mean, rstd, w -> (2, D)
    batch_norm      x, w, b (training, 2-D)     x, w, b, eps -> y, stats           g, x, mean, rstd, w, need_gx -> gx, gw, gb
    cross_entropy   D, x, t, w, ignore, ls,     the same -> per-row losses
                    inv (None), need_grad       (inv: 1 / the mean's denominator)
    log_softmax     x (rows)                    x -> y                             g, y -> gx
    softmax         x (rows)                    x -> y                             g, y -> gx
    sigmoid         x                           x -> y                             g, y -> gx
                                                (silu(x): x y, in one call: silu's forward)
    relu            x                           x -> y                             g, y -> gx
    sum             a (A, R, C)                 a -> a.sum(axis=1)                 (the op's: a view)
    dropout         x, p                        x, p -> (y, keep)                  g, keep, scale -> gx
    attention       out, q, k, v, mask, gqa     out, q, k, v, keep, dscale,        g, P, q, k, v, keep, dscale, scale,
                                                scale, is_causal -> P or None      is_causal, gq, gk, gv
    adamw           p, g, m, v, v_max, lr, b1,  the same, in place
                    b2, wd, decoupled, step_scale, eps_scaled
    grouped_matmul  a, b                        a, b -> a @ b per group
    conv_output     y (L, N, O)                 y -> (N, O, L), a copy             g (N, O, L) -> (L, N, O), a copy
    batch_last      a (N, C, *spatial)          a -> (C, *spatial, N), a copy      (none: a layout)
    im2col          x, kernel (2-D)             x, pads, kernel, stride, dilation, (none: conv's backward is col2im)
                                                out -> cols (C*K, L*N)
    col2im          cols, kernel (2-D)          cols (C*K, L*N), x's shape, kernel, (none: conv's backward)
                                                stride, dilation, pads, out -> gx (N, C, H, W)
    conv_input_grad g, w, groups, kernel        g (N, O, *out), w, x's shape, kernel, (none: conv's backward)
                    (2-D, one group)            stride, dilation, pads, out -> gx
    conv_forward    x, w, groups, kernel, out,  x, w, stride, pads, dilation,      x, g, kernel, stride, pads,
                    stride, forward (False for  out, bias or None -> y (N, O,      dilation -> gw
                    the weight's gradient)      *out)
                    (2-D, one group)
    depthwise_conv  a, b, C_in, C_out, groups   forward: x, w, stride, pads,       weight_grad: x, g, kernel, stride,
                    (a: x or g, 4-D; b: w or g; dilation, out, bias or None -> y  pads, dilation -> gw; input_grad:
                    groups == C_in > 1)                                        g, w, x's shape, stride, pads,
                                                                               dilation, out -> gx
    rnn_step        the step's arrays (2-D)     lstm_step, gru_step, rnn_step (and *_backward): a time step's gate
                                                math; lstm_, gru_, rnn_sequence (and *_backward): a layer's steps
    max_pool2d      x (N, C, H, W), kernel,     x, kernel, stride, dilation,       g, idx, x's shape -> gx
                    stride, dilation, padding,  padding, out -> (y, idx)
                    out
    avg_pool        x (N, C, *spatial: 2 or     x, kernel, stride, padding (low    g, x's shape, kernel, stride,
                    3 axes; or g), kernel,      sides), out, divisor -> y          padding, out, divisor -> gx
                    stride, padding, out
    block_step      x (B, C) and the four       out, x, k, v, t, params, eps,      (inference only: a generated
                    weights of a GPT block      approximate: the block at t        token's block, nn/_functional/block_step.py)

A new fused op, say "lstm_cell", takes four pieces:

    # nn/_functional/rnn.py: the op, defined once
    class LSTMCell(Function):
        @staticmethod
        def forward(ctx, x, h, c, w_ih, w_hh, b):
            ctx.impl = backends.find("lstm_cell", x.array, h.array, c.array, w_ih.array, w_hh.array, ...)
            if ctx.impl is not None:
                h2, c2, saved = ctx.impl.forward(x.array, h.array, ...)
            else:
                h2, c2, saved = ...  # the plain numpy / cupy code
            ...
        @staticmethod
        def backward(ctx, gh, gc):
            if ctx.impl is not None:
                return tuple(map(wrap, ctx.impl.backward(...)))  # (wrap: nn/_functional/_common.py)
            ...  # the plain array code
    # nn/_functional/reference.py (or beside it): lstm_cell(x, h, c, w_ih, w_hh, b) in primitive ops
    # the public function: backends.pick(lstm_cell_op, reference.lstm_cell)(x, h, c, w_ih, w_hh, b)
    # minigrad/backends/cpu/lstm_cell.py: supports(...), forward(...), backward(...); registered here:
    #     register("lstm_cell", "cpu.lstm_cell", "cpu")

Also here: `tune_process()`, `set_num_threads(n)`, `get_num_threads()` (minigrad/backends/process.py)
and `arrays` (where numpy and cupy differ in the ops' array code).
"""
import contextlib
import importlib
import os

import numpy as np

from .cpu import team as _team
from .process import get_num_threads, set_num_threads, tune_process  # noqa: F401

KERNELS = ("reference", "numpy", "fast")
FAST = ("fast",)
_registry = {}  # op -> [(module or dotted path, device, kernels)] in the order they are asked
_loaded = {}  # dotted path -> module, once imported
_eligible = {}  # (op, array type) -> registrations find asks under the setting and numba's state: _eligible_for's
_eligible_team = None  # numba's state (team._numba) that _eligible was made for
_eligible_kernels = None  # the setting (_kernels) that _eligible was made for


def register(op, module, device, kernels=FAST, first=False):
    """Add an implementation of `op` (the module docstring's protocol), asked after the op's earlier
    registrations, or before them with first=True."""
    if device not in ("cpu", "cuda"):
        raise ValueError(f"register: device must be 'cpu' or 'cuda', got {device!r}")
    kernels = tuple(kernels)
    if not set(kernels) <= {"numpy", "fast"}:
        raise ValueError(f"register: kernels must be among 'numpy', 'fast', got {kernels!r}")
    registrations = _registry.setdefault(op, [])
    registrations.insert(0 if first else len(registrations), (module, device, kernels))
    _eligible.clear()


register("linear", "cpu.linear", "cpu")
register("embedding", "cpu.embedding", "cpu")
register("embedding", "cuda.embedding", "cuda", ("numpy", "fast"))
register("gelu", "cpu.gelu", "cpu")
register("gelu", "cuda.gelu", "cuda")
register("sigmoid", "cpu.sigmoid", "cpu")
register("relu", "cpu.relu", "cpu")
register("leaky_relu", "cpu.leaky_relu", "cpu")
register("sum", "cpu.sum", "cpu")
register("layer_norm", "cpu.layer_norm", "cpu")
register("layer_norm", "cuda.layer_norm", "cuda")
register("batch_norm", "cpu.batch_norm", "cpu")
register("cross_entropy", "cpu.cross_entropy", "cpu")
register("log_softmax", "cpu.log_softmax", "cpu")
register("softmax", "cpu.softmax", "cpu")
register("cross_entropy", "cuda.cross_entropy", "cuda")
register("dropout", "cpu.dropout", "cpu")
register("dropout", "cuda.dropout", "cuda")
register("attention", "cpu.attention", "cpu")
register("attention", "cuda.attention", "cuda")
register("adamw", "cpu.adamw", "cpu")
register("adamw", "cuda.adamw", "cuda")
register("grouped_matmul", "cpu.conv", "cpu")
register("conv_output", "cpu.conv_layout", "cpu")
register("batch_last", "cpu.batch_last", "cpu")
register("col2im", "cpu.col2im", "cpu")
register("im2col", "cpu.im2col", "cpu")
register("conv_input_grad", "cpu.conv_input", "cpu")
register("conv_forward", "cpu.conv_forward", "cpu")
register("depthwise_conv", "cpu.depthwise", "cpu")
register("rnn_step", "cpu.rnn", "cpu")
register("max_pool2d", "cpu.max_pool", "cpu")
register("avg_pool", "cpu.avg_pool", "cpu")
register("block_step", "cpu.block_step", "cpu")  # a transformer block on one new position (generation)
register("outer", "cpu.outer", "cpu")
register("elementwise_chain", "cpu.fused", "cpu")  # minigrad.compile's fusion
register("elementwise_chain", "cuda.fused", "cuda")


def _checked(name):
    name = str(name).strip().lower()
    if name not in KERNELS:
        raise ValueError(f"MINIGRAD_KERNELS must be one of {', '.join(KERNELS)}, got {name!r}")
    return name


_kernels = _checked(os.environ.get("MINIGRAD_KERNELS", "fast") or "fast")

# Elements, in all the arrays an op passes `find`, below which the CPU kernels are not asked while
# numba has not started; 0 (the default): always asked. The first kernel a process runs costs it
# numba's start-up, ~0.8 s however small the kernel, while at a small model's sizes a kernel saves
# some tens of microseconds a call: a short run of a tiny model starts faster with 16384 here. It is
# off by default because the kernels stay faster in the steady state, and because a small op's last
# bits would then depend on whether numba had started in the process (docs/performance.md, "The
# first step").
CPU_MIN_ELEMENTS = 0


def set_kernels(name):
    """Switch the whole process to 'reference', 'numpy' or 'fast' (see the module docstring)."""
    global _kernels
    _kernels = _checked(name)


def get_kernels():
    """'reference', 'numpy' or 'fast': what the fused ops run now."""
    return _kernels


@contextlib.contextmanager
def kernels(name):
    """`with minigrad.backends.kernels("numpy"):` the block runs on that setting, then it is restored."""
    before = get_kernels()
    set_kernels(name)
    try:
        yield
    finally:
        set_kernels(before)


def pick(fused, reference):
    """The function a fused op's call runs: `reference` under MINIGRAD_KERNELS=reference (None: the op
    has no reference for these arguments), else `fused` (the op's Function.apply)."""
    return reference if _kernels == "reference" and reference is not None else fused


def find(op, *args):
    """The registered implementation of `op` that takes `args` (its `supports(*args)` is true), among
    those eligible under the setting and made for the first argument's device; None: the op runs its
    own array code."""
    global _eligible_team, _eligible_kernels
    # (numba started or found missing, once a process; or the setting changed, by set_kernels or by assigning
    # _kernels itself, as a test's monkeypatch does and undoes)
    if _team._numba is not _eligible_team or _kernels is not _eligible_kernels:
        _eligible.clear()
        _eligible_team, _eligible_kernels = _team._numba, _kernels
    eligible = _eligible.get((op, type(args[0])))
    if eligible is None:
        eligible = _eligible[(op, type(args[0]))] = _eligible_for(op, _device_of(args[0]))
    if not eligible:
        return None
    if CPU_MIN_ELEMENTS and eligible[0][1] and not _team.started() and _elements(args) < CPU_MIN_ELEMENTS:
        return None  # small work on the CPU before numba has started: the op's numpy code, and numba stays unloaded
    for impl, _, unstarted in eligible:
        # supports first: numba (which a CPU kernel needs) is imported only for work a kernel takes
        if impl.supports(*args) and (not unstarted or _team.available()):
            return impl
    return None


def _eligible_for(op, device):
    """((module, on the CPU, whether numba must start first), ...): a CPU registration needs numba, so
    none is eligible where numba is missing, and numba is asked for only until it has started."""
    cpu = device == "cpu"
    if cpu and _team._numba is False:
        return ()
    unstarted = cpu and not _team.started()
    return tuple((_load(module), cpu, unstarted) for module, where, kernels in _registry.get(op, ())
                 if where == device and _kernels in kernels)


def _elements(args):
    n = 0
    for a in args:
        if type(a) is np.ndarray:
            n += a.size
    return n


def _device_of(a):
    kind = type(a)
    if kind.__module__ == "numpy":
        return "cpu"
    return "cuda" if kind.__module__.startswith("cupy") else None


def _load(module):
    if not isinstance(module, str):
        return module
    impl = _loaded.get(module)
    if impl is None:
        impl = _loaded[module] = importlib.import_module(f".{module}", __name__)
    return impl


from . import cuda, cudnn, mps  # noqa: E402,F401 (torch.backends.cuda.matmul, .cudnn, .mps: their flags, flags.py)
