"""minigrad.viz: Mermaid and DOT text of the backward graph, rendering through `dot`, the CLI."""
import os
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import minigrad as mg
from minigrad.utils.checkpoint import checkpoint
from minigrad.viz import main, render, to_dot, to_mermaid

ROOT = Path(__file__).resolve().parents[2]


def mermaid_nodes(text):
    return dict(re.findall(r'^\s+(n\d+)\["([^"]*)"\]', text, re.M))


def mermaid_edges(text):
    return re.findall(r"^\s+(n\d+) --> (n\d+)$", text, re.M)


def test_mermaid_of_the_classic_example():
    x = mg.tensor([1.0, 2.0, 3.0], requires_grad=True)
    text = to_mermaid((x * 2 + 1) ** 2)
    assert text.splitlines()[0] == "flowchart TD"
    nodes = mermaid_nodes(text)
    names = {k: v.split("<br/>")[0] for k, v in nodes.items()}
    assert sorted(names.values()) == sorted(["PowBackward0", "AddBackward0", "MulBackward0", "AccumulateGrad"])
    by_name = {v: k for k, v in names.items()}
    # arrows point upstream: from the output to the leaf
    assert sorted(mermaid_edges(text)) == sorted([
        (by_name["PowBackward0"], by_name["AddBackward0"]),
        (by_name["AddBackward0"], by_name["MulBackward0"]),
        (by_name["MulBackward0"], by_name["AccumulateGrad"]),
    ])
    assert "(3,)" in nodes[by_name["AccumulateGrad"]]  # the leaf's shape


def test_mermaid_exact_text():
    x = mg.tensor([1.0, 2.0, 3.0], requires_grad=True)
    assert to_mermaid((x * 2 + 1) ** 2) == textwrap.dedent("""\
        flowchart TD
            n0["PowBackward0"]
            n1["AddBackward0"]
            n2["MulBackward0"]
            n3["AccumulateGrad<br/>leaf (3,)"]
            n0 --> n1
            n1 --> n2
            n2 --> n3
            classDef leaf fill:#e8f4e8,stroke:#4a4
            class n3 leaf""")


def test_shared_leaf_two_edges_and_params_names():
    x = mg.randn(2, 3, requires_grad=True)
    w = mg.randn(3, 3, requires_grad=True)
    y = (x @ w * x).sum()
    text = to_mermaid(y, params={"x": x, "w": w})
    nodes = mermaid_nodes(text)
    leaves = [v for v in nodes.values() if v.startswith("AccumulateGrad")]
    assert sorted(leaves) == ["AccumulateGrad<br/>w (3, 3)", "AccumulateGrad<br/>x (2, 3)"]
    # x feeds two ops: its AccumulateGrad box has two arrows into it, and is drawn once
    x_id = next(k for k, v in nodes.items() if v.endswith("x (2, 3)"))
    assert sum(1 for _, b in mermaid_edges(text) if b == x_id) == 2


def test_show_saved_shapes_and_bytes():
    x = mg.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = (x * 2 + 1) ** 2
    text = to_mermaid(y, show_saved=True)
    assert "PowBackward0<br/>self: (3,) float32 12 B" in text
    y.sum().backward()
    assert "self: (freed)" in to_mermaid(y, show_saved=True)
    # inside a checkpoint, what is kept is a handle, not the tensor
    z = checkpoint(lambda a: (a * 2 + 1) ** 2, x, use_reentrant=False)
    assert "self: (3,) (packed by a hook)" in to_mermaid(z, show_saved=True)


def test_dot_text():
    x = mg.tensor([1.0, 2.0, 3.0], requires_grad=True)
    text = to_dot((x * 2 + 1) ** 2, show_saved=True)
    assert text.startswith("digraph backward {") and text.rstrip().endswith("}")
    assert 'n0 [label="PowBackward0\\nself: (3,) float32 12 B"];' in text
    assert re.search(r'n3 \[label="AccumulateGrad\\nleaf \(3,\)"', text)
    assert ["n0 -> n1;", "n1 -> n2;", "n2 -> n3;"] == re.findall(r"n\d -> n\d;", text)


