"""Diff statuses and numbers, checked against values computed independently with torch."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from safetensors.torch import save_file

from inspector.core import diff as diff_mod
from inspector.core.diff import diff_checkpoints
from inspector.core.opening import open_checkpoint
from inspector.core.progress import run_job


def _pair(tmp_path, a: dict, b: dict):
    save_file(a, tmp_path / "a.safetensors")
    save_file(b, tmp_path / "b.safetensors")
    return open_checkpoint(tmp_path / "a.safetensors"), open_checkpoint(tmp_path / "b.safetensors")


def _by_name(diffs):
    return {d.name: d for d in diffs}


def test_every_status(tmp_path):
    g = torch.Generator().manual_seed(0)
    w = torch.randn(50, 40, generator=g)
    a, b = _pair(
        tmp_path,
        {k: w.clone() for k in ("same", "cast", "moved", "shape", "gone")}
        | {"ints": torch.arange(5)},
        {
            "same": w.clone(),
            "cast": w.double(),
            "moved": w + 1e-3,
            "shape": w.T.contiguous(),
            "new": w,
            "ints": torch.arange(5),
        },
    )
    d = _by_name(run_job(diff_checkpoints(a, b)))
    assert {k: v.status for k, v in d.items()} == {
        "same": "equal",
        "cast": "dtype_only",
        "moved": "differ",
        "shape": "shape_mismatch",
        "gone": "only_a",
        "ints": "equal",
        "new": "only_b",
    }
    moved = (w.double() - (w + 1e-3).double()).abs()
    assert d["moved"].max_abs_diff == moved.max().item()
    assert d["shape"].max_abs_diff is None
    assert d["new"].dtype_a is None and d["new"].dtype_b == "F32"


def test_bf16_file_against_what_pytorch_read(tmp_path):
    """The seed's workflow: BF16 file vs PyTorch reading it into F32 is exact (dtype_only)."""
    g = torch.Generator().manual_seed(1)
    bf16 = torch.randn(300, generator=g).to(torch.bfloat16)
    a, b = _pair(tmp_path, {"w": bf16}, {"w": bf16.float()})
    (d,) = run_job(diff_checkpoints(a, b))
    assert d.status == "dtype_only" and d.max_abs_diff == 0.0


def test_atol_and_relative_difference(tmp_path):
    a, b = _pair(
        tmp_path, {"w": torch.tensor([1.0, 2.0, -4.0])}, {"w": torch.tensor([1.0, 2.5, -4.0])}
    )
    (strict,) = run_job(diff_checkpoints(a, b))
    assert strict.status == "differ"
    assert strict.max_abs_diff == 0.5 and strict.max_rel_diff == pytest.approx(0.5 / 2.5)
    (loose,) = run_job(diff_checkpoints(a, b, atol=0.5))
    # values differ, within tolerance: not "equal", and not "dtype_only" (which means every
    # value equal); still a pass for the exit code
    assert loose.status == "within_atol" and loose.is_equal and loose.max_abs_diff == 0.5


def test_nan_handling(tmp_path):
    nan = float("nan")
    a, b = _pair(
        tmp_path,
        {
            "both": torch.tensor([nan, 1.0]),
            "one": torch.tensor([nan, 1.0]),
            "inf": torch.tensor([math.inf]),
        },
        {
            "both": torch.tensor([nan, 1.0]),
            "one": torch.tensor([0.0, 1.0]),
            "inf": torch.tensor([-math.inf]),
        },
    )
    d = _by_name(run_job(diff_checkpoints(a, b)))
    assert d["both"].status == "equal"
    assert d["one"].status == "differ" and d["one"].max_abs_diff == math.inf
    assert d["inf"].max_abs_diff == math.inf


def test_chunked_diff_finds_the_one_changed_element(tmp_path, monkeypatch):
    monkeypatch.setattr(diff_mod, "_CHUNK_ELEMS", 64)
    x = torch.zeros(10_000, dtype=torch.float64)
    y = x.clone()
    y[7777] = 3.0
    a, b = _pair(tmp_path, {"x": x}, {"x": y.to(torch.float16)})
    (d,) = run_job(diff_checkpoints(a, b))
    assert d.status == "differ" and d.max_abs_diff == 3.0 and d.max_rel_diff == 1.0


