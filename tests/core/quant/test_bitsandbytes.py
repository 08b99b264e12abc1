"""bitsandbytes weights as transformers saves them: made by bitsandbytes' own quantize_4bit /
int8 quantization on the CPU, dequantized bit for bit as bitsandbytes does on the CPU."""

from __future__ import annotations

import json

import pytest

from inspector.core.dtypes import DTYPES
from inspector.core.opening import open_checkpoint
from inspector.core.progress import run_job
from tests.quant_folders import folder

torch = pytest.importorskip("torch")
bnb = pytest.importorskip("bitsandbytes")
M = "model.layers.0.mlp.up_proj"


def _as_numpy(t: torch.Tensor):
    import ml_dtypes

    if t.dtype == torch.bfloat16:
        return DTYPES["BF16"], t.view(torch.int16).numpy().view(ml_dtypes.bfloat16)
    names = {torch.uint8: "U8", torch.int8: "I8", torch.float32: "F32", torch.float16: "F16",
             torch.float64: "F64"}  # fmt: skip
    return DTYPES[names[t.dtype]], t.numpy()


def _cast(src, out, target):
    from safetensors.torch import load_file

    from inspector.core.cast.job import cast_checkpoint

    with open_checkpoint(str(src)) as ckpt:
        report = run_job(cast_checkpoint(ckpt, DTYPES[target], str(out), chunk_bytes=1024))
    return load_file(out / "model.safetensors"), report


@pytest.mark.parametrize("quant_type", ["nf4", "fp4"])
@pytest.mark.parametrize("nested", [False, True])
@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
def test_4bit_equals_bitsandbytes_dequantize_4bit(tmp_path, quant_type, nested, dtype):
    import bitsandbytes.functional as F

    torch.manual_seed(3)
    w = (torch.randn(96, 192) * 0.02).to(dtype)
    packed, state = F.quantize_4bit(w, quant_type=quant_type, compress_statistics=nested,
                                    blocksize=64)  # fmt: skip
    tensors = [(f"{M}.weight", *_as_numpy(packed))]
    tensors += [(f"{M}.weight.{k}", *_as_numpy(v)) for k, v in state.as_dict(packed=True).items()]
    qc = {"quant_method": "bitsandbytes", "load_in_4bit": True, "bnb_4bit_quant_type": quant_type,
          "bnb_4bit_use_double_quant": nested}  # fmt: skip
    folder(tmp_path / "q", tensors, qc)
    target = {torch.bfloat16: "BF16", torch.float16: "F16"}[dtype]
    got, report = _cast(tmp_path / "q", tmp_path / "plain", target)
    want = F.dequantize_4bit(packed, state)
    assert set(got) == {f"{M}.weight"}
    assert got[f"{M}.weight"].shape == want.shape == (96, 192)
    assert torch.equal(got[f"{M}.weight"], want)
    assert report.tensors[0].dequantized == "bitsandbytes-4bit"


def test_rows_that_are_not_whole_blocks_follow_the_flat_blocks_of_the_format(tmp_path):
    """160 columns, blocks of 64: bitsandbytes' CPU C kernel then disagrees with its own
    quantize_4bit (it scales part of row 1 by the wrong block); its torch implementation, which
    "matches C++ / CUDA behavior", and CUDA use the flat blocks quantize_4bit wrote. So do we."""
    import bitsandbytes.functional as F
    from bitsandbytes.backends.default.ops import _dequantize_4bit_compute
    from bitsandbytes.backends.utils import _get_4bit_code

    torch.manual_seed(5)
    w = (torch.randn(96, 160) * 0.02).to(torch.bfloat16)
    packed, state = F.quantize_4bit(w, quant_type="nf4", blocksize=64)
    tensors = [(f"{M}.weight", *_as_numpy(packed))]
    tensors += [(f"{M}.weight.{k}", *_as_numpy(v)) for k, v in state.as_dict(packed=True).items()]
    folder(tmp_path / "q", tensors, {"quant_method": "bitsandbytes", "load_in_4bit": True})
    got, _ = _cast(tmp_path / "q", tmp_path / "plain", "BF16")
    code = _get_4bit_code("nf4", packed.device)
    want = _dequantize_4bit_compute(
        packed.view(torch.uint8).reshape(-1), state.absmax, code, 64, (96, 160), torch.bfloat16
    )
    assert torch.equal(got[f"{M}.weight"], want)


