"""`torch.utils._pytree`: nested containers ("pytrees") flattened to a list of leaves and a TreeSpec that
rebuilds them. tuple, list, dict, namedtuple, OrderedDict, defaultdict, deque and minigrad.Size are nodes
(dicts in insertion order, as PyTorch's); everything else, None included, is a leaf. register_pytree_node
adds a type.

    >>> leaves, spec = tree_flatten({"w": w, "b": (b, None)})     # [w, b, None]
    >>> tree_unflatten([l * 2 for l in leaves], spec)             # {"w": 2w, "b": (2b, None)}

minigrad.func's transforms take and give back their pytrees through this module.
"""
import functools
from collections import OrderedDict, defaultdict, deque, namedtuple
from typing import NamedTuple

from ..tensor import Size

__all__ = ["TreeSpec", "LeafSpec", "register_pytree_node", "tree_flatten", "tree_unflatten", "tree_iter", "tree_leaves",
           "tree_structure", "tree_map", "tree_map_", "map_only", "tree_map_only", "tree_all", "tree_any",
           "tree_all_only", "tree_any_only", "tree_is_leaf", "treespec_pprint"]


class NodeDef(NamedTuple):
    type: type
    flatten_fn: object  # node -> (children, context)
    unflatten_fn: object  # (children, context) -> node


SUPPORTED_NODES = {}


def register_pytree_node(cls, flatten_fn, unflatten_fn, *, serialized_type_name=None, to_dumpable_context=None,
                         from_dumpable_context=None, flatten_with_keys_fn=None):
    """Make `cls` a node: flatten_fn(node) -> (children, context), unflatten_fn(children, context) -> node.
    (The serialization and key-path arguments are accepted; minigrad serializes no TreeSpec.)"""
    if cls in SUPPORTED_NODES:
        raise ValueError(f"{cls} is already registered as pytree node.")
    SUPPORTED_NODES[cls] = NodeDef(cls, flatten_fn, unflatten_fn)


_register_pytree_node = register_pytree_node  # (the older private name some libraries still call)

# every namedtuple class is one node type, `namedtuple`, its context the class (PyTorch's convention)
for _cls, _flatten, _unflatten in [
    (tuple, lambda t: (list(t), None), lambda values, context: tuple(values)),
    (list, lambda t: (list(t), None), lambda values, context: list(values)),
    (dict, lambda d: (list(d.values()), list(d)), lambda values, keys: dict(zip(keys, values))),
    (namedtuple, lambda t: (list(t), type(t)), lambda values, cls: cls(*values)),
    (OrderedDict, lambda d: (list(d.values()), list(d)), lambda values, keys: OrderedDict(zip(keys, values))),
    (defaultdict, lambda d: (list(d.values()), [d.default_factory, list(d)]),
     lambda values, context: defaultdict(context[0], zip(context[1], values))),
    (deque, lambda d: (list(d), d.maxlen), lambda values, maxlen: deque(values, maxlen=maxlen)),
    (Size, lambda s: (list(s), None), lambda values, context: Size(values)),
]:
    register_pytree_node(_cls, _flatten, _unflatten)


def _node_type(tree):
    cls = type(tree)
    return namedtuple if issubclass(cls, tuple) and hasattr(cls, "_fields") else cls


def tree_is_leaf(tree, is_leaf=None):
    return (is_leaf is not None and is_leaf(tree)) or _node_type(tree) not in SUPPORTED_NODES


class TreeSpec:
    """A pytree's structure: its root's node type and context, and one TreeSpec per child."""

    def __init__(self, type, context, children_specs):
        self.type, self._context, self._children = type, context, children_specs
        self.num_children = len(children_specs)
        self.num_leaves = 1 if type is None else sum(c.num_leaves for c in children_specs)
        self.num_nodes = 1 + sum(c.num_nodes for c in children_specs)

    @property
    def context(self):
        return self._context

    @property
    def children_specs(self):
        return self._children

    def children(self):
        return list(self._children)

    def child(self, index):
        return self._children[index]

    def is_leaf(self):
        return self.num_nodes == 1 and self.num_leaves == 1

    def __repr__(self, indent=0):
        if self.is_leaf():
            return "*"
        indent += 2
        children = (",\n" + " " * indent).join(c.__repr__(indent) for c in self._children)
        return f"TreeSpec({self.type.__name__}, {self._context}, [{children}])"

    def __eq__(self, other):
        if not isinstance(other, TreeSpec):
            return NotImplemented
        return (str(self.type) == str(other.type) and self._context == other._context
                and self._children == other._children)

    def __hash__(self):
        context = tuple(self._context) if self.type in (dict, OrderedDict) else None
        return hash((self.type, context, tuple(self._children)))

    def unflatten(self, leaves):
        leaves = list(leaves)
        if len(leaves) != self.num_leaves:
            raise ValueError(f"treespec.unflatten(leaves): `leaves` has length {len(leaves)} but the spec refers to a "
                             f"pytree that holds {self.num_leaves} items ({self}).")
        return self._build(iter(leaves))

    def _build(self, leaves):
        if self.is_leaf():
            return next(leaves)
        return SUPPORTED_NODES[self.type].unflatten_fn([c._build(leaves) for c in self._children], self._context)

    def flatten_up_to(self, tree):
        """The subtrees of `tree` at this spec's leaves (tree_map's other trees: this spec is a prefix of theirs)."""
        if self.is_leaf():
            return [tree]
        node_type = _node_type(tree)
        dicts = (dict, OrderedDict, defaultdict)
        if self.type in dicts and node_type in dicts:  # (any two dicts match by their keys, in this spec's order)
            keys = self._context[1] if self.type is defaultdict else self._context
            if set(tree) != set(keys):
                missing, extra = set(keys) - set(tree), set(tree) - set(keys)
                raise ValueError("Node keys mismatch" + (f"; missing key(s): {missing}" if missing else "")
                                 + (f"; extra key(s): {extra}" if extra else "") + ".")
            children = [tree[k] for k in keys]
        else:
            if node_type != self.type:
                raise ValueError(f"Node type mismatch; expected {self.type!r}, but got {node_type!r}.")
            children, context = SUPPORTED_NODES[node_type].flatten_fn(tree)
            if len(children) != self.num_children:
                raise ValueError(f"Node arity mismatch; expected {self.num_children}, but got {len(children)}.")
            if node_type is not deque and context != self._context:
                raise ValueError(f"Node context mismatch for node type {self.type!r}; expected {self._context!r}, "
                                 f"but got {context!r}.")
        return [sub for child, spec in zip(children, self._children) for sub in spec.flatten_up_to(child)]


