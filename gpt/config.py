"""Training configuration: every knob of nanoGPT's train.py, set from config files and flags.

As in nanoGPT, ``python train.py config/x.py --batch_size=32`` applies the config file, then the
flag. Unlike nanoGPT, a config file is parsed, never executed: it may only hold
``name = literal`` lines (arithmetic of numbers such as ``5000 * 2`` allowed).
"""

import ast
import difflib
import math
import operator
import re
import time
from dataclasses import asdict, dataclass, field, fields, replace
from pathlib import Path


class ConfigError(ValueError):
    """A bad setting; the message names the setting, and the file and line it came from."""


def knob(default, doc, choices=None):
    """A TrainConfig field with its one-line help ``doc`` and, optionally, its allowed values."""
    return field(default=default, metadata={"help": doc, "choices": choices})


@dataclass
class TrainConfig:
    """All training settings. The defaults train a small character model on the Python docs
    corpus in a few minutes on 2 CPU cores (nanoGPT's "baby" shakespeare_char settings).

    parse_config also sets ``given``, the names of the settings its arguments set (a resumed run
    takes the others from its checkpoint); it is not a field, so it is never saved or compared."""

    # I/O
    out_dir: str = knob("out", "folder for checkpoints")
    eval_interval: int = knob(250, "estimate train/val loss every this many iterations")
    log_interval: int = knob(10, "print the training loss every this many iterations")
    eval_iters: int = knob(20, "batches per split averaged in each loss estimate")
    eval_only: bool = knob(False, "estimate the loss once, then exit")
    always_save_checkpoint: bool = knob(
        False, "write ckpt.safetensors at every evaluation (else only when val loss improves, as nanoGPT); "
        "best.safetensors is written whenever it does")
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
    tokenizer: str = knob("auto", "auto: the dataset's own (gpt2 for shakespeare, else char)",
                          ("auto", "char", "gpt2"))
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
    peak_flops: float = knob(
        0.0, "the FLOP/s that MFU (the model's forward+backward FLOPs per second) is a share of; 0 = measure: "
        "the best of several float32 1024x1024 matmuls at start, raised whenever a step runs faster")
    # data-parallel training under `mpiexec -n N python train.py` (gpt/distributed.py)
    backend: str = knob("auto", "collectives between ranks: auto (mpi on cpu, nccl on cuda), mpi or nccl",
                        ("auto", "mpi", "nccl"))
    ddp_timeout: float = knob(300.0, "seconds a rank waits for the others in a collective before it gives up")

    def validate(self):
        """Raise ConfigError for the first inconsistent or out-of-range setting."""
        for f in fields(self):
            choices = f.metadata["choices"]
            if choices and getattr(self, f.name) not in choices:
                raise ConfigError(f"{f.name}={getattr(self, f.name)!r} is not one of {', '.join(choices)}")
        for name in _POSITIVE:
            if getattr(self, name) <= 0:
                raise ConfigError(f"{name} must be positive, got {getattr(self, name)!r}")
        for name in _NON_NEGATIVE:
            if getattr(self, name) < 0:
                raise ConfigError(f"{name} must not be negative, got {getattr(self, name)!r}")
        for name in ("dropout", "beta1", "beta2"):
            if not 0 <= getattr(self, name) < 1:
                raise ConfigError(f"{name} must be in [0, 1), got {getattr(self, name)!r}")
        if self.n_embd % self.n_head:
            raise ConfigError(f"n_embd={self.n_embd} is not a multiple of n_head={self.n_head}")
        if self.decay_lr and self.min_lr > self.learning_rate:
            raise ConfigError(f"min_lr={self.min_lr} is above learning_rate={self.learning_rate}")
        if not self.dataset:
            raise ConfigError("dataset must not be empty")


_POSITIVE = ("eval_interval", "log_interval", "eval_iters", "gradient_accumulation_steps", "batch_size",
             "block_size", "n_layer", "n_head", "n_embd", "learning_rate", "lr_decay_iters", "ddp_timeout")
