"""The progress of a dequantizing cast keeps the contract every job keeps (it never goes back
and ends exactly at its total), inside a quantized weight too: its bar moves by each block of
rows' share of the weight's stored bytes, codes and scales. Found by a mutant: with the
weight last in the file, the bar stopped short of its total (66,536 of 66,552 bytes)."""

from __future__ import annotations

import ml_dtypes
import numpy as np

from inspector.core.cast.job import cast_checkpoint
from inspector.core.dtypes import DTYPES
from inspector.core.opening import open_checkpoint
from inspector.core.progress import Progress, run_job
from inspector.core.save.writer import save_arrays
from tests.quant_folders import ct_config, deepseek_folder, folder

F32, BF16, F8 = DTYPES["F32"], DTYPES["BF16"], DTYPES["F8_E4M3"]
WEIGHT = "model.layers.0.mlp.up_proj.weight"


def _progress(src, out) -> list[Progress]:
    seen: list[Progress] = []
    with open_checkpoint(str(src)) as ckpt:
        run_job(cast_checkpoint(ckpt, BF16, str(out), chunk_bytes=8192), seen.append)
    done = [p.done for p in seen]
    assert done == sorted(done) and seen[-1].done == seen[-1].total  # the contract
    return seen


def test_the_bar_moves_through_a_weight_by_its_rows_from_where_the_last_tensor_left_it(tmp_path):
    made = deepseek_folder(tmp_path / "one")
    src = tmp_path / "bias_first"
    src.mkdir()
    save_arrays(src / "model.safetensors", [
        ("a.bias", BF16, np.ones(500, ml_dtypes.bfloat16)),  # 1,000 bytes before the weight
        (WEIGHT, F8, made["codes"]), (WEIGHT + "_scale_inv", F32, made["scale"]),
    ])  # fmt: skip
    (src / "config.json").write_text((tmp_path / "one" / "config.json").read_text())
    seen = _progress(src, tmp_path / "plain")
    inside = [p.done for p in seen if p.name == WEIGHT]
    stored = made["codes"].nbytes + made["scale"].nbytes  # 65,536 + 16
    assert len(inside) >= 4 and all(type(d) is int for d in inside)
    assert inside == sorted(set(inside)) and inside[0] > 1000
    rows = made["codes"].shape[0]
    steps = [1000 + stored * r // rows for r in range(rows + 1)]
    assert set(inside) <= set(steps) and inside[-1] == 1000 + stored == seen[-1].total


def test_a_weight_of_no_rows_counts_its_scale_and_ends_the_bar(tmp_path):
    """A [0, 4] weight with a per-tensor scale: no block of rows to read, 4 bytes of scale."""
    weights = {"num_bits": 8, "type": "float", "strategy": "tensor"}
    qc = ct_config("float-quantized", weights)
    src = folder(tmp_path / "q", [
        ("a.bias", BF16, np.ones(8, ml_dtypes.bfloat16)),
        (WEIGHT, F8, np.zeros((0, 4), ml_dtypes.float8_e4m3fn)),
        (WEIGHT + "_scale", F32, np.ones(1, np.float32)),
    ], qc)  # fmt: skip
    seen = _progress(src, tmp_path / "plain")
    assert seen[-1] == Progress(20, 20, WEIGHT)


def test_a_weight_of_one_row_ends_the_bar(tmp_path):
    """A [1, 64] weight last in its file: one block of one row is the whole weight."""
    weights = {"num_bits": 8, "type": "float", "strategy": "tensor"}
    src = folder(tmp_path / "q", [
        ("a.bias", BF16, np.ones(8, ml_dtypes.bfloat16)),
        (WEIGHT, F8, np.ones((1, 64), ml_dtypes.float8_e4m3fn)),
        (WEIGHT + "_scale", F32, np.ones(1, np.float32)),
    ], ct_config("float-quantized", weights))  # fmt: skip
    seen = _progress(src, tmp_path / "plain")
    assert [p.done for p in seen if p.name == WEIGHT] == [16 + 64 + 4]
    assert seen[-1] == Progress(84, 84, WEIGHT)
