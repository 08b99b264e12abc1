"""A model folder in the window: the config's dtype offered first in the chooser and chosen, the
config-vs-weights line in the hint, norms marked "F32 on purpose?" instead of plain "differs"."""

from __future__ import annotations

import json
import os

import pytest

from inspector.gui.tensor_columns import Col

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")


@pytest.fixture
def folder(tmp_path):
    cfg = transformers.LlamaConfig(
        vocab_size=64,
        hidden_size=16,
        intermediate_size=32,
        num_hidden_layers=1,
        num_attention_heads=2,
        num_key_value_heads=1,
        max_position_embeddings=32,
    )
    out = tmp_path / "m"
    transformers.LlamaForCausalLM(cfg).save_pretrained(out)  # F32 weights
    config = json.loads((out / "config.json").read_text())
    config["dtype"] = "bfloat16"  # ...under a bfloat16 config
    (out / "config.json").write_text(json.dumps(config))
    return out


def test_config_dtype_is_offered_chosen_and_explained(qtbot, window, folder):
    with qtbot.waitSignal(window.loaded, timeout=20_000):
        window.open_path(str(folder))
    box = window.target_box
    assert box.itemText(0) == "BF16 — from config.json" and box.currentIndex() == 0
    assert window.session.target.name == "BF16"
    assert window.settings.value("target") != "BF16"  # the config's choice is not remembered
    hint = window.tensor_page.plots_tabs.hint
    assert hint.config_note.isVisibleTo(hint)
    assert "dtype = bfloat16, but 12 of 12 float tensors are F32" in hint.config_note.text()
    model = window.model
    status = {
        model.tensor_at(r).name: model.data(model.index(r, Col.STATUS))
        for r in range(model.rowCount())
    }
    assert status["model.norm.weight"] == "on purpose?"
    assert status["model.layers.0.mlp.up_proj.weight"] == "F32 → BF16"
    box.setCurrentText("F16")  # a plain choice: the config entry stays, the target follows
    assert window.session.target.name == "F16" and box.itemText(0).endswith("config.json")


def test_config_entry_leaves_with_its_checkpoint(qtbot, window, folder, tmp_path):
    import numpy as np
    from safetensors.numpy import save_file

    plain = tmp_path / "plain.safetensors"
    save_file({"w": np.zeros(3, np.float32)}, str(plain))
    with qtbot.waitSignal(window.loaded, timeout=20_000):
        window.open_path(str(folder))
    with qtbot.waitSignal(window.loaded, timeout=20_000):
        window.open_path(str(plain))
    box = window.target_box
    assert not any(box.itemText(i).endswith("config.json") for i in range(box.count()))
    # the config's BF16 belonged to the folder: the plain F32 file is judged against F32
    assert box.currentText() == "F32" == window.session.target.name
    assert "default" in box.toolTip()
    assert window.session.summary.n_differ == 0


def test_a_person_s_choice_wins_over_config_and_persists(qtbot, window, folder, tmp_path):
    import numpy as np
    from safetensors.numpy import save_file

    plain = tmp_path / "plain.safetensors"
    save_file({"w": np.zeros(3, np.float32)}, str(plain))
    window.set_target("F16")  # picked before anything is open
    with qtbot.waitSignal(window.loaded, timeout=20_000):
        window.open_path(str(folder))
    box = window.target_box
    assert window.session.target.name == "F16" == box.currentText()  # explicit wins
    assert box.itemText(0).endswith("config.json") and "your choice" in box.toolTip()
    box.setCurrentIndex(0)  # "BF16 — from config.json": back to the config's dtype
    assert window.session.target.name == "BF16" and "config.json" in box.toolTip()
    window.set_target("F16")
    window.set_target("BF16 — from config.json")  # a script names the entry by its text
    assert box.currentIndex() == 0 and "config.json" in box.toolTip()
    assert window.settings.value("target") == "F16"  # the config's choice is not remembered
    with qtbot.waitSignal(window.loaded, timeout=20_000):
        window.open_path(str(plain))
    assert window.session.target.name == "F16"  # the remembered choice, not the config's