def test_blocked_comparison_finds_the_maximum_in_any_block_and_equal_bytes_are_equal(tmp_path):
    """The comparison runs in cache-sized blocks; the maxima must not depend on where they fall,
    and identical bytes (NaNs included) take the fast path to "equal"."""
    from inspector.core.dtypes import DTYPES
    from inspector.core.opening import open_checkpoint
    from inspector.core.save.writer import save_arrays

    n = (1 << 16) * 3 + 5  # three full blocks and a tail
    a = np.zeros(n, np.float32)
    a[::1000] = np.nan
    b = a.copy()
    b[(1 << 16) + 7] = 0.5  # in the second block
    b[-1] = -2.0  # in the tail
    f32 = DTYPES["F32"]
    save_arrays(tmp_path / "a.safetensors", [("x", f32, a), ("same", f32, a)])
    save_arrays(tmp_path / "b.safetensors", [("x", f32, b), ("same", f32, a)])
    with (
        open_checkpoint(tmp_path / "a.safetensors") as ca,
        open_checkpoint(tmp_path / "b.safetensors") as cb,
    ):
        diffs = {d.name: d for d in run_job(diff_checkpoints(ca, cb))}
    assert diffs["x"].status == "differ" and diffs["x"].max_abs_diff == 2.0
    assert diffs["x"].max_rel_diff == 1.0
    assert diffs["same"].status == "equal" and diffs["same"].max_abs_diff == 0.0


@pytest.mark.parametrize(
    "dtype, a, b, max_abs, max_rel",
    [
        # 2**62 against -2**62 differs by 2**63: outside int64, exact in the unsigned difference
        (torch.int64, [0, -5, 2**62, 7], [0, 5, -(2**62), 7], float(2**63), 2.0),
        (torch.uint64, [2**64 - 1, 3], [0, 3], float(2**64 - 1), 1.0),
        (torch.uint8, [250, 4], [5, 4], 245.0, 0.98),
        (torch.int8, [-128, 1], [127, 1], 255.0, 255 / 128),
        (torch.bool, [True, False], [False, False], 1.0, 1.0),
    ],
)
def test_integer_differences_are_exact(tmp_path, dtype, a, b, max_abs, max_rel):
    """The integer path: |a - b| without wrap-around and the relative difference, per dtype
    (mutation testing: swapped or summed operands went unnoticed)."""
    ta, tb = (torch.tensor(v, dtype=dtype) for v in (a, b))
    save_file({"x": ta}, str(tmp_path / "a.safetensors"))
    save_file({"x": tb}, str(tmp_path / "b.safetensors"))
    with (
        open_checkpoint(tmp_path / "a.safetensors") as ca,
        open_checkpoint(tmp_path / "b.safetensors") as cb,
    ):
        (d,) = run_job(diff_checkpoints(ca, cb))
        (back,) = run_job(diff_checkpoints(cb, ca))  # symmetric
    assert str(d.status) == "differ"
    assert (d.max_abs_diff, d.max_rel_diff) == (max_abs, max_rel)
    assert (back.max_abs_diff, back.max_rel_diff) == (max_abs, max_rel)


def _diff_pair(tmp_path, a: dict, b: dict):
    save_file(a, str(tmp_path / "a.safetensors"))
    save_file(b, str(tmp_path / "b.safetensors"))
    with (
        open_checkpoint(tmp_path / "a.safetensors") as ca,
        open_checkpoint(tmp_path / "b.safetensors") as cb,
    ):
        return run_job(diff_checkpoints(ca, cb))


