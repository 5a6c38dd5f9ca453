"""How much of the project a learner's training step runs: the distinct lines (and files) of minigrad,
nn and gpt that one reference-mode step executes, counted with sys.settrace.

    MINIGRAD_KERNELS=reference python bench/trace_lines.py [--list]

Traced: building a small GPT (dropout 0.1) and AdamW, then two training steps (forward, backward,
step, zero_grad), after the imports. `--list` prints the files with their line counts.
"""
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
os.environ.setdefault("MINIGRAD_KERNELS", "reference")

import minigrad  # noqa: E402
import nn  # noqa: E402
from gpt.model import GPT, GPTConfig  # noqa: E402

PACKAGES = tuple(os.path.join(ROOT, p) + os.sep for p in ("minigrad", "nn", "gpt"))


def run():
    minigrad.manual_seed(0)
    model = GPT(GPTConfig(block_size=16, vocab_size=32, n_layer=2, n_head=2, n_embd=16, dropout=0.1))
    optimizer = nn.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.1)
    x = minigrad.randint(0, 32, (2, 16))
    y = minigrad.randint(0, 32, (2, 16))
    for _ in range(2):
        _, loss = model(x, y)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)


def main():
    lines = set()

    def tracer(frame, event, arg):
        if not frame.f_code.co_filename.startswith(PACKAGES):
            return None  # not ours: no line events inside it (calls it makes into ours are still seen)
        if event == "line":
            lines.add((frame.f_code.co_filename, frame.f_lineno))
        return tracer

    sys.settrace(tracer)
    try:
        run()
    finally:
        sys.settrace(None)
    files = {}
    for f, _ in lines:
        files[f] = files.get(f, 0) + 1
    print(f"MINIGRAD_KERNELS={minigrad.get_kernels()}: {len(lines)} lines in {len(files)} files")
    if "--list" in sys.argv:
        for f, n in sorted(files.items(), key=lambda kv: -kv[1]):
            print(f"{n:6d}  {os.path.relpath(f, ROOT)}")


if __name__ == "__main__":
    main()