class LeafSpec(TreeSpec):
    """The spec of a leaf: printed `*`."""

    def __init__(self):
        super().__init__(None, None, [])


_LEAF = LeafSpec()


def tree_flatten(tree, is_leaf=None):
    """(leaves, spec): the leaves left to right (a dict's in its keys' order), and the TreeSpec to rebuild it."""
    leaves = []

    def visit(node):
        if tree_is_leaf(node, is_leaf):
            leaves.append(node)
            return _LEAF
        node_type = _node_type(node)
        children, context = SUPPORTED_NODES[node_type].flatten_fn(node)
        return TreeSpec(node_type, context, [visit(c) for c in children])

    spec = visit(tree)
    return leaves, spec


def tree_unflatten(leaves, treespec):
    if not isinstance(treespec, TreeSpec):
        if not isinstance(leaves, TreeSpec):
            raise TypeError(f"Expected `treespec` to be an instance of PyTreeSpec but got item of type "
                            f"{type(treespec)}.")
        leaves, treespec = treespec, leaves  # (PyTorch takes the two either way round)
    return treespec.unflatten(leaves)


def tree_iter(tree, is_leaf=None):
    if tree_is_leaf(tree, is_leaf):
        yield tree
        return
    for child in SUPPORTED_NODES[_node_type(tree)].flatten_fn(tree)[0]:
        yield from tree_iter(child, is_leaf)


def tree_leaves(tree, is_leaf=None):
    return list(tree_iter(tree, is_leaf))


def tree_structure(tree, is_leaf=None):
    return tree_flatten(tree, is_leaf)[1]


def tree_map(func, tree, *rests, is_leaf=None):
    """The pytree of func(leaf, *the rests' subtrees at that leaf): each of `rests` has `tree` as a prefix."""
    leaves, spec = tree_flatten(tree, is_leaf)
    return spec.unflatten(map(func, leaves, *[spec.flatten_up_to(r) for r in rests]))


def tree_map_(func, tree, *rests, is_leaf=None):
    """func called on each leaf (for its side effect); returns `tree` itself."""
    leaves, spec = tree_flatten(tree, is_leaf)
    deque(map(func, leaves, *[spec.flatten_up_to(r) for r in rests]), maxlen=0)
    return tree


def map_only(type_or_types_or_pred):
    """A decorator: the function applied to the leaves of the given type(s) (or passing the predicate), others kept."""
    if isinstance(type_or_types_or_pred, (type, tuple)) or hasattr(type_or_types_or_pred, "__args__"):
        def pred(x):
            return isinstance(x, type_or_types_or_pred)
    elif callable(type_or_types_or_pred):
        pred = type_or_types_or_pred
    else:
        raise TypeError("Argument must be a type, a tuple of types, or a callable.")

    def wrapper(func):
        @functools.wraps(func)
        def wrapped(x):
            return func(x) if pred(x) else x
        return wrapped

    return wrapper


def tree_map_only(type_or_types_or_pred, func, tree, is_leaf=None):
    return tree_map(map_only(type_or_types_or_pred)(func), tree, is_leaf=is_leaf)


def tree_map_only_(type_or_types_or_pred, func, tree, is_leaf=None):
    return tree_map_(map_only(type_or_types_or_pred)(func), tree, is_leaf=is_leaf)


def tree_all(pred, tree, is_leaf=None):
    return all(map(pred, tree_iter(tree, is_leaf)))


def tree_any(pred, tree, is_leaf=None):
    return any(map(pred, tree_iter(tree, is_leaf)))


def tree_all_only(type_or_types, pred, tree, is_leaf=None):
    return all(pred(x) for x in tree_iter(tree, is_leaf) if isinstance(x, type_or_types))


def tree_any_only(type_or_types, pred, tree, is_leaf=None):
    return any(pred(x) for x in tree_iter(tree, is_leaf) if isinstance(x, type_or_types))


class _Asterisk:
    def __repr__(self):
        return "*"


def treespec_pprint(treespec):
    """The structure as the pytree it describes, each leaf written `*`: `(*, {'a': *})`."""
    return repr(tree_unflatten([_Asterisk()] * treespec.num_leaves, treespec))
