"""PyTorch's `out=` argument of the top-level functions (`minigrad.add(x, y, out=z)`, the 60-minute
blitz's way): the function's result written into `out`, which is returned.

As PyTorch: not under autograd (an argument that requires grad, with grad mode on, is an error); the
result cast to out's dtype where PyTorch casts in place (not float into an integer tensor); an `out` of
another shape resized (with PyTorch's warning unless it was empty), keeping its identity. A function
that returns a (values, indices) pair takes a pair of tensors.
"""
import functools
import warnings

from ..autograd import recording
from ..autograd.grad_mode import state
from ..tensor import Tensor
from ..typeinfo import can_cast
from ._util import SHARED_MEMORY_MESSAGE, overlaps, return_type, type_name

# the top-level functions that take out= (minigrad/__init__.py wraps them with `with_out`). Not the ones
# scripts call once a time step with keywords (cat(..., dim=1), stack, where, clamp, gather): forwarding
# keywords through a wrapper costs ~0.7 us a call, more than out= is worth there
OUT_FUNCTIONS = """add sub subtract mul multiply div divide true_divide floor_divide remainder fmod pow atan2 maximum
    minimum fmax fmin abs absolute neg negative exp exp2 expm1 log log2 log10 log1p sqrt rsqrt sin cos tan sinh cosh
    tanh asin acos atan sigmoid sign floor ceil round trunc frac reciprocal square erf erfc erfinv lgamma digamma eq
    ne lt le gt ge logical_and logical_or logical_xor logical_not sum mean prod amax amin max min argmax argmin
    cumsum cumprod matmul mm bmm mv dot addmm addmv addcmul addcdiv outer lerp logsumexp std var norm sort
    topk hstack vstack dstack column_stack row_stack masked_select take nonzero zeros ones full empty arange
    linspace logspace eye rand randn randint randperm logcumsumexp cummax cummin addbmm baddbmm addr ger inner kron
    tensordot cross vdot chain_matmul matrix_power nansum nanmean quantile nanquantile median nanmedian mode kthvalue
    aminmax all any msort searchsorted bucketize diff diag tril triu take_along_dim histc nan_to_num renorm frexp
    acosh asinh atanh angle sgn signbit sinc deg2rad rad2deg fix i0 isneginf isposinf bitwise_not conj_physical logit
    copysign float_power gcd heaviside hypot igamma igammac lcm ldexp logaddexp logaddexp2 nextafter xlogy
    bitwise_and bitwise_or bitwise_xor bitwise_left_shift bitwise_right_shift greater greater_equal less less_equal
    not_equal complex polar polygamma mvlgamma inverse cholesky cholesky_inverse arccos arccosh arcsin arcsinh arctan
    arctan2 arctanh multinomial normal bernoulli narrow_copy lu_solve
    special.bessel_j0 special.bessel_j1 special.bessel_y0 special.bessel_y1 special.digamma special.entr special.erf
    special.erfc special.erfcx special.erfinv special.exp2 special.expit special.expm1 special.gammaln special.i0
    special.i0e special.i1 special.i1e special.log1p special.log_ndtr special.logit special.modified_bessel_i0
    special.modified_bessel_i1 special.modified_bessel_k0 special.modified_bessel_k1 special.ndtr special.ndtri
    special.psi special.round special.scaled_modified_bessel_k0 special.scaled_modified_bessel_k1 special.sinc
    special.spherical_bessel_j0 special.gammainc special.gammaincc special.xlog1py special.xlogy special.zeta
    special.chebyshev_polynomial_t special.chebyshev_polynomial_u special.chebyshev_polynomial_v
    special.chebyshev_polynomial_w special.hermite_polynomial_h special.hermite_polynomial_he
    special.laguerre_polynomial_l special.legendre_polynomial_p special.shifted_chebyshev_polynomial_t
    special.shifted_chebyshev_polynomial_u special.logsumexp special.multigammaln special.polygamma
    linalg.inv linalg.det linalg.slogdet linalg.solve linalg.cholesky linalg.eigvalsh linalg.svdvals
    linalg.matrix_rank linalg.pinv linalg.matrix_power linalg.vector_norm linalg.matrix_norm linalg.norm linalg.cond
    linalg.cross linalg.vecdot linalg.matmul linalg.multi_dot linalg.solve_triangular linalg.householder_product
    linalg.tensorinv linalg.tensorsolve linalg.inv_ex linalg.cholesky_ex linalg.solve_ex linalg.lu_factor
    linalg.lu_solve linalg.svd linalg.ldl_factor linalg.ldl_factor_ex linalg.ldl_solve fft.hfft2 fft.hfftn fft.ihfft2 fft.ihfftn fft.fft fft.ifft fft.rfft fft.irfft fft.hfft fft.ihfft fft.fft2 fft.ifft2 fft.rfft2 fft.irfft2 fft.fftn fft.ifftn
    fft.rfftn fft.irfftn fft.fftfreq fft.rfftfreq""".split()
