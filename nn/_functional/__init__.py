"""The implementations behind `nn.functional`, one file per idea.

    linear.py         linear (AddmmBackward0 / MmBackward0), embedding (EmbeddingBackward0)
    normalization.py  layer_norm (NativeLayerNormBackward0)
    activation.py     gelu (GeluBackward0), relu, softmax, log_softmax
    dropout.py        dropout (NativeDropoutBackward0) and the keep-masks attention uses too
    loss.py           cross_entropy (CrossEntropyLossBackward0), mse_loss (MseLossBackward0)
    attention.py      scaled_dot_product_attention (ScaledDotProductAttentionBackward0)
    erf.py            erf on raw numpy/cupy arrays (Cody in float64, a fast rational in float32)
    _common.py        blocked, threaded loops over arrays; scratch buffers
    cpu_kernels.py    compiling the ops' one-loop CPU kernels with numba (the numpy passes without it)
    cuda_kernels.py   the ops' fused GPU kernels (cupy)
    reference.py      the same functions from primitive minigrad ops (tests and benchmarks only)
"""
