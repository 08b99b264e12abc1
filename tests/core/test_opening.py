"""Which checkpoint a folder opens as: transformers' priorities (safetensors before pickles), hidden
files ignored, one pickle opened, several named, and the folder remembered."""

from __future__ import annotations

import json
import os

import numpy as np
import pytest
from safetensors.numpy import save_file

from inspector.core.errors import AmbiguousCheckpointError, CheckpointError
from inspector.core.opening import open_checkpoint

torch = pytest.importorskip("torch")


def _refused(path) -> tuple[str | None, str]:
    """The file a refusal names and its reason."""
    with pytest.raises(CheckpointError) as e:
        open_checkpoint(path)
    return e.value.path, e.value.reason


def _index(folder, name, shard):
    (folder / name).write_text(json.dumps({"metadata": {}, "weight_map": {"w": shard}}))


def test_a_safetensors_index_comes_before_a_pickle_index(tmp_path):
    save_file({"w": np.zeros(2, np.float32)}, str(tmp_path / "model-00001-of-00001.safetensors"))
    _index(tmp_path, "model.safetensors.index.json", "model-00001-of-00001.safetensors")
    torch.save({"w": torch.zeros(2)}, tmp_path / "pytorch_model-00001-of-00001.bin")
    _index(tmp_path, "pytorch_model.bin.index.json", "pytorch_model-00001-of-00001.bin")
    with open_checkpoint(tmp_path) as ckpt:
        assert ckpt.index_path.endswith("model.safetensors.index.json")
        assert ckpt.folder == str(tmp_path)


def test_hidden_files_are_not_checkpoints(tmp_path):
    save_file({"w": np.zeros(2, np.float32)}, str(tmp_path / "model.safetensors"))
    save_file({"v": np.zeros(2, np.float32)}, str(tmp_path / ".backup.safetensors"))
    (tmp_path / ".old.safetensors.index.json").write_text("{}")
    with open_checkpoint(tmp_path) as ckpt:
        assert [t.name for t in ckpt.tensors] == ["w"] and ckpt.folder == str(tmp_path)


def test_one_pickle_is_opened_two_are_named(tmp_path):
    torch.save({"w": torch.zeros(2)}, tmp_path / "pytorch_model.bin")
    (tmp_path / ".hidden.bin").write_bytes(b"x")
    with open_checkpoint(tmp_path) as ckpt:
        assert [t.name for t in ckpt.tensors] == ["w"]
    torch.save({"v": torch.zeros(2)}, tmp_path / "other.pt")
    with open_checkpoint(tmp_path) as ckpt:  # the weights name wins, as transformers picks it
        assert [t.name for t in ckpt.tensors] == ["w"]
    (tmp_path / "pytorch_model.bin").rename(tmp_path / "weights.pt")
    with pytest.raises(AmbiguousCheckpointError) as e:
        open_checkpoint(tmp_path)
    assert (e.value.path, e.value.reason) == (
        str(tmp_path),
        "folder holds 2 PyTorch pickle files but no index.json to join them; open one file",
    )
    assert sorted(e.value.choices) == [
        str(tmp_path / "other.pt"),
        str(tmp_path / "weights.pt"),
    ]


def test_two_indexes_are_offered_as_choices(tmp_path):
    save_file({"w": np.zeros(2, np.float32)}, str(tmp_path / "a-00001-of-00001.safetensors"))
    _index(tmp_path, "a.safetensors.index.json", "a-00001-of-00001.safetensors")
    _index(tmp_path, "a.safetensors.index.fp16.json", "a-00001-of-00001.safetensors")
    with pytest.raises(AmbiguousCheckpointError) as e:
        open_checkpoint(tmp_path)
    assert sorted(e.value.choices) == sorted(
        str(tmp_path / n) for n in ("a.safetensors.index.json", "a.safetensors.index.fp16.json")
    )
    assert (e.value.path, e.value.reason) == (
        str(tmp_path),
        "holds 2 index files (a.safetensors.index.fp16.json, a.safetensors.index.json); "
        "open one of them",
    )


def test_an_index_of_exactly_100_mb_opens_one_byte_more_does_not(tmp_path):
    from inspector.core.index_file import MAX_INDEX_BYTES

    save_file({"w": np.zeros(2, np.float32)}, str(tmp_path / "m-00001-of-00001.safetensors"))
    body = json.dumps({"weight_map": {"w": "m-00001-of-00001.safetensors"}})[:-1].encode()
    index = tmp_path / "m.safetensors.index.json"
    index.write_bytes(body + b" " * (MAX_INDEX_BYTES - len(body) - 1) + b"}")
    with open_checkpoint(index) as ckpt:
        assert [t.name for t in ckpt.tensors] == ["w"]
    index.write_bytes(body + b" " * (MAX_INDEX_BYTES - len(body)) + b"}")
    assert _refused(index) == (
        str(index),
        "index file is over 100 MB; not a safetensors index",
    )


