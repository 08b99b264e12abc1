"""burn's quantized tensors (QFloat): byte sizes, scheme descriptors and dequantized values,
against burn's own code (tests/data/burn/qfloat_gen: burn's functions transcribed) and burn's
own unit-test vectors."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from inspector.core.errors import CheckpointError
from inspector.core.formats.burnpack import burnpack_facts
from inspector.core.formats.burnpack.qfloat import QFloatError, parse_qfloat
from inspector.core.formats.burnpack.tensor import BurnQuantInfo
from inspector.core.opening import open_checkpoint
from inspector.core.quant import burn_qfloat
from inspector.core.quant.recognise import recognise
from inspector.core.quant.schemes import QuantScheme
from inspector.core.quant.storage_figures import storage_figures
from inspector.core.quant.values import dequantized_f32
from tests.burnpack_files import BurnTensor, burnpack_bytes, write_burnpack

DATA = Path(__file__).parents[2] / "data" / "burn"
QFLOAT, EXPECTED = DATA / "qfloat.bpk", DATA / "qfloat_expected.bpk"


def scheme(value="Q8S", store="Native", mode="Symmetric", tensor=None, block=None, dtype="F32"):
    blk = None
    if block is not None:
        blk = {"size": {"storage": list(block) + [1] * (5 - len(block)), "len": len(block)},
               "dtype": dtype}  # fmt: skip
    return {"value": value, "store": store, "mode": mode, "tensor": tensor, "block": blk}


def quantized_file(tmp_path, shape, data: bytes, **kw) -> Path:
    return write_burnpack(
        tmp_path / "q.bpk", [BurnTensor("w", {"QFloat": scheme(**kw)}, shape, data)]
    )


def values_of(path: Path, chunk_bytes: int = 1 << 20) -> dict[str, np.ndarray]:
    with open_checkpoint(path) as ckpt:
        layout = recognise(ckpt.tensors)
        assert layout is not None
        return {
            name: np.concatenate([*dequantized_f32(ckpt, w, chunk_bytes), np.empty(0, np.float32)])
            for name, w in layout.weights.items()
        }


def test_every_value_is_what_burn_computes_bit_for_bit():
    """12 tensors, 884 values: Q8S/Q8F per tensor (F32, F16 scales, u32-packed), per block (1-,
    2- and 3-D blocks, a partial block, F16 and BF16 scales, a block of zeros whose scale burn
    reads as 0.1), two-level (UE4M3 × F32), Q4S/Q4F/Q2S packed in u32."""
    got = values_of(QFLOAT)
    with open_checkpoint(EXPECTED) as want:
        names = [t.name for t in want.tensors if t.name != "bias"]
        assert sorted(got) == sorted(names) and len(names) == 12
        total = 0
        for name in names:
            expected = np.array(want.view(name)).reshape(-1)
            assert got[name].tobytes() == expected.tobytes(), name
            total += expected.size
    assert total == 884


def test_values_do_not_depend_on_how_the_rows_are_cut():
    whole, small = values_of(QFLOAT), values_of(QFLOAT, chunk_bytes=16)
    assert all(whole[k].tobytes() == small[k].tobytes() for k in whole)


def test_listed_as_quantized_weights_with_burns_byte_sizes():
    with open_checkpoint(QFLOAT) as ckpt:
        layout = recognise(ckpt.tensors)
        assert layout is not None and layout.cast_refusal() is None
        assert layout.scheme_text == "burn QFloat Q2S×1, Q4F×1, Q4S×1, Q8F×2, Q8S×7"
        w = layout.weights["q8s_block32"]
        assert w.scheme is QuantScheme.BURN and w.shape == (4, 64) and w.params == 256
        assert w.storage() == "QFloat(Q8S, block 32), 9 bits/weight"  # 256 codes + 8 F32 scales
        assert w.to_json() == {"scheme": "burn-qfloat", "storage_dtype": "QFloat(Q8S, block 32)",
                               "bits_per_weight": 9.0, "block": [32], "companions": []}  # fmt: skip
        two = layout.weights["q8s_two_level"]
        assert two.codes.nbytes == 64 + 4 + 4  # codes, 4 UE4M3 block scales, the F32 global
        assert two.storage().startswith("QFloat(Q8S, block 16 × tensor F32, scales UE4M3)")
        assert "bias" not in layout.weights
        figures = storage_figures(ckpt, w)  # 8 scales, one of them 0 (the block of zeros)
        assert figures.bad_scales == 1 and figures.codes_possible == 255


@pytest.mark.parametrize(
    ("shape", "kw", "nbytes"),
    [
        # quantized_data_len's own comment: [3, 3] Q4 PackedU32 is 3 words, one a row
        ((3, 3), {"value": "Q4S", "store": {"PackedU32": 0}}, 3 * 4 + 4),
        # burn-std's should_pack_unpack_two_level_scales: 8 values, 2 UE4M3 scales, an F32 global
        ((8,), {"tensor": "F32", "block": [4], "dtype": "UE4M3"}, 8 + 2 + 4),
        # a partial block still takes a scale (cubecl's a_partial_block_still_takes_a_scale)
        ((8, 70), {"block": [32], "dtype": "F16"}, 560 + 8 * 3 * 2),
        ((4, 8, 64), {"block": [4, 32]}, 2048 + 4 * 2 * 2 * 4),
        ((5,), {"store": {"PackedU32": 0}}, 8 + 4),  # Q8 in u32 words: the row padded
        ((), {}, 1 + 4),
        ((), {"store": {"PackedU32": 0}}, 4 + 4),  # a scalar: one word, no row to pad
        # FP4 two to a byte, each row padded to whole bytes: 3 rows of 2 bytes, not 5 bytes
        ((3, 3), {"value": "E2M1", "store": {"PackedNative": 0}}, 3 * 2 + 4),
    ],
)
def test_byte_size_is_burns_quantized_data_len(shape, kw, nbytes):
    assert parse_qfloat(scheme(**kw)).data_len(shape) == nbytes


def test_burns_unit_test_vectors():
    q8s = parse_qfloat(scheme(store={"PackedU32": 0}))
    word = np.array([2147287680], "<u4").view(np.uint8)  # should_unpack_u32s_to_i8s
    assert burn_qfloat.codes_of(q8s, word, 1, 4).tolist() == [[-128, 2, -3, 127]]
    words = np.array(  # should_unpack_u32s_to_i8s_arange (Q4S)
        [0, 286331136, 286331153, 572657937, 572662306, 857874978, 858993459, 858993459,
         1145324612, 1145324612, 1431655748, 1431655765, 1717982549, 1717986918, 2003199590,
         2004318071], "<u4")  # fmt: skip
    q4s = parse_qfloat(scheme(value="Q4S", store={"PackedU32": 0}))
    codes = burn_qfloat.codes_of(q4s, words.view(np.uint8), 1, 128).reshape(-1)
    assert codes.tolist() == [0] * 10 + [1] * 18 + [2] * 18 + [3] * 18 + [4] * 18 + [5] * 18 \
        + [6] * 18 + [7] * 10  # fmt: skip


def test_burn_ndarrays_symmetric_dequantize_vector(tmp_path):
    """burn-ndarray's test_int8_symmetric_quantization: scale (1.8 + 1.8) / 254 in f32."""
    scale = (np.float32(1.8) + np.float32(1.8)) / np.float32(254)
    codes = np.array([-127, -71, 0, 35], np.int8)
    path = quantized_file(tmp_path, [4], codes.tobytes() + scale.tobytes())
    got = values_of(path)["w"]
    assert got.tolist() == np.array([-1.8, -1.0062993, 0.0, 0.496063], np.float32).tolist()