def test_8bit_equals_int8_vectorwise_dequant(tmp_path):
    import bitsandbytes.functional as F

    torch.manual_seed(4)
    w = torch.randn(64, 96) * 0.02
    codes, scb, _ = F.int8_vectorwise_quant(w)
    tensors = [(f"{M}.weight", *_as_numpy(codes)), (f"{M}.SCB", *_as_numpy(scb))]
    folder(tmp_path / "q", tensors, {"quant_method": "bitsandbytes", "load_in_8bit": True})
    got, _ = _cast(tmp_path / "q", tmp_path / "plain", "F32")
    want = F.int8_vectorwise_dequant(codes, scb)
    assert torch.equal(got[f"{M}.weight"], want)


def test_list_shows_the_shape_from_the_quant_state(tmp_path, capsys):
    import bitsandbytes.functional as F

    from inspector.cli import main

    w = torch.randn(48, 64, dtype=torch.bfloat16)
    packed, state = F.quantize_4bit(w, quant_type="nf4", blocksize=64)
    tensors = [(f"{M}.weight", *_as_numpy(packed))]
    tensors += [(f"{M}.weight.{k}", *_as_numpy(v)) for k, v in state.as_dict(packed=True).items()]
    folder(tmp_path / "q", tensors, {"quant_method": "bitsandbytes", "load_in_4bit": True})
    assert main(["list", str(tmp_path / "q"), "--json"]) == 0
    row = json.loads(capsys.readouterr().out)["tensors"][0]
    assert row["name"] == f"{M}.weight" and row["shape"] == [48, 64]  # packed: [1536, 1]


def _nf4(
    w: torch.Tensor, blocksize: int = 64, nested: bool = False
) -> tuple[list, dict, torch.Tensor]:
    """nf4 of ``w`` as transformers saves it, plain or nested ("double quant"): the tensors,
    the quant_state JSON apart, and what bitsandbytes dequantizes."""
    import bitsandbytes.functional as F

    packed, state = F.quantize_4bit(
        w, quant_type="nf4", compress_statistics=nested, blocksize=blocksize
    )
    parts = state.as_dict(packed=True)
    key = next(k for k in parts if k.startswith("quant_state."))
    quant_state = json.loads(bytes(parts.pop(key).numpy()))
    tensors = [(f"{M}.weight", *_as_numpy(packed))]
    tensors += [(f"{M}.weight.{k}", *_as_numpy(v)) for k, v in parts.items()]
    return tensors, {key: quant_state}, F.dequantize_4bit(packed, state)


def _nested_folder(path, tensors: list, state: dict):
    import numpy as np

    ((key, quant_state),) = state.items()
    text = np.frombuffer(json.dumps(quant_state).encode(), np.uint8)
    tensors = [*tensors, (f"{M}.weight.{key}", DTYPES["U8"], text)]
    return folder(path, tensors, {"quant_method": "bitsandbytes", "load_in_4bit": True})


def test_nested_absmax_in_blocks_of_one_code(tmp_path):
    """nested_blocksize 1 (one nested scale per absmax code) is a valid state: the values are
    bitsandbytes' own when each code gets the scale of the block it came from."""
    import numpy as np

    torch.manual_seed(6)
    tensors, state, want = _nf4((torch.randn(64, 512) * 0.02).to(torch.bfloat16), nested=True)
    ((key, quant_state),) = state.items()
    codes = next(a for n, _d, a in tensors if n.endswith(".absmax"))
    i = next(i for i, (n, _d, _a) in enumerate(tensors) if n.endswith(".nested_absmax"))
    block = quant_state["nested_blocksize"]
    one_each = np.repeat(tensors[i][2], block)[: codes.size]
    tensors[i] = (tensors[i][0], tensors[i][1], one_each)
    quant_state["nested_blocksize"] = 1
    _nested_folder(tmp_path / "q", tensors, state)
    got, _ = _cast(tmp_path / "q", tmp_path / "plain", "BF16")
    assert block > 1 and codes.size > 1
    assert torch.equal(got[f"{M}.weight"], want)


