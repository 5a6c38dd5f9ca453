"""Data-parallel training for train.py: `mpiexec -n N python train.py ...`, nanoGPT's DDP semantics.

Every rank runs the same program on its own batches: rank r seeds with `seed + r`, so the ranks
draw different batches (and rank 0's initial weights, which DDP copies to all, are those of a
single-process run). `gradient_accumulation_steps` is the global count and each rank does its
1/N share (rounded up: the default 1 runs as one micro-step per rank, and a line says the
global batch), gradients are averaged over the ranks on the last micro-step only,
so an iteration is N times the tokens of one process's micro-batches. Rank 0 alone prints,
evaluates, draws the bar and writes checkpoints; the others wait for it at each save.

A checkpoint holds every rank's RNG and sampler state ("ranks"); resuming under the same N
continues bit for bit, under another N is refused. Faults end the job, never hang it: a Ctrl-C
or SIGTERM on any rank stops every rank at the end of the iteration (the ranks agree each
iteration), after one checkpoint by rank 0; a rank that fails tells the others, which exit
with one line naming it; a dead rank is noticed by the others on this machine (the launcher
usually ends the job first), and any collective gives up after `ddp_timeout` seconds.

`Distributed` is the one object the trainer asks; for a single process it does nothing, so
the loop reads the same either way.
"""
import os
import sys

from gpt.config import ConfigError, config_to_dict

# the launchers' variables for the world size: MPICH / Intel MPI (hydra), Open MPI, PMIx, torchrun-style
_SIZE_VARS = ("PMI_SIZE", "OMPI_COMM_WORLD_SIZE", "PMIX_SIZE", "WORLD_SIZE")


_RANK_VARS = ("PMI_RANK", "OMPI_COMM_WORLD_RANK", "PMIX_RANK", "RANK")


def launched_rank():
    """This process's rank as the launcher numbered it (0 when run by plain `python`)."""
    for var in _RANK_VARS:
        if os.environ.get(var, "").isdigit():
            return int(os.environ[var])
    return 0


def launched_world_size():
    """How many processes the launcher started (1 when run by plain `python`)."""
    for var in _SIZE_VARS:
        if os.environ.get(var, "").isdigit():
            return int(os.environ[var])
    return 1


def backend_errors():
    """The process group's backend errors (another rank failed or vanished, a collective timed out):
    minigrad.distributed's DistBackendError once that module is loaded, which only a launched run does
    (a plain `python train.py` is not kept waiting on its import), else none."""
    dist = sys.modules.get("minigrad.distributed")
    return dist.DistBackendError if dist is not None else ()


class Shared(Exception):
    """A setup error every rank met together: rank 0 alone reports it, nobody needs telling."""

    def __init__(self, error):
        super().__init__(str(error))
        self.error = error


