"""A GPT language model, nanoGPT's architecture on minigrad.

Token + learned position embeddings, `n_layer` pre-LayerNorm blocks of causal self-attention
(one fused q/k/v projection) and a 4x GELU MLP, a final LayerNorm and an `lm_head` tied to the
token embedding. Parameter names follow nanoGPT and GPT-2 (`transformer.h.0.attn.c_attn.weight`)
so weights map one to one onto a PyTorch nanoGPT model. What each nn.functional op the model calls
computes, written with minigrad's primitive ops: nn/_functional/reference.py.
"""
import math
from dataclasses import dataclass

import numpy as np

import minigrad
import nn
import nn.functional as F
from minigrad import Tensor
from minigrad.device import array_module
from minigrad.utils.checkpoint import checkpoint

from gpt import block_step
from gpt.kv_cache import CachePositions, KVCache


@dataclass
class GPTConfig:
    """Model shape. `vocab_size` 50304 is GPT-2's 50257 padded up to a multiple of 64."""

    block_size: int = 1024
    vocab_size: int = 50304
    n_layer: int = 12
    n_head: int = 12
    n_embd: int = 768
    dropout: float = 0.0
    bias: bool = True  # biases in Linear and LayerNorm layers, as GPT-2; False is a bit better and faster
    grad_checkpoint: bool = False  # recompute each block's activations in backward instead of keeping them
    activation: str = "gelu"  # the MLP's: "gelu" (exact, nanoGPT's) or "gelu_tanh" (GPT-2's tanh approximation)

    def __post_init__(self):
        for name in ("block_size", "vocab_size", "n_layer", "n_head", "n_embd"):
            v = getattr(self, name)
            if not isinstance(v, int) or v <= 0:
                raise ValueError(f"GPTConfig.{name} must be a positive int, got {v!r}")
        if self.n_embd % self.n_head:
            raise ValueError(f"n_embd ({self.n_embd}) must be divisible by n_head ({self.n_head})")
        if not 0.0 <= self.dropout < 1.0:
            raise ValueError(f"dropout must be in [0, 1), got {self.dropout}")
        if self.activation not in GELU_APPROXIMATE:
            raise ValueError(f"activation must be one of {', '.join(GELU_APPROXIMATE)}, got {self.activation!r}")


# GPTConfig.activation -> nn.GELU's `approximate`
GELU_APPROXIMATE = {"gelu": "none", "gelu_tanh": "tanh"}


class CausalSelfAttention(nn.Module):
    """Multi-head causal self-attention: (B, T, C) -> (B, T, C)."""

    def __init__(self, config):
        super().__init__()
        self.c_attn = nn.Linear(config.n_embd, 3 * config.n_embd, bias=config.bias)
        self.c_proj = nn.Linear(config.n_embd, config.n_embd, bias=config.bias)
        self.resid_dropout = nn.Dropout(config.dropout)
        self.n_head = config.n_head
        self.n_embd = config.n_embd
        self.dropout = config.dropout

    def forward(self, x, cache=None):
        """x: (B, T, C). `cache`, when generating, is a KVCache layer slot to read and extend."""
        B, T, C = x.shape
        hs = C // self.n_head
        # (B, T, 3C) -> q, k, v each (B, nh, T, hs): heads become a batch dim for the attention matmuls.
        # (nanoGPT splits, then views and transposes each: the same three views, in 7 ops where this is 3)
        q, k, v = self.c_attn(x).view(B, T, 3, self.n_head, hs).permute(2, 0, 3, 1, 4).unbind(0)
        if cache is not None:
            k, v = cache.append(k, v)
        # a single new query attends to every cached key; a prompt (T > 1) fills an empty cache causally
        causal = T > 1
        y = F.scaled_dot_product_attention(
            q, k, v, dropout_p=self.dropout if self.training else 0.0, is_causal=causal
        )
        y = y.transpose(1, 2).reshape(B, T, C)
        return self.resid_dropout(self.c_proj(y))


class MLP(nn.Module):
    """Position-wise feed-forward: (B, T, C) -> (B, T, 4C) -> GELU -> (B, T, C)."""

    def __init__(self, config):
        super().__init__()
        self.c_fc = nn.Linear(config.n_embd, 4 * config.n_embd, bias=config.bias)
        self.gelu = nn.GELU(approximate=GELU_APPROXIMATE[config.activation])
        self.c_proj = nn.Linear(4 * config.n_embd, config.n_embd, bias=config.bias)
        self.dropout = nn.Dropout(config.dropout)

    def forward(self, x):
        return self.dropout(self.c_proj(self.gelu(self.c_fc(x))))