# (cat, concat, concatenate, stack, where, clamp, clip, gather and index_select, called every step with keywords,
# take out=None themselves and call `out_call` when it is given: a wrapper costs ~0.7 us a call)

_RESIZED = ("An output with one or more elements was resized since it had shape {}, which does not match the "
            "required output shape {}. This behavior is deprecated, and in a future PyTorch release outputs will "
            "not be resized unless they have zero elements. You can explicitly reuse an out tensor t by resizing "
            "it, inplace, to zero elements with t.resize_(0).")
_ARANGE_RESIZED = ("The number of elements in the out tensor of shape {} is {} which does not match the computed "
                   "number of elements {}. Note that this may occur as a result of rounding error. The out tensor "
                   "will be resized to a tensor of shape ({},).")

# PyTorch's rule for out's dtype, by function: "cast" (the default) casts the result into out where can_cast
# allows; the others want one dtype (or kind) exactly, each with its own text
_CAST, _EXACT, _INPUT = (lambda r, o, i: can_cast(r, o)), (lambda r, o, i: o == r), (lambda r, o, i: o == i)
_BOOL, _COMPLEX = (lambda r, o, i: o.name == "bool"), (lambda r, o, i: o.is_complex)
_FLOATING = lambda r, o, i: o.is_floating_point or o.is_complex  # noqa: E731
_EXPECTED = "Expected out tensor to have dtype {r_cpp}, but got {o_cpp} instead"
_CASTABLE = "{name}: Expected result to be safely castable from {r} dtype, but got result with dtype {o}"
_DTYPE_RULES = {
    "cast": (_CAST, "result type {r} can't be cast to the desired output type {o}"),
    "opmath": (_CAST, "result type {r_opmath} can't be cast to the desired output type {o}"),
    "same": (_EXACT, "Found dtype {o} but expected {r}"),
    "exact": (_EXACT, _EXPECTED),
    "input": (_INPUT, "Expected the dtype for input and out to match, but got {i} for input's dtype and {o} for out's "
                      "dtype."),
    "dot": (_INPUT, "result dtype {o} does not match input dtype {i}"),
    "floating": (_FLOATING, "{name}(): Expected floating point type for result tensor, but got: {o}"),
    "cat": (_CAST, "minigrad.cat(): input types can't be cast to the desired output type {o}", TypeError),
    "where": (_EXACT, "Expected out type to be {r} but got {o}"),
    "self_result": (_INPUT, "{name}(): self and result must have the same scalar type"),
    "take": (_INPUT, "take(): self and out expected to have the same dtype, but got self.dtype = {i} and out.dtype = {o}"),
    "nonzero": (_EXACT, "nonzero: Expected out tensor to have scalar type Long but got scalar type{o}"),
    "scalar_type": (_EXACT, "expected scalar_type {r} but found {o}"),
    "tensordot": (_EXACT, "tensordot: Expected the output tensor to have dtype {r}, but got an output tensor with dtype "
                          "{o}"),
    "multi_dot": (_EXACT, "multi_dot(): expected out tensor to have dtype {r_cpp} but got {o_cpp}"),
    "quantile": (_INPUT, "quantile() out tensor must be same dtype as the input tensor"),
    "kthvalue": (_INPUT, "output values must be of same type as input"),
    "mode": (_EXACT, "expected scalar type '{r}' but got '{o}' for values output"),
    "bool_result": (_BOOL, "{name} only supports bool tensor for result, got: {o}"),
    "bool_output": (_BOOL, "{name} does not support non-boolean outputs."),
    "searchsorted": (_EXACT, "searchsorted(): output tensor's dtype is wrong, it can only be Int(int32) or Long(int64) "
                             "depending on whether out_int32 flag is True, but we got output tensor's dtype {o} and "
                             "out_int32 flag is {int32}"),
    "nan_to_num": (_INPUT, "nan_to_num: dtype of out: {o} should be same as input: {i}"),
    "frexp": (_EXACT, "frexp() expects mantissa to have dtype {r_cpp} but got {o_cpp}"),
    "float_power": (_EXACT, "the output given to float_power has dtype {o} but the operation's result requires dtype "
                            "{r}"),
    "castable": (_CAST, _CASTABLE),
    "norm": (_EXACT, "{name} expected out tensor dtype {r} but got: {o}"),
    "vecdot": (_EXACT, "linalg.vecdot: Expected out of dtype{r} but found {o}"),
    "solve_triangular": (_EXACT, "expected scalar type {r} but found {o}"),
    "complex_out": (_COMPLEX, "{short} expects a complex output tensor, but got {o}"),
    "real_out": (lambda r, o, i: o.is_floating_point, "{short} expects a floating point output tensor, but got {o}"),
    "complex_arg": (_EXACT, "Expected object of scalar type {r} but got scalar type {o} for argument 'out'"),
    "multinomial": (_EXACT, "multinomial expects Long tensor out, got: {o}"),
    "normal": (_FLOATING, "\"normal_kernel_cpu\" not implemented for '{o}'", NotImplementedError),
    "bernoulli": (lambda r, o, i: not o.is_complex, "\"bernoulli_tensor_cpu_self_\" not implemented for '{o}'",
                  NotImplementedError),
    "narrow_copy": (_INPUT, "Expected self.dtype() == output.dtype() to be true, but got false.  (Could this error "
                            "message be improved?  If so, please report an enhancement request to PyTorch.)"),
}
_DTYPE_RULE = {**dict.fromkeys("abs absolute ceil floor frac neg negative round sign trunc fix clamp clip sgn "
                               "bitwise_not conj_physical special.round".split(), "same"),
               **dict.fromkeys("matmul mm bmm mv addmm addmv norm max min sort topk argmax argmin gather baddbmm cross "
                               "matrix_power aminmax msort diag tril triu take_along_dim renorm linalg.inv inverse "
                               "linalg.det linalg.slogdet linalg.solve linalg.cholesky linalg.eigvalsh linalg.svdvals "
                               "linalg.matrix_power linalg.vector_norm linalg.cross linalg.matmul linalg.inv_ex "
                               "linalg.cholesky_ex linalg.solve_ex linalg.lu_factor linalg.lu_solve lu_solve linalg.svd linalg.ldl_factor "
                               "linalg.ldl_factor_ex linalg.ldl_solve".split(),
                               "exact"),
               **dict.fromkeys("cat concat concatenate stack hstack vstack dstack column_stack row_stack".split(), "cat"),
               **dict.fromkeys("index_select masked_select".split(), "self_result"),
               **dict.fromkeys("logcumsumexp cummax cummin".split(), "scalar_type"),
               **dict.fromkeys("tensordot inner".split(), "tensordot"),
               **dict.fromkeys("chain_matmul linalg.multi_dot".split(), "multi_dot"),
               **dict.fromkeys("quantile nanquantile".split(), "quantile"),
               **dict.fromkeys("all any".split(), "bool_result"),
               **dict.fromkeys("signbit isneginf isposinf".split(), "bool_output"),
               **dict.fromkeys("searchsorted bucketize".split(), "searchsorted"),
               **dict.fromkeys("cholesky cholesky_inverse linalg.matrix_rank linalg.pinv linalg.cond "
                               "linalg.householder_product linalg.tensorinv linalg.tensorsolve".split(), "castable"),
               **dict.fromkeys("linalg.matrix_norm linalg.norm".split(), "norm"),
               **dict.fromkeys("fft.fft fft.ifft fft.rfft fft.ihfft fft.fft2 fft.ifft2 fft.rfft2 fft.fftn fft.ifftn "
                               "fft.rfftn fft.ihfft2 fft.ihfftn".split(), "complex_out"),
               **dict.fromkeys("fft.irfft fft.hfft fft.irfft2 fft.irfftn fft.hfft2 fft.hfftn".split(), "real_out"),
               **dict.fromkeys("complex polar".split(), "complex_arg"),
               "amax": "input", "amin": "input", "mean": "opmath", "dot": "dot", "vdot": "dot",
               "logsumexp": "floating", "special.logsumexp": "floating", "where": "where", "take": "take",
               "nonzero": "nonzero", "kthvalue": "kthvalue", "mode": "mode", "nan_to_num": "nan_to_num",
               "frexp": "frexp", "float_power": "float_power", "linalg.vecdot": "vecdot",
               "linalg.solve_triangular": "solve_triangular", "multinomial": "multinomial", "normal": "normal",
               "bernoulli": "bernoulli", "narrow_copy": "narrow_copy"}
