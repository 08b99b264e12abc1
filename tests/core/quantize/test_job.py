"""The quantize job as a save: a folder that mirrors the source, committed whole or not at all,
the source untouched, refusals before any work, and figures that diff and the preview repeat."""

from __future__ import annotations

import hashlib
import json
import os
import re
from pathlib import Path

import numpy as np
import pytest

from inspector.core.diff import diff_checkpoints
from inspector.core.errors import CheckpointError
from inspector.core.opening import open_checkpoint
from inspector.core.progress import run_job
from inspector.core.quant.of_checkpoint import quant_layout
from inspector.core.quantize.job import quantize_checkpoint
from inspector.core.quantize.preview import preview_checkpoint
from inspector.core.quantize.schemes import SCHEMES
from tests.safetensors_bytes import tensor_bytes

from .models import llama_folder, llama_tensors

Q = "model.layers.0.self_attn.q_proj.weight"


def _digest(folder: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.iterdir())}


def _quantize(src: Path, scheme: str, out: Path, **kw: object):
    return run_job(quantize_checkpoint(open_checkpoint(str(src)), SCHEMES[scheme], str(out), **kw))


def test_a_sharded_folder_comes_out_sharded_with_its_index_and_companions(tmp_path: Path) -> None:
    src = llama_folder(tmp_path / "src", shards=3, layers=2)
    before = _digest(src)
    out = tmp_path / "out"
    report = _quantize(src, "W4A16", out, chunk_bytes=50_000)
    assert _digest(src) == before  # the source is never modified
    assert sorted(os.listdir(out)) == sorted(os.listdir(src))
    index = json.loads((out / "model.safetensors.index.json").read_text())
    held = {
        n: f for f in os.listdir(out) if f.endswith(".safetensors") for n in tensor_bytes(out / f)
    }
    assert index["weight_map"] == dict(sorted(held.items()))
    assert index["metadata"]["total_size"] == report.bytes_out
    assert (out / "tokenizer.json").read_text() == (src / "tokenizer.json").read_text()
    config = json.loads((out / "config.json").read_text())
    assert config["torch_dtype"] == "bfloat16" and config["architectures"] == ["LlamaForCausalLM"]
    assert config["quantization_config"]["format"] == "pack-quantized"
    assert len(report.weights) == 14 and [s.name for s in report.skipped] == ["lm_head.weight"]


def test_the_output_opens_as_quantized_and_diff_repeats_the_reports_figures(tmp_path: Path) -> None:
    src = llama_folder(tmp_path / "src")
    for scheme in ("FP8_BLOCK", "NVFP4A16"):
        out = tmp_path / scheme
        report = _quantize(src, scheme, out, chunk_bytes=30_000)
        ckpt = open_checkpoint(str(out))
        layout = quant_layout(ckpt)
        assert layout is not None and len(layout.weights) == 7
        assert layout.weights[Q].shape == (256, 256)
        diffs = {d.name: d for d in run_job(
            diff_checkpoints(ckpt, open_checkpoint(str(src)), quant_a=layout)
        )}  # fmt: skip
        for w in report.weights:
            d = diffs[w.name]
            assert (d.max_abs_diff, d.max_rel_diff) == (w.figures.max_abs, w.figures.max_rel)
            assert (d.rel_fro_err, d.sqnr_db) == (w.figures.rel_fro_err, w.figures.sqnr_db)
            assert d.rms_rel_err == w.figures.rms_rel_err


@pytest.mark.parametrize("dtype", ["BF16", "F32"])
def test_diff_repeats_the_reports_figures_for_weights_holding_inf_and_nan(
    tmp_path: Path, dtype: str
) -> None:
    """The report measures what the file decompresses to, also where a weight holds an inf or
    a NaN (the integer codes of a NaN quotient were numpy's undefined conversion, and the
    report counted rint(NaN)·scale where the file held another code)."""
    src = llama_folder(tmp_path / "src", dtype=dtype, non_finite=True)
    for scheme in SCHEMES:
        out = tmp_path / scheme
        report = _quantize(src, scheme, out)
        ckpt = open_checkpoint(str(out))
        diffs = {d.name: d for d in run_job(
            diff_checkpoints(ckpt, open_checkpoint(str(src)), quant_a=quant_layout(ckpt))
        )}  # fmt: skip
        for w in report.weights:
            d, f = diffs[w.name], w.figures
            ours = (f.max_abs, f.max_rel, f.rel_fro_err, f.sqnr_db, f.rms_rel_err)
            theirs = (d.max_abs_diff, d.max_rel_diff, d.rel_fro_err, d.sqnr_db, d.rms_rel_err)
            assert repr(ours) == repr(theirs), (scheme, w.name)  # repr: NaN equals NaN


