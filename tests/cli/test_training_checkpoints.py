"""Training checkpoints open as the model's weights, named as the model expects: a Lightning
``.ckpt`` showed optimizer state first, flagged and cast it, and wrote ``state_dict.model.*``
names. ``--keep-all`` keeps everything; what was left out is said and reported."""

from __future__ import annotations

import json

import pytest

from inspector.cli.dispatch import main
from inspector.core.opening import open_checkpoint
from inspector.core.training_layout import TrainingKind

torch = pytest.importorskip("torch")


def _model():
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 2))


def _optimizer_state(model) -> dict:
    opt = torch.optim.Adam(model.parameters())
    model(torch.randn(3, 4)).sum().backward()
    opt.step()
    return opt.state_dict()


def _lightning(path) -> dict:
    model = _model()
    sd = {f"model.{k}": v for k, v in model.state_dict().items()}
    torch.save(
        {
            "epoch": 3,
            "global_step": 120,
            "pytorch-lightning_version": "2.5.0",
            "state_dict": sd,
            "optimizer_states": [_optimizer_state(model)],
            "lr_schedulers": [],
            "hyper_parameters": {"lr": 1e-3},
        },
        path,
    )
    return sd


def _run(capsys, *argv):
    code = main([str(a) for a in argv])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_a_lightning_ckpt_opens_as_its_model(tmp_path, capsys):
    sd = _lightning(tmp_path / "last.ckpt")
    with open_checkpoint(tmp_path / "last.ckpt") as ckpt:
        assert [t.name for t in ckpt.tensors] == list(sd)  # model.0.weight, ...
        assert ckpt.training.kind is TrainingKind.LIGHTNING
        assert (
            ckpt.training.prefix == "state_dict." and ckpt.training.left_tensors == 12
        )  # Adam: exp_avg, exp_avg_sq, step x 4
        assert ckpt.view("model.0.weight").tolist() == sd["model.0.weight"].tolist()
    code, out, err = _run(capsys, "list", tmp_path / "last.ckpt", "--json")
    doc = json.loads(out)
    assert code == 0 and doc["tensors"][0]["name"].startswith("model.")
    assert not any("exp_avg" in t["name"] for t in doc["tensors"])
    assert doc["training"]["kind"] == "Lightning" and doc["training"]["tensors"] == 12
    assert "Lightning checkpoint" in err and "--keep-all" in err
    code, out, _ = _run(capsys, "list", tmp_path / "last.ckpt", "--json", "--keep-all")
    names = [t["name"] for t in json.loads(out)["tensors"]]
    assert "state_dict.model.0.weight" in names and any("exp_avg" in n for n in names)


def test_a_cast_of_a_lightning_ckpt_writes_what_load_state_dict_takes(tmp_path, capsys):
    sd = _lightning(tmp_path / "last.ckpt")
    out_path, report = tmp_path / "model.safetensors", tmp_path / "r.json"
    code, out, err = _run(
        capsys, "cast", tmp_path / "last.ckpt", "--target", "F16", "-o", out_path,
        "--report", report,
    )  # fmt: skip
    assert code == 0, err
    assert "12 other tensors" in out and "left out" in out
    from safetensors.torch import load_file

    written = load_file(out_path)
    assert list(written) == list(sd)  # state_dict.* prefix gone, no optimizer state
    model = _model().half()
    model.load_state_dict({k[len("model.") :]: v for k, v in written.items()})
    training = json.loads(report.read_text())["training"]
    assert training == {
        "kind": "Lightning",
        "prefix_removed": "state_dict.",
        "tensors": 12,
        "values": training["values"],
    }


def test_a_training_loop_checkpoint_and_ddp_prefix(tmp_path):
    model = _model()
    ddp = {f"module.{k}": v for k, v in model.state_dict().items()}
    torch.save({"model": ddp, "optimizer": _optimizer_state(model), "epoch": 2}, tmp_path / "c.pt")
    with open_checkpoint(tmp_path / "c.pt") as ckpt:
        assert [t.name for t in ckpt.tensors] == list(model.state_dict())
        assert ckpt.training.prefix == "model.module."
        assert ckpt.training.kind is TrainingKind.TRAINING_LOOP
    torch.save(ddp, tmp_path / "ddp.pt")  # a bare DDP state_dict
    with open_checkpoint(tmp_path / "ddp.pt") as ckpt:
        assert [t.name for t in ckpt.tensors] == list(model.state_dict())
        assert ckpt.training.kind is TrainingKind.DDP


def test_a_plain_state_dict_is_shown_as_it_is(tmp_path):
    model = _model()
    torch.save(model.state_dict(), tmp_path / "m.pt")
    torch.save({"model": model.state_dict()}, tmp_path / "wrapped.pt")  # no training marks
    for name in ("m.pt", "wrapped.pt"):
        with open_checkpoint(tmp_path / name) as ckpt:
            assert ckpt.training is None