_IN_OUT_DTYPE = {"sum", "prod", "cumsum", "cumprod"}  # computed in out's dtype (as their dtype= argument)
_FACTORIES = set("zeros ones full empty arange range linspace logspace eye rand randn randint randperm".split())
_NOT_DIFFERENTIABLE = set("eq ne lt le gt ge logical_and logical_or logical_xor logical_not floor_divide argmax "
                          "argmin greater greater_equal less less_equal not_equal signbit isneginf isposinf "
                          "searchsorted bucketize histc linalg.matrix_rank multinomial linalg.ldl_factor linalg.ldl_factor_ex "
                          "linalg.ldl_solve".split()
                          + [f"special.{n}" for n in "bessel_j0 bessel_j1 bessel_y0 bessel_y1 modified_bessel_i0 "
                             "modified_bessel_i1 modified_bessel_k0 modified_bessel_k1 scaled_modified_bessel_k0 "
                             "scaled_modified_bessel_k1 spherical_bessel_j0 chebyshev_polynomial_t chebyshev_polynomial_u "
                             "chebyshev_polynomial_v chebyshev_polynomial_w hermite_polynomial_h hermite_polynomial_he "
                             "laguerre_polynomial_l legendre_polynomial_p shifted_chebyshev_polynomial_t "
                             "shifted_chebyshev_polynomial_u".split()])  # (an input that requires grad is no error)