@pytest.mark.parametrize(
    ("change", "why"),
    [
        (
            "no nested_quant_map",
            "nested absmax without nested_quant_map, nested_absmax or blocksize",
        ),
        ("no nested_absmax", "nested absmax without nested_quant_map, nested_absmax or blocksize"),
        ("blocksize 256.0", "nested absmax without nested_quant_map, nested_absmax or blocksize"),
        ("blocksize 0", "nested absmax without nested_quant_map, nested_absmax or blocksize"),
        ("a map of 255", "nested_quant_map or nested_absmax do not fit the absmax codes"),
    ],
)
def test_nested_absmax_that_cannot_be_read_is_refused_with_why(tmp_path, change, why):
    """Each part of the nested scales missing or out of shape: one line saying which."""
    from inspector.core.cast.job import cast_checkpoint
    from inspector.core.errors import CheckpointError

    torch.manual_seed(7)
    tensors, state, _want = _nf4((torch.randn(32, 128) * 0.02).to(torch.bfloat16), nested=True)
    ((_key, quant_state),) = state.items()
    if change.startswith("no "):
        tensors = [t for t in tensors if not t[0].endswith("." + change[3:])]
    elif change.startswith("blocksize"):
        quant_state["nested_blocksize"] = json.loads(change.split()[1])
    else:
        tensors = [(n, d, a[:255] if n.endswith(".nested_quant_map") else a) for n, d, a in tensors]
    _nested_folder(tmp_path / "q", tensors, state)
    with open_checkpoint(str(tmp_path / "q")) as ckpt, pytest.raises(CheckpointError) as e:
        run_job(cast_checkpoint(ckpt, DTYPES["BF16"], str(tmp_path / "out")))
    assert why in str(e.value)


def test_an_infinite_8bit_scale_gives_inf_and_nan_values_without_a_warning(tmp_path):
    """SCB inf over code 0 is inf × 0: NaN, numpy's "invalid value"; the values say it, no
    RuntimeWarning is printed."""
    import warnings

    import numpy as np

    from inspector.core.quant.of_checkpoint import quant_layout
    from inspector.core.quant.values import dequantized_f32

    codes = np.zeros((4, 8), np.int8)
    codes[:, 0] = 127
    scb = np.array([127.0, np.inf, 127.0, 127.0], np.float32)
    tensors = [(f"{M}.weight", DTYPES["I8"], codes), (f"{M}.SCB", DTYPES["F32"], scb)]
    folder(tmp_path / "q", tensors, {"quant_method": "bitsandbytes", "load_in_8bit": True})
    with open_checkpoint(str(tmp_path / "q")) as ckpt, warnings.catch_warnings():
        warnings.simplefilter("error")
        w = quant_layout(ckpt).weights[f"{M}.weight"]
        values = np.concatenate(list(dequantized_f32(ckpt, w))).reshape(4, 8)
    assert values[1, 0] == np.inf and np.isnan(values[1, 1:]).all()
    assert values[0, 0] == np.float32(127) * np.float32(127) * np.float32(1 / 127)