@pytest.mark.parametrize(
    "a, b, max_abs, max_rel",
    [
        ([0.5], [0.25], 0.25, 0.5),  # one element, magnitudes below 1
        ([0.5, 2.0], [1.5, 2.0], 1.0, 1 / 1.5),  # the largest difference is exactly 1
        ([math.inf, 1.0], [-math.inf, 1.0], math.inf, math.inf),  # inf against -inf
        ([7.0], [7.0], 0.0, 0.0),
    ],
)
def test_float_differences_exactly(tmp_path, a, b, max_abs, max_rel):
    (d,) = _diff_pair(
        tmp_path,
        {"x": torch.tensor(a, dtype=torch.float64)},
        {"x": torch.tensor(b, dtype=torch.float64)},
    )
    assert (d.max_abs_diff, d.max_rel_diff) == (max_abs, max_rel)


def test_single_element_integers_and_complex(tmp_path):
    diffs = _diff_pair(
        tmp_path,
        {
            "i": torch.tensor([3], dtype=torch.int32),
            "c": torch.tensor([1 + 1j], dtype=torch.complex64),
        },
        {
            "i": torch.tensor([5], dtype=torch.int32),
            "c": torch.tensor([1 + 2j], dtype=torch.complex64),
        },
    )
    by = {d.name: d for d in diffs}
    assert (by["i"].max_abs_diff, by["i"].max_rel_diff) == (2.0, 0.4)
    assert by["c"].max_abs_diff == 1.0
    assert by["c"].max_rel_diff == pytest.approx(1 / math.sqrt(5), rel=1e-7)


def test_same_bytes_under_different_dtypes_are_not_equal(tmp_path):
    """F32 1.0 and I32 1065353216 share their bytes: equal bytes mean equal values only when
    the dtypes agree (the fast path must not take the bytes for the values)."""
    (d,) = _diff_pair(
        tmp_path,
        {"x": torch.tensor([1.0], dtype=torch.float32)},
        {"x": torch.tensor([1065353216], dtype=torch.int32)},
    )
    assert str(d.status) == "differ" and d.max_abs_diff == 1065353215.0


def test_rows_for_tensors_in_one_file_or_shaped_differently(tmp_path):
    diffs = _diff_pair(
        tmp_path,
        {"a": torch.zeros(2), "s": torch.zeros(2, 3)},
        {"b": torch.zeros(4, dtype=torch.float16), "s": torch.zeros(3, 2)},
    )
    rows = {d.name: d.to_json() for d in diffs}
    assert rows["a"] == {
        "name": "a", "status": "only_a", "max_abs_diff": None, "max_rel_diff": None,
        "dtype_a": "F32", "dtype_b": None, "shape_a": [2], "shape_b": None,
    }  # fmt: skip
    assert rows["b"] == {
        "name": "b", "status": "only_b", "max_abs_diff": None, "max_rel_diff": None,
        "dtype_a": None, "dtype_b": "F16", "shape_a": None, "shape_b": [4],
    }  # fmt: skip
    assert rows["s"]["status"] == "shape_mismatch"
    assert (rows["s"]["shape_a"], rows["s"]["shape_b"]) == ([2, 3], [3, 2])
    assert (rows["s"]["dtype_a"], rows["s"]["dtype_b"]) == ("F32", "F32")


def test_summary_counts_and_worst(tmp_path):
    from inspector.core.diff import DiffSummary
    from inspector.core.status import DiffStatus

    diffs = _diff_pair(
        tmp_path,
        {"e": torch.ones(2), "d1": torch.ones(2), "d2": torch.ones(2), "a": torch.ones(1)},
        {"e": torch.ones(2), "d1": torch.full((2,), 3.0), "d2": torch.full((2,), 0.5)},
    )
    s = DiffSummary.of(diffs)
    assert s.worst_abs == 2.0
    assert s.count(DiffStatus.DIFFER) == 2 and s.count(DiffStatus.ONLY_B) == 0
    assert s.n_equal == 1 and s.count(DiffStatus.ONLY_A) == 1
    assert DiffSummary.of([]).worst_abs == 0.0


