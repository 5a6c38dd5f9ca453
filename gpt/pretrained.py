"""Start from GPT-2: OpenAI's weights, or any model in Hugging Face's GPT-2 layout, in and out.

A model folder holds `config.json` (the sizes: n_layer, n_head, n_embd, n_positions, vocab_size,
and activation_function) and `model.safetensors`, whose tensors carry GPT-2's own names, with or
without a `transformer.` prefix: `wte.weight`, `wpe.weight`, `h.{i}.ln_1.weight`,
`h.{i}.attn.c_attn.weight`, ..., `ln_f.bias`. There is no separate output layer: it is the token
embedding (tied), as in minigrad's GPT. `h.{i}.attn.bias` and `masked_bias` are attention-mask
buffers and are dropped. GPT-2's Conv1D layers keep their matrices as (in, out), the transpose of
nn.Linear's (out, in).

Loading reads each tensor from the file straight into the model's own array (a Conv1D matrix
through one temporary of its own size), so the weights are in memory once, never twice.
"""
import json
import math
import os
import re
from dataclasses import replace
from pathlib import Path

import numpy as np

import minigrad
import nn
from gpt.model import GPT, GPTConfig
from gpt.tokenizer import GPT2Tokenizer
from minigrad.device import to_device
from minigrad._atomic_files import atomic_write

NAMES = ("gpt2", "gpt2-medium", "gpt2-large", "gpt2-xl")
CONFIG_NAME, WEIGHTS_NAME = "config.json", "model.safetensors"
PRETRAINED_DIR_ENV = "MINIGRAD_PRETRAINED_DIR"
CONV1D = ("attn.c_attn.weight", "attn.c_proj.weight", "mlp.c_fc.weight", "mlp.c_proj.weight")
_MASK_BUFFER = re.compile(r"h\.\d+\.attn\.(masked_)?bias")
# config.json's activation_function -> GPTConfig.activation ("gelu_new" is GPT-2's tanh formula)
ACTIVATIONS = {"gelu_new": "gelu_tanh", "gelu_pytorch_tanh": "gelu_tanh", "gelu": "gelu"}
OVERRIDABLE = ("dropout", "grad_checkpoint")
# safetensors dtype -> how its bytes are read (bfloat16 as its raw bits, widened to float32 below)
_DTYPES = {"F32": np.dtype("<f4"), "F16": np.dtype("<f2"), "F64": np.dtype("<f8"), "BF16": np.dtype("<u2")}
_HOWTO = ("these machines never download: on one with network run `hf download openai-community/{name} "
          "config.json model.safetensors` (or fetch both files from https://huggingface.co/openai-community/{name}) "
          "and copy them here, into a folder you pass as the path, or into ${env}/{name}/")


class PretrainedError(ValueError):
    """A model that cannot be found or read; the message says which file, where, and why."""


# ---- finding the files ------------------------------------------------------------------------
def find_model_dir(name_or_path):
    """The folder (a Path) holding config.json and model.safetensors for a GPT-2 name or a path.

    A name (gpt2, gpt2-medium, gpt2-large, gpt2-xl) is looked up in $MINIGRAD_PRETRAINED_DIR/NAME/,
    then in the Hugging Face cache ($HF_HUB_CACHE, else $HF_HOME/hub, else
    ~/.cache/huggingface/hub), models--openai-community--NAME or models--NAME, snapshots/*/.
    """
    name = os.fspath(name_or_path)
    path = Path(name).expanduser()
    if name.removeprefix("openai-community/") in NAMES and not path.is_dir():  # the Hugging Face repo id
        name = name.removeprefix("openai-community/")
    if name not in NAMES or path.is_dir():
        if path.is_file():
            raise PretrainedError(f"{path} is a file: pass the folder that holds {CONFIG_NAME} and {WEIGHTS_NAME}")
        if not path.is_dir():
            raise PretrainedError(
                f"{name!r} is neither a GPT-2 name ({', '.join(NAMES)}) nor a folder holding {CONFIG_NAME} "
                f"and {WEIGHTS_NAME}")
        _check_folder(path)
        return path
    looked = []
    for folder, shown in _search_folders(name):
        looked.append(shown)
        if folder is not None and all((folder / f).is_file() for f in (CONFIG_NAME, WEIGHTS_NAME)):
            return folder
    raise PretrainedError(
        f"{name}: no folder holding {CONFIG_NAME} and {WEIGHTS_NAME} in {', '.join(looked)}; "
        + _HOWTO.format(name=name, env=PRETRAINED_DIR_ENV))


