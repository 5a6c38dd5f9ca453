import json
from dataclasses import fields
from pathlib import Path

import pytest

from gpt.config import ConfigError, TrainConfig, config_from_dict, config_to_dict, help_text, parse_config

CONFIG_DIR = Path(__file__).resolve().parents[2] / "config"

# nanoGPT's config/train_shakespeare_char.py in its own format: comments, wandb keys and all
NANOGPT_FILE = """\
# train a miniature character-level shakespeare model
out_dir = 'out-shakespeare-char'
eval_interval = 250 # keep frequent because we'll overfit
eval_iters = 200
log_interval = 10 # don't print too too often

always_save_checkpoint = False

wandb_log = False # override via command line if you like
wandb_project = 'shakespeare-char'
wandb_run_name = 'mini-gpt'

dataset = 'shakespeare_char'
gradient_accumulation_steps = 1
batch_size = 64
block_size = 256 # context of up to 256 previous characters

n_layer = 6
n_head = 6
n_embd = 384
dropout = 0.2

learning_rate = 1e-3 # with baby networks can afford to go a bit higher
max_iters = 5000
lr_decay_iters = 5000 # make equal to max_iters usually
min_lr = 1e-4 # learning_rate / 10 usually
beta2 = 0.99 # make a bit bigger because number of tokens per iter is small

warmup_iters = 100 # not super necessary potentially

# on macbook also add
# device = 'cpu'  # run on cpu only
# compile = False # do not torch compile the model
"""


def config(argv):
    """parse_config's TrainConfig alone."""
    cfg, _ = parse_config(argv)
    return cfg


def config_file(tmp_path, text, name="conf.py"):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return str(path)


def test_defaults_are_valid_and_documented():
    cfg, notices = parse_config([])
    assert cfg == TrainConfig() and notices == []
    assert (cfg.dataset, cfg.tokenizer, cfg.device, cfg.init_from) == ("default", "auto", "cpu", "scratch")
    assert (cfg.n_layer, cfg.n_head, cfg.n_embd, cfg.block_size, cfg.batch_size) == (4, 4, 128, 64, 12)
    assert cfg.max_iters == cfg.lr_decay_iters == 2000
    text = help_text()
    for f in fields(TrainConfig):
        assert f.type in (bool, int, float, str)
        assert f.metadata["help"]
        assert f"--{f.name}=" in text


def test_nanogpt_config_file_is_read(tmp_path):
    cfg, notices = parse_config([config_file(tmp_path, NANOGPT_FILE)])
    assert (cfg.n_layer, cfg.n_head, cfg.n_embd, cfg.block_size, cfg.batch_size) == (6, 6, 384, 256, 64)
    assert (cfg.dropout, cfg.learning_rate, cfg.min_lr, cfg.beta2) == (0.2, 1e-3, 1e-4, 0.99)
    assert cfg.out_dir == "out-shakespeare-char" and cfg.eval_iters == 200
    assert (cfg.wandb_log, cfg.wandb_project, cfg.wandb_run_name) == (False, "shakespeare-char", "mini-gpt")
    assert notices == []
    cfg, notices = parse_config([config_file(tmp_path, NANOGPT_FILE + "compile = True\n")])
    assert notices == [] and cfg.compile is True  # a setting of its own now (minigrad.compile)


@pytest.mark.parametrize(
    "line, found",
    [
        ("import os", "import os"),
        ("batch_size = len('abc')", "not a literal"),
        ("os.system('touch pwned')", "os.system"),
        ("if True:\n    batch_size = 1", "if True:"),
        ("batch_size: int = 3", "batch_size: int = 3"),
        ("a = b = 3", "a = b = 3"),
        ("max_iters = max_iters * 2", "not a literal"),
        ("max_iters = 9 ** 9 ** 9", "power too large"),
        ("max_iters = 1 / 0", "division by zero"),
        ("out_dir = 'a' * 3", "numbers only"),
        ("batch_size = (", "syntax error"),
    ],
)
def test_config_files_are_parsed_not_executed(tmp_path, line, found):
    path = config_file(tmp_path, f"# header\nseed = 1\n{line}\n")
    with pytest.raises(ConfigError, match=r"conf\.py:3: ") as err:
        parse_config([path])
    assert found in str(err.value)


