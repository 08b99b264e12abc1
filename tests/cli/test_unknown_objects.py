"""The commands on a checkpoint whose pickle names unknown classes (omegaconf hyper-parameters,
a class of the training code): ``list``, ``check`` and ``cast`` read its allowlisted tensors and
say what was not executed, ``list --json`` carries ``unknown_imports``, ``scan`` still calls the
file unsafe for torch, ``lint`` reports it as a finding."""

from __future__ import annotations

import json

import pytest

from inspector.cli.dispatch import main
from tests.unknown_objects_ckpt import UNKNOWN, UNREAD, make_checkpoint

torch = pytest.importorskip("torch")
load_file = pytest.importorskip("safetensors.torch").load_file

NOTE = (
    f"unknown objects not executed: {', '.join(UNKNOWN[:5])} and {len(UNKNOWN) - 5} more (kept "
    "as inert placeholders; torch.load(weights_only=True) refuses this file: see "
    "checkpoint-inspector scan)"
)


@pytest.fixture
def made(tmp_path):
    return make_checkpoint(tmp_path)


def test_list_reads_the_model_and_notes_what_was_not_executed(made, capsys):
    assert main(["list", str(made.path)]) == 0
    out, err = capsys.readouterr()
    assert f"checkpoint-inspector: note: {made.path}: {NOTE}\n" in err
    assert (
        f"checkpoint-inspector: note: {made.path}: 2 tensors not read, their rebuild needs an "
        "unknown object: state_dict.head.scaled, state_dict.head.packed\n"
    ) in err
    assert "0 of 5 tensors differ" not in out and "2 of 5 tensors differ from F32" in out
    assert (
        "  hyper_parameters = omegaconf.dictconfig.DictConfig object, not built (unknown code, "
        "not executed)\n"
    ) in out
    assert (
        "  state_dict.head.packed = tensor not read: its rebuild needs lab_hparams.rebuild_packed, "
        "which was not executed; left out of cast\n"
    ) in out
    assert not made.canary.exists()


def test_list_json_keeps_its_keys_and_adds_the_unknown_imports(made, capsys):
    assert main(["list", str(made.path), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["unknown_imports"] == UNKNOWN
    assert {"tensors", "metadata", "target", "values"} <= set(doc)
    rows = {r["name"]: r for r in doc["tensors"]}
    assert set(rows) == set(made.state_dict)
    assert rows["encoder.bias"]["dtype"] == "BF16" and rows["encoder.bias"]["shape"] == [6]
    values = {v["name"]: v["value"] for v in doc["values"]}
    assert values["state_dict.head.scaled"].startswith("tensor not read: its rebuild needs")


def test_check_and_scan_and_lint(made, capsys):
    assert main(["check", str(made.path), "--target", "F32"]) == 1  # BF16, F16 differ
    assert NOTE in capsys.readouterr().err
    assert main(["scan", str(made.path), "--json"]) == 1  # the verdict for torch is unchanged
    scan = json.loads(capsys.readouterr().out)
    assert scan["files"][0]["status"] == "refused"
    refused = {i["name"] for i in scan["files"][0]["imports"] if i["verdict"] == "refused"}
    assert refused == set(UNKNOWN)
    assert main(["lint", str(made.path), "--json"]) == 1
    findings = json.loads(capsys.readouterr().out)["findings"]
    [found] = [f for f in findings if f["code"] == "weights_unknown_objects"]
    assert found["severity"] == "warning" and found["files"] == ["model.ckpt"]
    assert found["tensors"] == list(UNREAD)
    assert found["message"].startswith(
        f"model.ckpt imports {', '.join(UNKNOWN[:5])} (+{len(UNKNOWN) - 5}), kept as inert "
        "placeholders here (nothing was run)"
    )
    assert not made.canary.exists()


def test_cast_writes_the_model_as_torch_would_cast_it_and_reports_the_unread(made, capsys):
    out, report = made.path.parent / "m.safetensors", made.path.parent / "r.json"
    assert main(["cast", str(made.path), "--target", "BF16", "-o", str(out), "--report", str(report)]) == 0  # fmt: skip
    capsys.readouterr()
    written = load_file(out)
    assert set(written) == set(made.state_dict)
    for name, t in made.state_dict.items():
        want = t.to(torch.bfloat16) if t.is_floating_point() else t
        assert torch.equal(written[name], want.contiguous()), name
        assert written[name].dtype == want.dtype
    left = {e["name"]: e["why"] for e in json.loads(report.read_text())["left_out"]}
    assert set(left) == set(UNREAD)
    assert not made.canary.exists()
