"""The implementations behind `nn.functional`, one file per idea.

    reference.py      every fused op from minigrad's primitive ops, differentiated by autograd: read this first
    linear.py         linear (AddmmBackward0 / MmBackward0), embedding (EmbeddingBackward0)
    normalization.py  layer_norm (NativeLayerNormBackward0)
    activation.py     gelu (GeluBackward0), relu; softmax, log_softmax (minigrad's own ops)
    dropout.py        dropout (NativeDropoutBackward0)
    loss.py           cross_entropy (NllLossBackward0), mse_loss (MseLossBackward0)
    attention.py      scaled_dot_product_attention (ScaledDotProductAttentionBackward0)
    rnn.py            RNN / LSTM / GRU layers (MkldnnRnnLayerBackward0 per layer and direction) and cells
    multi_head_attention.py  multi_head_attention_forward: nn.MultiheadAttention's, composed of the ops above
    _common.py        wrapping arrays, checking arguments (blocked loops and scratch: minigrad/backends/arrays.py)

Each op is one Function of plain array code; its compiled CPU and CUDA kernels are in
minigrad/backends, registered there and found by `minigrad.backends.find`; `minigrad.backends.pick`
runs the reference instead under MINIGRAD_KERNELS=reference.
"""