@pytest.mark.parametrize("value", ["Q8S", "Q8F"])
def test_a_zero_scale_is_read_only_over_zero_codes(tmp_path, value):
    """burn's CPU backend reads a 0 scale as 0.1 (valid_scale), its GPU kernels as 0: the same
    values for a block of zero codes and a +0 scale (what burn's quantizer writes), not else."""
    zeros = np.zeros(4, np.int8).tobytes()
    path = quantized_file(tmp_path, [4], zeros + np.float32(0).tobytes(), value=value)
    assert values_of(path)["w"].tobytes() == bytes(16)
    for codes, scale in ((np.array([5, -3, 0, 1], np.int8).tobytes(), 0.0), (zeros, -0.0)):
        path = quantized_file(tmp_path, [4], codes + np.float32(scale).tobytes(), value=value)
        with pytest.raises(CheckpointError, match="a block whose scale is 0 holds codes that are "
                           r"not 0 \(or its 0 is -0\)"):  # fmt: skip
            values_of(path)


def test_scale_dtypes_widen_as_burn_decodes_them(tmp_path):
    """F16 and BF16 exactly; UE4M3 as the float8 crate reads E4M3 (0x7E is 448, 0x7F NaN)."""
    codes = np.array([1, -2, 3, 4], np.int8)
    for dtype, raw, scale in (
        ("F16", np.float16(0.3).tobytes(), np.float32(np.float16(0.3))),
        ("BF16", b"\x9a\x3e", np.uint32(0x3E9A0000).view(np.float32)),
        ("UE4M3", b"\x7e", np.float32(448)),
    ):
        path = quantized_file(tmp_path, [4], codes.tobytes() + raw, block=[4], dtype=dtype)
        assert values_of(path)["w"].tobytes() == (scale * codes.astype(np.float32)).tobytes()
    path = quantized_file(tmp_path, [4], codes.tobytes() + b"\x7f", block=[4], dtype="UE4M3")
    assert np.isnan(values_of(path)["w"]).all()


