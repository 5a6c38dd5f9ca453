"""PyTorch's recipes and utility APIs as scripts use them (warm-starting from another model's renamed state_dict with
strict=False, a general checkpoint of model, optimizer, scheduler, epoch and loss through io.BytesIO resumed to the
same next step, several models in one file, utils.benchmark's Timer / blocked_autorange / Compare, torch.profiler
and torch.autograd.profiler with record_function, SummaryWriter behind try/except ImportError, the module hooks
recipe, two parametrizations chained on one weight, a pruned checkpoint loaded through prune.identity, a Tensor
subclass made by as_subclass, torch.utils.data recipes (custom and batch samplers, weighted sampling from a
generator, ConcatDataset / ChainDataset, an IterableDataset with worker_info None, padding collate_fn, dict samples,
persistent_workers / prefetch_factor without workers, a Generator per DataLoader), torch.backends flags around a
loop, set_printoptions, the 'meta' device), written once against a `torch`-like module and run twice: on PyTorch,
then on minigrad from PyTorch's initial weights. Losses, gradients, parameters and outputs must agree closely
(float64 throughout; random draws made by numpy and given to both runs, where the two libraries' streams differ by
design; timings are compared by their structure only)."""
import importlib
import io

import numpy as np
import pytest

from twins import both, grads, start


def imported(torch, path):
    """`import torch.<path>` in a script written against either library."""
    return importlib.import_module(f"{torch.__name__}.{path}")


def mlp(nn):
    return nn.Sequential(nn.Linear(3, 5), nn.Tanh(), nn.Linear(5, 2))


