"""Recurrent layers (RNN, LSTM, GRU) and their cells, with torch's functional signatures (torch.lstm,
torch.gru, torch.rnn_tanh, torch.rnn_relu, torch.lstm_cell, ...).

A layer over a sequence is one `MkldnnRnnLayerBackward0` node per layer and direction (PyTorch's CPU
name for the same node): forward computes every time step's input-to-hidden product as one matmul,
then runs the recurrence; backward is backpropagation through time, ending in one matmul per weight
over all the steps. A cell call is one node too (ThnnFusedLstmCellBackward0, ThnnFusedGruCellBackward0,
RnnTanhCellBackward0, RnnReluCellBackward0): the same array code with T = 1.
The references (primitive ops, autograd): nn/_functional/reference.py's rnn_cell and rnn_layer.

Shapes: x (T, B, I), time first; h (B, Hr), c (B, H); the gates G*H wide, G = 1 (RNN), 4 (LSTM: i, f,
g, o) or 3 (GRU: r, z, n); Hr is an LSTM's proj_size when it projects, else H.
"""
import minigrad
from minigrad import backends
from minigrad.ops.elementwise import sigmoid_array
from minigrad.ops.matmul import matmul_arrays
from minigrad.ops.scatter import _rename_inplace_node

from . import reference
from ._common import Function, check_tensor, once_differentiable, scratch_like, wrap, xp_of
from .dropout import dropout as _dropout
from .linear import _2d, linear_arrays

GATES = {"RNN_TANH": 1, "RNN_RELU": 1, "LSTM": 4, "GRU": 3}


def _sigmoid_(a):
    """a = sigmoid(a) in place (minigrad.sigmoid's array code)."""
    a[...] = sigmoid_array(a)


def _step_kernels(*arrays):
    """The registered implementation of a step's gate math and of a whole layer's steps
    (minigrad/backends/cpu/rnn.py), or None (then the numpy code below runs)."""
    return backends.find("rnn_step", *arrays)


def _sequence(fast, mode, reverse, gates, h0, c0, w_hh, b_hh, out, cells, tanh_c, hidden_n):
    """_forward's step loop in one compiled call, where the backend runs it (else False)."""
    if mode == "LSTM":
        return fast.lstm_sequence(gates, h0, c0, w_hh, out, cells, tanh_c, reverse)
    if mode == "GRU":
        return fast.gru_sequence(gates, h0, w_hh, b_hh, out, hidden_n, reverse)
    return fast.rnn_sequence(gates, h0, w_hh, mode == "RNN_RELU", reverse)


def _sequence_backward(fast, mode, reverse, gates, out, h0, c0, tanh_c, cells, hidden_n, g_out, dh, dc, da, dah,
                       w_hh):
    """_backward's step loop in one compiled call, where the backend runs it (else False)."""
    if mode == "LSTM":
        return fast.lstm_sequence_backward(gates, tanh_c, cells, c0, g_out, dh, dc, da, w_hh, reverse)
    if mode == "GRU":
        return fast.gru_sequence_backward(gates, hidden_n, out, h0, g_out, dh, da, dah, w_hh, reverse)
    return fast.rnn_sequence_backward(out, g_out, dh, da, w_hh, mode == "RNN_RELU", reverse)


def _steps(T, reverse):
    return range(T - 1, -1, -1) if reverse else range(T)