@pytest.mark.parametrize(
    ("shape", "data_len", "kw", "why"),
    [
        ([4], 8, {"value": "E4M3"}, "burn's CPU backend does not dequantize E4M3 values"),
        ([4], 8, {"mode": "Lookup"}, "lookup-table values (the table is not in the tensor) are not read"),
        ([4], 5, {"tensor": "UE8M0"}, "burn does not decode UE8M0 scales"),
        ([8], 8 + 1 + 2, {"tensor": "F16", "block": [8], "dtype": "UE4M3"},
         "burn stores a two-level scheme's per-tensor scale as F32 only"),
        ([4], 8, {"store": {"PackedNative": 0}},
         "burn unpacks values packed along the innermost dimension into u32 only"),
        ([2, 4], 16 + 4, {"store": {"PackedU32": 1}},  # dim 0 packed: one row of words
         "burn unpacks values packed along the innermost dimension into u32 only"),
        ([4], 8, {"value": "Q4S"}, "burn stores Q4S values packed in u32 only"),
        ([2, 12], 16 + 4, {"value": "Q4S", "store": {"PackedU32": 0}},
         "its last dimension (12) is not a multiple of 8 values a word: burn pads each row, then "
         "unpacks without the padding"),
    ],
)  # fmt: skip
def test_schemes_burn_does_not_dequantize_are_listed_and_refused_by_name(
    tmp_path, shape, data_len, kw, why
):
    path = quantized_file(tmp_path, shape, bytes(data_len), **kw)
    with open_checkpoint(path) as ckpt:
        (t,) = ckpt.tensors
        assert isinstance(t, BurnQuantInfo) and t.logical == tuple(shape)
        layout = recognise(ckpt.tensors)
        assert layout is not None
        refusal = layout.cast_refusal()
        assert refusal == (
            f"tensor 'w' is {t.scheme.describe()}: {why}; a cast would have to guess its "
            "values, so it is refused"
        )


def test_a_zero_scale_over_packed_codes_that_are_not_0_is_refused(tmp_path):
    """As for 8-bit values, with the codes read from their u32 words."""
    zeros = np.zeros(2, "<u4").tobytes()
    scales = np.array([0.0, 0.5], np.float32).tobytes()
    path = quantized_file(tmp_path, [2, 8], zeros + scales, value="Q4S", store={"PackedU32": 0},
                          block=[8])  # fmt: skip
    assert values_of(path)["w"].tobytes() == bytes(64)
    codes = np.array([0x10, 0], "<u4").tobytes()  # one code 1 in the block whose scale is 0
    path = quantized_file(tmp_path, [2, 8], codes + scales, value="Q4S", store={"PackedU32": 0},
                          block=[8])  # fmt: skip
    with open_checkpoint(path) as ckpt:
        layout = recognise(ckpt.tensors)
        assert layout is not None and layout.cast_refusal() is None
        with pytest.raises(CheckpointError) as e:
            next(dequantized_f32(ckpt, layout.weights["w"]))
    assert e.value.reason == (
        "'w' (burn QFloat): QFloat(Q4S, block 8, packed u32): a block whose scale is 0 holds "
        "codes that are not 0 (or its 0 is -0), which burn's CPU backend reads as 0.1 × code and "
        "its GPU kernels as 0"
    )


