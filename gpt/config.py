"""Training configuration: every knob of nanoGPT's train.py, set from config files and flags.

As in nanoGPT, ``python train.py config/x.py --batch_size=32`` applies the config file, then the
flag. Unlike nanoGPT, a config file is parsed, never executed: it may only hold
``name = value`` lines whose value is a literal, arithmetic of numbers (``5000 * 2``), str(),
int() or float() of those, or time.time() (nanoGPT's run names).
"""
import ast
import difflib
import math
import operator
import re
import time
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path


class ConfigError(ValueError):
    """A bad setting; the message names the setting, and the file and line it came from."""


def knob(default, doc, choices=None):
    """A TrainConfig field with its one-line help ``doc`` and, optionally, its allowed values."""
    return field(default=default, metadata={"help": doc, "choices": choices})


@dataclass
class TrainConfig:
    """All training settings; the defaults train a small character model on the Python docs in a
    few minutes on 2 CPU cores (nanoGPT's "baby" shakespeare_char). parse_config also sets
    ``given``, the settings its arguments set (not a field: never saved or compared)."""

    # I/O
    out_dir: str = knob("out", "folder for checkpoints")
    eval_interval: int = knob(250, "estimate train/val loss every this many iterations")
    log_interval: int = knob(10, "print the training loss every this many iterations")
    eval_iters: int = knob(20, "batches per split averaged in each loss estimate")
    eval_only: bool = knob(False, "estimate the loss once, then exit")
    always_save_checkpoint: bool = knob(False, "ckpt.safetensors at every evaluation (else when val loss improves, "
                                        "as nanoGPT, and at the end); best.safetensors when it improves")
    init_from: str = knob("scratch", "scratch, resume (out_dir's checkpoint), gpt2|gpt2-medium|gpt2-large|gpt2-xl, "
                          "or a folder of config.json + model.safetensors (docs/pretrained.md)")
    overwrite: bool = knob(False, "let a fresh run replace the checkpoints and log of an earlier run in out_dir")
    # Weights & Biases (gpt/wandb_log.py)
    wandb_log: bool = knob(False, "log each evaluation to Weights & Biases (the wandb extra: pip install "
                           "'minigrad[wandb]'; WANDB_MODE=offline needs no network)")
    wandb_project: str = knob("owt", "the Weights & Biases project")
    wandb_run_name: str = knob("gpt2", "the Weights & Biases run's name")
    # data
    dataset: str = knob("default", "default (Python docs), shakespeare_char, shakespeare, or your own with --input")
    input: str = knob("", "text file or folder of text files to prepare the dataset from")
    tokenizer: str = knob("auto", "auto: the dataset's own (gpt2 for shakespeare, else char)", ("auto", "char", "gpt2"))
    data_dir: str = knob("data", "folder of prepared datasets")
    gpt2_tiktoken: str = knob("", "GPT-2's ranks file gpt2.tiktoken (else $MINIGRAD_GPT2_TIKTOKEN or tiktoken's cache)")
    gradient_accumulation_steps: int = knob(1, "micro-batches per optimizer step")
    batch_size: int = knob(12, "sequences per micro-batch")
    block_size: int = knob(64, "context length in tokens")
    # model
    n_layer: int = knob(4, "transformer blocks")
    n_head: int = knob(4, "attention heads per block")
    n_embd: int = knob(128, "embedding width (a multiple of n_head)")
    dropout: float = knob(0.0, "dropout probability (0 for small data, 0.1-0.2 when overfitting)")
    bias: bool = knob(False, "biases in Linear and LayerNorm layers")
    # AdamW and its schedule
    learning_rate: float = knob(1e-3, "peak learning rate")
    max_iters: int = knob(2000, "total training iterations")
    weight_decay: float = knob(1e-1, "AdamW weight decay (on 2-D weights only)")
    beta1: float = knob(0.9, "AdamW beta1")
    beta2: float = knob(0.99, "AdamW beta2")
    grad_clip: float = knob(1.0, "clip gradients to this global norm (0 = off)")
    decay_lr: bool = knob(True, "linear warmup, then cosine decay to min_lr")
    warmup_iters: int = knob(100, "warmup iterations")
    lr_decay_iters: int = knob(2000, "iteration where the cosine decay reaches min_lr")
    min_lr: float = knob(1e-4, "final learning rate")
    # system
    device: str = knob("cpu", "array backend: cpu (numpy) or cuda", ("cpu", "cuda"))
    seed: int = knob(1337, "seed of initialisation, dropout and batch sampling")
    grad_checkpoint: bool = knob(False, "recompute block activations in backward to save memory")
    compile: bool = knob(False, "capture the training micro-step and the evaluation once, then replay them "
                                "(minigrad.compile, nanoGPT's knob)")
    memory_report: bool = knob(False, "print a breakdown of memory use")
    progress: bool = knob(True, "show a progress bar")
    peak_flops: float = knob(0.0, "the FLOP/s MFU (forward+backward FLOPs per second) is a share of; 0 = measure: the "
                             "best of several float32 square matmuls (512 x 512, larger where that takes under 1 ms), "
                             "raised whenever a step runs faster; MFU is shown from the 6th iteration, as nanoGPT")
    # data-parallel training under `mpiexec -n N python train.py` (gpt/distributed.py)
    ddp_backend: str = knob("auto", "collectives between ranks: auto (mpi on cpu, nccl on cuda); nanoGPT's "
                            "`backend` sets it too", ("auto", "mpi", "nccl"))
    ddp_timeout: float = knob(300.0, "seconds a rank waits for the others in a collective before it gives up")

    def validate(self):
        """Raise ConfigError for the first inconsistent or out-of-range setting."""
        for f in fields(self):
            value, choices = getattr(self, f.name), f.metadata["choices"]
            if choices and value not in choices:
                raise ConfigError(f"{f.name}={value!r} is not one of {', '.join(choices)}")
            if f.name in _POSITIVE and value <= 0:
                raise ConfigError(f"{f.name} must be positive, got {value!r}")
            if f.name in _NON_NEGATIVE and value < 0:
                raise ConfigError(f"{f.name} must not be negative, got {value!r}")
            if f.name in ("dropout", "beta1", "beta2") and not 0 <= value < 1:
                raise ConfigError(f"{f.name} must be in [0, 1), got {value!r}")
            if f.name in ("dataset", "out_dir", "data_dir") and not value:  # "" would be the current folder
                raise ConfigError(f"{f.name} must not be empty: --{f.name}=NAME")
        if self.n_embd % self.n_head:
            raise ConfigError(f"n_embd={self.n_embd} is not a multiple of n_head={self.n_head}")
        if self.decay_lr and self.min_lr > self.learning_rate:
            raise ConfigError(f"min_lr={self.min_lr} is above learning_rate={self.learning_rate}")


