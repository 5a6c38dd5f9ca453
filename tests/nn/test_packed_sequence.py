"""Packed sequences against PyTorch: pack_padded_sequence, pad_packed_sequence, pack_sequence, unpack_sequence,
unpad_sequence and PackedSequence itself (fields, round trips, gradients, error texts), and RNN, GRU and LSTM
on packed input from the same weights (outputs, final states, gradients of the input, the initial states and every
parameter), sorted and unsorted; a text classifier script trained in lockstep with PyTorch."""
import warnings

import numpy as np
import pytest

import minigrad
import nn
import nn.functional as F
from minigrad import backends
from nn.utils.rnn import (PackedSequence, invert_permutation, pack_padded_sequence, pack_sequence, pad_packed_sequence,
                          pad_sequence, unpack_sequence, unpad_sequence)

I, H, T = 3, 4, 5
SORTED, UNSORTED = [5, 3, 3, 1], [3, 5, 1, 3]  # (UNSORTED has a tie: the sort keeps its order, as PyTorch's)
TOL = 1e-10


def _arr(t):
    return t.detach().numpy().copy()


def _close(a, b, tol=TOL, msg=""):
    np.testing.assert_allclose(_arr(a), _arr(b), rtol=tol, atol=tol, err_msg=msg)


def _error(fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001 (the point is to compare whatever each raises)
        return type(e).__name__, str(e).replace("torch.", "minigrad.")
    return None


# ---- packing and unpacking ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("lengths", [SORTED, UNSORTED, [4, 4, 4, 4], [2, 1, 1, 1]], ids=str)
def test_pack_and_pad_as_torch(torch, lengths, batch_first):
    """The packed fields, the padded output (padding_value, total_length) and the gradient of the input."""
    x = np.random.default_rng(0).standard_normal((len(lengths), T, 2) if batch_first else (T, len(lengths), 2))
    enforce = lengths == sorted(lengths, reverse=True)
    res = {}
    for lib, pack, pad in ((torch, torch.nn.utils.rnn.pack_padded_sequence, torch.nn.utils.rnn.pad_packed_sequence),
                           (minigrad, pack_padded_sequence, pad_packed_sequence)):
        xt = lib.tensor(x, requires_grad=True)
        p = pack(xt, lengths, batch_first=batch_first, enforce_sorted=enforce)
        padded, lens = pad(p, batch_first=batch_first, padding_value=-2.0, total_length=T + 1)
        (padded * lib.arange(padded.numel(), dtype=lib.float64).reshape(padded.shape)).sum().backward()
        res[lib.__name__] = p, padded, lens, xt.grad
    (pt, padt, lent, gt), (pm, padm, lenm, gm) = res["torch"], res["minigrad"]
    assert type(pm) is PackedSequence and pm._fields == pt._fields
    _close(pm.data, pt.data)
    for name in ("batch_sizes", "sorted_indices", "unsorted_indices"):
        a, b = getattr(pm, name), getattr(pt, name)
        assert (a is None) == (b is None), name
        if a is not None:
            assert a.dtype == minigrad.int64 and a.tolist() == b.tolist(), name
    assert pm.batch_sizes.device.type == "cpu"
    _close(padm, padt)
    assert lenm.dtype == minigrad.int64 and lenm.tolist() == lent.tolist()
    _close(gm, gt)


def test_pad_packed_sequence_defaults_as_torch(torch):
    x = np.arange(24.0).reshape(T - 1, 3, 2)
    pt = torch.nn.utils.rnn.pad_packed_sequence(torch.nn.utils.rnn.pack_padded_sequence(torch.tensor(x), [3, 2, 1]))
    pm = pad_packed_sequence(pack_padded_sequence(minigrad.tensor(x), [3, 2, 1]))
    assert tuple(pm[0].shape) == tuple(pt[0].shape) == (3, 3, 2)  # the longest length, not the input's T - 1
    _close(pm[0], pt[0])
    assert pm[1].tolist() == pt[1].tolist()


LENGTHS = {"array": lambda lib: np.array([3, 2, 1]), "tuple": lambda lib: (3, 2, 1),
           "int32": lambda lib: lib.tensor([3, 2, 1], dtype=lib.int32),
           "float": lambda lib: lib.tensor([3.0, 2.5, 1.0])}  # (PyTorch truncates them to int64)


@pytest.mark.parametrize("lengths", sorted(LENGTHS))
def test_lengths_as_a_list_an_array_or_a_tensor(torch, lengths):
    x = np.random.default_rng(1).standard_normal((3, 3))
    make = LENGTHS[lengths]
    pt = torch.nn.utils.rnn.pack_padded_sequence(torch.tensor(x), make(torch))
    pm = pack_padded_sequence(minigrad.tensor(x), make(minigrad))
    _close(pm.data, pt.data)
    assert pm.batch_sizes.tolist() == pt.batch_sizes.tolist()


@pytest.mark.parametrize("enforce_sorted", [True, False])
def test_pack_sequence_and_unpack_sequence_as_torch(torch, enforce_sorted):
    rng = np.random.default_rng(2)
    lengths = [4, 2, 2, 1] if enforce_sorted else [2, 4, 1, 2]
    seqs = [rng.standard_normal((n, 2, 3)) for n in lengths]  # (trailing dims beyond one)
    res = {}
    for lib, pack, unpack in ((torch, torch.nn.utils.rnn.pack_sequence, torch.nn.utils.rnn.unpack_sequence),
                              (minigrad, pack_sequence, unpack_sequence)):
        leaves = [lib.tensor(s, requires_grad=True) for s in seqs]
        p = pack(leaves, enforce_sorted=enforce_sorted)
        back = unpack(p)
        sum(((k + 1) * s ** 2).sum() for k, s in enumerate(back)).backward()
        res[lib.__name__] = p, back, [s.grad for s in leaves]
    (pt, bt, gt), (pm, bm, gm) = res["torch"], res["minigrad"]
    _close(pm.data, pt.data)
    assert pm.batch_sizes.tolist() == pt.batch_sizes.tolist()
    for a, b, s in zip(bm, bt, seqs):
        _close(a, b)
        np.testing.assert_array_equal(_arr(a), s)
    for a, b in zip(gm, gt):
        _close(a, b)


@pytest.mark.parametrize("batch_first", [False, True])
def test_unpad_sequence_as_torch(torch, batch_first):
    x = np.random.default_rng(3).standard_normal((3, T, 2) if batch_first else (T, 3, 2))
    ours = unpad_sequence(minigrad.tensor(x), minigrad.tensor([2, 5, 1]), batch_first=batch_first)
    theirs = torch.nn.utils.rnn.unpad_sequence(torch.tensor(x), torch.tensor([2, 5, 1]), batch_first=batch_first)
    for a, b in zip(ours, theirs):
        _close(a, b)


def test_packed_sequence_is_a_named_tuple_as_torch(torch):
    p = pack_sequence([minigrad.tensor([1.0, 2.0, 3.0]), minigrad.tensor([4.0])])
    data, batch_sizes, sorted_indices, unsorted_indices = p
    assert p.data is data and sorted_indices is None and unsorted_indices is None
    again = PackedSequence((data, batch_sizes))  # PyTorch takes the (data, batch_sizes) pair too
    assert again.data is data and again.batch_sizes is batch_sizes
    assert PackedSequence(data, batch_sizes) == again
    assert p.to(minigrad.float32) is p and p.float() is p and p.cpu() is p and not p.is_cuda
    d = p.double()
    assert type(d) is PackedSequence and d.data.dtype == minigrad.float64 and d.batch_sizes is batch_sizes
    perm = minigrad.tensor([2, 0, 3, 1])
    theirs = torch.nn.utils.rnn.invert_permutation(torch.tensor([2, 0, 3, 1]))
    assert invert_permutation(perm).tolist() == theirs.tolist()
    assert invert_permutation(None) is None
    q = pack_sequence([minigrad.tensor([1.0]), minigrad.tensor([2.0, 3.0])], enforce_sorted=False)
    assert q.double().sorted_indices.tolist() == [1, 0] and q.double().unsorted_indices.tolist() == [1, 0]


ERRORS = [  # (what is called, arguments as a function of the library)
    ("pack", lambda lib: (lib.zeros(4, 3, 2), [2, 3, 1])),
    ("pack", lambda lib: (lib.zeros(4, 3, 2), [3, 2, 0])),
    ("pack", lambda lib: (lib.zeros(4, 3, 2), [3, 0, 2])),
    ("pack_unsorted", lambda lib: (lib.zeros(4, 3, 2), [3, 0, 2])),
    ("pack", lambda lib: (lib.zeros(4, 3, 2), [-1, -2, -3])),
    ("pack", lambda lib: (lib.zeros(4, 3, 2), [3, 2])),
    ("pack", lambda lib: (lib.zeros(4, 3, 2), lib.tensor([[3, 2, 1]]))),
    ("pack", lambda lib: (lib.zeros(4, 3, 2), 3)),
    ("pack", lambda lib: (lib.zeros(0, 3, 2), [])),
    ("pack", lambda lib: (lib.zeros(4), [3])),
    ("pack_sequence", lambda lib: ([lib.zeros(2), lib.zeros(3)],)),
    ("pack_sequence", lambda lib: ([],)),
    ("pad", lambda lib: (lib.nn.utils.rnn.pack_padded_sequence(lib.zeros(4, 3), [3, 2, 1]),)),
]


@pytest.mark.parametrize("case", range(len(ERRORS)))
def test_errors_as_torch(torch, case):
    what, args = ERRORS[case]
    call = {
        "pack": lambda lib, *a: lib.nn.utils.rnn.pack_padded_sequence(*a),
        "pack_unsorted": lambda lib, *a: lib.nn.utils.rnn.pack_padded_sequence(*a, enforce_sorted=False),
        "pack_sequence": lambda lib, *a: lib.nn.utils.rnn.pack_sequence(*a),
        "pad": lambda lib, *a: lib.nn.utils.rnn.pad_packed_sequence(*a, total_length=2),
    }[what]
    expected = _error(lambda: call(torch, *args(torch)))
    assert expected is not None
    assert _error(lambda: call(minigrad, *args(minigrad))) == expected


def test_the_sorted_error_text():
    with pytest.raises(RuntimeError, match="`lengths` array must be sorted in decreasing order when `enforce_sorted` "
                                           "is True"):
        pack_padded_sequence(minigrad.zeros(4, 3), [1, 2, 3])


def test_a_length_past_the_input_raises():
    """PyTorch reads past the input's end here; minigrad says so."""
    with pytest.raises(RuntimeError, match="longer than the input's 4 steps"):
        pack_padded_sequence(minigrad.zeros(4, 3), [6, 2, 1])


# ---- RNN, GRU, LSTM on packed input ----------------------------------------------------------------------------
def _pair(torch, cls, opts):
    """A torch module and a minigrad one holding the same weights (float64)."""
    torch.manual_seed(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (LSTM projections without oneDNN)
        t = getattr(torch.nn, cls)(I, H, **opts, dtype=torch.float64)
    m = getattr(nn, cls)(I, H, **opts, dtype=minigrad.float64)
    m.load_state_dict({k: minigrad.tensor(v.detach().numpy()) for k, v in t.state_dict().items()})
    return t, m


def _run_packed(lib, module, x, lengths, states, batch_first, enforce_sorted):
    """pack x -> module -> (the packed output's fields, the padded output, h_n[, c_n]) and the gradients of x,
    the initial states and the parameters, for a loss weighing every output element differently."""
    rnn = lib.nn.utils.rnn
    leaves = [lib.tensor(a, requires_grad=True) for a in [x, *states]]
    packed = rnn.pack_padded_sequence(leaves[0], lengths, batch_first=batch_first, enforce_sorted=enforce_sorted)
    hx = None if not states else leaves[1] if len(states) == 1 else tuple(leaves[1:])
    out, h = module(packed, hx)
    assert type(out).__name__ == "PackedSequence"
    padded, _ = rnn.pad_packed_sequence(out, batch_first=batch_first)
    finals = list(h) if isinstance(h, tuple) else [h]
    results = [padded, *finals]
    rng = np.random.default_rng(5)
    loss = sum((r * lib.tensor(rng.standard_normal(tuple(r.shape)))).sum() for r in results)
    loss.backward()
    grads = [a.grad for a in leaves] + [p.grad for _, p in module.named_parameters()]
    return out, results, grads


KINDS = {"RNN": ("RNN", {}), "RNN_relu": ("RNN", {"nonlinearity": "relu"}), "GRU": ("GRU", {}),
         "LSTM": ("LSTM", {}), "LSTM_proj": ("LSTM", {"proj_size": 2})}
# every option with the three plain kinds; relu and projections with two layers, time first
LAYER_CASES = [(kind, layers, bi, first, enforce, given)
               for kind in sorted(KINDS) for layers in (1, 2) for bi in (False, True) for first in (False, True)
               for enforce in (True, False) for given in (False, True)
               if kind in ("RNN", "GRU", "LSTM") or (layers == 2 and not first)]


def _case_id(case):
    kind, layers, bi, first, enforce, given = case
    return "-".join([kind, f"{layers}layers", "bi" if bi else "uni", "batch_first" if first else "time_first",
                     "sorted" if enforce else "unsorted", "hx" if given else "no_hx"])


@pytest.mark.parametrize("kind,num_layers,bidirectional,batch_first,enforce_sorted,given", LAYER_CASES,
                         ids=map(_case_id, LAYER_CASES))
def test_packed_layer_matches_torch(torch, kind, num_layers, bidirectional, batch_first, enforce_sorted, given):
    cls, opts = KINDS[kind]
    t, m = _pair(torch, cls, {**opts, "num_layers": num_layers, "bidirectional": bidirectional,
                              "batch_first": batch_first})
    lengths = SORTED if enforce_sorted else UNSORTED
    B, L = len(lengths), num_layers * (2 if bidirectional else 1)
    rng = np.random.default_rng(4)
    x = rng.standard_normal((B, T, I) if batch_first else (T, B, I))
    shapes = [(L, B, opts.get("proj_size") or H)] + ([(L, B, H)] if cls == "LSTM" else [])
    states = [rng.standard_normal(s) for s in shapes] if given else []
    out_m, res_m, grads_m = _run_packed(minigrad, m, x, lengths, states, batch_first, enforce_sorted)
    out_t, res_t, grads_t = _run_packed(torch, t, x, lengths, states, batch_first, enforce_sorted)
    _close(out_m.data, out_t.data, msg="data")
    assert out_m.batch_sizes.tolist() == out_t.batch_sizes.tolist()
    for name in ("sorted_indices", "unsorted_indices"):
        a, b = getattr(out_m, name), getattr(out_t, name)
        assert (a is None and b is None) or a.tolist() == b.tolist(), name
    for k, (a, b) in enumerate(zip(res_m, res_t)):
        _close(a, b, msg=["padded output", "h_n", "c_n"][k])
    names = ["x", "h0", "c0"][:1 + len(states)] + [n for n, _ in m.named_parameters()]
    assert [n for n, _ in t.named_parameters()] == names[1 + len(states):]
    for name, a, b in zip(names, grads_m, grads_t):
        _close(a, b, msg=name)


def test_h_n_is_each_sequences_own_last_state():
    """h_n of a packed batch equals each sequence run alone (unpacked) to its own end."""
    minigrad.manual_seed(0)
    m = nn.GRU(I, H, bidirectional=True).double()
    seqs = [minigrad.randn(n, I, dtype=minigrad.float64) for n in UNSORTED]
    out, h_n = m(pack_sequence(seqs, enforce_sorted=False))
    for k, (s, o) in enumerate(zip(seqs, unpack_sequence(out))):
        alone, h_alone = m(s)
        _close(o, alone)
        _close(h_n[:, k], h_alone)


@pytest.mark.parametrize("layer", ["fast", "numpy", "reference"])
def test_packed_runs_with_every_kernel_set(layer):
    """The fused layers and the reference (primitive nodes) give the same packed results and gradients."""
    minigrad.manual_seed(0)
    m = nn.LSTM(I, H, num_layers=2, bidirectional=True).double()
    x = minigrad.randn(T, 4, I, dtype=minigrad.float64)
    results = []
    for kernels in ("fast", layer):
        m.zero_grad()
        xl = x.detach().requires_grad_()
        with backends.kernels(kernels):
            out, (h, c) = m(pack_padded_sequence(xl, UNSORTED, enforce_sorted=False))
            (out.data.sum() + (h * h).sum() + c.sum()).backward()
        results.append([out.data, h, c, xl.grad] + [p.grad for p in m.parameters()])
    for a, b in zip(*results):
        _close(a, b)


def test_packed_dropout_between_layers_in_training():
    minigrad.manual_seed(0)
    m = nn.GRU(I, H, num_layers=2, dropout=0.5).double()
    packed = pack_padded_sequence(minigrad.randn(T, 4, I, dtype=minigrad.float64), SORTED)
    eval_out = m.eval()(packed)[0].data
    m.train()
    minigrad.manual_seed(3)
    a = m(packed)[0].data
    minigrad.manual_seed(3)
    b = m(packed)[0].data
    np.testing.assert_array_equal(a.array, b.array)
    assert not np.allclose(a.array, eval_out.array)


PACKED_ERRORS = [  # (class, the padded input, hx: each a function of the library); the input's lengths 3, 2, 1
    ("GRU", lambda lib: lib.zeros(4, 3, 5), lambda lib: lib.zeros(1, 2, 6)),
    ("GRU", lambda lib: lib.zeros(4, 3, 5), lambda lib: lib.zeros(6)),
    ("RNN", lambda lib: lib.zeros(4, 3, 5), lambda lib: lib.zeros(2, 3, 6)),
    ("GRU", lambda lib: lib.zeros(4, 3, 5), lambda lib: lib.zeros(3, 6)),
    ("GRU", lambda lib: lib.zeros(4, 3, 5, dtype=lib.float64), lambda lib: None),
    ("GRU", lambda lib: lib.zeros(4, 3, 2), lambda lib: None),
]


@pytest.mark.parametrize("case", range(len(PACKED_ERRORS)))
def test_packed_errors_as_torch(torch, case):
    cls, make, hx = PACKED_ERRORS[case]
    t, m = getattr(torch.nn, cls)(5, 6), getattr(nn, cls)(5, 6)
    pack = lambda lib: lib.nn.utils.rnn.pack_padded_sequence(make(lib), [3, 2, 1])
    expected = _error(lambda: t(pack(torch), hx(torch)))
    assert expected is not None
    assert _error(lambda: m(pack(minigrad), hx(minigrad))) == expected


def test_packed_lstm_errors():
    """PyTorch's LSTM checks a packed input's sizes only inside its kernel (a matmul's or a broadcast's text);
    minigrad's checks them first, as for GRU and RNN."""
    m = nn.LSTM(5, 6)
    with pytest.raises(RuntimeError, match=r"input.size\(-1\) must be equal to input_size. Expected 5, got 2"):
        m(pack_padded_sequence(minigrad.zeros(4, 3, 2), [3, 2, 1]))
    packed = pack_padded_sequence(minigrad.zeros(4, 3, 5), [3, 2, 1])
    with pytest.raises(TypeError, match="expected hx to be a tuple"):
        m(packed, minigrad.zeros(1, 3, 6))
    with pytest.raises(RuntimeError, match=r"Expected hidden\[0\] size \(1, 3, 6\), got \[1, 2, 6\]"):
        m(packed, (minigrad.zeros(1, 2, 6), minigrad.zeros(1, 3, 6)))


# ---- a PyTorch text classifier script, run as written with `import minigrad as torch` ---------------------------
def _classifier_losses(torch, state=None, steps=3):
    """The usual pattern: embed padded token ids, pack by length (unsorted), LSTM, classify from h_n[-1]."""
    nn_, F_ = torch.nn, torch.nn.functional
    from_rnn = torch.nn.utils.rnn

    class Classifier(nn_.Module):
        def __init__(self, vocab, dim, hidden, classes):
            super().__init__()
            self.emb = nn_.Embedding(vocab, dim, padding_idx=0)
            self.lstm = nn_.LSTM(dim, hidden, num_layers=2, batch_first=True, bidirectional=True)
            self.fc = nn_.Linear(hidden, classes)

        def forward(self, ids, lengths):
            packed = from_rnn.pack_padded_sequence(self.emb(ids), lengths.cpu(), batch_first=True,
                                                   enforce_sorted=False)
            _, (h_n, _) = self.lstm(packed)
            return self.fc(h_n[-1])

    torch.manual_seed(0)
    model = Classifier(20, 6, 8, 3).double()
    if state is not None:
        model.load_state_dict({k: torch.tensor(v) for k, v in state.items()})
    opt = torch.optim.Adam(model.parameters(), lr=0.05)
    rng = np.random.default_rng(6)
    losses = []
    for _ in range(steps):
        lengths = rng.integers(1, 8, size=5)
        ids = np.zeros((5, 7), dtype=np.int64)
        for k, n in enumerate(lengths):
            ids[k, :n] = rng.integers(1, 20, size=n)
        labels = rng.integers(0, 3, size=5)
        logits = model(torch.tensor(ids), torch.tensor(lengths))
        loss = F_.cross_entropy(logits, torch.tensor(labels))
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses, {k: v.detach().numpy().copy() for k, v in model.state_dict().items()}


def test_text_classifier_trains_in_lockstep_with_torch(torch):
    _, start = _classifier_losses(torch, steps=0)
    theirs, after_t = _classifier_losses(torch, start)
    ours, after_m = _classifier_losses(minigrad, start)
    np.testing.assert_allclose(ours, theirs, rtol=1e-10, atol=1e-10)
    for k in after_t:
        np.testing.assert_allclose(after_m[k], after_t[k], rtol=1e-8, atol=1e-10, err_msg=k)
    assert F.cross_entropy is minigrad.nn.functional.cross_entropy and pad_sequence is not None
