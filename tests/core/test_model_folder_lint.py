"""``lint`` finding by finding, on folders built by hand (no transformers): each finding's
severity, code, exact line, tensors and files, and the edges of each rule (the 1 KiB floor of
duplicate detection, bytes that differ only after the probe, hidden files, the last shard)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from safetensors.numpy import save_file

from inspector.core.errors import CheckpointError
from inspector.core.model_folder.lint import lint_path


def _save(path, **arrays) -> int:
    save_file(arrays, str(path))
    return sum(a.nbytes for a in arrays.values())


def _json(findings) -> list[dict]:
    return [f.to_json() for f in findings]


def _finding(severity, code, message, tensors=(), files=()) -> dict:
    return {
        "severity": severity,
        "code": code,
        "message": message,
        "tensors": list(tensors),
        "files": list(files),
    }


def _index(folder, weight_map, total_size=None, name="model.safetensors.index.json"):
    meta = {} if total_size is None else {"total_size": total_size}
    (folder / name).write_text(json.dumps({"metadata": meta, "weight_map": weight_map}))


S1, S2 = "model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors"
IDX = "model.safetensors.index.json"


def test_an_index_and_its_shards_disagreeing_every_way(tmp_path):
    z = np.zeros(4, np.float32)
    n1 = _save(tmp_path / S1, a=z, b=z + 1, c=z + 2)
    n2 = _save(tmp_path / S2, d=z + 3)
    # b is mapped to the other shard, c to none; "ghost" is not in S2; S3 does not exist
    _index(
        tmp_path,
        {"a": S1, "b": S2, "d": S2, "ghost": S2, "x": "model-00003-of-00003.safetensors"},
        total_size=n1 + n2 + 1,
    )
    (tmp_path / "model.safetensors").write_bytes((tmp_path / S2).read_bytes())  # a stray
    (tmp_path / "pytorch_model.bin").write_bytes(b"\x80\x02}.")  # a pickle twin
    (tmp_path / ".model.safetensors").write_bytes(b"")  # hidden: not looked at
    found = _json(lint_path(str(tmp_path)))
    assert found[:-1] == [
        _finding(
            "error",
            "tensor_not_in_index",
            f"{S1} holds tensors that {IDX} does not map to it (loaders never read them): 2, "
            "1 of them mapped to another shard",
            ["b", "c"],
            [IDX, S1],
        ),
        _finding(
            "error",
            "index_names_missing_tensor",
            f"{IDX} maps tensors to {S2} that it does not hold: 2",
            ["b", "ghost"],
            [IDX, S2],
        ),
        _finding(
            "error",
            "shard_missing",
            f"{IDX} names model-00003-of-00003.safetensors, which is not in the folder",
            ["x"],
            [IDX, "model-00003-of-00003.safetensors"],
        ),
        _finding(
            "warning",
            "total_size",
            f"{IDX} says total_size {n1 + n2 + 1:,} bytes; its shards hold {n1 + n2:,}",
            files=[IDX],
        ),
        _finding(
            "warning",
            "stray_weights",
            "model.safetensors is not used by any index (a loader may pick it up instead of "
            "the shards)",
            files=["model.safetensors"],
        ),
        _finding(
            "warning",
            "pickle_twin",
            "pytorch_model.bin is not used by any index (a pickle copy beside safetensors: a "
            "loader downloads both)",
            files=["pytorch_model.bin"],
        ),
    ]
    assert found[-1]["code"] == "does_not_open" and found[-1]["severity"] == "error"
    assert found[-1]["message"]  # the opener's own reason


def test_a_broken_index_and_an_unreadable_shard(tmp_path):
    (tmp_path / S1).write_bytes(b"\x08\x00\x00\x00\x00\x00\x00\x00{}      ")  # header only
    (tmp_path / S2).write_bytes(b"nonsense")
    _index(tmp_path, {"a": S1, "b": S2})
    (tmp_path / "other.safetensors.index.json").write_text("{not json")
    found = _json(lint_path(str(tmp_path / IDX)))
    codes = [(f["code"], f["files"]) for f in found]
    assert ("shard_unreadable", [S2]) in codes
    assert ("index_invalid", ["other.safetensors.index.json"]) in codes
    bad = next(f for f in found if f["code"] == "index_invalid")
    assert bad["message"] == "other.safetensors.index.json is not a readable index"
    unreadable = next(f for f in found if f["code"] == "shard_unreadable")
    assert unreadable["message"].startswith(f"{S2}: ")


def test_a_single_file_with_a_pickle_twin(tmp_path):
    _save(tmp_path / "model.safetensors", w=np.zeros(2, np.float32))
    for twin in ("pytorch_model.bin", "weights.pt", "weights.pth"):
        (tmp_path / twin).write_bytes(b"\x80\x02}.")
    found = _json(lint_path(str(tmp_path / "model.safetensors")))
    assert [f for f in found if f["code"] == "pickle_twin"] == [
        _finding(
            "warning",
            "pickle_twin",
            f"{n} beside model.safetensors: a pickle copy of the weights (bytes downloaded twice)",
            files=[n, "model.safetensors"],
        )
        for n in ("pytorch_model.bin", "weights.pt", "weights.pth")
    ]


def test_no_twin_without_exactly_one_safetensors_file(tmp_path):
    _save(tmp_path / "a.safetensors", w=np.zeros(2, np.float32))
    _save(tmp_path / "b.safetensors", w=np.zeros(2, np.float32))
    (tmp_path / "pytorch_model.bin").write_bytes(b"\x80\x02}.")
    found = _json(lint_path(str(tmp_path / "a.safetensors")))
    assert not [f for f in found if f["code"] == "pickle_twin"]


def test_a_doubled_name_part(tmp_path):
    z = np.zeros(2, np.float32)
    _save(
        tmp_path / "m.safetensors",
        **{"enc_blocks_blocks.0.w": z, "enc_blocks.1.w": z, "x_ab_ab": z},
    )
    assert _json(lint_path(str(tmp_path / "m.safetensors"))) == [
        _finding(
            "warning",
            "doubled_key",
            "Names that repeat a part (_blocks_blocks), as a save that added a prefix twice "
            "makes them (the model will not find them): 1",
            ["enc_blocks_blocks.0.w"],
        )
    ]


def test_duplicate_bytes_from_one_kib_and_past_the_probe(tmp_path):
    rng = np.random.default_rng(0)
    big = rng.standard_normal(40_000).astype(np.float32)  # 160 kB: longer than the 64 KiB probe
    late = big.copy()
    late[-1] += 1  # the same first 64 KiB, different after
    kib = rng.standard_normal(256).astype(np.float32)  # exactly 1024 bytes
    small = rng.standard_normal(255).astype(np.float32)
    _save(
        tmp_path / "m.safetensors",
        a=big,
        b=big.copy(),
        c=late,
        d=kib,
        e=kib.copy(),
        f=small,
        g=small.copy(),
        h=big.reshape(200, 200).copy(),  # same bytes, another shape: not a twin
    )
    found = _json(lint_path(str(tmp_path / "m.safetensors")))
    assert found == [
        _finding(
            "info",
            "duplicate_tensor",
            "2 tensors hold identical bytes (160,000 bytes stored again): tied weights saved twice?",
            ["a", "b"],
        ),
        _finding(
            "info",
            "duplicate_tensor",
            "2 tensors hold identical bytes (1,024 bytes stored again): tied weights saved twice?",
            ["d", "e"],
        ),
    ]


def test_the_config_dtype_against_the_weights(tmp_path):
    z = np.zeros(2, np.float32)
    _save(
        tmp_path / "m.safetensors",
        **{
            "l.0.w": z,
            "l.0.input_layernorm.weight": z,
            "l.0.vision.w": z,
            "ids": np.zeros(2, np.int64),
        },
    )
    (tmp_path / "config.json").write_text(
        json.dumps(
            {
                "torch_dtype": "bfloat16",
                "quantization_config": {"modules_to_not_convert": ["vision"]},
            }
        )
    )
    assert _json(lint_path(str(tmp_path / "m.safetensors"))) == [
        _finding(
            "warning",
            "config_dtype",
            "config.json torch_dtype = bfloat16, but 1 of 3 float tensors are F32: "
            "transformers' from_pretrained loads them as BF16 (the config wins, a silent cast), "
            "while burn and safe_open keep F32 (the file is not what the model uses; burn's "
            "first BF16 matmul panics on the mismatch)",
            ["l.0.w"],
            ["config.json"],
        )
    ]


def test_a_broken_config_is_an_error_of_its_own(tmp_path):
    _save(tmp_path / "m.safetensors", w=np.zeros(2, np.float32))
    (tmp_path / "config.json").write_text("{nope")
    found = _json(lint_path(str(tmp_path / "m.safetensors")))
    assert found == [
        _finding("error", "config_invalid", "is not valid JSON", files=["config.json"])
    ]


def test_nan_and_inf_only_with_stats(tmp_path):
    _save(
        tmp_path / "m.safetensors", ok=np.ones(3, np.float32), bad=np.array([1, np.inf], np.float32)
    )
    assert lint_path(str(tmp_path / "m.safetensors")) == []
    assert _json(lint_path(str(tmp_path / "m.safetensors"), stats=True)) == [
        _finding("warning", "nan_inf", "Tensors that hold NaN or ±inf values: 1", ["bad"])
    ]


def test_an_odd_shard_in_a_series_but_not_the_last(tmp_path):
    names = [f"model-0000{i}-of-00005.safetensors" for i in range(1, 6)]
    sizes = [1000, 1000, 9000, 1000, 10]  # the third is odd; the last is the remainder
    weight_map = {}
    for i, (name, n) in enumerate(zip(names, sizes, strict=True)):
        _save(tmp_path / name, **{f"t{i}": np.zeros(n, np.uint8)})
        weight_map[f"t{i}"] = name
    _index(tmp_path, weight_map)
    found = _json(lint_path(str(tmp_path / IDX)))
    assert [f["code"] for f in found] == ["odd_shard_size"]
    assert found[0]["files"] == [names[2]]
    assert found[0]["message"].startswith("Shards far from the series' typical size of ")
    assert found[0]["message"].endswith(": 1")


def test_an_unreadable_folder_with_nothing_else_to_say_is_an_error(tmp_path):
    (tmp_path / "m.safetensors").write_bytes(b"garbage")
    with pytest.raises(CheckpointError):
        lint_path(str(tmp_path / "m.safetensors"))


def test_a_finding_lists_twenty_names_and_counts_them_all(tmp_path):
    z = np.zeros(1, np.float32)
    _save(tmp_path / "m.safetensors", **{f"enc_blocks_blocks.{i:02d}.w": z for i in range(25)})
    (finding,) = _json(lint_path(str(tmp_path / "m.safetensors")))
    assert finding["message"].startswith("Names that repeat a part (_blocks_blocks)")
    assert finding["message"].endswith(": 25")
    assert finding["tensors"] == [f"enc_blocks_blocks.{i:02d}.w" for i in range(20)]


def test_three_shards_are_a_series_the_last_one_is_the_remainder(tmp_path):
    names = [f"model-0000{i}-of-00003.safetensors" for i in range(1, 4)]
    weight_map = {}
    for i, (name, n) in enumerate(zip(names, [8000, 100, 5], strict=True)):
        _save(tmp_path / name, **{f"t{i}": np.zeros(n, np.uint8)})
        weight_map[f"t{i}"] = name
    _index(tmp_path, weight_map)
    found = _json(lint_path(str(tmp_path / IDX)))
    assert [(f["code"], f["files"]) for f in found] == [("odd_shard_size", [names[1]])]


def test_every_list_stops_at_twenty_names_and_every_shard_is_checked(tmp_path):
    """Each finding names twenty tensors but counts them all; a missing shard does not stop the
    check of the next one (they are visited in name order)."""
    z = np.zeros(1, np.float32)
    _save(tmp_path / S2, **{f"extra{i:02d}": z for i in range(25)}, kept=z)
    weight_map = {f"gone{i:02d}": "model-00001-of-00002.safetensors" for i in range(25)}
    weight_map |= {f"absent{i:02d}": S2 for i in range(25)} | {"kept": S2}
    _index(tmp_path, weight_map)
    found = {f["code"]: f for f in _json(lint_path(str(tmp_path / IDX)))}
    assert found["shard_missing"]["tensors"] == [f"gone{i:02d}" for i in range(20)]
    assert found["tensor_not_in_index"]["tensors"] == [f"extra{i:02d}" for i in range(20)]
    assert found["tensor_not_in_index"]["message"] == (
        f"{S2} holds tensors that {IDX} does not map to it (loaders never read them): 25"
    )
    assert found["index_names_missing_tensor"]["tensors"] == [f"absent{i:02d}" for i in range(20)]
    assert found["index_names_missing_tensor"]["message"] == (
        f"{IDX} maps tensors to {S2} that it does not hold: 25"
    )


def test_an_unreadable_shard_does_not_stop_the_next(tmp_path):
    (tmp_path / S1).write_bytes(b"nonsense")
    _save(tmp_path / S2, a=np.zeros(1, np.float32), stray=np.zeros(1, np.float32))
    _index(tmp_path, {"x": S1, "a": S2})
    codes = [f["code"] for f in _json(lint_path(str(tmp_path / IDX)))]
    assert codes[:2] == ["shard_unreadable", "tensor_not_in_index"]


def test_tensors_mapped_elsewhere_are_counted_apart_from_unmapped_ones(tmp_path):
    z = np.zeros(1, np.float32)
    _save(tmp_path / S1, a=z, b=z, c=z, d=z)
    _save(tmp_path / S2, e=z)
    _index(tmp_path, {"a": S1, "b": S2, "e": S2})  # b elsewhere; c and d nowhere
    (finding,) = [
        f for f in _json(lint_path(str(tmp_path / IDX))) if f["code"] == "tensor_not_in_index"
    ]
    assert finding["message"] == (
        f"{S1} holds tensors that {IDX} does not map to it (loaders never read them): 3, "
        "1 of them mapped to another shard"
    )


@pytest.mark.parametrize("metadata", [None, [], "x", {"total_size": "12"}])
def test_an_index_without_a_usable_total_size_says_nothing_about_it(tmp_path, metadata):
    _save(tmp_path / S1, a=np.zeros(1, np.float32))
    _save(tmp_path / S2, b=np.zeros(1, np.float32))
    (tmp_path / IDX).write_text(
        json.dumps({"metadata": metadata, "weight_map": {"a": S1, "b": S2}})
    )
    assert lint_path(str(tmp_path / IDX)) == []


def test_an_index_over_the_100_mb_cap_is_not_read(tmp_path):
    """lint reads an index up to 100,000,001 bytes: a bigger one is unreadable, not parsed (its
    closing brace lies past the cap)."""
    _save(tmp_path / S1, a=np.zeros(1, np.float32))
    head = json.dumps({"weight_map": {"a": S1}})[:-1]
    index = tmp_path / IDX
    index.write_bytes(head.encode() + b" " * (100_000_001 - len(head) - 1) + b"}")
    with pytest.raises(CheckpointError, match="over 100 MB"):  # lint read it; opening refuses it
        lint_path(str(index))
    index.write_bytes(head.encode() + b" " * (100_000_002 - len(head) - 1) + b"}")
    codes = [f.code for f in lint_path(str(index))]
    assert codes == ["index_invalid", "stray_weights", "does_not_open"]


def test_two_indexes_each_use_their_shards(tmp_path):
    z = np.zeros(1, np.float32)
    _save(tmp_path / S1, a=z)
    _save(tmp_path / "model.fp16-00001-of-00001.safetensors", a=z.astype(np.float16))
    _index(tmp_path, {"a": S1})
    _index(
        tmp_path,
        {"a": "model.fp16-00001-of-00001.safetensors"},
        name="model.safetensors.index.fp16.json",
    )
    assert [f["code"] for f in lint_path(str(tmp_path))] == []


def test_pickle_twins_of_sharded_safetensors(tmp_path):
    _save(tmp_path / S1, a=np.zeros(1, np.float32))
    _index(tmp_path, {"a": S1})
    for twin in ("weights.pt", "weights.pth", "model.ckpt"):
        (tmp_path / twin).write_bytes(b"\x80\x02}.")
    found = {f["files"][0]: f["code"] for f in _json(lint_path(str(tmp_path / IDX)))}
    assert found == {"weights.pt": "pickle_twin", "weights.pth": "pickle_twin"} | (
        {"model.ckpt": "stray_weights"} if "model.ckpt" in found else {}
    )


def test_duplicates_found_after_a_lone_tensor_and_a_lone_probe(tmp_path):
    rng = np.random.default_rng(1)
    pair = rng.standard_normal(512).astype(np.float32)
    _save(
        tmp_path / "m.safetensors",
        a_lone=rng.standard_normal(300).astype(np.float32),  # a group of one, visited first
        b_other=rng.standard_normal(512).astype(np.float32),  # same shape as the pair, other bytes
        c=pair,
        d=pair.copy(),
    )
    assert [f["tensors"] for f in _json(lint_path(str(tmp_path / "m.safetensors")))] == [["c", "d"]]


def test_duplicates_differing_only_after_eight_mib(tmp_path):
    """The full hash reads every chunk, not just the first (8 MiB)."""
    big = np.zeros(3 << 20, np.float32)  # 12 MiB
    late = big.copy()
    late[-1] = 1
    _save(tmp_path / "m.safetensors", a=big, b=late)
    assert lint_path(str(tmp_path / "m.safetensors")) == []


def test_the_config_dtype_names_every_kind_found(tmp_path):
    _save(
        tmp_path / "m.safetensors",
        a=np.zeros(2, np.float32),
        b=np.zeros(2, np.float16),
        **{f"c{i:02d}": np.zeros(1, np.float64) for i in range(22)},
    )
    (tmp_path / "config.json").write_text(json.dumps({"torch_dtype": "bfloat16"}))
    (finding,) = _json(lint_path(str(tmp_path / "m.safetensors")))
    assert "24 of 24 float tensors are F16/F32/F64:" in finding["message"]
    assert len(finding["tensors"]) == 24  # every one: a cut list made the counts disagree


def test_nan_findings_list_twenty(tmp_path):
    bad = np.array([np.nan], np.float32)
    _save(tmp_path / "m.safetensors", **{f"t{i:02d}": bad for i in range(21)})
    (finding,) = _json(lint_path(str(tmp_path / "m.safetensors"), stats=True))
    assert finding["message"] == "Tensors that hold NaN or ±inf values: 21"
    assert finding["tensors"] == [f"t{i:02d}" for i in range(20)]


def _shard_of_size(path, name: str, size: int, fill: int) -> None:
    """A real safetensors shard whose file is exactly ``size`` bytes (the header's length
    depends on the digits of the data length, so settle it by iteration)."""
    n = size
    for _ in range(5):
        _save(path, **{name: np.full(n, fill, np.uint8)})  # no two shards alike
        n += size - path.stat().st_size
    assert path.stat().st_size == size


@pytest.mark.parametrize(
    ("odd_size", "flagged"),
    [
        (600_000, False),  # exactly twice the median
        (600_004, True),
        (750_000, True),
        (75_000, False),  # exactly a quarter
        (74_996, True),
        (66_000, True),
    ],
)
def test_the_odd_shard_thresholds_are_twice_and_a_quarter_of_the_median(
    tmp_path, odd_size, flagged
):
    names = [f"model-0000{i}-of-00005.safetensors" for i in range(1, 6)]
    sizes = [300_000, 300_000, 300_000, odd_size, 100]
    for i, (name, size) in enumerate(zip(names, sizes, strict=True)):
        _shard_of_size(tmp_path / name, f"t{i}", size, fill=i)
    _index(tmp_path, {f"t{i}": name for i, name in enumerate(names)})
    found = _json(lint_path(str(tmp_path / IDX)))
    assert [f["files"] for f in found] == ([[names[3]]] if flagged else [])
    if flagged:
        assert found[0]["message"] == "Shards far from the series' typical size of 293.0 KiB: 1"


def test_albert_s_real_doubled_word_is_not_a_doubled_key(tmp_path):
    """ALBERT's ``full_layer_layer_norm`` loads with 0 missing keys: not a doubled prefix."""
    z = np.zeros(2, np.float32)
    _save(
        tmp_path / "m.safetensors",
        **{
            "albert.encoder.albert_layer_groups.0.albert_layers.0.full_layer_layer_norm.weight": z,
            "albert.encoder.albert_layer_groups.0.albert_layers.0.full_layer_layer_norm.bias": z,
        },
    )
    assert not [f for f in _json(lint_path(str(tmp_path))) if f["code"] == "doubled_key"]