def test_a_config_file_cannot_run_code(tmp_path):
    marker = tmp_path / "ran"
    path = config_file(tmp_path, f"batch_size = __import__('pathlib').Path({str(marker)!r}).touch()\n")
    with pytest.raises(ConfigError):
        parse_config([path])
    assert not marker.exists()


def test_arithmetic_of_literals_in_files_and_flags(tmp_path):
    path = config_file(tmp_path, '"""docstring"""\nmax_iters = 5000 * 2\nmin_lr = 6e-4 / 10\nseed = 3 - 1\n')
    cfg = config([path, "--lr_decay_iters=2**10", "--learning_rate=-(-6e-4)"])
    assert (cfg.max_iters, cfg.seed, cfg.lr_decay_iters, cfg.learning_rate) == (10000, 2, 1024, 6e-4)
    assert cfg.min_lr == pytest.approx(6e-5)


def test_later_arguments_override_earlier_ones(tmp_path):
    path = config_file(tmp_path, "batch_size = 64\n")
    assert config([path, "--batch_size=8"]).batch_size == 8
    assert config(["--batch_size=8", path]).batch_size == 64


def test_flag_forms():
    cfg = config(["--eval_only", "--bias", "false", "--decay-lr=False", "--n_layer", "2", "--seed", "5"])
    assert (cfg.eval_only, cfg.bias, cfg.decay_lr, cfg.n_layer, cfg.seed) == (True, False, False, 2, 5)
    with pytest.raises(ConfigError, match="seed must not be negative, got -5"):  # "-5" is the value, not a flag
        config(["--seed", "-5"])
    assert config(["--always_save_checkpoint=True"]).always_save_checkpoint is True
    with pytest.raises(ConfigError, match="--batch_size needs a value"):
        parse_config(["--batch_size", "--n_layer=2"])


def test_strings_stay_strings():
    cfg = config(["--out_dir=1e3", "--dataset=shakespeare_char", "--data_dir='quoted dir'", "--init_from=resume"])
    assert (cfg.out_dir, cfg.dataset) == ("1e3", "shakespeare_char")
    assert (cfg.data_dir, cfg.init_from) == ("quoted dir", "resume")


def test_whole_floats_are_accepted_as_ints():
    assert config(["--max_iters=5e3"]).max_iters == 5000
    assert config(["--learning_rate=1"]).learning_rate == 1.0


def test_unknown_key_suggests_the_closest(tmp_path):
    with pytest.raises(ConfigError, match=r"--n_heads: unknown setting 'n_heads'; did you mean 'n_head'\?"):
        parse_config(["--n_heads=4"])
    with pytest.raises(ConfigError, match=r"conf\.py:1: unknown setting 'learnig_rate'; did you mean 'learning_rate'"):
        parse_config([config_file(tmp_path, "learnig_rate = 1e-3\n")])
    with pytest.raises(ConfigError, match="unknown setting 'zzz'; see --help"):
        parse_config(["--zzz"])


@pytest.mark.parametrize(
    "arg, message",
    [
        ("--batch_size=1.5", "batch_size=1.5 should be of type int"),
        ("--batch_size=abc", "batch_size='abc' should be of type int"),
        ("--eval_only=1", "eval_only=1 should be of type bool"),
        ("--learning_rate=True", "learning_rate=True should be of type float"),
        ("--learning_rate=1e999", r"learning_rate=inf should be of type float \(finite\)"),
        ("--dropout=[0.1]", r"dropout='\[0.1\]' should be of type float"),
    ],
)
def test_wrong_type_names_key_value_and_type(arg, message):
    with pytest.raises(ConfigError, match=message):
        parse_config([arg])


def test_wrong_type_in_a_file_names_the_line(tmp_path):
    with pytest.raises(ConfigError, match=r"conf\.py:2: out_dir=5 should be of type str"):
        parse_config([config_file(tmp_path, "seed = 1\nout_dir = 5\n")])


