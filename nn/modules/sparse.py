"""Embedding: a lookup table of learned vectors, indexed by integer ids."""
import minigrad

from .. import functional as F
from .. import init
from .._functional.linear import check_embedding_ids
from ..module import Module
from ..parameter import Parameter


class Embedding(Module):
    """Row `i` of `weight` for each id `i` in the input.

    Shapes: input (*) int64/int32 ids in [0, num_embeddings) -> output (*, embedding_dim);
    weight (num_embeddings, embedding_dim), initialised N(0, 1). The row `padding_idx` (if
    given) starts at zero and gets no gradient. max_norm: each row looked up is first scaled
    down, in place in `weight`, to that norm_type-norm if it is longer (see F.embedding);
    scale_grad_by_freq divides each row's gradient by its id's count in the batch; sparse=True makes
    weight's gradient a sparse COO tensor of the rows looked up (for SparseAdam, SGD, Adagrad).
    """

    def __init__(self, num_embeddings, embedding_dim, padding_idx=None, max_norm=None, norm_type=2.0,
                 scale_grad_by_freq=False, sparse=False, _weight=None, _freeze=False, device=None, dtype=None):
        super().__init__()
        self.max_norm, self.norm_type = max_norm, norm_type
        self.scale_grad_by_freq, self.sparse = scale_grad_by_freq, sparse
        _make_table(self, num_embeddings, embedding_dim, padding_idx, _weight, not _freeze, device, dtype,
                    "Padding_idx must be within num_embeddings")

    def reset_parameters(self):
        """Draw the initial values again (PyTorch's init for this layer)."""
        _reset_table(self)

    @classmethod
    def from_pretrained(cls, embeddings, freeze=True, padding_idx=None, max_norm=None, norm_type=2.0,
                        scale_grad_by_freq=False, sparse=False):
        """An Embedding whose weight is `embeddings` (num_embeddings, embedding_dim), frozen by default."""
        if embeddings.dim() != 2:  # (PyTorch's call: a list has no dim)
            raise AssertionError("Embeddings parameter is expected to be 2-dimensional")  # PyTorch's type
        m = cls(*embeddings.shape, padding_idx=padding_idx, max_norm=max_norm, norm_type=norm_type,
                scale_grad_by_freq=scale_grad_by_freq, sparse=sparse, _weight=embeddings)
        m.weight.requires_grad_(not freeze)
        return m

    def forward(self, input):
        check_embedding_ids(input)  # (the ids' range is checked inside the op, in one reduction)
        return F.embedding(input, self.weight, self.padding_idx, self.max_norm, self.norm_type,
                           self.scale_grad_by_freq, self.sparse)

    def extra_repr(self):
        s = f"{self.num_embeddings}, {self.embedding_dim}"
        if self.padding_idx is not None:
            s += f", padding_idx={self.padding_idx}"
        if self.max_norm is not None:
            s += f", max_norm={self.max_norm}"
        if self.norm_type != 2:
            s += f", norm_type={self.norm_type}"
        if self.scale_grad_by_freq is not False:
            s += f", scale_grad_by_freq={self.scale_grad_by_freq}"
        if self.sparse is not False:
            s += ", sparse=True"
        return s


