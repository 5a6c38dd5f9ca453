"""Elementwise activations: GELU, ReLU, Tanh, ... Each maps shape (*) to (*). And MultiheadAttention
(where PyTorch keeps it, torch.nn.modules.activation)."""
import warnings

import minigrad

from .. import functional as F
from .._functional import activation as _act
from .. import init
from ..module import Module, init_named
from ..parameter import Parameter
from .linear import NonDynamicallyQuantizableLinear


class GELU(Module):
    """x * Phi(x) (Phi the standard normal CDF); approximate='tanh' uses GPT-2's tanh formula."""

    def __init__(self, approximate="none"):
        super().__init__()
        self.approximate = approximate  # checked by F.gelu at the first call, as PyTorch does

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
    _args = ()  # names of the constructor's arguments, in order
    _shown = ()  # those the repr shows (PyTorch's Hardswish and Hardsigmoid show none)

    def forward(self, input):
        kwargs = {}
        for k in self._args:  # (read at each call: a user may set `m.dim` after construction, as in PyTorch)
            kwargs[k] = getattr(self, k)
        return type(self).fn(input, **kwargs)

    def extra_repr(self):
        return ", ".join(f"{k}={getattr(self, k)}" for k in self._shown if k != "inplace" or self.inplace)


def _activation(name, fn, args=(), doc="", shown=True):
    """A Module class `name` whose constructor takes `args` ((name, default) pairs) and calls `fn`;
    its repr shows them unless `shown` is False."""
    def __init__(self, *values, **kw):
        _Elementwise.__init__(self)
        names = [a for a, _ in args]
        if len(values) > len(names):
            raise TypeError(f"{name}.__init__() takes {len(names)} positional arguments but {len(values)} were given")
        given = dict(zip(names, values))
        for k in kw:  # (Python's own texts)
            if k not in names:
                raise TypeError(f"{name}.__init__() got an unexpected keyword argument '{k}'")
            if k in given:
                raise TypeError(f"{name}.__init__() got multiple values for argument '{k}'")
        given.update(kw)
        for a, default in args:
            setattr(self, a, given.get(a, default))

    return type(name, (_Elementwise,), {"__init__": __init__, "fn": staticmethod(fn), "_args": tuple(a for a, _ in args),
                                        "_shown": tuple(a for a, _ in args) if shown else (),
                                        "__doc__": doc, "__module__": __name__})


_INPLACE = ("inplace", False)
SiLU = _activation("SiLU", F.silu, (_INPLACE,), "x sigmoid(x).")
Mish = _activation("Mish", F.mish, (_INPLACE,), "x tanh(softplus(x)).")
ELU = _activation("ELU", F.elu, (("alpha", 1.0), _INPLACE), "x if x > 0 else alpha (e^x - 1).")
SELU = _activation("SELU", F.selu, (_INPLACE,), "scale elu(x, alpha), PyTorch's fixed constants.")
CELU = _activation("CELU", F.celu, (("alpha", 1.0), _INPLACE), "max(0, x) + min(0, alpha (e^(x/alpha) - 1)).")
LeakyReLU = _activation("LeakyReLU", F.leaky_relu, (("negative_slope", 0.01), _INPLACE), "x if x > 0 else slope x.")
ReLU6 = _activation("ReLU6", F.relu6, (_INPLACE,), "min(max(x, 0), 6).")


class Hardtanh(_Elementwise):
    """x clipped to [min_val, max_val] (min_value, max_value: PyTorch's deprecated names for them)."""

    fn = staticmethod(F.hardtanh)
    _args = _shown = ("min_val", "max_val", "inplace")

    def __init__(self, min_val=-1.0, max_val=1.0, inplace=False, min_value=None, max_value=None):
        super().__init__()
        if min_value is not None:
            warnings.warn("keyword argument `min_value` is deprecated and renamed to `min_val`", FutureWarning, stacklevel=2)
            min_val = min_value
        if max_value is not None:
            warnings.warn("keyword argument `max_value` is deprecated and renamed to `max_val`", FutureWarning, stacklevel=2)
            max_val = max_value
        self.min_val, self.max_val, self.inplace = min_val, max_val, inplace
        if self.max_val <= self.min_val:
            raise AssertionError(f"max_val ({self.max_val}) must be greater than min_val ({self.min_val})")


