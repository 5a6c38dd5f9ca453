"""The guides under docs/ run: every ```python block is a doctest, run in order in one namespace
(like a reader typing them in), so the text cannot drift from the code. A document with no example
counts as tested only when it is listed in NO_EXAMPLES with the reason; the reading guide's file
list is checked against the files themselves."""
import doctest
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = sorted((ROOT / "docs").glob("*.md")) + [ROOT / "README.md"]  # the README tour runs too
FENCE = re.compile(r"^```(\w*)[^\n]*\n(.*?)^```\s*$", re.M | re.S)
# documents with nothing for a doctest to run, and why (their commands are bash, not Python)
NO_EXAMPLES = {
    "performance.md": "measurements and the bench/ commands that make them",
    "reading-guide.md": "a list of files to read; test_reading_guide_* check it against the files",
    "distributed.md": "mpiexec commands; its Python program runs under mpiexec in tests/distributed/test_collectives.py",
    "training.md": "train.py and sample.py commands, which tests/gpt/test_cli_safety.py runs as a user would",
    "cpu_blas.md": "environment variables and a cache file; tests/minigrad/test_blas_library.py checks each",
}


def blocks(text, lang):
    """(line number, body) of each fenced block in `lang`."""
    return [(text[:m.start()].count("\n") + 2, m.group(2)) for m in FENCE.finditer(text) if m.group(1) == lang]


def run_doctests(path):
    text = path.read_text()
    parser = doctest.DocTestParser()
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    globs = {"__name__": "__docs__"}
    out = []
    examples = []
    for lineno, body in blocks(text, "python"):
        test = parser.get_doctest(body, globs, f"{path.name}:{lineno}", str(path), lineno - 1)
        examples += test.examples
        runner.run(test, out=out.append, clear_globs=False)
        globs = test.globs  # DocTest copies its globals: carry them on to the next block
    return runner.summarize(verbose=False), "".join(out), examples


@pytest.mark.parametrize("path", DOCS, ids=[p.name for p in DOCS])
def test_python_blocks_run_as_doctests(path):
    results, report, examples = run_doctests(path)
    if path.name in NO_EXAMPLES:
        assert results.attempted == 0, f"{path.name} has examples now: remove it from NO_EXAMPLES"
        pytest.skip(f"{path.name} has no Python examples: {NO_EXAMPLES[path.name]}")
    assert results.attempted > 0, f"{path.name} has no >>> example to run (a ```python block without >>> runs nothing)"
    if path.name == "autograd.md":
        assert results.attempted > 40, f"{path.name} has lost its >>> examples"
    assert results.failed == 0, report


@pytest.mark.parametrize("path", DOCS, ids=[p.name for p in DOCS])
def test_mermaid_blocks_are_real_output(path):
    """A ```mermaid block (drawn by markdown viewers) must be the output of an example above it."""
    _, _, examples = run_doctests(path)
    outputs = [e.want for e in examples]
    for lineno, body in blocks(path.read_text(), "mermaid"):
        assert any(body in want for want in outputs), f"{path.name}:{lineno}: mermaid block is not any example's output"


def test_autograd_guide_exists():
    assert (ROOT / "docs" / "autograd.md") in DOCS


# ---- the reading guide -------------------------------------------------------------------------
GUIDE = ROOT / "docs" / "reading-guide.md"
ROW = re.compile(r"^\|(?:\s*(\d+)\s*\|)?\s*`([\w/.\-]+)`\s*\|\s*([\d,]+)\s*\|", re.M)


def guide_rows():
    """(step or None, path, stated line count) of every table row that names a file and its lines."""
    return [(m.group(1), m.group(2), int(m.group(3).replace(",", ""))) for m in ROW.finditer(GUIDE.read_text())]


def line_count(path):
    return len((ROOT / path).read_text().splitlines())


def test_reading_guide_files_exist_with_their_stated_line_counts():
    rows = guide_rows()
    assert len([r for r in rows if r[0]]) >= 7, "the guide's path (tensor -> ... -> training loop) is gone"
    for _, path, stated in rows:
        assert (ROOT / path).is_file(), f"reading-guide.md lists {path}, which does not exist"
        real = line_count(path)
        assert abs(stated - real) <= 0.15 * real, f"reading-guide.md: {path} has {real} lines, not {stated}"


def test_reading_guide_total_and_order():
    steps = [(int(s), p) for s, p, _ in guide_rows() if s]
    assert [s for s, _ in steps] == list(range(1, len(steps) + 1))
    paths = [p for _, p in steps]
    # tensor -> Function -> engine -> ops -> reference ops -> model -> training loop
    for a, b in zip(["minigrad/tensor.py", "minigrad/autograd/function.py", "minigrad/autograd/engine.py"],
                    ["minigrad/autograd/function.py", "minigrad/autograd/engine.py", "minigrad/ops/"]):
        assert paths.index(a) < min(i for i, p in enumerate(paths) if p.startswith(b))
    assert paths[-2:] == ["gpt/model.py", "gpt/trainer.py"]
    total = int(re.search(r"([\d,]+) lines in all", GUIDE.read_text()).group(1).replace(",", ""))
    real = sum(line_count(p) for p in paths)
    assert abs(total - real) <= 0.15 * real, f"reading-guide.md: its path is {real} lines, not {total}"


def test_readme_links_the_reading_guide_first():
    links = re.findall(r"\]\((docs/[\w.\-]+)", (ROOT / "README.md").read_text())
    assert links and links[0] == "docs/reading-guide.md"
