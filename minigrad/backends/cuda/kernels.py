"""The CUDA kernels (cupy) of the fused ops and AdamW: their sources and array-level wrappers.

The backend's files for each op (gelu.py, layer_norm.py, ...) call these; docs/gpu.md lists them.

Array-level kernels (cupy arrays in, cupy arrays out; usable on their own):

    gelu_forward / gelu_backward        erf form (CUDA's erff / erf) and tanh form, one pass each
    softmax_forward / softmax_backward  along any dim (one block per row of the last dim); log=True: log_softmax
    attention_softmax                   scale + causal mask + softmax of raw q k^T scores, in one kernel
    layer_norm_forward                  -> (y, xhat, rstd): mean, 1/std, output, one block per row
    layer_norm_backward                 -> gx;  layer_norm_param_grads -> (gw, gb), column sums in one pass
    cross_entropy_rows                  -> (loss_i, weight_i, D): logsumexp, nll, label smoothing,
                                           ignore_index, class weights and the gradient D in one pass
    adam_update                         Adam / AdamW (+ amsgrad) in place, one kernel per parameter
    dropout_forward / dropout_backward  keep mask (from minigrad's CUDA generator) and scaling

Kernels are built on first use and kept in this module (`_kernels`); cupy compiles each once per
device and dtype and also keeps the binary in its on-disk cache (~/.cupy/kernel_cache). Raw
kernels are written once over a type `T` and compiled for float and double; reductions
accumulate in T, like the CPU ops (tree sums: one warp shuffle tree, then one across warps).
Every raw kernel takes C-contiguous rows (the wrappers make them so) and runs one thread block
per row, with a block size from `_threads(row_length)` (a multiple of 32, at most 1024).
"""
import math

import numpy as np

_kernels = {}  # (name, dtype char) or name -> cupy kernel object, built once per process (and block limits)

SQRT1_2 = 1.0 / math.sqrt(2.0)
INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)
K_TANH = math.sqrt(2.0 / math.pi)
A_TANH = 0.044715


def _cp():
    from ...device import _import_cupy

    return _import_cupy()


# ==== CUDA sources ====================================================================================
# Math helpers as float / double overloads (no dependence on which C++ overloads NVRTC provides).
MATH = r"""
__device__ __forceinline__ float mg_exp(float x) { return expf(x); }
__device__ __forceinline__ double mg_exp(double x) { return exp(x); }
__device__ __forceinline__ float mg_log(float x) { return logf(x); }
__device__ __forceinline__ double mg_log(double x) { return log(x); }
__device__ __forceinline__ float mg_sqrt(float x) { return sqrtf(x); }
__device__ __forceinline__ double mg_sqrt(double x) { return sqrt(x); }
__device__ __forceinline__ float mg_erf(float x) { return erff(x); }
__device__ __forceinline__ double mg_erf(double x) { return erf(x); }
__device__ __forceinline__ float mg_tanh(float x) { return tanhf(x); }
__device__ __forceinline__ double mg_tanh(double x) { return tanh(x); }
__device__ __forceinline__ float mg_max(float a, float b) { return fmaxf(a, b); }
__device__ __forceinline__ double mg_max(double a, double b) { return fmax(a, b); }
__device__ __forceinline__ float mg_neg_inf(float) { return __int_as_float((int)0xff800000u); }
__device__ __forceinline__ double mg_neg_inf(double) { return __longlong_as_double((long long)0xfff0000000000000ull); }
"""

