"""Draw the backward graph behind a tensor: Mermaid, Graphviz DOT, or an SVG/PNG through `dot`.

    >>> import minigrad
    >>> from minigrad.viz import to_mermaid
    >>> x = minigrad.tensor([1.0, 2.0, 3.0], requires_grad=True)
    >>> print(to_mermaid((x * 2 + 1) ** 2))
    flowchart TD
        n0["PowBackward0"]
        n1["AddBackward0"]
        n2["MulBackward0"]
        n3["AccumulateGrad<br/>leaf (3,)"]
        n0 --> n1
        n1 --> n2
        n2 --> n3
        classDef leaf fill:#e8f4e8,stroke:#4a4
        class n3 leaf

Arrows point the way gradients flow: from the output (the loss) upstream to the leaves. Each
op is the node backward will run; each leaf that requires grad ends in an AccumulateGrad box
showing its shape (and its name, when `params={name: tensor}` is given). With `show_saved=True`
each node also lists what it saved for backward: name, shape, dtype and bytes.

`python -m minigrad.viz` prints the graph of one training step of a small MLP; see `--help`.
"""
import argparse
import importlib
import shutil
import subprocess
import sys
from pathlib import Path

from .autograd.function import AccumulateGrad
from .tensor import Tensor

__all__ = ["to_mermaid", "to_dot", "render", "graph_nodes"]


def graph_nodes(t):
    """The nodes of `t`'s backward graph, breadth-first from `t.grad_fn`, and the edges between
    them as (from_index, to_index) pairs, one per entry of `next_functions`."""
    if not isinstance(t, Tensor):
        raise TypeError(f"expected a Tensor, got {type(t).__name__}")
    if t.grad_fn is None:
        why = "it is a leaf" if t.requires_grad else "nothing it was computed from requires grad, or no_grad was on"
        raise ValueError(f"this tensor has no grad_fn, so there is no backward graph to draw ({why})")
    index = {id(t.grad_fn): 0}
    nodes, edges = [t.grad_fn], []
    i = 0
    while i < len(nodes):
        for nxt, _ in getattr(nodes[i], "next_functions", ()):
            if nxt is None:
                continue
            if id(nxt) not in index:
                index[id(nxt)] = len(nodes)
                nodes.append(nxt)
            edges.append((i, index[id(nxt)]))
        i += 1
    return nodes, edges


def _label_lines(node, show_saved, names):
    if isinstance(node, AccumulateGrad):
        v = node.variable
        name = names.get(id(v))
        shape = tuple(v.array.shape)
        return ["AccumulateGrad", f"{name} {shape}" if name else f"leaf {shape}"]
    lines = [node.name()]
    if show_saved:
        lines += _saved_lines(node)
    return lines


def _saved_lines(node):
    saved = getattr(node, "_saved", None) or []
    keys = node.__dict__.get("_names") or tuple(str(i) for i in range(len(saved)))
    out = []
    for key, s in zip(keys, saved):
        if s is None:
            continue
        if s.counter is None:
            out.append(f"{key}: (freed)")
            continue
        dims = tuple(s.shape)
        if s.tensor is not None:
            out.append(f"{key}: {dims} {s.dtype} {_fmt(s.nbytes())}")
        else:
            out.append(f"{key}: {dims} (packed by a hook)")
    return out


def _fmt(n):
    from .memory import format_bytes

    return format_bytes(n)


def _names(params):
    if not params:
        return {}
    items = params.items() if hasattr(params, "items") else params
    return {id(p): str(k) for k, p in items}


def to_mermaid(t, show_saved=False, params=None):
    """Mermaid `flowchart TD` text of `t`'s backward graph (paste into any Mermaid viewer, or a
    ```mermaid block of a markdown file)."""
    nodes, edges = graph_nodes(t)
    names = _names(params)
    out = ["flowchart TD"]
    leaves = []
    for i, node in enumerate(nodes):
        label = "<br/>".join(_mermaid_escape(s) for s in _label_lines(node, show_saved, names))
        out.append(f'    n{i}["{label}"]')
        if isinstance(node, AccumulateGrad):
            leaves.append(f"n{i}")
    out += [f"    n{a} --> n{b}" for a, b in edges]
    if leaves:
        out.append("    classDef leaf fill:#e8f4e8,stroke:#4a4")
        out.append(f"    class {','.join(leaves)} leaf")
    return "\n".join(out)


def _mermaid_escape(s):
    return s.replace("&", "#amp;").replace('"', "#quot;").replace("<", "#lt;").replace(">", "#gt;")


