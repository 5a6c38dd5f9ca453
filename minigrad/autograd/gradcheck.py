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


def _refuse_unchecked(name, **flags):
    """The checks minigrad does not make (vmap over backward, forward-mode AD): asked for, an error
    rather than a pass that checked nothing."""
    for flag, on in flags.items():
        if on:
            raise NotImplementedError(f"{name}: {flag}=True is not supported by minigrad")


def gradcheck(func, inputs, *, eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True, nondet_tol=0.0,
              check_undefined_grad=True, check_grad_dtypes=False, check_batched_grad=False,
              check_batched_forward_grad=False, check_forward_ad=False, check_backward_ad=True, fast_mode=False,
              masked=None):
    """Compare `func`'s backward with finite differences; inputs should be float64.

    Returns True, or raises (or returns False with raise_exception=False) naming the output and
    input of the mismatch. fast_mode compares the whole Jacobians too (a stronger check than
    PyTorch's random projection of them); check_undefined_grad is not run.
    """
    _refuse_unchecked("gradcheck", check_batched_grad=check_batched_grad, check_forward_ad=check_forward_ad,
                      check_batched_forward_grad=check_batched_forward_grad, check_grad_dtypes=check_grad_dtypes,
                      masked=masked)
    from ..tensor import Tensor

    inputs = _inputs(inputs)
    for i, x in enumerate(inputs):
        if getattr(x, "requires_grad", False) and x.array.dtype != np.float64:
            import warnings

            warnings.warn(f"Input #{i} requires gradient and is not a double precision floating point or complex. "
                          "This check will likely fail if all the inputs are not of double precision floating point "
                          "or complex. ", stacklevel=2)
    if not check_backward_ad:
        return True
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
                dt = inputs[j].array.dtype  # (the Jacobians shown in the input's dtype, PyTorch's)
                msg = (f"Jacobian mismatch for output {k} with respect to input {j},\n"
                       f"numerical:{Tensor._wrap(num.astype(dt))}\nanalytical:{Tensor._wrap(ana.astype(dt))}\n")
                if raise_exception:
                    raise GradcheckError(msg)
                return False
    return True


def gradgradcheck(func, inputs, grad_outputs=None, *, eps=1e-6, atol=1e-5, rtol=1e-3,
                  gen_non_contig_grad_outputs=False, raise_exception=True, nondet_tol=0.0, check_undefined_grad=True,
                  check_grad_dtypes=False, check_batched_grad=False, check_fwd_over_rev=False, check_rev_over_rev=True,
                  fast_mode=False, masked=False):
    """Check second derivatives: gradcheck of (inputs, grad_outputs) -> d(func)/d(inputs) . grad_outputs."""
    _refuse_unchecked("gradgradcheck", check_batched_grad=check_batched_grad, check_fwd_over_rev=check_fwd_over_rev,
                      check_grad_dtypes=check_grad_dtypes, masked=masked,
                      gen_non_contig_grad_outputs=gen_non_contig_grad_outputs)
    from ..factory import randn_like

    if not check_rev_over_rev:
        return True
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
