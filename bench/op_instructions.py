"""Instructions per call of a small op (forward + backward) or per step of the small_models mlp kind,
counted by valgrind: on a shared machine, where timings of a few microseconds move by 2x between runs,
the count moves by well under 1%.

    python bench/op_instructions.py sigmoid cross_entropy      # ops of small_ops_bench.py --ops
    python bench/op_instructions.py mlp                        # small_models_bench.py's mlp step
    python bench/op_instructions.py transformer compiled:transformer   # a small kind, eager and replayed
    python bench/op_instructions.py --torch mlp cross_entropy  # PyTorch's same loops, on one thread
    python bench/op_instructions.py --pieces [mlp|poly] [--torch] [--n=200]   # a step statement by statement
                                   # (mlp: small_models_bench.py's, the default; poly: PyTorch examples' regression)

Each figure is (instructions of N calls - instructions of none) / N, both runs after the same warm-up,
with PYTHONHASHSEED fixed (dict and set layouts otherwise differ from run to run). Needs valgrind.
"""
import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SMALL_KINDS = ("rnn", "gru", "rnn_cells", "gru_cells", "bow", "transformer")  # compile_bench's (issue 30's)
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))


def framework(name):
    """minigrad under PyTorch's names, or PyTorch itself on one thread."""
    import small_models_bench

    if name == "minigrad":
        return small_models_bench.minigrad_as_torch()
    import torch

    torch.set_num_threads(1)
    return torch


def loop(fw, name, n):
    """Warm up, then run `name` n times on framework `fw`."""
    torch = framework(fw)
    if name == "mlp" or name.split(":")[-1] in SMALL_KINDS:  # (compiled:<kind>: its minigrad.compile replay)
        import small_models_bench

        torch.manual_seed(0)
        step = small_models_bench.build(torch, name.split(":")[-1])
        if name.startswith("compiled:"):
            step = torch.compile(step)
    else:
        from small_ops_bench import op_cases

        fn, leaves = op_cases(torch)[name]
        g = torch.ones_like(fn())

        def step():
            fn().backward(g)
            for t in leaves:
                t.grad = None

    for _ in range(50):
        step()
    for _ in range(n):
        step()


def mlp_pieces(torch):
    """The statements of small_models_bench.py's mlp step, each alone on the same tensors (name -> call), and
    the whole step. `backward` is the forward with the backward (less `forward` for the backward's own)."""
    import small_models_bench

    F = torch.nn.functional
    g = torch.Generator().manual_seed(0)
    X = torch.randint(0, 27, (2000, 3), generator=g)
    Y = torch.randint(0, 27, (2000,), generator=g)
    C, W1, b1 = torch.randn((27, 10), generator=g), torch.randn((30, 64), generator=g), torch.randn(64, generator=g)
    W2, b2 = torch.randn((64, 27), generator=g) * 0.01, torch.zeros(27)
    params = [C, W1, W2, b2, b1]
    for p in params:
        p.requires_grad = True
    ix = torch.randint(0, 2000, (32,), generator=g)
    Xi, Yi = X[ix], Y[ix]
    emb = C[Xi]
    x = emb.view(-1, 30)
    pre = x @ W1
    h = torch.tanh(pre + b1)
    logits = h @ W2 + b2

    def forward():
        ix = torch.randint(0, X.shape[0], (32,), generator=g)
        h = torch.tanh(C[X[ix]].view(-1, 30) @ W1 + b1)
        return F.cross_entropy(h @ W2 + b2, Y[ix])

    def backward():
        for p in params:
            p.grad = None
        forward().backward()

    def update():
        for p in params:
            p.data += -0.1 * p.grad

    def grad_none():
        for p in params:
            p.grad = None

    backward()
    return {
        "randint": lambda: torch.randint(0, X.shape[0], (32,), generator=g),
        "X[ix]": lambda: X[ix],
        "C[X[ix]]": lambda: C[Xi],
        ".view": lambda: emb.view(-1, 30),
        "@ W1": lambda: x @ W1,
        "+ b1": lambda: pre + b1,
        "tanh": lambda: torch.tanh(pre),
        "@ W2": lambda: h @ W2,
        "+ b2": lambda: logits + b2,  # (the same shapes as h @ W2 + b2's add)
        "Y[ix]": lambda: Y[ix],
        "cross_entropy": lambda: F.cross_entropy(logits, Yi),
        "forward": forward,
        "grad = None": grad_none,  # (on grads already None: the step's own setter calls clear a grad each)
        "backward": backward,  # (less forward and grad = None)
        "p.data += -0.1 * p.grad": update,
        "step": small_models_bench.build_mlp(torch),
    }