# Block reductions over T (raw kernels are compiled with `typedef float T;` or `typedef double T;` first).
# blockDim.x must be a multiple of 32 and at most 1024; every thread of the block must call them.
COMMON = r"""
__device__ __forceinline__ T warp_sum(T v) {
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}
__device__ __forceinline__ T warp_max(T v) {
    for (int o = 16; o > 0; o >>= 1) v = mg_max(v, __shfl_xor_sync(0xffffffffu, v, o));
    return v;
}
// The sum of v over the block, returned to every thread. sh: __shared__ T[32]. The first
// __syncthreads lets a previous call's readers of sh finish before it is written again.
__device__ __forceinline__ T block_sum(T v, T* sh) {
    const int lane = threadIdx.x & 31, wid = threadIdx.x >> 5, nw = blockDim.x >> 5;
    v = warp_sum(v);
    __syncthreads();
    if (lane == 0) sh[wid] = v;
    __syncthreads();
    v = lane < nw ? sh[lane] : (T)0;
    return warp_sum(v);
}
__device__ __forceinline__ T block_max(T v, T* sh) {
    const int lane = threadIdx.x & 31, wid = threadIdx.x >> 5, nw = blockDim.x >> 5;
    v = warp_max(v);
    __syncthreads();
    if (lane == 0) sh[wid] = v;
    __syncthreads();
    v = lane < nw ? sh[lane] : mg_neg_inf(v);
    return warp_max(v);
}
"""