def test_unknown_scheme_fields_are_named():
    with pytest.raises(QFloatError) as e:
        parse_qfloat(scheme() | {"extra": 1, "z" * 50: 2})
    assert str(e.value) == "its scheme has fields burn does not write: extra, " + "z" * 40
    assert parse_qfloat({"value": "Q8S", "store": "Native", "mode": "Symmetric"}).block is None


def _size(storage: list[int], n: int, **extra) -> dict:
    return {"storage": storage, "len": n, **extra}


_BLOCK4 = _size([4, 1, 1, 1, 1], 1)
_BURNS = "is not one of burn's"


@pytest.mark.parametrize(
    ("base", "fields", "why"),
    [
        ("scheme", {"store": {"PackedU32": 0, "PackedNative": 0}},
         "store {'PackedNative': 0, 'PackedU32': 0} is not Native, {PackedU32: dim} or {PackedNative: dim}"),
        ("scheme", {"store": {"PackedU32": 64}},  # dimension 64 is a 65th: no tensor has one
         "store {'PackedU32': 64} is not Native, {PackedU32: dim} or {PackedNative: dim}"),
        ("scheme", {"block": {"size": _BLOCK4, "dtype": "F32", "x": 0}},
         "block {'dtype': 'F32', 'size': {'len': 1, 'storage': [4, 1, 1, 1, 1]}, 'x': 0} is not {size, dtype}"),
        ("scheme", {"block": {"size": _BLOCK4, "dtype": "F8"}},
         f"block scale 'F8' {_BURNS} (F32, F16, BF16, UE8M0, UE4M3)"),
        ("scheme", {"block": {"size": _size([4, 1, 1, 1, 1], 1, x=0), "dtype": "F32"}},
         "block size {'len': 1, 'storage': [4, 1, 1, 1, 1], 'x': 0} is not {storage, len}"),
        ("scheme", {"block": {"size": _size([4, 1, 1, 1, 1], 6), "dtype": "F32"}},
         "block size {'len': 6, 'storage': [4, 1, 1, 1, 1]} is not 5 bytes and a length up to 5"),
        ("scheme", {"block": {"size": _size([256, 1, 1, 1, 1], 1), "dtype": "F32"}},
         "block size {'len': 1, 'storage': [256, 1, 1, 1, 1]} is not 5 bytes and a length up to 5"),
        ("legacy", {"value": "Q3S"},
         f"value 'Q3S' {_BURNS} (Q8F, Q8S, Q4F, Q4S, Q2F, Q2S, E4M3, E5M2, E2M1)"),
        ("legacy", {"mode": "Asymmetric"}, f"mode 'Asymmetric' {_BURNS} (Symmetric, Lookup)"),
        ("legacy", {"param": "F8"}, f"param 'F8' {_BURNS} (F32, F16, BF16, UE8M0, UE4M3)"),
        ("legacy", {"level": {"Block": _BLOCK4, "Channel": 1}},
         "level {'Block': {'len': 1, 'storage': [4, 1, 1, 1, 1]}, 'Channel': 1} is not Tensor or {Block: size}"),
        ("legacy", {"level": {"Channel": 1}}, "level {'Channel': 1} is not Tensor or {Block: size}"),
    ],
)  # fmt: skip
def test_a_scheme_burn_would_not_read_is_refused_with_what_is_wrong(base, fields, why):
    """Each field judged whole: a map with one more key, a byte past 255, a length past 5, a
    packed dimension past 63 is refused (burn's serde would not read it), named as it is."""
    with pytest.raises(QFloatError) as e:
        parse_qfloat((legacy() if base == "legacy" else scheme()) | fields)
    assert str(e.value) == why