def _search_folders(name):
    """(folder, how to show it) for each place a GPT-2 name is looked for, in order."""
    env = os.environ.get(PRETRAINED_DIR_ENV)
    if env:
        root = Path(env).expanduser()
        yield root / name, str(root / name)
        for repo in (f"models--openai-community--{name}", f"models--{name}"):
            for snap in _snapshots(root / repo):
                yield snap, str(snap)
    else:
        yield None, f"${PRETRAINED_DIR_ENV}/{name} (not set)"
    hub = os.environ.get("HF_HUB_CACHE") or os.path.join(os.environ.get("HF_HOME") or "~/.cache/huggingface", "hub")
    hub = Path(hub).expanduser()
    for repo in (f"models--openai-community--{name}", f"models--{name}"):
        snaps = _snapshots(hub / repo)
        for snap in snaps:
            yield snap, str(snap)
        if not snaps:
            yield None, str(hub / repo / "snapshots" / "*")


def _snapshots(repo):
    """A Hugging Face cache repo's snapshot folders: the one refs/main names first, then newest first."""
    snaps = repo / "snapshots"
    if not snaps.is_dir():
        return []
    found = sorted((p for p in snaps.iterdir() if p.is_dir()), key=lambda p: p.stat().st_mtime, reverse=True)
    ref = repo / "refs" / "main"
    if ref.is_file():
        main = snaps / ref.read_text().strip()
        found.sort(key=lambda p: p != main)
    return found


def _check_folder(path):
    missing = [f for f in (CONFIG_NAME, WEIGHTS_NAME) if not (path / f).is_file()]
    if not missing:
        return
    if WEIGHTS_NAME in missing and (path / "pytorch_model.bin").is_file():
        raise PretrainedError(
            f"{path} holds pytorch_model.bin, a pickle, which is never loaded (loading it could run code): "
            f"convert it to {WEIGHTS_NAME} with transformers (GPT2LMHeadModel.from_pretrained(DIR).save_pretrained(NEW_DIR))")
    if WEIGHTS_NAME in missing and (path / f"{WEIGHTS_NAME}.index.json").is_file():
        raise PretrainedError(f"{path} holds weights split into shards ({WEIGHTS_NAME}.index.json): only a single "
                              f"{WEIGHTS_NAME} is read")
    raise PretrainedError(
        f"{path} has no {' and no '.join(missing)}: a GPT-2 model folder holds {CONFIG_NAME} and {WEIGHTS_NAME} "
        "(e.g. a Hugging Face snapshot of openai-community/gpt2, or one written by GPT.save_pretrained)")


# ---- config.json ------------------------------------------------------------------------------
# GPT2Config settings that change the model's arithmetic, with the one value minigrad's GPT has
# (an absent key means transformers' default, which is that value)
_FIXED = {"layer_norm_epsilon": 1e-5, "scale_attn_weights": True, "scale_attn_by_inverse_layer_idx": False,
          "add_cross_attention": False, "tie_word_embeddings": True}


def read_config(folder):
    """The GPTConfig of a model folder's config.json (biases on, dropout 0, as nanoGPT loads GPT-2)."""
    path = Path(folder) / CONFIG_NAME
    try:
        cfg = json.loads(path.read_text(encoding="utf-8"))
    except OSError as e:
        raise PretrainedError(f"cannot read {path}: {e.strerror or e}") from None
    except (UnicodeDecodeError, ValueError) as e:
        raise PretrainedError(f"{path} is not JSON: {e}") from None
    if not isinstance(cfg, dict):
        raise PretrainedError(f"{path} is not a model configuration (a JSON object)")
    kind = cfg.get("model_type", "gpt2")
    if kind != "gpt2":
        raise PretrainedError(f"{path} describes a {kind!r} model: only the GPT-2 architecture (model_type 'gpt2') loads")

    def size(*keys):
        key = next((k for k in keys if k in cfg), None)
        if key is None:
            raise PretrainedError(f"{path} has no {keys[0]!r}")
        v = cfg[key]
        if isinstance(v, bool) or not isinstance(v, int) or v <= 0:
            raise PretrainedError(f"{path}: {key} must be a positive integer, got {v!r}")
        return v

    n_layer, n_head, n_embd, vocab_size = size("n_layer"), size("n_head"), size("n_embd"), size("vocab_size")
    block_size = size("n_positions", "n_ctx")
    if n_embd % n_head:
        raise PretrainedError(f"{path}: n_embd ({n_embd}) is not divisible by n_head ({n_head})")
    act = cfg.get("activation_function", "gelu_new")
    if act not in ACTIVATIONS:
        raise PretrainedError(f"{path}: activation_function {act!r} is not one of {', '.join(ACTIVATIONS)}")
    if cfg.get("n_inner") not in (None, 4 * n_embd):
        raise PretrainedError(f"{path}: n_inner={cfg['n_inner']}, but minigrad's GPT has an MLP of 4 * n_embd = {4 * n_embd}")
    for key, want in _FIXED.items():
        if cfg.get(key, want) != want:
            raise PretrainedError(f"{path}: {key}={cfg[key]!r} is not supported (minigrad's GPT has {want!r})")
    return GPTConfig(block_size=block_size, vocab_size=vocab_size, n_layer=n_layer, n_head=n_head, n_embd=n_embd,
                     dropout=0.0, bias=True, activation=ACTIVATIONS[act])