RAW = {
    # ---- softmax / log_softmax over rows of D: one block per row ----
    "mg_softmax_fwd": r"""
extern "C" __global__ void mg_softmax_fwd(const T* __restrict__ x, T* __restrict__ y, const long long D,
                                          const int log_mode) {
    __shared__ T sh[32];
    const long long off = (long long)blockIdx.x * D;
    const T* xr = x + off;
    T* yr = y + off;
    T m = mg_neg_inf((T)0);
    for (long long j = threadIdx.x; j < D; j += blockDim.x) m = mg_max(m, xr[j]);
    m = block_max(m, sh);
    T s = (T)0;
    for (long long j = threadIdx.x; j < D; j += blockDim.x) s += mg_exp(xr[j] - m);
    s = block_sum(s, sh);
    if (log_mode) {
        const T lse = mg_log(s);
        for (long long j = threadIdx.x; j < D; j += blockDim.x) yr[j] = (xr[j] - m) - lse;
    } else {
        for (long long j = threadIdx.x; j < D; j += blockDim.x) yr[j] = mg_exp(xr[j] - m) / s;
    }
}
""",
    # softmax: gx = (g - sum(g y)) y scale;  log_softmax: gx = (g - exp(y) sum(g)) scale
    "mg_softmax_bwd": r"""
extern "C" __global__ void mg_softmax_bwd(const T* __restrict__ y, const T* __restrict__ g, T* __restrict__ gx,
                                          const long long D, const T scale, const int log_mode) {
    __shared__ T sh[32];
    const long long off = (long long)blockIdx.x * D;
    const T* yr = y + off;
    const T* gr = g + off;
    T* gxr = gx + off;
    T s = (T)0;
    if (log_mode) {
        for (long long j = threadIdx.x; j < D; j += blockDim.x) s += gr[j];
    } else {
        for (long long j = threadIdx.x; j < D; j += blockDim.x) s += gr[j] * yr[j];
    }
    s = block_sum(s, sh);
    if (log_mode) {
        for (long long j = threadIdx.x; j < D; j += blockDim.x) gxr[j] = (gr[j] - mg_exp(yr[j]) * s) * scale;
    } else {
        for (long long j = threadIdx.x; j < D; j += blockDim.x) gxr[j] = (gr[j] - s) * yr[j] * scale;
    }
}
""",
    # ---- attention: P = softmax(scale * S + causal mask) over rows of S keys; rows = batch * L ----
    # Row r is query position i = r % L; with `causal`, keys j > i are masked (top-left aligned, as
    # PyTorch's is_causal). A row whose visible scores are all -inf gives zeros, as the CPU op.
    # x and y may be the same array (in place): each element is read before it is written, by one thread.
    "mg_attn_softmax": r"""
extern "C" __global__ void mg_attn_softmax(const T* x, T* y, const long long L, const long long S, const T scale,
                                           const int causal) {
    __shared__ T sh[32];
    const long long row = blockIdx.x;
    const long long lim = causal ? (row % L) : (S - 1);  // keys 0..lim are visible
    const T* xr = x + row * S;
    T* yr = y + row * S;
    const T ninf = mg_neg_inf((T)0);
    T m = ninf;
    for (long long j = threadIdx.x; j <= lim && j < S; j += blockDim.x) m = mg_max(m, xr[j] * scale);
    m = block_max(m, sh);
    if (!(m > ninf && m < -ninf)) m = (T)0;  // -inf (fully masked), +inf or NaN: as the CPU op, use 0
    T s = (T)0;
    for (long long j = threadIdx.x; j <= lim && j < S; j += blockDim.x) s += mg_exp(xr[j] * scale - m);
    s = block_sum(s, sh);
    if (s == (T)0) s = (T)1;
    for (long long j = threadIdx.x; j < S; j += blockDim.x) yr[j] = j <= lim ? mg_exp(xr[j] * scale - m) / s : (T)0;
}
""",
    # ---- layer_norm over rows of D: xhat = (x - mean) rstd, y = xhat w + b, rstd = 1/sqrt(var + eps) ----
    # w, b: any valid pointer when has_w / has_b is 0 (never read).
    "mg_ln_fwd": r"""
extern "C" __global__ void mg_ln_fwd(const T* __restrict__ x, const T* __restrict__ w, const T* __restrict__ b,
                                     T* __restrict__ y, T* __restrict__ xhat, T* __restrict__ rstd,
                                     const long long D, const T inv_d, const T eps, const int has_w, const int has_b) {
    __shared__ T sh[32];
    const long long off = (long long)blockIdx.x * D;
    const T* xr = x + off;
    T* yr = y + off;
    T* hr = xhat + off;
    T s = (T)0;
    for (long long j = threadIdx.x; j < D; j += blockDim.x) s += xr[j];
    const T mean = block_sum(s, sh) * inv_d;
    T v = (T)0;
    for (long long j = threadIdx.x; j < D; j += blockDim.x) {
        const T d = xr[j] - mean;
        v += d * d;
    }
    const T var = block_sum(v, sh) * inv_d;
    const T r = (T)1 / mg_sqrt(var + eps);
    for (long long j = threadIdx.x; j < D; j += blockDim.x) {
        const T h = (xr[j] - mean) * r;
        hr[j] = h;
        T o = has_w ? h * w[j] : h;
        if (has_b) o += b[j];
        yr[j] = o;
    }
    if (threadIdx.x == 0) rstd[blockIdx.x] = r;
}
""",
    # gx = rstd (g w - mean(g w) - xhat mean(g w xhat))
    "mg_ln_bwd": r"""
extern "C" __global__ void mg_ln_bwd(const T* __restrict__ g, const T* __restrict__ xhat, const T* __restrict__ rstd,
                                     const T* __restrict__ w, T* __restrict__ gx, const long long D, const T inv_d,
                                     const int has_w) {
    __shared__ T sh[32];
    const long long off = (long long)blockIdx.x * D;
    const T* gr = g + off;
    const T* hr = xhat + off;
    T* gxr = gx + off;
    T c1 = (T)0, c2 = (T)0;
    for (long long j = threadIdx.x; j < D; j += blockDim.x) {
        const T gw = has_w ? gr[j] * w[j] : gr[j];
        c1 += gw;
        c2 += gw * hr[j];
    }
    c1 = block_sum(c1, sh) * inv_d;
    c2 = block_sum(c2, sh) * inv_d;
    const T r = rstd[blockIdx.x];
    for (long long j = threadIdx.x; j < D; j += blockDim.x) {
        const T gw = has_w ? gr[j] * w[j] : gr[j];
        gxr[j] = (gw - c1 - hr[j] * c2) * r;
    }
}
""",
    # Column sums of g xhat and g over a part of the rows: block (32, 8), grid (ceil(D / 32), parts).
    # Part p sums rows [p rows_per_part, (p + 1) rows_per_part) into pw[p, :] and pb[p, :].
    "mg_ln_bwd_cols": r"""
extern "C" __global__ void mg_ln_bwd_cols(const T* __restrict__ g, const T* __restrict__ xhat, T* __restrict__ pw,
                                          T* __restrict__ pb, const long long N, const long long D,
                                          const long long rows_per_part) {
    __shared__ T sw[8][33];
    __shared__ T sb[8][33];
    const int tx = threadIdx.x, ty = threadIdx.y;
    const long long col = (long long)blockIdx.x * 32 + tx;
    const long long r0 = (long long)blockIdx.y * rows_per_part;
    long long r1 = r0 + rows_per_part;
    if (r1 > N) r1 = N;
    T aw = (T)0, ab = (T)0;
    if (col < D) {
        for (long long r = r0 + ty; r < r1; r += 8) {
            const T gv = g[r * D + col];
            aw += gv * xhat[r * D + col];
            ab += gv;
        }
    }
    sw[ty][tx] = aw;
    sb[ty][tx] = ab;
    __syncthreads();
    if (ty == 0 && col < D) {
        T tw = (T)0, tb = (T)0;
        for (int k = 0; k < 8; ++k) {
            tw += sw[k][tx];
            tb += sb[k][tx];
        }
        pw[(long long)blockIdx.y * D + col] = tw;
        pb[(long long)blockIdx.y * D + col] = tb;
    }
}
""",
    # ---- cross_entropy over rows of C classes, one block per row (see cross_entropy_rows) ----
    "mg_ce_fwd": r"""
extern "C" __global__ void mg_ce_fwd(const T* __restrict__ x, const long long* __restrict__ t,
                                     const T* __restrict__ w, T* __restrict__ grad, T* __restrict__ loss,
                                     T* __restrict__ wt_out, const long long C, const long long ignore_index,
                                     const T one_m_ls, const T ls_over_c, const T wsum, const int has_w,
                                     const int smoothing, const int need_grad) {
    __shared__ T sh[32];
    const long long row = blockIdx.x;
    const T* xr = x + row * C;
    const long long ti = t[row];
    const bool valid = ti != ignore_index;
    const long long ts = valid ? ti : 0;
    const T wt = valid ? (has_w ? w[ts] : (T)1) : (T)0;  // valid_i w[t_i]
    const T hit = wt * one_m_ls;                          // (1 - ls) valid_i w[t_i]
    const T vs = valid ? ls_over_c : (T)0;                // ls/C valid_i
    const T a = vs * wsum + hit;
    T m = mg_neg_inf((T)0);
    for (long long j = threadIdx.x; j < C; j += blockDim.x) m = mg_max(m, xr[j]);
    m = block_max(m, sh);
    T s = (T)0, sx = (T)0;
    for (long long j = threadIdx.x; j < C; j += blockDim.x) {
        const T xv = xr[j];
        s += mg_exp(xv - m);
        if (smoothing) sx += has_w ? w[j] * xv : xv;
    }
    s = block_sum(s, sh);
    if (smoothing) sx = block_sum(sx, sh);
    const T lse = m + mg_log(s);
    if (threadIdx.x == 0) {
        T l = (lse - xr[ts]) * hit;
        if (smoothing) l += (lse * wsum - sx) * vs;
        loss[row] = l;
        wt_out[row] = wt;
    }
    if (need_grad) {
        T* gr = grad + row * C;
        const T as = a / s;
        for (long long j = threadIdx.x; j < C; j += blockDim.x) {
            T d = mg_exp(xr[j] - m) * as;
            if (j == ts) d -= hit;
            if (smoothing) d -= has_w ? vs * w[j] : vs;
            gr[j] = d;
        }
    }
}
""",
}