@pytest.mark.parametrize(
    "args, message",
    [
        (["--n_embd=100", "--n_head=3"], "n_embd=100 is not a multiple of n_head=3"),
        (["--device=tpu"], "device='tpu' is not one of cpu, cuda"),
        (["--tokenizer=bpe"], "tokenizer='bpe' is not one of auto, char, gpt2"),
        (["--batch_size=0"], "batch_size must be positive, got 0"),
        (["--max_iters=-1"], "max_iters must not be negative"),
        (["--dropout=1.0"], r"dropout must be in \[0, 1\)"),
        (["--min_lr=1e-2"], "min_lr=0.01 is above learning_rate=0.001"),
        (["--dataset="], "dataset must not be empty"),
    ],
)
def test_validation(args, message):
    with pytest.raises(ConfigError, match=message):
        parse_config(args)


def test_ignored_nanogpt_flags_give_notices():
    cfg, notices = parse_config(["--dtype=bfloat16"])
    assert cfg == TrainConfig()
    assert [n.split("=")[0] for n in notices] == [
        "ignoring nanoGPT setting dtype",
    ]
    assert config(["--wandb_log", "--wandb_project=p"]).wandb_log  # a setting of its own (gpt/wandb_log.py)


def test_an_input_names_its_own_dataset():
    cfg, notices = parse_config(["--input=/texts/My Novel.txt"])
    assert cfg.dataset == "My_Novel"
    assert "'My_Novel' taken from --input" in notices[0]
    assert config(["--input=/texts/x.txt", "--dataset=mine"]).dataset == "mine"


def test_dict_round_trip():
    cfg = config(["--batch_size=3", "--dropout=0.1", "--out_dir=o"])
    again = config_from_dict(json.loads(json.dumps(config_to_dict(cfg))))
    assert again == cfg
    with pytest.raises(ConfigError, match="config: unknown setting 'batchsize'"):
        config_from_dict({"batchsize": 3})


def test_missing_config_file():
    with pytest.raises(ConfigError, match="cannot read config file 'nowhere.py'"):
        parse_config(["nowhere.py"])


def test_shipped_config_files():
    baby = config([str(CONFIG_DIR / "train_shakespeare_char_baby.py")])
    assert baby.out_dir == "out-shakespeare-char-baby" and baby.dataset == "shakespeare_char"
    assert (baby.n_layer, baby.n_head, baby.n_embd, baby.block_size, baby.batch_size) == (4, 4, 128, 64, 12)
    assert (baby.max_iters, baby.lr_decay_iters, baby.eval_iters, baby.dropout) == (2000, 2000, 20, 0.0)
    full = config([str(CONFIG_DIR / "train_shakespeare_char.py")])
    assert full.out_dir == "out-shakespeare-char" and full.dataset == "shakespeare_char"
    assert (full.n_layer, full.n_head, full.n_embd, full.block_size, full.batch_size) == (6, 6, 384, 256, 64)
    assert (full.max_iters, full.lr_decay_iters, full.eval_iters, full.dropout) == (5000, 5000, 200, 0.2)
    assert (full.learning_rate, full.min_lr, full.beta2, full.warmup_iters) == (1e-3, 1e-4, 0.99, 100)


def test_resume_config_takes_the_checkpoints_settings_unless_given():
    from gpt.config import resume_config

    saved = config_to_dict(config(["--n_layer=2", "--max_iters=100", "--learning_rate=3e-3", "--out_dir=old"]))
    cfg = resume_config(config(["--init_from=resume", "--max_iters=200", "--out_dir=here"]), saved)
    assert (cfg.n_layer, cfg.learning_rate, cfg.max_iters) == (2, 3e-3, 200)  # from the checkpoint / given
    assert (cfg.init_from, cfg.out_dir) == ("resume", "here")
    assert resume_config(config(["--init_from=resume", "--n_layer=2"]), saved).n_layer == 2  # the same: fine
    with pytest.raises(ConfigError, match="cannot resume with n_layer=4: the checkpoint was trained with n_layer=2"):
        resume_config(config(["--init_from=resume", "--n_layer=4"]), saved)  # the default, but given
    saved["future_knob"] = 1  # a setting of another version: ignored
    assert resume_config(config(["--init_from=resume"]), saved).n_layer == 2