@pytest.mark.parametrize(
    ("shard", "says"),
    [
        ("..\\evil.safetensors", "points outside the index's folder"),
        ("sub\\..\\..\\evil.safetensors", "points outside the index's folder"),
        ("sub//x.safetensors", "is not a plain relative file name"),
        ("./x.safetensors", "is not a plain relative file name"),
        ("sub\\.\\x.safetensors", "is not a plain relative file name"),
        ("sub/", "is not a plain relative file name"),
    ],
)
def test_shard_names_that_leave_the_folder_or_are_not_plain_are_refused(tmp_path, shard, says):
    _index(tmp_path, "m.safetensors.index.json", shard)
    assert _refused(tmp_path / "m.safetensors.index.json") == (
        str(tmp_path / "m.safetensors.index.json"),
        f"shard {shard!r} {says}",
    )


def test_many_tensors_in_one_shard_and_the_index_metadata(tmp_path):
    z = np.zeros(2, np.float32)
    save_file({"a": z, "b": z, "c": z}, str(tmp_path / "m-00001-of-00001.safetensors"))
    shard = "m-00001-of-00001.safetensors"
    for meta, kept in (({"total_size": 24, "format": "pt"}, {"total_size": 24, "format": "pt"}),
                       ([1, 2], None), ("x", None)):  # fmt: skip
        (tmp_path / "m.safetensors.index.json").write_text(
            json.dumps({"metadata": meta, "weight_map": {"a": shard, "b": shard, "c": shard}})
        )
        with open_checkpoint(tmp_path / "m.safetensors.index.json") as ckpt:
            assert [t.name for t in ckpt.tensors] == ["a", "b", "c"]
            assert ckpt.index_metadata == kept


@pytest.mark.parametrize(("digits", "checked"), [(12, True), (13, False)])
def test_a_forgotten_shard_is_found_in_series_of_up_to_twelve_digits(tmp_path, digits, checked):
    """A name claiming more siblings than that is not a series anyone writes: not looked for."""
    first, second = (f"m-{i:0{digits}d}-of-{2:0{digits}d}.safetensors" for i in (1, 2))
    save_file({"w": np.zeros(2, np.float32)}, str(tmp_path / first))
    save_file({"v": np.zeros(2, np.float32)}, str(tmp_path / second))
    _index(tmp_path, "m.safetensors.index.json", first)
    if checked:
        with pytest.raises(CheckpointError, match=second) as e:
            open_checkpoint(tmp_path / "m.safetensors.index.json")
        assert e.value.path == str(tmp_path / "m.safetensors.index.json")
    else:
        with open_checkpoint(tmp_path / "m.safetensors.index.json") as ckpt:
            assert [t.name for t in ckpt.tensors] == ["w"]


def test_several_safetensors_files_are_offered_as_choices(tmp_path):
    for name in ("b.safetensors", "a.safetensors"):
        save_file({"w": np.zeros(2, np.float32)}, str(tmp_path / name))
    with pytest.raises(AmbiguousCheckpointError) as e:
        open_checkpoint(tmp_path)
    assert e.value.path == str(tmp_path)
    assert e.value.choices == [str(tmp_path / "a.safetensors"), str(tmp_path / "b.safetensors")]


@pytest.mark.parametrize("shard", [5, ["m.safetensors"], ""])
def test_a_weight_map_entry_that_is_not_a_file_name(tmp_path, shard):
    index = tmp_path / "m.safetensors.index.json"
    index.write_text(json.dumps({"weight_map": {"w": shard}}))
    assert _refused(index) == (
        str(index),
        "weight_map entry for 'w' is not a file name",
    )


def test_every_name_the_index_lists_for_a_shard_is_looked_for(tmp_path):
    save_file({"a": np.zeros(2, np.float32)}, str(tmp_path / "s.safetensors"))
    index = tmp_path / "m.safetensors.index.json"
    index.write_text(json.dumps({"weight_map": {"ghost": "s.safetensors", "a": "s.safetensors"}}))
    assert _refused(index) == (
        str(index),
        "tensor 'ghost' is listed in the index but missing from shard 's.safetensors'",
    )


def test_shard_zero_or_past_the_count_is_not_part_of_the_series(tmp_path):
    """Only 1..N of an N-file series are looked for: ``-00000-of-00002`` and ``-00003-of-00002``
    lying beside it are not 'forgotten' shards."""
    for name, t in (("m-00001-of-00002", "a"), ("m-00002-of-00002", "b")):
        save_file({t: np.zeros(2, np.float32)}, str(tmp_path / f"{name}.safetensors"))
    for stray in ("m-00000-of-00002", "m-00003-of-00002"):
        save_file({"x": np.zeros(2, np.float32)}, str(tmp_path / f"{stray}.safetensors"))
    index = tmp_path / "m.safetensors.index.json"
    index.write_text(
        json.dumps(
            {
                "weight_map": {
                    "a": "m-00001-of-00002.safetensors",
                    "b": "m-00002-of-00002.safetensors",
                }
            }
        )
    )
    with open_checkpoint(index) as ckpt:
        assert [t.name for t in ckpt.tensors] == ["a", "b"]
    index.write_text(json.dumps({"weight_map": {"b": "m-00002-of-00002.safetensors"}}))
    with pytest.raises(CheckpointError) as e:  # shard 1 forgotten: found
        open_checkpoint(index)
    assert e.value.path == str(index) and "m-00001-of-00002.safetensors" in e.value.reason


