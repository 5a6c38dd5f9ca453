"""Finite-difference checks of analytical gradients, with PyTorch's defaults."""
import numpy as np

from .engine import grad as autograd_grad


def _inputs(inputs):
    from ..tensor import Tensor

    return (inputs,) if isinstance(inputs, Tensor) else tuple(inputs)


def _outputs(out):
    from ..tensor import Tensor

    return (out,) if isinstance(out, Tensor) else tuple(o for o in out if isinstance(o, Tensor))


def _numerical_jacobian(fn, inputs, out_index, eps):
    """d out / d input for each differentiable input, by central differences (float64)."""
    jacobians = []
    for x in inputs:
        if not getattr(x, "requires_grad", False):
            jacobians.append(None)
            continue
        data = x.array  # written in place, element by element (any memory layout)
        cols = []
        for i in range(data.size):
            at = np.unravel_index(i, data.shape)
            orig = data[at].item()
            data[at] = orig + eps
            plus = np.array(_outputs(fn(*inputs))[out_index].array, dtype=np.float64).ravel()
            data[at] = orig - eps
            minus = np.array(_outputs(fn(*inputs))[out_index].array, dtype=np.float64).ravel()
            data[at] = orig
            cols.append((plus - minus) / (2 * eps))
        jacobians.append(np.stack(cols, axis=1) if cols else np.zeros((0, 0)))
    return jacobians


def _analytical_jacobian(out, inputs):
    from ..factory import zeros_like

    n = out.array.size
    rows = [[] for _ in inputs]
    diff = [x for x in inputs if getattr(x, "requires_grad", False)]
    for i in range(n):
        g = zeros_like(out)
        g.array.reshape(-1)[i] = 1
        grads = autograd_grad([out], diff, [g], retain_graph=True, allow_unused=True)
        k = 0
        for j, x in enumerate(inputs):
            if not getattr(x, "requires_grad", False):
                continue
            gx = grads[k]
            k += 1
            rows[j].append(np.zeros(x.array.size) if gx is None else np.asarray(gx.array, dtype=np.float64).ravel())
    return [np.stack(r, axis=0) if r else None for r in rows]


def gradcheck(func, inputs, eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True, nondet_tol=0.0):
    """Compare `func`'s backward with finite differences; inputs should be float64.

    Returns True, or raises (or returns False with raise_exception=False) naming the output,
    input and the largest mismatch.
    """
    inputs = _inputs(inputs)
    for x in inputs:
        if getattr(x, "requires_grad", False) and x.array.dtype != np.float64:
            import warnings

            warnings.warn(f"gradcheck: input of dtype {x.dtype} is not float64; expect precision failures", stacklevel=2)
    outputs = _outputs(func(*inputs))
    for k, out in enumerate(outputs):
        if not out.requires_grad:
            continue
        numerical = _numerical_jacobian(func, inputs, k, eps)
        analytical = _analytical_jacobian(out, inputs)
        for j, (num, ana) in enumerate(zip(numerical, analytical)):
            if num is None:
                continue
            num = num.reshape(ana.shape) if ana is not None else num
            if not np.allclose(ana, num, rtol=rtol, atol=atol):
                err = float(np.max(np.abs(ana - num)))
                msg = (f"Jacobian mismatch for output {k} with respect to input {j} (max abs difference {err:.3g}),\n"
                       f"numerical:{num}\nanalytical:{ana}\n")
                if raise_exception:
                    raise GradcheckError(msg)
                return False
    return True


def gradgradcheck(func, inputs, grad_outputs=None, eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True):
    """Check second derivatives: gradcheck of (inputs, grad_outputs) -> d(func)/d(inputs) . grad_outputs."""
    from ..factory import randn_like

    inputs = _inputs(inputs)
    outputs = _outputs(func(*inputs))
    if grad_outputs is None:
        grad_outputs = tuple(randn_like(o, dtype=o.dtype).requires_grad_() for o in outputs if o.requires_grad)
    else:
        grad_outputs = _inputs(grad_outputs)
    n_in = len(inputs)
    diff_idx = [i for i, x in enumerate(inputs) if getattr(x, "requires_grad", False)]

    def first_derivative(*args):
        xs, gos = args[:n_in], args[n_in:]
        outs = [o for o in _outputs(func(*xs)) if o.requires_grad]
        grads = autograd_grad(outs, [xs[i] for i in diff_idx], list(gos), create_graph=True, allow_unused=True)
        return tuple(g for g in grads if g is not None)

    return gradcheck(first_derivative, inputs + tuple(grad_outputs), eps=eps, atol=atol, rtol=rtol,
                     raise_exception=raise_exception)


class GradcheckError(RuntimeError):
    """Raised by gradcheck when analytical and numerical gradients disagree."""
