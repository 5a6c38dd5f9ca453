"""PyTorch's torch._foreach_* functions: one Tensor method applied across lists of tensors.

PyTorch fuses these into one kernel per list; here each is the method's loop over the list (the same values),
which is what an EMA or a hand-written optimizer step written with them needs. A list argument is taken
element by element, anything else (a number, a 0-d tensor) is shared by every element."""
from numbers import Number

from .tensor import Tensor

# torch._foreach_<name> for each of these Tensor methods (PyTorch's list, less powsum, maximum_ and minimum_)
NAMES = {
    "abs", "abs_", "acos", "acos_", "add", "add_", "addcdiv", "addcdiv_", "addcmul", "addcmul_", "asin", "asin_",
    "atan", "atan_", "ceil", "ceil_", "clamp_max", "clamp_max_", "clamp_min", "clamp_min_", "clone", "copy_", "cos",
    "cos_", "cosh", "cosh_", "div", "div_", "erf", "erf_", "erfc", "erfc_", "exp", "exp_", "expm1", "expm1_", "floor",
    "floor_", "frac", "frac_", "lerp", "lerp_", "lgamma", "lgamma_", "log", "log10", "log10_", "log1p", "log1p_",
    "log2", "log2_", "log_", "max", "maximum", "minimum", "mm", "mul", "mul_", "neg", "neg_", "norm", "pow", "pow_",
    "reciprocal", "reciprocal_", "round", "round_", "rsqrt", "rsqrt_", "sigmoid", "sigmoid_", "sign", "sign_", "sin",
    "sin_", "sinh", "sinh_", "sqrt", "sqrt_", "sub", "sub_", "tan", "tan_", "tanh", "tanh_", "trunc", "trunc_", "zero_",
}


def _per_element(arg, n):
    """arg as n values, one per tensor of the list: a list element by element, a number or 0-d tensor shared."""
    if isinstance(arg, (list, tuple)):
        if len(arg) != n:
            if all(isinstance(a, Tensor) for a in arg):
                raise RuntimeError(f"Tensor lists must have the same number of tensors, got {n} and {len(arg)}")
            raise RuntimeError("Tensor list must have same number of elements as scalar list.")
        return arg
    if isinstance(arg, Tensor) and arg.ndim != 0:
        raise RuntimeError(f"scalar tensor expected to be 0 dim but it has {arg.ndim} dimensions and "
                           f"{arg.numel()} elements.")
    return [arg] * n


def make(name):
    """torch._foreach_<name>: in place (a trailing _) it returns the list it was given, out of place a tuple."""
    def foreach(self, *args, **kwargs):
        if name == "pow" and isinstance(self, Number):  # _foreach_pow(2.0, tensors): the number's powers
            return tuple(self ** t for t in args[0])
        if not isinstance(self, (list, tuple)) or not self:
            raise RuntimeError("Tensor list must have at least one tensor.")
        n = len(self)
        if name.startswith("addc") and len(args) == 3:  # (self, tensor1, tensor2, scalars): the methods' value=
            *args, kwargs["value"] = args
        columns = [_per_element(a, n) for a in args]
        shared = {k: _per_element(v, n) for k, v in kwargs.items()}
        outs = tuple(getattr(t, name)(*(c[i] for c in columns), **{k: v[i] for k, v in shared.items()})
                     for i, t in enumerate(self))
        return self if name.endswith("_") else outs

    foreach.__name__ = foreach.__qualname__ = f"_foreach_{name}"
    return foreach
