"""minigrad.compile as PyTorch scripts use it (a third round of probes): the module form with the
backward outside the call, training-loop and generation loops. Each compiled run gives the eager run's
values (same seed), or runs eagerly with one warning line."""
import pytest

import minigrad
import nn
import nn.functional as F

from tests.minigrad.test_compile_scripts import _run_both


def _unrolled_cell_run(compiled):
    """A recurrent cell compiled and unrolled in Python: each call's hidden state input carries the
    previous calls' graph, which reaches the cell's own parameters."""
    minigrad.manual_seed(0)
    cell = nn.GRUCell(3, 5)
    step = minigrad.compile(cell) if compiled else cell
    opt = nn.optim.SGD(cell.parameters(), lr=0.1)
    values = []
    for _ in range(3):
        h, loss = minigrad.zeros(2, 5), 0
        for _ in range(4):
            h = step(minigrad.randn(2, 3), h)
            loss = loss + h.pow(2).sum()
        opt.zero_grad()
        loss.backward()
        values += [loss] + [p.grad for p in cell.parameters()]
        opt.step()
    return [v.detach().numpy() for v in values + list(cell.parameters())], step


def test_a_compiled_cell_unrolled_over_steps_replays_with_eagers_gradients():
    compiled = _run_both(_unrolled_cell_run)
    # (the first call, h without a graph, and the second capture; every other call replays)
    assert compiled._compiled.stats.replays == 10 and compiled._compiled.stats.eager_calls == 0


def _window_run(compiled):
    """Truncated backpropagation through time: the state carried, not detached, within a window."""
    minigrad.manual_seed(0)
    lstm = nn.LSTM(3, 4, num_layers=2, batch_first=True)
    model = minigrad.compile(lstm) if compiled else lstm
    opt = nn.optim.Adam(lstm.parameters(), lr=1e-2)
    values, state = [], None
    for _ in range(3):
        loss = 0
        for _ in range(3):
            out, state = model(minigrad.randn(2, 5, 3), state)
            loss = loss + out.pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        values.append(loss)
        state = tuple(s.detach() for s in state)
    return [v.detach().numpy() for v in values + list(lstm.parameters())], model


def test_a_state_carried_with_its_graph_between_calls_replays_with_eagers_gradients():
    compiled = _run_both(_window_run)
    assert compiled._compiled.stats.eager_calls == 0 and compiled._compiled.stats.replays >= 5


def _regularized_loss_run(compiled):
    minigrad.manual_seed(0)
    model = nn.Linear(3, 4)

    def loss_fn(out, y):  # the parameters read again inside the loss: their gradient has two paths
        return F.mse_loss(out, y) + 1e-2 * sum(p.pow(2).sum() for p in model.parameters())

    criterion = minigrad.compile(loss_fn) if compiled else loss_fn
    opt = nn.optim.SGD(model.parameters(), lr=0.1)
    values = []
    for _ in range(4):
        loss = criterion(model(minigrad.randn(6, 3)), minigrad.randn(6, 4))
        opt.zero_grad()
        loss.backward()
        values += [loss] + [p.grad for p in model.parameters()]
        opt.step()
    return [v.detach().numpy() for v in values + list(model.parameters())], criterion


def test_a_compiled_loss_that_reads_the_models_parameters_replays():
    compiled = _run_both(_regularized_loss_run)
    assert compiled.stats.replays == 3 and compiled.stats.eager_calls == 0


