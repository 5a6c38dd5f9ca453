"""train.py and sample.py as a user runs them: every mistake is one line with exit status 2, and
no checkpoint in out_dir changes unless the user asked for it (issue 21's cases, each by its number)."""
import importlib.util
import json
import re
import shutil
import signal
import subprocess

import pytest
from cli_runner import checkpoint_hashes, cli, edit_tree, one_line, popen, tiny

import nn
from gpt.trainer import MFU_AFTER


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """An out_dir holding a finished 6-iteration run (ckpt, best, log); tests work on copies."""
    tmp = tmp_path_factory.mktemp("trained")
    r = cli("train.py", *tiny(tmp, always_save_checkpoint=True))
    assert r.returncode == 0, r.stderr
    return tmp


@pytest.fixture
def run_dir(trained, tmp_path):
    """A copy of the trained run: (flags that reach it, its out_dir, its files' sha256)."""
    shutil.copytree(trained, tmp_path, dirs_exist_ok=True)
    out = tmp_path / "out"
    return tiny(tmp_path), out, checkpoint_hashes(out)


def flags(args, **over):
    """`args` with some flags replaced or added."""
    keep = [a for a in args if a.split("=")[0][2:] not in over]
    return keep + [f"--{k}={v}" for k, v in over.items()]


# ---- 1: a fresh run never replaces an earlier run ------------------------------------------------
def test_1_fresh_run_over_an_earlier_run_is_refused(run_dir):
    args, out, before = run_dir
    r = cli("train.py", *flags(args, max_iters=1))
    assert r.returncode == 2
    line = one_line(r.stderr)
    assert line.startswith("train.py: error: out_dir ") and "already holds a run" in line
    assert "ckpt.safetensors at iteration 6, best val loss " in line
    for way in ("--init_from=resume", "another --out_dir", "--overwrite=True"):
        assert way in line
    assert r.stdout == ""  # no work started
    assert checkpoint_hashes(out) == before  # the log too


def test_1_overwrite_replaces_the_earlier_run(run_dir):
    args, out, before = run_dir
    r = cli("train.py", *flags(args, max_iters=3, overwrite=True))
    assert r.returncode == 0, r.stderr
    assert "--overwrite: replacing the run in " in r.stdout
    assert nn.load(out / "ckpt.safetensors")["iter_num"] == 3
    iters = [json.loads(line)["iter"] for line in (out / "log.jsonl").read_text().splitlines()]
    assert iters[0] == 0 and iters == sorted(iters)  # a new log, not the old one continued


# ---- 2: resume is exact in every setting (tests/gpt/test_resume.py) ------------------------------
# ---- 3: a resumed run keeps its model; one that trains nothing writes nothing ---------------------
def test_3_resume_with_another_model_shape_is_refused(run_dir):
    args, out, before = run_dir
    r = cli("train.py", *flags(args, init_from="resume", n_layer=2, max_iters=9))
    assert r.returncode == 2
    line = one_line(r.stderr)
    assert "cannot resume with n_layer=2" in line and "trained with n_layer=1" in line
    assert checkpoint_hashes(out) == before


def test_3_resume_takes_unset_settings_from_the_checkpoint(run_dir, tmp_path):
    _, out, before = run_dir
    # only the out_dir, data_dir and a longer run: the model shape (n_layer=1, not the default 4) comes
    # from the checkpoint
    r = cli("train.py", f"--out_dir={out}", f"--data_dir={tmp_path / 'data'}", "--init_from=resume", "--max_iters=9")
    assert r.returncode == 0, r.stderr
    assert f"resuming from {out / 'ckpt.safetensors'} at iteration 6" in r.stdout
    ckpt = nn.load(out / "ckpt.safetensors")
    assert ckpt["iter_num"] == 9 and ckpt["model_args"]["n_layer"] == 1 and ckpt["config"]["n_embd"] == 16


def test_3_resume_with_nothing_to_train_writes_nothing(run_dir):
    args, out, before = run_dir
    r = cli("train.py", *flags(args, init_from="resume"))  # max_iters=6: where it ended
    assert r.returncode == 0, r.stderr
    assert "nothing to train: " in r.stdout and "iteration 6, max_iters=6" in r.stdout
    assert checkpoint_hashes(out) == before


def test_3_help_says_what_may_change_on_resume():
    r = cli("train.py", "--help")
    assert r.returncode == 0
    assert "keeps" in r.stdout and "n_layer, n_head, n_embd, block_size, bias, dataset" in r.stdout
    assert "The rest may change: max_iters, the learning-rate schedule" in r.stdout


