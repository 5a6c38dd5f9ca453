"""Every op, grouped by family; `_bind_methods` attaches them to Tensor (as `t.exp()`, `a @ b`, ...)."""
from . import elementwise, indexing, inplace, reduction, shape  # noqa: F401
from .elementwise import (  # noqa: F401
    abs, add, allclose, bitwise_and, bitwise_or, clamp, clip, cos, div, eq, equal, exp, ge, gt, isfinite, isinf,
    isnan, le, log, logical_and, logical_not, logical_or, logical_xor, lt, masked_fill, maximum, minimum, mul, ne,
    neg, pow, reciprocal, relu, rsqrt, sigmoid, sign, sin, sqrt, square, sub, tanh, where,
)
from .indexing import gather, index_select, multinomial, sort, topk  # noqa: F401
from .matmul import bmm, dot, matmul, mm  # noqa: F401
from .reduction import (  # noqa: F401
    all, amax, amin, any, argmax, argmin, log_softmax, logsumexp, max, mean, min, norm, prod, softmax, std, sum, var,
)
from .shape import (  # noqa: F401
    broadcast_to, cat, chunk, clone, concat, concatenate, contiguous, expand, expand_as, flatten, permute, reshape,
    split, squeeze, stack, t, transpose, tril, triu, unbind, unflatten, unsqueeze, view,
)

_E = elementwise


def _bind_methods(Tensor):
    methods = dict(
        add=add, sub=sub, mul=mul, div=div, pow=pow, neg=neg, exp=exp, log=log, sqrt=sqrt, rsqrt=rsqrt, tanh=tanh,
        sigmoid=sigmoid, relu=relu, abs=abs, clamp=clamp, clip=clip, maximum=maximum, minimum=minimum, sin=sin,
        cos=cos, sign=sign, square=square, reciprocal=reciprocal, masked_fill=masked_fill, where=lambda self, cond, other: where(cond, self, other),
        eq=eq, ne=ne, lt=lt, le=le, gt=gt, ge=ge, logical_not=logical_not, logical_and=logical_and,
        logical_or=logical_or, isnan=isnan, isinf=isinf, isfinite=isfinite, allclose=allclose, equal=equal,
        sum=sum, mean=mean, var=var, std=std, max=max, min=min, amax=amax, amin=amin, argmax=argmax, argmin=argmin,
        logsumexp=logsumexp, softmax=softmax, log_softmax=log_softmax, all=all, any=any, prod=prod, norm=norm,
        reshape=reshape, view=view, flatten=flatten, unflatten=unflatten, permute=permute, transpose=transpose,
        t=t, squeeze=squeeze, unsqueeze=unsqueeze, expand=expand, expand_as=expand_as, contiguous=contiguous,
        clone=clone, split=split, chunk=chunk, unbind=unbind, tril=tril, triu=triu, matmul=matmul, mm=mm, bmm=bmm,
        dot=dot, gather=gather, index_select=index_select, topk=topk, sort=sort, multinomial=multinomial,
        view_as=lambda self, other: view(self, other.shape),
        reshape_as=lambda self, other: reshape(self, other.shape),
        zero_=inplace.zero_, fill_=inplace.fill_, copy_=inplace.copy_, masked_fill_=inplace.masked_fill_,
        clamp_=inplace.clamp_, uniform_=inplace.uniform_, normal_=inplace.normal_, bernoulli_=inplace.bernoulli_,
        __getitem__=indexing.getitem, __setitem__=indexing.setitem,
        __add__=add, __radd__=add, __sub__=sub, __rsub__=_E.rsub, __mul__=mul, __rmul__=mul,
        __truediv__=div, __rtruediv__=_E.rdiv, __pow__=pow, __rpow__=lambda self, other: pow(other, self),
        __matmul__=matmul, __rmatmul__=lambda self, other: matmul(other, self), __neg__=neg, __abs__=abs,
        __eq__=eq, __ne__=ne, __lt__=lt, __le__=le, __gt__=gt, __ge__=ge,
        __and__=_E.logical_and, __or__=_E.logical_or, __xor__=_E.logical_xor, __invert__=logical_not,
        __floordiv__=lambda self, other: div(self, other, rounding_mode="floor"),
        __mod__=lambda self, other: self - div(self, other, rounding_mode="floor") * other,
    )
    for name, fn in inplace._setup().items():
        methods[name] = fn
    methods.update(__iadd__=methods["add_"], __isub__=methods["sub_"], __imul__=methods["mul_"],
                   __itruediv__=methods["div_"])
    for name, fn in methods.items():
        setattr(Tensor, name, fn)
    Tensor.T = property(shape._T)
    Tensor.mT = property(shape._mT)