def test_a_finding_keeps_its_untranslated_template_and_its_filled_in_fields():
    """The window translates ``template`` and fills in ``fields`` (gui/lint_texts.py): both are
    kept next to the English message, numbers with separators. (Mutation testing: a finding
    without them passed every core test.)"""
    from inspector.core.model_folder.findings import TEMPLATES, Severity, finding

    f = finding(Severity.ERROR, "quant_bad_scales", "quant_bad_scales", ["w"], n=1234)
    assert f.template == TEMPLATES["quant_bad_scales"]
    assert f.fields == {"n": "1,234"}
    assert f.message == "Quantized weights with a scale that is 0, negative, inf or NaN: 1,234"


def _imports(*modules: str) -> bytes:
    """A protocol-2 pickle of a tuple of globals ``<module>.f``: what it imports, nothing more."""
    return b"\x80\x02(" + b"".join(b"c" + m.encode() + b"\nf\n" for m in modules) + b"t."


def test_pickles_beside_the_weights_are_each_named_with_the_first_five_imports(tmp_path):
    """Every pickle beside the weights is scanned, past a clean one; each finding names its file
    and up to five imports (a name clipped to 120 characters), then how many more. (Mutation
    testing: stopping at the clean pickle, a finding naming no file, a "(+0)" after five
    imports, or another clip length passed.)"""
    save_file({"w": np.ones(2, np.float32)}, str(tmp_path / "model.safetensors"))
    (tmp_path / "a_clean.pt").write_bytes(b"\x80\x02}q\x00.")
    long = "m" * 130
    (tmp_path / "optimizer.pt").write_bytes(_imports(long, "b1", "b2", "b3", "b4", "b5"))
    (tmp_path / "rng_state.pth").write_bytes(_imports("c1", "c2", "c3", "c4", "c5"))
    (tmp_path / "scheduler.pt").write_bytes(_imports("d1"))
    run = " is not a weights file, and it imports {}: torch.load(weights_only=False) of it would "
    run += "run them (nothing was run here)"
    found = [f for f in _json(lint_path(str(tmp_path))) if f["code"] == "pickle_imports"]
    assert found == [
        _finding(
            "warning",
            "pickle_imports",
            name + run.format(imports),
            files=[name],
        )
        for name, imports in (
            ("optimizer.pt", "m" * 117 + "..., b1.f, b2.f, b3.f, b4.f (+1)"),
            ("rng_state.pth", "c1.f, c2.f, c3.f, c4.f, c5.f"),
            ("scheduler.pt", "d1.f"),
        )
    ]