_NON_NEGATIVE = ("max_iters", "weight_decay", "grad_clip", "warmup_iters", "min_lr", "peak_flops")
_FIELDS = {f.name: f for f in fields(TrainConfig)}

# what a resumed run cannot change: the model's shape and the data it was trained on
RESUME_FIXED = ("n_layer", "n_head", "n_embd", "block_size", "bias", "dataset")

# nanoGPT settings that have no meaning here: accepted, so its config files load, with a notice
IGNORED_KEYS = {
    "dtype": "minigrad chooses its own dtype",
}


def parse_config(argv):
    """Build a TrainConfig from command-line arguments, nanoGPT style.

    argv: list[str]; a plain argument is a config file of ``name = literal`` lines, read
    without executing it; ``--key=value``, ``--key value`` and, for booleans, ``--key`` set
    one knob (train.py answers -h/--help itself, with help_text()). Later arguments override
    earlier ones; values are Python literals where they parse as such, else strings.
    Returns (config, notices): notices is a list of one-line messages for the caller to print
    (ignored nanoGPT settings, a dataset name derived from --input). Any bad setting raises
    ConfigError naming it.
    """
    notices = []
    values = {}
    args = list(argv)
    while args:
        arg = args.pop(0)
        if not arg.startswith("--"):
            for key, value, where in _read_config_file(arg):
                _assign(values, key, value, where, notices)
            continue
        key, eq, raw = arg[2:].partition("=")
        key = key.replace("-", "_")
        if not eq:
            f = _FIELDS.get(key)
            if f is not None and f.type is not bool:
                if not args or args[0].startswith("--"):
                    raise ConfigError(f"--{key} needs a value: --{key}=VALUE")
                raw = args.pop(0)
            elif args and args[0].lower() in ("true", "false"):
                raw = args.pop(0)
            else:
                raw = "True"  # a bare flag (an unknown key is reported by _assign)
        _assign(values, key, _parse_flag_value(key, raw), f"--{key}", notices)
    if values.get("input") and "dataset" not in values:
        # a corpus of one's own must not overwrite the prepared default dataset
        values["dataset"] = _name_from_path(values["input"])
        notices.append(f"dataset name {values['dataset']!r} taken from --input (--dataset=NAME to choose another)")
    cfg = _build(values)
    cfg.given = frozenset(values)
    return cfg, notices


def given_keys(cfg):
    """The settings a config file or flag set (parse_config records them); for a TrainConfig built
    another way, every setting counts as given."""
    given = getattr(cfg, "given", None)
    return frozenset(_FIELDS) if given is None else given


def resume_config(cfg, saved):
    """The config of a resumed run: the checkpoint's settings `saved` (a dict), overridden by the
    ones `cfg` was given. Raises ConfigError when a given one is in RESUME_FIXED and differs."""
    given = given_keys(cfg)
    values = {}
    for key, value in saved.items():
        # the data is read as prepared then, not prepared again from a file that may have changed since
        if key in _FIELDS and key not in ("init_from", "out_dir", "overwrite", "input"):
            try:
                values[key] = _coerce(_FIELDS[key], value, "checkpoint")
            except ConfigError:
                continue  # a setting this version reads differently: the flag's value stands
    for key in RESUME_FIXED:
        if key in given and key in values and getattr(cfg, key) != values[key]:
            raise ConfigError(
                f"cannot resume with {key}={getattr(cfg, key)!r}: the checkpoint was trained with "
                f"{key}={values[key]!r} (a resumed run keeps {', '.join(RESUME_FIXED)}; see --help)")
    values.update({key: getattr(cfg, key) for key in given if key in _FIELDS})
    values["init_from"], values["out_dir"] = cfg.init_from, cfg.out_dir
    out = _build(values)
    out.given = given_keys(cfg)
    return out