def test_nanogpt_finetune_config_is_read_as_it_is(tmp_path):
    # nanoGPT's config/finetune_shakespeare.py imports time for its run name; the name is
    # understood without running the file, and nothing else a config file could call is
    path = config_file(tmp_path, "import time\n\nout_dir = 'out-shakespeare'\neval_interval = 5\n"
                                 "wandb_log = False # feel free to turn on\nwandb_project = 'shakespeare'\n"
                                 "wandb_run_name = 'ft-' + str(time.time())\n\ndataset = 'shakespeare'\n"
                                 "init_from = 'gpt2-xl' # this is the largest GPT-2 model\n"
                                 "batch_size = 1\ngradient_accumulation_steps = 32\nmax_iters = 20\n"
                                 "learning_rate = 3e-5\ndecay_lr = False\n")
    cfg, notices = parse_config([path])
    assert (cfg.init_from, cfg.dataset, cfg.gradient_accumulation_steps, cfg.learning_rate) == \
        ("gpt2-xl", "shakespeare", 32, 3e-5)
    assert notices == [] and cfg.wandb_project == "shakespeare" and cfg.wandb_run_name.startswith("ft-")
    for line in ("import os", "import time as t", "seed = time.sleep(5)", "seed = int(open('f'))"):
        with pytest.raises(ConfigError, match="conf.py:1: "):
            parse_config([config_file(tmp_path, line + "\n")])


def test_nanogpt_backend_knob_sets_ddp_backend(tmp_path):
    # nanoGPT's `backend` (its DDP collectives) is ddp_backend here: `backend` alone would read as the kernels
    path = tmp_path / "ddp.py"
    path.write_text("backend = 'nccl'\n")
    cfg, notices = parse_config([str(path)])
    assert cfg.ddp_backend == "nccl" and not notices
    cfg, _ = parse_config(["--backend=mpi"])
    assert cfg.ddp_backend == "mpi"
    cfg, notices = parse_config(["--backend=gloo"])  # nanoGPT's CPU choice: MPI carries CPU tensors here
    assert cfg.ddp_backend == "mpi" and any("gloo" in n for n in notices)
    assert not hasattr(cfg, "backend") and "--ddp_backend=auto" in help_text()
    with pytest.raises(ConfigError, match="ddp_backend='tcp' is not one of auto, mpi, nccl"):
        parse_config(["--ddp_backend=tcp"])


@pytest.mark.parametrize(
    "text, message",
    [
        ("seed = int(float('inf'))\n", r"conf\.py:1: the value of seed is not a literal \(cannot convert"),
        ("learning_rate = 1000000 ** 100\n", r"conf\.py:1: learning_rate=1000+ is beyond float32's range"),
        ("seed = " + "-" * 1200 + "1\n", r"conf\.py:1: (syntax error|the value of seed is not a literal)"),
        ("seed = " + "-" * 5000 + "1\n", r"conf\.py:1: (syntax error|the value of seed is not a literal)"),
        ("seed = 1\0\n", r"conf\.py:1: syntax error"),
    ],
)
def test_odd_values_are_one_line_errors(tmp_path, text, message):
    # these once escaped as OverflowError or RecursionError, or named line None
    with pytest.raises(ConfigError, match=message):
        parse_config([config_file(tmp_path, text)])


def test_an_int_too_big_for_float_is_out_of_float32s_range():
    with pytest.raises(ConfigError, match="--learning_rate: learning_rate=1000+ is beyond float32's range"):
        parse_config(["--learning_rate=1000000**100"])


def test_backend_flag_takes_the_next_argument_as_ddp_backend():
    assert config(["--backend", "nccl"]).ddp_backend == "nccl"
    with pytest.raises(ConfigError, match="--backend needs a value"):
        parse_config(["--backend"])
