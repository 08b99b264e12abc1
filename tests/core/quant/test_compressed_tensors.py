"""compressed-tensors checkpoints written by llm-compressor: recognised from config.json, and
dequantized bit for bit as compressed-tensors' own decompressors (and transformers) do."""

from __future__ import annotations

import json

import numpy as np
import pytest

from inspector.core.dtypes import DTYPES
from inspector.core.opening import open_checkpoint
from inspector.core.progress import run_job
from inspector.core.quant import rows
from inspector.core.quant.layout import Part
from inspector.core.quant.of_checkpoint import quant_layout
from inspector.core.quant.schemes import QuantScheme

from .conftest import SCHEMES, ct_decompressed

torch = pytest.importorskip("torch")

EXPECTED = {
    "FP8_DYNAMIC": (QuantScheme.CT_FLOAT, "F8_E4M3, per channel, scales BF16"),
    "FP8_BLOCK": (QuantScheme.CT_FLOAT, "F8_E4M3, block 128×128, scales BF16"),
    "W8A16": (QuantScheme.CT_PACK, "int8 packed in I32, group 128, scales BF16"),
    "W4A16": (QuantScheme.CT_PACK, "int4 packed in I32, group 128, scales BF16"),
    "W4A16_ASYM": (QuantScheme.CT_PACK, "int4 packed in I32, group 128, scales BF16"),
    "W8A8": (QuantScheme.CT_INT, "I8, per channel, scales BF16"),
    "NVFP4A16": (QuantScheme.CT_NVFP4, "FP4 E2M1 pairs in U8, group 16, scales F8_E4M3"),
    "MXFP4A16": (QuantScheme.CT_MXFP4, "FP4 E2M1 pairs in U8, group 32, scales U8"),
}
LINEARS = ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj")


def _bits(t: torch.Tensor) -> np.ndarray:
    return t.contiguous().view({2: torch.int16, 4: torch.int32}[t.element_size()]).numpy()


@pytest.mark.parametrize("scheme", SCHEMES)
def test_recognised_as_one_logical_weight_per_linear_with_its_companions(llmc_models, scheme):
    folder = llmc_models[scheme]
    with open_checkpoint(str(folder)) as ckpt:
        layout = quant_layout(ckpt)
        base = open_checkpoint(str(llmc_models["base"]))
    assert layout is not None and layout.confirmed and layout.cast_refusal() is None
    kind, storage = EXPECTED[scheme]
    names = {
        f"model.layers.0.{'self_attn' if m[0] in 'qkvo' else 'mlp'}.{m}.weight" for m in LINEARS
    }
    assert set(layout.weights) == names  # lm_head is ignored by the recipe
    for name, w in layout.weights.items():
        assert w.scheme is kind
        assert w.storage() == storage
        assert list(w.shape) == list(base[name].shape)  # logical, not packed
        assert Part.SCALE in w.parts and w.companions[0].endswith("weight_scale")
        for stored in w.stored:
            assert layout.part_of[stored.name] == name
    assert "model.embed_tokens.weight" not in layout.part_of
    base.close()


@pytest.mark.parametrize("scheme", SCHEMES)
def test_dequantized_rows_equal_compressed_tensors_decompression_bit_for_bit(llmc_models, scheme):
    folder = llmc_models[scheme]
    with open_checkpoint(str(folder)) as ckpt:
        layout = quant_layout(ckpt)
        assert layout is not None
        for name, w in layout.weights.items():
            plan = rows.prepare(ckpt, w)
            # 1 KiB chunks: several row blocks per weight, block rows split across chunks
            got = np.concatenate([c.reshape(-1) for c in rows.chunks(ckpt, plan, 1024)])
            ref = ct_decompressed(folder, name.removesuffix(".weight"))
            assert plan.compute.name == {torch.bfloat16: "BF16", torch.float32: "F32"}[ref.dtype]
            assert np.array_equal(got.view(_bits(ref).dtype), _bits(ref).reshape(-1)), name


@pytest.mark.parametrize("scheme", SCHEMES)
def test_a_cast_writes_the_model_transformers_dequantizes_and_it_loads_as_a_plain_model(
    llmc_models, scheme, tmp_path
):
    from transformers import AutoModelForCausalLM
    from transformers.utils.quantization_config import CompressedTensorsConfig

    from inspector.core.cast.job import cast_checkpoint

    folder, out = llmc_models[scheme], tmp_path / "plain"
    with open_checkpoint(str(folder)) as ckpt:
        report = run_job(cast_checkpoint(ckpt, DTYPES["BF16"], str(out), chunk_bytes=4096))
    dequantized = [t for t in report.tensors if t.to_json().get("dequantized")]
    assert len(dequantized) == 7
    config = json.loads((out / "config.json").read_text())
    assert "quantization_config" not in config and config["dtype"] == "bfloat16"
    ref = AutoModelForCausalLM.from_pretrained(
        folder, quantization_config=CompressedTensorsConfig(run_compressed=False)
    )
    ours = AutoModelForCausalLM.from_pretrained(out)
    assert getattr(ours.config, "quantization_config", None) is None
    a, b = ref.state_dict(), ours.state_dict()
    for name, t in b.items():
        assert t.dtype == torch.bfloat16 and torch.equal(a[name], t), name
    # the reference-dequantized model: plain, with the decompressed weights (the reference
    # model itself still quantizes activations for the W8A8 schemes)
    plain = AutoModelForCausalLM.from_pretrained(llmc_models["base"], dtype=torch.bfloat16)
    plain.load_state_dict({name: a[name] for name in b})
    x = torch.tensor([[1, 5, 9, 3, 7]])
    assert torch.equal(plain(x).logits, ours(x).logits)


