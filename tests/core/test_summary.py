from __future__ import annotations

import torch
from safetensors.torch import save_file

from inspector.core.dtypes import DTYPES, parse_cast_target, parse_dtype
from inspector.core.opening import open_checkpoint
from inspector.core.summary import (
    DTypeGroups,
    format_count,
    matches_target,
    summarize,
    tensor_status,
)
from inspector.core.wording import format_bytes


def test_summary_line_counts_differing_and_kept(tmp_path):
    save_file(
        {
            "a": torch.zeros(10, 10, dtype=torch.float64),
            "b": torch.zeros(4),
            "c": torch.zeros(3, dtype=torch.bfloat16),
            "ids": torch.arange(6),
        },
        tmp_path / "m.safetensors",
    )
    ckpt = open_checkpoint(tmp_path / "m.safetensors")
    s = summarize(ckpt.tensors, DTYPES["F32"])
    assert (s.n_tensors, s.n_differ, s.params) == (4, 2, 113)
    assert s.line() == "2 of 4 tensors differ from F32 · 113 params · 870 B · F64×1 BF16×1 I64×1"
    assert tensor_status(ckpt["ids"], DTYPES["F32"]) == "kept"
    assert matches_target(ckpt["ids"], DTYPES["F32"]) is None
    assert matches_target(ckpt["b"], DTYPES["F32"]) is True
    assert matches_target(ckpt["a"], DTYPES["F32"]) is False


def test_formats():
    assert format_bytes(86.7 * 2**20) == "86.7 MiB"
    assert format_bytes(512) == "512 B"
    assert format_count(22_700_000) == "22.7 M"
    assert format_count(999) == "999"


def test_format_boundaries():
    """Each unit starts exactly at its power (mutation testing: the boundaries were unchecked)."""
    cases = {
        0: "0 B", 1023: "1023 B", 1024: "1.0 KiB", 1536: "1.5 KiB", 2**20 - 1: "1.0 MiB", 2**20 - 52: "1023.9 KiB",
        2**20: "1.0 MiB", 2**30: "1.0 GiB", int(1.5 * 2**40): "1.5 TiB", 2**50: "1.0 PiB",
        2**60: "1024.0 PiB",
    }  # fmt: skip
    assert {n: format_bytes(n) for n in cases} == cases
    counts = {
        0: "0", 999: "999", 1000: "1.0 k", 999_949: "999.9 k", 999_950: "1.0 M", 999_960: "1.0 M",
        10**6: "1.0 M",
        1_300_000_000: "1.3 B", 2 * 10**12: "2.0 T",
        999_950_000: "1.0 B", 999_950_000_000: "1.0 T",  # what rounds up to the next unit's 1.0
    }  # fmt: skip
    assert {n: format_count(n) for n in counts} == counts


def test_dtype_aliases():
    assert parse_dtype("float32") is DTYPES["F32"]
    assert parse_dtype("fp16") is DTYPES["F16"]
    assert parse_dtype("half") is DTYPES["F16"]
    assert parse_dtype("bfloat16") is DTYPES["BF16"]
    assert parse_dtype("torch.float64") is DTYPES["F64"]
    assert parse_dtype("bf16") is DTYPES["BF16"]
    assert parse_dtype("f8_e4m3") is DTYPES["F8_E4M3"]
    assert parse_cast_target("e5m2") is DTYPES["F8_E5M2"]
    for bad in ("int4", "float128", ""):
        try:
            parse_dtype(bad)
        except ValueError as e:
            assert "unknown dtype" in str(e)
        else:
            raise AssertionError(bad)


def test_dtype_groups_give_every_target_the_per_tensor_counts(tmp_path):
    tensors = {
        "a": torch.zeros(10, 10, dtype=torch.float64),
        "b": torch.zeros(4),
        "c": torch.zeros(3, dtype=torch.bfloat16),
        "d": torch.zeros(2, dtype=torch.bfloat16),
        "ids": torch.arange(6),
    }
    save_file(tensors, tmp_path / "m.safetensors")
    ckpt = open_checkpoint(tmp_path / "m.safetensors")
    groups = DTypeGroups(ckpt.tensors)
    assert groups.dtype_names == [t.dtype.name for t in ckpt.tensors]
    for name in ("F32", "F64", "BF16", "F16", "F8_E4M3"):
        s = groups.summary(DTYPES[name])
        differing = [v for v in tensors.values() if v.is_floating_point() and _st(v) != name]
        assert s.n_differ == len(differing)
        assert s.n_tensors == 5 and s.params == 100 + 4 + 3 + 2 + 6
        assert s.nbytes == 800 + 16 + 6 + 4 + 48
        assert sum(s.differing_dtypes.values()) == s.n_differ
        assert s.kept_dtypes == {"I64": 1}
    # most common first: BF16 (2 tensors) before F64 and F32 (1 each)
    assert list(groups.summary(DTYPES["F16"]).differing_dtypes) == ["BF16", "F64", "F32"]


def _st(t: torch.Tensor) -> str:
    return {torch.float64: "F64", torch.float32: "F32", torch.bfloat16: "BF16"}[t.dtype]


def test_a_quantization_config_without_quantized_weights_adds_nothing_to_the_summary(tmp_path):
    """An unsupported quant_method recognises no weight: the summary then has no quantized
    count and no scheme, as a plain checkpoint's has (0 and None, not None and a scheme)."""
    from inspector.core.quant.recognise import recognise
    from inspector.core.summary import DTypeGroups, Summary

    save_file({"w": torch.zeros(4), "ids": torch.arange(2)}, tmp_path / "m.safetensors")
    with open_checkpoint(tmp_path / "m.safetensors") as ckpt:
        layout = recognise(ckpt.tensors, {"quant_method": "nope"})
        assert layout is not None and not layout.weights
        plain = DTypeGroups(ckpt.tensors).summary(DTYPES["F16"])
        configured = DTypeGroups(ckpt.tensors, layout).summary(DTYPES["F16"])
    expected = Summary("F16", 2, 1, 6, 32, {"F32": 1}, {"I64": 1}, 0, None)
    assert plain == expected and configured == expected