_POSITIVE = {"eval_interval", "log_interval", "eval_iters", "gradient_accumulation_steps", "batch_size",
             "block_size", "n_layer", "n_head", "n_embd", "learning_rate", "lr_decay_iters", "ddp_timeout"}
_NON_NEGATIVE = {"max_iters", "weight_decay", "grad_clip", "warmup_iters", "min_lr", "peak_flops", "seed"}
_FIELDS = {f.name: f for f in fields(TrainConfig)}
FLOAT32_MAX = 3.4028234663852886e38
# what a resumed run cannot change: the model's shape and the data it was trained on
RESUME_FIXED = ("n_layer", "n_head", "n_embd", "block_size", "bias", "dataset")
# nanoGPT settings that have no meaning here: accepted, so its config files load, with a notice
IGNORED_KEYS = {"dtype": "minigrad chooses its own dtype"}
# nanoGPT's names for knobs named otherwise here ("backend" would read as minigrad.backends, the kernels)
RENAMED_KEYS = {"backend": "ddp_backend"}


def parse_config(argv):
    """(TrainConfig, notices) from command-line arguments, nanoGPT style: a plain argument is a
    config file; ``--key=value``, ``--key value`` or a bare boolean ``--key`` set one knob, later
    ones winning; values are literals where they parse as such, else strings. notices: lines to
    print (ignored nanoGPT settings, a dataset name taken from --input). Errors: ConfigError."""
    notices, values, args = [], {}, list(argv)
    while args:
        arg = args.pop(0)
        if not arg.startswith("--"):
            for key, value, where in _read_config_file(arg):
                _assign(values, key, value, where, notices)
            continue
        key, eq, raw = arg[2:].partition("=")
        key = key.replace("-", "_")
        f = _FIELDS.get(RENAMED_KEYS.get(key, key))
        if not eq and f and f.type is not bool:
            if not args or args[0].startswith("--"):
                raise ConfigError(f"--{key} needs a value: --{key}=VALUE")
            raw = args.pop(0)
        elif not eq:  # a bare flag, or one followed by True/False (an unknown key is reported by _assign)
            raw = args.pop(0) if args and args[0].lower() in ("true", "false") else "True"
        try:
            value = _literal(ast.parse(raw.strip(), mode="eval").body)
        except (SyntaxError, RecursionError, _NotLiteral):
            value = raw
        if f and f.type is str and not isinstance(value, str):  # --out_dir=1e3 is "1e3"; a quoted string is unquoted
            value = raw
        _assign(values, key, value, f"--{key}", notices)
    if values.get("input") and "dataset" not in values:  # a corpus of one's own never overwrites the default's data
        values["dataset"] = re.sub(r"[^A-Za-z0-9_.-]+", "_", Path(values["input"]).expanduser().resolve().stem)
        values["dataset"] = values["dataset"].lstrip("._-") or "custom"
        notices.append(f"dataset name {values['dataset']!r} taken from --input (--dataset=NAME to choose another)")
    return _build(values, given=frozenset(values)), notices