def _forward(mode, reverse, x, h, c, w_ih, w_hh, b_ih, b_hh, w_hr):
    """One layer, one direction, on arrays -> out (T, B, Hr), the last c (LSTM), the gates' activations
    (T, B, G*H; for RNN the output itself), the cells c_t and their tanh(c_t) (LSTM: backward reads them,
    kept rather than computed again) and W_hn h + b_hn (GRU)."""
    xp = xp_of(x)
    T, B, H = x.shape[0], x.shape[1], w_hh.shape[0] // GATES[mode]
    # GRU's b_hn is inside r * (h W_hn^T + b_hn): GRU adds b_hh at each step; the others fold it into the bias here
    bias = None if b_ih is None else b_ih if mode == "GRU" else b_ih + b_hh
    gates = linear_arrays(x, w_ih, bias)  # every step's x W_ih^T + b as one matmul
    out = gates if GATES[mode] == 1 else xp.empty((T, B, h.shape[1]), dtype=x.dtype)
    cells = xp.empty((T, B, H), dtype=x.dtype) if mode == "LSTM" else None
    tanh_c = xp.empty((T, B, H), dtype=x.dtype) if mode == "LSTM" else None
    fast = _step_kernels(gates, h, w_hh)
    hidden_n = xp.empty((T, B, H), dtype=x.dtype) if mode == "GRU" else None
    if fast is not None and w_hr is None and T and _sequence(fast, mode, reverse, gates, h, c, w_hh, b_hh, out, cells,
                                                             tanh_c, hidden_n):
        # (the loop below, in one compiled call)
        return out, cells[0 if reverse else -1] if mode == "LSTM" else c, gates, cells, tanh_c, hidden_n
    for t in _steps(T, reverse):
        a = gates[t]
        if mode == "GRU":  # r, z = sigmoid(.); n = tanh(x W_in^T + b_in + r (h W_hn^T + b_hn)); h = (1 - z) n + z h
            gh = linear_arrays(h, w_hh, b_hh)  # (each step's product is small: one thread, a backend's blocks)
            if fast is not None:  # the lines below in one compiled call
                fast.gru_step(a, gh, h, hidden_n[t], out[t])
                h = out[t]
                continue
            a[:, :2 * H] += gh[:, :2 * H]
            _sigmoid_(a[:, :2 * H])
            r, z, n = a[:, :H], a[:, H:2 * H], a[:, 2 * H:]
            hidden_n[t] = gh[:, 2 * H:]
            n += r * hidden_n[t]
            xp.tanh(n, out=n)
            h = out[t] = n + z * (h - n)
            continue
        if mode == "LSTM" and fast is not None:  # the LSTM step's gate math in one compiled call (as below)
            m = out[t] if w_hr is None else xp.empty((B, H), dtype=x.dtype)
            fast.lstm_step(a, linear_arrays(h, w_hh), c, cells[t], m, tanh_c[t])
            c = cells[t]
            h = m if w_hr is None else xp.matmul(m, w_hr.T, out=out[t])
        elif mode == "LSTM":  # i, f, o = sigmoid(.), g = tanh(.); c = f c + i g; h = o tanh(c) (W_hr^T)
            a += linear_arrays(h, w_hh)
            _sigmoid_(a[:, :2 * H])
            xp.tanh(a[:, 2 * H:3 * H], out=a[:, 2 * H:3 * H])
            _sigmoid_(a[:, 3 * H:])
            i, f, g, o = a[:, :H], a[:, H:2 * H], a[:, 2 * H:3 * H], a[:, 3 * H:]
            c = cells[t] = f * c + i * g
            h = o * xp.tanh(c, out=tanh_c[t])
            h = out[t] = h if w_hr is None else xp.matmul(h, w_hr.T)
        elif fast is not None:  # the lines below in one compiled call
            fast.rnn_step(a, linear_arrays(h, w_hh), mode == "RNN_RELU")
            h = a
        else:
            a += linear_arrays(h, w_hh)
            h = xp.tanh(a, out=a) if mode == "RNN_TANH" else xp.maximum(a, 0, out=a)
    return out, c, gates, cells, tanh_c, hidden_n


def _save(ctx, mode, reverse, x, h0, c0, w_ih, w_hh, w_hr, gates, cells, tanh_c, hidden_n):
    """Save what backward reads (the output is saved as the op's result); arguments 0-6 are (x, h0, c0,
    w_ih, w_hh, b_ih, b_hh) in both the layer and the cell."""
    # x and W_ih whether or not a first gradient needs them: a second one (create_graph) runs the forward again
    ctx.save(input=x, hx=h0, cx=c0, weight_ih=w_ih, weight_hh=w_hh, weight_hr=w_hr,
             gates=gates if GATES[mode] > 1 else None, cells=cells, tanh_cells=tanh_c, hidden_n=hidden_n)
    ctx.mode, ctx.reverse = mode, reverse