def test_lint_tab_shows_the_findings(qtbot, window, folder):
    torch.save({"w": torch.zeros(2)}, folder / "pytorch_model.bin")  # a pickle twin
    with qtbot.waitSignal(window.loaded, timeout=20_000):
        window.open_path(str(folder) + os.sep)  # as a shell completes a folder's name
    tabs = window.tensor_page.plots_tabs
    qtbot.waitUntil(lambda: tabs.isTabVisible(tabs.indexOf(tabs.lint_panel)), timeout=20_000)
    tree = tabs.lint_panel.tree
    codes = [tree.topLevelItem(i).text(1).split(":")[0] for i in range(tree.topLevelItemCount())]
    assert codes == ["pickle_twin", "config_dtype"]
    assert tabs.tabText(tabs.indexOf(tabs.lint_panel)) == "Lint (2)"
    assert tabs.lint_panel.caption.text() == (
        f"<b>2 findings in {folder.name}</b> (as checkpoint-inspector lint)"
    )


def test_a_sharded_model_opened_by_its_index_is_linted_and_a_lone_file_is_not(
    qtbot, window, folder, monkeypatch
):
    """Opening a sharded model's index file lints its folder as opening the folder does (the
    config's dtype against the weights); one weights file opened alone is no model folder and
    gets no Lint tab. (Mutation testing: linting only unsharded files passed every test.)"""
    from safetensors.numpy import load_file, save_file

    sharded = folder.parent / "sharded"
    sharded.mkdir()
    (sharded / "config.json").write_bytes((folder / "config.json").read_bytes())
    tensors = load_file(str(folder / "model.safetensors"))
    names = sorted(tensors)
    weight_map = {}
    for i, part in enumerate((names[:6], names[6:]), start=1):
        shard = f"model-0000{i}-of-00002.safetensors"
        save_file({n: tensors[n] for n in part}, str(sharded / shard))
        weight_map.update(dict.fromkeys(part, shard))
    index = sharded / "model.safetensors.index.json"
    total = sum(t.nbytes for t in tensors.values())
    index.write_text(json.dumps({"metadata": {"total_size": total}, "weight_map": weight_map}))
    tabs = window.tensor_page.plots_tabs
    with qtbot.waitSignal(window.loaded, timeout=20_000):
        window.open_path(str(index))
    assert window.session.checkpoint.is_sharded
    qtbot.waitUntil(lambda: tabs.isTabVisible(tabs.indexOf(tabs.lint_panel)), timeout=20_000)
    tree = tabs.lint_panel.tree
    codes = [tree.topLevelItem(i).text(1).split(":")[0] for i in range(tree.topLevelItemCount())]
    assert codes == ["config_dtype"]
    assert "the index's <b>metadata</b>" in tabs.metadata_panel.caption.text()
    asked = []  # the kinds of background work asked for while the lone file opens
    request = window.runner.request
    monkeypatch.setattr(
        window.runner, "request", lambda kind, *a, **k: asked.append(kind) or request(kind, *a, **k)
    )
    with qtbot.waitSignal(window.loaded, timeout=20_000):
        window.open_path(str(folder / "model.safetensors"))
    assert "lint" not in asked and not window.session.lint
    assert not tabs.isTabVisible(tabs.indexOf(tabs.lint_panel))


def test_the_cast_dialog_starts_with_the_fix_check_suggests(qtbot, window, folder, capsys):
    """check suggests --keep-preset fp32-norms for this BF16-config folder of F32 weights; the
    window's cast dialog did not tick it, so the two fixes wrote different files."""
    from inspector.cli.dispatch import main
    from inspector.core.model_folder.intended import FP32_NORMS

    assert main(["check", str(folder)]) == 1
    assert "--keep-preset fp32-norms" in capsys.readouterr().out
    with qtbot.waitSignal(window.loaded, timeout=20_000):
        window.open_path(str(folder))
    dlg = window.open_cast_dialog()
    assert dlg.keep == FP32_NORMS
    dlg.reject()