def resume_config(cfg, saved, where="checkpoint"):
    """The config of a resumed run: the checkpoint's settings `saved` (a dict), overridden by the
    ones `cfg` was given. Raises ConfigError when a given one is in RESUME_FIXED and differs, or
    a saved one not given is not valid (`where`: the checkpoint, named in that error)."""
    given = getattr(cfg, "given", None) or frozenset(_FIELDS)  # built another way: every setting counts as given
    values = {}
    for key, value in saved.items():
        key = RENAMED_KEYS.get(key, key)  # (a checkpoint of an earlier version)
        # the data is read as prepared then, not prepared again from a file that may have changed since
        if key in _FIELDS and key not in ("init_from", "out_dir", "overwrite", "input"):
            try:
                values[key] = _coerce(_FIELDS[key], value, where)
            except ConfigError as e:
                if key not in given:  # (a flag given for it stands instead)
                    raise ConfigError(f"{e}: give --{key}=VALUE to resume") from None
    for key in RESUME_FIXED:
        if key in given and key in values and getattr(cfg, key) != values[key]:
            raise ConfigError(f"cannot resume with {key}={getattr(cfg, key)!r}: the checkpoint was trained with "
                              f"{key}={values[key]!r} (a resumed run keeps {', '.join(RESUME_FIXED)}; see --help)")
    values.update({key: getattr(cfg, key) for key in given | {"init_from", "out_dir"}})
    return _build(values, given)


def config_from_dict(values):
    """TrainConfig from a dict (e.g. config_to_dict's), checked as parse_config's input is."""
    checked = {}
    for key, value in values.items():
        _assign(checked, key, value, "config", [])
    return _build(checked)


def config_to_dict(cfg):
    """JSON-serialisable dict of a TrainConfig (the inverse of config_from_dict)."""
    return asdict(cfg)


def help_text():
    """Usage text listing every knob with its default and help (for ``train.py --help``)."""
    rows = [(f"--{f.name}={f.default if isinstance(f.default, str) else repr(f.default)}",
             f.metadata["help"] + (f" ({'|'.join(f.metadata['choices'])})" if f.metadata["choices"] else ""))
            for f in fields(TrainConfig)]
    width = max(len(flag) for flag, _ in rows)
    return "\n".join([
        "usage: python train.py [CONFIG_FILE.py ...] [--key=value ...]", "",
        "Config files hold `key = value` lines (nanoGPT's format) and are read, not run.",
        "Arguments apply left to right, so later ones override earlier ones.", "",
        *(f"  {flag:<{width}}  {text}" for flag, text in rows), "",
        "--init_from=resume continues the run in out_dir with the settings stored in its checkpoint;",
        "settings given again override them, except the model's shape and data, which a resumed run",
        f"keeps ({', '.join(RESUME_FIXED)}: giving another value is an error).",
        "The rest may change: max_iters, the learning-rate schedule, evaluation, logging, batch size,",
        "dropout, device...", "",
        "A fresh run (--init_from=scratch) refuses an out_dir that holds an earlier run's checkpoints",
        "unless --overwrite=True. MFU is the model's forward+backward FLOPs per second as a share",
        "of --peak_flops (measured unless given), shown from the 6th iteration and never above 100%.",
        "Each evaluation redraws OUT_DIR/loss.png (without matplotlib, a run's first evaluation says so).",
    ])


def _build(values, given=None):
    cfg = TrainConfig(**values)
    cfg.validate()
    if given is not None:
        cfg.given = given
    return cfg


def _assign(values, key, value, where, notices):
    """Type-check ``value`` for knob ``key`` and store it in ``values``."""
    if key in IGNORED_KEYS:
        notices.append(f"ignoring nanoGPT setting {key}={value!r} ({where}): {IGNORED_KEYS[key]}")
        return
    key = RENAMED_KEYS.get(key, key)
    if key == "ddp_backend" and value == "gloo":  # nanoGPT's CPU collectives; here they go over MPI
        notices.append(f"ddp_backend='gloo' ({where}): minigrad's CPU collectives go over MPI: using mpi")
        value = "mpi"
    if key not in _FIELDS:
        close = difflib.get_close_matches(key, list(_FIELDS) + list(IGNORED_KEYS) + list(RENAMED_KEYS), n=1)
        hint = f"; did you mean {close[0]!r}?" if close else "; see --help for the list"
        raise ConfigError(f"{where}: unknown setting {key!r}{hint}")
    values[key] = _coerce(_FIELDS[key], value, where)