def _double_backward(ctx, run, n_inputs, outs_grads):
    """create_graph: the forward again as the reference's recorded ops from the saved inputs (x, h0, c0,
    w_ih, w_hh, b_ih, b_hh[, w_hr]), differentiated with the incoming gradients, as attention's."""
    x, h0, c0, w_ih, w_hh, w_hr = ctx.saved_tensors[:6]
    inputs = (x, h0, c0, w_ih, w_hh, *ctx.biases, w_hr)[:n_inputs]
    needs = ctx.needs_input_grad[:n_inputs]
    with minigrad.enable_grad():
        outs = run(*inputs)
    pairs = [(o, g) for o, g in zip(outs, outs_grads) if o is not None and g is not None]
    wanted = [t for t, need in zip(inputs, needs) if need]
    grads = iter(minigrad.autograd.grad([o for o, _ in pairs], wanted, [g for _, g in pairs], create_graph=True,
                                        allow_unused=True) if pairs else [None] * len(wanted))
    return tuple(next(grads) if need else None for need in needs)


def _saved_arrays(ctx):
    """What `_save` saved, and the output, as arrays."""
    return [None if s is None else s.array for s in ctx.saved_tensors]


def _backward(saved, mode, reverse, needs, g_out, g_h, g_c):
    """Backpropagation through time on arrays: g_out (T, B, Hr) the output's gradient, g_h and g_c the
    last states' (each or None: an output nothing used), `saved` what _save saved and the output, `needs` the node's needs_input_grad ->
    the gradients of x, h0, c0, w_ih, w_hh, b_ih, b_hh, w_hr (None if unneeded)."""
    x, h0, c0, w_ih, w_hh, w_hr, gates, cells, tanh_c, hidden_n, out = saved
    xp = xp_of(gates)
    if g_out is not None:
        out = out.reshape(g_out.shape)  # (a cell's output is (B, Hr); its g_out (1, B, Hr))
    gates = out if gates is None else gates  # (an RNN's activations are its output)
    T, H = gates.shape[0], w_hh.shape[0] // GATES[mode]
    # the gradient of each step's pre-activations (GRU: of x W_ih^T + b_ih), and of h W_hh^T + b_hh (GRU's n
    # part: r da_n): read only by the weights' products below, so the thread's scratch, whose pages stay
    # mapped (a new array of a few MB each step is freed at its end, glibc trims the heap and the next
    # step faults every page in again)
    da = scratch_like("rnn_da", gates.shape, gates.dtype, xp)
    dah = scratch_like("rnn_dah", gates.shape, gates.dtype, xp) if mode == "GRU" else da
    dhs = xp.empty_like(out) if w_hr is not None else None  # dL/dh_t, for W_hr's gradient
    dh = xp.zeros_like(h0) if g_h is None else g_h.copy()
    dc = None if mode != "LSTM" else xp.zeros_like(c0) if g_c is None else g_c.copy()
    fast = _step_kernels(gates, h0, dh, w_hh)
    steps = list(_steps(T, reverse))
    # (an unused output's gradient: no steps of it, which the compiled loop then adds none of; not (T, B, Hr) zeros)
    if fast is not None and w_hr is None and T and _sequence_backward(
            fast, mode, reverse, gates, out, h0, c0, tanh_c, cells, hidden_n, out[:0] if g_out is None else g_out, dh,
            dc, da, dah, w_hh):
        steps = []  # (the loop below ran in one compiled call)
    for k in range(len(steps) - 1, -1, -1):
        t, prev = steps[k], steps[k - 1] if k else None
        if g_out is not None:
            dh += g_out[t]
        a, d = gates[t], da[t]
        if mode == "LSTM":
            i, f, g, o = a[:, :H], a[:, H:2 * H], a[:, 2 * H:3 * H], a[:, 3 * H:]
            if w_hr is not None:  # h = m W_hr^T:  dm = dh W_hr
                dhs[t] = dh
                dh = xp.matmul(dh, w_hr)
            tc = tanh_c[t]
            if fast is not None:  # the lines below in one compiled call
                fast.lstm_step_backward(a, tc, c0 if prev is None else cells[prev], dh, dc, d)
                dh = xp.matmul(d, w_hh)
                continue
            dc += dh * o * (1 - tc * tc)  # m = o tanh(c):  dc += dm o (1 - tanh^2 c)
            d[:, 3 * H:] = dh * tc * o * (1 - o)  # do = dm tanh(c), through o = sigmoid
            d[:, :H] = dc * g * i * (1 - i)  # di = dc g
            d[:, H:2 * H] = dc * (c0 if prev is None else cells[prev]) * f * (1 - f)  # df = dc c_{t-1}
            d[:, 2 * H:3 * H] = dc * i * (1 - g * g)  # dg = dc i, through g = tanh
            dc *= f  # dc_{t-1} = dc f
            dh = xp.matmul(d, w_hh)  # dh_{t-1} = d W_hh
        elif mode == "GRU":
            r, z, n = a[:, :H], a[:, H:2 * H], a[:, 2 * H:]
            h_prev = h0 if prev is None else out[prev]
            if fast is not None:  # the lines below in one compiled call
                fast.gru_step_backward(a, hidden_n[t], h_prev, dh, d, dah[t])
                dh += xp.matmul(dah[t], w_hh)
                continue
            d[:, 2 * H:] = dh * (1 - z) * (1 - n * n)  # dn = dh (1 - z), through n = tanh
            d[:, :H] = d[:, 2 * H:] * hidden_n[t] * r * (1 - r)  # dr = dn (h W_hn^T + b_hn)
            d[:, H:2 * H] = dh * (h_prev - n) * z * (1 - z)  # dz = dh (h_{t-1} - n)
            dah[t, :, :2 * H] = d[:, :2 * H]
            dah[t, :, 2 * H:] = d[:, 2 * H:] * r  # the hidden side's n gate is scaled by r
            dh = dh * z + xp.matmul(dah[t], w_hh)  # dh_{t-1} = dh z + dah W_hh
        else:
            h = out[t]
            if fast is not None:  # the line below in one compiled call
                fast.rnn_step_backward(h, dh, d, mode == "RNN_RELU")
            else:
                xp.multiply(dh, (1 - h * h) if mode == "RNN_TANH" else (h > 0), out=d)  # tanh' = 1 - h^2, relu' = [h > 0]
            dh = xp.matmul(d, w_hh)
    # the weights' gradients: one matmul each over all the steps (W_hh's: h_{t-1} is h0 at the first step)
    first, rest, before = (T - 1, slice(0, T - 1), slice(1, T)) if reverse else (0, slice(1, T), slice(0, T - 1))
    gx = xp.matmul(_2d(da), w_ih).reshape(da.shape[:2] + (w_ih.shape[1],)) if needs[0] else None
    gw_ih = matmul_arrays(_2d(da).T, _2d(x)) if needs[3] else None  # dW_ih = sum_t da_t^T x_t
    gw_hh = None
    if needs[4]:  # dW_hh = sum_t dah_t^T h_{t-1}
        gw_hh = matmul_arrays(dah[first].T, h0)  # (a batch of one: an outer product)
        if T > 1:
            gw_hh += matmul_arrays(_2d(dah[rest]).T, _2d(out[before]))
    gb_ih = da.sum(axis=(0, 1)) if needs[5] else None
    gb_hh = None
    if needs[6]:
        # all but a GRU's: both biases' gradient is the same sum over every step's gates, made once
        # (copied: each parameter's gradient a tensor of its own, which a hook may write into)
        gb_hh = gb_ih.copy() if dah is da and gb_ih is not None else dah.sum(axis=(0, 1))
    gw_hr = None
    if w_hr is not None and needs[7]:  # dW_hr = sum_t dh_t^T m_t, m = o tanh(c)
        gw_hr = matmul_arrays(_2d(dhs).T, _2d(gates[:, :, 3 * H:] * tanh_c))
    return gx, dh if needs[1] else None, dc if needs[2] else None, gw_ih, gw_hh, gb_ih, gb_hh, gw_hr