# PyTorch's composites of other ops, writing out with an in-place copy: an input that requires grad is no error, an
# out that does is (as any leaf written in place); and the ones that refuse only an out that requires grad
_COMPOSITE = set("inner tensordot quantile nanquantile linalg.matrix_norm linalg.norm linalg.cond linalg.tensorinv "
                 "linalg.tensorsolve special.ndtr fft.ifft fft.ihfft".split())
_OUT_GRAD_ONLY = {"conj_physical", "diag", "heaviside"}
# the reductions and products that write out without PyTorch's overlap checks (the pointwise functions check)
_NO_OVERLAP_CHECK = set("sum mean prod amax amin logsumexp std var argmax argmin norm max min sort topk mv dot matmul "
                        "mm bmm".split())
# the name PyTorch's autograd refusal gives, where it is another function's
_ATEN_NAME = {"absolute": "abs", "arccos": "acos", "arccosh": "acosh", "arcsin": "asin", "arcsinh": "asinh",
              "arctan": "atan", "arctan2": "atan2", "arctanh": "atanh", "negative": "neg", "square": "pow",
              "outer": "mul", "norm": "linalg_vector_norm",
              "subtract": "sub", "multiply": "mul", "divide": "div", "true_divide": "div", "clip": "clamp",
              "concat": "cat", "concatenate": "cat", "ger": "mul", "kron": "mul", "cross": "linalg_cross",
              "chain_matmul": "mm", "matrix_power": "matmul", "nanmean": "nansum", "msort": "sort", "diff": "sub",
              "take_along_dim": "gather", "fix": "trunc", "float_power": "pow", "special.digamma": "digamma",
              "special.erf": "erf", "special.erfc": "erfc", "special.erfinv": "erfinv", "special.exp2": "exp2",
              "special.expit": "sigmoid", "special.expm1": "expm1", "special.gammaln": "lgamma", "special.i0": "i0",
              "special.log1p": "log1p", "special.logit": "logit", "special.psi": "digamma", "special.round": "round",
              "special.sinc": "sinc", "special.gammainc": "igamma", "special.gammaincc": "igammac",
              "special.xlogy": "xlogy", "special.logsumexp": "logsumexp", "special.multigammaln": "mvlgamma",
              "special.polygamma": "polygamma", "linalg.inv": "linalg_inv_ex", "inverse": "linalg_inv_ex",
              "linalg.det": "_linalg_det", "linalg.slogdet": "_linalg_slogdet", "linalg.solve": "_linalg_solve_ex",
              "linalg.solve_ex": "_linalg_solve_ex", "linalg.cholesky": "linalg_cholesky_ex",
              "linalg.eigvalsh": "_linalg_eigh", "linalg.svdvals": "_linalg_svd", "linalg.svd": "_linalg_svd", "linalg.matrix_power": "matmul",
              "linalg.vecdot": "sum", "linalg.matmul": "matmul", "linalg.lu_factor": "linalg_lu_factor_ex",
              **{f"fft.{n}": "_fft_r2c" for n in "fft rfft rfft2 rfftn".split()},
              **{f"fft.{n}": "_fft_c2c" for n in "fft2 ifft2 fftn ifftn ihfft2 ihfftn".split()},
              **{f"fft.{n}": "_fft_c2r" for n in "irfft hfft irfft2 irfftn hfft2 hfftn".split()},
              "linalg.lu_solve": "linalg_lu_solve", "lu_solve": "linalg_lu_solve",
              **dict.fromkeys("hstack vstack dstack column_stack row_stack".split(), "cat"),
              **{f"special.{n}": f"special_{n}" for n in "entr erfcx i0e i1 i1e log_ndtr ndtri xlog1py zeta".split()},
              **{f"linalg.{n}": f"linalg_{n}" for n in "pinv vector_norm cross solve_triangular householder_product "
                                                       "inv_ex cholesky_ex".split()},
              "linalg.multi_dot": "mm", "diag": "aten::diag_embed", "conj_physical": "aten::conj_physical",
              "heaviside": "aten::heaviside", "fft.fftfreq": "aten::fft_fftfreq", "fft.rfftfreq": "aten::fft_rfftfreq",
              **{n: "aten::" + n for n in _FACTORIES}}