Hardswish = _activation("Hardswish", F.hardswish, (_INPLACE,), "x relu6(x + 3) / 6.", shown=False)
Hardsigmoid = _activation("Hardsigmoid", F.hardsigmoid, (_INPLACE,), "relu6(x + 3) / 6.", shown=False)
Softplus = _activation("Softplus", F.softplus, (("beta", 1.0), ("threshold", 20.0)), "log(1 + e^(beta x)) / beta.")
Softsign = _activation("Softsign", F.softsign, (), "x / (1 + |x|).")
LogSigmoid = _activation("LogSigmoid", F.logsigmoid, (), "log sigmoid(x).")
Softmin = _activation("Softmin", F.softmin, (("dim", None),), "softmax(-x) along `dim`.")


# ---- attention ----------------------------------------------------------------------------------------
class MultiheadAttention(Module):
    """Attention of `num_heads` heads of size embed_dim / num_heads, from queries to keys and values.

    Shapes: query (L, N, E), key (S, N, kdim), value (S, N, vdim) ((N, L, E), ... with batch_first;
    unbatched (L, E), (S, kdim), (S, vdim)) -> (attn_output like query, attn_weights (N, L, S) or
    None); see F.multi_head_attention_forward for the masks. Parameters (PyTorch's names): in_proj_weight
    (3E, E), the query, key and value projections stacked, or q_proj_weight (E, E), k_proj_weight
    (E, kdim), v_proj_weight (E, vdim) when kdim or vdim is not E; in_proj_bias (3E); out_proj, a
    Linear(E, E); bias_k, bias_v (1, 1, E) with add_bias_kv. Init (PyTorch's): xavier_uniform_ on the
    projections, zeros on in_proj_bias and out_proj.bias, xavier_normal_ on bias_k and bias_v.
    """

    def __init__(self, embed_dim, num_heads, dropout=0.0, bias=True, add_bias_kv=False, add_zero_attn=False,
                 kdim=None, vdim=None, batch_first=False, device=None, dtype=None):
        if embed_dim <= 0 or num_heads <= 0:
            raise ValueError(f"embed_dim and num_heads must be greater than 0, got embed_dim={embed_dim} and "
                             f"num_heads={num_heads} instead")
        super().__init__()
        kw = dict(device=device, dtype=dtype)
        self.embed_dim = embed_dim
        self.kdim = kdim if kdim is not None else embed_dim
        self.vdim = vdim if vdim is not None else embed_dim
        self._qkv_same_embed_dim = self.kdim == embed_dim and self.vdim == embed_dim
        self.num_heads = num_heads
        self.dropout = dropout
        self.batch_first = batch_first
        self.head_dim = embed_dim // num_heads
        if self.head_dim * num_heads != embed_dim:
            raise AssertionError("embed_dim must be divisible by num_heads")
        if self._qkv_same_embed_dim:
            self.in_proj_weight = Parameter(minigrad.empty(3 * embed_dim, embed_dim, **kw))
            for name in ("q_proj_weight", "k_proj_weight", "v_proj_weight"):
                self.register_parameter(name, None)
        else:
            self.q_proj_weight = Parameter(minigrad.empty(embed_dim, embed_dim, **kw))
            self.k_proj_weight = Parameter(minigrad.empty(embed_dim, self.kdim, **kw))
            self.v_proj_weight = Parameter(minigrad.empty(embed_dim, self.vdim, **kw))
            self.register_parameter("in_proj_weight", None)
        if bias:
            self.in_proj_bias = Parameter(minigrad.empty(3 * embed_dim, **kw))
        else:
            self.register_parameter("in_proj_bias", None)
        self.out_proj = NonDynamicallyQuantizableLinear(embed_dim, embed_dim, bias=bias, **kw)
        if add_bias_kv:
            self.bias_k = Parameter(minigrad.empty(1, 1, embed_dim, **kw))
            self.bias_v = Parameter(minigrad.empty(1, 1, embed_dim, **kw))
        else:
            self.bias_k = self.bias_v = None
        self.add_zero_attn = add_zero_attn
        self._reset_parameters()

    def _reset_parameters(self):
        if self._qkv_same_embed_dim:
            init.xavier_uniform_(self.in_proj_weight)
        else:
            for w in (self.q_proj_weight, self.k_proj_weight, self.v_proj_weight):
                init.xavier_uniform_(w)
        if self.in_proj_bias is not None:
            init.constant_(self.in_proj_bias, 0.0)
            init.constant_(self.out_proj.bias, 0.0)
        if self.bias_k is not None:
            init.xavier_normal_(self.bias_k)
        if self.bias_v is not None:
            init.xavier_normal_(self.bias_v)

    def forward(self, query, key, value, key_padding_mask=None, need_weights=True, attn_mask=None,
                average_attn_weights=True, is_causal=False):
        is_batched = query.dim() == 3
        key_padding_mask = F._canonical_mask(key_padding_mask, "key_padding_mask", F._none_or_dtype(attn_mask),
                                             "attn_mask", query.dtype)
        attn_mask = F._canonical_mask(attn_mask, "attn_mask", None, "", query.dtype, check_other=False)
        if self.batch_first and is_batched:
            # to sequence first, keeping which of query, key and value are the same tensor (self-attention's
            # one projection)
            if key is value:
                if query is key:
                    query = key = value = query.transpose(1, 0)
                else:
                    query = query.transpose(1, 0)
                    key = value = key.transpose(1, 0)
            else:
                query, key, value = (x.transpose(1, 0) for x in (query, key, value))
        separate = not self._qkv_same_embed_dim
        attn_output, attn_output_weights = F.multi_head_attention_forward(
            query, key, value, self.embed_dim, self.num_heads, self.in_proj_weight, self.in_proj_bias,
            self.bias_k, self.bias_v, self.add_zero_attn, self.dropout, self.out_proj.weight, self.out_proj.bias,
            training=self.training, key_padding_mask=key_padding_mask, need_weights=need_weights,
            attn_mask=attn_mask, use_separate_proj_weight=separate, q_proj_weight=self.q_proj_weight,
            k_proj_weight=self.k_proj_weight, v_proj_weight=self.v_proj_weight,
            average_attn_weights=average_attn_weights, is_causal=is_causal)
        if self.batch_first and is_batched:
            return attn_output.transpose(1, 0), attn_output_weights
        return attn_output, attn_output_weights

    def merge_masks(self, attn_mask, key_padding_mask, query):
        """(mask, mask_type) for self-attention on batch-first `query` (N, L, E): the key padding mask
        alone (type 1), or the attention mask as (N, H, L, L), plus the padding mask if any (type 2)."""
        merged, mask_type = None, None
        if key_padding_mask is not None:
            merged, mask_type = key_padding_mask, 1
        if attn_mask is not None:
            n, L, _ = query.shape
            mask_type = 2
            if attn_mask.dim() == 3:
                merged = attn_mask.view(n, -1, L, L)
            else:
                merged = attn_mask.view(1, 1, L, L).expand(n, self.num_heads, -1, -1)
            if key_padding_mask is not None:
                merged = merged + key_padding_mask.view(n, 1, 1, L).expand(-1, self.num_heads, -1, -1)
        return merged, mask_type