def _array(t):
    return None if t is None else t.array


class RNNLayer(Function):
    """One recurrent layer in one direction over a whole sequence: (x, h0, c0, weights) -> (out, h_T[, c_T])."""

    node_name = "MkldnnRnnLayerBackward0"
    saves_result = True  # the output: h_{t-1} of every step

    @staticmethod
    def forward(ctx, x, h0, c0, w_ih, w_hh, b_ih, b_hh, w_hr, mode, reverse):
        ctx.set_materialize_grads(False)  # (a classifier reads h_T only: no (T, B, Hr) zeros for the output's)
        out, c, gates, cells, tanh_c, hidden_n = _forward(mode, reverse, x.array, h0.array, _array(c0), w_ih.array,
                                                          w_hh.array, _array(b_ih), _array(b_hh), _array(w_hr))
        _save(ctx, mode, reverse, x, h0, c0, w_ih, w_hh, w_hr, gates, cells, tanh_c, hidden_n)
        ctx.biases = (b_ih, b_hh)  # (read by double_backward only)
        h = out[0 if reverse else -1].copy()  # (a copy: each output owns its memory)
        return (out, h, c) if mode == "LSTM" else (out, h)

    @staticmethod
    @once_differentiable
    def backward(ctx, g_out, g_h, g_c=None):
        return (*map(wrap, _backward(_saved_arrays(ctx), ctx.mode, ctx.reverse, ctx.needs_input_grad, _array(g_out),
                                     _array(g_h), _array(g_c))), None, None)

    @staticmethod
    def double_backward(ctx, g_out, g_h, g_c=None):
        def run(*inputs):
            return reference.rnn_layer(ctx.mode, *inputs, reverse=ctx.reverse)
        return _double_backward(ctx, run, 8, (g_out, g_h, g_c)) + (None, None)