def test_nested_parts_stored_in_f16_or_as_a_matrix_read_as_bitsandbytes_f32_vectors(tmp_path):
    """nested_quant_map [16, 16] and nested_absmax [1, blocks], both F16: the values are read
    as the flat F32 vectors bitsandbytes keeps (F16 widens exactly), so the scales are its
    F32 products, not F16 ones, and the weight is what bitsandbytes dequantizes from them."""
    import bitsandbytes.functional as F

    torch.manual_seed(8)
    w = (torch.randn(64, 512) * 0.02).to(torch.bfloat16)
    packed, state = F.quantize_4bit(w, quant_type="nf4", compress_statistics=True, blocksize=64)
    state.state2.code = state.state2.code.half().float()  # values F16 holds exactly
    state.state2.absmax = state.state2.absmax.half().float()
    want = F.dequantize_4bit(packed, state)
    parts = state.as_dict(packed=True)
    parts["nested_quant_map"] = parts["nested_quant_map"].half().reshape(16, 16)
    parts["nested_absmax"] = parts["nested_absmax"].half().reshape(1, -1)
    tensors = [(f"{M}.weight", *_as_numpy(packed))]
    tensors += [(f"{M}.weight.{k}", *_as_numpy(v)) for k, v in parts.items()]
    folder(tmp_path / "q", tensors, {"quant_method": "bitsandbytes", "load_in_4bit": True})
    got, _ = _cast(tmp_path / "q", tmp_path / "plain", "BF16")
    assert torch.equal(got[f"{M}.weight"], want)


def test_nested_parts_stored_in_f64_are_rounded_to_the_f32_bitsandbytes_holds(tmp_path):
    """nested_quant_map and nested_absmax stored as F64, each value off its F32 by far less
    than half an F32 step: read as F32 first (as bitsandbytes holds them), the scales are its
    F32 products and sums, and the F32 weight is what bitsandbytes dequantizes (in BF16 a
    scale one F32 step off would hardly show)."""
    import bitsandbytes.functional as F

    torch.manual_seed(9)
    w = torch.randn(64, 512) * 0.02
    packed, state = F.quantize_4bit(w, quant_type="nf4", compress_statistics=True, blocksize=64)
    want = F.dequantize_4bit(packed, state)
    parts = state.as_dict(packed=True)
    for key in ("nested_quant_map", "nested_absmax"):
        parts[key] = parts[key].double() * (1 + 2.0**-40)  # rounds back to the same F32
    tensors = [(f"{M}.weight", *_as_numpy(packed))]
    tensors += [(f"{M}.weight.{k}", *_as_numpy(v)) for k, v in parts.items()]
    folder(tmp_path / "q", tensors, {"quant_method": "bitsandbytes", "load_in_4bit": True})
    got, _ = _cast(tmp_path / "q", tmp_path / "plain", "F32")
    assert torch.equal(got[f"{M}.weight"], want)


def _refusal(path) -> str:
    from inspector.core.cast.job import cast_checkpoint
    from inspector.core.errors import CheckpointError

    with open_checkpoint(str(path)) as ckpt, pytest.raises(CheckpointError) as e:
        run_job(cast_checkpoint(ckpt, DTYPES["BF16"], str(path.parent / "out")))
    return str(e.value)


