"""PyTorch's once-a-process warnings (TORCH_WARN_ONCE) go through minigrad's one mechanism (`warn_once`): said
the first time, every time under set_warn_always(True), as UserWarnings pointing at the user's line, with
PyTorch's text. PyTorch's side runs in a fresh interpreter (its once-flags cannot be reset); minigrad's runs
here with its record of warnings said cleared, and put back after."""
import subprocess
import sys
import warnings

import pytest

import minigrad

# each case: a call that warns; `L` is torch or minigrad
CASES = {
    "complex to real": "L.ones(2, dtype=L.cfloat).float()",
    "T of 0-D": "L.tensor(1.0).T",
    "T of 3-D": "L.ones(2, 2, 2).T",
    "T of 1-D": "L.ones(2).T",
    "add(alpha, other)": "L.ones(2).add(2, L.ones(2))",
    "index_reduce": "L.ones(3).index_reduce(0, L.tensor([0]), L.ones(1), 'prod')",
    "scatter reduce with src": "L.zeros(3).scatter(0, L.tensor([0]), L.ones(1), reduce='add')",
    "read-only array": "L.as_tensor(np.frombuffer(b'\\0' * 8, dtype=np.float32))",
    "float of requires_grad": "float(L.ones(1, requires_grad=True))",
    "set_default_tensor_type": "L.set_default_tensor_type(L.FloatTensor)",
    "list of arrays": "L.tensor([np.ones(2), np.ones(2)])",
}

# for each case: whether each of six calls warned (two, two under set_warn_always(True), two after), the
# (category, text) pairs said, and whether every warning points at the calling line
SAID = """
import warnings
import numpy as np

def said(L, cases):
    results = {}
    for name, call in cases.items():
        code = compile(call, "<case>", "exec")
        warned, texts, at_caller = [], set(), True
        for always in (False, False, True, True, False, False):
            L.set_warn_always(always)
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                exec(code, {"L": L, "np": np})
            L.set_warn_always(False)
            warned.append(len(caught) > 0)
            texts |= {(w.category.__name__, str(w.message).split(" (Triggered internally")[0]) for w in caught}
            at_caller = at_caller and all(w.filename == "<case>" and w.lineno == 1 for w in caught)
        results[name] = (warned, sorted(texts), at_caller)
    return results
"""


@pytest.fixture
def fresh():
    """minigrad as in a process that has said none of its once-a-process warnings; everything put back after."""
    said, always, default = set(minigrad._warn_once._said_once), minigrad.is_warn_always_enabled(), minigrad.get_default_dtype()
    minigrad._warn_once._said_once.clear()
    try:
        yield
    finally:
        minigrad._warn_once._said_once.clear()
        minigrad._warn_once._said_once.update(said)
        minigrad.set_warn_always(always)
        minigrad.set_default_dtype(default)


@pytest.fixture(scope="module")
def theirs():
    pytest.importorskip("torch")
    script = SAID + f"import torch\nprint(repr(said(torch, {CASES!r})))"
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    return eval(out.stdout.strip().splitlines()[-1])


def _ours():
    namespace = {}
    exec(SAID, namespace)
    with warnings.catch_warnings():
        return namespace["said"](minigrad, CASES)


@pytest.mark.parametrize("name", list(CASES))
def test_said_once_and_every_time_under_warn_always_as_pytorch(name, theirs, fresh):
    ours = _ours()[name]
    warned, texts, at_caller = theirs[name]
    # (PyTorch's, read: once, then every time; T of 1-D is said where T of 3-D was, already)
    assert warned == [name != "T of 1-D", False, True, True, False, False]
    assert ours[0] == warned
    assert ours[1] == texts and [c for c, _ in texts] == ["UserWarning"]
    assert ours[2]  # the user's line (PyTorch's set_default_tensor_type is a Python wrapper: its line is its own)
    assert at_caller or name == "set_default_tensor_type"


def test_warn_always_switch_is_recorded_and_read_back(fresh):
    minigrad.set_warn_always(1)
    assert minigrad.is_warn_always_enabled() is True
    minigrad.set_warn_always(0)
    assert minigrad.is_warn_always_enabled() is False
