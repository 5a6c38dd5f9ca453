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
