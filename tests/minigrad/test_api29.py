"""PyTorch 2.13 public names scripts use that minigrad lacked: torch.return_types, torch.functional, uint32/uint64,
torch.overrides' handle_torch_function on plain tensors, torch.to_dlpack, torch.from_file, the sym_* helpers,
Tensor.storage_type and the storage classes. Each compared with torch."""
import math

import numpy as np
import pytest

import minigrad

torch = pytest.importorskip("torch")


def _error(fn):
    with pytest.raises(Exception) as info:
        fn()
    return type(info.value).__name__, str(info.value).replace("torch.", "minigrad.")


# --- return_types


def test_return_types_has_torchs_classes_with_torchs_fields():
    theirs = {c.__name__: c for c in torch.return_types.all_return_types}
    ours = {c.__name__: c for c in minigrad.return_types.all_return_types}
    assert sorted(ours) == sorted(theirs)
    for name, cls in theirs.items():
        fields = [f for f in dir(cls) if not f.startswith("_") and f not in
                  ("count", "index", "n_fields", "n_sequence_fields", "n_unnamed_fields")]
        assert sorted(getattr(minigrad.return_types, name)._fields) == sorted(fields), name


@pytest.mark.parametrize("op,args", [("max", (1,)), ("min", (0,)), ("sort", ()), ("topk", (1,)), ("kthvalue", (1,)),
                                     ("median", (1,)), ("mode", (1,)), ("cummax", (0,)), ("aminmax", ())])
def test_an_ops_result_is_an_instance_of_its_return_type(op, args):
    a = [[1.0, 5.0, 2.0], [4.0, 0.0, 3.0]]
    theirs, ours = getattr(torch.tensor(a), op)(*args), getattr(minigrad.tensor(a), op)(*args)
    assert isinstance(theirs, getattr(torch.return_types, op))
    assert isinstance(ours, getattr(minigrad.return_types, op))
    assert type(ours).__name__ == type(theirs).__name__ and ours._fields == tuple(
        f for f in ours._fields if hasattr(theirs, f))
    for field in ours._fields:
        assert getattr(ours, field).tolist() == getattr(theirs, field).tolist()


def test_return_types_print_as_torchs():
    theirs = repr(torch.max(torch.tensor([[1.0, 2.0], [3.0, 0.0]]), 1))
    ours = repr(minigrad.max(minigrad.tensor([[1.0, 2.0], [3.0, 0.0]]), 1))
    assert ours == theirs.replace("torch.", "minigrad.")
    assert ours.startswith("minigrad.return_types.max(\nvalues=tensor(")


def test_return_types_lacks_other_names():
    assert not hasattr(minigrad.return_types, "nope") and not hasattr(torch.return_types, "nope")


# --- torch.functional


def test_functional_module_holds_the_top_level_functions():
    import torch.functional as theirs

    import minigrad.functional as ours

    for name in theirs.__all__:
        assert getattr(ours, name) is getattr(minigrad, name), name
    assert sorted(ours.__all__) == sorted(theirs.__all__)
    x = [[1.0, 2.0], [3.0, 4.0]]
    assert ours.einsum("ij->j", minigrad.tensor(x)).tolist() == theirs.einsum("ij->j", torch.tensor(x)).tolist()


# --- uint32 / uint64


@pytest.mark.parametrize("name", ["uint16", "uint32", "uint64"])
def test_wide_unsigned_dtypes_create_cast_compare_and_print_as_torchs(name):
    T, M = getattr(torch, name), getattr(minigrad, name)
    assert repr(M) == repr(T).replace("torch", "minigrad") and M.itemsize == T.itemsize
    assert M.is_signed is T.is_signed is False
    assert minigrad.iinfo(M).max == torch.iinfo(T).max
    t, m = torch.tensor([1, 2, 3], dtype=T), minigrad.tensor([1, 2, 3], dtype=M)
    assert repr(m) == repr(t).replace("torch", "minigrad") and m.type() == t.type().replace("torch", "minigrad")
    assert (m == m).tolist() == (t == t).tolist() and (m & m).tolist() == (t & t).tolist()
    assert (m * m).dtype == M and (m * m).tolist() == (t * t).tolist()
    assert (m * 2.5).dtype == minigrad.float32 and m.float().tolist() == t.float().tolist()
    assert minigrad.tensor([1.5, 2.0]).to(M).tolist() == torch.tensor([1.5, 2.0]).to(T).tolist()
    assert m.sum().item() == t.sum().item() and m.sum().dtype == minigrad.int64
    assert minigrad.zeros(2, dtype=M).dtype == M and minigrad.from_numpy(np.zeros(2, M.np)).dtype == M


