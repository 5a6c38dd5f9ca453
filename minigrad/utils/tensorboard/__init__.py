"""TensorBoard logging, as `torch.utils.tensorboard`: `SummaryWriter` writes event files that
`tensorboard --logdir runs` shows. The files are written with the `tensorboard` package, an
optional extra (`pip install 'minigrad[tensorboard]'`); importing this module does not need it."""
from .writer import SummaryWriter

__all__ = ["SummaryWriter"]
