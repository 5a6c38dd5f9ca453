"""The `Distribution` base class (`torch.distributions.Distribution`)."""
import warnings

import minigrad

from . import constraints
from .utils import lazy_property


class Distribution:
    """A probability distribution with batch_shape (independent copies, e.g. one per row) and event_shape (the shape
    of one draw, () for a scalar).

    Subclasses set `arg_constraints`, `support`, and implement sample/rsample, log_prob, entropy, mean, variance, ...
    With validation on (the default, as in PyTorch), parameters are checked against `arg_constraints` when the
    distribution is made, and values against `support` in log_prob/cdf: a failed check raises ValueError.
    """

    has_rsample = False
    has_enumerate_support = False
    _validate_args = True  # the default for new distributions; see set_default_validate_args

    @staticmethod
    def set_default_validate_args(value):
        """Turn argument validation on (True) or off (False) for distributions made from now on."""
        if value not in [True, False]:
            raise ValueError
        Distribution._validate_args = value

    def __init__(self, batch_shape=minigrad.Size(), event_shape=minigrad.Size(), validate_args=None):
        self._batch_shape = minigrad.Size(batch_shape)
        self._event_shape = minigrad.Size(event_shape)
        if validate_args is not None:
            self._validate_args = validate_args
        if self._validate_args:
            try:
                arg_constraints = self.arg_constraints
            except NotImplementedError:
                arg_constraints = {}
                warnings.warn(f"{type(self)} does not define `arg_constraints`. Please set `arg_constraints = {{}}` "
                              "or initialize the distribution with `validate_args=False` to turn off validation.",
                              stacklevel=2)
            for param, constraint in arg_constraints.items():
                if constraints.is_dependent(constraint):
                    continue  # checked by the subclass, if at all
                if param not in self.__dict__ and isinstance(getattr(type(self), param, None), lazy_property):
                    continue  # not computed yet (Categorical's logits when given probs): the given one is checked
                value = getattr(self, param)
                if not constraints.holds(constraint, value):
                    raise ValueError(
                        f"Expected parameter {param} ({type(value).__name__} of shape {tuple(value.shape)}) "
                        f"of distribution {self!r} to satisfy the constraint {constraint!r}, "
                        f"but found invalid values:\n{value}")

    # ---- shapes ----------------------------------------------------------------------------------------
    @property
    def batch_shape(self):
        return self._batch_shape

    @property
    def event_shape(self):
        return self._event_shape

    def _extended_shape(self, sample_shape=minigrad.Size()):
        """The shape of a draw of `sample_shape`: sample_shape + batch_shape + event_shape."""
        return minigrad.Size(tuple(sample_shape) + tuple(self._batch_shape) + tuple(self._event_shape))

    def expand(self, batch_shape, _instance=None):
        """This distribution with its parameters broadcast to `batch_shape` (no copies)."""
        raise NotImplementedError

    def _expanded(self, cls, batch_shape, _instance, *names, **attributes):
        """expand()'s body: a blank `cls` of `batch_shape` (this event_shape) holding each of this distribution's
        parameters `names` (those it holds: probs or logits) broadcast to batch_shape + event_shape, and the
        `attributes` as given (what a family keeps or expands its own way: a temperature, a base distribution).
        A family that holds one of probs and logits as `_param` gets the new one's."""
        new = self._get_checked_instance(cls, _instance)
        batch_shape = minigrad.Size(batch_shape)
        for name in names:
            if name in self.__dict__:
                setattr(new, name, self.__dict__[name].expand(minigrad.Size(tuple(batch_shape) + tuple(self.event_shape))))
        for name, value in attributes.items():
            setattr(new, name, value)
        if "_param" in self.__dict__:
            new._param = new.probs if "probs" in self.__dict__ else new.logits
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def _get_checked_instance(self, cls, _instance=None):
        """A blank instance for expand(): of this object's class, or `_instance` when a subclass passes one."""
        if _instance is None and type(self).__init__ != cls.__init__:
            raise NotImplementedError(
                f"Subclass {self.__class__.__name__} of {cls.__name__} that defines a custom __init__ method "
                "must also define a custom .expand() method.")
        return self.__new__(type(self)) if _instance is None else _instance

    # ---- what subclasses define ------------------------------------------------------------------------
    @property
    def arg_constraints(self):
        raise NotImplementedError

    @property
    def support(self):
        raise NotImplementedError

    @property
    def mean(self):
        raise NotImplementedError

    @property
    def mode(self):
        raise NotImplementedError(f"{self.__class__} does not implement mode")

    @property
    def variance(self):
        raise NotImplementedError

    @property
    def stddev(self):
        return self.variance.sqrt()  # sd = sqrt(var)

    def sample(self, sample_shape=minigrad.Size()):
        """A draw of shape sample_shape + batch_shape + event_shape, outside autograd."""
        with minigrad.no_grad():
            return self.rsample(sample_shape)

    def rsample(self, sample_shape=minigrad.Size()):
        """A reparameterized draw: a function of the parameters, so gradients flow back to them."""
        raise NotImplementedError

    def sample_n(self, n):
        warnings.warn("sample_n will be deprecated. Use .sample((n,)) instead", UserWarning, stacklevel=2)
        return self.sample(minigrad.Size((n,)))

    def log_prob(self, value):
        raise NotImplementedError

    def cdf(self, value):
        raise NotImplementedError

    def icdf(self, value):
        raise NotImplementedError

    def enumerate_support(self, expand=True):
        raise NotImplementedError

    def entropy(self):
        raise NotImplementedError

    def perplexity(self):
        return self.entropy().exp()  # exp(H)

    # ---- validation --------------------------------------------------------------------------------------
    def _validate_sample(self, value):
        """Raise ValueError unless `value` is a tensor that broadcasts with batch_shape + event_shape and lies in
        the support."""
        if not isinstance(value, minigrad.Tensor):
            raise ValueError("The value argument to log_prob must be a Tensor")
        event_dim_start = len(value.size()) - len(self._event_shape)
        if tuple(value.size()[event_dim_start:]) != tuple(self._event_shape):
            raise ValueError(
                f"The right-most size of value must match event_shape: {value.size()} vs {self._event_shape}.")
        actual_shape = value.size()
        expected_shape = self._extended_shape()
        for i, j in zip(reversed(actual_shape), reversed(expected_shape)):
            if i != 1 and j != 1 and i != j:
                raise ValueError(
                    f"Value is not broadcastable with batch_shape+event_shape: {actual_shape} vs {expected_shape}.")
        try:
            support = self.support
        except NotImplementedError:
            warnings.warn(f"{type(self)} does not define `support` to enable sample validation. Please initialize "
                          "the distribution with `validate_args=False` to turn off validation.", stacklevel=2)
            return
        if not constraints.holds(support, value):
            raise ValueError(
                f"Expected value argument ({type(value).__name__} of shape {tuple(value.shape)}) "
                f"to be within the support ({support!r}) of the distribution {self!r}, "
                f"but found invalid values:\n{value}")

    def __repr__(self):
        # each parameter: its value when it has one element, else its size
        names = [k for k in self.arg_constraints if k in self.__dict__]
        args = ", ".join(f"{k}: {self.__dict__[k] if self.__dict__[k].numel() == 1 else self.__dict__[k].size()}"
                         for k in names)
        return f"{self.__class__.__name__}({args})"