@pytest.mark.parametrize("make", [
    lambda: mg.randn(3),
    lambda: mg.randn(3, requires_grad=True),
    lambda: _no_grad_result(),
], ids=["plain", "leaf", "no_grad"])
def test_no_graph_is_a_clear_error(make):
    t = make()
    for fn in (to_mermaid, to_dot):
        with pytest.raises(ValueError, match="no grad_fn, so there is no backward graph"):
            fn(t)


def _no_grad_result():
    x = mg.randn(3, requires_grad=True)
    with mg.no_grad():
        return x * 2


def test_render_without_dot_is_a_clear_error(monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))  # no `dot` there
    x = mg.randn(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="Graphviz's `dot`"):
        render(x.exp(), tmp_path / "g.svg")


def test_render_calls_dot(monkeypatch, tmp_path):
    # a stand-in `dot` that records its arguments and input, so the plumbing is tested anywhere
    fake = tmp_path / "bin" / "dot"
    fake.parent.mkdir()
    fake.write_text(textwrap.dedent(f"""\
        #!{sys.executable}
        import sys
        out = sys.argv[sys.argv.index("-o") + 1]
        open(out, "w").write(" ".join(sys.argv[1:]) + "\\n" + sys.stdin.read())
        """))
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", str(fake.parent) + os.pathsep + os.environ.get("PATH", ""))
    x = mg.randn(3, requires_grad=True)
    out = render(x.exp(), tmp_path / "g.png")
    args, src = out.read_text().split("\n", 1)
    assert args.startswith("-Tpng -o ") and src.startswith("digraph backward {")


@pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz's dot is not installed")
def test_render_svg_with_real_dot(tmp_path):
    x = mg.randn(3, requires_grad=True)
    out = render((x * 2).exp().sum(), tmp_path / "g.svg")
    assert "<svg" in out.read_text()


def test_cli_default_mlp(capsys):
    assert main([]) == 0
    text = capsys.readouterr().out
    nodes = mermaid_nodes(text)
    assert text.startswith("flowchart TD")
    assert sum(v.startswith("AccumulateGrad") for v in nodes.values()) == 4  # w1 b1 w2 b2
    assert "AccumulateGrad<br/>w1 (4, 4)" in nodes.values()
    assert any(v == "MmBackward0" for v in nodes.values())


def test_cli_module_entrypoint_and_formats(tmp_path, capsys, monkeypatch):
    (tmp_path / "vizdemo.py").write_text(textwrap.dedent("""\
        import minigrad
        def build():
            w = minigrad.randn(3, requires_grad=True)
            return (w.tanh() * 2).sum(), {"w": w}
        def bad():
            return 3
        """))
    monkeypatch.syspath_prepend(str(tmp_path))
    assert main(["--module", "vizdemo:build", "--format", "dot", "--show-saved"]) == 0
    out = capsys.readouterr().out
    assert "TanhBackward0\\nresult: (3,) float32 12 B" in out and "AccumulateGrad\\nw (3,)" in out
    assert main(["--module", "vizdemo:build", "--out", str(tmp_path / "g.mmd")]) == 0
    assert (tmp_path / "g.mmd").read_text().startswith("flowchart TD")
    with pytest.raises(SystemExit, match="must return a loss Tensor"):
        main(["--module", "vizdemo:bad"])
    with pytest.raises(SystemExit, match="cannot load"):
        main(["--module", "vizdemo:nope"])


def test_python_dash_m():
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    r = subprocess.run([sys.executable, "-m", "minigrad.viz"], capture_output=True, text=True, env=env, cwd=ROOT,
                       timeout=60)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("flowchart TD") and "MeanBackward0" in r.stdout
    assert "nn" not in _imported_top_level(env)


def _imported_top_level(env):
    code = "import sys, minigrad.viz, minigrad.memory, minigrad.utils.checkpoint; print(' '.join(sys.modules))"
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd="/", timeout=60)
    return set(r.stdout.split())
