import pytest
from _mpi_launch import HAVE_MPI, launch


@pytest.fixture
def mpirun():
    """mpirun(n, *args, timeout=60) runs `mpiexec -n n python *args`; skips without mpi4py or mpiexec."""
    if not HAVE_MPI:
        pytest.skip("mpi4py or mpiexec is not installed (pip install -e '.[mpi]')")
    return launch