class _CellStep(Function):
    """One step of a cell: (x (B, I), h, c, weights, mode) -> h' (and c' for LSTM)."""

    saves_result = True

    @staticmethod
    def forward(ctx, x, h, c, w_ih, w_hh, b_ih, b_hh, mode):
        out, c1, gates, cells, tanh_c, hidden_n = _forward(mode, False, x.array[None], h.array, _array(c), w_ih.array,
                                                           w_hh.array, _array(b_ih), _array(b_hh), None)
        _save(ctx, mode, False, x, h, c, w_ih, w_hh, None, gates, cells, tanh_c, hidden_n)
        ctx.biases = (b_ih, b_hh)  # (read by double_backward only)
        return (out[0], c1) if mode == "LSTM" else out[0]

    @staticmethod
    @once_differentiable
    def backward(ctx, g_h, g_c=None):
        gx, *rest = _backward(_saved_arrays(ctx), ctx.mode, False, ctx.needs_input_grad, g_h.array[None], None,
                              _array(g_c))
        return (wrap(None if gx is None else gx[0]), *map(wrap, rest[:-1]), None)

    @staticmethod
    def double_backward(ctx, g_h, g_c=None):
        def run(*inputs):
            return reference.rnn_cell(ctx.mode, *inputs)
        return _double_backward(ctx, run, 7, (g_h, g_c)) + (None,)

    @staticmethod
    def array_step(needs, x, h, c, w_ih, w_hh, b_ih, b_hh, mode):
        # (the arrays come for the tensor arguments only: c is an LSTM's, the biases may be None)
        present = [a is not None for a in (x, h, c, w_ih, w_hh, b_ih, b_hh)]

        def arguments(arrays):
            it = iter(arrays)
            return [next(it) if p else None for p in present]

        def forward(*arrays):
            x, h, c, w_ih, w_hh, b_ih, b_hh = arguments(arrays)
            out, c1, gates, cells, tanh_c, hidden_n = _forward(mode, False, x[None], h, c, w_ih, w_hh, b_ih, b_hh, None)
            # what _save keeps (x for W_ih's gradient, W_ih for x's), and the output
            saved = (x if needs[3] else None, h, c, w_ih if needs[0] else None, w_hh, None,
                     gates if GATES[mode] > 1 else None, cells, tanh_c, hidden_n, out[0])
            return ((out[0], c1) if mode == "LSTM" else out[0]), saved

        def backward(saved, g_h, g_c=None):
            gx, *rest = _backward(saved, mode, False, needs, g_h[None], None, g_c)
            grads = (None if gx is None else gx[0], *rest[:-1])
            return tuple([g for g, p in zip(grads, present) if p])

        return forward, backward