def test_integers_past_float64_precision_and_integers_against_floats(tmp_path):
    """2**53 + 1 against 2**53 differs by exactly 1 (float64 would call them equal, in one dtype
    or across int64/uint64); an integer against a float is compared as floats, both ways."""
    big = 2**53
    diffs = _by_name(
        _diff_pair(
            tmp_path,
            {
                "same": torch.tensor([big + 1, -3], dtype=torch.int64),
                "mixed": torch.tensor([big + 1, 2**63, 7], dtype=torch.uint64),
                "negative": torch.tensor([0, 5], dtype=torch.uint64),
                "i_vs_f": torch.tensor([1, 2], dtype=torch.int32),
                "f_vs_i": torch.tensor([1.5, 2.0], dtype=torch.float32),
            },
            {
                "same": torch.tensor([big, -3], dtype=torch.int64),
                "mixed": torch.tensor([big, 2**63 - 1, 7], dtype=torch.int64),
                "negative": torch.tensor([-1, 5], dtype=torch.int64),
                "i_vs_f": torch.tensor([1.5, 2.0], dtype=torch.float32),
                "f_vs_i": torch.tensor([1, 2], dtype=torch.int32),
            },
        )
    )
    rel = 1.0 / float(big + 1)
    assert (diffs["same"].max_abs_diff, diffs["same"].max_rel_diff) == (1.0, rel)
    assert (diffs["mixed"].max_abs_diff, diffs["mixed"].max_rel_diff) == (1.0, rel)
    assert str(diffs["mixed"].status) == "differ"
    assert (diffs["negative"].max_abs_diff, diffs["negative"].max_rel_diff) == (1.0, 1.0)
    for name in ("i_vs_f", "f_vs_i"):
        assert (diffs[name].max_abs_diff, diffs[name].max_rel_diff) == (0.5, 0.5 / 1.5), name


def test_half_precision_differences_are_taken_in_float64(tmp_path):
    """2048 - 0.5 is 2047.5, which F16 arithmetic would round back to 2048."""
    (d,) = _diff_pair(
        tmp_path,
        {"x": torch.tensor([2048.0], dtype=torch.float16)},
        {"x": torch.tensor([0.5], dtype=torch.float16)},
    )
    assert (d.max_abs_diff, d.max_rel_diff) == (2047.5, 2047.5 / 2048)


def test_empty_tensors_are_equal_and_a_shape_mismatch_does_not_end_the_diff(tmp_path):
    diffs = _diff_pair(
        tmp_path,
        {"e": torch.zeros(0), "f": torch.zeros(0), "m": torch.zeros(2), "z": torch.ones(2)},
        {
            "e": torch.zeros(0),
            "f": torch.zeros(0, dtype=torch.float16),
            "m": torch.zeros(3),
            "z": torch.full((2,), 2.0),
        },
    )
    rows = {d.name: (str(d.status), d.max_abs_diff, d.max_rel_diff) for d in diffs}
    assert rows == {
        "e": ("equal", 0.0, 0.0),
        "f": ("dtype_only", 0.0, 0.0),
        "m": ("shape_mismatch", None, None),
        "z": ("differ", 1.0, 0.5),
    }


def test_progress_counts_bytes_chunk_by_chunk_across_tensors(tmp_path, monkeypatch):
    """Each chunk adds its bytes; a tensor shaped differently adds its own, so the bar ends full."""
    monkeypatch.setattr(diff_mod, "_CHUNK_ELEMS", 64)
    a, b = _pair(
        tmp_path,
        {"a": torch.zeros(2), "b": torch.zeros(150), "c": torch.zeros(3, dtype=torch.float64)},
        {"a": torch.zeros(3), "b": torch.ones(150), "c": torch.zeros(3)},
    )
    job = diff_checkpoints(a, b)
    seen = []
    with a, b:
        while True:
            try:
                p = next(job)
            except StopIteration:
                break
            seen.append((p.done, p.total, p.name))
    assert seen == [  # in A's file order: safetensors puts the F64 tensor first
        (0, 632, ""),
        (24, 632, "c"),
        (288, 632, "b"),  # after a's 8 bytes, shaped differently
        (544, 632, "b"),
        (632, 632, "b"),
        (632, 632, ""),
    ]
    assert all(type(done) is int for done, _, _ in seen)