@pytest.mark.parametrize(("scheme", "target"), [("W4A16", "F32"), ("FP8_BLOCK", "F16")])
def test_other_targets_are_the_reference_values_cast_as_torch_casts_them(
    llmc_models, scheme, target, tmp_path
):
    from safetensors.torch import load_file

    from inspector.core.cast.job import cast_checkpoint

    folder, out = llmc_models[scheme], tmp_path / "plain"
    with open_checkpoint(str(folder)) as ckpt:
        run_job(cast_checkpoint(ckpt, DTYPES[target], str(out)))
    got = load_file(out / "model.safetensors")
    want = {"F32": torch.float32, "F16": torch.float16}[target]
    for m in ("self_attn.q_proj", "mlp.down_proj"):
        name = f"model.layers.0.{m}"
        assert torch.equal(got[name + ".weight"], ct_decompressed(folder, name).to(want))
        assert name + ".weight_scale" not in got
    assert got["model.norm.weight"].dtype == want  # plain floats are cast as always


@pytest.mark.parametrize("scheme", ["W4A16", "NVFP4A16"])
def test_diff_against_the_original_gives_the_precision_the_quantization_lost(llmc_models, scheme):
    """Frobenius error and SQNR of the dequantized weights against the BF16 model they came
    from, as torch computes them in float64 from compressed-tensors' decompression (to 1e-7:
    ours sum in F32 per block)."""
    from safetensors.torch import load_file

    from inspector.core.diff import diff_checkpoints

    folder, base = llmc_models[scheme], llmc_models["base"]
    original = load_file(base / "model.safetensors")
    with open_checkpoint(str(folder)) as a, open_checkpoint(str(base)) as b:
        diffs = run_job(diff_checkpoints(a, b, quant_a=quant_layout(a)))
    by_name = {d.name: d for d in diffs}
    assert set(by_name) == set(original)  # logical names on both sides, no companions
    for name, d in by_name.items():
        if d.quant is None:
            assert d.status.value == "equal", name  # norms, embeddings, lm_head: untouched
            continue
        ours = ct_decompressed(folder, name.removesuffix(".weight")).double()
        ref = original[name].double()
        err = torch.linalg.norm(ours - ref) / torch.linalg.norm(ref)
        sqnr = 10 * torch.log10((ref**2).sum() / ((ours - ref) ** 2).sum())
        # the sums are taken in F32 per block of 16k values (pairwise), then in float64
        assert d.rel_fro_err == pytest.approx(float(err), rel=1e-7)
        assert d.sqnr_db == pytest.approx(float(sqnr), rel=1e-7)
        assert d.max_abs_diff == float((ours - ref).abs().max())
        assert d.to_json()["quant"] == EXPECTED[scheme][0].value


def test_storage_figures_count_codes_as_compressed_tensors_unpacks_them(llmc_models):
    from compressed_tensors.compressors.pack_quantized.helpers import unpack_from_int32
    from safetensors.torch import load_file

    from inspector.core.quant.storage_figures import storage_figures

    folder = llmc_models["W4A16"]
    state = load_file(folder / "model.safetensors")
    with open_checkpoint(str(folder)) as ckpt:
        layout = quant_layout(ckpt)
        for name, w in layout.weights.items():
            m = name.removesuffix(".weight")
            ints = unpack_from_int32(state[m + ".weight_packed"], 4, state[m + ".weight_shape"])
            scale = state[m + ".weight_scale"].float()
            got = storage_figures(ckpt, w)
            assert got.codes_possible == 16
            assert got.codes_used == len(torch.unique(ints))
            assert got.saturated == int(((ints == -8) | (ints == 7)).sum())
            assert (got.scale_min, got.scale_max) == (float(scale.min()), float(scale.max()))
            assert got.bad_scales == 0


def test_the_reported_defects_on_llm_compressor_output(llmc_models, capsys):
    """FP8_DYNAMIC: check said "N of N tensors differ from F32" and flagged every weight_scale;
    W4A16: list called the packed weights "kept (not a float)" and counted 105 k parameters
    instead of the model's (here 164.2 k), so a cast cast only the scales."""
    from inspector.cli import main

    assert main(["check", str(llmc_models["FP8_DYNAMIC"])]) == 0
    out = capsys.readouterr().out
    assert out.startswith("ok: all 5 float tensors are BF16 (0 of 12 tensors differ from BF16")
    assert "weight_scale" not in out
    assert main(["list", str(llmc_models["W4A16"]), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    rows = {r["name"]: r for r in doc["tensors"]}
    q = rows["model.layers.0.self_attn.q_proj.weight"]
    assert q["status"] == "quantized" and q["shape"] == [128, 128]
    assert not any(name.endswith("weight_packed") for name in rows)
    params = sum(int(np.prod(r["shape"])) for r in doc["tensors"])
    assert params == 164_224  # the model's own count, packed words counted as 8 values each
