"""A PyTorch pickle in the window: dropped, listed, its imports and plain values in the Pickle tab;
a malicious one is refused with its imports named, the window keeps what it showed, nothing runs."""

from __future__ import annotations

import os
import pickle

import pytest

from .test_window import drop

torch = pytest.importorskip("torch")


class _TouchCanary:
    def __init__(self, path):
        self.path = path

    def __reduce__(self):
        return (os.system, (f"touch {self.path}",))


def test_dropped_pickle_lists_tensors_imports_and_values(qtbot, loaded, tmp_path):
    path = tmp_path / "last.ckpt"
    sd = {"fc.weight": torch.randn(4, 3, dtype=torch.float64).t(), "fc.bias": torch.zeros(4)}
    torch.save({"state_dict": sd, "epoch": 12}, path)
    with qtbot.waitSignal(loaded.loaded, timeout=20_000):
        drop(loaded, [path])
    assert loaded.model.rowCount() == 2
    tabs = loaded.tensor_page.plots_tabs
    assert tabs.isTabVisible(tabs.indexOf(tabs.pickle_panel))
    tree = tabs.pickle_panel.tree
    imports = tree.topLevelItem(0)
    names = {imports.child(i).text(0) for i in range(imports.childCount())}
    assert names == {
        "collections.OrderedDict",  # torch pickles each tensor's (empty) backward hooks
        "torch._utils._rebuild_tensor_v2",
        "torch.DoubleStorage",
        "torch.FloatStorage",
    }
    values = tree.topLevelItem(1)
    assert (values.child(0).text(0), values.child(0).text(1)) == ("epoch", "12")


def test_malicious_pickle_is_refused_and_the_window_keeps_its_file(qtbot, loaded, tmp_path):
    canary = tmp_path / "CANARY"
    path = tmp_path / "pytorch_model.bin"
    path.write_bytes(pickle.dumps({"w": _TouchCanary(canary)}))
    before = (loaded.ckpt.path, loaded.model.rowCount(), loaded.windowTitle())
    with qtbot.waitSignal(loaded.load_failed, timeout=20_000) as blocker:
        drop(loaded, [path])
    assert "pickle imports posix.system" in blocker.args[0]
    assert "nothing was executed" in blocker.args[0]
    assert (loaded.ckpt.path, loaded.model.rowCount(), loaded.windowTitle()) == before
    tabs = loaded.tensor_page.plots_tabs
    assert not tabs.isTabVisible(tabs.indexOf(tabs.pickle_panel))  # the safetensors file's tabs
    assert not canary.exists()


def test_a_lightning_checkpoint_shows_its_model_and_everything_one_click_away(
    qtbot, window, tmp_path
):
    torch.manual_seed(0)
    model = torch.nn.Linear(4, 2)
    opt = torch.optim.Adam(model.parameters())
    model(torch.randn(3, 4)).sum().backward()
    opt.step()
    path = tmp_path / "last.ckpt"
    torch.save(
        {
            "state_dict": {f"model.{k}": v for k, v in model.state_dict().items()},
            "optimizer_states": [opt.state_dict()],
            "epoch": 1,
        },
        path,
    )
    with qtbot.waitSignal(window.loaded, timeout=20_000):
        window.open_path(str(path))
    m = window.model
    assert {m.tensor_at(r).name for r in range(m.rowCount())} == {"model.weight", "model.bias"}
    bar = window.message_bar
    assert bar.isVisible() and "Lightning checkpoint" in bar.text
    with qtbot.waitSignal(window.loaded, timeout=20_000):
        bar.action.click()
    names = {m.tensor_at(r).name for r in range(m.rowCount())}
    assert "state_dict.model.weight" in names and any("exp_avg" in n for n in names)


def test_unknown_objects_open_as_placeholders_named_in_the_message_and_the_tab(
    qtbot, window, tmp_path
):
    from tests.unknown_objects_ckpt import UNKNOWN, make_checkpoint

    made = make_checkpoint(tmp_path)
    with qtbot.waitSignal(window.loaded, timeout=20_000):
        window.open_path(str(made.path))
    m = window.model
    assert {m.tensor_at(r).name for r in range(m.rowCount())} == set(made.state_dict)
    bar = window.message_bar
    assert bar.isVisible() and bar.kind == "warning"
    assert "Lightning checkpoint" in bar.text  # still one click from everything
    assert (
        f"Unknown objects not executed: {', '.join(UNKNOWN[:5])} (+{len(UNKNOWN) - 5})" in bar.text
    )
    assert "2 tensors whose rebuild needs them were not read." in bar.text
    panel = window.tensor_page.plots_tabs.pickle_panel
    assert f"It imports {len(UNKNOWN)} unknown objects" in panel.caption.text()
    imports = panel.tree.topLevelItem(0)
    verdicts = {
        imports.child(i).text(0): imports.child(i).text(1) for i in range(imports.childCount())
    }
    assert {n: verdicts[n] for n in UNKNOWN} == dict.fromkeys(UNKNOWN, "unknown, not executed")
    assert verdicts["torch.FloatStorage"] == "torch tensor machinery"
    assert not made.canary.exists()


def test_a_plain_pickle_says_it_imports_only_the_allowlist(qtbot, window, tmp_path):
    path = tmp_path / "plain.pt"
    torch.save({"w": torch.ones(2)}, path)
    with qtbot.waitSignal(window.loaded, timeout=20_000):
        window.open_path(str(path))
    panel = window.tensor_page.plots_tabs.pickle_panel
    assert "It imports only torch's tensor machinery and plain containers." in panel.caption.text()
    assert not window.message_bar.isVisible()
