"""Recurrent layers RNN, LSTM, GRU and the cells RNNCell, LSTMCell, GRUCell, as torch.nn's: the same
parameter names (weight_ih_l0, ..._reverse, weight_hr_l0), gate order, init, shapes and error texts.
Each layer and direction of a sequence is one fused node (nn/_functional/rnn.py). A PackedSequence
input (nn/utils/rnn.py) runs the same fused op once per run of steps with one batch size (RNNBase._packed)."""
import math
import numbers
import warnings

import minigrad

from .._functional import rnn as R
from .. import functional as F
from .. import init
from ..module import Module
from ..parameter import Parameter
from ..utils.rnn import PackedSequence, _runs

_NAMES = {"RNN_TANH": "RNN", "RNN_RELU": "RNN", "LSTM": "LSTM", "GRU": "GRU"}


class RNNBase(Module):
    """The parameters and checks every recurrent layer shares; mode 'RNN_TANH', 'RNN_RELU', 'LSTM' or 'GRU'.

    Per layer l and direction (suffix '_reverse' for the backward one): weight_ih_l{l} (G*hidden_size,
    input_size for l = 0 else D*H_out), weight_hh_l{l} (G*hidden_size, H_out), bias_ih_l{l} and
    bias_hh_l{l} (G*hidden_size,), and for an LSTM with proj_size > 0 weight_hr_l{l} (proj_size,
    hidden_size); G = 1, 4 (i, f, g, o) or 3 (r, z, n), H_out = proj_size or hidden_size, D = 2 if
    bidirectional else 1. Init: every parameter U(-1/sqrt(hidden_size), 1/sqrt(hidden_size)).
    """

    def __init__(self, mode, input_size, hidden_size, num_layers=1, bias=True, batch_first=False, dropout=0.0,
                 bidirectional=False, proj_size=0, device=None, dtype=None):
        super().__init__()
        if mode not in R.GATES:
            raise ValueError("Unrecognized RNN mode: " + mode)
        if not isinstance(dropout, numbers.Number) or isinstance(dropout, bool) or not 0 <= dropout <= 1:
            raise ValueError("dropout should be a number in range [0, 1] representing the probability of an "
                             "element being zeroed")
        if dropout > 0 and num_layers == 1:
            warnings.warn("dropout option adds dropout after all but last recurrent layer, so non-zero dropout "
                          f"expects num_layers greater than 1, but got dropout={dropout} and num_layers={num_layers}",
                          stacklevel=2)
        if not isinstance(bias, bool):
            raise TypeError(f"bias should be of type bool, got: {type(bias).__name__}")
        if not isinstance(batch_first, bool):
            raise TypeError(f"batch_first should be of type bool, got: {type(batch_first).__name__}")
        if not isinstance(input_size, int):
            raise TypeError(f"input_size should be of type int, got: {type(input_size).__name__}")
        if input_size <= 0:
            raise ValueError("input_size must be greater than zero")
        if not isinstance(hidden_size, int):
            raise TypeError(f"hidden_size should be of type int, got: {type(hidden_size).__name__}")
        if hidden_size <= 0:
            raise ValueError("hidden_size must be greater than zero")
        if num_layers <= 0:
            raise ValueError("num_layers must be greater than zero")
        if proj_size < 0:
            raise ValueError("proj_size should be a positive integer or zero to disable projections")
        if proj_size >= hidden_size:
            raise ValueError("proj_size has to be smaller than hidden_size")
        self.mode, self.input_size, self.hidden_size, self.num_layers = mode, input_size, hidden_size, num_layers
        self.bias, self.batch_first, self.dropout = bias, batch_first, float(dropout)
        self.bidirectional, self.proj_size = bidirectional, proj_size
        gate_size, h_out, D = R.GATES[mode] * hidden_size, proj_size or hidden_size, 2 if bidirectional else 1
        self._flat_weights_names, self._all_weights = [], []
        for layer in range(num_layers):
            for d in range(D):
                shapes = [(gate_size, input_size if layer == 0 else h_out * D), (gate_size, h_out)]
                names = ["weight_ih_l{}{}", "weight_hh_l{}{}"]
                if bias:
                    shapes += [(gate_size,), (gate_size,)]
                    names += ["bias_ih_l{}{}", "bias_hh_l{}{}"]
                if proj_size:
                    shapes.append((proj_size, hidden_size))
                    names.append("weight_hr_l{}{}")
                names = [n.format(layer, "_reverse" if d else "") for n in names]
                for name, shape in zip(names, shapes):
                    setattr(self, name, Parameter(minigrad.empty(*shape, device=device, dtype=dtype)))
                self._flat_weights_names += names
                self._all_weights.append(names)
        self.reset_parameters()

    def reset_parameters(self):
        stdv = 1.0 / math.sqrt(self.hidden_size)
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def flatten_parameters(self):
        """A no-op: PyTorch packs the weights into one buffer for cuDNN; here each stays its own array."""

    @property
    def _flat_weights(self):
        return [getattr(self, name) for name in self._flat_weights_names]

    @property
    def all_weights(self):
        """The parameters, one list per layer and direction (in the order of their names)."""
        return [[getattr(self, name) for name in names] for names in self._all_weights]

    # ---- PyTorch's checks and texts ------------------------------------------------------------
    def check_input(self, input, batch_sizes=None):
        w = self._flat_weights[0]
        if input.dtype != w.dtype:
            raise ValueError(f"RNN input dtype ({input.dtype}) does not match weight dtype ({w.dtype}). Convert "
                             f"input: input.to({w.dtype}), or convert model: model.to({input.dtype})")
        dims = 3 if batch_sizes is None else 2  # (a packed batch's data is (sum of the lengths, H_in))
        if input.dim() != dims:
            raise RuntimeError(f"input must have {dims} dimensions, got {input.dim()}")
        if self.input_size != input.size(-1):
            raise RuntimeError(f"input.size(-1) must be equal to input_size. Expected {self.input_size}, "
                               f"got {input.size(-1)}")

    def get_expected_hidden_size(self, input, batch_sizes=None):
        batch = _batch_size(self, input, batch_sizes)
        return (self.num_layers * (2 if self.bidirectional else 1), batch, self.proj_size or self.hidden_size)

    def check_hidden_size(self, hx, expected_hidden_size, msg="Expected hidden size {}, got {}"):
        if tuple(hx.shape) != expected_hidden_size:
            raise RuntimeError(msg.format(expected_hidden_size, list(hx.shape)))

    def check_forward_args(self, input, hidden, batch_sizes=None):
        self.check_input(input, batch_sizes)
        self.check_hidden_size(hidden, self.get_expected_hidden_size(input, batch_sizes))

    def _batched(self, input):
        """input as 3-D, and whether it was (2-D input is one unbatched sequence)."""
        if not isinstance(input, minigrad.Tensor):
            raise TypeError(f"{_NAMES[self.mode]}: expected a minigrad Tensor as input, got {type(input).__name__}")
        if input.dim() not in (2, 3):
            tensor = " tensor" if _NAMES[self.mode] == "RNN" else ""  # (PyTorch's RNN text has the word)
            raise ValueError(f"{_NAMES[self.mode]}: Expected input to be 2D or 3D, got {input.dim()}D{tensor} instead")
        if input.dim() == 3:
            return input, True
        return input.unsqueeze(0 if self.batch_first else 1), False

    def _zeros(self, input, size):
        batch = input.size(0) if self.batch_first else input.size(1)
        return minigrad.zeros(self.num_layers * (2 if self.bidirectional else 1), batch, size, dtype=input.dtype,
                              device=input.device)

    def forward(self, input, hx=None):
        """RNN and GRU: input (L, N, H_in) ((N, L, H_in) with batch_first, (L, H_in) unbatched), hx (D*num_layers,
        N, H) or None (zeros) -> (output (L, N, D*H), h_n (D*num_layers, N, H)), unbatched without N.
        A PackedSequence input gives a PackedSequence output (see _packed)."""
        if isinstance(input, PackedSequence):
            output, h_n, _ = self._packed(input, hx, None)
            return output, h_n
        input, batched = self._batched(input)
        if hx is not None:
            if batched and hx.dim() != 3:
                raise RuntimeError(f"For batched 3-D input, hx should also be 3-D but got {hx.dim()}-D tensor")
            if not batched:
                if hx.dim() != 2:
                    raise RuntimeError(f"For unbatched 2-D input, hx should also be 2-D but got {hx.dim()}-D tensor")
                hx = hx.unsqueeze(1)
        else:
            hx = self._zeros(input, self.hidden_size)
        self.check_forward_args(input, hx)
        run = {"RNN_TANH": R.rnn_tanh, "RNN_RELU": R.rnn_relu, "GRU": R.gru}[self.mode]
        output, h_n = run(input, hx, self._flat_weights, self.bias, self.num_layers, self.dropout, self.training,
                          self.bidirectional, self.batch_first)
        if not batched:
            return output.squeeze(0 if self.batch_first else 1), h_n.squeeze(1)
        return output, h_n

    # ---- PackedSequence input ------------------------------------------------------------------
    def _packed(self, input, hx, cx):
        """A PackedSequence through the layers -> (PackedSequence output, h_n, c_n or None). hx and cx (or
        None: zeros) and the returned states are in the original batch order; inside, the batch is sorted by
        decreasing length, as the packed data is."""
        data, batch_sizes, sorted_indices, unsorted_indices = input
        lstm, states = self.mode == "LSTM", 2 if self.bidirectional else 1
        batch = int(batch_sizes[0])
        if hx is None:
            zeros = lambda size: minigrad.zeros(self.num_layers * states, batch, size, dtype=data.dtype,
                                                device=data.device)
            hx, cx = zeros(self.proj_size or self.hidden_size), zeros(self.hidden_size) if lstm else None
        elif sorted_indices is not None:  # the states come in the original order: sort them as the data is
            hx, cx = hx.index_select(1, sorted_indices), cx if cx is None else cx.index_select(1, sorted_indices)
        self.check_forward_args(data, (hx, cx) if lstm else hx, batch_sizes)
        output, h_n, c_n = self._packed_layers(data, _runs([int(b) for b in batch_sizes.tolist()]), hx, cx)
        if unsorted_indices is not None:
            h_n = h_n.index_select(1, unsorted_indices)
            c_n = c_n if c_n is None else c_n.index_select(1, unsorted_indices)
        return PackedSequence(output, batch_sizes, sorted_indices, unsorted_indices), h_n, c_n

    def _packed_layers(self, x, runs, hx, cx):
        """The layers stacked over packed data x (N, H_in) and sorted states -> (output (N, D*H_out), h_n, c_n),
        dropout between layers in training, as the unpacked path."""
        D = 2 if self.bidirectional else 1
        h_n, c_n = [], []
        for layer in range(self.num_layers):
            outs = []
            for d in range(D):
                k = layer * D + d
                out, h, c = self._packed_layer(x, runs, hx[k], None if cx is None else cx[k], k, reverse=d == 1)
                outs.append(out)
                h_n.append(h)
                c_n.append(c)
            x = outs[0] if D == 1 else minigrad.cat(outs, -1)
            if self.dropout and self.training and layer < self.num_layers - 1:
                x = F.dropout(x, self.dropout, True)
        return x, minigrad.stack(h_n), None if cx is None else minigrad.stack(c_n)

    def _packed_layer(self, x, runs, h, c, k, reverse):
        """Layer-and-direction k over packed data x (N, I) -> (output (N, H_out), h_n (B, H_out), c_n or None).

        Each run of steps with one batch size b is one fused call on its (steps, b, I) block of x, starting from
        the first b rows of the states; the other rows wait: forwards they are sequences that have ended (their
        state is final), backwards (runs in reverse, b growing) sequences not begun (their state is the initial
        one). So every sequence's h_n is the state at its own last step (its first, in reverse)."""
        names = self._all_weights[k]
        w_ih, w_hh = getattr(self, names[0]), getattr(self, names[1])
        b_ih, b_hh = (getattr(self, names[2]), getattr(self, names[3])) if self.bias else (None, None)
        w_hr = getattr(self, names[-1]) if self.proj_size else None
        outs = []
        for steps, b, row in (reversed(runs) if reverse else runs):
            block = x[row:row + steps * b].reshape(steps, b, x.size(1))
            out, h_b, c_b = R.rnn_layer(self.mode, block, h[:b], None if c is None else c[:b], w_ih, w_hh, b_ih,
                                        b_hh, w_hr, reverse=reverse)
            outs.append(out.reshape(steps * b, out.size(2)))
            h = h_b if b == h.size(0) else minigrad.cat([h_b, h[b:]])
            c = c_b if c is None or b == c.size(0) else minigrad.cat([c_b, c[b:]])
        if reverse:
            outs.reverse()  # back in time order
        return outs[0] if len(outs) == 1 else minigrad.cat(outs), h, c

    def extra_repr(self):
        s = f"{self.input_size}, {self.hidden_size}"
        if self.proj_size != 0:
            s += f", proj_size={self.proj_size}"
        if self.num_layers != 1:
            s += f", num_layers={self.num_layers}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        if self.batch_first is not False:
            s += f", batch_first={self.batch_first}"
        if self.dropout != 0:
            s += f", dropout={self.dropout}"
        if self.bidirectional is not False:
            s += f", bidirectional={self.bidirectional}"
        return s