def poly_pieces(torch):
    """The statements of PyTorch's examples/regression step (tests/nn/test_dl_scripts39.py's poly_regression, in
    float32 as the example makes its batches): features [x, x^2, x^3, x^4] of a (32, 1) x by `cat`, a fixed
    target polynomial by `mm`, nn.Linear(4, 1), F.smooth_l1_loss, fc.zero_grad(), the update by
    `param.data.add_(-0.1 * param.grad)`; each alone on the same tensors (name -> call), and the whole step."""
    F = torch.nn.functional
    torch.manual_seed(0)
    W_target, b_target = torch.randn(4, 1) * 5, torch.randn(1) * 5
    fc = torch.nn.Linear(4, 1)
    x1 = torch.randn(32)
    x = x1.unsqueeze(1)
    powers = [x ** i for i in range(1, 5)]

    def make_features(x):
        x = x.unsqueeze(1)
        return torch.cat([x ** i for i in range(1, 5)], 1)

    def f(x):
        return x.mm(W_target) + b_target.item()

    def get_batch():
        x = make_features(torch.randn(32))
        return x, f(x)

    batch_x, batch_y = get_batch()
    out = fc(batch_x)

    def backward():
        fc.zero_grad()
        F.smooth_l1_loss(fc(batch_x), batch_y).backward()

    def update():
        for param in fc.parameters():
            param.data.add_(-0.1 * param.grad)

    def step():
        batch_x, batch_y = get_batch()
        fc.zero_grad()
        output = F.smooth_l1_loss(fc(batch_x), batch_y)
        loss = output.item()
        output.backward()
        for param in fc.parameters():
            param.data.add_(-0.1 * param.grad)
        return loss

    backward()
    loss = F.smooth_l1_loss(out, batch_y)
    return {
        "randn": lambda: torch.randn(32),
        "x ** 2": lambda: x ** 2,
        "x ** 3": lambda: x ** 3,
        "x ** 4": lambda: x ** 4,
        "cat": lambda: torch.cat(powers, 1),
        "make_features": lambda: make_features(x1),
        "f(x)": lambda: f(batch_x),
        "get_batch": get_batch,
        "fc": lambda: fc(batch_x),
        "smooth_l1": lambda: F.smooth_l1_loss(out, batch_y),
        ".item()": loss.item,
        "zero_grad": fc.zero_grad,  # (on grads already set: the step's own)
        "backward": backward,  # (less fc, smooth_l1 and zero_grad)
        "update": update,
        "step": step,
    }


PIECES = {"mlp": mlp_pieces, "poly": poly_pieces}


def pieces(kind, fw, n=200):
    """Each piece of PIECES[kind] n times, counted apart: callgrind dumps its counts at each os.getppid()."""
    import shutil
    import tempfile

    if sys.argv[1:2] == ["--pieces-loop"]:
        calls = PIECES[kind](framework(fw))
        calls["(loop)"] = lambda: None
        for call in calls.values():
            for _ in range(50):
                call()
        for call in calls.values():
            os.getppid()
            for _ in range(n):
                call()
        os.getppid()
        return
    names = PIECES_NAMES[kind]
    out = tempfile.mkdtemp()
    env = dict(os.environ, PYTHONHASHSEED="0", OMP_NUM_THREADS="1", MINIGRAD_NUM_THREADS="1", PYTHONPATH=str(ROOT))
    subprocess.run(["valgrind", "--tool=callgrind", "--dump-before=getppid", f"--callgrind-out-file={out}/cg",
                    sys.executable, __file__, "--pieces-loop", kind, fw, str(n)], env=env, capture_output=True,
                   check=True)
    totals = [int(re.search(r"^(?:totals|summary): (\d+)", Path(out, f"cg.{i}").read_text(), re.M).group(1))
              for i in range(2, 2 + len(names))]
    shutil.rmtree(out)
    overhead = totals[-1] / n
    for name, total in zip(names, totals):
        print(f"{name:<25}{round(total / n - overhead):>10}", flush=True)


mlp_pieces_names = ["randint", "X[ix]", "C[X[ix]]", ".view", "@ W1", "+ b1", "tanh", "@ W2", "+ b2", "Y[ix]",
                    "cross_entropy", "forward", "grad = None", "backward", "p.data += -0.1 * p.grad", "step", "(loop)"]
poly_pieces_names = ["randn", "x ** 2", "x ** 3", "x ** 4", "cat", "make_features", "f(x)", "get_batch", "fc",
                     "smooth_l1", ".item()", "zero_grad", "backward", "update", "step", "(loop)"]
PIECES_NAMES = {"mlp": mlp_pieces_names, "poly": poly_pieces_names}


def count(fw, name, n):
    env = dict(os.environ, PYTHONHASHSEED="0", OMP_NUM_THREADS="1", MINIGRAD_NUM_THREADS="1", PYTHONPATH=str(ROOT))
    cmd = ["valgrind", "--tool=cachegrind", "--cache-sim=no", "--cachegrind-out-file=/dev/null", sys.executable,
           __file__, "--loop", fw, name, str(n)]
    out = subprocess.run(cmd, env=env, capture_output=True, text=True, check=True).stderr
    return int(re.search(r"I\s+refs:\s+([\d,]+)", out).group(1).replace(",", ""))


def main():
    args = sys.argv[1:]
    if args[:1] == ["--loop"]:
        return loop(args[1], args[2], int(args[3]))
    if args[:1] == ["--pieces-loop"]:
        return pieces(args[1], args[2], int(args[3]))
    if args[:1] == ["--pieces"]:
        kind = next((a for a in args[1:] if a in PIECES), "mlp")
        n = next((int(a[4:]) for a in args[1:] if a.startswith("--n=")), 200)
        return pieces(kind, "torch" if "--torch" in args else "minigrad", n)
    fw = "torch" if args[:1] == ["--torch"] else "minigrad"
    for name in args[fw == "torch":]:
        n = 300 if name == "mlp" else 100 if name.split(":")[-1] in SMALL_KINDS else 1000
        print(f"{name:<15}{(count(fw, name, n) - count(fw, name, 0)) // n:>10}", flush=True)


if __name__ == "__main__":
    main()