def config_from_dict(values):
    """TrainConfig from a dict (e.g. ``dataclasses.asdict`` of one stored in a checkpoint),
    type-checked and validated like parse_config's input; nanoGPT-only keys are dropped."""
    checked = {}
    for key, value in values.items():
        _assign(checked, key, value, "config", [])
    return _build(checked)


def config_to_dict(cfg):
    """JSON-serialisable dict of a TrainConfig (the inverse of config_from_dict)."""
    return asdict(cfg)


def help_text():
    """Usage text listing every knob with its default and help (for ``train.py --help``)."""
    rows = []
    for f in fields(TrainConfig):
        choices = f.metadata["choices"]
        extra = f" ({'|'.join(choices)})" if choices else ""
        rows.append((f"--{f.name}={_show(f.default)}", f.metadata["help"] + extra))
    width = max(len(flag) for flag, _ in rows)
    lines = [
        "usage: python train.py [CONFIG_FILE.py ...] [--key=value ...]",
        "",
        "Config files hold `key = value` lines (nanoGPT's format) and are read, not run.",
        "Arguments apply left to right, so later ones override earlier ones.",
        "",
    ]
    lines += [f"  {flag:<{width}}  {text}" for flag, text in rows]
    lines += [
        "",
        "--init_from=resume continues the run in out_dir with the settings stored in its checkpoint;",
        "settings given again override them, except the model's shape and data, which a resumed run",
        f"keeps ({', '.join(RESUME_FIXED)}: giving another value is an error).",
        "The rest may change: max_iters, the learning-rate schedule, evaluation, logging, batch size,",
        "dropout, device...",
        "",
        "A fresh run (--init_from=scratch) refuses an out_dir that holds an earlier run's checkpoints",
        "unless --overwrite=True. MFU is the model's forward+backward FLOPs per second as a share",
        "of --peak_flops (measured at start unless given), never shown above 100%.",
    ]
    return "\n".join(lines)


def _build(values):
    cfg = replace(TrainConfig(), **values)
    cfg.validate()
    return cfg


def _assign(values, key, value, where, notices):
    """Type-check ``value`` for knob ``key`` and store it in ``values``."""
    if key in IGNORED_KEYS:
        notices.append(f"ignoring nanoGPT setting {key}={value!r} ({where}): {IGNORED_KEYS[key]}")
        return
    f = _FIELDS.get(key)
    if f is None:
        close = difflib.get_close_matches(key, list(_FIELDS) + list(IGNORED_KEYS), n=1)
        hint = f"; did you mean {close[0]!r}?" if close else "; see --help for the list"
        raise ConfigError(f"{where}: unknown setting {key!r}{hint}")
    values[key] = _coerce(f, value, where)


def _coerce(f, value, where):
    """``value`` as the type of field ``f``; bools are not numbers, ints are accepted as floats
    (finite ones only), and whole floats such as 5e3 as ints."""
    typ = f.type
    if typ is bool:
        if isinstance(value, str) and value.lower() in ("true", "false"):
            return value.lower() == "true"
        ok = isinstance(value, bool)
    elif typ is int:
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        ok = isinstance(value, int) and not isinstance(value, bool)
    elif typ is float:
        ok = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
        value = float(value) if ok else value
    else:
        ok = isinstance(value, typ)
    if not ok:
        expected = "float (finite)" if typ is float else typ.__name__
        raise ConfigError(f"{where}: {f.name}={value!r} should be of type {expected}")
    return value


def _parse_flag_value(key, raw):
    """A flag's text as a literal where it parses as one; for string knobs, the text itself
    unless it is a quoted string (so --out_dir=1e3 stays "1e3")."""
    try:
        value = _literal(ast.parse(raw.strip(), mode="eval").body)
    except (SyntaxError, _NotLiteral):
        return raw
    f = _FIELDS.get(key)
    if f is not None and f.type is str and not isinstance(value, str):
        return raw
    return value