def test_a_diff_beside_quantized_weights_keeps_plain_pairs_in_float64(tmp_path: Path) -> None:
    """The quantized weights are measured as the preview measures them; a norm beside them
    is a plain pair, compared in float64 as diff compares any (F32 would say 1.0 here, and
    --atol 0.999999998 would call it different)."""
    import numpy as np

    from inspector.core.save.writer import save_arrays

    src = llama_folder(tmp_path / "src")
    out = tmp_path / "W4A16"
    _quantize(src, "W4A16", out)
    other = tmp_path / "other"
    other.mkdir()
    tensors = [(n, d, np.full_like(v, 3.3e-9) if "layernorm" in n else v)
               for n, d, v in llama_tensors(dtype="F32")]  # fmt: skip
    save_arrays(other / "model.safetensors", tensors)
    ckpt = open_checkpoint(str(out))
    diffs = {d.name: d for d in run_job(diff_checkpoints(
        ckpt, open_checkpoint(str(other)), atol=0.999999998, quant_a=quant_layout(ckpt)))}  # fmt: skip
    norm = diffs["model.layers.0.input_layernorm.weight"]
    assert norm.max_abs_diff == 0.9999999967 and norm.status.value == "within_atol"
    assert diffs[Q].quant == "pack-quantized" and diffs[Q].rel_fro_err is not None


@pytest.mark.parametrize(("dtype", "non_finite"), [("F16", False), ("BF16", True), ("F32", True)])
def test_the_preview_promises_what_the_save_writes(
    tmp_path: Path, dtype: str, non_finite: bool
) -> None:
    src = llama_folder(tmp_path / "src", dtype=dtype, non_finite=non_finite)
    previews = run_job(preview_checkpoint(open_checkpoint(str(src)), list(SCHEMES.values())))
    for p in previews:
        out = tmp_path / p.scheme
        saved = _quantize(src, p.scheme, out, chunk_bytes=20_000)
        on_disk = sum(len(b) for _d, _s, b in tensor_bytes(out / "model.safetensors").values())
        assert p.bytes_out == saved.bytes_out == on_disk
        assert [w.to_json() for w in p.weights] == [w.to_json() for w in saved.weights]


def test_a_cancelled_quantize_leaves_nothing(tmp_path: Path) -> None:
    src = llama_folder(tmp_path / "src")
    out = tmp_path / "out"
    job = quantize_checkpoint(
        open_checkpoint(str(src)), SCHEMES["W8A16"], str(out), chunk_bytes=20_000
    )
    for _ in range(5):
        next(job)
    job.close()
    assert not out.exists()
    assert sorted(os.listdir(tmp_path)) == ["src"]


def test_a_failed_write_keeps_the_old_output(tmp_path: Path, monkeypatch) -> None:
    src = llama_folder(tmp_path / "src")
    out = tmp_path / "out"
    _quantize(src, "FP8_DYNAMIC", out)
    before = _digest(out)
    from inspector.core.quantize import rtn

    def broken(*a, **k):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(rtn, "pack_int32", broken)
    with pytest.raises(OSError):
        _quantize(src, "W4A16", out)
    assert _digest(out) == before
    assert not [n for n in os.listdir(out) if n.startswith(".")]


def test_a_pickle_source_becomes_safetensors_with_the_same_bytes(tmp_path: Path) -> None:
    torch = pytest.importorskip("torch")
    import numpy as np

    src = llama_folder(tmp_path / "st", dtype="F32")
    state = {n: torch.from_numpy(np.array(a)) for n, _d, a in llama_tensors(dtype="F32")}
    (tmp_path / "pt").mkdir()
    torch.save(state, tmp_path / "pt" / "pytorch_model.bin")
    (tmp_path / "pt" / "config.json").write_text((src / "config.json").read_text())
    _quantize(src, "MXFP4A16", tmp_path / "a")
    _quantize(tmp_path / "pt", "MXFP4A16", tmp_path / "b")
    assert sorted(os.listdir(tmp_path / "b")) == ["config.json", "model.safetensors"]
    assert tensor_bytes(tmp_path / "a" / "model.safetensors") == tensor_bytes(
        tmp_path / "b" / "model.safetensors"
    )