def _batch_size(module, input, batch_sizes):
    """The batch size N: of a packed batch, its first step's; else from input's shape."""
    if batch_sizes is not None:
        return int(batch_sizes[0])
    return input.size(0) if module.batch_first else input.size(1)


def _no_proj(kwargs):
    if "proj_size" in kwargs:
        raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
    if kwargs:
        raise TypeError(f"__init__() got an unexpected keyword argument '{next(iter(kwargs))}'")


class RNN(RNNBase):
    """An Elman RNN: h_t = tanh(x_t W_ih^T + b_ih + h_{t-1} W_hh^T + b_hh) (relu with nonlinearity='relu'),
    over num_layers layers (dropout between them in training), both ways if bidirectional.
    Returns (output, h_n); see RNNBase.forward for the shapes."""

    def __init__(self, input_size, hidden_size, num_layers=1, nonlinearity="tanh", bias=True, batch_first=False,
                 dropout=0.0, bidirectional=False, device=None, dtype=None, **kwargs):
        _no_proj(kwargs)
        if nonlinearity not in ("tanh", "relu"):
            raise ValueError(f"Unknown nonlinearity '{nonlinearity}'. Select from 'tanh' or 'relu'.")
        super().__init__("RNN_TANH" if nonlinearity == "tanh" else "RNN_RELU", input_size, hidden_size, num_layers,
                         bias, batch_first, dropout, bidirectional, device=device, dtype=dtype)
        self.nonlinearity = nonlinearity


