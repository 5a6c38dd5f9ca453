"""Elementwise activations: GELU, ReLU, Tanh. Each maps shape (*) to (*)."""
import minigrad

from .. import functional as F
from ..module import Module


class GELU(Module):
    """x * Phi(x) (Phi the standard normal CDF); approximate='tanh' uses GPT-2's tanh formula."""

    def __init__(self, approximate="none"):
        super().__init__()
        if approximate not in ("none", "tanh"):
            raise ValueError(f"approximate argument must be either none or tanh, got {approximate!r}")
        self.approximate = approximate

    def forward(self, input):
        return F.gelu(input, approximate=self.approximate)

    def extra_repr(self):
        return f"approximate='{self.approximate}'"


class ReLU(Module):
    """max(x, 0)."""

    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace

    def forward(self, input):
        return F.relu(input, inplace=self.inplace)

    def extra_repr(self):
        return "inplace=True" if self.inplace else ""


class Tanh(Module):
    """tanh(x)."""

    def forward(self, input):
        return minigrad.tanh(input)


# ---- more activations, each the functional op of the same name ------------------------------------------
class _Elementwise(Module):
    """An activation module: `fn(input, **args)` with the arguments given at construction."""

    fn = None
    _args = ()  # names of the constructor's arguments, in order (also the repr's)

    def forward(self, input):
        return type(self).fn(input, **{k: getattr(self, k) for k in self._args})

    def extra_repr(self):
        return ", ".join(f"{k}={getattr(self, k)}" for k in self._args if k != "inplace" or self.inplace)


def _activation(name, fn, args=(), doc=""):
    """A Module class `name` whose constructor takes `args` ((name, default) pairs) and calls `fn`."""
    def __init__(self, *values, **kw):
        _Elementwise.__init__(self)
        names = [a for a, _ in args]
        if len(values) > len(names):
            raise TypeError(f"{name}.__init__() takes {len(names)} positional arguments but {len(values)} were given")
        given = dict(zip(names, values))
        for k in kw:
            if k not in names or k in given:
                raise TypeError(f"{name}.__init__() got an unexpected or repeated keyword argument '{k}'")
        given.update(kw)
        for a, default in args:
            setattr(self, a, given.get(a, default))

    return type(name, (_Elementwise,), {"__init__": __init__, "fn": staticmethod(fn), "_args": tuple(a for a, _ in args),
                                        "__doc__": doc, "__module__": __name__})


_INPLACE = ("inplace", False)
SiLU = _activation("SiLU", F.silu, (_INPLACE,), "x sigmoid(x).")
Mish = _activation("Mish", F.mish, (_INPLACE,), "x tanh(softplus(x)).")
ELU = _activation("ELU", F.elu, (("alpha", 1.0), _INPLACE), "x if x > 0 else alpha (e^x - 1).")
SELU = _activation("SELU", F.selu, (_INPLACE,), "scale elu(x, alpha), PyTorch's fixed constants.")
CELU = _activation("CELU", F.celu, (("alpha", 1.0), _INPLACE), "max(0, x) + min(0, alpha (e^(x/alpha) - 1)).")
LeakyReLU = _activation("LeakyReLU", F.leaky_relu, (("negative_slope", 0.01), _INPLACE), "x if x > 0 else slope x.")
ReLU6 = _activation("ReLU6", F.relu6, (_INPLACE,), "min(max(x, 0), 6).")
Hardtanh = _activation("Hardtanh", F.hardtanh, (("min_val", -1.0), ("max_val", 1.0), _INPLACE),
                       "x clipped to [min_val, max_val].")
Hardswish = _activation("Hardswish", F.hardswish, (_INPLACE,), "x relu6(x + 3) / 6.")
Hardsigmoid = _activation("Hardsigmoid", F.hardsigmoid, (_INPLACE,), "relu6(x + 3) / 6.")
Softplus = _activation("Softplus", F.softplus, (("beta", 1.0), ("threshold", 20.0)), "log(1 + e^(beta x)) / beta.")
Softsign = _activation("Softsign", F.softsign, (), "x / (1 + |x|).")
LogSigmoid = _activation("LogSigmoid", F.logsigmoid, (), "log sigmoid(x).")
Softmin = _activation("Softmin", F.softmin, (("dim", None),), "softmax(-x) along `dim`.")


# ---- the activations of nn/_functional/composed.py ------------------------------------------------------
Sigmoid = _activation("Sigmoid", F.sigmoid, (), "1 / (1 + e^-x).")
Tanhshrink = _activation("Tanhshrink", F.tanhshrink, (), "x - tanh(x).")
GLU = _activation("GLU", F.glu, (("dim", -1),), "a sigmoid(b), a and b the halves of the input along `dim`.")
Softmax = _activation("Softmax", F.softmax, (("dim", None),), "exp(x) / sum(exp(x)) along `dim`.")
LogSoftmax = _activation("LogSoftmax", F.log_softmax, (("dim", None),), "x - logsumexp(x) along `dim`.")


class Softmax2d(Module):
    """softmax over the channels at each position. Shapes: (N, C, H, W) or (C, H, W) -> the same."""

    def forward(self, input):
        if input.ndim not in (3, 4):
            raise ValueError(f"Softmax2d: expected input to be 3D or 4D, got {input.ndim}D instead")
        return F.softmax(input, -3)


class _Shrink(_Elementwise):
    def __init__(self, lambd=0.5):
        super().__init__()
        self.lambd = lambd

    def forward(self, input):
        return type(self).fn(input, self.lambd)

    def extra_repr(self):
        return f"{self.lambd}"


class Hardshrink(_Shrink):
    """x where |x| > lambd, else 0."""

    fn = staticmethod(F.hardshrink)


class Softshrink(_Shrink):
    """x -+ lambd outside [-lambd, lambd], else 0."""

    fn = staticmethod(F.softshrink)


class Threshold(Module):
    """x where x > threshold, else value."""

    def __init__(self, threshold, value, inplace=False):
        super().__init__()
        self.threshold, self.value, self.inplace = threshold, value, inplace

    def forward(self, input):
        return F.threshold(input, self.threshold, self.value, self.inplace)

    def extra_repr(self):
        return f"threshold={self.threshold}, value={self.value}" + (", inplace=True" if self.inplace else "")


class RReLU(Module):
    """x for x >= 0, a x otherwise: a ~ U(lower, upper) per element in training, (lower + upper) / 2 in eval."""

    def __init__(self, lower=1.0 / 8, upper=1.0 / 3, inplace=False):
        super().__init__()
        self.lower, self.upper, self.inplace = lower, upper, inplace

    def forward(self, input):
        return F.rrelu(input, self.lower, self.upper, self.training, self.inplace)

    def extra_repr(self):
        return f"lower={self.lower}, upper={self.upper}" + (", inplace=True" if self.inplace else "")


class PReLU(Module):
    """x for x > 0, a x otherwise, the slope a learned: one (num_parameters=1) or one per channel (dim 1).
    Shapes: input (N, C, *) or (*) -> the same; weight (num_parameters,), initialized to `init`."""

    def __init__(self, num_parameters=1, init=0.25, device=None, dtype=None):
        from ..parameter import Parameter

        super().__init__()
        self.num_parameters, self.init = num_parameters, init
        self.weight = Parameter(minigrad.empty(num_parameters, device=device, dtype=dtype))
        self.reset_parameters()

    def reset_parameters(self):
        from .. import init as _init

        _init.constant_(self.weight, self.init)

    def forward(self, input):
        return F.prelu(input, self.weight)

    def extra_repr(self):
        return f"num_parameters={self.num_parameters}"
