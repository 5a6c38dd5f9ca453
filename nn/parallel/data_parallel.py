"""DataParallel: PyTorch's single-process wrapper that splits each batch over several GPUs.

minigrad runs one device per process (several devices: DistributedDataParallel, one process each), so
DataParallel's forward is the module's own, on the device the module is on. Scripts that wrap their
model (`if torch.cuda.device_count() > 1: model = nn.DataParallel(model)`, or always) run unchanged,
and their checkpoints look as PyTorch's: the model is the child `module`, so the wrapper's
`state_dict()` keys start with "module.". Without a GPU it is what PyTorch's is then: the module and an
empty `device_ids`, whatever ids were asked for, and no `dim` or `output_device`.
"""
from minigrad.device import cuda_is_available

from ..module import Module


class DataParallel(Module):
    def __init__(self, module, device_ids=None, output_device=None, dim=0):
        super().__init__()
        self.module = module
        if not cuda_is_available():
            self.device_ids = []
            return
        self.device_ids = list(device_ids) if device_ids is not None else []
        self.output_device = output_device
        self.dim = dim

    def forward(self, *inputs, **kwargs):
        return self.module(*inputs, **kwargs)