class GRU(RNNBase):
    """A GRU: r = sigmoid(W_ir x + b_ir + W_hr h + b_hr), z likewise, n = tanh(W_in x + b_in + r (W_hn h + b_hn)),
    h' = (1 - z) n + z h, with the gates in weight_ih/weight_hh in the order r, z, n. Returns (output, h_n)."""

    def __init__(self, input_size, hidden_size, num_layers=1, bias=True, batch_first=False, dropout=0.0,
                 bidirectional=False, device=None, dtype=None, **kwargs):
        _no_proj(kwargs)
        super().__init__("GRU", input_size, hidden_size, num_layers, bias, batch_first, dropout, bidirectional,
                         device=device, dtype=dtype)


class LSTM(RNNBase):
    """An LSTM: i, f, g, o = sigmoid, sigmoid, tanh, sigmoid of (x W_ih^T + b_ih + h W_hh^T + b_hh) in that
    order, c' = f c + i g, h' = o tanh(c') (times W_hr^T when proj_size > 0).

    forward(input, (h_0, c_0) or None) -> (output (L, N, D*H_out), (h_n (D*num_layers, N, H_out), c_n
    (D*num_layers, N, hidden_size))), H_out = proj_size or hidden_size; unbatched (L, H_in) input without N."""

    def __init__(self, input_size, hidden_size, num_layers=1, bias=True, batch_first=False, dropout=0.0,
                 bidirectional=False, proj_size=0, device=None, dtype=None):
        super().__init__("LSTM", input_size, hidden_size, num_layers, bias, batch_first, dropout, bidirectional,
                         proj_size, device, dtype)

    def get_expected_cell_size(self, input, batch_sizes=None):
        batch = _batch_size(self, input, batch_sizes)
        return (self.num_layers * (2 if self.bidirectional else 1), batch, self.hidden_size)

    def check_forward_args(self, input, hidden, batch_sizes=None):
        self.check_input(input, batch_sizes)
        self.check_hidden_size(hidden[0], self.get_expected_hidden_size(input, batch_sizes),
                               "Expected hidden[0] size {}, got {}")
        self.check_hidden_size(hidden[1], self.get_expected_cell_size(input, batch_sizes),
                               "Expected hidden[1] size {}, got {}")

    def forward(self, input, hx=None):
        if isinstance(input, PackedSequence):
            return self._packed_lstm(input, hx)
        input, batched = self._batched(input)
        if hx is not None:
            if not isinstance(hx, (tuple, list)):
                raise TypeError(f"LSTM: expected hx to be a tuple (h_0, c_0), got {type(hx).__name__}")
            if len(hx) != 2:
                raise RuntimeError("lstm expects two hidden states")
            dims = (hx[0].dim(), hx[1].dim())
            if batched and dims != (3, 3):
                raise RuntimeError(f"For batched 3-D input, hx and cx should also be 3-D but got ({dims[0]}-D, "
                                   f"{dims[1]}-D) tensors")
            if not batched:
                if dims != (2, 2):
                    raise RuntimeError(f"For unbatched 2-D input, hx and cx should also be 2-D but got ({dims[0]}-D, "
                                       f"{dims[1]}-D) tensors")
                hx = (hx[0].unsqueeze(1), hx[1].unsqueeze(1))
        else:
            hx = (self._zeros(input, self.proj_size or self.hidden_size), self._zeros(input, self.hidden_size))
        self.check_forward_args(input, hx)
        output, h_n, c_n = R.lstm(input, hx, self._flat_weights, self.bias, self.num_layers, self.dropout,
                                  self.training, self.bidirectional, self.batch_first)
        if not batched:
            return output.squeeze(0 if self.batch_first else 1), (h_n.squeeze(1), c_n.squeeze(1))
        return output, (h_n, c_n)

    def _packed_lstm(self, input, hx):
        """forward for a PackedSequence input -> (PackedSequence output, (h_n, c_n)); hx as in forward."""
        if hx is not None and not (isinstance(hx, (tuple, list)) and len(hx) == 2):
            raise TypeError(f"LSTM: expected hx to be a tuple (h_0, c_0), got {type(hx).__name__}")
        output, h_n, c_n = self._packed(input, *((None, None) if hx is None else hx))
        return output, (h_n, c_n)