def hf_config(config):
    """config.json's dict for a GPTConfig: the GPT2Config transformers builds the same model from."""
    out = {
        "architectures": ["GPT2LMHeadModel"], "model_type": "gpt2",
        "vocab_size": config.vocab_size, "n_positions": config.block_size, "n_embd": config.n_embd,
        "n_layer": config.n_layer, "n_head": config.n_head, "n_inner": None,
        "activation_function": "gelu_new" if config.activation == "gelu_tanh" else "gelu",
        "resid_pdrop": config.dropout, "embd_pdrop": config.dropout, "attn_pdrop": config.dropout,
        "initializer_range": 0.02, "reorder_and_upcast_attn": False, "use_cache": True,
    }
    out.update(_FIXED)
    if config.vocab_size > GPT2Tokenizer.eot_token:  # GPT-2's <|endoftext|> exists in this vocabulary
        out["bos_token_id"] = out["eos_token_id"] = GPT2Tokenizer.eot_token
    return out


# ---- model.safetensors ------------------------------------------------------------------------
class SafetensorsFile:
    """The header of a safetensors file (an 8-byte little-endian length, then JSON naming each
    tensor's dtype, shape and byte range), checked against the file's size, and reads of its tensors."""

    def __init__(self, path):
        self.path = path = Path(path)
        try:
            size = path.stat().st_size
            with open(path, "rb") as f:
                head = f.read(8)
                n = int.from_bytes(head, "little") if len(head) == 8 else -1
                raw = f.read(n) if 2 <= n <= size - 8 else b""
        except OSError as e:
            raise PretrainedError(f"cannot read {path}: {e.strerror or e}") from None
        if head.startswith(b"version "):
            raise PretrainedError(f"{path} is a Git LFS pointer, not the weights: fetch them (git lfs pull)")
        if not raw:
            raise PretrainedError(f"{path} is truncated or not a safetensors file ({size:,} bytes, too short "
                                  "for the header it announces)")
        try:
            header = json.loads(raw)
        except ValueError:  # (UnicodeDecodeError is one)
            raise PretrainedError(f"{path} is not a safetensors file (its header is not JSON)") from None
        if not isinstance(header, dict):
            raise PretrainedError(f"{path} is not a safetensors file (its header is not a JSON object)")
        header.pop("__metadata__", None)
        self.data_start = 8 + n
        data_size = size - self.data_start
        self.tensors = {}  # name -> (dtype name, shape, offset in the data)
        for name, info in header.items():
            try:
                dtype, shape, (begin, end) = info["dtype"], tuple(int(s) for s in info["shape"]), info["data_offsets"]
            except (KeyError, TypeError, ValueError):
                raise PretrainedError(f"{path}: the header's entry for {name!r} is malformed") from None
            if dtype not in _DTYPES:
                raise PretrainedError(f"{path}: tensor {name!r} has dtype {dtype}; only {', '.join(_DTYPES)} are read")
            if not (isinstance(begin, int) and isinstance(end, int) and 0 <= begin
                    and end - begin == math.prod(shape) * _DTYPES[dtype].itemsize):
                raise PretrainedError(f"{path}: the header's byte range of {name!r} does not fit its shape {list(shape)}")
            if end > data_size:
                raise PretrainedError(
                    f"{path} is truncated: tensor {name!r} ends at byte {self.data_start + end:,} but the file has "
                    f"{size:,} bytes (copy or download it again)")
            self.tensors[name] = (dtype, shape, begin)

    def read_into(self, f, name, out, transpose=False):
        """Read tensor `name` from the open file f into the array `out` (transposed when asked)."""
        dtype, shape, begin = self.tensors[name]
        f.seek(self.data_start + begin)
        if not transpose and _DTYPES[dtype] == out.dtype and out.flags.c_contiguous:
            self._read_exactly(f, out)  # straight into the model's memory
            return
        tmp = np.empty(shape, _DTYPES[dtype])
        self._read_exactly(f, tmp)
        if dtype == "BF16":  # bfloat16 is float32's upper half
            tmp = (tmp.astype(np.uint32) << 16).view(np.float32)
        np.copyto(out, tmp.T if transpose else tmp, casting="same_kind")

    def _read_exactly(self, f, array):
        view = memoryview(array.reshape(-1).view(np.uint8))
        done = 0
        while done < len(view):
            got = f.readinto(view[done:])
            if not got:
                raise PretrainedError(f"{self.path} is truncated (it shrank while being read)")
            done += got