@pytest.mark.parametrize("name", ["uint16", "uint32", "uint64"])
@pytest.mark.parametrize("other", ["bool", "uint8", "int8", "int64", "uint16", "uint32", "complex64", "float16"])
def test_wide_unsigned_promotion_refuses_as_torchs(name, other):
    T, M = getattr(torch, name), getattr(minigrad, name)
    To, Mo = getattr(torch, other), getattr(minigrad, other)
    try:
        expected = repr(torch.promote_types(T, To)).replace("torch", "minigrad")
    except RuntimeError as e:
        expected = str(e)
        with pytest.raises(RuntimeError) as info:
            minigrad.promote_types(M, Mo)
        assert str(info.value) == expected
        with pytest.raises(RuntimeError) as info:
            minigrad.tensor([1, 2], dtype=M) + minigrad.tensor([1, 2], dtype=Mo)
        assert str(info.value) == expected
    else:
        assert repr(minigrad.promote_types(M, Mo)) == expected


# --- overrides


def test_handle_torch_function_runs_the_function_on_plain_tensors():
    import torch.overrides as theirs

    import minigrad.overrides as ours

    assert minigrad.overrides is ours
    t, m = torch.ones(2), minigrad.ones(2)
    assert ours.handle_torch_function(minigrad.add, (m,), m, 1).tolist() == \
        theirs.handle_torch_function(torch.add, (t,), t, 1).tolist()
    assert _error(lambda: ours.handle_torch_function(minigrad.add, (), m, 1)) == \
        _error(lambda: theirs.handle_torch_function(torch.add, (), t, 1))
    assert ours.is_tensor_like(minigrad.Tensor) == theirs.is_tensor_like(torch.Tensor) is True
    assert ours.is_tensor_like(minigrad.nn.Parameter) == theirs.is_tensor_like(torch.nn.Parameter) is True
    assert ours.is_tensor_method_or_property(minigrad.Tensor.add) == theirs.is_tensor_method_or_property(torch.Tensor.add)
    assert ours.is_tensor_method_or_property(minigrad.add) == theirs.is_tensor_method_or_property(torch.add)
    assert ours.resolve_name(minigrad.Tensor.add) == theirs.resolve_name(torch.Tensor.add).replace("torch", "minigrad")
    assert ours.resolve_name(print) is theirs.resolve_name(print) is None
    assert isinstance(ours.get_ignored_functions(), set) and minigrad.add in ours.get_ignored_functions()

    @ours.wrap_torch_function(lambda x: (x,))
    def double(x):
        return x * 2

    assert double(m).tolist() == [2.0, 2.0]


# --- DLPack


def test_top_level_to_dlpack_shares_memory_as_torchs():
    assert torch.to_dlpack is torch.utils.dlpack.to_dlpack
    assert minigrad.to_dlpack is minigrad.utils.dlpack.to_dlpack
    m = minigrad.zeros(3)
    back = minigrad.from_dlpack(minigrad.to_dlpack(m))
    back[1] = 5.0
    assert m.tolist() == [0.0, 5.0, 0.0]
    a = np.arange(3.0)
    shared = minigrad.from_dlpack(a)
    a[0] = 7.0
    assert shared.tolist() == [7.0, 1.0, 2.0] and np.from_dlpack(shared).tolist() == [7.0, 1.0, 2.0]


# --- from_file