# ---- 7: one line, never a traceback ----------------------------------------------------------------
def test_7_out_dir_that_is_a_file(tmp_path):
    target = tmp_path / "notes.txt"
    target.write_text("mine\n")
    for more in ([], ["--init_from=resume"]):
        r = cli("train.py", *tiny(tmp_path, out_dir=target), *more)
        assert r.returncode == 2
        line = one_line(r.stderr)
        assert f"out_dir {target} is a file, not a folder" in line
        assert r.stdout == ""  # refused before any work
    assert target.read_text() == "mine\n"


def test_7_cuda_without_cupy(tmp_path):
    from minigrad import cuda_is_available

    if cuda_is_available():
        pytest.skip("this machine has a GPU")
    r = cli("train.py", *tiny(tmp_path), "--device=cuda")
    assert r.returncode == 2
    assert "cupy" in one_line(r.stderr) or "GPU" in one_line(r.stderr)
    assert not (tmp_path / "out" / "ckpt.safetensors").exists()


def test_7_a_batch_that_cannot_fit_says_how_much_memory_it_needs(tmp_path):
    r = cli("train.py", *tiny(tmp_path), "--batch_size=100000000")
    assert r.returncode == 2
    line = one_line(r.stderr)
    assert "batch_size=100000000 with block_size=16 needs at least " in line and "iB of memory" in line
    assert "lower batch_size" in line