@pytest.mark.parametrize(
    ("change", "why"),
    [
        ("shape []", "quant_state shape []"),
        ("shape 3072", "quant_state shape 3072"),
        ("shape [48, -64]", "quant_state shape [48, -64]"),
        ("shape [48, 64.0]", "quant_state shape [48, 64.0]"),
        ("blocksize 0", "quant_state dtype 'bfloat16', blocksize 0"),
        ("blocksize -64", "quant_state dtype 'bfloat16', blocksize -64"),
        ("dtype int8", "quant_state dtype 'int8', blocksize 64"),
        ("shape [1024, 3]", "an odd last dimension (bitsandbytes reads it by another kernel)"),
        ("shape [1, 1024, 3]", "an odd last dimension (bitsandbytes reads it by another kernel)"),
        ("shape [48, 32]", "1,536 code bytes do not hold 1,536 4-bit values"),
        ("no quant_map", "needs weight.absmax and weight.quant_map"),
        ("a quant_map of 15", "quant_map [15] and absmax [48] for 48 blocks"),
        ("no quant_state", "no readable weight.quant_state.bitsandbytes__* entry"),
        ("quant_state in I8", "no readable weight.quant_state.bitsandbytes__* entry"),
        ("quant_state of 64 KiB + 1", "no readable weight.quant_state.bitsandbytes__* entry"),
        ("quant_state not JSON", "its quant_state is not the JSON bitsandbytes writes"),
    ],
)
def test_a_4bit_quant_state_that_does_not_fit_is_refused_with_exactly_why(tmp_path, change, why):
    """Each field of the 4-bit quant_state (and the parts it describes) out of range or missing:
    the refusal ends with the one reason, word for word, never another error further on."""
    import numpy as np

    torch.manual_seed(10)
    tensors, state, _want = _nf4((torch.randn(48, 64) * 0.02).to(torch.bfloat16))
    ((key, quant_state),) = state.items()
    field, _, value = change.partition(" ")
    text = None
    if field in ("shape", "blocksize", "dtype"):
        quant_state[field] = json.loads(value) if field != "dtype" else value
    elif change == "no quant_map":
        tensors = [t for t in tensors if not t[0].endswith(".quant_map")]
    elif change == "a quant_map of 15":
        tensors = [(n, d, a[:15] if n.endswith(".quant_map") else a) for n, d, a in tensors]
    elif change == "quant_state in I8":
        text = (DTYPES["I8"], np.frombuffer(json.dumps(quant_state).encode(), np.int8))
    elif change == "quant_state of 64 KiB + 1":
        raw = json.dumps(quant_state).encode()
        text = (DTYPES["U8"], np.frombuffer(raw + b" " * (65537 - len(raw)), np.uint8))
    elif change == "quant_state not JSON":
        text = (DTYPES["U8"], np.frombuffer(b"{not json", np.uint8))
    if change == "no quant_state":
        folder(tmp_path / "q", tensors, {"quant_method": "bitsandbytes", "load_in_4bit": True})
    elif text is not None:
        tensors = [*tensors, (f"{M}.weight.{key}", *text)]
        folder(tmp_path / "q", tensors, {"quant_method": "bitsandbytes", "load_in_4bit": True})
    else:
        _nested_folder(tmp_path / "q", tensors, state)
    line = _refusal(tmp_path / "q")
    assert line == f"{tmp_path / 'q' / 'model.safetensors'}: '{M}.weight' (bitsandbytes 4-bit): " \
        f"{why}; nothing written"  # fmt: skip


def test_a_quant_state_of_exactly_64_kib_is_read(tmp_path):
    """The quant_state limit is 64 KiB inclusive: JSON padded with spaces to exactly 65,536
    bytes is still read (one byte more is refused, above)."""
    import numpy as np

    torch.manual_seed(11)
    tensors, state, want = _nf4((torch.randn(48, 64) * 0.02).to(torch.bfloat16))
    ((key, quant_state),) = state.items()
    raw = json.dumps(quant_state).encode()
    text = np.frombuffer(raw + b" " * (65536 - len(raw)), np.uint8)
    tensors = [*tensors, (f"{M}.weight.{key}", DTYPES["U8"], text)]
    folder(tmp_path / "q", tensors, {"quant_method": "bitsandbytes", "load_in_4bit": True})
    got, _ = _cast(tmp_path / "q", tmp_path / "plain", "BF16")
    assert torch.equal(got[f"{M}.weight"], want)


def test_a_4bit_weight_whose_size_is_not_whole_blocks_keeps_its_last_short_block(tmp_path):
    """[3, 100] in blocks of 64: 300 values, so 5 blocks, the last of 44 values; the values are
    bitsandbytes' own."""
    torch.manual_seed(12)
    tensors, state, want = _nf4((torch.randn(3, 100) * 0.02).to(torch.bfloat16))
    _nested_folder(tmp_path / "q", tensors, state)
    got, _ = _cast(tmp_path / "q", tmp_path / "plain", "BF16")
    assert want.shape == (3, 100) and torch.equal(got[f"{M}.weight"], want)


