"""diff of a burn-layout Burnpack against the PyTorch checkpoint it came from: compared as
burn-store's PyTorchToBurnAdapter maps them (norms renamed, Linear weights transposed)."""

from __future__ import annotations

import numpy as np
import torch

from inspector.core.diff import diff_checkpoints
from inspector.core.opening import open_checkpoint
from inspector.core.progress import run_job
from inspector.core.status import DiffStatus
from tests.burnpack_files import plain, write_burnpack


class Net(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc1 = torch.nn.Linear(5, 3)
        self.sq = torch.nn.Linear(4, 4, bias=False)  # square: shapes cannot tell
        self.norm = torch.nn.LayerNorm(3)
        self.emb = torch.nn.Embedding(6, 3)  # not a Linear: burn keeps it as it is


def burn_export(sd: dict[str, torch.Tensor]) -> list:
    """What burn saves for this model: PyTorchToBurnAdapter's renames and transposes."""
    out = []
    for name, t in sd.items():
        a = t.detach().numpy()
        if name in ("fc1.weight", "sq.weight"):
            a = np.ascontiguousarray(a.T)
        name = {"norm.weight": "norm.gamma", "norm.bias": "norm.beta"}.get(name, name)
        out.append(plain(name, a))
    return out


def test_a_burn_export_equals_its_pytorch_original(tmp_path):
    torch.manual_seed(0)
    sd = Net().state_dict()
    torch.save(sd, tmp_path / "net.pt")
    write_burnpack(tmp_path / "net.bpk", burn_export(sd), {"producer": "burn"})
    with open_checkpoint(tmp_path / "net.bpk") as a, open_checkpoint(tmp_path / "net.pt") as b:
        diffs = {d.name: d for d in run_job(diff_checkpoints(a, b))}
    assert {n: d.status for n, d in diffs.items()} == {
        n: DiffStatus.EQUAL
        for n in ("fc1.weight", "fc1.bias", "sq.weight", "norm.gamma", "norm.beta", "emb.weight")
    }
    assert diffs["fc1.weight"].transposed and diffs["sq.weight"].transposed
    assert not diffs["emb.weight"].transposed and not diffs["fc1.bias"].transposed
    assert diffs["norm.gamma"].name_b == "norm.weight"
    assert diffs["norm.gamma"].to_json()["name_b"] == "norm.weight"
    # and the other way round: PyTorch's names on the A side
    with open_checkpoint(tmp_path / "net.pt") as a, open_checkpoint(tmp_path / "net.bpk") as b:
        back = {d.name: d for d in run_job(diff_checkpoints(a, b))}
    assert all(d.status is DiffStatus.EQUAL for d in back.values()) and len(back) == 6
    assert back["norm.weight"].name_b == "norm.gamma" and back["fc1.weight"].transposed


def test_a_real_difference_is_still_found_through_the_transpose(tmp_path):
    torch.manual_seed(0)
    sd = Net().state_dict()
    torch.save(sd, tmp_path / "net.pt")
    tensors = burn_export(sd)
    fc1 = next(t for t in tensors if t.name == "fc1.weight")
    a = np.frombuffer(fc1.data, np.float32).reshape(5, 3).copy()
    a[4, 2] += 0.5  # burn [in, out]: PyTorch's weight[2, 4]
    fc1.data = a.tobytes()
    write_burnpack(tmp_path / "net.bpk", tensors, {"producer": "burn"})
    with open_checkpoint(tmp_path / "net.bpk") as x, open_checkpoint(tmp_path / "net.pt") as y:
        d = {d.name: d for d in run_job(diff_checkpoints(x, y))}["fc1.weight"]
    assert d.status is DiffStatus.DIFFER and d.transposed
    assert (
        d.max_abs_diff == np.float32(a[4, 2]) - np.float32(a[4, 2] - 0.5)
        or abs(d.max_abs_diff - 0.5) < 1e-6
    )


def test_two_pytorch_layouts_are_compared_by_name_as_before(tmp_path):
    torch.manual_seed(0)
    sd = Net().state_dict()
    torch.save(sd, tmp_path / "a.pt")
    moved = {k: v.T.contiguous() if k == "fc1.weight" else v for k, v in sd.items()}
    torch.save(moved, tmp_path / "b.pt")
    with open_checkpoint(tmp_path / "a.pt") as a, open_checkpoint(tmp_path / "b.pt") as b:
        d = {d.name: d for d in run_job(diff_checkpoints(a, b))}
    assert d["fc1.weight"].status is DiffStatus.SHAPE_MISMATCH and not d["fc1.weight"].transposed
