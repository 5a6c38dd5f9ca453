"""The engine's layering, read from the source: what the core files may import, and no import circles."""
import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2] / "minigrad"
CORE = [ROOT / "tensor.py", *sorted((ROOT / "autograd").glob("*.py")), *sorted((ROOT / "ops").glob("*.py"))]
# speed machinery the engine must not reach for: it is plain array code. An op may ask the backends'
# registry (`minigrad.backends.find`, its one dispatch point: sigmoid, softmax, log_softmax), never import
# what is below it (a backend's kernels, the thread team, BLAS), and the tensor and autograd not even that
FORBIDDEN = {"minigrad.parallel", "minigrad.backends", "numba", "threadpoolctl"}
REGISTRY = {"minigrad.backends", "minigrad.backends.find"}  # what `from .. import backends` names


def imports(path):
    """Absolute names of every module `path` imports, at the top or inside a function."""
    package = ".".join(path.relative_to(ROOT.parent).with_suffix("").parts[:-1])
    names = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = package.split(".")[: len(package.split(".")) - node.level + 1] if node.level else []
            mod = ".".join(base + ([node.module] if node.module else []))
            names.add(mod)
            names.update(f"{mod}.{a.name}" for a in node.names)  # `from . import shape` names a module
    return names


def test_core_files_import_no_speed_machinery():
    found = {
        (str(p.relative_to(ROOT.parent)), name)
        for p in CORE for name in imports(p)
        if any(name == f or name.startswith(f + ".") for f in FORBIDDEN)
        and not (p.parent.name == "ops" and name in REGISTRY)
    }
    assert not found


def test_op_files_import_each_other_without_a_circle():
    ops = {p.stem: p for p in (ROOT / "ops").glob("*.py") if p.stem != "__init__"}
    graph = {m: {n.split(".")[2] for n in imports(p) if n.startswith("minigrad.ops.") and n.split(".")[2] in ops} - {m}
             for m, p in ops.items()}
    state = {}

    def visit(m, path):
        state[m] = "open"
        for n in sorted(graph[m]):
            assert state.get(n) != "open", f"import circle: {' -> '.join(path + [n])}"
            if n not in state:
                visit(n, path + [n])
        state[m] = "done"

    for m in sorted(graph):
        if m not in state:
            visit(m, [m])


def test_library_code_wraps_its_arrays_without_the_public_constructor():
    # `Tensor(array)` is PyTorch's legacy constructor (torch.Tensor(a): the default float dtype, a copy of any
    # other); the library's own arrays (a bool mask, float64 gradients, int ids) are wrapped as they are by
    # Tensor._wrap. A call of the public constructor in the library would convert them silently.
    calls = []
    for folder in (ROOT, ROOT.parent / "nn", ROOT.parent / "gpt"):
        for path in sorted(folder.rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text())):
                if isinstance(node, ast.Call):
                    f = node.func
                    name = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else None
                    if name == "Tensor":
                        calls.append(f"{path.relative_to(ROOT.parent)}:{node.lineno}")
    assert not calls
