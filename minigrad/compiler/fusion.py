"""Fusion: a run of elementwise steps in a captured program becomes one compiled kernel.

After capture the program is a list of steps. Where consecutive steps are elementwise ops with no
backward (`a + b`, `a * b`, `-a`, `exp(a)`, ...: an evaluation, a forward under no_grad, work on
tensors that need no gradient) and each value one of them makes is read only inside the run, the
run is one expression over the run's inputs, e.g. `tanh((x0 * x1) + x2)`. The backend for the arrays
(`backends.find("elementwise_chain", *arrays, expr)`: a numba ufunc on the CPU, a cupy
ElementwiseKernel on a GPU) computes it in one pass, and the intermediate arrays are never made.

Ops with a backward are left alone: their forwards' values are what their backwards read. The fused
ops the backends already have (GELU, layer_norm, attention's scale and mask, AdamW's update) are
one step each already, so there is nothing to fuse in them.
"""
from .. import backends
from ..ops.elementwise import Add, Div, Exp, Mul, Neg, Sub, Tanh
from ..tensor import Tensor

# op -> its expression from its operands' expressions (the forward's own arithmetic, spelled as the
# backends' kernels spell it)
_EXPRESSIONS = {
    Add: lambda a, b: f"({a} + {b})",
    Sub: lambda a, b: f"({a} - {b})",
    Mul: lambda a, b: f"({a} * {b})",
    Div: lambda a, b: f"({a} / {b})",
    Neg: lambda a: f"(-{a})",
    Exp: lambda a: f"exp({a})",
    Tanh: lambda a: f"tanh({a})",
}
_ARITY = {Add: 2, Sub: 2, Mul: 2, Div: 2, Neg: 1, Exp: 1, Tanh: 1}
# + - * / round alike in numpy and in a compiled kernel, so a fused chain of them gives eager's bits;
# exp and tanh do not (numpy's SIMD functions and the kernel's libm may differ in the last bit), so
# they are fused only on request: a replay then equals eager within a few ulps, not bit for bit
APPROXIMATE_OPS = (Exp, Tanh)
APPROXIMATE = False


class Fused:
    """A run of elementwise steps as one kernel call: `impl.forward(expr, *inputs)`."""

    def __init__(self, expr, specs, slot, impl, frees, n_ops):
        self.expr, self.specs, self.slot, self.impl, self.frees, self.n_ops = expr, specs, slot, impl, frees, n_ops
        self.slots = (slot,)

    def run(self, env, ctxs, i):
        arrays = []
        for kind, v in self.specs:
            if kind == "t":
                v = env[v]
            arrays.append(v.array if isinstance(v, Tensor) else v)
        env[self.slot] = Tensor._wrap(self.impl.forward(self.expr, *arrays))

    def __repr__(self):
        return f"fused {self.n_ops} ops: {self.expr} -> {self.slot}"


def _fusible(step):
    from .program import Forward

    if type(step) is not Forward or step.keeps_ctx or step.cls not in _EXPRESSIONS or len(step.slots) != 1:
        return False
    if step.cls in APPROXIMATE_OPS and not APPROXIMATE:
        return False
    if len(step.specs) != _ARITY[step.cls]:  # Add/Sub with an alpha: left as they are
        return False
    return all(s[0] in ("t", "x") or (s[0] == "c" and _is_array(s[1])) for s in step.specs)


def _is_array(v):
    return hasattr(v, "dtype") and hasattr(v, "shape")


def fuse(steps, value_of, barrier=None):
    """Replace each fusible run of `steps` (with their liveness planned) by one `Fused` step in the
    place of its last step; returns the indices of the steps it absorbed (no longer run).
    `value_of(slot)` is the value a slot held at capture (its dtype and device choose the backend).
    No run crosses `barrier` (a forward's last step and its backward's first run at different times)."""
    absorbed = set()
    i, n = 0, len(steps)
    while i < n:
        j = i
        while j < n and _fusible(steps[j]) and (j != barrier or j == i):
            j += 1
        if j - i >= 2:
            absorbed |= _fuse_run(steps, i, j, value_of)
        i = max(j, i + 1)
    return absorbed


def _fuse_run(steps, start, stop, value_of):
    """Fuse steps[start:stop] where they form chains; returns the absorbed indices."""
    absorbed = set()
    k = start
    while k < stop - 1:
        end = _longest_chain(steps, k, stop)
        if end - k >= 2:
            fused = _build(steps, k, end, value_of)
            if fused is not None:
                steps[end - 1] = fused
                absorbed.update(range(k, end - 1))
                k = end
                continue
        k += 1
    return absorbed


def _longest_chain(steps, start, stop):
    """The largest end such that steps[start:end] is a chain: every value made before its last step
    is read only inside it (freed by one of its steps), and each step after the first reads a value
    made inside (so the run is one expression, not independent ops side by side)."""
    best = start + 1
    made = set()
    for end in range(start + 1, stop + 1):
        step = steps[end - 1]
        reads = {s[1] for s in step.specs if s[0] == "t"}
        if end - 1 > start and not (reads & made):
            break
        made.add(step.slots[0])
        inner = made - {step.slots[0]}
        freed = {s for st in steps[start:end] for s in st.frees}
        if inner <= freed:
            best = end
    return best


def _build(steps, start, end, value_of):
    exprs = {}  # slot made inside -> its expression
    inputs = []  # specs of the chain's inputs, in order of first use
    names = {}
    for step in steps[start:end]:
        operands = []
        for s in step.specs:
            if s[0] == "t" and s[1] in exprs:
                operands.append(exprs[s[1]])
                continue
            key = (s[0], s[1] if s[0] == "t" else id(s[1]))
            if key not in names:
                names[key] = f"x{len(inputs)}"
                inputs.append(s)
            operands.append(names[key])
        exprs[step.slots[0]] = _EXPRESSIONS[step.cls](*operands)
    expr = exprs[steps[end - 1].slots[0]]
    arrays = []
    for kind, v in inputs:
        v = value_of(v) if kind == "t" else v
        arrays.append(v.array if isinstance(v, Tensor) else v)
    impl = backends.find("elementwise_chain", *arrays, expr)
    if impl is None:
        return None
    frees = tuple(s for st in steps[start:end] for s in st.frees)
    return Fused(expr, tuple(inputs), steps[end - 1].slots[0], impl, frees, end - start)