def test_a_weights_shard_holding_unknown_objects_is_named_after_a_clean_one(tmp_path):
    """Each weights pickle of a series is judged, past a first shard that holds none. (Mutation
    testing: stopping at the clean shard passed.)"""
    import struct

    from tests.core.pickle_craft import G, N, dumps, storage, v2, zip_file

    w = v2(storage("FloatStorage", "0", 2), 0, (2,), (1,))
    data = {"0": struct.pack("<2f", 1.5, -2.0)}
    shards = ["pytorch_model-00001-of-00002.bin", "pytorch_model-00002-of-00002.bin"]
    (tmp_path / shards[0]).write_bytes(zip_file(dumps({"a": w}), data))
    (tmp_path / shards[1]).write_bytes(
        zip_file(dumps({"b": w, "x": N(G("evil", "Obj"), ())}), data)
    )
    _index(tmp_path, {"a": shards[0], "b": shards[1]}, name="pytorch_model.bin.index.json")
    found = [f for f in _json(lint_path(str(tmp_path))) if f["code"] == "weights_unknown_objects"]
    assert found == [
        _finding(
            "warning",
            "weights_unknown_objects",
            f"{shards[1]} imports evil.Obj, kept as inert placeholders here (nothing was run): "
            "torch.load(weights_only=True) refuses it, and weights_only=False would run them",
            files=[shards[1]],
        )
    ]
