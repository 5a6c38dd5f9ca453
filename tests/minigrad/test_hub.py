"""minigrad.hub against torch.hub: the cache directory, weights from the cache (never the network, never code from
the file), and models from a local hubconf.py."""
import os

import numpy as np
import pytest

import minigrad

torch = pytest.importorskip("torch")


@pytest.fixture
def hub_dirs(tmp_path, monkeypatch):
    monkeypatch.setenv("TORCH_HOME", str(tmp_path / "home"))
    yield tmp_path
    minigrad.hub._hub_dir = None
    torch.hub._hub_dir = None


def test_get_dir_and_set_dir_match_torch(hub_dirs, monkeypatch):
    assert minigrad.hub.get_dir() == torch.hub.get_dir() == str(hub_dirs / "home" / "hub")
    monkeypatch.delenv("TORCH_HOME")
    monkeypatch.setenv("XDG_CACHE_HOME", str(hub_dirs / "xdg"))
    assert minigrad.hub.get_dir() == torch.hub.get_dir()
    minigrad.hub.set_dir(hub_dirs / "mine")
    torch.hub.set_dir(hub_dirs / "mine")
    assert minigrad.hub.get_dir() == torch.hub.get_dir()


def test_load_state_dict_from_url_reads_the_cache_torch_wrote(hub_dirs):
    url = "https://download.pytorch.org/models/tiny-0123abcd.pth"
    state = {"weight": torch.randn(3, 2), "bias": torch.arange(3.0)}
    os.makedirs(os.path.join(torch.hub.get_dir(), "checkpoints"))
    torch.save(state, os.path.join(torch.hub.get_dir(), "checkpoints", "tiny-0123abcd.pth"))
    expected = torch.hub.load_state_dict_from_url(url, weights_only=True)  # (finds it: no download)
    got = minigrad.hub.load_state_dict_from_url(url)
    assert list(got) == list(expected)
    for k in expected:
        np.testing.assert_array_equal(got[k].numpy(), expected[k].numpy())
    renamed = minigrad.hub.load_state_dict_from_url("https://x/other.pth", model_dir=os.path.dirname(
        os.path.join(torch.hub.get_dir(), "checkpoints", "tiny-0123abcd.pth")), file_name="tiny-0123abcd.pth")
    assert list(renamed) == ["weight", "bias"]


def test_missing_file_is_one_line_naming_where_to_put_it(hub_dirs):
    url = "https://download.pytorch.org/models/absent-0123abcd.pth"
    with pytest.raises(RuntimeError) as info:
        minigrad.hub.load_state_dict_from_url(url)
    where = os.path.join(minigrad.hub.get_dir(), "checkpoints", "absent-0123abcd.pth")
    assert "no network access" in str(info.value) and where in str(info.value) and "\n" not in str(info.value)


def test_a_pickle_that_runs_code_is_refused(hub_dirs):
    class Evil:
        def __reduce__(self):
            return (os.system, ("echo pwned",))

    folder = os.path.join(minigrad.hub.get_dir(), "checkpoints")
    os.makedirs(folder)
    torch.save({"x": Evil()}, os.path.join(folder, "evil.pth"))
    with pytest.raises(Exception, match="system"):
        minigrad.hub.load_state_dict_from_url("https://x/evil.pth", weights_only=False)


def test_download_url_to_file_copies_file_urls_and_checks_the_hash(hub_dirs):
    src = hub_dirs / "src.bin"
    src.write_bytes(b"minigrad")
    for lib in (torch, minigrad):
        lib.hub.download_url_to_file(src.as_uri(), str(hub_dirs / f"{lib.__name__}.bin"), progress=False)
        assert (hub_dirs / f"{lib.__name__}.bin").read_bytes() == b"minigrad"
    errors = []
    for lib in (torch, minigrad):
        with pytest.raises(RuntimeError) as info:
            lib.hub.download_url_to_file(src.as_uri(), str(hub_dirs / "bad.bin"), hash_prefix="ffff", progress=False)
        errors.append(str(info.value))
    assert errors[0] == errors[1]


def test_local_hubconf_list_help_load_match_torch(hub_dirs):
    repo = hub_dirs / "repo"
    repo.mkdir()
    (repo / "hubconf.py").write_text('dependencies = []\n\ndef double(x=2):\n    """Twice x."""\n    return 2 * x\n\n'
                                     'def _private():\n    pass\n')
    # (PyTorch's list and help read GitHub repos only; minigrad's read a directory, the only source it can)
    assert minigrad.hub.list(str(repo)) == ["double"]
    assert minigrad.hub.help(str(repo), "double") == "Twice x."
    assert minigrad.hub.load(str(repo), "double", 5, source="local") == torch.hub.load(str(repo), "double", 5,
                                                                                        source="local") == 10
    with pytest.raises(RuntimeError, match="no network access"):
        minigrad.hub.list("pytorch/vision")
    for model, source in (("nothing", "local"), (3, "local"), ("double", "ftp")):
        with pytest.raises(Exception) as want:
            torch.hub.load(str(repo), model, source=source)
        with pytest.raises(type(want.value)) as got:
            minigrad.hub.load(str(repo), model, source=source)
        assert str(got.value) == str(want.value)
