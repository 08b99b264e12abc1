"""GPTQ and AWQ int4 weights dequantized as their reference kernels do in torch. Neither
gptqmodel nor autoawq installs here (both build CUDA extensions), so the references are their
published torch formulas, written out below: AutoGPTQ's ``QuantLinear`` torch path
(``scales[g_idx] * (weight - zeros[g_idx])``, zeros stored minus one in the ``gptq`` format) and
AutoAWQ's ``dequantize_gemm`` (unpack, undo the 0 2 4 6 1 3 5 7 order, ``(w - z) * s``)."""

from __future__ import annotations

import numpy as np
import pytest

from inspector.core.dtypes import DTYPES
from inspector.core.opening import open_checkpoint
from inspector.core.progress import run_job
from tests.quant_folders import F16, I32, folder

torch = pytest.importorskip("torch")
M = "model.layers.0.mlp.up_proj"
AWQ_PACK = [0, 2, 4, 6, 1, 3, 5, 7]
AWQ_REVERSE = [0, 4, 1, 5, 2, 6, 3, 7]


def _pack_cols(ints: np.ndarray, order: list[int]) -> np.ndarray:
    """[rows, out] 4-bit codes into [rows, out/8] int32, output order[i] in slot i."""
    rows, out = ints.shape
    words = np.zeros((rows, out // 8), np.uint32)
    for i, j in enumerate(order):
        words |= ints[:, j::8].astype(np.uint32) << (4 * i)
    return words.view(np.int32)


def _pack_rows(ints: np.ndarray, bits: int = 4) -> np.ndarray:
    """GPTQ's qweight: [in, out] codes of ``bits`` into [in·bits/32, out] int32, input
    per·k+i in slot i (per = 32/bits)."""
    per = 32 // bits
    words = np.zeros((ints.shape[0] // per, ints.shape[1]), np.uint32)
    for i in range(per):
        words |= ints[i::per].astype(np.uint32) << (bits * i)
    return words.view(np.int32)


def _pack_out(ints: np.ndarray, bits: int) -> np.ndarray:
    """GPTQ's qzeros: [groups, out] codes of ``bits`` into [groups, out·bits/32] int32."""
    per = 32 // bits
    words = np.zeros((ints.shape[0], ints.shape[1] // per), np.uint32)
    for i in range(per):
        words |= ints[:, i::per].astype(np.uint32) << (bits * i)
    return words.view(np.int32)


def _gptq_reference(qweight, qzeros, scales, g_idx, v2: bool, bits: int = 4) -> torch.Tensor:
    per, mask = 32 // bits, (1 << bits) - 1
    wf = torch.arange(0, 32, bits, dtype=torch.int32)
    zeros = torch.bitwise_right_shift(qzeros.unsqueeze(2).expand(-1, -1, per), wf.unsqueeze(0))
    zeros = torch.bitwise_and(zeros.to(torch.int16), mask) + (0 if v2 else 1)
    zeros = zeros.reshape(scales.shape)
    weight = torch.bitwise_right_shift(qweight.unsqueeze(1).expand(-1, per, -1), wf.unsqueeze(-1))
    weight = torch.bitwise_and(weight.to(torch.int16), mask).reshape(-1, qweight.shape[1])
    g = g_idx.long()
    return (scales[g] * (weight - zeros[g])).t()  # Linear.weight is [out, in]


def _awq_reference(qweight, qzeros, scales, group: int) -> torch.Tensor:
    shifts = torch.arange(0, 32, 4, dtype=torch.int32)
    iw = torch.bitwise_right_shift(qweight[:, :, None], shifts[None, None, :]).to(torch.int8)
    iw = iw.view(iw.shape[0], -1)
    iz = torch.bitwise_right_shift(qzeros[:, :, None], shifts[None, None, :]).to(torch.int8)
    iz = iz.view(iz.shape[0], -1)
    order = torch.arange(iw.shape[-1], dtype=torch.int32).view(-1, 8)[:, AWQ_REVERSE].view(-1)
    iw, iz = torch.bitwise_and(iw[:, order], 15), torch.bitwise_and(iz[:, order], 15)
    iz = iz.repeat_interleave(group, dim=0)
    s = scales.repeat_interleave(group, dim=0)
    return ((iw - iz) * s).t()


def _cast(src, out, target="F16"):
    from safetensors.torch import load_file

    from inspector.core.cast.job import cast_checkpoint

    with open_checkpoint(str(src)) as ckpt:
        report = run_job(cast_checkpoint(ckpt, DTYPES[target], str(out), chunk_bytes=2048))
    return load_file(out / "model.safetensors"), report


@pytest.mark.parametrize("v2", [False, True])
@pytest.mark.parametrize("act_order", [False, True])
def test_gptq_equals_the_published_torch_formula(tmp_path, v2, act_order):
    rng = np.random.default_rng(7)
    n_in, n_out, group = 256, 192, 64
    codes = rng.integers(0, 16, (n_in, n_out), dtype=np.uint8)
    zeros = rng.integers(0, 15, (n_in // group, n_out), dtype=np.uint8)  # stored (minus 1 in v1)
    scales = (rng.random((n_in // group, n_out)) * 0.01).astype(np.float16)
    g_idx = np.arange(n_in) // group
    if act_order:
        g_idx = rng.permutation(g_idx)
    tensors = [
        (f"{M}.qweight", I32, _pack_rows(codes)),
        (f"{M}.qzeros", I32, _pack_cols(zeros, list(range(8)))),
        (f"{M}.scales", F16, scales),
        (f"{M}.g_idx", I32, g_idx.astype(np.int32)),
    ]
    qc = {"quant_method": "gptq", "bits": 4, "group_size": group, "desc_act": act_order,
          "sym": False, **({"checkpoint_format": "gptq_v2"} if v2 else {})}  # fmt: skip
    folder(tmp_path / "q", tensors, qc)
    got, report = _cast(tmp_path / "q", tmp_path / "plain")
    t = {name: torch.from_numpy(v) for name, _, v in tensors}
    want = _gptq_reference(t[f"{M}.qweight"], t[f"{M}.qzeros"], t[f"{M}.scales"],
                           t[f"{M}.g_idx"], v2)  # fmt: skip
    assert got[f"{M}.weight"].shape == (n_out, n_in)
    assert torch.equal(got[f"{M}.weight"], want.to(torch.float16))
    assert set(got) == {f"{M}.weight"}
    assert report.tensors[0].dequantized == "gptq"


@pytest.mark.parametrize("bits", [2, 8])
def test_2_and_8_bit_gptq_equal_the_published_torch_formula(tmp_path, bits):
    """AutoGPTQ packs 16 or 4 codes a word as it packs 8 (``wf = arange(0, 32, bits)``); no
    g_idx here, as GPTQ writes without act-order: groups of ``group_size`` consecutive inputs."""
    rng = np.random.default_rng(bits)
    n_in, n_out, group, top = 128, 64, 32, 1 << bits
    codes = rng.integers(0, top, (n_in, n_out), dtype=np.uint8)
    zeros = rng.integers(0, top - 1, (n_in // group, n_out), dtype=np.uint8)
    scales = (rng.random((n_in // group, n_out)) * 0.01).astype(np.float16)
    tensors = [
        (f"{M}.qweight", I32, _pack_rows(codes, bits)),
        (f"{M}.qzeros", I32, _pack_out(zeros, bits)),
        (f"{M}.scales", F16, scales),
    ]
    qc = {"quant_method": "gptq", "bits": bits, "group_size": group, "desc_act": False}
    folder(tmp_path / "q", tensors, qc)
    got, _ = _cast(tmp_path / "q", tmp_path / "plain")
    t = {name: torch.from_numpy(v) for name, _, v in tensors}
    g_idx = torch.arange(n_in, dtype=torch.int32) // group
    want = _gptq_reference(t[f"{M}.qweight"], t[f"{M}.qzeros"], t[f"{M}.scales"], g_idx,
                           False, bits)  # fmt: skip
    assert got[f"{M}.weight"].shape == (n_out, n_in)
    assert torch.equal(got[f"{M}.weight"], want.to(torch.float16))


def _gptq_folder(path, *, bits=4, method="gptq", scales_dtype=F16, g_idx=None, qzeros=True):
    """4-bit GPTQ (or AWQ, same tensors) of 64 inputs × 64 outputs in two groups of 32."""
    tensors = [
        (f"{M}.qweight", I32, _pack_rows(np.ones((64, 64), np.uint8))),
        (f"{M}.scales", scales_dtype, np.ones((2, 64), scales_dtype.numpy)),
    ]
    if qzeros:
        tensors.append((f"{M}.qzeros", I32, _pack_out(np.zeros((2, 64), np.uint8), 4)))
    if g_idx is not None:
        tensors.append((f"{M}.g_idx", I32, np.asarray(g_idx, np.int32)))
    folder(path, tensors, {"quant_method": method, "bits": bits, "group_size": 32})
    return path


@pytest.mark.parametrize(
    ("kw", "why"),
    [
        ({"method": "awq", "bits": 8}, "8-bit AWQ packing is not read yet"),
        ({"qzeros": False}, "needs scales and qzeros"),
        ({"scales_dtype": DTYPES["F32"]}, "scales are F32 [2, 64], not F16 [groups, 64]"),
        ({"g_idx": np.arange(63) // 32}, "g_idx names groups outside 0…1"),
        ({"g_idx": np.minimum(np.arange(64) // 16, 2)}, "g_idx names groups outside 0…1"),
        ({"g_idx": np.arange(64) // 32 - 1}, "g_idx names groups outside 0…1"),
    ],
    ids=["awq-8-bit", "no-qzeros", "f32-scales", "short-g_idx", "g_idx-past-last", "g_idx-below-0"],
)
def test_companions_that_do_not_fit_are_refused_with_what_is_wrong(tmp_path, kw, why):
    """Each refusal names its cause (a g_idx naming group 2 of groups 0…1 included: the last
    valid group is 1), before anything is written."""
    from inspector.core.cast.job import cast_checkpoint
    from inspector.core.errors import CheckpointError

    _gptq_folder(tmp_path / "q", **kw)
    with open_checkpoint(str(tmp_path / "q")) as ckpt, pytest.raises(CheckpointError) as e:
        run_job(cast_checkpoint(ckpt, DTYPES["F16"], str(tmp_path / "out")))
    assert why in str(e.value)
    assert not (tmp_path / "out").exists()


def test_awq_gemm_equals_the_published_torch_formula(tmp_path):
    rng = np.random.default_rng(8)
    n_in, n_out, group = 256, 128, 64
    codes = rng.integers(0, 16, (n_in, n_out), dtype=np.uint8)
    zeros = rng.integers(0, 16, (n_in // group, n_out), dtype=np.uint8)
    scales = (rng.random((n_in // group, n_out)) * 0.01).astype(np.float16)
    tensors = [
        (f"{M}.qweight", I32, _pack_cols(codes, AWQ_PACK)),
        (f"{M}.qzeros", I32, _pack_cols(zeros, AWQ_PACK)),
        (f"{M}.scales", F16, scales),
    ]
    qc = {"quant_method": "awq", "bits": 4, "group_size": group, "version": "gemm",
          "zero_point": True}  # fmt: skip
    folder(tmp_path / "q", tensors, qc)
    for target in ("F16", "BF16"):
        got, _ = _cast(tmp_path / "q", tmp_path / f"plain-{target}", target)
        t = {name: torch.from_numpy(v) for name, _, v in tensors}
        want = _awq_reference(t[f"{M}.qweight"], t[f"{M}.qzeros"], t[f"{M}.scales"], group)
        dtype = {"F16": torch.float16, "BF16": torch.bfloat16}[target]
        assert torch.equal(got[f"{M}.weight"], want.to(dtype)), target
    # the values are the codes minus their zero, times the scale: check one by hand
    i, o = 70, 9
    expected = np.float16(scales[i // group, o]) * np.float16(
        int(codes[i, o]) - int(zeros[i // group, o])
    )
    assert float(got[f"{M}.weight"][o, i]) == pytest.approx(float(expected), rel=1e-2)


def test_awq_gemv_and_3_bit_gptq_are_refused_by_name(tmp_path):
    from inspector.core.cast.job import cast_checkpoint
    from inspector.core.errors import CheckpointError
    from tests.quant_folders import gptq_tensors

    for name, qc, why in (
        ("gemv", {"quant_method": "awq", "bits": 4, "group_size": 32, "version": "gemv"},
         "AWQ version 'gemv'"),
        ("three", {"quant_method": "gptq", "bits": 3, "group_size": 32}, "3-bit GPTQ"),
    ):  # fmt: skip
        folder(tmp_path / name, gptq_tensors(), qc)
        with open_checkpoint(str(tmp_path / name)) as ckpt, pytest.raises(CheckpointError) as e:
            run_job(cast_checkpoint(ckpt, DTYPES["F16"], str(tmp_path / f"out-{name}")))
        assert why in str(e.value)
        assert not (tmp_path / f"out-{name}").exists()


def test_storage_figures_count_the_unpacked_codes(tmp_path):
    from inspector.core.quant.of_checkpoint import quant_layout
    from inspector.core.quant.storage_figures import storage_figures

    rng = np.random.default_rng(9)
    codes = rng.integers(1, 15, (128, 64), dtype=np.uint8)  # never 0 or 15 ...
    codes[5, 7] = 15  # ... but here
    tensors = [
        (f"{M}.qweight", I32, _pack_cols(codes, AWQ_PACK)),
        (f"{M}.qzeros", I32, _pack_cols(np.full((2, 64), 8, np.uint8), AWQ_PACK)),
        (f"{M}.scales", F16, np.full((2, 64), 0.01, np.float16)),
    ]
    folder(tmp_path / "q", tensors, {"quant_method": "awq", "bits": 4, "group_size": 64})
    with open_checkpoint(str(tmp_path / "q")) as ckpt:
        w = quant_layout(ckpt).weights[f"{M}.weight"]
        got = storage_figures(ckpt, w)
    assert (got.codes_used, got.codes_possible, got.saturated) == (15, 16, 1)
    assert got.scale_min == got.scale_max == float(np.float16(0.01))


def test_an_infinite_scale_gives_inf_and_nan_values_without_a_warning(tmp_path):
    """A scale of inf over codes equal to their zero is inf × 0: NaN, numpy's "invalid value";
    the values say it (the statistics count NaN), no RuntimeWarning is printed."""
    import warnings

    from inspector.core.quant.of_checkpoint import quant_layout
    from inspector.core.quant.values import dequantized_f32

    codes = np.full((64, 64), 8, np.uint8)
    codes[0] = 9  # input 0: code - zero = 1
    scales = np.ones((1, 64), np.float16)
    scales[0, 5] = np.inf  # output 5
    tensors = [
        (f"{M}.qweight", I32, _pack_rows(codes)),
        (f"{M}.qzeros", I32, _pack_out(np.full((1, 64), 8, np.uint8), 4)),
        (f"{M}.scales", F16, scales),
    ]
    folder(tmp_path / "q", tensors, {"quant_method": "gptq", "bits": 4, "group_size": 64,
                                     "checkpoint_format": "gptq_v2"})  # fmt: skip
    with open_checkpoint(str(tmp_path / "q")) as ckpt, warnings.catch_warnings():
        warnings.simplefilter("error")
        w = quant_layout(ckpt).weights[f"{M}.weight"]
        values = np.concatenate(list(dequantized_f32(ckpt, w))).reshape(64, 64)
    assert values[5, 0] == np.inf and np.isnan(values[5, 1:]).all()
    assert values[4, 0] == 1.0 and (values[4, 1:] == 0).all()


def test_a_g_idx_stored_as_a_column_reads_as_the_inputs_groups(tmp_path):
    """g_idx [in, 1] holds the same group of each input as g_idx [in]: the same values, each
    input scaled by its own group's scale (1 for inputs 0…31, 2 for 32…63)."""
    from safetensors.torch import load_file

    from inspector.core.cast.job import cast_checkpoint

    g_idx = (np.arange(64) // 32).astype(np.int32)
    scales = np.repeat(np.array([[1.0], [2.0]], np.float16), 64, axis=1)
    got = []
    for name, stored in (("flat", g_idx), ("column", g_idx.reshape(64, 1))):
        tensors = [
            (f"{M}.qweight", I32, _pack_rows(np.full((64, 64), 3, np.uint8))),
            (f"{M}.qzeros", I32, _pack_out(np.zeros((2, 64), np.uint8), 4)),  # zero point 1
            (f"{M}.scales", F16, scales),
            (f"{M}.g_idx", I32, stored),
        ]
        folder(tmp_path / name, tensors, {"quant_method": "gptq", "bits": 4, "group_size": 32})
        with open_checkpoint(str(tmp_path / name)) as ckpt:
            run_job(cast_checkpoint(ckpt, DTYPES["F16"], str(tmp_path / f"out-{name}")))
        got.append(load_file(tmp_path / f"out-{name}" / "model.safetensors")[f"{M}.weight"])
    want = torch.tensor([2.0] * 32 + [4.0] * 32, dtype=torch.float16).expand(64, 64)
    assert torch.equal(got[0], want) and torch.equal(got[1], want)