def _coerce(f, value, where):
    """``value`` as field ``f``'s type: bools are not numbers, whole floats such as 5e3 are ints,
    and a float must be finite in float32, the precision the model computes in."""
    typ = f.type
    if typ is bool and isinstance(value, str) and value.lower() in ("true", "false"):
        value = value.lower() == "true"
    elif typ is int and isinstance(value, float) and value.is_integer():
        value = int(value)
    elif typ is float and isinstance(value, (int, float)) and not isinstance(value, bool):
        if FLOAT32_MAX < abs(value) < math.inf:  # finite in Python, inf in float32 (10**400: too big for float())
            raise ConfigError(f"{where}: {f.name}={value!r} is beyond float32's range (at most {FLOAT32_MAX:.4g})")
        value = float(value)
    if type(value) is not typ or typ is float and not math.isfinite(value):
        expected = "float (finite)" if typ is float else typ.__name__
        raise ConfigError(f"{where}: {f.name}={value!r} should be of type {expected}")
    return value


def _read_config_file(path):
    """Yield (key, value, "file:line") for each ``name = value`` line of a config file."""
    try:
        source = Path(path).read_text(encoding="utf-8")
        tree = ast.parse(source, filename=str(path))
    except OSError as e:
        raise ConfigError(f"cannot read config file {path!r}: {e.strerror or e}") from None
    except UnicodeDecodeError:
        raise ConfigError(f"config file {path!r} is not UTF-8 text") from None
    except (SyntaxError, ValueError, RecursionError) as e:  # ValueError: NUL bytes, on older Pythons
        raise ConfigError(f"{path}:{getattr(e, 'lineno', None) or 1}: syntax error: {getattr(e, 'msg', e)}") from None
    for node in tree.body:
        where = f"{path}:{node.lineno}"
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            continue  # a docstring
        if isinstance(node, ast.Import) and [(a.name, a.asname) for a in node.names] == [("time", None)]:
            continue  # nanoGPT's configs import time for a run name: time.time() is understood, nothing is run
        if not (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)):
            code = (ast.get_source_segment(source, node) or "").splitlines()[0]
            raise ConfigError(f"{where}: `{code}` is not allowed: a config file is read, not run, so it may only "
                              "hold `name = value` lines")
        try:
            yield node.targets[0].id, _literal(node.value), where
        except (_NotLiteral, RecursionError) as e:
            raise ConfigError(f"{where}: the value of {node.targets[0].id} is not a literal ({e})") from None


class _NotLiteral(Exception):
    pass


_OPS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
        ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod, ast.Pow: operator.pow, ast.USub: operator.neg,
        ast.UAdd: operator.pos}
_CALLS = {"str": str, "int": int, "float": float, "time.time": time.time}


def _literal(node):
    """The value of a constant expression (see the module's docstring); anything else (names,
    other calls, attributes...) raises _NotLiteral. Nothing is evaluated but numbers and strings."""
    if isinstance(node, ast.Constant) and isinstance(node.value, (str, int, float, bool, type(None))):
        return node.value
    if isinstance(node, (ast.UnaryOp, ast.BinOp)) and type(node.op) in _OPS:
        args = [_literal(n) for n in ([node.operand] if isinstance(node, ast.UnaryOp) else [node.left, node.right])]
        if isinstance(node.op, ast.Add) and all(isinstance(a, str) for a in args):
            return args[0] + args[1]
        if any(isinstance(a, bool) or not isinstance(a, (int, float)) for a in args):
            raise _NotLiteral("arithmetic works on numbers only")
        if isinstance(node.op, ast.Pow) and (abs(args[0]) > 1e6 or abs(args[1]) > 100):
            raise _NotLiteral("power too large")  # keeps 9**9**9 from hanging the parser
        return _apply(_OPS[type(node.op)], args)
    if isinstance(node, ast.Call) and not node.keywords:
        func = _CALLS.get(ast.unparse(node.func))
        if func is None or len(node.args) != (0 if func is time.time else 1):
            raise _NotLiteral("calls other than str(), int(), float() and time.time() are not allowed")
        return _apply(func, [_literal(a) for a in node.args])
    raise _NotLiteral(f"{type(node).__name__} expressions are not allowed")


def _apply(func, args):
    try:
        return func(*args)
    except (ArithmeticError, TypeError, ValueError) as e:  # 1 / 0, int("x"), int(float("inf"))...
        raise _NotLiteral(str(e)) from None