class EmbeddingBag(Module):
    """Per bag of ids, the sum, mean or max of their rows of `weight`, without the rows in between (F.embedding_bag).

    Shapes: forward(input, offsets=None, per_sample_weights=None): input (B, N) (B bags of N ids, offsets None)
    or (E,) with offsets (B,) the bags' starts ((B + 1,) with include_last_offset=True) -> output (B, embedding_dim);
    per_sample_weights (input's shape) only with mode='sum'. weight (num_embeddings, embedding_dim), initialised
    N(0, 1); the row `padding_idx` (if given) starts at zero, its entries are left out of the bags (and of the
    'mean' count) and it gets no gradient. An empty bag gives zeros. max_norm, norm_type and scale_grad_by_freq
    as Embedding's; sparse=True ('sum' and 'mean') makes weight's gradient a sparse COO tensor of one row per entry.
    """

    def __init__(self, num_embeddings, embedding_dim, max_norm=None, norm_type=2.0, scale_grad_by_freq=False,
                 mode="mean", sparse=False, _weight=None, include_last_offset=False, padding_idx=None, device=None,
                 dtype=None):
        super().__init__()
        self.max_norm, self.norm_type = max_norm, norm_type
        self.scale_grad_by_freq = scale_grad_by_freq
        _make_table(self, num_embeddings, embedding_dim, padding_idx, _weight, True, device, dtype,
                    "padding_idx must be within num_embeddings")  # (PyTorch's two texts differ in case)
        self.mode = mode
        self.sparse = sparse
        self.include_last_offset = include_last_offset

    def reset_parameters(self):
        """Draw the initial values again (PyTorch's init for this layer)."""
        _reset_table(self)

    def forward(self, input, offsets=None, per_sample_weights=None):
        return F.embedding_bag(input, self.weight, offsets, self.max_norm, self.norm_type, self.scale_grad_by_freq,
                               self.mode, self.sparse, per_sample_weights, self.include_last_offset, self.padding_idx)

    def extra_repr(self):
        s = f"{self.num_embeddings!r}, {self.embedding_dim!r}"
        if self.max_norm is not None:
            s += f", max_norm={self.max_norm!r}"
        if self.norm_type != 2:
            s += f", norm_type={self.norm_type!r}"
        if self.scale_grad_by_freq is not False:
            s += f", scale_grad_by_freq={self.scale_grad_by_freq!r}"
        s += f", mode={self.mode!r}"
        if self.padding_idx is not None:
            s += f", padding_idx={self.padding_idx!r}"
        return s

    @classmethod
    def from_pretrained(cls, embeddings, freeze=True, max_norm=None, norm_type=2.0, scale_grad_by_freq=False,
                        mode="mean", sparse=False, include_last_offset=False, padding_idx=None):
        """An EmbeddingBag whose weight is `embeddings` (num_embeddings, embedding_dim), frozen by default."""
        if embeddings.dim() != 2:  # (PyTorch's call: a list has no dim)
            raise AssertionError("Embeddings parameter is expected to be 2-dimensional")  # PyTorch's type
        m = cls(*embeddings.shape, max_norm=max_norm, norm_type=norm_type, scale_grad_by_freq=scale_grad_by_freq,
                mode=mode, sparse=sparse, _weight=embeddings, include_last_offset=include_last_offset,
                padding_idx=padding_idx)
        m.weight.requires_grad_(not freeze)
        return m


def _make_table(module, num_embeddings, embedding_dim, padding_idx, weight, requires_grad, device, dtype,
                padding_message):
    """Embedding's and EmbeddingBag's table: its sizes, padding_idx (made non-negative; checked) and weight
    (`weight` as given, or N(0, 1) with the padding row zero)."""
    module.num_embeddings, module.embedding_dim = num_embeddings, embedding_dim
    if padding_idx is not None:
        if not -num_embeddings <= padding_idx < num_embeddings:
            raise AssertionError(padding_message)  # (PyTorch's asserts, raised so that -O keeps them)
        padding_idx %= num_embeddings
    module.padding_idx = padding_idx
    if weight is None:
        module.weight = Parameter(minigrad.empty((num_embeddings, embedding_dim), device=device, dtype=dtype))
        _reset_table(module)
    else:
        if tuple(weight.shape) != (num_embeddings, embedding_dim):
            raise AssertionError("Shape of weight does not match num_embeddings and embedding_dim")
        module.weight = Parameter(weight, requires_grad=requires_grad)


def _reset_table(module):
    init.normal_(module.weight)
    if module.padding_idx is not None:
        with minigrad.no_grad():  # (through Tensor indexing: a float padding_idx gets PyTorch's IndexError)
            module.weight[module.padding_idx].fill_(0)
