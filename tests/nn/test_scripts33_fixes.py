"""Focused checks for what the recipe scripts of test_dl_scripts33.py found minigrad doing unlike PyTorch:
torch.autograd.profiler reached as an attribute after a bare import, with its profile's `function_events` and
`table()`; set_float32_matmul_precision('medium') read back as 'medium'; utils.benchmark's Compare table."""
import pytest

import minigrad


@pytest.fixture
def matmul_precision():
    before = minigrad.get_float32_matmul_precision()
    yield
    minigrad.set_float32_matmul_precision(before)


def test_autograd_profiler_is_an_attribute_of_autograd(torch):
    import minigrad.autograd as autograd

    assert autograd.profiler.profile is minigrad.profiler.profile
    assert autograd.profiler.record_function is minigrad.profiler.record_function
    with pytest.raises(AttributeError, match="module 'minigrad.autograd' has no attribute 'profilr'"):
        autograd.profilr  # noqa: B018 (the attribute read is what is checked)


def test_autograd_profiler_function_events_and_table(torch):
    for lib in (torch, minigrad):
        x = lib.ones(3, 3)
        with lib.autograd.profiler.profile() as prof:
            with lib.autograd.profiler.record_function("block"):
                x.mm(x)
            with lib.autograd.profiler.record_function("block"):
                x.mm(x)
        blocks = [e for e in prof.function_events if e.name == "block"]
        assert [e.key for e in blocks] == ["block", "block"]
        assert [e.count for e in prof.key_averages() if e.key == "block"] == [2]
        table = prof.table(sort_by="cpu_time_total")
        assert table.splitlines()[1].split()[:3] == ["Name", "Self", "CPU"]
        assert sum(line.split()[0] == "block" for line in table.splitlines() if line.strip()) == 2


def test_autograd_profiler_disabled_records_nothing():
    x = minigrad.ones(2, 2)
    with minigrad.autograd.profiler.profile(enabled=False) as prof:
        with minigrad.autograd.profiler.record_function("block"):
            x + x
    assert list(prof.key_averages()) == []


@pytest.mark.parametrize("precision", ["highest", "high", "medium"])
def test_float32_matmul_precision_reads_back_as_set(torch, precision, matmul_precision):
    before = torch.get_float32_matmul_precision()
    try:
        torch.set_float32_matmul_precision(precision)
        minigrad.set_float32_matmul_precision(precision)
        assert minigrad.get_float32_matmul_precision() == torch.get_float32_matmul_precision() == precision
        assert minigrad.backends.cuda.matmul.allow_tf32 == torch.backends.cuda.matmul.allow_tf32
    finally:
        torch.set_float32_matmul_precision(before)


def test_allow_tf32_after_medium_reads_high(matmul_precision):
    minigrad.set_float32_matmul_precision("medium")
    minigrad.backends.cuda.matmul.allow_tf32 = True
    assert minigrad.get_float32_matmul_precision() == "high"
    minigrad.backends.cuda.matmul.allow_tf32 = False
    assert minigrad.get_float32_matmul_precision() == "highest"


def compare_lines(benchmark, lib, colorize):
    results = []
    for threads in (1, 2):
        for n in (2, 30):
            x = lib.ones(n, n, dtype=lib.float64)
            for name, stmt in (("sum", "x.sum()"), ("mul and sum", "(x * x).sum(-1)")):
                results.append(benchmark.Timer(stmt=stmt, globals={"x": x}, label="Reductions", sub_label=f"n={n}",
                                               description=name, num_threads=threads).timeit(5))
    compare = benchmark.Compare(results[:4])
    compare.extend_results(results[4:])
    if colorize:
        compare.colorize()
    text = str(compare)
    return text, [line.split("|")[0] if "|" in line else line.split(":")[0] for line in text.splitlines()]


@pytest.mark.parametrize("colorize", [False, True])
def test_benchmark_compare_layout(torch, colorize):
    import torch.utils.benchmark as theirs

    import minigrad.utils.benchmark as ours

    (t_text, t_skeleton), (m_text, m_skeleton) = compare_lines(theirs, torch, colorize), compare_lines(ours, minigrad, colorize)
    assert m_skeleton[1:-1] == t_skeleton[1:-1]  # the header, thread lines and row labels; then the unit line
    assert m_skeleton[0].strip("[-] ") == t_skeleton[0].strip("[-] ") == "Reductions"
    assert m_text.endswith("\n") and m_text.splitlines()[-1].startswith("Times are in ")
    t_lines, m_lines = t_text.splitlines(), m_text.splitlines()
    # every line of a table as wide as its header (the escape codes aside), the thread lines filled with dashes
    plain = [line.replace("\x1b[92m\x1b[1m", "").replace("\x1b[0m\x1b[0m", "") for line in m_lines[:8]]
    assert len({len(line) for line in plain}) == 1
    assert [line.count("|") for line in m_lines] == [line.count("|") for line in t_lines]
    assert ("\x1b[92m" in m_text) == ("\x1b[92m" in t_text) == colorize


def test_benchmark_compare_refuses_other_objects(torch):
    import torch.utils.benchmark as theirs

    import minigrad.utils.benchmark as ours

    for lib in (theirs, ours):
        with pytest.raises(ValueError, match="Expected an instance of `Measurement`, got <class 'int'> instead."):
            lib.Compare([1])