def write_safetensors(path, tensors, metadata):
    """Write [(name, array)] as a safetensors file, one tensor at a time (no copy of them all)."""
    header, offset = {}, 0
    for name, a in tensors:
        dtype = next((k for k, v in _DTYPES.items() if v == a.dtype and k != "BF16"), None)
        if dtype is None:
            raise TypeError(f"cannot write {name} of dtype {a.dtype} (float16, float32 or float64 only)")
        header[name] = {"dtype": dtype, "shape": list(a.shape), "data_offsets": [offset, offset + a.nbytes]}
        offset += a.nbytes
    header["__metadata__"] = metadata
    raw = json.dumps(header, separators=(",", ":")).encode("utf-8")
    raw += b" " * (-len(raw) % 8)  # the tensor data starts 8-byte aligned, as the safetensors library writes it
    with open(path, "wb") as f:
        f.write(len(raw).to_bytes(8, "little"))
        f.write(raw)
        for _, a in tensors:
            f.write(np.ascontiguousarray(to_device(a, "cpu")).data)


# ---- GPT <-> files ----------------------------------------------------------------------------
def _hf_name(name):
    """minigrad's parameter name -> GPT-2's ("transformer.h.0.mlp.c_fc.weight" -> "h.0.mlp.c_fc.weight")."""
    return name.removeprefix("transformer.")


def load_pretrained(name_or_path, override_args=None):
    """GPT.from_pretrained: the GPT of a GPT-2 name or model folder (see find_model_dir), in
    training mode as every new Module; override_args may set dropout and grad_checkpoint."""
    overrides = dict(override_args or {})
    for key in overrides:
        if key not in OVERRIDABLE:
            raise ValueError(f"override_args can only set {' and '.join(OVERRIDABLE)}, not {key!r} "
                             "(the model's shape comes from its config.json)")
    folder = find_model_dir(name_or_path)
    config = replace(read_config(folder), **overrides)
    weights = SafetensorsFile(folder / WEIGHTS_NAME)
    model = _model_to_fill(config)
    plan = _match(model, weights, config)
    with open(weights.path, "rb") as f:
        for name, param, transpose in plan:
            weights.read_into(f, name, param.array, transpose)
    model.source = str(folder)  # where the weights came from, for messages
    return model


def _model_to_fill(config):
    """A GPT of `config` whose weights are about to be read from a file.

    It is built with a one-token vocabulary and then given an empty token embedding of the real
    size: drawing that largest matrix at random (twice, for the tied lm_head) would hold it and two
    temporaries of its size at once, more than the whole model's weights again for gpt2."""
    model = GPT(replace(config, vocab_size=1))
    wte = nn.Parameter(minigrad.empty(config.vocab_size, config.n_embd))
    model.transformer.wte.weight = model.lm_head.weight = wte  # tied, as GPT ties them
    model.transformer.wte.num_embeddings = model.lm_head.out_features = config.vocab_size
    model.config = config
    return model


def _match(model, weights, config):
    """[(file tensor name, Parameter, transpose?)] in file order, after checking that the file's
    names and shapes are exactly those of `model`; the first that is not raises PretrainedError."""
    expected = {}
    for name, p in model.named_parameters():
        transpose = name.endswith(CONV1D)
        expected[_hf_name(name)] = (p, transpose, tuple(p.shape[::-1] if transpose else p.shape))
    shape = f"n_layer={config.n_layer}, n_embd={config.n_embd}, vocab_size={config.vocab_size}, " \
            f"n_positions={config.block_size}"
    plan, seen = [], set()
    for name, (_, file_shape, _) in sorted(weights.tensors.items(), key=lambda kv: kv[1][2]):
        key = _hf_name(name)
        if _MASK_BUFFER.fullmatch(key) or key == "lm_head.weight":  # masks; the tied output layer
            continue
        if key not in expected:
            raise PretrainedError(f"{weights.path}: tensor {name!r} is not part of a GPT-2 ({shape}, from "
                                  f"{CONFIG_NAME}): is the file another architecture's?")
        if key in seen:
            raise PretrainedError(f"{weights.path}: tensor {key!r} appears twice (with and without 'transformer.')")
        p, transpose, want = expected[key]
        if file_shape != want:
            raise PretrainedError(f"{weights.path}: tensor {name!r} has shape {list(file_shape)}, but a GPT-2 with "
                                  f"{shape} has {list(want)} there")
        seen.add(key)
        plan.append((name, p, transpose))
    missing = [k for k in expected if k not in seen]
    if missing:
        raise PretrainedError(f"{weights.path} has no tensor {missing[0]!r} ({len(missing)} of the "
                              f"{len(expected)} a GPT-2 with {shape} needs are missing)")
    return plan