class Distributed:
    """The process group as the trainer sees it (a world of one when not launched by mpiexec)."""

    def __init__(self, cfg=None):
        self.rank, self.world, self.local_rank, self.local_world = 0, 1, 0, 1
        self.dist = None
        self.ddp = None
        self._watching = None
        if cfg is None or launched_world_size() <= 1:
            return
        if cfg.ddp_backend == "nccl" and cfg.device != "cuda":
            raise ConfigError("ddp_backend=nccl needs --device=cuda (mpi carries CPU tensors)")
        import minigrad.distributed as dist

        try:
            dist.init_process_group(backend={"auto": None}.get(cfg.ddp_backend, cfg.ddp_backend), timeout=cfg.ddp_timeout)
        except RuntimeError as e:  # no mpi4py, no cupy for nccl: one line saying what to install
            raise _train_error(str(e)) from None
        self.dist = dist
        self.rank, self.world = dist.get_rank(), dist.get_world_size()
        self.local_rank = dist.get_node_local_rank()
        self.local_world = dist._default().local_size
        if cfg.device == "cuda":
            import cupy

            cupy.cuda.Device(int(os.environ.get("LOCAL_RANK", self.local_rank))).use()  # one GPU per rank
        self._check_same_config(cfg)
        self._watching = _watch_local_peers(dist)

    @property
    def master(self):
        return self.rank == 0

    def _check_same_config(self, cfg):
        mine = config_to_dict(cfg)
        every = self.exchange(mine)
        for r, theirs in enumerate(every):
            for k in mine:
                if theirs.get(k) != every[0].get(k):
                    raise Shared(ConfigError(f"rank {r}'s configuration differs from rank 0's: "
                                             f"{k}={theirs.get(k)!r} on rank {r}, {every[0].get(k)!r} on rank 0"))

    def exchange(self, obj):
        """Every rank's JSON-serialisable `obj`, in rank order."""
        if self.dist is None:
            return [obj]
        out = [None] * self.world
        self.dist.all_gather_object(out, obj)
        return out

    def together(self, fn, rank0_first=False):
        """Run `fn` (setup without collectives) on every rank; if it failed on any, fail on all.
        rank0_first: rank 0 runs it before the others (it writes what they then read)."""
        if rank0_first and self.world > 1:
            self._agree(_attempt(fn) if self.master else None)
            self._agree(None if self.master else _attempt(fn))
        else:
            self._agree(_attempt(fn))

    def _agree(self, error):
        if self.dist is None:
            if error is not None:
                raise error
            return
        every = self.exchange(None if error is None else str(error))
        failed = [(r, e) for r, e in enumerate(every) if e is not None]
        if failed:
            r, text = failed[0]
            if error is None or r != self.rank:
                error = _train_error(text if r == 0 else f"rank {r}: {text}")
            raise Shared(error)

    # ---- the model and its gradient sync ------------------------------------------------
    def wrap(self, model):
        """The model to call in training: DDP over it under several ranks, else the model itself."""
        if self.dist is None:
            return model
        from nn.parallel import DistributedDataParallel

        self.ddp = DistributedDataParallel(model)
        return self.ddp

    def micro_steps(self, cfg):
        """This rank's micro-steps: an equal share of gradient_accumulation_steps, rounded up (so
        the default 1 runs under any number of ranks, each doing one)."""
        return -(-cfg.gradient_accumulation_steps // self.world)

    def global_batch(self, cfg, block_size):
        """One line on what an iteration is made of under several ranks."""
        m, B = self.micro_steps(cfg), cfg.batch_size
        line = (f"data-parallel: {self.world} ranks x {m} micro-batch{'es' if m > 1 else ''} x {B} sequences = a "
                f"global batch of {self.world * m * B} sequences ({self.world * m * B * block_size:,} tokens) per "
                "iteration")
        if m * self.world != cfg.gradient_accumulation_steps:
            line += (f" (gradient_accumulation_steps={cfg.gradient_accumulation_steps} rounded up to "
                     f"{m * self.world}, a multiple of the ranks)")
        return line

    def sync_gradients(self, last_micro_step):
        """Average gradients over the ranks in this micro-step's backward only when it is the last."""
        if self.ddp is not None:
            self.ddp.require_backward_grad_sync = last_micro_step

    def seed(self, seed):
        return seed + self.rank

    def any(self, flag):
        """True on every rank when `flag` is true on any (a Ctrl-C seen by one rank stops all)."""
        if self.dist is None:
            return bool(flag)
        import minigrad

        t = minigrad.tensor([int(bool(flag))])
        self.dist.all_reduce(t, op=self.dist.ReduceOp.MAX)
        return bool(t.numpy()[0])

    def wait_for_rank0(self):
        """A barrier while rank 0 evaluates or writes a checkpoint, which may take longer than
        ddp_timeout: no time limit here (a rank that dies or fails still ends the wait)."""
        if self.dist is not None:
            self.dist.barrier(async_op=True).wait(timeout=float("inf"))

    # ---- checkpoints --------------------------------------------------------------------
    def gather_states(self, rng, sampler):
        """{"world_size", "rng": [per rank], "sampler": [per rank]} for the checkpoint (a collective)."""
        every = self.exchange([rng, sampler])
        return {"world_size": self.world, "rng": [e[0] for e in every], "sampler": [e[1] for e in every]}

    def restore_states(self, ckpt, path):
        """This rank's (rng, sampler) state from a checkpoint; another world size is refused."""
        ranks = ckpt.get("ranks") or {"world_size": 1, "rng": [ckpt["rng"]], "sampler": [ckpt["sampler"]]}
        n = int(ranks["world_size"])
        if n != self.world:
            written = f"{n} ranks" if n > 1 else "1 process"
            run = f"mpiexec -n {n} python train.py" if n > 1 else "python train.py"
            raise _train_error(f"{path} was written by {written} and this run has {self.world}: resume it with "
                               f"`{run} ...` (each rank's batches continue from its own saved state)")
        return ranks["rng"][self.rank], ranks["sampler"][self.rank]

    # ---- ending -------------------------------------------------------------------------
    def fail(self, error):
        """Tell the other ranks that this one failed (they exit naming it)."""
        if self._watching is not None:
            self._watching.set()  # the others now end on purpose
        if self.dist is not None and not isinstance(error, (Shared, self.dist.DistBackendError)):
            self.dist.abort(f"{type(error).__name__}: {error}".splitlines()[0])

    def exit(self, status):
        """End the process now: after a fault, MPI's own shutdown may wait for ranks that are gone."""
        if self.dist is None:
            return status
        if self._watching is not None:
            self._watching.set()
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(status)

    def close(self):
        """The normal end: every rank meets here before any leaves."""
        if self.dist is not None:
            self._watching.set()
            self.dist.barrier()
            self.dist.destroy_process_group()


def _watch_local_peers(dist, every=0.25, grace=1.0):
    """A thread that ends this rank, with one line naming the rank, when another rank on this
    machine has died (killed, crashed): the launcher or MPI would end the job too, but say less.
    Returns the event that stops it (set by every rank before the final barrier: past it a
    rank that has finished is not one that died)."""
    import threading

    stop = threading.Event()

    def watch():
        while not stop.wait(every):
            try:
                dead = dist.dead_local_peers()
            except Exception:  # the group is already broken: the main thread is saying so, in its one line
                return
            # a rank that ended on purpose (an error every rank met, another rank's failure) lets
            # this rank's main thread reach exit() meanwhile, which stops the watch: say nothing
            if dead and not stop.wait(grace):
                r, pid = dead[0]
                sys.stderr.flush()
                # one write of the whole line: with PYTHONUNBUFFERED, print writes the text and its
                # newline apart, and the launcher's banner on the same pipe could land in between
                os.write(2, f"train.py: error: rank {r} (pid {pid}) died\n".encode())
                os._exit(1)

    threading.Thread(target=watch, name="minigrad-peer-watch", daemon=True).start()
    return stop


def _attempt(fn):
    """The user-facing error `fn()` raised (bad config, data, checkpoint), or None."""
    from gpt.data import DataError
    from gpt.checkpoint import TrainError

    try:
        fn()
    except (ConfigError, DataError, TrainError, ValueError) as e:
        return e
    return None


def _train_error(text):
    from gpt.checkpoint import TrainError

    return TrainError(text)


_LOCAL_SIZE_VARS = ("MPI_LOCALNRANKS", "OMPI_COMM_WORLD_LOCAL_SIZE", "LOCAL_WORLD_SIZE")


def threads_per_rank():
    """Give each rank cores / ranks-on-this-machine threads (minigrad.set_num_threads: the kernels'
    team and BLAS), unless MINIGRAD_NUM_THREADS is set. The launcher says how many ranks share this
    machine. Returns the count set, or None."""
    here = next((int(os.environ[v]) for v in _LOCAL_SIZE_VARS if os.environ.get(v, "").isdigit()), 1)
    if here <= 1 or os.environ.get("MINIGRAD_NUM_THREADS"):
        return None
    import minigrad

    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        cores = os.cpu_count() or 1
    n = max(1, cores // here)
    minigrad.set_num_threads(n)
    return n