_CPP_NAME = {"Float": "float", "Double": "double", "Half": "c10::Half", "BFloat16": "c10::BFloat16",
             "Long": "long int", "Int": "int", "Short": "short int", "Char": "signed char", "Byte": "unsigned char",
             "Bool": "bool", "ComplexFloat": "c10::complex<float>", "ComplexDouble": "c10::complex<double>"}


def take_out(owner, space=""):
    """The functions OUT_FUNCTIONS names in `space` ("": the top level; "linalg", "special", "fft") replaced, in
    `owner` (a module's globals or an object), by their forms that take out=."""
    for name in OUT_FUNCTIONS:
        found, _, attr = name.rpartition(".")
        if found != space:
            continue
        if isinstance(owner, dict):
            owner[attr] = with_out(owner[attr], name)
        else:
            setattr(owner, attr, with_out(getattr(owner, attr), name))


def with_out(fn, name=None):
    """`fn` taking PyTorch's keyword `out=` as well (None: fn itself); `name`: the public name it has."""
    name = name or fn.__name__

    @functools.wraps(fn)
    def call(*args, out=None, **kwargs):
        if out is None:
            return fn(*args, **kwargs)
        return out_call(fn, name, args, kwargs, out)

    return call


def out_call(fn, name, args, kwargs, out):
    """fn(*args, **kwargs) written into `out`, as PyTorch's `name(..., out=out)`. The functions a script calls
    every step (cat, where, clamp, ...) take `out=None` themselves and come here only when it is given."""
    inputs = args + tuple(kwargs.values())
    if state.grad_enabled and name in _COMPOSITE:
        if _requires_grad(out):
            raise RuntimeError("a leaf Variable that requires grad is being used in an in-place operation.")
    elif (state.grad_enabled and name not in _NOT_DIFFERENTIABLE
            and any(_requires_grad(a) for a in ((out,) if name in _OUT_GRAD_ONLY else inputs + (out,)))):
        raise RuntimeError(f"{_ATEN_NAME.get(name, name)}(): functions with out=... arguments don't support "
                           "automatic differentiation, but one of the arguments requires grad.")
    if name in _FACTORIES and isinstance(out, Tensor):  # made in out's dtype; another one asked for is an error
        dtype = kwargs.get("dtype")
        if dtype is not None and dtype != out.dtype:
            raise RuntimeError(f"dtype {dtype._legacy[:-6]} does not match dtype of out parameter "
                               f"({out.dtype._legacy[:-6]})")
        kwargs = {**kwargs, "dtype": out.dtype}
    elif name in _IN_OUT_DTYPE and isinstance(out, Tensor):
        kwargs = {**kwargs, "dtype": out.dtype}
    result = fn(*args, **kwargs)
    if isinstance(result, tuple):
        if not isinstance(out, (tuple, list)):
            raise TypeError(f"{name.replace('.', '_')}(): argument 'out' must be tuple of Tensors, not {type_name(out)}")
        if len(out) != len(result):
            raise TypeError(f"expected tuple of {len(result)} elements but got {len(out)}")
        for r, o in zip(result, out):
            write(name, r, o, inputs)
        return _return_type(result, name)(*out) if hasattr(result, "_fields") else tuple(out)
    return write(name, result, out, inputs)