def test_a_file_without_a_config_gets_one_holding_the_quantization_and_a_note(
    tmp_path: Path,
) -> None:
    from inspector.core.save.writer import save_arrays

    (tmp_path / "loose").mkdir()
    save_arrays(tmp_path / "loose" / "w.safetensors", llama_tensors())
    (tmp_path / "loose" / "notes.txt").write_text("mine")
    report = _quantize(tmp_path / "loose" / "w.safetensors", "W8A16", tmp_path / "out")
    assert sorted(os.listdir(tmp_path / "out")) == ["config.json", "w.safetensors"]  # no notes.txt
    assert list(json.loads((tmp_path / "out" / "config.json").read_text())) == [
        "quantization_config"
    ]
    assert report.notes == [
        "no config.json beside the source: the output's config.json holds only quantization_config"
    ]


@pytest.mark.parametrize(
    ("make", "out", "message"),
    [
        ("quantized", "out", "is already quantized (compressed-tensors float-quantized: 7"),
        ("plain", "out.bpk", "a quantized model is a folder"),
        ("plain", "file", "a quantized model is a folder"),
        ("norms", "out", "nothing to quantize with W4A16: it has no Linear weight"),
        (
            "narrow",
            "out",
            "nothing to quantize with W4A16: 7 weights: 200 inputs are not a multiple",
        ),
    ],
)
def test_refusals_come_before_any_work(tmp_path: Path, make: str, out: str, message: str) -> None:
    from inspector.core.save.writer import save_arrays

    src = tmp_path / "src"
    if make == "quantized":
        _quantize(llama_folder(tmp_path / "plain"), "FP8_DYNAMIC", src)
    elif make == "norms":
        src.mkdir()
        save_arrays(src / "model.safetensors", [t for t in llama_tensors() if t[2].ndim == 1])
    elif make == "narrow":
        src.mkdir()
        save_arrays(src / "model.safetensors", llama_tensors(hidden=200, inter=200))
    elif make == "gguf":
        src = Path(__file__).parents[2] / "data" / "gguf" / "tiny-llama-F16.gguf"
    elif make == "bpk":
        src = Path(__file__).parents[2] / "data" / "burn" / "mnist.bpk"
    else:
        llama_folder(src)
    (tmp_path / "file").write_text("x")
    before = sorted(os.listdir(tmp_path))
    with pytest.raises(CheckpointError, match=re.escape(message)):
        _quantize(src, "W4A16" if make in ("norms", "narrow") else "FP8_DYNAMIC", tmp_path / out)
    assert sorted(os.listdir(tmp_path)) == before


def test_a_save_that_does_not_measure_writes_the_same_bytes(tmp_path: Path) -> None:
    src = llama_folder(tmp_path / "src")
    for scheme in SCHEMES:
        measured = _quantize(src, scheme, tmp_path / f"{scheme}-m", chunk_bytes=30_000)
        plain = _quantize(src, scheme, tmp_path / f"{scheme}-p", chunk_bytes=30_000, measure=False)
        assert tensor_bytes(tmp_path / f"{scheme}-m" / "model.safetensors") == tensor_bytes(
            tmp_path / f"{scheme}-p" / "model.safetensors"
        )
        assert measured.measured and not plain.measured
        assert plain.bytes_out == measured.bytes_out and plain.worst() == []
        assert set(plain.weights[0].to_json()) == {"name", "shape", "from", "bytes_in", "bytes_out"}


def test_an_output_folder_holding_other_weights_is_refused(tmp_path: Path) -> None:
    """A single-file model quantized into the folder of an old sharded one left its shards and
    index beside the new file, and loaders read the old index (found by the review)."""
    _quantize(llama_folder(tmp_path / "sharded", shards=2), "W8A16", tmp_path / "out")
    before = _digest(tmp_path / "out")
    with pytest.raises(CheckpointError, match="already holds model files this save would not "
                       r"replace \(model-00001-of-00002.safetensors, "):  # fmt: skip
        _quantize(llama_folder(tmp_path / "single"), "W8A16", tmp_path / "out")
    assert _digest(tmp_path / "out") == before
    _quantize(llama_folder(tmp_path / "sharded"), "W4A16", tmp_path / "out")  # same names: fine