def test_mixed_integer_dtypes_both_ways_zeros_and_a_smaller_unsigned(tmp_path):
    """int64 against uint64 with the int64 file first, equal zeros across the two dtypes, and
    an unsigned value below the signed one: each exact, both directions."""
    big = 2**53
    diffs = _by_name(
        _diff_pair(
            tmp_path,
            {
                "rev": torch.tensor([big, 7], dtype=torch.int64),
                "rev_neg": torch.tensor([-1, 7], dtype=torch.int64),
                "zeros": torch.tensor([0, 5], dtype=torch.uint64),
                "below": torch.tensor([1, 9], dtype=torch.uint64),
            },
            {
                "rev": torch.tensor([big + 1, 7], dtype=torch.uint64),
                "rev_neg": torch.tensor([0, 7], dtype=torch.uint64),
                "zeros": torch.tensor([0, 5], dtype=torch.int64),
                "below": torch.tensor([4, 9], dtype=torch.int64),
            },
        )
    )
    assert (diffs["rev"].max_abs_diff, diffs["rev"].max_rel_diff) == (1.0, 1.0 / float(big + 1))
    assert (diffs["rev_neg"].max_abs_diff, diffs["rev_neg"].max_rel_diff) == (1.0, 1.0)
    assert (str(diffs["zeros"].status), diffs["zeros"].max_abs_diff) == ("dtype_only", 0.0)
    assert diffs["zeros"].max_rel_diff == 0.0
    assert (diffs["below"].max_abs_diff, diffs["below"].max_rel_diff) == (3.0, 0.75)


def test_the_typical_error_is_the_rms_of_the_relative_error_over_every_element(
    tmp_path, monkeypatch
):
    """rms_rel_err (DESIGN: the typical error beside the max) sums the squared relative error
    over every chunk, counts an equal chunk, an equal pair of mixed integer dtypes and an
    empty tensor as 0, and a NaN against a number as the cap of 2 (its relative error is inf).
    Mutation testing: a sum that kept only the last chunk, an equal block counted as 1, a cap
    of 3 and a product for a quotient all passed."""
    monkeypatch.setattr(diff_mod, "_CHUNK_ELEMS", 64)  # 150 values: chunks of 64, 64 and 22
    ones = torch.ones(150)
    far = ones.double()
    far[10], far[140] = 2.0, 0.5  # relative errors 0.5 and 0.5, in the first and last chunks
    nan = float("nan")
    d = _by_name(
        _diff_pair(
            tmp_path,
            {
                "chunks": ones,
                "nan": torch.tensor([nan, 1.0, 1.0, 1.0]),
                "ints": torch.tensor([1, 2], dtype=torch.int32),
                "u_vs_i": torch.tensor([0, 5], dtype=torch.uint64),
                "empty": torch.zeros(0),
            },
            {
                "chunks": far,
                "nan": torch.tensor([0.0, 1.0, 1.0, 1.0]),
                "ints": torch.tensor([1, 4], dtype=torch.int32),
                "u_vs_i": torch.tensor([0, 5], dtype=torch.int64),
                "empty": torch.zeros(0, dtype=torch.float16),
            },
        )
    )
    assert d["chunks"].rms_rel_err == math.sqrt(0.5 / 150)
    assert (d["nan"].max_rel_diff, d["nan"].rms_rel_err) == (math.inf, 1.0)  # sqrt(2² / 4)
    assert (d["ints"].max_rel_diff, d["ints"].rms_rel_err) == (0.5, math.sqrt(0.25 / 2))
    assert (str(d["u_vs_i"].status), d["u_vs_i"].max_rel_diff) == ("dtype_only", 0.0)
    assert d["u_vs_i"].rms_rel_err == 0.0
    assert (str(d["empty"].status), d["empty"].rms_rel_err) == ("dtype_only", 0.0)