# ---- elementwise kernels: (in_params, out_params, body); the MATH helpers are their preamble ----
_C = {k: repr(float(v)) for k, v in dict(
    SQRT1_2=SQRT1_2, INV_SQRT_2PI=INV_SQRT_2PI, K=K_TANH, A=A_TANH, A3=3.0 * A_TANH, HALF_K=0.5 * K_TANH).items()}

ELEMENTWISE = {
    # gelu(x) = x/2 (1 + erf(x/sqrt2))
    "mg_gelu_fwd": ("T x", "T y", f"y = ((T)1 + mg_erf(x * (T){_C['SQRT1_2']})) * x * (T)0.5;"),
    # gelu'(x) = (1 + erf(x/sqrt2))/2 + x exp(-x^2/2)/sqrt(2pi)
    "mg_gelu_bwd": ("T x, T g", "T gx", f"""
        const T cdf = ((T)1 + mg_erf(x * (T){_C['SQRT1_2']})) * (T)0.5;
        const T pdf = mg_exp(x * x * (T)-0.5) * x * (T){_C['INV_SQRT_2PI']};
        gx = (cdf + pdf) * g;"""),
    # gelu(x) ~ x/2 (1 + tanh(k (x + a x^3)))
    "mg_gelu_tanh_fwd": ("T x", "T y", f"""
        const T u = (x * x * (T){_C['A']} + (T)1) * x * (T){_C['K']};
        y = (mg_tanh(u) + (T)1) * x * (T)0.5;"""),
    # d/dx = (1 + t)/2 + x/2 (1 - t^2) k (1 + 3a x^2),  t = tanh(k (x + a x^3))
    "mg_gelu_tanh_bwd": ("T x, T g", "T gx", f"""
        const T xx = x * x;
        const T t = mg_tanh((xx * (T){_C['A']} + (T)1) * x * (T){_C['K']});
        const T s1 = (xx * (T){_C['A3']} + (T)1) * x * (T){_C['HALF_K']};
        gx = ((t + (T)1) * (T)0.5 + s1 * ((T)1 - t * t)) * g;"""),
    # Adam / AdamW in place, the CPU op's arithmetic: decay = 1 - lr wd (AdamW) else 1; l2 = wd (Adam) else 0;
    # step_scale = -lr sqrt(bc2) / bc1; eps_scaled = eps sqrt(bc2)
    "mg_adam": ("T g, T decay, T l2, T one_m_b1, T beta2, T one_m_b2, T step_scale, T eps_scaled",
                "T param, T m, T v", """
        T gr = g;
        if (l2 != (T)0) gr = param * l2 + gr;
        param = param * decay;
        m = m + (gr - m) * one_m_b1;
        v = v * beta2 + (gr * one_m_b2) * gr;
        param = param + m / (mg_sqrt(v) + eps_scaled) * step_scale;"""),
    "mg_adam_amsgrad": ("T g, T decay, T l2, T one_m_b1, T beta2, T one_m_b2, T step_scale, T eps_scaled",
                        "T param, T m, T v, T vmax", """
        T gr = g;
        if (l2 != (T)0) gr = param * l2 + gr;
        param = param * decay;
        m = m + (gr - m) * one_m_b1;
        v = v * beta2 + (gr * one_m_b2) * gr;
        vmax = v > vmax ? v : vmax;
        param = param + m / (mg_sqrt(vmax) + eps_scaled) * step_scale;"""),
    # dropout: keep = u >= p;  y = x scale keep
    "mg_dropout_fwd": ("T x, float32 u, float32 prob, T scale", "T y, bool keep", """
        keep = u >= prob;
        y = keep ? x * scale : (T)0;"""),
    "mg_dropout_bwd": ("T g, bool keep, T scale", "T gx", "gx = keep ? g * scale : (T)0;"),
}