def test_7_a_closed_stdout_pipe_stops_printing_not_training(tmp_path):
    p = popen("train.py", *tiny(tmp_path, max_iters=40, log_interval=1, eval_interval=20),
              stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    head = [p.stdout.readline() for _ in range(2)]  # `python train.py | head -2`
    p.stdout.close()
    err = p.stderr.read().decode()
    assert p.wait(timeout=120) == 0, err
    assert head[0].startswith(b"model: ") and "Traceback" not in err and "BrokenPipe" not in err
    assert nn.load(tmp_path / "out" / "ckpt.safetensors")["iter_num"] == 40  # the final save happened


EDITS = {
    "iter_num a string": (lambda t: t.update(iter_num="six"), "entry 'iter_num' holds a str"),
    "model_args a list": (lambda t: t.update(model_args=[1, 2]), "entry 'model_args' holds a list"),
    "n_layer zero": (lambda t: t["model_args"].update(n_layer=0), "model argument n_layer=0 is not valid"),
    "a bad tuple tag": (lambda t: t.update(model_args={"__tuple__": 5}), "malformed object tree"),
    "sampler state": (lambda t: t["sampler"].update(bit_generator="x"), "batch sampler state is malformed"),
}


@pytest.mark.parametrize("edit", list(EDITS))
def test_7_hand_edited_checkpoint_metadata(run_dir, edit):
    args, out, _ = run_dir
    change, message = EDITS[edit]
    ckpt = out / "ckpt.safetensors"
    edit_tree(ckpt, change)
    before = checkpoint_hashes(out)
    r = cli("train.py", *flags(args, init_from="resume", max_iters=9))
    assert r.returncode == 2 and "checksum mismatch: the header's object tree was edited" in one_line(r.stderr)
    # edited by a tool that also fixed the CRC: the entries are checked
    edit_tree(ckpt, lambda t: None, recompute_crc=True)
    before = checkpoint_hashes(out)
    r = cli("train.py", *flags(args, init_from="resume", max_iters=9))
    assert r.returncode == 2 and message in one_line(r.stderr), r.stderr
    if edit != "sampler state":  # sample.py needs no sampler
        r = cli("sample.py", f"--out_dir={out}", "--max_new_tokens=3", "--num_samples=1")
        assert r.returncode == 2 and message in one_line(r.stderr), r.stderr
    assert checkpoint_hashes(out) == before


# ---- 4: always_save_checkpoint means what its help says; the end is always resumable ----------------
@pytest.mark.parametrize("always", [False, True])
def test_4_ckpt_is_written_when_val_improves_or_always(tmp_path, always):
    # a high constant learning rate: val loss goes down, then up at the last evaluation (iteration 14)
    args = tiny(tmp_path, learning_rate=0.1, decay_lr=False, grad_clip=0.0, max_iters=14, eval_interval=2,
                always_save_checkpoint=always)
    r = cli("train.py", *args)
    assert r.returncode == 0, r.stderr
    out = tmp_path / "out"
    evals = [json.loads(line) for line in (out / "log.jsonl").read_text().splitlines()]
    evals = [(e["iter"], e["val_loss"]) for e in evals if "val_loss" in e and e["iter"] > 0]
    best_iter = min(evals, key=lambda e: e[1])[0]
    assert best_iter < 14  # the setting does what the test needs
    assert nn.load(out / "best.safetensors")["iter_num"] == best_iter
    assert nn.load(out / "ckpt.safetensors")["iter_num"] == 14  # the run's end, whatever its loss
    saved_at_end = f"(best.safetensors keeps the best): saved {out / 'ckpt.safetensors'} at iteration 14 to continue from"
    assert (saved_at_end in r.stdout) is not always  # with always_save_checkpoint, the evaluation saved it


# ---- 5: a save cut off by a kill leaves a temporary: the next start removes it ---------------------
def test_5_next_start_removes_stale_temporaries_and_says_so(run_dir):
    args, out, _ = run_dir
    stale = [out / ".ckpt.safetensors.0badf00d.tmp", out / ".best.safetensors.12345678.tmp",
             out / ".log.jsonl.9abcdef0.tmp", out / ".loss.png.0123abcd.tmp"]
    for p in stale:
        p.write_bytes(b"half a checkpoint")
    mine = out / ".ckpt.safetensors.notes.tmp"  # not a name a save makes: the user's, kept
    mine.write_text("keep me")
    r = cli("train.py", *flags(args, init_from="resume", max_iters=7))
    assert r.returncode == 0, r.stderr
    for p in stale:
        assert not p.exists()
        assert f"removed {p}, left by a save that was cut off" in r.stdout
    assert mine.read_text() == "keep me"
    plot = ["loss.png"] if importlib.util.find_spec("matplotlib") else []  # drawn at each evaluation (gpt/plot.py)
    assert sorted(p.name for p in out.iterdir()) == sorted(
        [".ckpt.safetensors.notes.tmp", "best.safetensors", "ckpt.safetensors", "log.jsonl", *plot])


def test_5_a_second_process_in_the_same_out_dir_is_refused(run_dir):
    args, out, before = run_dir
    # a run that holds out_dir while a second one starts
    # (it logs nothing and saves nothing while it holds it: whatever changes would be the second's doing)
    first = popen("train.py", *flags(args, init_from="resume", max_iters=100000, eval_interval=100000,
                                     log_interval=100000),
                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert first.stdout.readline().startswith("resuming from")
        r = cli("train.py", *flags(args, init_from="resume", max_iters=9))
        assert r.returncode == 2
        assert f"another process is training in out_dir {out}" in one_line(r.stderr)
    finally:
        first.kill()
        first.wait()
    assert checkpoint_hashes(out) == before


# ---- 10: a stopped run saves, then exits 130 (SIGINT) or 143 (SIGTERM) ------------------------------
@pytest.mark.parametrize("sig, status", [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_10_a_stopped_run_saves_then_exits_with_the_signals_status(tmp_path, sig, status):
    p = popen("train.py", *tiny(tmp_path, max_iters=100000, eval_interval=100000),
              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    for line in p.stdout:
        if line.startswith("iter 3/"):
            break
    p.send_signal(sig)
    out, err = p.communicate(timeout=60)
    assert p.returncode == status, err
    saved = [line for line in out.splitlines() if line.startswith("stopped: saved ")]
    assert len(saved) == 1 and "continue with --init_from=resume" in saved[0]
    it = nn.load(tmp_path / "out" / "ckpt.safetensors")["iter_num"]
    assert saved[0].startswith(f"stopped: saved {tmp_path / 'out' / 'ckpt.safetensors'} at iteration {it} ")
    assert it >= 3 and "Traceback" not in err


# ---- 8: sample.py refuses nonsense, and crops a long prompt as nanoGPT does ------------------------
@pytest.mark.parametrize("arg, message", [
    ("--temperature=-1", "--temperature must be 0 (greedy) or more, got -1.0"),
    ("--temperature=nan", "--temperature must be 0 (greedy) or more, got nan"),
    ("--num_samples=0", "--num_samples must be at least 1, got 0"),
    ("--max_new_tokens=-5", "--max_new_tokens must be at least 1, got -5"),
    ("--top_k=-1", "--top_k must be 0 (all tokens) or more, got -1"),
    ("--num_samples=two", "argument --num_samples: invalid int value: 'two'"),
])
def test_8_sample_refuses_nonsense(run_dir, arg, message):
    _, out, before = run_dir
    r = cli("sample.py", f"--out_dir={out}", arg)
    assert r.returncode == 2 and r.stdout == ""
    assert one_line(r.stderr).startswith(f"sample.py: error: {message}")
    assert checkpoint_hashes(out) == before


def test_8_a_prompt_longer_than_the_context_is_cropped_with_a_notice(run_dir):
    _, out, before = run_dir
    prompt = "Speak, speak. " * 4  # 56 characters, the context is 16
    r = cli("sample.py", f"--out_dir={out}", f"--start={prompt}", "--num_samples=1", "--max_new_tokens=8")
    assert r.returncode == 0, r.stderr
    assert one_line(r.stderr) == ("sample.py: note: the prompt is 56 tokens, longer than the model's context of 16: "
                                  "generating from its last 16")
    sample = r.stdout.split("\n---------------\n")[0]
    assert sample.startswith(prompt) and len(sample) == len(prompt) + 8
    assert checkpoint_hashes(out) == before


# ---- 6: MFU is never above 100% -----------------------------------------------------------------
def mfus(text):
    return [float(m) for m in re.findall(r"mfu (\d+\.\d)%", text)]


def test_6_mfu_never_shows_above_100_percent_of_a_peak_given_too_low(tmp_path):
    r = cli("train.py", *tiny(tmp_path, peak_flops=1000, max_iters=10))
    assert r.returncode == 0, r.stderr
    shown = mfus(r.stdout)
    assert len(shown) == 10 - MFU_AFTER and max(shown) <= 100.0 and shown[0] == 100.0
    assert r.stdout.count("above --peak_flops=1e+03") == 1
    logged = [json.loads(line).get("mfu") for line in (tmp_path / "out" / "log.jsonl").read_text().splitlines()]
    assert max(m for m in logged if m is not None) <= 1.0


def test_6_mfu_is_shown_from_the_sixth_iteration_and_the_peak_measured_then(tmp_path, monkeypatch):
    # nanoGPT's: the first iterations load kernels (their MFU says nothing), and the first iteration
    # does not wait for the peak's products
    from gpt import trainer as tr
    from gpt.config import parse_config

    lines, measured_at = [], []
    monkeypatch.setattr(tr, "measure_peak_flops", lambda device: measured_at.append(t.iter_num) or 1e12)
    cfg, _ = parse_config(tiny(tmp_path, max_iters=8))
    t = tr.Trainer(cfg, log=lines.append)
    t.run()
    iters = [line for line in lines if line.startswith("iter ")]
    assert len(iters) == 8 and measured_at == [MFU_AFTER + 1]
    assert [bool(mfus(line)) for line in iters] == [False] * MFU_AFTER + [True] * (8 - MFU_AFTER)
    assert all("tok/s" in line for line in iters)
    records = [json.loads(line) for line in (tmp_path / "out" / "log.jsonl").read_text().splitlines()]
    steps = [r for r in records if "tokens_per_s" in r]  # (the iterations' records; not the evaluations')
    assert ["mfu" in r for r in steps] == [False] * MFU_AFTER + [True] * (8 - MFU_AFTER)  # (no -1 placeholder)


def test_6_a_peak_measured_on_a_busy_machine_is_measured_again(tmp_path, monkeypatch):
    from gpt import trainer as tr
    from gpt.config import parse_config

    real, calls = tr.measure_peak_flops, []

    def busy_then_real(device):  # the first reading as if another program had the cores
        calls.append(device)
        return 1e3 if len(calls) == 1 else real(device)

    monkeypatch.setattr(tr, "measure_peak_flops", busy_then_real)
    lines = []
    cfg, _ = parse_config(tiny(tmp_path, max_iters=10))
    t = tr.Trainer(cfg, log=lines.append)
    t.run()
    assert len(calls) >= 2 and t.peak_flops > 1e3
    assert max(mfus("\n".join(lines))) <= 100.0


def test_6_the_peak_measurement_draws_no_random_numbers():
    import minigrad
    from gpt.trainer import measure_peak_flops

    minigrad.manual_seed(3)
    before = json.dumps(minigrad.get_rng_state())
    assert measure_peak_flops("cpu", n=256, runs=3) > 1e6
    assert json.dumps(minigrad.get_rng_state()) == before


def test_6_the_peak_is_measured_on_the_products_the_run_makes(monkeypatch):
    # the peak's products are linear layers' (F.linear's backend choice: on the CPU the kernels' team),
    # not a numpy matmul, which runs on the one BLAS thread tune_process() leaves (a 2-core machine then
    # showed MFU at twice its share); and the measurement leaves BLAS's thread setting as it found it
    import threadpoolctl

    import gpt.console as console
    from minigrad import backends

    asked, find = [], backends.find

    def recording_find(op, *args):
        asked.append((op, tuple(a.shape for a in args if hasattr(a, "shape"))))
        return find(op, *args)

    monkeypatch.setattr(backends, "find", recording_find)
    before = [i["num_threads"] for i in threadpoolctl.threadpool_info() if i["user_api"] == "blas"]
    assert console.measure_peak_flops("cpu", n=64, runs=2) > 1e6
    assert asked and all(op == "linear" and shapes[-2:] == ((64, 64), (64, 64)) for op, shapes in asked)
    assert [i["num_threads"] for i in threadpoolctl.threadpool_info() if i["user_api"] == "blas"] == before


def test_6_help_says_what_mfu_is_measured_against():
    out = cli("train.py", "--help").stdout
    assert "MFU" in out and "best of several float32 square matmuls (512 x 512" in out and "shown from the 6th iteration and never above 100%" in out


# ---- 9: on a terminal, evaluation lines go above the progress bar, not onto it ---------------------
def test_9_evaluation_lines_are_printed_through_the_progress_bar(tmp_path):
    pty = pytest.importorskip("pty")
    import fcntl
    import os
    import struct
    import termios

    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 120, 0, 0))
    p = popen("train.py", *tiny(tmp_path, max_iters=12, eval_interval=4, progress=True),
              stdin=subprocess.DEVNULL, stdout=slave, stderr=slave)
    os.close(slave)
    chunks = []
    while True:
        try:
            data = os.read(master, 65536)
        except OSError:  # EIO: the child closed the terminal
            break
        if not data:
            break
        chunks.append(data)
    os.close(master)
    assert p.wait(timeout=60) == 0
    screen = b"".join(chunks).decode(errors="replace")
    assert "it/s" in screen or "s/it" in screen  # a bar was drawn
    starts = [m.start() for m in re.finditer(r"step \d+: train loss", screen)]
    assert len(starts) == 4  # iterations 0, 4, 8 and 12
    for i in starts:  # each at the start of a line, the bar cleared away before it
        assert screen[i - 1] in "\r\n", repr(screen[max(0, i - 40):i + 10])


# ---- not listed: what a careful user expects ---------------------------------------------------------
def test_resume_drops_the_log_records_the_checkpoint_does_not_hold(run_dir):
    args, out, _ = run_dir
    log = out / "log.jsonl"
    kept = log.read_text()
    # what a run killed after its last save appends: records of later iterations, one cut off
    log.write_text(kept + json.dumps({"iter": 7, "loss": 1.0}) + "\n" + '{"iter": 8, "lo')
    r = cli("train.py", *flags(args, init_from="resume", max_iters=8))
    assert r.returncode == 0, r.stderr
    assert "dropped 2 records of iterations after 6" in r.stdout
    records = [json.loads(line) for line in log.read_text().splitlines()]
    assert log.read_text().startswith(kept)
    assert [r["iter"] for r in records if "loss" in r][-2:] == [7, 8] and records[-1]["iter"] == 8
    assert all(r.get("loss") != 1.0 for r in records)


def test_a_fresh_run_may_start_over_a_log_whose_run_saved_no_checkpoint(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (out / "log.jsonl").write_text(json.dumps({"iter": 0, "train_loss": 3.0, "val_loss": 3.0, "lr": 0.0}) + "\n")
    r = cli("train.py", *tiny(tmp_path, max_iters=3))
    assert r.returncode == 0, r.stderr
    assert "saved no checkpoint" in r.stdout
    records = [json.loads(line) for line in (out / "log.jsonl").read_text().splitlines()]
    assert records[0]["iter"] == 0 and records[0]["val_loss"] != 3.0  # a new log, not the old one continued
    assert nn.load(out / "ckpt.safetensors")["iter_num"] == 3


def test_a_save_that_fails_ends_with_one_line_and_keeps_the_checkpoint(run_dir, monkeypatch, capsys):
    import errno

    from gpt import trainer as tr

    args, out, before = run_dir

    def disk_full(path, write):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(nn.serialization, "atomic_write", disk_full)
    assert tr.main(flags(args, init_from="resume", max_iters=9)) == 2
    line = one_line(capsys.readouterr().err)
    assert line.startswith("train.py: error: cannot save iteration 9 to ") and "No space left on device" in line
    assert re.search(r"(ckpt|best)\.safetensors: No space left on device \((ckpt|best)\.safetensors is as it was\)$",
                     line)
    before.pop("log.jsonl")
    before.pop("loss.png", None)  # redrawn at the evaluation before the save: a picture, not a checkpoint
    after = checkpoint_hashes(out)
    assert {k: after[k] for k in before} == before


def test_sample_mistakes_are_one_line(run_dir, tmp_path):
    from minigrad import cuda_is_available

    _, out, before = run_dir
    r = cli("sample.py", f"--out_dir={out / 'log.jsonl'}")
    assert r.returncode == 2 and "is a file, not the folder train.py wrote" in one_line(r.stderr)
    r = cli("sample.py", f"--out_dir={tmp_path / 'nowhere'}")
    assert r.returncode == 2 and "does not exist: train a model first" in one_line(r.stderr)
    if not cuda_is_available():
        r = cli("sample.py", f"--out_dir={out}", "--device=cuda", "--max_new_tokens=3")
        assert r.returncode == 2 and "cupy" in one_line(r.stderr)
    assert checkpoint_hashes(out) == before


def test_sample_into_a_closed_pipe_ends_quietly(run_dir):
    _, out, _ = run_dir
    p = popen("sample.py", f"--out_dir={out}", "--num_samples=200", "--max_new_tokens=200",
              stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    p.stdout.read(10)  # `python sample.py | head -c 10`
    p.stdout.close()
    err = p.stderr.read().decode()
    assert p.wait(timeout=120) == 0 and err == ""


def test_8_nanogpts_compile_and_dtype_knobs(run_dir):
    _, out, before = run_dir
    plain = cli("sample.py", f"--out_dir={out}", "--num_samples=2", "--max_new_tokens=40", "--seed=3")
    r = cli("sample.py", f"--out_dir={out}", "--num_samples=2", "--max_new_tokens=40", "--seed=3", "--compile=True",
            "--dtype=bfloat16")
    assert plain.returncode == 0 and r.returncode == 0, r.stderr
    assert r.stderr.splitlines() == ["sample.py: note: --dtype=bfloat16 is not used: minigrad samples in float32"]
    assert r.stdout == plain.stdout  # the compiled step (the default) is what --compile=True asks for
    uncached = cli("sample.py", f"--out_dir={out}", "--num_samples=1", "--max_new_tokens=6", "--compile=True",
                   "--no_cache")
    assert uncached.returncode == 0 and uncached.stderr.splitlines() == [
        "sample.py: note: --compile=True is not used with --no_cache: only the cached generation step is compiled"]
    quiet = cli("sample.py", f"--out_dir={out}", "--num_samples=2", "--max_new_tokens=40", "--seed=3",
                "--compile=False")
    assert quiet.returncode == 0 and quiet.stderr == ""
    assert quiet.stdout == plain.stdout  # the eager step: the same samples
    quiet = cli("sample.py", f"--out_dir={out}", "--num_samples=1", "--max_new_tokens=6", "--no_cache")
    assert quiet.returncode == 0 and quiet.stderr == ""  # (no note: --compile was not given)
    bad = cli("sample.py", f"--out_dir={out}", "--compile=maybe")
    assert bad.returncode == 2 and one_line(bad.stderr).startswith(
        "sample.py: error: argument --compile: expected True or False, got 'maybe'")
    assert checkpoint_hashes(out) == before


def test_6_the_peak_is_measured_on_the_first_size_whose_product_takes_a_millisecond(monkeypatch):
    # a product too small for the machine shows its fixed costs, not the peak: 512 first, larger only where
    # it runs in under a millisecond (a big one delays every run's first step by a tenth of a second)
    import gpt.console as console

    timed = []

    def product_seconds(linear, a):
        timed.append(a.shape[0])
        return {512: 0.4e-3, 1024: 2e-3, 2048: 9e-3}[a.shape[0]] - 1e-6 * len(timed)

    monkeypatch.setattr(console, "_product_seconds", product_seconds)
    peak = console.measure_peak_flops("cpu", runs=3)
    assert timed == [512, 1024, 1024, 1024]
    assert peak == 2 * 1024**3 / (2e-3 - 4e-6)
    timed.clear()
    assert console.measure_peak_flops("cpu", n=512, runs=2) == 2 * 512**3 / (0.4e-3 - 2e-6) and timed == [512, 512]
