"""Adaptive softmax (Grave et al., "Efficient softmax approximation for GPUs"): a large vocabulary split
by frequency at `cutoffs`. The head scores the frequent words (the shortlist) and one entry per tail
cluster; a word of cluster i has log p = log p_head(cluster i) + log p_cluster_i(word). Each cluster's
projection is narrower (in_features / div_value^(i+1)), so rare words cost little."""
from collections import namedtuple

import minigrad

from .. import functional as F
from ..module import Module
from .container import ModuleList, Sequential
from .linear import Linear

_ASMoutput = namedtuple("_ASMoutput", ["output", "loss"])


class AdaptiveLogSoftmaxWithLoss(Module):
    """forward(input (N, in_features) or (in_features,), target (N,) or ()) -> _ASMoutput(output, loss): each
    row's log-probability of its target, and the mean negative of it. log_prob(input) gives every class's
    (N, n_classes); predict(input) the most likely class (N,). Parameters as PyTorch's: head (a Linear to
    shortlist + clusters), tail.i.0 and tail.i.1 (each cluster's two Linears without bias)."""

    def __init__(self, in_features, n_classes, cutoffs, div_value=4.0, head_bias=False, device=None, dtype=None):
        super().__init__()
        cutoffs = list(cutoffs)
        if (len(cutoffs) == 0 or cutoffs != sorted(cutoffs) or min(cutoffs) <= 0 or max(cutoffs) > n_classes - 1
                or len(set(cutoffs)) != len(cutoffs) or any(int(c) != c for c in cutoffs)):
            raise ValueError("cutoffs should be a sequence of unique, positive integers sorted in an increasing order, "
                             "where each value is between 1 and n_classes-1")
        self.in_features, self.n_classes = in_features, n_classes
        self.cutoffs = cutoffs + [n_classes]
        self.div_value, self.head_bias = div_value, head_bias
        self.shortlist_size = self.cutoffs[0]
        self.n_clusters = len(self.cutoffs) - 1
        self.head_size = self.shortlist_size + self.n_clusters
        kw = dict(device=device, dtype=dtype)
        self.head = Linear(in_features, self.head_size, bias=head_bias, **kw)
        self.tail = ModuleList()
        for i in range(self.n_clusters):
            hidden = int(in_features // (div_value ** (i + 1)))
            size = self.cutoffs[i + 1] - self.cutoffs[i]
            self.tail.append(Sequential(Linear(in_features, hidden, bias=False, **kw),
                                        Linear(hidden, size, bias=False, **kw)))

    def reset_parameters(self):
        self.head.reset_parameters()
        for projection, output in self.tail:
            projection.reset_parameters()
            output.reset_parameters()

    def forward(self, input_, target_):
        if target_.ndim == 1:
            if input_.shape[0] != target_.shape[0]:
                raise RuntimeError("Input and target should have the same size in the batch dimension.")
            if input_.ndim != 2:
                raise RuntimeError("1D target tensor expects 2D input tensors, but found inputs with size", input_.size())
        elif target_.ndim == 0:
            if input_.ndim != 1:
                raise RuntimeError("0D target tensor expects 1D input tensors, but found inputs with size", input_.size())
        else:
            raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
        batched = target_.ndim > 0
        input, target = (input_, target_) if batched else (input_.unsqueeze(0), target_.unsqueeze(0))
        if target.numel() and (int(target.min()) < 0 or int(target.max()) >= self.n_classes):
            raise RuntimeError(f"Target values should be in [0, {self.n_classes - 1}], but values in range "
                               f"[{target.min().item()}, {target.max().item()}] were found. ")
        # the head's column of each row: its word in the shortlist, else its cluster's entry
        cluster = minigrad.bucketize(target, minigrad.tensor(self.cutoffs[:-1], device=target.device), right=True)
        column = minigrad.where(cluster == 0, target, self.shortlist_size + cluster - 1)
        head_logprob = F.log_softmax(self.head(input), dim=1)
        output = head_logprob.gather(1, column.unsqueeze(1)).squeeze(1)
        for i in range(1, self.n_clusters + 1):
            rows = (cluster == i).nonzero().squeeze(1)
            if rows.numel() == 0:
                continue
            cluster_logprob = F.log_softmax(self.tail[i - 1](input.index_select(0, rows)), dim=1)
            word = (target.index_select(0, rows) - self.cutoffs[i - 1]).unsqueeze(1)
            output = output.index_add(0, rows, cluster_logprob.gather(1, word).squeeze(1))
        loss = (-output).mean()
        return _ASMoutput(output if batched else output.squeeze(0), loss)

    def _full_log_prob(self, input, head_output):
        head_logprob = F.log_softmax(head_output, dim=1)
        parts = [head_logprob[:, :self.shortlist_size]]
        for i, cluster in enumerate(self.tail):
            parts.append(F.log_softmax(cluster(input), dim=1) + head_logprob[:, self.shortlist_size + i].unsqueeze(1))
        return minigrad.cat(parts, dim=1)

    def log_prob(self, input):
        """Every class's log-probability: (N, in_features) -> (N, n_classes), or (in_features,) -> (n_classes,)."""
        batched = input.ndim > 1
        x = input if batched else input.unsqueeze(0)
        out = self._full_log_prob(x, self.head(x))
        return out if batched else out.squeeze(0)

    def predict(self, input):
        """The most likely class of each row: (N, in_features) -> (N,) (a 1-D input raises, as in PyTorch)."""
        head_output = self.head(input)
        best = head_output.argmax(dim=1)
        in_tail = best >= self.shortlist_size
        # a shortlist word that tops the head outranks every tail word (each is its cluster's head
        # probability times a probability <= 1): only the other rows need the clusters
        if bool(in_tail.any()):
            best = minigrad.where(in_tail, self._full_log_prob(input, head_output).argmax(dim=1), best)
        return best
