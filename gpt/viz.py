"""One training step of a small GPT, for drawing its backward graph:

    python -m minigrad.viz --module gpt.viz:training_step --out gpt.svg --show-saved
    python -m minigrad.viz --module gpt.viz:training_step          # Mermaid text
"""
import numpy as np

import minigrad
from gpt.model import GPT, GPTConfig


def training_step(n_layer=1, n_head=2, n_embd=16, block_size=8, vocab_size=32, batch_size=2):
    """(loss, {name: parameter}) of one forward pass of a GPT of the given (small) shape."""
    minigrad.manual_seed(0)
    model = GPT(GPTConfig(block_size=block_size, vocab_size=vocab_size, n_layer=n_layer, n_head=n_head,
                          n_embd=n_embd, bias=False))
    rng = np.random.default_rng(0)
    x = minigrad.tensor(rng.integers(0, vocab_size, (batch_size, block_size)))
    y = minigrad.tensor(rng.integers(0, vocab_size, (batch_size, block_size)))
    _, loss = model(x, y)
    return loss, dict(model.named_parameters())
