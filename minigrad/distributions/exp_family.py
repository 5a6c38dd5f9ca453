"""`ExponentialFamily`: the base class of the families whose density is exp(<t(x), theta> - F(theta) + k(x))."""
from .distribution import Distribution


class ExponentialFamily(Distribution):
    """A family with density exp(<t(x), theta> - F(theta) + k(x)): t the sufficient statistic, theta the natural
    parameters, F the log normalizer, k the carrier measure. It marks the families (isinstance checks, and
    kl_divergence's refusal between two different ones); each family here writes its own entropy and KL."""