@pytest.mark.parametrize(
    ("raw", "text"),
    [
        ({"block": {"size": _size([1, 1, 1, 1, 1], 0), "dtype": "F32"}}, "QFloat(Q8S, block 1)"),
        ({"block": {"size": _size([2, 3, 4, 5, 255], 5), "dtype": "F32"}},
         "QFloat(Q8S, block 2×3×4×5×255)"),
        ({"mode": "Lookup"}, "QFloat(Q8S, tensor, lookup)"),
        ({"store": {"PackedU32": 63}}, "QFloat(Q8S, tensor, packed u32 dim 63)"),
    ],
)  # fmt: skip
def test_schemes_at_the_edges_of_burns_fields_are_read_and_described(raw, text):
    """A block of 0 to 5 dimensions of 1 to 255, a packed dimension up to 63: all burn's."""
    assert parse_qfloat(scheme() | raw).describe() == text


def test_a_native_store_packs_along_no_dimension():
    assert parse_qfloat(scheme()).packed_dim == 0
    assert parse_qfloat(legacy()).packed_dim == 0


def test_a_quantized_tensors_burn_dtype_is_described_by_its_scheme(tmp_path):
    path = quantized_file(tmp_path, [4], bytes(4 + 2), block=[4], dtype="F16", mode="Lookup")
    with open_checkpoint(path) as ckpt:
        facts = burnpack_facts(ckpt.files[0])
        assert facts.dtype_text("w", "U8") == "QFloat(Q8S, block 4, scales F16, lookup)"


def test_64_dimensions_are_read_65_are_not(tmp_path):
    """torch's limit, and this reader's: a quantized tensor of 64 dimensions is read (65 are
    refused: qfloat-65-dims in the corpus)."""
    shape = [1] * 63 + [4]
    with open_checkpoint(quantized_file(tmp_path, shape, bytes(8))) as ckpt:
        (t,) = ckpt.tensors
        assert t.logical == tuple(shape) and t.shape == (8,)


def test_an_empty_block_quantized_tensor_is_read(tmp_path):
    """No value, so no block and no scale: 0 bytes, listed as 0 bytes of U8."""
    with open_checkpoint(quantized_file(tmp_path, [0, 64], b"", block=[32])) as ckpt:
        (t,) = ckpt.tensors
        assert (t.logical, t.shape, t.dtype.name, t.data_offsets) == ((0, 64), (0,), "U8", (0, 0))
    assert values_of(tmp_path / "q.bpk")["w"].size == 0  # and dequantized: no value


def legacy(value="Q8S", store="Native", level="Tensor", param="F32"):
    """burn 0.20/0.21's scheme (cubecl 0.9/0.10)."""
    if isinstance(level, list):
        level = {"Block": {"storage": level + [1] * (5 - len(level)), "len": len(level)}}
    return {"value": value, "param": param, "store": store, "level": level, "mode": "Symmetric"}


def test_burn_0_21_layout_reads_where_it_is_this_layout(tmp_path):
    """burn 0.21 wrote values, then F32 scales; where its values need no padding and its
    blocks are runs along the last dimension, the bytes and the values are the same."""
    with open_checkpoint(QFLOAT) as ckpt:
        raw = {t.name: bytes(np.array(ckpt.view(t))) for t in ckpt.tensors}
    tensors = [
        BurnTensor("q8s_tensor", {"QFloat": legacy()}, [4, 16], raw["q8s_tensor"]),
        BurnTensor("q8s_block32", {"QFloat": legacy(level=[32])}, [4, 64], raw["q8s_block32"]),
        BurnTensor("q4s_block16_packed", {"QFloat": legacy("Q4S", {"PackedU32": 0}, [16])}, [4, 32],
                   raw["q4s_block16_packed"]),
    ]  # fmt: skip
    got = values_of(write_burnpack(tmp_path / "old.bpk", tensors))
    with open_checkpoint(EXPECTED) as want:
        for name, values in got.items():
            assert values.tobytes() == np.array(want.view(name)).tobytes(), name
    with open_checkpoint(tmp_path / "old.bpk") as ckpt:
        assert ckpt.tensors[1].scheme.describe() == "QFloat(Q8S, block 32, burn 0.21)"