class RNNTanhCell(_CellStep):
    node_name = "RnnTanhCellBackward0"


class RNNReluCell(_CellStep):
    node_name = "RnnReluCellBackward0"


class LSTMCell(_CellStep):
    node_name = "ThnnFusedLstmCellBackward0"


class GRUCell(_CellStep):
    node_name = "ThnnFusedGruCellBackward0"


_CELLS = {"RNN_TANH": RNNTanhCell, "RNN_RELU": RNNReluCell, "LSTM": LSTMCell, "GRU": GRUCell}


def _same_dtype(weight, *tensors):
    """PyTorch's text (its matmul's) for an input, a state or a weight of another dtype than the weights."""
    for t in tensors:
        if t is not None and t.dtype != weight.dtype:
            raise RuntimeError(f"mat1 and mat2 must have the same dtype, but got {t.dtype._legacy[:-6]} and "
                               f"{weight.dtype._legacy[:-6]}")


def rnn_layer(mode, input, hx, cx, w_ih, w_hh, b_ih=None, b_hh=None, w_hr=None, reverse=False):
    """One layer in one direction: input (T, B, I), hx (B, Hr), cx (B, H) or None -> (output (T, B, Hr),
    h_T (B, Hr), c_T (B, H) or None). One MkldnnRnnLayerBackward0 node (the reference under
    MINIGRAD_KERNELS=reference)."""
    return backends.pick(_rnn_layer, reference.rnn_layer)(mode, input, hx, cx, w_ih, w_hh, b_ih, b_hh, w_hr, reverse)


def _rnn_layer(mode, input, hx, cx, w_ih, w_hh, b_ih, b_hh, w_hr, reverse):
    outs = RNNLayer.apply(input, hx, cx, w_ih, w_hh, b_ih, b_hh, w_hr, mode, reverse)
    return outs if mode == "LSTM" else (*outs, None)


def _rnn(mode, input, hx, cx, params, has_biases, num_layers, dropout, train, bidirectional, batch_first):
    """The layers stacked, each direction one rnn_layer, dropout between layers in training -> (output, h_n, c_n)."""
    check_tensor(input, "input", mode.lower())
    D = 2 if bidirectional else 1
    per = len(params) // (num_layers * D)  # weights per layer and direction: 2 or 4, one more with W_hr
    _same_dtype(params[0], input, hx, cx, *params)
    x = input.transpose(0, 1) if batch_first else input
    if x.shape[0] == 0:
        raise RuntimeError("Expected sequence length to be larger than 0 in RNN")
    hs, cs = hx.unbind(0), (cx.unbind(0) if cx is not None else None)
    h_n, c_n = [], []
    for layer in range(num_layers):
        outs = []
        for d in range(D):
            k = layer * D + d
            w = params[k * per:(k + 1) * per]
            b_ih, b_hh = (w[2], w[3]) if has_biases else (None, None)
            w_hr = w[-1] if per == (5 if has_biases else 3) else None
            out, h, c = rnn_layer(mode, x, hs[k], None if cs is None else cs[k], w[0], w[1], b_ih, b_hh, w_hr,
                                  reverse=d == 1)
            outs.append(out)
            h_n.append(h)
            c_n.append(c)
        x = outs[0] if D == 1 else minigrad.cat(outs, -1)
        if dropout and train and layer < num_layers - 1:
            x = backends.pick(_dropout, reference.dropout)(x, dropout, True)
    if batch_first:
        x = x.transpose(0, 1)
        if mode != "LSTM" and x.grad_fn is not None:
            # PyTorch's GRU and RNN kernels turn their output around in place (TransposeBackward1, where its
            # LSTM's is a fresh view); the last layer saved this output, so here it is a view named so
            _rename_inplace_node(x.grad_fn)
    return x, minigrad.stack(h_n), (minigrad.stack(c_n) if cx is not None else None)


