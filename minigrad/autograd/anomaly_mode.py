"""`minigrad.autograd.anomaly_mode`, the module path of `torch.autograd.anomaly_mode`."""
from .grad_mode import detect_anomaly, set_detect_anomaly

__all__ = ["detect_anomaly", "set_detect_anomaly"]