@pytest.mark.parametrize("metadata", [{"format": "pt", "total_size": 0}, None])
def test_the_index_keeps_the_sources_metadata_with_the_new_total_size(
    tmp_path: Path, metadata: dict | None
) -> None:
    """The output's index is the source's, its metadata kept (transformers' ``format``) but for
    ``total_size``, the weight map sorted, written with an indent of 2 and a final newline; an
    index without metadata gets one, after its weight map, holding only ``total_size``."""
    src = llama_folder(tmp_path / "src", shards=2)
    index_path = src / "model.safetensors.index.json"
    index = json.loads(index_path.read_text())
    if metadata is None:
        del index["metadata"]
    else:
        index["metadata"] = metadata
    index_path.write_text(json.dumps(index))
    report = _quantize(src, "W8A16", tmp_path / "out")
    out_index = tmp_path / "out" / "model.safetensors.index.json"
    held = {
        n: f
        for f in os.listdir(tmp_path / "out")
        if f.endswith(".safetensors")
        for n in tensor_bytes(tmp_path / "out" / f)
    }
    weight_map = dict(sorted(held.items()))
    if metadata is None:  # the source's keys first, in their order
        want = {"weight_map": weight_map, "metadata": {"total_size": report.bytes_out}}
    else:
        want = {
            "metadata": {"format": "pt", "total_size": report.bytes_out},
            "weight_map": weight_map,
        }
    assert out_index.read_text() == json.dumps(want, indent=2) + "\n"


@pytest.mark.parametrize(
    ("scheme", "strategy", "group_size"),
    [("FP8_DYNAMIC", "token", None), ("FP8_BLOCK", "group", 128)],
)
def test_fp8_presets_declare_dynamic_fp8_activations_as_llmcompressor_does(
    tmp_path: Path, scheme: str, strategy: str, group_size: int | None
) -> None:
    """The config's ``input_activations``, key for key as llm-compressor 0.19 writes them for
    these presets (the parity test compares them with its output where it is installed): the
    runtime quantizes activations to symmetric 8-bit floats on the fly."""
    src = llama_folder(tmp_path / "src", hidden=128, inter=128)
    _quantize(src, scheme, tmp_path / "out")
    config = json.loads((tmp_path / "out" / "config.json").read_text())
    group = config["quantization_config"]["config_groups"]["group_0"]
    assert group["input_activations"] == {
        "actorder": None,
        "block_structure": None,
        "dynamic": True,
        "group_size": group_size,
        "num_bits": 8,
        "observer": None,
        "observer_kwargs": {},
        "scale_dtype": None,
        "strategy": strategy,
        "symmetric": True,
        "type": "float",
        "zp_dtype": None,
    }


@pytest.mark.parametrize("dtype", ["BF16", "F16"])
def test_fp8_codes_of_16_bit_weights_are_torchs_quotient_clamped_and_cast(
    tmp_path: Path, dtype: str
) -> None:
    """FP8_DYNAMIC's codes are compressed-tensors' ``clamp(w / scale, ±448).to(float8)`` with
    the division in the weight's own dtype (torch, here), byte for byte: 16-bit weights take
    their codes from a table of every bit pattern, which this checks against torch."""
    torch = pytest.importorskip("torch")
    src = llama_folder(tmp_path / "src", dtype=dtype, outliers=0)
    _quantize(src, "FP8_DYNAMIC", tmp_path / "out")
    name = "model.layers.0.mlp.down_proj"
    with open_checkpoint(str(src)) as s, open_checkpoint(str(tmp_path / "out")) as o:
        weight = np.array(s.view(f"{name}.weight")).view(np.int16)
        codes = np.array(o.view(f"{name}.weight")).view(np.uint8)
        scale = np.array(o.view(f"{name}.weight_scale")).view(np.int16)
    t = {"BF16": torch.bfloat16, "F16": torch.float16}[dtype]
    w, sc = torch.from_numpy(weight).view(t), torch.from_numpy(scale).view(t)
    want = torch.clamp(w / sc, -448, 448).to(torch.float8_e4m3fn).view(torch.uint8).numpy()
    assert codes.shape == (256, 384) and scale.shape == (256, 1)
    assert np.array_equal(codes, want)
