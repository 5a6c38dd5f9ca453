"""The guides under docs/ run: every ```python block is a doctest, run in order in one namespace
(like a reader typing them in), so the text cannot drift from the code."""
import doctest
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = sorted((ROOT / "docs").glob("*.md")) + [ROOT / "README.md"]  # the README tour runs too
FENCE = re.compile(r"^```(\w*)[^\n]*\n(.*?)^```\s*$", re.M | re.S)


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