def test_a_4bit_blocksize_of_one_value_is_valid(tmp_path):
    """blocksize 1 (one absmax per value) is a valid state: with each block-of-64 scale repeated
    64 times the values are bitsandbytes' own."""
    import numpy as np

    torch.manual_seed(13)
    tensors, state, want = _nf4((torch.randn(16, 64) * 0.02).to(torch.bfloat16))
    ((_key, quant_state),) = state.items()
    i = next(i for i, (n, _d, _a) in enumerate(tensors) if n.endswith(".absmax"))
    tensors[i] = (tensors[i][0], tensors[i][1], np.repeat(tensors[i][2], 64))
    quant_state["blocksize"] = 1
    _nested_folder(tmp_path / "q", tensors, state)
    got, _ = _cast(tmp_path / "q", tmp_path / "plain", "BF16")
    assert torch.equal(got[f"{M}.weight"], want)


def test_an_infinite_4bit_absmax_gives_nan_and_inf_without_a_warning(tmp_path):
    """absmax inf over nf4 code 7 (the value 0) is inf × 0: NaN, numpy's "invalid value"; the
    values say it (NaN where the code is 7, ±inf elsewhere), no RuntimeWarning is printed."""
    import warnings

    import numpy as np

    from inspector.core.quant.of_checkpoint import quant_layout
    from inspector.core.quant.values import dequantized_f32

    torch.manual_seed(14)
    tensors, state, _want = _nf4((torch.randn(4, 64) * 0.02).to(torch.bfloat16))
    i = next(i for i, (n, _d, _a) in enumerate(tensors) if n.endswith(".absmax"))
    absmax = tensors[i][2].copy()
    absmax[1] = np.inf
    tensors[i] = (tensors[i][0], tensors[i][1], absmax)
    codes = next(a for n, _d, a in tensors if n == f"{M}.weight").reshape(-1)
    nibbles = np.stack([codes >> 4, codes & 15], axis=1).reshape(-1)[64:128]
    _nested_folder(tmp_path / "q", tensors, state)
    with open_checkpoint(str(tmp_path / "q")) as ckpt, warnings.catch_warnings():
        warnings.simplefilter("error")
        w = quant_layout(ckpt).weights[f"{M}.weight"]
        values = np.concatenate(list(dequantized_f32(ckpt, w))).reshape(-1)[64:128]
    assert (nibbles == 7).any() and (nibbles != 7).any()
    assert np.isnan(values[nibbles == 7]).all() and np.isinf(values[nibbles != 7]).all()


@pytest.mark.parametrize("shape", [(2, 3, 64), (192,)])
def test_a_4bit_weight_of_three_or_one_dimensions_is_bitsandbytes_own(tmp_path, shape):
    """[2, 3, 64] is 6 rows of 64 (the leading dims flattened, the last one the columns); [192]
    is one row: shape and values are what bitsandbytes dequantizes."""
    torch.manual_seed(15)
    tensors, state, want = _nf4((torch.randn(*shape) * 0.02).to(torch.bfloat16))
    ((_key, quant_state),) = state.items()
    quant_state["shape"] = list(shape)  # bitsandbytes itself keeps a vector as [1, 192]
    _nested_folder(tmp_path / "q", tensors, state)
    got, _ = _cast(tmp_path / "q", tmp_path / "plain", "BF16")
    assert tuple(got[f"{M}.weight"].shape) == shape
    assert torch.equal(got[f"{M}.weight"], want.reshape(shape))


def test_4bit_parts_stored_as_matrices_read_as_the_vectors_bitsandbytes_holds(tmp_path):
    """quant_map stored [4, 4] and the nested absmax codes [blocks, 1]: read flat, as
    bitsandbytes' 1-D tensors, the values are its own."""
    torch.manual_seed(16)
    tensors, state, want = _nf4((torch.randn(64, 512) * 0.02).to(torch.bfloat16), nested=True)
    tensors = [
        (n, d, a.reshape(4, 4) if n.endswith(".weight.quant_map") else
         a.reshape(-1, 1) if n.endswith(".weight.absmax") else a)
        for n, d, a in tensors
    ]  # fmt: skip
    _nested_folder(tmp_path / "q", tensors, state)
    got, _ = _cast(tmp_path / "q", tmp_path / "plain", "BF16")
    assert torch.equal(got[f"{M}.weight"], want)