def test_from_file_reads_writes_and_refuses_as_torchs(tmp_path):
    path = tmp_path / "f.bin"
    np.arange(6, dtype=np.float32).tofile(path)
    assert minigrad.from_file(str(path), size=6, dtype=minigrad.float32).tolist() == \
        torch.from_file(str(path), size=6, dtype=torch.float32).tolist()
    assert minigrad.from_file(str(path), False, 3).tolist() == torch.from_file(str(path), False, 3).tolist()
    assert minigrad.from_file(str(path)).shape == (0,) == torch.from_file(str(path)).shape
    private = minigrad.from_file(str(path), size=2)
    private[0] = 9.0  # (a private mapping: the file keeps its numbers)
    assert np.fromfile(path, np.float32)[0] == 0.0
    shared = minigrad.from_file(str(path), True, 2)
    shared[0] = 9.0
    del shared
    assert np.fromfile(path, np.float32)[0] == 9.0
    assert _error(lambda: minigrad.from_file(str(path), size=7)) == _error(lambda: torch.from_file(str(path), size=7))
    missing = str(tmp_path / "none")
    assert _error(lambda: minigrad.from_file(missing, size=2)) == _error(lambda: torch.from_file(missing, size=2))
    grown = str(tmp_path / "new.bin")
    assert minigrad.from_file(grown, True, 4).tolist() == [0.0] * 4
    assert (tmp_path / "new.bin").stat().st_size == 16


# --- sym_*


@pytest.mark.parametrize("call", [
    ("sym_int", (3.7,)), ("sym_int", (-3.7,)), ("sym_int", (True,)), ("sym_int", (math.inf,)), ("sym_float", (3,)),
    ("sym_float", ("2.5",)), ("sym_max", (2, 3.0)), ("sym_max", (3, 2.0)), ("sym_max", (3, 2)), ("sym_min", (2, 3.0)),
    ("sym_min", (3.5, 2.5)), ("sym_min", ("a", 1)), ("sym_not", (True,)), ("sym_not", (0,)),
    ("sym_ite", (True, 1, 2)), ("sym_ite", (False, "a", "b")), ("sym_ite", (0, 1, 2)), ("sym_ite", (True, 1, 2.0)),
    ("sym_sqrt", (4,)), ("sym_sqrt", (-1.0,)), ("sym_sum", ([1, 2, 3],)), ("sym_sum", (1, 2.5)), ("sym_sum", ([],)),
    ("sym_constrain_range", (3,)), ("sym_constrain_range_for_size", (-1,)),
], ids=lambda c: f"{c[0]}{c[1]}")
def test_sym_helpers_on_plain_numbers_are_torchs(call):
    name, args = call

    def run(lib):
        try:
            r = getattr(lib, name)(*args)
            return type(r), r
        except Exception as e:
            return type(e), str(e)

    assert run(minigrad) == run(torch)


def test_sym_constrain_range_refuses_as_torchs():
    for kwargs in ({"max": 2}, {"min": 4, "max": 5}):
        assert _error(lambda kw=kwargs: minigrad.sym_constrain_range(3, **kw)) == \
            _error(lambda kw=kwargs: torch.sym_constrain_range(3, **kw))
    assert _error(lambda: minigrad.sym_constrain_range_for_size(3, max=2)) == \
        _error(lambda: torch.sym_constrain_range_for_size(3, max=2))


# --- storages


@pytest.mark.filterwarnings("ignore:TypedStorage is deprecated")
@pytest.mark.parametrize("name", ["float32", "int64", "bool", "uint8", "float16", "float64"])
def test_storage_type_and_storage_classes_are_torchs(name):
    t, m = torch.ones(2, dtype=getattr(torch, name)), minigrad.ones(2, dtype=getattr(minigrad, name))
    assert m.storage_type().__name__ == t.storage_type().__name__
    assert m.storage_type() is getattr(minigrad, t.storage_type().__name__)
    assert isinstance(m.storage(), m.storage_type()) and isinstance(t.storage(), t.storage_type())
    assert not isinstance(m.storage(), minigrad.CharStorage) and not isinstance(t.storage(), torch.CharStorage)
    assert isinstance(m.storage(), minigrad.TypedStorage) and isinstance(m.untyped_storage(), minigrad.UntypedStorage)


def test_storages_made_from_a_size_are_torchs():
    assert minigrad.UntypedStorage(4).nbytes() == torch.UntypedStorage(4).nbytes()
    ours, theirs = minigrad.TypedStorage(3, dtype=minigrad.int64), torch.TypedStorage(3, dtype=torch.int64)
    assert (ours.size(), repr(ours.dtype)) == (theirs.size(), repr(theirs.dtype).replace("torch", "minigrad"))
    assert minigrad.TypedStorage([1.0, 2.0], dtype=minigrad.float32).tolist() == \
        torch.TypedStorage([1.0, 2.0], dtype=torch.float32).tolist()
    assert not hasattr(minigrad, "NopeStorage") and not hasattr(torch, "NopeStorage")