# ---- the activations of nn/_functional/composed.py ------------------------------------------------------
Sigmoid = _activation("Sigmoid", F.sigmoid, (), "1 / (1 + e^-x).")
Tanhshrink = _activation("Tanhshrink", F.tanhshrink, (), "x - tanh(x).")
GLU = _activation("GLU", F.glu, (("dim", -1),), "a sigmoid(b), a and b the halves of the input along `dim`.")


def _rows_activation(name, fn, rows_fn, doc):
    """Softmax and LogSoftmax: `_activation`'s class, whose forward with a dim calls the functional's own
    function in one call (the generic forward's keyword dict and F's wrapper cost a small input's softmax
    a fifth of its time); with none, the generic forward, for the implicit dim's warning."""
    def forward(self, input):
        dim = self.dim  # (read at each call, as the generic forward reads it)
        return _Elementwise.forward(self, input) if dim is None else rows_fn(input, dim)

    cls = _activation(name, fn, (("dim", None),), doc)
    cls.forward = forward
    return cls


Softmax = _rows_activation("Softmax", F.softmax, _act.softmax, "exp(x) / sum(exp(x)) along `dim`.")
LogSoftmax = _rows_activation("LogSoftmax", F.log_softmax, _act.log_softmax, "x - logsumexp(x) along `dim`.")


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


init_named(Tanh, Softmax2d, Hardshrink, Softshrink)
