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


def _nested(w: torch.Tensor) -> tuple[list, dict, torch.Tensor]:
    """Nested ("double quant") nf4 of ``w`` as transformers saves it: the tensors, the
    quant_state JSON, and what bitsandbytes dequantizes."""
    import bitsandbytes.functional as F

    packed, state = F.quantize_4bit(w, quant_type="nf4", compress_statistics=True, blocksize=64)
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
    tensors, state, want = _nested((torch.randn(64, 512) * 0.02).to(torch.bfloat16))
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
    tensors, state, _want = _nested((torch.randn(32, 128) * 0.02).to(torch.bfloat16))
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