def _read_config_file(path):
    """Yield (key, value, "file:line") for each ``name = literal`` line of a config file."""
    try:
        source = Path(path).read_text(encoding="utf-8")
    except OSError as e:
        raise ConfigError(f"cannot read config file {path!r}: {e.strerror or e}") from None
    except UnicodeDecodeError:
        raise ConfigError(f"config file {path!r} is not UTF-8 text") from None
    try:
        tree = ast.parse(source, filename=str(path))
    except (SyntaxError, ValueError) as e:  # ValueError: NUL bytes, on older Pythons
        raise ConfigError(f"{path}:{getattr(e, 'lineno', 1)}: syntax error: {getattr(e, 'msg', e)}") from None
    for node in tree.body:
        where = f"{path}:{node.lineno}"
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            continue  # a docstring
        if isinstance(node, ast.Import) and all(a.name == "time" and a.asname is None for a in node.names):
            continue  # nanoGPT's configs import time for a run name: time.time() is understood below, nothing is run
        if not (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)):
            code = (ast.get_source_segment(source, node) or "").splitlines()[0]
            raise ConfigError(
                f"{where}: `{code}` is not allowed: a config file is read, not run, "
                "so it may only hold `name = value` lines"
            )
        try:
            value = _literal(node.value)
        except _NotLiteral as e:
            raise ConfigError(f"{where}: the value of {node.targets[0].id} is not a literal ({e})") from None
        yield node.targets[0].id, value, where


class _NotLiteral(Exception):
    pass


_ARITHMETIC = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
               ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod, ast.Pow: operator.pow}


_CONVERSIONS = {"str": str, "int": int, "float": float}


def _literal(node):
    """Value of a constant expression: str/number/bool/None literals, + - * / // % ** of numbers,
    + of strings, str/int/float of those, and time.time() (nanoGPT's run names). Anything else
    (names, other calls, attributes...) raises _NotLiteral."""
    if isinstance(node, ast.Constant) and isinstance(node.value, (str, int, float, bool, type(None))):
        return node.value
    if isinstance(node, ast.Call) and not node.keywords:
        f = node.func
        if (isinstance(f, ast.Attribute) and f.attr == "time" and isinstance(f.value, ast.Name)
                and f.value.id == "time" and not node.args):
            return time.time()
        if isinstance(f, ast.Name) and f.id in _CONVERSIONS and len(node.args) == 1:
            try:
                return _CONVERSIONS[f.id](_literal(node.args[0]))
            except (TypeError, ValueError) as e:
                raise _NotLiteral(str(e)) from None
        raise _NotLiteral("calls other than str(), int(), float() and time.time() are not allowed")
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = _literal(node.left), _literal(node.right)
        if isinstance(left, str) and isinstance(right, str):
            return left + right
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.UAdd, ast.USub)):
        operand = _number(node.operand)
        return -operand if isinstance(node.op, ast.USub) else operand
    if isinstance(node, ast.BinOp) and type(node.op) in _ARITHMETIC:
        left, right = _number(node.left), _number(node.right)
        if isinstance(node.op, ast.Pow) and (abs(left) > 1e6 or abs(right) > 100):
            raise _NotLiteral("power too large")  # keeps 9**9**9 from hanging the parser
        try:
            return _ARITHMETIC[type(node.op)](left, right)
        except (ArithmeticError, ValueError) as e:
            raise _NotLiteral(str(e)) from None
    raise _NotLiteral(f"{type(node).__name__} expressions are not allowed")


def _number(node):
    value = _literal(node)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise _NotLiteral("arithmetic works on numbers only")
    return value


def _name_from_path(path):
    stem = Path(path).expanduser().resolve().stem
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", stem).lstrip("._-") or "custom"


def _show(value):
    return value if isinstance(value, str) else repr(value)