class _SharedTwice(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc, self.out = nn.Linear(6, 6), nn.Linear(6, 2)

    def forward(self, x):  # (fc's parameters get two parts of their gradient in each call)
        return self.out(minigrad.tanh(self.fc(minigrad.tanh(self.fc(x)))))


def _siamese_run(compiled):
    """A contrastive loss of two calls of one model: each parameter's gradient is summed over the parts
    of both calls, in the engine's order."""
    minigrad.manual_seed(0)
    model = _SharedTwice()
    net = minigrad.compile(model) if compiled else model
    opt = nn.optim.SGD(model.parameters(), lr=0.1)
    values = []
    for _ in range(4):
        a, b = minigrad.randn(5, 6), minigrad.randn(5, 6)
        loss = (net(a) - net(b)).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        values += [loss] + [p.grad for p in model.parameters()]
        opt.step()
    return [v.detach().numpy() for v in values + list(model.parameters())], net


def test_two_calls_of_a_model_that_reads_a_parameter_twice_sum_its_gradient_as_eagerly():
    compiled = _run_both(_siamese_run)
    assert compiled._compiled.stats.replays == 7


def _text_bag_run(compiled, mode, padding_idx):
    """The text-classification tutorial's step: nn.EmbeddingBag over flat ids and offsets, a Linear,
    clipping and SGD; every call has 12 ids in 4 bags, the bags' bounds (and so the layout) differ."""
    minigrad.manual_seed(0)
    bag, fc = nn.EmbeddingBag(30, 6, mode=mode, padding_idx=padding_idx), nn.Linear(6, 3)
    params = list(bag.parameters()) + list(fc.parameters())
    opt = nn.optim.SGD(params, lr=0.5)

    def step(text, offsets, label):
        opt.zero_grad()
        loss = F.cross_entropy(fc(bag(text, offsets)), label)
        loss.backward()
        nn.utils.clip_grad_norm_(params, 0.1)
        opt.step()
        return loss

    run = minigrad.compile(step) if compiled else step
    g = minigrad.Generator().manual_seed(1)
    values = []
    for _ in range(5):
        text = minigrad.randint(0, 30, (12,), generator=g)
        text[::5] = 2  # (the padding entries, where padding_idx=2)
        cuts = minigrad.randint(0, 13, (3,), generator=g).sort().values  # (empty bags too)
        offsets = minigrad.cat([minigrad.zeros(1, dtype=minigrad.int64), cuts])
        values.append(run(text, offsets, minigrad.randint(0, 3, (4,), generator=g)))
    return [v.detach().numpy() for v in values + params], run


def test_embedding_bag_with_offsets_replays_each_calls_bag_layout():
    """The layout (which id goes to which bag) is an op of each call's offsets: a replay with other
    offsets of the same shape gives eager's losses and parameters bit for bit."""
    for mode, padding_idx in (("mean", None), ("sum", None), ("mean", 2), ("sum", 2)):
        compiled = _run_both(_text_bag_run, mode, padding_idx)
        assert compiled.stats.replays == 4 and compiled.stats.eager_calls == 0, (mode, padding_idx)


def test_embedding_bag_checks_each_replays_offsets_and_ids():
    bag = nn.EmbeddingBag(10, 3, mode="sum")
    run = minigrad.compile(bag)
    text = minigrad.tensor([1, 2, 3, 4])
    run(text, minigrad.tensor([0, 2]))
    run(text, minigrad.tensor([0, 1]))
    assert run._compiled.stats.replays == 1
    for ids, offsets in (([1, 2, 3, 4], [1, 2]), ([1, 2, 3, 4], [0, 5]), ([1, 12, 3, 4], [0, 2])):
        with pytest.raises(RuntimeError) as eager:
            bag(minigrad.tensor(ids), minigrad.tensor(offsets))
        with pytest.raises(RuntimeError) as replayed:
            run(minigrad.tensor(ids), minigrad.tensor(offsets))
        assert str(replayed.value) == str(eager.value)
    assert run._compiled.stats.replays == 4 and run._compiled.stats.captures == 1


def _bag_2d_run(compiled, mode, padding_idx):
    """EmbeddingBag over (bags, ids) batches, trained by SGD: each call's ids (and so which are padding)."""
    minigrad.manual_seed(0)
    bag = nn.EmbeddingBag(10, 4, mode=mode, padding_idx=padding_idx)
    opt = nn.optim.SGD(bag.parameters(), lr=0.3)

    def step(text):
        opt.zero_grad()
        loss = bag(text).pow(2).sum()
        loss.backward()
        opt.step()
        return loss

    run = minigrad.compile(step) if compiled else step
    g = minigrad.Generator().manual_seed(2)
    values = [run(minigrad.randint(0, 10, (3, 5), generator=g)) for _ in range(4)]
    return [v.detach().numpy() for v in values] + [bag.weight.detach().numpy()], run


def test_embedding_bag_of_a_2d_input_replays():
    for mode, padding_idx in (("sum", None), ("mean", 1), ("max", None)):
        compiled = _run_both(_bag_2d_run, mode, padding_idx)
        assert compiled.stats.replays == 3 and compiled.stats.eager_calls == 0, (mode, padding_idx)
