"""sample.py's logic: load a training checkpoint and stream generated text to the terminal."""
import argparse
import math
import os
import sys
from pathlib import Path

import minigrad
from gpt.console import gib, memory_bytes
from gpt.model import GPT, GPTConfig
from gpt.pretrained import for_sampling
from gpt.tokenizer import DataError, tokenizer_from_meta
from gpt.checkpoint import BEST_NAME, CKPT_NAME, TrainError, load_checkpoint


MIN_TEMPERATURE = 1e-6
# what one sample's tokens take while it is generated: the model's int64 sequence and the ids decoded
BYTES_PER_TOKEN = 8 + 40


class _Parser(argparse.ArgumentParser):
    """argparse with one-line errors (its own print the usage first)."""

    def error(self, message):
        self.exit(2, f"{self.prog}: error: {message} (see --help)\n")


def _flag_bool(text):
    """A True/False flag value as nanoGPT's configurator takes it (`--compile=False`)."""
    value = {"true": True, "1": True, "false": False, "0": False}.get(text.lower())
    if value is None:
        raise argparse.ArgumentTypeError(f"expected True or False, got {text!r}")
    return value


def build_parser():
    p = _Parser(
        prog="sample.py",
        description="Generate text from a model trained by train.py.",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    p.add_argument("--init_from", default="resume",
                   help="resume: the checkpoint in --out_dir; or gpt2, gpt2-medium, gpt2-large, gpt2-xl, or a folder "
                        "of config.json + model.safetensors (GPT-2's layout)")
    p.add_argument("--out_dir", default="out", help="folder holding the checkpoint train.py wrote")
    p.add_argument("--ckpt", default="latest", choices=["latest", "best"], help="which checkpoint to load")
    p.add_argument("--start", default="\n",
                   help="the prompt: text, or FILE:path to read it from a file (escapes like \\n are understood)")
    p.add_argument("--num_samples", type=int, default=3, help="how many samples to draw")
    p.add_argument("--max_new_tokens", type=int, default=500, help="tokens generated per sample")
    p.add_argument("--temperature", type=float, default=0.8,
                   help="1.0 samples the model's distribution; lower is more conservative; 0 is greedy")
    p.add_argument("--top_k", type=int, default=200, help="keep only the k most likely tokens (0: all)")
    p.add_argument("--seed", type=int, default=1337, help="random seed")
    p.add_argument("--device", default="cpu", choices=["cpu", "cuda"], help="where to run")
    p.add_argument("--no_cache", action="store_true", help="recompute the whole context per token (nanoGPT's way)")
    p.add_argument("--gpt2_tiktoken", default=None, help="path of GPT-2's gpt2.tiktoken ranks file (BPE models)")
    p.add_argument("--compile", type=_flag_bool, nargs="?", const=True, default=None,
                   help="nanoGPT's torch.compile knob. Here the cached generation step is captured once and "
                        "replayed (minigrad.compile, docs/compile.md) unless --compile=False, which runs it "
                        "eagerly: the same tokens, slower")
    # nanoGPT's sample.py knob that changes nothing here, accepted so that its command lines run (a note says so)
    p.add_argument("--dtype", default="float32", choices=["float32", "bfloat16", "float16"],
                   help="nanoGPT's knob: minigrad samples in the checkpoint's float32")
    return p


def check_args(args):
    """The first nonsensical setting, as one line (or None)."""
    if not (math.isfinite(args.temperature) and args.temperature >= 0):
        return f"--temperature must be 0 (greedy) or more, got {args.temperature}"
    if 0 < args.temperature < MIN_TEMPERATURE:  # the logits divided by it overflow float32
        return (f"--temperature={args.temperature:g} is too small to divide the logits by: use 0 (greedy, which is "
                f"what it would sample) or at least {MIN_TEMPERATURE:g}")
    for name in ("num_samples", "max_new_tokens"):
        if getattr(args, name) < 1:
            return f"--{name} must be at least 1, got {getattr(args, name)}"
    if args.top_k < 0:
        return f"--top_k must be 0 (all tokens) or more, got {args.top_k}"
    return None


def knob_notes(args):
    """One line per nanoGPT knob given that does nothing here."""
    notes = []
    if args.compile is True and args.no_cache:  # (given: by default the cached step is compiled)
        notes.append("--compile=True is not used with --no_cache: only the cached generation step is compiled")
    if args.dtype != "float32":
        notes.append(f"--dtype={args.dtype} is not used: minigrad samples in float32")
    return notes


def read_prompt(start):
    """The prompt text: `FILE:path` reads a file; otherwise backslash escapes are interpreted."""
    if start.startswith("FILE:"):
        path = Path(start[5:])
        if path.is_dir():
            raise DataError(f"prompt file {path} is a folder: give --start=FILE:path a text file")
        if not path.exists():
            raise DataError(f"prompt file {path} does not exist")
        try:
            return path.read_text(encoding="utf-8")
        except UnicodeDecodeError as e:
            raise DataError(f"prompt file {path} is not UTF-8 text (byte {e.start}: {e.reason})") from None
        except OSError as e:
            raise DataError(f"cannot read prompt file {path}: {e.strerror or e}") from None
    return start.encode("utf-8").decode("unicode_escape") if "\\" in start else start


def check_memory(max_new_tokens, prompt_tokens, block_size, device):
    """A one-line error when a sample cannot be held in this machine's memory (the model sees
    only its last block_size tokens, but the sample keeps every one)."""
    need, have = (max_new_tokens + prompt_tokens) * BYTES_PER_TOKEN, memory_bytes(device)
    if have and need > have:
        raise DataError(f"--max_new_tokens={max_new_tokens} needs at least {gib(need)} of memory to hold one sample, more "
                        f"than the {gib(have)} here: generate fewer tokens (the model's context is its last "
                        f"{block_size} tokens: a longer sample is not a longer context)")


def load_model(out_dir, which="latest", device="cpu"):
    """The GPT and checkpoint dict from out_dir (ckpt.safetensors or best.safetensors)."""
    out_dir = Path(out_dir)
    if out_dir.exists() and not out_dir.is_dir():
        raise TrainError(f"out_dir {out_dir} is a file, not the folder train.py wrote")
    if not out_dir.is_dir():
        raise TrainError(f"out_dir {out_dir} does not exist: train a model first (python train.py)")
    ckpt = load_checkpoint(out_dir / (BEST_NAME if which == "best" else CKPT_NAME))
    args = dict(ckpt["model_args"])
    args["dropout"] = 0.0
    model = GPT(GPTConfig(**args))
    try:
        model.load_state_dict(ckpt["model"])
    except (RuntimeError, ValueError, KeyError) as e:
        raise TrainError(f"checkpoint in {out_dir} does not fit its own model arguments: {e}") from None
    model.eval()
    if device != "cpu":
        model.to(device)
    return model, ckpt


def stream_sample(model, tok, prompt_ids, args, write):
    """Generate one sample, writing decoded text as tokens arrive."""
    idx = minigrad.tensor([prompt_ids], dtype=minigrad.int64, device=args.device)
    ids, shown = [], ""
    for t in model.generate_tokens(idx, args.max_new_tokens, temperature=args.temperature,
                                   top_k=args.top_k or None, use_cache=not args.no_cache, compile=args.compile is not False):
        ids.append(int(t.array[0, 0]))
        text = tok.decode(ids)
        # BPE tokens can split a character's bytes: hold back an incomplete tail
        if text.endswith("\ufffd"):
            continue
        write(text[len(shown):])
        shown = text
    text = tok.decode(ids)
    write(text[len(shown):])


def main(argv=None):
    args = build_parser().parse_args(argv)
    problem = check_args(args)
    if problem:
        print(f"sample.py: error: {problem}", file=sys.stderr)
        return 2
    try:
        if args.init_from == "resume":
            model, ckpt = load_model(args.out_dir, args.ckpt, args.device)
            meta = ckpt.get("dataset") or {}
            tok = tokenizer_from_meta(meta.get("tokenizer", meta), ranks_path=args.gpt2_tiktoken)
        else:  # GPT-2's weights or a folder in their layout (gpt/pretrained.py)
            model, tok = for_sampling(args.init_from, args.device, args.gpt2_tiktoken)
        prompt = read_prompt(args.start)
        prompt_ids = tok.encode(prompt)
        if not prompt_ids:
            raise DataError("the prompt is empty: give --start some text")
        bs = model.config.block_size
        check_memory(args.max_new_tokens, min(len(prompt_ids), bs), bs, args.device)
        if len(prompt_ids) > bs:
            # as nanoGPT: the model sees the last block_size tokens; the whole prompt is printed
            print(f"sample.py: note: the prompt is {len(prompt_ids)} tokens, longer than the model's context of "
                  f"{bs}: generating from its last {bs}", file=sys.stderr)
            prompt_ids = prompt_ids[-bs:]
        for note in knob_notes(args):
            print(f"sample.py: note: {note}", file=sys.stderr)
        minigrad.manual_seed(args.seed)
        out = sys.stdout
        for _ in range(args.num_samples):
            out.write(prompt)
            stream_sample(model, tok, prompt_ids, args, lambda s: (out.write(s), out.flush()))
            out.write("\n---------------\n")
            out.flush()
    except (DataError, TrainError, ValueError, RuntimeError) as e:
        print(f"sample.py: error: {e}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # `sample.py | head`: the reader has all it wanted
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
        return 0
    except KeyboardInterrupt:
        return 130
    return 0