def raw_source(name, dtype):
    """The full CUDA source of raw kernel `name` for float32 or float64 (what cupy compiles)."""
    ctype = {"f": "float", "d": "double"}[np.dtype(dtype).char]
    return f"typedef {ctype} T;\n" + MATH + COMMON + RAW[name]


def _raw(name, dtype):
    key = (name, np.dtype(dtype).char)
    k = _kernels.get(key)
    if k is None:
        k = _kernels[key] = _cp().RawKernel(raw_source(name, dtype), name)
    return k


def _elementwise(name):
    k = _kernels.get(name)
    if k is None:
        in_p, out_p, body = ELEMENTWISE[name]
        k = _kernels[name] = _cp().ElementwiseKernel(in_p, out_p, body, name, preamble=MATH)
    return k


def _threads(n):
    """Threads of a one-block-per-row kernel: ~4 items each, a multiple of 32, at most 1024."""
    return int(min(1024, max(32, 32 * -(-int(n) // 128))))


def _block_limit(name, dtype, k):
    """The most threads per block kernel k launches with (1024 unless it needs many registers), cached."""
    key = ("max_threads", name, np.dtype(dtype).char)
    n = _kernels.get(key)
    if n is None:
        try:
            n = int(k.max_threads_per_block)  # compiles the kernel
        except Exception:
            n = 1024
        n = _kernels[key] = max(32, n - n % 32)
    return n


def _launch_rows(name, dtype, rows, row_len, args):
    """One block per row: a grid of `rows` blocks of `_threads(row_len)` threads."""
    if rows <= 0:
        return
    if rows > 2**31 - 1:
        raise ValueError(f"{name}: {rows} rows is more than one grid dimension holds")
    k = _raw(name, dtype)
    k((int(rows),), (min(_threads(row_len), _block_limit(name, dtype, k)),), args)


def _scalar(dtype, v):
    return np.dtype(dtype).type(v)


def _contig(cp, a):
    return a if a.flags.c_contiguous else cp.ascontiguousarray(a)


# ==== array-level kernels =============================================================================
def gelu_forward(x, approximate="none"):
    """gelu(x), erf form or (approximate='tanh') tanh form, one elementwise kernel."""
    return _elementwise("mg_gelu_tanh_fwd" if approximate == "tanh" else "mg_gelu_fwd")(x)


def gelu_backward(x, g, approximate="none"):
    """gelu'(x) * g."""
    return _elementwise("mg_gelu_tanh_bwd" if approximate == "tanh" else "mg_gelu_bwd")(x, g)


def _rows_last(cp, a, dim):
    """`a` as contiguous (rows, n) rows along `dim`, and the moved shape to undo it (None: dim was last)."""
    if dim == a.ndim - 1:
        return _contig(cp, a).reshape(-1, a.shape[-1]), None
    moved = cp.moveaxis(a, dim, -1)
    return cp.ascontiguousarray(moved).reshape(-1, a.shape[dim]), moved.shape


def _unrows(cp, r2, shape, moved, dim):
    return r2.reshape(shape) if moved is None else cp.moveaxis(r2.reshape(moved), -1, dim)


def softmax_forward(x, dim=-1, log=False):
    """softmax (log=True: log_softmax) of `x` along `dim`."""
    cp = _cp()
    if x.ndim == 0:
        return softmax_forward(x.reshape(1), 0, log).reshape(())
    dim = dim % x.ndim
    x2, moved = _rows_last(cp, x, dim)
    y2 = cp.empty_like(x2)
    if x2.size:
        _launch_rows("mg_softmax_fwd", x2.dtype, x2.shape[0], x2.shape[1],
                     (x2, y2, np.int64(x2.shape[1]), np.int32(bool(log))))
    return _unrows(cp, y2, x.shape, moved, dim)


def softmax_backward(y, g, dim=-1, log=False, scale=1.0):
    """Gradient of softmax (log=True: log_softmax) from its output y and upstream g, times `scale`."""
    cp = _cp()
    if y.ndim == 0:
        return softmax_backward(y.reshape(1), g.reshape(1), 0, log, scale).reshape(())
    dim = dim % y.ndim
    y2, moved = _rows_last(cp, y, dim)
    g2, _ = _rows_last(cp, g.astype(y.dtype, copy=False), dim)
    gx2 = cp.empty_like(y2)
    if y2.size:
        _launch_rows("mg_softmax_bwd", y2.dtype, y2.shape[0], y2.shape[1],
                     (y2, g2, gx2, np.int64(y2.shape[1]), _scalar(y2.dtype, scale), np.int32(bool(log))))
    return _unrows(cp, gx2, y.shape, moved, dim)


def attention_softmax(scores, scale, causal=True, out=None):
    """softmax(scale * scores [+ causal mask]) over the last dim of raw scores (..., L, S).

    `out` may be `scores` itself (in place). Fully masked rows (all -inf) give zeros."""
    cp = _cp()
    s2 = _contig(cp, scores)
    L, S = s2.shape[-2], s2.shape[-1]
    if out is None:
        out = cp.empty_like(s2)
    elif out.shape != s2.shape or out.dtype != s2.dtype or not out.flags.c_contiguous:
        raise ValueError("attention_softmax: `out` must be a C-contiguous array of the scores' shape and dtype")
    if s2.size:
        rows = s2.size // S
        _launch_rows("mg_attn_softmax", s2.dtype, rows, S,
                     (s2, out, np.int64(L), np.int64(S), _scalar(s2.dtype, scale), np.int32(bool(causal))))
    return out


def layer_norm_forward(x2, weight=None, bias=None, eps=1e-5):
    """Rows x2 (N, D) -> (y (N, D), xhat (N, D), rstd (N, 1)); weight, bias: (D,) or None."""
    cp = _cp()
    x2 = _contig(cp, x2)
    N, D = x2.shape
    dt = x2.dtype
    y, xhat = cp.empty_like(x2), cp.empty_like(x2)
    rstd = cp.empty((N, 1), dtype=dt)
    w = x2 if weight is None else _contig(cp, weight.reshape(D).astype(dt, copy=False))
    b = x2 if bias is None else _contig(cp, bias.reshape(D).astype(dt, copy=False))
    if x2.size:
        _launch_rows("mg_ln_fwd", dt, N, D, (x2, w, b, y, xhat, rstd, np.int64(D), _scalar(dt, 1.0 / D),
                                             _scalar(dt, eps), np.int32(weight is not None), np.int32(bias is not None)))
    return y, xhat, rstd


def layer_norm_backward(g2, xhat, rstd, weight=None):
    """gx (N, D) from upstream g2 (N, D), the saved xhat (N, D), rstd (N, 1) and weight (D,) or None."""
    cp = _cp()
    xhat = _contig(cp, xhat)
    N, D = xhat.shape
    dt = xhat.dtype
    g2 = _contig(cp, g2.reshape(N, D).astype(dt, copy=False))
    rstd = _contig(cp, rstd.reshape(N))
    w = xhat if weight is None else _contig(cp, weight.reshape(D).astype(dt, copy=False))
    gx = cp.empty_like(xhat)
    if xhat.size:
        _launch_rows("mg_ln_bwd", dt, N, D, (g2, xhat, rstd, w, gx, np.int64(D), _scalar(dt, 1.0 / D),
                                             np.int32(weight is not None)))
    return gx


def layer_norm_param_grads(g2, xhat):
    """(gw, gb), each (D,): column sums of g2 * xhat and of g2, in one pass over both."""
    cp = _cp()
    xhat = _contig(cp, xhat)
    N, D = xhat.shape
    dt = xhat.dtype
    g2 = _contig(cp, g2.reshape(N, D).astype(dt, copy=False))
    if N == 0 or D == 0:
        return cp.zeros(D, dtype=dt), cp.zeros(D, dtype=dt)
    per = max(8, -(-N // 256))  # rows per part: at most 256 parts, at least 8 rows (one per thread row)
    parts = -(-N // per)
    pw = cp.empty((parts, D), dtype=dt)
    pb = cp.empty((parts, D), dtype=dt)
    _raw("mg_ln_bwd_cols", dt)((-(-D // 32), parts), (32, 8), (g2, xhat, pw, pb, np.int64(N), np.int64(D), np.int64(per)))
    return pw.sum(axis=0), pb.sum(axis=0)


def cross_entropy_rows(x2, target, weight=None, ignore_index=-100, label_smoothing=0.0, need_grad=True):
    """Per-row cross-entropy of logits x2 (M, C) against int targets (M,), in one kernel.

    Returns (loss (M,), wt (M,), D (M, C) or None), as the CPU op's arithmetic:
        lse_i = logsumexp_c x_ic;  valid_i = t_i != ignore_index;  wt_i = valid_i w[t_i] (w = 1 without weight)
        loss_i = (1 - ls) wt_i (lse_i - x_i,t_i) + ls/C valid_i (W lse_i - sum_c w_c x_ic),  W = sum_c w_c (or C)
        D_ic = d loss_i / d x_ic = (ls/C valid_i W + (1 - ls) wt_i) p_ic - (1 - ls) wt_i [c = t_i] - ls/C valid_i w_c
    'mean' reduction is sum(loss) / sum(wt); 'sum' is sum(loss).
    """
    cp = _cp()
    x2 = _contig(cp, x2)
    M, C = x2.shape
    dt = x2.dtype
    t = _contig(cp, target.reshape(-1).astype(cp.int64, copy=False))
    ls = float(label_smoothing)
    if weight is not None:
        w = _contig(cp, weight.reshape(C).astype(dt, copy=False))
        wsum = float(w.sum()) if ls else 0.0
    else:
        w, wsum = x2, float(C)
    loss = cp.empty(M, dtype=dt)
    wt = cp.empty(M, dtype=dt)
    grad = cp.empty_like(x2) if need_grad else None
    if M and C:
        _launch_rows("mg_ce_fwd", dt, M, C, (
            x2, t, w, x2 if grad is None else grad, loss, wt, np.int64(C), np.int64(ignore_index),
            _scalar(dt, 1.0 - ls), _scalar(dt, ls / C), _scalar(dt, wsum), np.int32(weight is not None),
            np.int32(ls != 0.0), np.int32(bool(need_grad))))
    return loss, wt, grad


def adam_update(param, grad, exp_avg, exp_avg_sq, lr, beta1, beta2, weight_decay, decoupled, step_scale, eps_scaled,
                max_exp_avg_sq=None):
    """One Adam (decoupled=False) / AdamW step on one parameter, in place, in one kernel.

    `step_scale` = -lr sqrt(1 - beta2^t) / (1 - beta1^t) and `eps_scaled` = eps sqrt(1 - beta2^t), as
    nn/optim/adam.py folds the bias corrections; max_exp_avg_sq: amsgrad's running max (or None)."""
    dt = param.dtype
    wd = float(weight_decay)
    decay = 1.0 - lr * wd if (wd != 0.0 and decoupled) else 1.0
    l2 = wd if (wd != 0.0 and not decoupled) else 0.0
    s = [_scalar(dt, v) for v in (decay, l2, 1.0 - beta1, beta2, 1.0 - beta2, step_scale, eps_scaled)]
    g = grad if grad.dtype == dt else grad.astype(dt)
    if max_exp_avg_sq is None:
        _elementwise("mg_adam")(g, *s, param, exp_avg, exp_avg_sq)
    else:
        _elementwise("mg_adam_amsgrad")(g, *s, param, exp_avg, exp_avg_sq, max_exp_avg_sq)


def dropout_forward(x, p):
    """(y, keep): keep = u >= p for u uniform from minigrad's CUDA generator; y = x keep / (1 - p)."""
    from ...random import generator

    cp = _cp()
    u = generator(cp).random(x.shape, dtype="float32")
    return _elementwise("mg_dropout_fwd")(x, u, np.float32(p), _scalar(x.dtype, 1.0 / (1.0 - p)))


def dropout_backward(g, keep, scale):
    return _elementwise("mg_dropout_bwd")(g, keep, _scalar(g.dtype, scale))