def test_burn_0_21_packed_per_tensor_and_f16_block_scales_are_sized_as_it_wrote_them(tmp_path):
    """The earlier layout's store and param are kept whatever its level: u32 words for packed
    values (and their dimension), F16 for the block scales it names."""
    q4 = BurnTensor("q4", {"QFloat": legacy("Q4S", {"PackedU32": 0})}, [4, 8], bytes(16 + 4))
    path = write_burnpack(tmp_path / "old.bpk", [q4])
    with open_checkpoint(path) as ckpt:
        assert ckpt.tensors[0].scheme.describe() == "QFloat(Q4S, tensor, packed u32, burn 0.21)"
    dim1 = parse_qfloat(legacy("Q4S", {"PackedU32": 1}))
    assert dim1.describe() == "QFloat(Q4S, tensor, packed u32 dim 1, burn 0.21)"
    f16 = parse_qfloat(legacy(level=[4], param="F16"))
    assert f16.describe() == "QFloat(Q8S, block 4, scales F16, burn 0.21)"
    assert f16.data_len((8,)) == 8 + 2 * 2


@pytest.mark.parametrize(
    ("shape", "data_len", "kw", "why"),
    [
        ([3], 4 + 4, {}, "burn 0.21 sized its values padded to 4 bytes but wrote the scales right "
                         "after them"),
        ([4], 4 + 2, {"param": "F16"}, "burn 0.21 wrote F32 scales whatever param said"),
        ([4, 4], 16 + 4 * 4, {"level": [2, 2]}, "burn 0.21's blocks are flat runs of the values, "
                                                  "not this block"),
        ([2, 6], 12 + 2 * 2 * 4, {"level": [4]}, "burn 0.21's blocks are flat runs of the values, "
                                                 "not this block"),
    ],
)  # fmt: skip
def test_burn_0_21_layout_refused_where_it_differs(tmp_path, shape, data_len, kw, why):
    path = write_burnpack(
        tmp_path / "q.bpk", [BurnTensor("w", {"QFloat": legacy(**kw)}, shape, bytes(data_len))]
    )
    with open_checkpoint(path) as ckpt:
        layout = recognise(ckpt.tensors)
        assert layout is not None and layout.cast_refusal() is not None
        assert layout.cast_refusal().endswith(
            f"{why}; a cast would have to guess its values, so it is refused"
        )


def test_a_scalar_is_one_value_and_one_scale(tmp_path):
    """A rank-0 QFloat tensor: one code, one scale, one row of one column."""
    path = quantized_file(tmp_path, [], np.int8(-3).tobytes() + np.float32(0.5).tobytes())
    assert values_of(path)["w"].tolist() == [-1.5]
    with open_checkpoint(path) as ckpt:
        layout = recognise(ckpt.tensors)
        assert layout is not None
        figures = storage_figures(ckpt, layout.weights["w"])
        assert (figures.codes_used, figures.scale_min, figures.scale_max) == (1, 0.5, 0.5)
    path = quantized_file(tmp_path, [], bytes(1) + np.float32(0).tobytes())
    assert values_of(path)["w"].tobytes() == bytes(4)  # a 0 code under a 0 scale: +0
    path = quantized_file(tmp_path, [], np.int8(5).tobytes() + np.float32(0).tobytes())
    with pytest.raises(
        CheckpointError, match="a block whose scale is 0 holds codes that are not 0"
    ):
        values_of(path)


def test_a_packed_scalar_is_refused_as_a_row_of_one_value(tmp_path):
    path = quantized_file(tmp_path, [], bytes(4 + 4), store={"PackedU32": 0})
    with open_checkpoint(path) as ckpt:
        layout = recognise(ckpt.tensors)
        assert layout is not None
        assert layout.cast_refusal() == (
            "tensor 'w' is QFloat(Q8S, tensor, packed u32): its last dimension (1) is not a "
            "multiple of 4 values a word: burn pads each row, then unpacks without the padding; "
            "a cast would have to guess its values, so it is refused"
        )


def test_a_scale_of_exactly_1_is_not_taken_for_a_zero_scale(tmp_path):
    codes = np.array([[-128, 1], [0, 127]], np.int8)
    path = quantized_file(tmp_path, [2, 2], codes.tobytes() + np.float32(1).tobytes(), value="Q8F")
    assert values_of(path)["w"].tolist() == [-128.0, 1.0, 0.0, 127.0]


def test_a_single_column_is_dequantized_not_dropped(tmp_path):
    codes = np.array([[7], [-7], [2]], np.int8)
    path = quantized_file(tmp_path, [3, 1], codes.tobytes() + np.float32(0.25).tobytes())
    assert values_of(path)["w"].tolist() == [1.75, -1.75, 0.5]


