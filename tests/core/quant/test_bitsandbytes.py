"""bitsandbytes weights as transformers saves them: made by bitsandbytes' own quantize_4bit /
int8 quantization on the CPU, dequantized bit for bit as bitsandbytes does on the CPU."""

from __future__ import annotations

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
    names = {torch.uint8: "U8", torch.int8: "I8", torch.float32: "F32", torch.float16: "F16"}
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
    import json

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