def rnn_tanh(input, hx, params, has_biases, num_layers, dropout, train, bidirectional, batch_first):
    """An Elman RNN with tanh (torch.rnn_tanh): input (T, B, I) or (B, T, I) with batch_first, hx
    (num_layers * D, B, H), params per layer and direction (w_ih, w_hh[, b_ih, b_hh]) -> (output, h_n)."""
    return _rnn("RNN_TANH", input, hx, None, params, has_biases, num_layers, dropout, train, bidirectional,
                batch_first)[:2]


def rnn_relu(input, hx, params, has_biases, num_layers, dropout, train, bidirectional, batch_first):
    """rnn_tanh with relu (torch.rnn_relu)."""
    return _rnn("RNN_RELU", input, hx, None, params, has_biases, num_layers, dropout, train, bidirectional,
                batch_first)[:2]


def gru(input, hx, params, has_biases, num_layers, dropout, train, bidirectional, batch_first):
    """A GRU (torch.gru): the shapes of rnn_tanh -> (output, h_n)."""
    return _rnn("GRU", input, hx, None, params, has_biases, num_layers, dropout, train, bidirectional,
                batch_first)[:2]


def lstm(input, hx, params, has_biases, num_layers, dropout, train, bidirectional, batch_first):
    """An LSTM (torch.lstm): hx = (h_0 (num_layers * D, B, Hr), c_0 (num_layers * D, B, H)); params per layer
    and direction (w_ih, w_hh[, b_ih, b_hh][, w_hr]) -> (output, h_n, c_n)."""
    return _rnn("LSTM", input, hx[0], hx[1], params, has_biases, num_layers, dropout, train, bidirectional,
                batch_first)


def _cell(mode, input, hx, cx, w_ih, w_hh, b_ih, b_hh):
    """A cell step on input (B, I) and hx (B, H) (cx too for LSTM), with PyTorch's checks and texts."""
    check_tensor(input, "input", mode.lower() + "_cell")
    if input.shape[1] != w_ih.shape[1]:
        raise RuntimeError(f"input has inconsistent input_size: got {input.shape[1]} expected {w_ih.shape[1]}")
    for n, state in enumerate((hx, cx) if mode == "LSTM" else (hx,)):
        if input.shape[0] != state.shape[0]:
            raise RuntimeError(f"Input batch size {input.shape[0]} doesn't match hidden{n} batch size {state.shape[0]}")
        if state.shape[1] != w_hh.shape[1]:
            raise RuntimeError(f"hidden{n} has inconsistent hidden_size: got {state.shape[1]}, expected "
                               f"{w_hh.shape[1]}")
    _same_dtype(w_ih, input, hx, cx, w_hh, b_ih, b_hh)
    return backends.pick(_CELLS[mode].apply, _cell_reference)(input, hx, cx, w_ih, w_hh, b_ih, b_hh, mode)


def _cell_reference(input, hx, cx, w_ih, w_hh, b_ih, b_hh, mode):
    h, c = reference.rnn_cell(mode, input, hx, cx, w_ih, w_hh, b_ih, b_hh)
    return (h, c) if mode == "LSTM" else h


def rnn_tanh_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    """h' = tanh(input W_ih^T + b_ih + hx W_hh^T + b_hh): input (B, I), hx (B, H) -> (B, H). One node."""
    return _cell("RNN_TANH", input, hx, None, w_ih, w_hh, b_ih, b_hh)


def rnn_relu_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    """rnn_tanh_cell with relu."""
    return _cell("RNN_RELU", input, hx, None, w_ih, w_hh, b_ih, b_hh)


def lstm_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    """One LSTM step: input (B, I), hx = (h (B, H), c (B, H)) -> (h', c'); gates i, f, g, o. One node."""
    return _cell("LSTM", input, hx[0], hx[1], w_ih, w_hh, b_ih, b_hh)


def gru_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    """One GRU step: input (B, I), hx (B, H) -> h'; gates r, z, n. One node."""
    return _cell("GRU", input, hx, None, w_ih, w_hh, b_ih, b_hh)