def to_dot(t, show_saved=False, params=None):
    """Graphviz DOT text of `t`'s backward graph (`dot -Tsvg graph.dot -o graph.svg`)."""
    nodes, edges = graph_nodes(t)
    names = _names(params)
    out = [
        "digraph backward {",
        '    node [shape=box, style="rounded,filled", fillcolor="#f4f4f8", fontname="Helvetica", fontsize=11];',
    ]
    for i, node in enumerate(nodes):
        label = "\\n".join(_dot_escape(s) for s in _label_lines(node, show_saved, names))
        extra = ', fillcolor="#e8f4e8", color="#44aa44"' if isinstance(node, AccumulateGrad) else ""
        out.append(f'    n{i} [label="{label}"{extra}];')
    out += [f"    n{a} -> n{b};" for a, b in edges]
    out.append("}")
    return "\n".join(out)


def _dot_escape(s):
    return s.replace("\\", "\\\\").replace('"', '\\"')


def render(t, path, show_saved=False, params=None, format=None):
    """Write `t`'s graph as an image with Graphviz's `dot` (format from the suffix: .svg, .png,
    .pdf; or `format=`). Returns the path. Raises RuntimeError when `dot` is not installed."""
    path = Path(path)
    fmt = (format or path.suffix.lstrip(".") or "svg").lower()
    exe = shutil.which("dot")
    if exe is None:
        raise RuntimeError(
            "rendering needs Graphviz's `dot` program, which is not on PATH (install Graphviz, e.g. "
            "`apt install graphviz` or `brew install graphviz`), or use to_mermaid() / to_dot() for text"
        )
    src = to_dot(t, show_saved=show_saved, params=params)
    r = subprocess.run([exe, f"-T{fmt}", "-o", str(path)], input=src, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"dot failed (exit {r.returncode}): {r.stderr.strip()}")
    return path


# ---- command line --------------------------------------------------------------------------
def demo_mlp(batch=4, n_in=4, hidden=4, n_out=1, seed=0):
    """One training step's loss of a 2-layer MLP written with raw minigrad ops (no nn), and its
    parameters by name: `(loss, {"w1": w1, ...})`."""
    import minigrad

    minigrad.manual_seed(seed)
    x = minigrad.randn(batch, n_in)
    y = minigrad.randn(batch, n_out)
    w1 = (minigrad.randn(n_in, hidden) * n_in ** -0.5).requires_grad_()
    b1 = minigrad.zeros(hidden, requires_grad=True)
    w2 = (minigrad.randn(hidden, n_out) * hidden ** -0.5).requires_grad_()
    b2 = minigrad.zeros(n_out, requires_grad=True)
    h = (x @ w1 + b1).relu()
    loss = ((h @ w2 + b2 - y) ** 2).mean()
    return loss, {"w1": w1, "b1": b1, "w2": w2, "b2": b2}


def _load(spec):
    mod, _, fn = spec.partition(":")
    if not mod or not fn:
        raise SystemExit(f"--module expects 'package.module:function', got {spec!r}")
    try:
        obj = getattr(importlib.import_module(mod), fn)
    except (ImportError, AttributeError) as e:
        raise SystemExit(f"cannot load {spec}: {e}") from None
    out = obj()
    if isinstance(out, Tensor):
        return out, None
    if isinstance(out, tuple) and len(out) == 2 and isinstance(out[0], Tensor):
        return out
    raise SystemExit(f"{spec} must return a loss Tensor or (loss, {{name: parameter}}), got {type(out).__name__}")


def main(argv=None):
    p = argparse.ArgumentParser(
        prog="python -m minigrad.viz",
        description="Draw the backward graph of one training step (a small MLP unless --module is given).",
    )
    p.add_argument("--module", metavar="PKG.MOD:FN",
                   help="a function taking no arguments that returns a loss tensor, or (loss, {name: param})")
    p.add_argument("--format", choices=["mermaid", "dot", "svg", "png"], default=None,
                   help="output format (default: from --out's suffix, else mermaid)")
    p.add_argument("--out", help="file to write (default: stdout for mermaid/dot; graph.svg/png otherwise)")
    p.add_argument("--show-saved", action="store_true", help="list each node's saved tensors")
    args = p.parse_args(argv)

    loss, params = _load(args.module) if args.module else demo_mlp()
    fmt = args.format or (Path(args.out).suffix.lstrip(".").lower() if args.out else "mermaid")
    fmt = {"mmd": "mermaid", "md": "mermaid", "gv": "dot"}.get(fmt, fmt)
    if fmt in ("svg", "png", "pdf"):
        out = args.out or f"graph.{fmt}"
        try:
            render(loss, out, show_saved=args.show_saved, params=params, format=fmt)
        except RuntimeError as e:
            print(f"error: {e}", file=sys.stderr)
            return 1
        print(f"wrote {out}")
        return 0
    if fmt not in ("mermaid", "dot"):
        print(f"error: unknown format {fmt!r} (mermaid, dot, svg, png)", file=sys.stderr)
        return 2
    text = (to_mermaid if fmt == "mermaid" else to_dot)(loss, show_saved=args.show_saved, params=params)
    if args.out:
        Path(args.out).write_text(text + "\n")
        print(f"wrote {args.out}")
    else:
        print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
