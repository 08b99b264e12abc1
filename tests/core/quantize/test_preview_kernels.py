"""The preview's shortcuts give what the save computes: group maxima from finer ones, a table
per 16-bit dtype instead of the F8/FP4 arithmetic, values without the packing, and the largest
|value| found on bit patterns. Each is compared with the plain computation on hostile rows."""

from __future__ import annotations

import math

import ml_dtypes
import numpy as np
import pytest

from inspector.core.dtypes import DTYPES
from inspector.core.quantize.rtn import global_scale, quantize_rows
from inspector.core.quantize.schemes import SCHEMES
from inspector.core.quantize.widened import WidenedRows

NUMPY = {"BF16": ml_dtypes.bfloat16, "F16": np.float16, "F32": np.float32}


def hostile_rows(dtype: str, rows: int = 256, cols: int = 384, seed: int = 0) -> np.ndarray:
    """N(0, 0.02) rows with what each scheme's arithmetic can trip on: a zero row, a row of
    1e-30, an outlier, an all-negative row, FP4 ties, NaN and ±inf."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((rows, cols)).astype(np.float32) * 0.02
    x[0] = 0
    x[1, :40] = 1e-30
    x[2, 5] = 6e4 if dtype == "F16" else 1e4
    x[3] = -np.abs(x[3])
    x[4, :16] = [0.25, 0.75, 1.25, 1.75, 2.5, 3.5, 5, 6, -0.25, -0.75, -5, 7, -7, 0, -0.0, 1e-8]
    x[5, 3], x[6, 7], x[7, 0] = np.nan, np.inf, -np.inf
    return x.astype(NUMPY[dtype])


@pytest.mark.parametrize("dtype", ["BF16", "F16", "F32"])
@pytest.mark.parametrize("scheme", list(SCHEMES))
def test_the_preview_values_are_the_saves_bit_for_bit(dtype: str, scheme: str) -> None:
    w = hostile_rows(dtype)
    s, sd = SCHEMES[scheme], DTYPES[dtype]
    with np.errstate(all="ignore"):
        top = float(np.nanmax(np.abs(w.astype(np.float32)[8:])))
    g = global_scale(top, sd) if s.group_size == 16 else None
    saved = quantize_rows(w, sd, s, g, measure=True, pack=True)
    previewed = quantize_rows(w, sd, s, g, measure=True, pack=False)
    assert previewed.parts == {} and saved.parts
    assert saved.values is not None and previewed.values is not None
    assert np.array_equal(saved.values.view(np.uint32), previewed.values.view(np.uint32))


def test_group_maxima_follow_from_finer_ones_in_any_order() -> None:
    rng = np.random.default_rng(1)
    x = rng.standard_normal((6, 96)).astype(np.float32)
    x[2, 7], x[4, 50] = np.nan, -np.inf
    # NaNs of other payloads and signs in one group: the maximum is numpy's float maximum's
    x.view(np.uint32)[3, 10:13] = [0x7FC00001, 0xFFC00002, 0x7F800003]
    for order in ([96, 48, 24, 12, 6, 3, 2, 1], [1, 3, 32, 2, 96], [2, 6, 96, 1, 4]):
        rows = WidenedRows(x, DTYPES["F32"])
        rows.prepare(order[:2])
        for groups in order:
            want = np.abs(x).reshape(6, groups, -1).max(axis=2)
            got = rows.absmax(groups)
            assert got.shape == (6, groups)
            assert np.array_equal(got.view(np.uint32), want.view(np.uint32)), (order, groups)


def test_block_maxima_are_the_blocks_largest_values() -> None:
    x = np.random.default_rng(2).standard_normal((256, 384)).astype(np.float32)
    x[130, 300] = -9.0
    got = WidenedRows(x, DTYPES["F32"]).block_absmax(128, 128)
    want = np.abs(x).reshape(2, 128, 3, 128).max(axis=(1, 3))
    assert np.array_equal(got, want) and got[1, 2] == 9.0
    x.view(np.uint32)[[3, 4, 90], [5, 6, 100]] = [0x7FC00001, 0xFFC00002, 0x7FC00003]
    got = WidenedRows(x, DTYPES["F32"]).block_absmax(128, 128)  # numpy's NaN is kept
    want = np.abs(x).reshape(2, 128, 3, 128).max(axis=(1, 3))
    assert np.array_equal(got.view(np.uint32), want.view(np.uint32))


@pytest.mark.parametrize("dtype", ["bfloat16", "float16", "float32"])
def test_a_weights_largest_magnitude_is_torchs(tmp_path, dtype: str) -> None:
    torch = pytest.importorskip("torch")
    from safetensors.torch import save_file

    from inspector.core.opening import open_checkpoint
    from inspector.core.quantize.stream import weight_absmax

    cases = {"mixed": [[1.5, -3.25], [0.0, 2.0]], "nan": [[math.nan, 1.0]],
             "neg_inf": [[-math.inf, 1.0]], "zeros": [[0.0, 0.0]],
             "negatives": [[-0.0, -1e-30]], "negative_top": [[-7.0, 6.9]]}  # fmt: skip
    tdtype = getattr(torch, dtype)
    save_file(
        {k: torch.tensor(v, dtype=tdtype) for k, v in cases.items()}, tmp_path / "m.safetensors"
    )
    with open_checkpoint(str(tmp_path / "m.safetensors")) as ckpt:
        for t in ckpt.tensors:
            got = weight_absmax(ckpt, t, 1 << 20)
            want = torch.tensor(cases[t.name], dtype=tdtype).abs().max().float().item()
            assert got == want or (math.isnan(got) and math.isnan(want)), t.name
