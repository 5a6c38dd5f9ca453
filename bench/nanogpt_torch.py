"""nanoGPT's model in PyTorch: the reference that tests and benchmarks hold minigrad against.

Same architecture and parameter names as gpt/model.py, so a state dict maps one to one
(`load_from_minigrad`). PyTorch is a test/benchmark-time dependency only.
"""
import math

import torch
import torch.nn as tnn
import torch.nn.functional as TF


class CausalSelfAttention(tnn.Module):
    def __init__(self, c):
        super().__init__()
        self.c_attn = tnn.Linear(c.n_embd, 3 * c.n_embd, bias=c.bias)
        self.c_proj = tnn.Linear(c.n_embd, c.n_embd, bias=c.bias)
        self.resid_dropout = tnn.Dropout(c.dropout)
        self.n_head, self.n_embd, self.dropout = c.n_head, c.n_embd, c.dropout

    def forward(self, x):
        B, T, C = x.size()
        q, k, v = self.c_attn(x).split(self.n_embd, dim=2)
        q = q.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        k = k.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        v = v.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        y = TF.scaled_dot_product_attention(q, k, v, dropout_p=self.dropout if self.training else 0, is_causal=True)
        y = y.transpose(1, 2).contiguous().view(B, T, C)
        return self.resid_dropout(self.c_proj(y))


class MLP(tnn.Module):
    def __init__(self, c):
        super().__init__()
        self.c_fc = tnn.Linear(c.n_embd, 4 * c.n_embd, bias=c.bias)
        self.gelu = tnn.GELU()
        self.c_proj = tnn.Linear(4 * c.n_embd, c.n_embd, bias=c.bias)
        self.dropout = tnn.Dropout(c.dropout)

    def forward(self, x):
        return self.dropout(self.c_proj(self.gelu(self.c_fc(x))))


class Block(tnn.Module):
    def __init__(self, c):
        super().__init__()
        self.ln_1 = tnn.LayerNorm(c.n_embd, bias=c.bias)
        self.attn = CausalSelfAttention(c)
        self.ln_2 = tnn.LayerNorm(c.n_embd, bias=c.bias)
        self.mlp = MLP(c)

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp(self.ln_2(x))


class GPT(tnn.Module):
    """nanoGPT's GPT; `config` is any object with block_size, vocab_size, n_layer, n_head, n_embd, dropout, bias."""

    def __init__(self, c):
        super().__init__()
        self.config = c
        self.transformer = tnn.ModuleDict(dict(
            wte=tnn.Embedding(c.vocab_size, c.n_embd),
            wpe=tnn.Embedding(c.block_size, c.n_embd),
            drop=tnn.Dropout(c.dropout),
            h=tnn.ModuleList([Block(c) for _ in range(c.n_layer)]),
            ln_f=tnn.LayerNorm(c.n_embd, bias=c.bias),
        ))
        self.lm_head = tnn.Linear(c.n_embd, c.vocab_size, bias=False)
        self.transformer.wte.weight = self.lm_head.weight
        self.apply(self._init_weights)
        for pn, p in self.named_parameters():
            if pn.endswith("c_proj.weight"):
                torch.nn.init.normal_(p, mean=0.0, std=0.02 / math.sqrt(2 * c.n_layer))

    @staticmethod
    def _init_weights(m):
        if isinstance(m, tnn.Linear):
            torch.nn.init.normal_(m.weight, mean=0.0, std=0.02)
            if m.bias is not None:
                torch.nn.init.zeros_(m.bias)
        elif isinstance(m, tnn.Embedding):
            torch.nn.init.normal_(m.weight, mean=0.0, std=0.02)

    def forward(self, idx, targets=None):
        B, T = idx.size()
        pos = torch.arange(0, T, dtype=torch.long, device=idx.device)
        x = self.transformer.drop(self.transformer.wte(idx) + self.transformer.wpe(pos))
        for block in self.transformer.h:
            x = block(x)
        x = self.transformer.ln_f(x)
        if targets is not None:
            logits = self.lm_head(x)
            loss = TF.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1), ignore_index=-1)
        else:
            logits = self.lm_head(x[:, [-1], :])
            loss = None
        return logits, loss

    def configure_optimizers(self, weight_decay, learning_rate, betas):
        params = [p for p in self.parameters() if p.requires_grad]
        groups = [{"params": [p for p in params if p.dim() >= 2], "weight_decay": weight_decay},
                  {"params": [p for p in params if p.dim() < 2], "weight_decay": 0.0}]
        return torch.optim.AdamW(groups, lr=learning_rate, betas=betas)

    @torch.no_grad()
    def generate(self, idx, max_new_tokens, temperature=1.0, top_k=None):
        """nanoGPT's generation: the whole (cropped) context is recomputed for every new token."""
        for _ in range(max_new_tokens):
            idx_cond = idx if idx.size(1) <= self.config.block_size else idx[:, -self.config.block_size:]
            logits, _ = self(idx_cond)
            logits = logits[:, -1, :] / temperature
            if top_k is not None:
                v, _ = torch.topk(logits, min(top_k, logits.size(-1)))
                logits[logits < v[:, [-1]]] = -float("Inf")
            idx_next = torch.multinomial(TF.softmax(logits, dim=-1), num_samples=1)
            idx = torch.cat((idx, idx_next), dim=1)
        return idx


def load_from_minigrad(torch_model, minigrad_model):
    """Copy a minigrad GPT's weights into the PyTorch model (same names, same layouts)."""
    import numpy as np

    sd = {k: torch.from_numpy(np.array(v.array, copy=True)) for k, v in minigrad_model.state_dict().items()}
    missing, unexpected = torch_model.load_state_dict(sd, strict=False)
    assert not unexpected, unexpected
    assert all(k == "lm_head.weight" or k == "transformer.wte.weight" for k in missing), missing
    return torch_model