@pytest.mark.filterwarnings("error")
def test_inf_against_inf_and_an_overflowing_difference_raise_no_warning(tmp_path):
    """inf - inf (invalid) and 1e308 - -1e308 (overflow) are expected in a diff: numpy is told
    to stay silent, so a run with warnings as errors (or a log of them) sees none. The inf
    pair is F32 against F64, so it is compared value by value rather than by its bytes."""
    d = _by_name(
        _diff_pair(
            tmp_path,
            {"inf": torch.tensor([math.inf]), "big": torch.tensor([1e308], dtype=torch.float64)},
            {
                "inf": torch.tensor([math.inf], dtype=torch.float64),
                "big": torch.tensor([-1e308], dtype=torch.float64),
            },
        )
    )
    assert (str(d["inf"].status), d["inf"].max_abs_diff) == ("dtype_only", 0.0)
    assert (str(d["big"].status), d["big"].max_abs_diff, d["big"].max_rel_diff) == (
        "differ",
        math.inf,
        math.inf,
    )


def _fp8_folder(tmp_path, name: str, seed: int) -> tuple:
    """A DeepSeek fp8 folder whose file also holds a one-value F32 tensor, before the norm."""
    from inspector.core.dtypes import DTYPES
    from inspector.core.save.writer import save_arrays
    from tests.quant_folders import deepseek_folder

    v = deepseek_folder(tmp_path / name, 256, 256, seed=seed)
    path = tmp_path / name / "model.safetensors"
    f32, bf16 = DTYPES["F32"], DTYPES["BF16"]
    save_arrays(
        path,
        [
            ("model.layers.0.mlp.up_proj.weight", DTYPES["F8_E4M3"], v["codes"]),
            ("model.layers.0.mlp.up_proj.weight_scale_inv", f32, v["scale"]),
            ("model.one", f32, np.array([1.0], np.float32)),
            ("model.norm.weight", bf16, np.ones(256, np.float32).astype(bf16.numpy)),
            ("lm_head.weight", bf16, v["true"][:8].astype(bf16.numpy)),
        ],
    )
    return tmp_path / name, v["true"]


def test_a_quantized_diff_lists_every_weight_with_its_progress(tmp_path):
    """diff by logical weight (A's fp8 weight dequantized against B's F32 original): a weight
    only in A keeps its dtype and shape and does not end the diff, a plain pair carries no
    quantization figures, the quantized one all of them, and progress counts A's bytes
    (65,552 for the codes and scales, 4 for the one value) as integers up to a full bar.
    Mutation testing: every one of these went unnoticed (the quantized tests read statuses
    and figures only)."""
    from inspector.core.dtypes import DTYPES
    from inspector.core.quant.of_checkpoint import quant_layout
    from inspector.core.save.writer import save_arrays

    folder, true = _fp8_folder(tmp_path, "fp8", 1)
    f32, bf16 = DTYPES["F32"], DTYPES["BF16"]
    save_arrays(
        tmp_path / "plain.safetensors",
        [
            ("model.layers.0.mlp.up_proj.weight", f32, true),
            ("model.one", f32, np.array([2.0], np.float32)),
            ("lm_head.weight", bf16, true[:8].astype(bf16.numpy)),
            ("extra", f32, np.ones(3, np.float32)),
        ],
    )
    with open_checkpoint(folder) as a, open_checkpoint(tmp_path / "plain.safetensors") as b:
        job, seen = diff_checkpoints(a, b, quant_a=quant_layout(a)), []
        while True:
            try:
                p = next(job)
            except StopIteration as stop:
                diffs = _by_name(stop.value)
                break
            seen.append((p.done, p.total, p.name))
        loose = _by_name(run_job(diff_checkpoints(a, b, atol=1.0, quant_a=quant_layout(a))))
    total = 65552 + 4 + 4096
    assert seen == [
        (0, total, ""),
        (65552, total, "model.layers.0.mlp.up_proj.weight"),
        (65556, total, "model.one"),
        (total, total, "lm_head.weight"),
        (total, total, ""),
    ]
    assert all(type(done) is int for done, _, _ in seen)
    assert list(diffs) == [
        "model.layers.0.mlp.up_proj.weight", "model.one", "model.norm.weight", "lm_head.weight",
        "extra",
    ]  # fmt: skip
    up = diffs["model.layers.0.mlp.up_proj.weight"].to_json()
    assert set(up) == {
        "name", "status", "max_abs_diff", "max_rel_diff", "dtype_a", "dtype_b", "shape_a",
        "shape_b", "quant", "rel_fro_err", "sqnr_db", "rms_rel_err",
    }  # fmt: skip
    assert (up["status"], up["quant"], up["dtype_a"], up["dtype_b"]) == (
        "differ",
        "fp8",
        "F8_E4M3",
        "F32",
    )
    assert (up["shape_a"], up["shape_b"]) == ([256, 256], [256, 256])
    assert 0 < up["rel_fro_err"] < 0.05 and 25 < up["sqnr_db"] < 40 and 0 < up["rms_rel_err"] < 0.05
    assert diffs["model.one"].to_json() == {
        "name": "model.one", "status": "differ", "max_abs_diff": 1.0, "max_rel_diff": 0.5,
        "dtype_a": "F32", "dtype_b": "F32", "shape_a": [1], "shape_b": [1],
    }  # fmt: skip
    one = diffs["model.one"]  # the window reads these fields, not the JSON
    assert (one.quant, one.rel_fro_err, one.sqnr_db, one.rms_rel_err) == (None, None, None, None)
    assert diffs["model.norm.weight"].to_json() == {
        "name": "model.norm.weight", "status": "only_a", "max_abs_diff": None,
        "max_rel_diff": None, "dtype_a": "BF16", "dtype_b": None, "shape_a": [256],
        "shape_b": None,
    }  # fmt: skip
    assert str(diffs["lm_head.weight"].status) == "equal"
    assert str(diffs["extra"].status) == "only_b"
    # atol reaches the largest difference exactly: within it
    assert str(loose["model.one"].status) == "within_atol"
    assert str(loose["model.layers.0.mlp.up_proj.weight"].status) == "within_atol"