class RNNCellBase(Module):
    """A cell's parameters: weight_ih (G*hidden_size, input_size), weight_hh (G*hidden_size, hidden_size),
    bias_ih and bias_hh (G*hidden_size,) or None; all U(-1/sqrt(hidden_size), 1/sqrt(hidden_size))."""

    def __init__(self, input_size, hidden_size, bias, num_chunks, device=None, dtype=None):
        super().__init__()
        self.input_size, self.hidden_size, self.bias = input_size, hidden_size, bias
        kw = dict(device=device, dtype=dtype)
        self.weight_ih = Parameter(minigrad.empty(num_chunks * hidden_size, input_size, **kw))
        self.weight_hh = Parameter(minigrad.empty(num_chunks * hidden_size, hidden_size, **kw))
        if bias:
            self.bias_ih = Parameter(minigrad.empty(num_chunks * hidden_size, **kw))
            self.bias_hh = Parameter(minigrad.empty(num_chunks * hidden_size, **kw))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    def reset_parameters(self):
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def extra_repr(self):
        s = f"{self.input_size}, {self.hidden_size}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        if getattr(self, "nonlinearity", "tanh") != "tanh":
            s += f", nonlinearity={self.nonlinearity}"
        return s

    def _batched(self, input, hx, what="hidden"):
        """(input as 2-D, hx as 2-D, whether input was batched), with PyTorch's dimension checks."""
        name = self._name
        if not isinstance(input, minigrad.Tensor):
            raise TypeError(f"{name}: expected a minigrad Tensor as input, got {type(input).__name__}")
        if name != "LSTMCell" and hx is not None and not isinstance(hx, minigrad.Tensor):
            raise TypeError(f"{name}: expected hx to be a Tensor, got {type(hx).__name__}")
        if input.dim() not in (1, 2):
            raise ValueError(f"{name}: Expected input to be 1D or 2D, got {input.dim()}D instead")
        states = hx if isinstance(hx, tuple) else (hx,)
        for n, state in enumerate(states):
            if state is not None and state.dim() not in (1, 2):
                label = f"hx[{n}]" if isinstance(hx, tuple) else what
                raise ValueError(f"{name}: Expected {label} to be 1D or 2D, got {state.dim()}D instead")
        batched = input.dim() == 2
        if not batched:
            input = input.unsqueeze(0)
            states = tuple(None if s is None else s.unsqueeze(0) for s in states)
        if states[0] is None:
            states = tuple(minigrad.zeros(input.size(0), self.hidden_size, dtype=input.dtype, device=input.device)
                           for _ in states)
        return input, states, batched