def hf_tensors(model):
    """[(name, array)]: `model`'s weights in GPT-2's layout, as GPT2LMHeadModel names them; Conv1D
    matrices (in, out); a bias=False model gets zero biases (the same function)."""
    out = []
    for name, m in model.named_modules():
        if isinstance(m, nn.Embedding):
            out.append((f"{name}.weight", m.weight.array))
        elif isinstance(m, (nn.Linear, nn.LayerNorm)) and name != "lm_head":  # lm_head is wte, tied
            w = m.weight.array
            out.append((f"{name}.weight", w.T if isinstance(m, nn.Linear) else w))
            b = m.bias.array if m.bias is not None else np.zeros(w.shape[0], w.dtype)
            out.append((f"{name}.bias", b))
    return out


def save_pretrained(model, directory):
    """GPT.save_pretrained: config.json + model.safetensors in `directory` (created if needed;
    each file written atomically, replacing one already there)."""
    directory = Path(directory)
    if directory.exists() and not directory.is_dir():
        raise PretrainedError(f"{directory} is a file, not a folder")
    tensors = hf_tensors(model)
    directory.mkdir(parents=True, exist_ok=True)
    # transformers refuses a safetensors file without format "pt" in its metadata
    atomic_write(directory / WEIGHTS_NAME, lambda tmp: write_safetensors(tmp, tensors, {"format": "pt"}))
    text = json.dumps(hf_config(model.config), indent=2) + "\n"
    atomic_write(directory / CONFIG_NAME, lambda tmp: Path(tmp).write_text(text, encoding="utf-8"))


# ---- train.py and sample.py's --init_from ------------------------------------------------------
def is_pretrained(init_from):
    """Whether train.py / sample.py's init_from names pretrained weights (not scratch or resume)."""
    return init_from not in ("scratch", "resume")


def for_finetuning(cfg, log):
    """train.py's --init_from=gpt2*|PATH: the pretrained model with cfg's dropout, its context
    cropped to cfg.block_size when that is shorter. The shape flags (n_layer, ...) do not apply."""
    model = load_pretrained(cfg.init_from, {"dropout": cfg.dropout, "grad_checkpoint": cfg.grad_checkpoint})
    c = model.config
    log(f"init_from={cfg.init_from}: weights from {model.source} (n_layer={c.n_layer}, n_head={c.n_head}, "
        f"n_embd={c.n_embd}, vocab_size={c.vocab_size}, activation={c.activation}: the shape is its {CONFIG_NAME}'s)")
    if cfg.block_size < c.block_size:
        log(f"context cropped from {c.block_size} to block_size={cfg.block_size} tokens")
        model.crop_block_size(cfg.block_size)
    elif cfg.block_size > c.block_size:
        log(f"note: block_size={cfg.block_size} is longer than the model's context: using {c.block_size}")
    return model


def check_tokenizer(model, kind, vocab_size, what):
    """A model loaded with init_from reads GPT-2's BPE token ids: refuse other tokenizers and a
    vocabulary too small for GPT-2's (`what` names the data or tokenizer, for the message)."""
    if kind != GPT2Tokenizer.kind:
        raise PretrainedError(f"{what} is tokenized with the {kind!r} tokenizer, but a model loaded with init_from "
                              "reads GPT-2's BPE token ids: prepare the data with --tokenizer=gpt2")
    if model.config.vocab_size < vocab_size:
        raise PretrainedError(f"the model's vocabulary ({model.config.vocab_size} ids) does not fit {what} "
                              f"({vocab_size} ids)")


def for_sampling(init_from, device="cpu", ranks_path=None):
    """sample.py's --init_from=gpt2*|PATH: (model in eval mode on `device`, GPT-2's tokenizer)."""
    tok = GPT2Tokenizer(ranks_path)
    model = load_pretrained(init_from)
    check_tokenizer(model, tok.kind, tok.vocab_size, "GPT-2's tokenizer")
    model.eval()
    if device != "cpu":
        model.to(device)
    return model, tok