# ---- warm-starting: a bigger model loads a smaller one's weights under renamed keys, strict=False ---------------
def warm_start(torch, init):
    nn, F = torch.nn, torch.nn.functional

    class Net(nn.Module):
        def __init__(self, extra):
            super().__init__()
            self.body = mlp(nn)
            self.head = nn.Linear(2, 2) if extra else None

        def forward(self, x):
            h = self.body(x)
            return h if self.head is None else self.head(torch.relu(h))

    a, b = Net(False), Net(True)
    both_init = start(nn.ModuleDict({"a": a, "b": b}), init)
    rng = np.random.default_rng(1)
    x, y = torch.tensor(rng.standard_normal((6, 3))), torch.tensor(rng.integers(0, 2, 6))
    # the pretrained state's keys come from an older version of the code: "body." was "features."
    old = {k.replace("body.", "features."): v for k, v in a.state_dict().items()}
    first = b.load_state_dict(old, strict=False)
    renamed = {k.replace("features.", "body."): v for k, v in old.items()}
    second = b.load_state_dict(renamed, strict=False)
    opt = torch.optim.SGD(b.parameters(), lr=0.1, momentum=0.9)
    losses = []
    for _ in range(3):
        loss = F.cross_entropy(b(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return dict(init=both_init, missing=first.missing_keys, unexpected=first.unexpected_keys,
                missing2=second.missing_keys, unexpected2=second.unexpected_keys, repr=repr(second),
                same=all(torch.equal(p, q) for p, q in zip(a.body.state_dict().values(), b.body.state_dict().values())),
                losses=losses, grads=grads(b), params=list(b.parameters()))


def test_warm_start_from_renamed_keys_non_strict(torch):
    both(torch, warm_start)


# ---- a general checkpoint through io.BytesIO: resumed, the next steps are the uninterrupted run's bit for bit ----
def checkpoint_resume(torch, init):
    nn, F = torch.nn, torch.nn.functional
    model = mlp(nn)
    init = start(model, init)
    rng = np.random.default_rng(2)
    x, y = torch.tensor(rng.standard_normal((8, 3))), torch.tensor(rng.standard_normal((8, 2)))

    def make(m):
        opt = torch.optim.AdamW(m.parameters(), lr=1e-2, weight_decay=0.1)
        return opt, torch.optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)

    def step(m, opt, sched):
        loss = F.mse_loss(m(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        sched.step()
        return loss.item()

    opt, sched = make(model)
    losses = [step(model, opt, sched) for _ in range(3)]
    buf = io.BytesIO()
    torch.save({"epoch": 3, "model_state_dict": model.state_dict(), "optimizer_state_dict": opt.state_dict(),
                "scheduler_state_dict": sched.state_dict(), "loss": losses[-1]}, buf)
    straight = [step(model, opt, sched) for _ in range(2)]
    buf.seek(0)
    ckpt = torch.load(buf)
    fresh = mlp(nn).double()
    opt2, sched2 = make(fresh)
    fresh.load_state_dict(ckpt["model_state_dict"])
    opt2.load_state_dict(ckpt["optimizer_state_dict"])
    sched2.load_state_dict(ckpt["scheduler_state_dict"])
    fresh.train()
    resumed = [step(fresh, opt2, sched2) for _ in range(2)]
    assert resumed == straight  # bit for bit, on each library
    assert all(torch.equal(p, q) for p, q in zip(model.parameters(), fresh.parameters()))
    return dict(init=init, epoch=ckpt["epoch"], loss=ckpt["loss"], keys=sorted(ckpt), losses=losses + resumed,
                lr=sched2.get_last_lr(), state=sorted(opt2.state_dict()["state"]),
                step=opt2.state_dict()["state"][0]["step"], params=list(fresh.parameters()))


def test_general_checkpoint_bytesio_resume(torch):
    both(torch, checkpoint_resume)


# ---- several models and their optimizers in one file (a GAN's checkpoint) ------------------------------------------
def several_models(torch, init):
    nn = torch.nn
    g, d = mlp(nn), nn.Sequential(nn.Linear(2, 4), nn.LeakyReLU(0.2), nn.Linear(4, 1))
    init = start(nn.ModuleDict({"g": g, "d": d}), init)
    opt_g, opt_d = torch.optim.Adam(g.parameters(), lr=1e-3), torch.optim.Adam(d.parameters(), lr=2e-3)
    rng = np.random.default_rng(3)
    z, real = torch.tensor(rng.standard_normal((4, 3))), torch.tensor(rng.standard_normal((4, 2)))
    bce = nn.BCEWithLogitsLoss()
    for _ in range(2):
        d_loss = bce(d(real), torch.ones(4, 1, dtype=torch.float64)) + bce(d(g(z).detach()), torch.zeros(4, 1, dtype=torch.float64))
        opt_d.zero_grad()
        d_loss.backward()
        opt_d.step()
        g_loss = bce(d(g(z)), torch.ones(4, 1, dtype=torch.float64))
        opt_g.zero_grad()
        g_loss.backward()
        opt_g.step()
    buf = io.BytesIO()
    torch.save({"modelA_state_dict": g.state_dict(), "modelB_state_dict": d.state_dict(),
                "optimizerA_state_dict": opt_g.state_dict(), "optimizerB_state_dict": opt_d.state_dict()}, buf)
    buf.seek(0)
    ck = torch.load(buf, weights_only=True)
    g2, d2 = mlp(nn).double(), nn.Sequential(nn.Linear(2, 4), nn.LeakyReLU(0.2), nn.Linear(4, 1)).double()
    g2.load_state_dict(ck["modelA_state_dict"])
    d2.load_state_dict(ck["modelB_state_dict"])
    o2 = torch.optim.Adam(d2.parameters(), lr=2e-3)
    o2.load_state_dict(ck["optimizerB_state_dict"])
    g2.eval()
    d2.eval()
    return dict(init=init, out=d2(g2(z)), lr=o2.param_groups[0]["lr"], steps=[s["step"] for s in o2.state.values()],
                exp_avg=[s["exp_avg"] for s in o2.state.values()], losses=[d_loss.item(), g_loss.item()])


def test_several_models_in_one_checkpoint(torch):
    both(torch, several_models)


# ---- utils.benchmark around a function: the Measurement's fields and printout (not the times) --------------------
def benchmark_timer(torch, init):
    benchmark = imported(torch, "utils.benchmark")  # import torch.utils.benchmark as benchmark
    x = torch.tensor(np.random.default_rng(4).standard_normal((8, 8)))

    def batched_dot_mul_sum(a, b):
        return a.mul(b).sum(-1)

    t0 = benchmark.Timer(stmt="batched_dot_mul_sum(x, x)", setup="y = x.clone()",
                         globals={"x": x, "batched_dot_mul_sum": batched_dot_mul_sum}, label="dot", sub_label="8x8",
                         description="mul/sum")
    m0 = t0.timeit(20)
    m1 = benchmark.Timer(stmt="(x * x).sum(-1)", globals={"x": x}, num_threads=1).blocked_autorange(min_run_time=0.01)
    text = repr(m0).splitlines()
    return dict(init=None, kind=type(m0).__name__, fields=[m0.label, m0.sub_label, m0.description, m0.stmt, m0.number_per_run,
                len(m0.times), m0.num_threads], positive=[m0.mean > 0, m0.median > 0, m1.median > 0, m1.number_per_run >= 1,
                len(m1.times) >= 1], title=m0.title, lines=[text[0].split(" object at")[0].split(".")[-1], text[1], text[2]],
                footer=text[-1].split(", ", 1)[1], value=batched_dot_mul_sum(x, x))


def test_benchmark_timer_measurement_fields(torch):
    both(torch, benchmark_timer)


def benchmark_compare(torch, init):
    benchmark = imported(torch, "utils.benchmark")  # import torch.utils.benchmark as benchmark
    results = []
    for n in (2, 4):
        x = torch.ones(n, n, dtype=torch.float64)
        for name, stmt in (("mul/sum", "(x * x).sum(-1)"), ("bmm", "x.unsqueeze(1).bmm(x.unsqueeze(2)).flatten()")):
            results.append(benchmark.Timer(stmt=stmt, globals={"x": x}, label="Batched dot", sub_label=f"[{n}, {n}]",
                                           description=name).timeit(10))
    compare = benchmark.Compare(results)
    compare.trim_significant_figures()
    compare.colorize()
    lines = str(compare).splitlines()
    rows = [line.split("|")[0].strip() for line in lines if "|" in line]
    return dict(init=None, title=lines[0].strip("[-]"), header=[c.strip() for c in lines[1].split("|")],
                rows=rows, threads=lines[2].split(":")[0], dashes=set(lines[2].split(": ")[1]),
                widths=len({len(line) for line in lines[:3]}), footer=lines[-1].startswith("Times are in"))


def test_benchmark_compare_table(torch):
    both(torch, benchmark_compare)


# ---- torch.profiler and torch.autograd.profiler around a training step: what a script reads back ----------------
def profiled(torch, init, which):
    nn, F = torch.nn, torch.nn.functional
    model = mlp(nn)
    init = start(model, init)
    rng = np.random.default_rng(5)
    x, y = torch.tensor(rng.standard_normal((4, 3))), torch.tensor(rng.integers(0, 2, 4))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    if which == "profiler":
        from_profiler = torch.profiler
        ctx = from_profiler.profile(activities=[from_profiler.ProfilerActivity.CPU], record_shapes=True)
        record_function = from_profiler.record_function
    else:
        ctx = torch.autograd.profiler.profile(use_cuda=False)
        record_function = torch.autograd.profiler.record_function
    losses = []
    with ctx as prof:
        for _ in range(2):
            with record_function("forward_pass"):
                loss = F.cross_entropy(model(x), y)
            with record_function("backward_pass"):
                opt.zero_grad()
                loss.backward()
            opt.step()
            losses.append(loss.item())
    averages = prof.key_averages()
    counts = {e.key: e.count for e in averages if e.key in ("forward_pass", "backward_pass")}
    table = averages.table(sort_by="cpu_time_total", row_limit=5)
    extra = {}
    if which == "autograd":
        events = prof.function_events
        extra = dict(names=sorted({e.name for e in events if e.name.endswith("_pass")}), table=type(prof.table()).__name__)
    return dict(init=init, losses=losses, counts=counts, header=table.splitlines()[1].split()[:3],
                total=table.splitlines()[-1].startswith("Self CPU time total:"), params=list(model.parameters()), **extra)


@pytest.mark.parametrize("which", ["profiler", "autograd"])
def test_profiler_record_function_key_averages(torch, which):
    both(torch, profiled, which=which)


# ---- SummaryWriter behind try/except ImportError, around a small loop -------------------------------------------
def summary_writer(torch, init, log_dir):
    nn, F = torch.nn, torch.nn.functional
    try:
        SummaryWriter = imported(torch, "utils.tensorboard").SummaryWriter  # from torch.utils.tensorboard import ...
    except ImportError:
        SummaryWriter = None
    model = mlp(nn)
    init = start(model, init)
    rng = np.random.default_rng(6)
    x, y = torch.tensor(rng.standard_normal((5, 3))), torch.tensor(rng.standard_normal((5, 2)))
    writer = SummaryWriter(log_dir=str(log_dir / torch.__name__)) if SummaryWriter else None
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    losses = []
    for step in range(3):
        loss = F.mse_loss(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
        if writer is not None:
            writer.add_scalar("loss/train", loss.item(), step)
            writer.add_histogram("weight", model[0].weight, step)
    if writer is not None:
        writer.flush()
        writer.close()
    return dict(init=init, losses=losses, params=list(model.parameters()),
                wrote=writer is None or any((log_dir / torch.__name__).iterdir()))


def test_summary_writer_guarded_by_import_error(torch, tmp_path):
    both(torch, summary_writer, log_dir=tmp_path)


# ---- the module hooks recipe: inputs and outputs changed by forward (pre-)hooks, full backward hooks, state-dict
# hooks and load_state_dict pre / post hooks -------------------------------------------------------------------------
def hooks_recipe(torch, init):
    nn, F = torch.nn, torch.nn.functional
    model = mlp(nn)
    init = start(model, init)
    rng = np.random.default_rng(7)
    x, y = torch.tensor(rng.standard_normal((4, 3))), torch.tensor(rng.integers(0, 2, 4))
    seen = []

    def scale_input(module, args):
        return (args[0] * 0.5,)

    def add_kwarg_bias(module, args, kwargs, output):
        return output + 1.0

    def record_and_clip(module, grad_input, grad_output):
        seen.append(("bwd", [None if g is None else tuple(g.shape) for g in grad_input], [tuple(g.shape) for g in grad_output]))
        return tuple(None if g is None else g.clamp(-0.1, 0.1) for g in grad_input)

    handles = [model[0].register_forward_pre_hook(scale_input),
               model[2].register_forward_hook(add_kwarg_bias, with_kwargs=True),
               model[1].register_full_backward_hook(record_and_clip),
               model[2].register_full_backward_pre_hook(lambda m, go: (go[0] * 2,))]
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    loss = F.cross_entropy(model(x), y)
    opt.zero_grad()
    loss.backward()
    first = grads(model)
    opt.step()
    for h in handles:
        h.remove()
    plain = F.cross_entropy(model(x), y)

    def drop_bias(module, state_dict, prefix, local_metadata):
        state_dict.pop(prefix + "2.bias")

    def fill_bias(module, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys, error_msgs):
        state_dict.setdefault(prefix + "2.bias", torch.zeros(2, dtype=torch.float64))

    def forgive(module, incompatible_keys):
        seen.append(("post", list(incompatible_keys.missing_keys), list(incompatible_keys.unexpected_keys)))
        incompatible_keys.unexpected_keys.clear()

    h1 = model.register_state_dict_post_hook(drop_bias)
    state = model.state_dict()
    h1.remove()
    model.register_load_state_dict_pre_hook(fill_bias)
    model.register_load_state_dict_post_hook(forgive)
    result = model.load_state_dict({**state, "extra.weight": torch.ones(1, dtype=torch.float64)})
    return dict(init=init, loss=loss, first=first, plain=plain, seen=seen, keys=list(state),
                missing=result.missing_keys, unexpected=result.unexpected_keys, bias=model[2].bias,
                params=list(model.parameters()))


def test_module_hooks_recipe(torch):
    both(torch, hooks_recipe)


# ---- parametrizations: two chained on one weight (symmetric, then positive-definite by matrix_exp), cached ------
def chained_parametrizations(torch, init):
    nn, F = torch.nn, torch.nn.functional
    P = nn.utils.parametrize

    class Symmetric(nn.Module):
        def forward(self, X):
            return X.triu() + X.triu(1).transpose(-1, -2)

    class MatrixExp(nn.Module):
        def forward(self, X):
            return torch.linalg.matrix_exp(X)

    layer = nn.Linear(3, 3)
    init = start(layer, init)
    P.register_parametrization(layer, "weight", Symmetric())
    P.register_parametrization(layer, "weight", MatrixExp())
    rng = np.random.default_rng(8)
    x, y = torch.tensor(rng.standard_normal((5, 3))), torch.tensor(rng.standard_normal((5, 3)))
    opt = torch.optim.Adam(layer.parameters(), lr=1e-2)
    losses = []
    for _ in range(3):
        with P.cached():
            loss = F.mse_loss(layer(layer(x)), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    w = layer.weight
    names = sorted(k for k, _ in layer.named_parameters())
    state = list(layer.state_dict())
    chain = [type(m).__name__ for m in layer.parametrizations.weight]
    P.remove_parametrizations(layer, "weight", leave_parametrized=True)
    return dict(init=init, losses=losses, w=w, symmetric=torch.allclose(w, w.T), eig=torch.linalg.eigvalsh(w).min() > 0,
                names=names, state=state, chain=chain, after=sorted(k for k, _ in layer.named_parameters()),
                is_param=P.is_parametrized(layer), weight=layer.weight)


def test_chained_parametrizations_cached_then_removed(torch):
    both(torch, chained_parametrizations)


# ---- torch.utils.data recipes: custom and batch samplers, ConcatDataset / ChainDataset, an IterableDataset with
# worker_info None, a padding collate_fn over dict samples ---------------------------------------------------------
def data_recipes(torch, init):
    nn, F = torch.nn, torch.nn.functional
    data = torch.utils.data
    rng = np.random.default_rng(9)
    lengths = [3, 1, 4, 2, 5, 2, 3]
    seqs = [rng.integers(1, 10, n) for n in lengths]
    labels = rng.integers(0, 2, len(seqs))

    class Sequences(data.Dataset):
        def __init__(self, lo, hi):
            self.items = list(range(lo, hi))

        def __len__(self):
            return len(self.items)

        def __getitem__(self, i):
            j = self.items[i]
            return {"ids": torch.tensor(seqs[j]), "label": int(labels[j])}

    class LongestFirst(data.Sampler):
        def __init__(self, ds):
            self.order = sorted(range(len(ds)), key=lambda i: -len(ds[i]["ids"]))

        def __iter__(self):
            return iter(self.order)

        def __len__(self):
            return len(self.order)

    class Stream(data.IterableDataset):
        def __iter__(self):
            info = data.get_worker_info()
            start, step = (0, 1) if info is None else (info.id, info.num_workers)
            for j in range(start, len(seqs), step):
                yield {"ids": torch.tensor(seqs[j]), "label": int(labels[j])}

    def pad_collate(batch):
        ids = nn.utils.rnn.pad_sequence([b["ids"] for b in batch], batch_first=True, padding_value=0)
        return {"ids": ids, "lengths": torch.tensor([len(b["ids"]) for b in batch]),
                "label": torch.tensor([b["label"] for b in batch])}

    whole = data.ConcatDataset([Sequences(0, 3), Sequences(3, 7)])
    sampler = data.BatchSampler(LongestFirst(whole), batch_size=3, drop_last=True)
    loader = data.DataLoader(whole, batch_sampler=sampler, collate_fn=pad_collate)
    chained = data.DataLoader(data.ChainDataset([Stream(), Stream()]), batch_size=4, collate_fn=pad_collate)
    emb = nn.EmbeddingBag(10, 4, mode="mean", padding_idx=0)
    head = nn.Linear(4, 2)
    model = nn.ModuleDict({"emb": emb, "head": head})
    init = start(model, init)
    opt = torch.optim.SGD(model.parameters(), lr=0.5)
    losses, shapes = [], []
    for batch in list(loader) + list(chained):
        shapes.append((tuple(batch["ids"].shape), batch["lengths"].tolist()))
        loss = F.cross_entropy(head(emb(batch["ids"])), batch["label"])
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return dict(init=init, lens=[len(whole), len(sampler), len(loader), whole.cumulative_sizes], shapes=shapes,
                losses=losses, params=list(model.parameters()), info=data.get_worker_info())


def test_data_recipes_samplers_concat_chain_collate(torch):
    both(torch, data_recipes)


# ---- weighted sampling and shuffling from a Generator per DataLoader: the streams differ by design, so the
# structure is compared (reproducible per seed, a permutation, counts), and the errors of workers' options ------
def generator_loaders(torch, init):
    data = torch.utils.data
    ds = data.TensorDataset(torch.arange(12))

    def order(seed):
        g = torch.Generator()
        g.manual_seed(seed)
        return torch.cat([b[0] for b in data.DataLoader(ds, batch_size=5, shuffle=True, generator=g)]).tolist()

    weights = torch.tensor([0.0, 1.0, 0.0, 3.0], dtype=torch.float64)
    g = torch.Generator().manual_seed(1)
    picks = list(data.WeightedRandomSampler(weights, num_samples=20, replacement=True, generator=g))
    g = torch.Generator().manual_seed(1)
    again = list(data.WeightedRandomSampler(weights, num_samples=20, replacement=True, generator=g))
    once = sorted(data.WeightedRandomSampler(weights, num_samples=2, replacement=False, generator=g))
    errors = []
    for kw in (dict(persistent_workers=True), dict(prefetch_factor=2), dict(num_workers=-1)):
        try:
            data.DataLoader(ds, **kw)
        except ValueError as e:
            errors.append(str(e))
    loader = data.DataLoader(ds, batch_size=5, drop_last=True, num_workers=0, pin_memory=False)
    return dict(init=None, same=order(3) == order(3), perm=sorted(order(4)) == list(range(12)),
                repeat=picks == again, support=set(picks) <= {1, 3}, once=once, types={type(i).__name__ for i in picks},
                errors=errors, batches=[len(b[0]) for b in loader])


def test_generator_per_loader_weighted_sampler_worker_options(torch):
    both(torch, generator_loaders)


# ---- torch.backends flags and determinism switches set around a loop, then restored -----------------------------
def backend_flags(torch, init):
    nn, F = torch.nn, torch.nn.functional
    b = torch.backends
    saved = (b.cudnn.benchmark, b.cudnn.deterministic, b.cudnn.allow_tf32, b.cuda.matmul.allow_tf32,
             torch.get_float32_matmul_precision(), torch.are_deterministic_algorithms_enabled(),
             torch.is_deterministic_algorithms_warn_only_enabled())
    try:
        b.cudnn.benchmark = False
        b.cudnn.deterministic = True
        b.cudnn.allow_tf32 = False
        b.cuda.matmul.allow_tf32 = False
        torch.set_float32_matmul_precision("medium")
        torch.use_deterministic_algorithms(True, warn_only=True)
        read = [b.cudnn.benchmark, b.cudnn.deterministic, b.cudnn.allow_tf32, b.cuda.matmul.allow_tf32,
                torch.get_float32_matmul_precision(), torch.are_deterministic_algorithms_enabled(),
                torch.is_deterministic_algorithms_warn_only_enabled(), b.cudnn.is_available() in (True, False)]
        model = mlp(nn)
        init = start(model, init)
        rng = np.random.default_rng(10)
        x, y = torch.tensor(rng.standard_normal((6, 3))), torch.tensor(rng.standard_normal((6, 2)))
        opt = torch.optim.RMSprop(model.parameters(), lr=1e-2)
        losses = []
        for _ in range(3):
            loss = F.smooth_l1_loss(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            losses.append(loss.item())
    finally:
        (b.cudnn.benchmark, b.cudnn.deterministic, b.cudnn.allow_tf32, b.cuda.matmul.allow_tf32) = saved[:4]
        torch.set_float32_matmul_precision(saved[4])
        torch.use_deterministic_algorithms(saved[5], warn_only=saved[6])
    return dict(init=init, read=read, losses=losses, params=list(model.parameters()))


def test_backend_flags_around_a_loop(torch):
    both(torch, backend_flags)


# ---- set_printoptions: a script's printout under changed options, then the defaults back -------------------------
def printoptions(torch, init):
    x = torch.tensor([[1.0 / 3, 12345.678, -0.000123], [2.5, 0.0, 1e-8]], dtype=torch.float64)
    out = []
    try:
        for kw in (dict(precision=2), dict(sci_mode=False), dict(precision=6, linewidth=40), dict(threshold=5, edgeitems=1)):
            torch.set_printoptions(**kw)
            out.append(str(x) if "threshold" not in kw else str(torch.arange(20)))
    finally:
        torch.set_printoptions(profile="default")
    out.append(str(x))
    return dict(init=None, out=[s.replace("minigrad", "torch") for s in out])


def test_set_printoptions_round_trip(torch):
    both(torch, printoptions)


# ---- a Tensor subclass with an extra attribute by as_subclass ------------------------------------------------------
def tensor_subclass(torch, init, ops):
    class Tagged(torch.Tensor):
        def describe(self):
            return f"{self.tag}:{tuple(self.shape)}"

    w = torch.tensor(np.arange(6.0).reshape(2, 3), requires_grad=True)
    t = w.as_subclass(Tagged)
    t.tag = "features"
    out = dict(init=None, kind=type(t).__name__, is_tensor=isinstance(t, torch.Tensor), text=t.describe(),
               grad_fn=t.grad_fn is not None, leaf=w.is_leaf)
    (t * t).sum().backward()
    out.update(grad=w.grad, plain=type(w).__name__)
    if ops:  # PyTorch's default __torch_function__ gives an op's result the subclass (its attributes are not copied)
        results = [t * 2, t.detach(), t[0], t.sum(), t.clone(), torch.add(t, 1)]
        out.update(types=[type(r).__name__ for r in results], tags=[getattr(r, "tag", None) for r in results])
    return out


def test_tensor_subclass_as_subclass_attributes(torch):
    both(torch, tensor_subclass, ops=False)


@pytest.mark.xfail(strict=True, reason="minigrad has no __torch_function__: an op on a Tensor subclass returns a plain "
                   "Tensor (docs/pytorch-scripts.md)")
def test_tensor_subclass_op_results_keep_the_subclass(torch):
    both(torch, tensor_subclass, ops=True)


# ---- shapes worked out on the 'meta' device: documented as absent ---------------------------------------------------
def meta_shapes(torch, init):
    nn = torch.nn
    model = nn.Sequential(nn.Conv2d(3, 8, 3, stride=2, device="meta"), nn.Flatten(), nn.LazyLinear(4, device="meta"))
    x = torch.empty(2, 3, 9, 9, device="meta")
    y = model(x)
    return dict(init=None, shape=tuple(y.shape), device=str(y.device), weight=tuple(model[2].weight.shape))


@pytest.mark.xfail(strict=True, raises=RuntimeError, reason="minigrad has no 'meta' device (docs/pytorch-scripts.md: "
                   "keep the model on the CPU)")
def test_meta_device_shape_reasoning(torch):
    both(torch, meta_shapes)


# ---- a pruned checkpoint loaded into a fresh model: prune.identity first makes its keys (weight_orig, weight_mask),
# then fine-tuning keeps the pruned weights at zero, and prune.remove makes the pruning permanent --------------------
def pruned_checkpoint(torch, init):
    nn, F = torch.nn, torch.nn.functional
    prune = imported(torch, "nn.utils.prune")  # import torch.nn.utils.prune as prune
    model = mlp(nn)
    init = start(model, init)
    prune.ln_structured(model[0], "weight", amount=0.4, n=1, dim=0)
    prune.random_unstructured(model[2], "bias", amount=0.0)
    buf = io.BytesIO()
    torch.save(model.state_dict(), buf)
    fresh = mlp(nn).double()
    refused = None
    buf.seek(0)
    state = torch.load(buf)
    try:
        fresh.load_state_dict(state)
    except RuntimeError as e:
        refused = str(e).splitlines()[0]
    for module, name in ((fresh[0], "weight"), (fresh[2], "bias")):
        prune.identity(module, name)
    fresh.load_state_dict(state)
    rng = np.random.default_rng(12)
    x, y = torch.tensor(rng.standard_normal((6, 3))), torch.tensor(rng.standard_normal((6, 2)))
    opt = torch.optim.SGD(fresh.parameters(), lr=0.1, momentum=0.5)
    losses = []
    for _ in range(3):
        loss = F.mse_loss(fresh(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    zero_rows = (fresh[0].weight.abs().sum(1) == 0).sum().item()
    for module, name in ((fresh[0], "weight"), (fresh[2], "bias")):
        prune.remove(module, name)
    return dict(init=init, keys=list(state), refused=refused, losses=losses, zero_rows=zero_rows,
                after=list(fresh.state_dict()), pruned=[prune.is_pruned(m) for m in fresh], grads=grads(fresh),
                params=list(fresh.parameters()))


def test_pruned_checkpoint_into_fresh_model_by_identity(torch):
    both(torch, pruned_checkpoint)