def test_a_ue4m3_nan_scale_is_the_float8_crates_canonical_nan_whatever_its_sign(tmp_path):
    """0x7F and 0xFF are E4M3's NaNs; the float8 crate widens both to f16's 0x7FFF, so each
    value of those blocks is the f32 NaN 0x7FFFE000 (not numpy's 0x7FC00000, not negative)."""
    codes = np.array([1, -2, 3, 4, 1, 2, -3, 0], np.int8)
    path = quantized_file(tmp_path, [8], codes.tobytes() + b"\x7f\xff", block=[4], dtype="UE4M3")
    assert values_of(path)["w"].view(np.uint32).tolist() == [0x7FFFE000] * 8


@pytest.mark.parametrize(
    ("dtype", "block_scales"),
    [
        ("UE4M3", b"\x7e\x38"),  # 448 and 1.0
        ("F16", np.array([448, 1], np.float16).tobytes()),
        ("F32", np.array([448, 1], np.float32).tobytes()),
    ],
    ids=["UE4M3", "F16", "F32"],
)
def test_values_that_overflow_to_infinity_are_computed_without_numpy_warnings(
    tmp_path, dtype, block_scales
):
    """A two-level scheme's global × block scale, and a scale × code, may overflow F32 to ±inf as
    burn's do: the values are those, and no RuntimeWarning reaches the person's terminal."""
    import warnings

    codes = np.array([1, -1, 2, 3, 1, 1, -1, 1], np.int8)
    two_level = codes.tobytes() + block_scales + np.float32(3e38).tobytes()
    path = quantized_file(tmp_path, [8], two_level, tensor="F32", block=[4], dtype=dtype)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        got = values_of(path)["w"]
    inf, big = np.float32(np.inf), np.float32(3e38)
    assert got.tolist() == [inf, -inf, inf, inf, big, big, -big, big]
    path = quantized_file(
        tmp_path, [2], np.array([127, -2], np.int8).tobytes() + np.float32(3e38).tobytes()
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        assert values_of(path)["w"].tolist() == [inf, -inf]


def test_values_of_a_scheme_that_is_not_reproduced_are_refused_with_the_file(tmp_path):
    """Reading the values (the values view, statistics) refuses what a cast refuses, naming the
    file and why, rather than guessing at codes it cannot unpack as burn does."""
    path = quantized_file(tmp_path, [4], bytes(4 + 4), value="Q4S")
    with open_checkpoint(path) as ckpt:
        layout = recognise(ckpt.tensors)
        assert layout is not None
        with pytest.raises(CheckpointError) as e:
            next(dequantized_f32(ckpt, layout.weights["w"]))
    assert e.value.path == str(path)
    assert e.value.reason == (
        "'w' (burn QFloat): QFloat(Q4S, tensor): burn stores Q4S values packed in u32 only"
    )


def test_full_range_values_can_take_every_code(tmp_path):
    """Q8F's codes run -128 … 127 (256 of them), Q8S's -127 … 127."""
    codes = np.array([-128, 0, 1, 127], np.int8)
    for value, possible in (("Q8F", 256), ("Q8S", 255)):
        path = quantized_file(tmp_path, [4], codes.tobytes() + np.float32(1).tobytes(), value=value)
        with open_checkpoint(path) as ckpt:
            layout = recognise(ckpt.tensors)
            assert layout is not None
            assert storage_figures(ckpt, layout.weights["w"]).codes_possible == possible, value


def test_burn_0_21_per_tensor_rows_of_any_width_and_one_dimensional_blocks_are_read(tmp_path):
    """Its per-tensor scale covers any last dimension (3 here, odd); a block along the only
    dimension of a 1-D tensor is a flat run of its values."""
    codes = np.arange(-6, 6, dtype=np.int8)
    odd = BurnTensor(
        "odd", {"QFloat": legacy()}, [4, 3], codes.tobytes() + np.float32(0.5).tobytes()
    )
    scales = np.array([1.0, 2.0], np.float32).tobytes()
    runs = BurnTensor("runs", {"QFloat": legacy(level=[6])}, [12], codes.tobytes() + scales)
    got = values_of(write_burnpack(tmp_path / "old.bpk", [odd, runs]))
    assert got["odd"].tolist() == (codes.astype(np.float32) * np.float32(0.5)).tolist()
    assert got["runs"].tolist() == [
        -6.0,
        -5.0,
        -4.0,
        -3.0,
        -2.0,
        -1.0,
        0.0,
        2.0,
        4.0,
        6.0,
        8.0,
        10.0,
    ]


def test_zero_scales_are_checked_in_every_block_of_rows(tmp_path):
    """The zero-scale check reads the codes 16 MiB of rows at a time: past the first block of
    rows (2,097,152 rows of 2 here) a row is read at its own place."""
    from inspector.core.quant import rows

    n = (1 << 24) // 8 + 1
    path = quantized_file(tmp_path, [n, 2], bytes(2 * n) + np.float32(0).tobytes())
    with open_checkpoint(path) as ckpt:
        layout = recognise(ckpt.tensors)
        assert layout is not None
        plan = rows.prepare(ckpt, layout.weights["w"])
        assert (plan.rows, plan.cols) == (n, 2)


def _sparse_quantized(tmp_path, n: int, data_len: int, tail: bytes, **kw) -> Path:
    """A QFloat tensor of ``n`` values and ``data_len`` bytes whose bytes are a hole but for the
    last ``len(tail)``: a large tensor on disk that costs nothing to write."""
    header = burnpack_bytes([BurnTensor("w", {"QFloat": scheme(**kw)}, [n], b"")],
                            offsets={"w": (0, data_len)})  # fmt: skip
    path = tmp_path / "big.bpk"
    with open(path, "wb") as f:
        f.write(header)
        f.truncate(len(header) + data_len - len(tail))
        f.seek(0, 2)
        f.write(tail)
    return path


def test_the_scales_not_the_values_are_held_to_1_gib(tmp_path):
    """Preparing a weight reads its scales (every byte after the values), refused past 1 GiB;
    600 MB of values and a 4-byte scale are prepared without reading a value."""
    from inspector.core.quant import rows

    n = 600_000_000
    path = _sparse_quantized(tmp_path, n, n + 4, np.float32(0.5).tobytes())
    with open_checkpoint(path) as ckpt:
        layout = recognise(ckpt.tensors)
        assert layout is not None
        plan = rows.prepare(ckpt, layout.weights["w"])
        assert (plan.rows, plan.cols) == (1, n)


def test_scales_over_1_gib_are_refused_before_they_are_read(tmp_path):
    """2**28 + 1 rows of one value, each its own block with an F32 scale: 1 GiB and 4 bytes of
    scales, refused by name before any is read (the file is a hole: nothing to read anyway)."""
    from inspector.core.quant import rows

    n = (1 << 28) + 1
    path = _sparse_quantized(tmp_path, n, 5 * n, b"", block=[1])
    with open_checkpoint(path) as ckpt:
        (t,) = ckpt.tensors
        assert t.logical == (n,)
        layout = recognise(ckpt.tensors)
        assert layout is not None
        with pytest.raises(CheckpointError) as e:
            rows.prepare(ckpt, layout.weights["w"])
    assert e.value.reason == "'w' (burn QFloat): its scales are over 1 GiB"


def test_storage_figures_count_every_row_and_the_codes_used_once(tmp_path, monkeypatch):
    """Q8S per block of 32, read one row at a time: the codes used (-127 once only, in the
    first row; 127 twice), the codes burn's symmetric range allows (255), the saturated ones
    and the scales' range."""
    from inspector.core.quant import storage_figures as sf

    monkeypatch.setattr(sf, "STATS_CHUNK_BYTES", 1)
    rng = np.random.default_rng(4)
    codes = rng.integers(-20, 21, (4, 64)).astype(np.int8)
    codes[0, 3], codes[0, 40], codes[3, 9] = -127, 127, 127
    scales = np.arange(1, 9, dtype=np.float32) / 8
    path = quantized_file(tmp_path, [4, 64], codes.tobytes() + scales.tobytes(), block=[32])
    with open_checkpoint(path) as ckpt:
        figures = storage_figures(ckpt, recognise(ckpt.tensors).weights["w"])
    assert sorted(set(codes.reshape(-1).tolist())) == [-127, *range(-20, 21), 127]
    assert (figures.codes_used, figures.codes_possible, figures.saturated) == (43, 255, 3)
    assert (figures.scale_min, figures.scale_max, figures.bad_scales) == (0.125, 1.0, 0)
