"""Fixtures shared by tests/minigrad's files."""
import pytest


@pytest.fixture
def read():
    """read(log_dir) -> a loaded EventAccumulator of TensorBoard (every event kept); skips without tensorboard."""
    pytest.importorskip("tensorboard")
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    def load(path):
        acc = EventAccumulator(str(path), size_guidance={"scalars": 0, "histograms": 0, "images": 0, "tensors": 0})
        acc.Reload()
        return acc

    return load


@pytest.fixture
def TorchWriter(torch):
    """torch.utils.tensorboard.SummaryWriter, the reference."""
    return pytest.importorskip("torch.utils.tensorboard").SummaryWriter


@pytest.fixture
def torch_validating_args():
    """PyTorch's distributions with their default argument checks on, as a fresh process has them: a
    torch.compile earlier in this process (tests compare minigrad.compile with it) turns that default off
    for the rest of the process. Use with autouse in the distributions' test files."""
    import sys

    torch = sys.modules.get("torch")  # (not imported yet: nothing can have turned it off)
    if torch is None:
        yield
        return
    Distribution = torch.distributions.Distribution
    before = Distribution._validate_args
    Distribution.set_default_validate_args(True)
    yield
    Distribution.set_default_validate_args(before)


@pytest.fixture
def group_steps(monkeypatch):
    """How many times Adam's full Python step ran a group (test_compile_optimizer29.py, test_compile_replay31.py)."""
    from nn.optim import adam

    calls = []
    full = adam.Adam._step_group

    def counted(self, group):
        calls.append(1)
        return full(self, group)

    monkeypatch.setattr(adam.Adam, "_step_group", counted)
    return calls
