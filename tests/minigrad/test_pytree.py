"""minigrad.utils._pytree against torch.utils._pytree: leaves order, TreeSpec, round trips and error texts;
minigrad.func's transforms flatten through it."""
import collections

import pytest

import minigrad
from minigrad.utils import _pytree as mp

torch = pytest.importorskip("torch")
tp = pytest.importorskip("torch.utils._pytree")

Point = collections.namedtuple("Point", "x y")
TREES = [1, None, (), [], {}, "leaf",
         (1, None, [2, {"b": 3, "a": 4}], Point(5, 6), collections.OrderedDict(z=7, y=8)),
         {"x": {"y": [None, ()]}, "a": (1.5,)}, collections.defaultdict(list, {"q": [1, 2]}),
         collections.deque([1, (2, 3)], maxlen=4), [Point((1, 2), [3]), {"k": None}]]


@pytest.mark.parametrize("tree", TREES, ids=range(len(TREES)))
def test_flatten_matches_torch_and_round_trips(tree):
    leaves, spec = mp.tree_flatten(tree)
    t_leaves, t_spec = tp.tree_flatten(tree)
    assert leaves == t_leaves and mp.tree_leaves(tree) == t_leaves
    assert repr(spec) == repr(t_spec) and repr(mp.tree_structure(tree)) == repr(t_spec)
    assert (spec.num_leaves, spec.num_nodes, spec.num_children, spec.is_leaf()) == \
        (t_spec.num_leaves, t_spec.num_nodes, t_spec.num_children, t_spec.is_leaf())
    rebuilt = mp.tree_unflatten(leaves, spec)
    assert rebuilt == tree and type(rebuilt) is type(tree)
    assert mp.tree_map(lambda v: [v], tree) == tp.tree_map(lambda v: [v], tree)


def test_spec_equality_and_hash_as_torch():
    a, b = mp.tree_structure({"a": 1, "b": 2}), mp.tree_structure({"b": 1, "a": 2})
    assert (a == b) == (tp.tree_structure({"a": 1, "b": 2}) == tp.tree_structure({"b": 1, "a": 2}))
    assert mp.tree_structure((1, [2])) == mp.tree_structure((3, [4]))
    assert hash(mp.tree_structure((1, [2]))) == hash(mp.tree_structure((3, [4])))


def test_map_with_rests_only_and_predicates():
    for lib in (mp, tp):
        assert lib.tree_map(lambda a, b: (a, b), {"a": 1, "b": 2}, {"b": 3, "a": 4}) == {"a": (1, 4), "b": (2, 3)}
        assert lib.tree_map(lambda x, y: [x] + y, [5, 6], [[7, 9], [1, 2]]) == [[5, 7, 9], [6, 1, 2]]
    tree = {"w": minigrad.ones(2), "n": 3, "s": "x"}
    doubled = mp.tree_map_only(minigrad.Tensor, lambda t: t * 2, tree)
    assert doubled["n"] == 3 and doubled["s"] == "x" and doubled["w"].tolist() == [2.0, 2.0]
    assert mp.tree_all(lambda v: v > 0, [1, (2, 3)]) == tp.tree_all(lambda v: v > 0, [1, (2, 3)]) is True
    assert mp.tree_any(lambda v: v > 2, [1, (2, 3)]) is True and mp.tree_any(lambda v: v > 3, [1, (2, 3)]) is False
    assert mp.tree_leaves([1, (2, 3)], is_leaf=lambda v: isinstance(v, tuple)) == \
        tp.tree_leaves([1, (2, 3)], is_leaf=lambda v: isinstance(v, tuple))
    assert mp.tree_flatten(minigrad.zeros(2, 3).shape)[0] == tp.tree_flatten(torch.zeros(2, 3).shape)[0] == [2, 3]


def test_register_pytree_node():
    class Box:
        def __init__(self, items, label):
            self.items, self.label = items, label

    mp.register_pytree_node(Box, lambda b: (b.items, b.label), lambda items, label: Box(list(items), label))
    leaves, spec = mp.tree_flatten([Box([1, (2, 3)], "l"), 4])
    assert leaves == [1, 2, 3, 4]
    back = mp.tree_unflatten([10, 20, 30, 40], spec)
    assert back[0].items == [10, (20, 30)] and back[0].label == "l" and back[1] == 40
    with pytest.raises(ValueError, match=r"is already registered as pytree node\."):
        mp.register_pytree_node(Box, None, None)


@pytest.mark.parametrize("case", ["arity", "keys", "type", "spec", "namedtuple", "map_only", "leaves", "registered"])
def test_errors_match_torch(case):
    Other = collections.namedtuple("Other", "x y")

    def call(lib):
        return {"arity": lambda: lib.tree_map(lambda a, b: a, [1, 2], [1]),
                "keys": lambda: lib.tree_map(lambda a, b: a, {"a": 1}, {"b": 1}),
                "type": lambda: lib.tree_map(lambda a, b: a, (1,), [1]),
                "spec": lambda: lib.tree_unflatten([1], 3),
                "namedtuple": lambda: lib.tree_map(lambda a, b: a, Point(1, 2), Other(1, 2)),
                "map_only": lambda: lib.tree_map_only(3, None, [1]),
                "leaves": lambda: lib.tree_unflatten([1, 2], lib.tree_structure((1, [2, 3]))),
                "registered": lambda: lib.register_pytree_node(list, None, None)}[case]()

    with pytest.raises(Exception) as want:
        call(tp)
    with pytest.raises(type(want.value)) as got:
        call(mp)
    assert str(got.value) == str(want.value)


def test_vmap_structure_error_prints_torchs_treespec():
    import torch.func

    with pytest.raises(ValueError) as want:
        torch.func.vmap(lambda a, b: a, in_dims=(0,))(torch.ones(2), torch.ones(2))
    with pytest.raises(ValueError) as got:
        minigrad.func.vmap(lambda a, b: a, in_dims=(0,))(minigrad.ones(2), minigrad.ones(2))
    assert str(got.value) == str(want.value)


def test_func_transforms_take_registered_and_ordered_containers():
    x = minigrad.tensor([1.0, 2.0])
    params = collections.OrderedDict(b=x, a=x * 3)
    grads = minigrad.func.grad(lambda p: (p["a"] * p["b"]).sum())(params)
    assert type(grads) is collections.OrderedDict and list(grads) == ["b", "a"]
    assert grads["b"].tolist() == [3.0, 6.0] and grads["a"].tolist() == [1.0, 2.0]
