"""torchrun's counterpart: run a torchrun-style script (one that reads RANK, WORLD_SIZE, LOCAL_RANK, ...
from its environment) on the processes MPI's launcher starts.

    python -m minigrad.distributed.run --nproc_per_node=2 train.py --lr 0.1
    mpiexec -n 2 python -m minigrad.distributed.run train.py --lr 0.1     # the same (and over several machines)

Each process asks MPI for its rank, the world's size and its rank on this machine, sets the variables
torchrun sets, then runs the script as `__main__`. With --nproc_per_node=N (N > 1) outside mpiexec, the
command starts itself again under `mpiexec -n N`.
"""
import argparse
import os
import runpy
import shutil
import socket
import sys


def set_torchrun_environment():
    """Set RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE, MASTER_ADDR, MASTER_PORT and
    TORCHELASTIC_RUN_ID from MPI's world (the ones already set are kept)."""
    from . import _mpi

    MPI = _mpi()
    world = MPI.COMM_WORLD
    node = world.Split_type(MPI.COMM_TYPE_SHARED, key=world.Get_rank())
    env = {"RANK": world.Get_rank(), "WORLD_SIZE": world.Get_size(), "LOCAL_RANK": node.Get_rank(),
           "LOCAL_WORLD_SIZE": node.Get_size(), "MASTER_ADDR": world.bcast(socket.gethostname(), root=0),
           "MASTER_PORT": 29500, "TORCHELASTIC_RUN_ID": "none"}  # (torchrun's default port and run id)
    node.Free()
    for name, value in env.items():
        os.environ.setdefault(name, str(value))


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m minigrad.distributed.run", description=__doc__.split("\n\n")[0])
    parser.add_argument("--nproc_per_node", "--nproc-per-node", type=int, default=1)
    parser.add_argument("--nnodes", default="1", help="1 (several machines: start with mpiexec and a host file)")
    parser.add_argument("--standalone", action="store_true", help="accepted: the processes find each other through MPI")
    parser.add_argument("script")
    parser.add_argument("args", nargs=argparse.REMAINDER)
    opts = parser.parse_args(argv)
    if opts.nnodes not in ("1", "1:1"):
        parser.error(f"--nnodes={opts.nnodes}: start the processes of several machines with mpiexec and a host file")
    if opts.nproc_per_node > 1 and "PMI_RANK" not in os.environ and "OMPI_COMM_WORLD_RANK" not in os.environ:
        mpiexec = shutil.which("mpiexec") or shutil.which("mpiexec", path=os.path.dirname(sys.executable))
        if mpiexec is None:
            parser.error("--nproc_per_node needs MPI's launcher, mpiexec, which is not on PATH (pip install -e '.[mpi]')")
        cmd = [mpiexec, "-n", str(opts.nproc_per_node), sys.executable, "-m", "minigrad.distributed.run",
               opts.script, *opts.args]
        os.execvp(cmd[0], cmd)
    set_torchrun_environment()
    sys.argv = [opts.script, *opts.args]
    sys.path.insert(0, os.path.dirname(os.path.abspath(opts.script)))
    runpy.run_path(opts.script, run_name="__main__")


if __name__ == "__main__":
    main()