class RNNCell(RNNCellBase):
    """One step h' = tanh(x W_ih^T + b_ih + h W_hh^T + b_hh) (relu with nonlinearity='relu').
    forward(input (N, input_size) or (input_size,), hx (N, hidden_size) or (hidden_size,) or None) -> h'."""

    _name = "RNNCell"

    def __init__(self, input_size, hidden_size, bias=True, nonlinearity="tanh", device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, 1, device, dtype)
        self.nonlinearity = nonlinearity

    def forward(self, input, hx=None):
        input, (hx,), batched = self._batched(input, hx)
        if self.nonlinearity == "tanh":
            h = R.rnn_tanh_cell(input, hx, self.weight_ih, self.weight_hh, self.bias_ih, self.bias_hh)
        elif self.nonlinearity == "relu":
            h = R.rnn_relu_cell(input, hx, self.weight_ih, self.weight_hh, self.bias_ih, self.bias_hh)
        else:
            raise RuntimeError(f"Unknown nonlinearity: {self.nonlinearity}")
        return h if batched else h.squeeze(0)


class LSTMCell(RNNCellBase):
    """One LSTM step (gates i, f, g, o). forward(input (N, input_size) or (input_size,), (h, c) or None)
    -> (h', c'), each (N, hidden_size) or (hidden_size,)."""

    _name = "LSTMCell"

    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, 4, device, dtype)

    def forward(self, input, hx=None):
        if hx is not None and not isinstance(hx, (tuple, list)):  # (a Tensor would unpack along its first dim)
            raise TypeError(f"lstm_cell(): argument 'hx' (position 2) must be tuple of Tensors, not "
                            f"{type(hx).__name__}")
        if hx is not None and len(hx) != 2:
            raise RuntimeError("lstm_cell expects two hidden states")
        input, (h, c), batched = self._batched(input, (None, None) if hx is None else tuple(hx))
        h, c = R.lstm_cell(input, (h, c), self.weight_ih, self.weight_hh, self.bias_ih, self.bias_hh)
        return (h, c) if batched else (h.squeeze(0), c.squeeze(0))


class GRUCell(RNNCellBase):
    """One GRU step (gates r, z, n). forward(input (N, input_size) or (input_size,), hx or None) -> h'."""

    _name = "GRUCell"

    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, 3, device, dtype)

    def forward(self, input, hx=None):
        input, (hx,), batched = self._batched(input, hx)
        h = R.gru_cell(input, hx, self.weight_ih, self.weight_hh, self.bias_ih, self.bias_hh)
        return h if batched else h.squeeze(0)