def _return_type(result, name):  # PyTorch's return_types.<op>_out, the named tuple of the out= form
    return return_type(f"{type(result).__name__}_out", result._fields)


def _requires_grad(a):
    if isinstance(a, Tensor):
        return a._requires_grad
    return isinstance(a, (tuple, list)) and any(isinstance(t, Tensor) and t._requires_grad for t in a)


def write(name, result, out, inputs=()):
    """result's values into `out` (resized to result's shape where it differs); returns out. minigrad.compile
    replays the write as an in-place call on that call's `out` (a write to its array outside an op would
    happen at the capture only: a replay would read `out` as it was)."""
    if not isinstance(out, Tensor):
        raise TypeError(f"{name.replace('.', '_')}(): argument 'out' must be Tensor, not {type_name(out)}")  # (fft_fft)
    if name not in _NO_OVERLAP_CHECK:
        _check_overlap(out, inputs)
    allowed, text, *error = _DTYPE_RULES[_DTYPE_RULE.get(name, "cast")]
    first = next((a for a in inputs if isinstance(a, Tensor)), result)
    if not allowed(result.dtype, out.dtype, first.dtype):
        r, o, i = (d._legacy[:-6] for d in (result.dtype, out.dtype, first.dtype))
        raise (error or [RuntimeError])[0](text.format(
            name=name, short=_fft_name(name), r=r, o=o, i=i, r_cpp=_CPP_NAME.get(r, r),
            o_cpp=_CPP_NAME.get(o, o), int32=str(r == "Int").lower(),
            r_opmath="Float" if r in ("Half", "BFloat16") else r))  # (mean's half: in float)
    if recording.hook.recorder is not None:
        if out.shape != result.shape:
            recording.escape(f"{name}(out=...) resizing its out tensor", "a replay would not resize it again")
        else:
            return recording.hook.recorder.on_inplace(_write_into, out, (result,), {})
    return _write_into(out, result, name)


def _fft_name(name):  # the name an FFT's out= refusal gives: the n-dimensional kernel's for the 2-D ones
    short = name.rpartition(".")[2]
    return short[:-1] + "n" if short.endswith("2") else short


def _check_overlap(out, inputs):
    """PyTorch's refusals of an out that overlaps itself or shares some, not all, of its memory with an input."""
    dst = out.array
    if dst.size > 1 and any(st == 0 and n > 1 for st, n in zip(dst.strides, dst.shape)):
        raise RuntimeError("unsupported operation: more than one element of the written-to tensor refers to a single "
                           "memory location. Please clone() the tensor before performing the operation.")
    for a in inputs:
        if isinstance(a, Tensor) and overlaps(dst, a.array, full=False):
            raise RuntimeError(SHARED_MEMORY_MESSAGE)


def _write_into(out, result, name="out"):
    src, dst = result.array, out.array
    if name == "arange" and dst.size == src.size:  # (PyTorch's arange keeps an out of as many elements as it is)
        src = src.reshape(dst.shape)
    if dst.shape != src.shape:
        if dst.size and name == "arange":
            warnings.warn(_ARANGE_RESIZED.format(list(dst.shape), dst.size, src.size, src.size), UserWarning,
                          stacklevel=4)
        elif dst.size and name not in _FACTORIES:  # (PyTorch's other factories resize their out without a word)
            warnings.warn(_RESIZED.format(list(dst.shape), list(src.shape)), UserWarning, stacklevel=4)
        out.array = src.astype(dst.dtype, copy=True)  # (resized: a new array, the tensor the same)
    else:
        dst[...] = src
    out._bump_version()
    return out