class Block(nn.Module):
    """A pre-LayerNorm transformer block: x + attn(ln(x)), then x + mlp(ln(x))."""

    def __init__(self, config):
        super().__init__()
        self.ln_1 = nn.LayerNorm(config.n_embd, bias=config.bias)
        self.attn = CausalSelfAttention(config)
        self.ln_2 = nn.LayerNorm(config.n_embd, bias=config.bias)
        self.mlp = MLP(config)

    def forward(self, x, cache=None):
        if cache is not None:  # a generated token: these lines as one op, where one takes it (gpt/block_step.py)
            y = block_step.run(self, x, cache)
            if y is not None:
                return y
        x = x + self.attn(self.ln_1(x), cache)
        x = x + self.mlp(self.ln_2(x))
        return x


class _CompiledDecode:
    """Where a model keeps its compiled generation step. A copy of the model (copy.deepcopy, pickle)
    starts with none: the captured programs read the original's parameters."""

    def __init__(self):
        self.step = None

    def __deepcopy__(self, memo):
        return _CompiledDecode()

    def __reduce__(self):
        return _CompiledDecode, ()


class GPT(nn.Module):
    """The language model: idx (B, T) int64 token ids -> logits (B, T, vocab_size)."""

    def __init__(self, config):
        super().__init__()
        self.config = config
        self.transformer = nn.ModuleDict(dict(
            wte=nn.Embedding(config.vocab_size, config.n_embd),
            wpe=nn.Embedding(config.block_size, config.n_embd),
            drop=nn.Dropout(config.dropout),
            h=nn.ModuleList([Block(config) for _ in range(config.n_layer)]),
            ln_f=nn.LayerNorm(config.n_embd, bias=config.bias),
        ))
        self.lm_head = nn.Linear(config.n_embd, config.vocab_size, bias=False)
        # weight tying: the output projection is the token embedding (one Parameter, two names)
        self.transformer.wte.weight = self.lm_head.weight

        self.apply(self._init_weights)
        # GPT-2's scaled init of the projections that write into the residual stream
        for name, p in self.named_parameters():
            if name.endswith("c_proj.weight"):
                nn.init.normal_(p, mean=0.0, std=0.02 / math.sqrt(2 * config.n_layer))

    @staticmethod
    def _init_weights(module):
        if isinstance(module, nn.Linear):
            nn.init.normal_(module.weight, mean=0.0, std=0.02)
            if module.bias is not None:
                nn.init.zeros_(module.bias)
        elif isinstance(module, nn.Embedding):
            nn.init.normal_(module.weight, mean=0.0, std=0.02)

    def get_num_params(self, non_embedding=True):
        """Number of parameters; position embeddings are left out by default (nanoGPT's count).
        The token embedding counts, being the lm_head's weight too."""
        n = sum(p.numel() for p in self.parameters())
        if non_embedding:
            n -= self.transformer.wpe.weight.numel()
        return n

    def forward(self, idx, targets=None, cache=None):
        """idx: (B, T) int64. Returns (logits, loss).

        With targets (B, T): logits (B, T, V) and the mean cross-entropy (targets == -1 are ignored).
        Without: logits of the last position only, (B, 1, V), and loss None.
        `cache` (a KVCache) makes positions continue after the cached ones.
        """
        if not isinstance(idx, minigrad.Tensor):
            idx = minigrad.tensor(np.asarray(idx), dtype=minigrad.int64)
        if idx.ndim != 2:
            raise ValueError(f"GPT expects idx of shape (batch, time), got shape {list(idx.shape)}")
        B, T = idx.shape
        if cache is not None:
            pos = CachePositions.apply(idx, cache, self.config.block_size)
        elif T > self.config.block_size:
            raise ValueError(f"Cannot forward sequence of length {T}, block size is only {self.config.block_size}")
        else:
            pos = minigrad.arange(T, device=idx.device)
        x = self.transformer.drop(self.transformer.wte(idx) + self.transformer.wpe(pos))
        for i, block in enumerate(self.transformer.h):
            if cache is not None:
                x = block(x, cache.layers[i])
            elif self.config.grad_checkpoint and self.training and minigrad.is_grad_enabled():
                x = checkpoint(block, x, use_reentrant=False)
            else:
                x = block(x)
        x = self.transformer.ln_f(x)
        if targets is not None:
            logits = self.lm_head(x)
            loss = F.cross_entropy(logits.view(B * T, -1), targets.reshape(B * T), ignore_index=-1)
            return logits, loss
        # inference: only the last position's logits are needed (a slice keeps the time dim, as a view)
        return self.lm_head(x[:, -1:, :]), None

    @classmethod
    def from_pretrained(cls, name_or_path, override_args=None):
        """OpenAI's GPT-2 ("gpt2", "gpt2-medium", "gpt2-large", "gpt2-xl", found in a local cache) or
        any folder of config.json + model.safetensors in Hugging Face's GPT-2 layout. override_args
        may set dropout and grad_checkpoint. See gpt/pretrained.py and docs/pretrained.md."""
        from gpt.pretrained import load_pretrained  # (gpt.pretrained imports this module)

        return load_pretrained(name_or_path, override_args)

    def save_pretrained(self, directory):
        """Write config.json + model.safetensors in Hugging Face's GPT-2 layout (GPT2LMHeadModel loads it)."""
        from gpt.pretrained import save_pretrained

        save_pretrained(self, directory)

    def crop_block_size(self, block_size):
        """Shrink the context length (e.g. to fine-tune a pretrained model on shorter blocks)."""
        if block_size > self.config.block_size:
            raise ValueError(f"can only crop the block size down, not from {self.config.block_size} to {block_size}")
        self.config.block_size = block_size
        wpe = self.transformer.wpe
        wpe.weight = nn.Parameter(wpe.weight.detach()[:block_size].clone())
        wpe.num_embeddings = block_size

    def configure_optimizers(self, weight_decay, learning_rate, betas, device_type=None):
        """AdamW where 2-D and larger tensors (matmul weights, embeddings) decay and the rest do not."""
        params = [p for p in self.parameters() if p.requires_grad]
        decay = [p for p in params if p.ndim >= 2]
        no_decay = [p for p in params if p.ndim < 2]
        groups = [
            {"params": decay, "weight_decay": weight_decay},
            {"params": no_decay, "weight_decay": 0.0},
        ]
        return nn.optim.AdamW(groups, lr=learning_rate, betas=betas)

    def flops_per_token(self):
        """Training FLOPs per token as nanoGPT (PaLM appendix B) counts them: 6N + 12 L H Q T."""
        cfg = self.config
        N = self.get_num_params()
        L, H, Q, T = cfg.n_layer, cfg.n_head, cfg.n_embd // cfg.n_head, cfg.block_size
        return 6 * N + 12 * L * H * Q * T

    def estimate_mfu(self, fwdbwd_per_iter, dt, peak_flops):
        """Model FLOPs utilisation: achieved FLOP/s over `peak_flops` (measured or given)."""
        flops_per_iter = self.flops_per_token() * self.config.block_size * fwdbwd_per_iter
        return flops_per_iter / dt / peak_flops

    @minigrad.no_grad()
    def generate(self, idx, max_new_tokens, temperature=1.0, top_k=None, stop_token=None, use_cache=True,
                 compile=True):
        """Continue idx (B, T) by `max_new_tokens` tokens; returns (B, T + new) int64.

        temperature 0 is greedy; top_k keeps the k most likely tokens; generation stops early once
        every row has produced `stop_token`. See `generate_tokens` for the cache's behaviour and `compile`.
        """
        if not isinstance(idx, minigrad.Tensor):
            idx = minigrad.tensor(np.asarray(idx), dtype=minigrad.int64)
        out = [idx]
        for tok in self.generate_tokens(idx, max_new_tokens, temperature, top_k, stop_token, use_cache, compile):
            out.append(tok)
        return minigrad.cat(out, dim=1)

    @minigrad.no_grad()
    def generate_tokens(self, idx, max_new_tokens, temperature=1.0, top_k=None, stop_token=None, use_cache=True,
                        compile=True):
        """Yield new tokens one step at a time, each (B, 1) int64 (for streaming to a terminal).

        With the cache, each step runs the model on one position. While the sequence fits in
        block_size its logits are those of recomputing the whole context (nanoGPT's way,
        use_cache=False) up to float rounding: the same tokens (tested). When it is full, the cache is
        rebuilt from the last block_size // 2 tokens, so positions never exceed block_size and the
        rebuild costs O(1) per token amortised; the uncached path instead slides its window by one
        token per step.

        Each cached step is the model's own `forward(idx, cache)` and the sampling (`_decode`), run
        through minigrad.compile: captured once per model, then replayed, which skips the per-op
        bookkeeping a one-token step would otherwise spend most of its time on (docs/compile.md).
        compile=False runs every step eagerly: the same tokens, slower.
        """
        if not isinstance(idx, minigrad.Tensor):
            idx = minigrad.tensor(np.asarray(idx), dtype=minigrad.int64)
        if idx.ndim != 2 or idx.shape[1] == 0:
            raise ValueError(f"generate expects a non-empty (batch, time) prompt, got shape {list(idx.shape)}")
        V = self.config.vocab_size
        lo, hi = int(idx.array.min()), int(idx.array.max())
        if lo < 0 or hi >= V:
            bad = lo if lo < 0 else hi
            raise ValueError(f"token id {bad} is outside the vocabulary [0, {V})")
        bs = self.config.block_size
        B, n = idx.shape
        # every token so far, written in place: seq[:, :n] (no growing concatenation per token)
        seq = array_module(idx.array).empty((B, n + max_new_tokens), dtype=np.int64)
        seq[:, :n] = idx.array
        if temperature != 0:  # a 0-d tensor: the compiled step reads its value at each call, so one
            w = self.lm_head.weight  # program serves every temperature (a number would be baked in)
            temperature = minigrad.tensor(float(temperature), dtype=w.dtype, device=w.device)
        was_training = self.training
        self.eval()
        try:
            cache = KVCache(self.config.n_layer) if use_cache else None
            decode = self._compiled_decode() if use_cache and compile else self._decode
            done = np.zeros(B, dtype=bool)
            pending = None  # the token not yet fed to the cached model
            for _ in range(max_new_tokens):
                if cache is None:
                    tok = self._decode(Tensor._wrap(seq[:, max(0, n - bs):n]), None, temperature, top_k)
                else:
                    refill = pending is None or cache.length + 1 > bs
                    if refill:
                        cache.reset()  # (re)fill the cache with the prompt, or the recent tokens once it is full
                        keep = bs // 2 if n > bs else bs
                        pending = seq[:, max(0, n - keep):n]
                    # replayed: one token a step and the refills of block_size // 2 tokens (two shapes,
                    # each captured once); a prompt of several tokens runs eagerly (prompts differ in length)
                    step = self._decode if refill and n == idx.shape[1] and pending.shape[1] > 1 else decode
                    tok = step(Tensor._wrap(pending), cache, temperature, top_k)
                seq[:, n] = tok.array[:, 0]
                pending = seq[:, n:n + 1]
                n += 1
                yield tok
                if stop_token is not None:
                    done |= tok.array[:, 0] == stop_token
                    if done.all():
                        return
        finally:
            self.train(was_training)

    def _decode(self, idx, cache, temperature, top_k):
        """The next token (B, 1) after idx (B, T), extending `cache` (a KVCache or None): the model's
        forward and the sampling, the step generation captures and replays."""
        logits, _ = self(idx, cache=cache)
        return self._sample(logits[:, -1, :], temperature, top_k)

    def _compiled_decode(self):
        """`_decode`, compiled once per model and kept with it (its programs read this model's
        parameters, so a copy of the model compiles its own). A new batch size or top_k, or greedy
        sampling, captures again, quietly: those are generate's arguments, not a user's compiled call.
        (The temperature is a tensor input: any value replays the same program.)"""
        holder = self.__dict__.get("_decode_holder")
        if holder is None:
            holder = self.__dict__["_decode_holder"] = _CompiledDecode()
        if holder.step is None:
            holder.step = minigrad.compile(self._decode)
            holder.step.warn = False
            # two programs per (batch size, top_k, greedy or not): room for a notebook's worth of settings
            # before a new one would run eagerly
            holder.step.cache_size_limit = 64
        return holder.step

    @staticmethod
    def _sample(logits, temperature, top_k):
        """One token per row from logits (B, V): greedy at temperature 0, else softmax sampling of
        logits / temperature (a 0-d tensor from generate_tokens; dividing by 1 changes no bit)."""
        if not isinstance(temperature, Tensor) and temperature == 0:
            return logits.argmax(dim=-1, keepdim=True)
        logits = logits / temperature
        if top_k is not None and top_k < logits.shape[-1]:  # (k >= V keeps every token: nothing to filter)
            v, _ = minigrad.topk(logits, top_k)
            logits = logits.masked_fill(logits < v[:, [-1]], float("-inf"))
        probs = F.softmax(logits, dim=-1)
        return minigrad.multinomial(probs, num_samples=1)

