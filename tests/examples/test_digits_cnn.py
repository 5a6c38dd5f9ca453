"""examples/digits_cnn.py, shortened: the CNN learns scikit-learn's digits (skipped without scikit-learn)."""
import importlib.util
from pathlib import Path

import pytest

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "digits_cnn.py"


def load_example():
    spec = importlib.util.spec_from_file_location("digits_cnn", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_two_epochs_learn_the_digits():
    pytest.importorskip("sklearn")
    ex = load_example()
    lines = []
    model, acc, losses = ex.train(epochs=2, log=lines.append)
    assert len(lines) == 2 and "test accuracy" in lines[0]
    assert losses[1] < losses[0] < 2.3  # below chance's log(10) from the first epoch on, and falling
    assert acc > 0.93  # (the full 12 epochs reach ~0.99)
    assert model.training  # accuracy() evaluates in eval mode and switches back
    assert model.features[1].num_batches_tracked.item() == 2 * 45  # 1,437 training images in batches of 32


def test_cli_rejects_bad_arguments(capsys):
    pytest.importorskip("sklearn")
    ex = load_example()
    with pytest.raises(SystemExit) as e:
        ex.main(["--batch-size", "0"])
    assert e.value.code == 2
    assert "--batch-size" in capsys.readouterr().err
