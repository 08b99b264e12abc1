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


def _burn_and_torch(tmp_path, burn: dict[str, np.ndarray], torch_side: dict[str, np.ndarray]):
    """A burn-layout safetensors file (burn's ``producer`` metadata: no Burnpack needed) and a
    PyTorch one: the metadata alone tells the layouts apart."""
    from safetensors.numpy import save_file

    save_file(burn, str(tmp_path / "burn.safetensors"), metadata={"producer": "burn"})
    save_file(torch_side, str(tmp_path / "torch.safetensors"))
    return tmp_path / "burn.safetensors", tmp_path / "torch.safetensors"


def _diff_with_progress(path_a, path_b):
    with open_checkpoint(path_a) as a, open_checkpoint(path_b) as b:
        job, seen = diff_checkpoints(a, b), []
        while True:
            try:
                p = next(job)
            except StopIteration as stop:
                return {d.name: d for d in stop.value}, seen
            seen.append((p.done, p.total, p.name))


def test_a_square_weight_that_differs_as_stored_is_also_read_transposed(tmp_path):
    """[[0, 1], [0, 0]] against its transpose differs by exactly 1 as stored: the transposed
    reading (equal) is kept, whichever side is burn's, with one more progress step for it.
    Mutation testing: a second reading skipped when the first differed by 1, and its progress
    steps emptied, went unnoticed; so did a producer tag read from nowhere."""
    w = np.array([[0.0, 1.0], [0.0, 0.0]], np.float32)
    burn, torch_file = _burn_and_torch(tmp_path, {"sq.weight": w}, {"sq.weight": w.T.copy()})
    for a, b in ((burn, torch_file), (torch_file, burn)):
        diffs, seen = _diff_with_progress(a, b)
        d = diffs["sq.weight"]
        assert (d.status, d.max_abs_diff, d.transposed) == (DiffStatus.EQUAL, 0.0, True)
        assert d.to_json()["transposed"] is True
        assert seen == [(0, 16, ""), (16, 16, "sq.weight"), (16, 16, "sq.weight"), (16, 16, "")]


def test_a_square_weight_as_far_off_both_ways_is_compared_as_stored(tmp_path):
    """The transposed reading is kept only when it is closer: a tie keeps the stored one."""
    z = np.zeros((2, 2), np.float32)
    one = np.array([[1.0, 0.0], [0.0, 0.0]], np.float32)  # its own transpose
    burn, torch_file = _burn_and_torch(tmp_path, {"sq.weight": z}, {"sq.weight": one})
    d = _diff_with_progress(burn, torch_file)[0]["sq.weight"]
    assert (d.status, d.max_abs_diff, d.transposed) == (DiffStatus.DIFFER, 1.0, False)
    assert "transposed" not in d.to_json()


def test_a_non_square_weight_of_the_same_shape_is_compared_as_stored_only(tmp_path):
    """Equal non-square shapes are not burn's transposed Linear: no transposed reading, even
    when it would match (B's [[1, 2, 3], [4, 5, 6]] read transposed is A's values)."""
    a = np.array([[1.0, 4.0, 2.0], [5.0, 3.0, 6.0]], np.float32)
    b = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], np.float32)
    burn, torch_file = _burn_and_torch(tmp_path, {"e.weight": a}, {"e.weight": b})
    d = _diff_with_progress(burn, torch_file)[0]["e.weight"]
    assert (d.status, d.max_abs_diff, d.transposed) == (DiffStatus.DIFFER, 2.0, False)


def test_a_transposed_weight_read_in_small_chunks_covers_every_row_once(tmp_path, monkeypatch):
    """B's weight is read transposed a block of rows at a time (2 rows of 3 for 8 values): each
    block once, in order, to the last."""
    from inspector.core import diff as diff_mod

    monkeypatch.setattr(diff_mod, "_CHUNK_ELEMS", 8)
    w = np.arange(18, dtype=np.float32).reshape(3, 6)  # PyTorch [out, in]
    burn, torch_file = _burn_and_torch(tmp_path, {"fc.weight": w.T.copy()}, {"fc.weight": w})
    d = _diff_with_progress(burn, torch_file)[0]["fc.weight"]
    assert (d.status, d.max_abs_diff, d.transposed) == (DiffStatus.EQUAL, 0.0, True)
    moved = w.T.copy()
    moved[5, 2] = 100.0  # the last value read
    burn, torch_file = _burn_and_torch(tmp_path, {"fc.weight": moved}, {"fc.weight": w})
    d = _diff_with_progress(burn, torch_file)[0]["fc.weight"]
    assert (d.status, d.max_abs_diff, d.transposed) == (DiffStatus.DIFFER, 83.0, True)