def test_a_4bit_weight_with_no_columns_casts_to_an_empty_matrix(tmp_path):
    """shape [4, 0]: no code bytes, no blocks; the cast writes an empty [4, 0] BF16 tensor."""
    import numpy as np

    torch.manual_seed(17)
    tensors, state, _want = _nf4((torch.randn(4, 64) * 0.02).to(torch.bfloat16))
    ((_key, quant_state),) = state.items()
    quant_state["shape"] = [4, 0]
    tensors = [
        (n, d, a[:0] if n == f"{M}.weight" or n.endswith(".absmax") else a) for n, d, a in tensors
    ]
    _nested_folder(tmp_path / "q", tensors, state)
    got, _ = _cast(tmp_path / "q", tmp_path / "plain", "BF16")
    assert got[f"{M}.weight"].shape == (4, 0) and got[f"{M}.weight"].dtype == torch.bfloat16
    assert np.asarray(tensors[0][2]).size == 0


def test_an_8bit_scb_stored_as_a_column_reads_as_the_vector(tmp_path):
    """SCB stored [out, 1]: one scale a row all the same, the values int8_vectorwise_dequant's."""
    import bitsandbytes.functional as F

    torch.manual_seed(18)
    codes, scb, _ = F.int8_vectorwise_quant(torch.randn(64, 96) * 0.02)
    tensors = [(f"{M}.weight", *_as_numpy(codes)), (f"{M}.SCB", *_as_numpy(scb.reshape(-1, 1)))]
    folder(tmp_path / "q", tensors, {"quant_method": "bitsandbytes", "load_in_8bit": True})
    got, _ = _cast(tmp_path / "q", tmp_path / "plain", "F32")
    assert torch.equal(got[f"{M}.weight"], F.int8_vectorwise_dequant(codes, scb))


@pytest.mark.parametrize(
    ("change", "why"),
    [
        ("SCB F16", "LLM.int8 stores I8 [out, in] codes and F32 SCB"),
        ("codes 3-D", "LLM.int8 stores I8 [out, in] codes and F32 SCB"),
        ("SCB of 63", "SCB [63] for 64 rows"),
    ],
)
def test_an_8bit_weight_that_is_not_llm_int8_is_refused_with_exactly_why(tmp_path, change, why):
    """Codes not [out, in], SCB not F32 or not one a row: refused with the one reason."""
    import bitsandbytes.functional as F

    torch.manual_seed(19)
    codes, scb, _ = F.int8_vectorwise_quant(torch.randn(64, 96) * 0.02)
    if change == "SCB F16":
        scb = scb.half()
    elif change == "codes 3-D":
        codes = codes.reshape(8, 8, 96)
    else:
        scb = scb[:63]
    tensors = [(f"{M}.weight", *_as_numpy(codes)), (f"{M}.SCB", *_as_numpy(scb))]
    folder(tmp_path / "q", tensors, {"quant_method": "bitsandbytes", "load_in_8bit": True})
    line = _refusal(tmp_path / "q")
    assert line == f"{tmp_path / 'q' / 'model.safetensors'}: '{M}.weight' (bitsandbytes 8-bit): " \
        f"{why}; nothing written"  # fmt: skip


def test_a_quant_map_stored_in_f64_is_read_as_the_f32_bitsandbytes_holds(tmp_path):
    """quant_map stored as F64 (the nf4 values, which F32 holds exactly): read as F32 first, the
    products are bitsandbytes' F32 ones and the weight is what it dequantizes."""
    import numpy as np

    torch.manual_seed(20)
    tensors, state, want = _nf4((torch.randn(32, 64) * 0.02).to(torch.bfloat16))
    tensors = [
        (n, DTYPES["F64"], a.astype(np.float64)) if n.endswith(".quant_map") else (n, d, a)
        for n, d, a in tensors
    ]
    _nested_folder(tmp_path / "q", tensors, state)
    got, _ = _cast(tmp_path / "q", tmp_path / "plain", "BF16")
    assert torch.equal(got[f"{M}.weight"], want)
