"""minigrad.profiler, torch.profiler's everyday form: a profiler recipe's script (profile, record_function,
key_averages().table) runs, with PyTorch's columns, and its numbers add up."""
import re
import time

import pytest

import minigrad
import nn
from minigrad.autograd.function import BackwardNode, Function
from minigrad.profiler import ProfilerActivity, profile, record_function


def _recipe(L, group_by_input_shape=False):
    model = L.nn.Sequential(L.nn.Linear(3, 4), L.nn.ReLU(), L.nn.Linear(4, 2))
    with L.profiler.profile(activities=[L.profiler.ProfilerActivity.CPU], record_shapes=True) as prof:
        with L.profiler.record_function("model_inference"):
            out = model(L.ones(5, 3))
        out.sum().backward()
    return prof.key_averages(group_by_input_shape=group_by_input_shape)


def _layout(table):
    """What a table's names, numbers and shapes leave: its columns' titles, the widths of the number columns
    (the name and shape columns fit the op names and shapes, which are minigrad's own), its last lines."""
    lines = table.split("\n")
    return [re.split(r"\s{2,}", lines[1].strip())[1:], [len(part) for part in lines[0].split("  ")[1:7]],
            lines[-2].split(":")[0], lines[-1]]


@pytest.mark.parametrize("group_by_input_shape", [False, True])
def test_the_recipes_table_has_torchs_columns(torch, group_by_input_shape):
    ours = _recipe(minigrad, group_by_input_shape).table(sort_by="cpu_time_total", row_limit=10)
    theirs = _recipe(torch, group_by_input_shape).table(sort_by="cpu_time_total", row_limit=10)
    got, want = _layout(ours), _layout(theirs)
    assert got == want and got[2:] == ["Self CPU time total", ""]


def test_calls_are_counted_and_times_add_up():
    with profile(record_shapes=True) as prof:
        with record_function("outer"):
            time.sleep(0.01)
            with record_function("inner"):
                time.sleep(0.02)
            x = minigrad.ones(2, 3, requires_grad=True)
            for _ in range(3):
                (x * 2).sum().backward()
    rows = {e.key: e for e in prof.key_averages()}
    outer, inner = rows["outer"], rows["inner"]
    assert outer.count == inner.count == 1 and rows["autograd::engine::evaluate_function: MulBackward0"].count == 3
    assert inner.cpu_time_total >= 20_000 and outer.cpu_time_total >= 30_000  # (microseconds, as PyTorch's)
    ops = [e for e in prof.events() if e.name not in ("outer", "inner")]
    assert ops and all(e.start >= outer_event.start for outer_event in prof.events() if outer_event.name == "outer"
                       for e in ops)
    assert outer.self_cpu_time_total == pytest.approx(outer.cpu_time_total - inner.cpu_time_total
                                                      - sum(e.cpu_time_total for e in ops), abs=1e-3)
    total = prof.key_averages().table().split("\n")[-2]
    assert total == f"Self CPU time total: {sum(e.self_cpu_time_total for e in rows.values()) / 1e3:.3f}ms"


def test_the_engine_is_unwrapped_after_the_profile():
    before = Function.__dict__["apply"], BackwardNode.__dict__["apply"]
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        with pytest.raises(RuntimeError, match="already enabled"):
            profile().start()
        nn.functional.relu(minigrad.ones(2))
    assert (Function.__dict__["apply"], BackwardNode.__dict__["apply"]) == before
    with record_function("not profiled"):  # (no profile on: nothing recorded, no error)
        nn.functional.relu(minigrad.ones(2))
    assert [e.key for e in prof.key_averages()] == ["Relu"]