def test_two_quantized_sides_name_both_schemes(tmp_path):
    from inspector.core.quant.of_checkpoint import quant_layout

    a_path, _ = _fp8_folder(tmp_path, "a", 1)
    b_path, _ = _fp8_folder(tmp_path, "b", 2)
    with open_checkpoint(a_path) as a, open_checkpoint(b_path) as b:
        diffs = _by_name(
            run_job(diff_checkpoints(a, b, quant_a=quant_layout(a), quant_b=quant_layout(b)))
        )
    up = diffs["model.layers.0.mlp.up_proj.weight"]
    assert (str(up.status), up.quant) == ("differ", "fp8/fp8")
    assert str(diffs["model.one"].status) == "equal" and diffs["model.one"].quant is None


def test_a_weight_only_in_a_is_not_compared_with_a_tensor_of_empty_name_in_b(tmp_path):
    """A safetensors name may be empty. A weight of A without a counterpart in B is listed as
    only in A, not compared with B's tensor named "" (the lookup of "no counterpart" used ""
    as its key); B's "" tensor is its own row, only in B."""
    from inspector.core.dtypes import DTYPES
    from inspector.core.quant.of_checkpoint import quant_layout
    from inspector.core.save.writer import save_arrays

    folder, true = _fp8_folder(tmp_path, "fp8", 1)
    bf16 = DTYPES["BF16"]
    save_arrays(tmp_path / "b.safetensors", [("", bf16, true[:8].astype(bf16.numpy))])
    with open_checkpoint(folder) as a, open_checkpoint(tmp_path / "b.safetensors") as b:
        diffs = run_job(diff_checkpoints(a, b, quant_a=quant_layout(a)))
    assert [(d.name, str(d.status), d.name_b) for d in diffs] == [
        ("model.layers.0.mlp.up_proj.weight", "only_a", None),
        ("model.one", "only_a", None),
        ("model.norm.weight", "only_a", None),
        ("lm_head.weight", "only_a", None),
        ("", "only_b", None),
    ]
