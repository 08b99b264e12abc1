"""The numpy dequantization kernels against references written another way: compressed-tensors'
int32 packing as one little-endian bit stream per row, built with Python integers; and values
that overflow to infinity, as the references' do, without numpy warnings on the terminal."""

from __future__ import annotations

import warnings

import ml_dtypes
import numpy as np
import pytest

from inspector.core.opening import open_checkpoint
from inspector.core.quant.kernels import unpack_int32, unpack_int32_rows
from inspector.core.quant.of_checkpoint import quant_layout
from inspector.core.quant.values import dequantized_f32
from tests.quant_folders import F8, F32, I8, U8, folder


def _pack_stream(values: list[int], bits: int, words: int) -> list[int]:
    """``values`` at bit ``i * bits`` of one integer, cut into 32-bit little-endian words."""
    stream = sum(v << (i * bits) for i, v in enumerate(values))
    return [(stream >> (32 * k)) & 0xFFFFFFFF for k in range(words)]


@pytest.mark.parametrize("bits", [3, 5, 6, 7])
def test_codes_that_straddle_two_words_take_their_high_bits_from_the_next(bits):
    """With bits that do not divide 32 a code starts in one word and ends in the next (3-bit
    code 10 is bits 30 to 32): its high bits come from the following word, shifted up."""
    rng = np.random.default_rng(bits)
    cols = 40
    words = -(-cols * bits // 32)
    rows = [rng.integers(0, 1 << bits, cols).tolist() for _ in range(2)]
    packed = np.array([_pack_stream(r, bits, words) for r in rows], np.uint32).view(np.int32)
    want = np.array(rows, np.int64) - (1 << (bits - 1))
    got = unpack_int32(packed, bits, cols)
    assert got.tolist() == want.tolist()
    assert unpack_int32_rows(np.ascontiguousarray(packed.T), bits, cols).T.tolist() == want.tolist()


def _ct_fp4(fmt: str, group: int) -> dict:
    return {"quant_method": "compressed-tensors", "format": fmt, "config_groups": {"g": {
        "targets": ["Linear"], "weights": {"num_bits": 4, "type": "float", "strategy": "group",
                                           "group_size": group}}}}  # fmt: skip


@pytest.mark.parametrize(
    ("qc", "tensors"),
    [
        (_ct_fp4("nvfp4-pack-quantized", 16), [  # 448 / 1e-38 overflows F32
            ("m.weight_packed", U8, np.full((2, 8), 0x77, np.uint8)),  # 6.0, 6.0
            ("m.weight_scale", F8, np.full((2, 1), 448, ml_dtypes.float8_e4m3fn)),
            ("m.weight_global_scale", F32, np.array([1e-38], np.float32))]),
        (_ct_fp4("mxfp4-pack-quantized", 32), [  # 2 ** (255 - 127) overflows F32
            ("m.weight_packed", U8, np.full((2, 16), 0x77, np.uint8)),
            ("m.weight_scale", U8, np.full((2, 1), 255, np.uint8))]),
        ({"quant_method": "fp8", "weight_block_size": [2, 2]}, [  # 448 × 3e38
            ("m.weight", F8, np.full((2, 2), 448, ml_dtypes.float8_e4m3fn)),
            ("m.weight_scale_inv", F32, np.full((1, 1), 3e38, np.float32))]),
        ({"quant_method": "compressed-tensors", "format": "int-quantized", "config_groups": {
            "g": {"targets": ["Linear"], "weights": {"num_bits": 8, "type": "int",
                                                     "strategy": "channel"}}}}, [  # 127 × 3e38
            ("m.weight", I8, np.full((2, 2), 127, np.int8)),
            ("m.weight_scale", F32, np.full((2, 1), 3e38, np.float32))]),
    ],
    ids=["nvfp4", "mxfp4", "fp8-block", "int8-channel"],
)  # fmt: skip
def test_scales_that_overflow_give_infinities_without_numpy_warnings(tmp_path, qc, tensors):
    folder(tmp_path / "q", tensors, qc)
    with open_checkpoint(str(tmp_path / "q")) as ckpt:
        layout = quant_layout(ckpt)
        assert layout is not None and layout.cast_refusal() is None
        (w,) = layout.weights.values()
        with warnings.catch_warnings():
            warnings.simplefilter("error", RuntimeWarning)
            got = np.concatenate(list(dequantized_f32(ckpt, w)))
    assert got.size == 2 * (w.shape[-1]) and np.isposinf(got).all()