def test_a_folder_with_only_a_pickle_index_opens_it(tmp_path):
    torch.save({"w": torch.zeros(2)}, tmp_path / "pytorch_model-00001-of-00001.bin")
    _index(tmp_path, "pytorch_model.bin.index.json", "pytorch_model-00001-of-00001.bin")
    with open_checkpoint(tmp_path) as ckpt:
        assert ckpt.index_path == str(tmp_path / "pytorch_model.bin.index.json")
        assert ckpt.path == ckpt.index_path
        assert [t.name for t in ckpt.tensors] == ["w"]


def test_long_index_names_are_clipped_in_the_choice_message(tmp_path):
    long = "m" * 100
    for variant in ("", ".fp16"):
        _index(tmp_path, f"{long}.safetensors.index{variant}.json", "x.safetensors")
    with pytest.raises(AmbiguousCheckpointError) as e:
        open_checkpoint(tmp_path)
    names = e.value.reason.removeprefix("holds 2 index files (").split("); ")[0].split(", ")
    assert [len(n) for n in names] == [80, 80] and all(n.endswith("...") for n in names)


def test_a_nul_in_an_index_shard_name_is_one_clear_line(tmp_path):
    """Found by an independent review: os.stat raised ValueError (a traceback in every command)."""
    import json

    from safetensors.numpy import save_file

    save_file({"w": np.zeros(2, np.float32)}, str(tmp_path / "model.safetensors"))
    index = {"weight_map": {"w": "model.safetensors", "v": "evil.bin\u0000.safetensors"}}
    (tmp_path / "model.safetensors.index.json").write_text(json.dumps(index))
    with pytest.raises(CheckpointError, match="holds a NUL byte"):
        open_checkpoint(tmp_path)


@pytest.mark.parametrize(
    "journals, notice",
    [
        ([".aaaaaaaaaaaa.txn"], "an interrupted save left .aaaaaaaaaaaa.txn in this folder"),
        (
            [".aaaaaaaaaaaa.txn", ".bbbbbbbbbbbb.txn"],
            "an interrupted save left .aaaaaaaaaaaa.txn and 1 more in this folder",
        ),
    ],
)
def test_the_interrupted_save_notice_counts_the_other_journals(journals, notice):
    """One journal is named alone ("and 0 more" nowhere); a second is counted."""
    from inspector.core.opening import interrupted_save_notice

    assert interrupted_save_notice(journals) == (
        f"{notice}; the next cast into this folder finishes it"
    )


def _index_refusal(tmp_path, weight_map: object) -> tuple[str | None, str]:
    save_file({"w": np.zeros(2, np.float32)}, str(tmp_path / "b.safetensors"))
    doc = {"metadata": {}} if weight_map is None else {"weight_map": weight_map}
    (tmp_path / "model.safetensors.index.json").write_text(json.dumps(doc))
    path, reason = _refused(tmp_path / "model.safetensors.index.json")
    return os.path.basename(path), reason


@pytest.mark.parametrize(
    "weight_map, refusal",
    [
        (None, 'not a safetensors index: no "weight_map"'),
        (
            ["w"],
            '"weight_map" must be an object of tensor name to shard file, got a list',
        ),
        ({}, '"weight_map" is empty: the index names no tensors'),
        (
            {"w": "b\u0000.safetensors"},
            "shard 'b\\x00.safetensors' holds a NUL byte: no file has that name",
        ),
    ],
    ids=["no weight_map", "a list", "empty", "NUL"],
)
def test_an_index_that_names_no_usable_shards_is_refused_with_exactly_why(
    tmp_path, weight_map, refusal
):
    """Each refusal of the index itself names the index file and says what is wrong with it."""
    assert _index_refusal(tmp_path, weight_map) == ("model.safetensors.index.json", refusal)


def test_a_tensor_the_index_puts_in_another_shard_is_refused_by_the_shard_holding_it(tmp_path):
    """The shard read first that holds a tensor the index maps elsewhere is the file named."""
    save_file(
        {"w": np.zeros(2, np.float32), "x": np.zeros(2, np.float32)},
        str(tmp_path / "a.safetensors"),
    )
    assert _index_refusal(tmp_path, {"x": "a.safetensors", "w": "b.safetensors"}) == (
        "a.safetensors",
        "tensor 'w' is in this shard but the index puts it in 'b.safetensors'",
    )
