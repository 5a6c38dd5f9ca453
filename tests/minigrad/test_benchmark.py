"""minigrad.utils.benchmark (torch.utils.benchmark's Timer) against PyTorch's: the Measurement's printed form
(all but the numbers), its statistics, and the three ways of timing."""
import re

import pytest

import minigrad
from minigrad.utils import benchmark


def _shape(m):
    """repr without the numbers and the object's address."""
    return re.sub(r"\d+(\.\d+)? (ns|us|ms|s)\b", "T", repr(m).split(" object at ")[1].split("\n", 1)[1])


@pytest.mark.parametrize("kw", [dict(stmt="x * 2"), dict(stmt="x * 2", setup="y = 1", label="mul", sub_label="s",
                                                         description="d"),
                                dict(stmt="x * 2\nx * 3", setup="y = 1\nz = 2")])
def test_measurement_repr_as_torch(torch, kw):
    import torch.utils.benchmark as torch_benchmark  # (not loaded by `import torch`)

    ours = benchmark.Timer(globals={"x": minigrad.ones(3)}, **kw).timeit(50)
    theirs = torch_benchmark.Timer(globals={"x": torch.ones(3)}, **kw).timeit(50)
    assert _shape(ours) == _shape(theirs)
    assert repr(ours).startswith("<minigrad.utils.benchmark.utils.common.Measurement object at 0x")


def test_timings():
    t = benchmark.Timer("f(x)", globals={"f": lambda v: (v * 2).sum(), "x": minigrad.ones(10)})
    m = t.timeit(20)
    assert m.number_per_run == 20 and len(m.times) == 1 and m.median == m.mean == m.times[0] > 0
    b = t.blocked_autorange(min_run_time=0.02)
    assert len(b.times) >= 1 and sum(b.raw_times) >= 0.02
    a = t.adaptive_autorange(min_run_time=0.02, max_run_time=1.0)
    assert a.median > 0 and a.iqr >= 0
    assert benchmark.select_unit(2.5e-3) == ("ms", 1e-3) and benchmark.select_unit(3e-8)[0] == "ns"


def test_a_timer_leaves_the_thread_count_as_it_found_it(monkeypatch):
    # a count from the environment is read from it again afterwards: the Timer's own count does not stay set
    from minigrad.backends.cpu import team

    monkeypatch.setattr(team, "_requested", None)
    monkeypatch.setenv("MINIGRAD_NUM_THREADS", "2")
    before = minigrad.get_num_threads()
    benchmark.Timer("x + 1", globals={"x": minigrad.ones(3)}, num_threads=1).timeit(3)
    assert team._requested is None and minigrad.get_num_threads() == before
    monkeypatch.setenv("MINIGRAD_NUM_THREADS", "1")
    assert minigrad.get_num_threads() == 1
    minigrad.set_num_threads(2)  # a count the user set stays theirs
    try:
        benchmark.Timer("x + 1", globals={"x": minigrad.ones(3)}, num_threads=1).timeit(3)
        assert minigrad.get_num_threads() == 2
    finally:
        team.set_num_threads(None)
