"""The registry: the strongest claim reads a file, equal claims are tried in turn, and a file one
format read is offered to every other format's polyglot check. A toy format proves that a new
format is one plug-in, with no change to opening."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from inspector.core.errors import CheckpointError
from inspector.core.formats import registry
from inspector.core.formats.protocol import Claim
from inspector.core.formats.safetensors import FORMAT_NAME as SAFETENSORS
from inspector.core.formats.torch_pickle import FORMAT_NAME as TORCH_PICKLE
from inspector.core.layout import Header, TensorInfo
from inspector.core.opening import open_checkpoint
from tests.hostile_folders import F32, save_arrays

from .pickle_craft import dumps, legacy_file


class ToyFormat:
    """``TOY1`` then nothing: a file of one empty F32 tensor named ``toy``."""

    name = "toy"

    def __init__(self, polyglot_says: str | None = None) -> None:
        self.polyglot_says = polyglot_says

    def claim(self, path, head, f):
        return Claim.SIGNATURE if head.startswith(b"TOY1") else Claim.NO

    def read(self, path):
        import os

        size = os.path.getsize(path)
        tensor = TensorInfo("F32", (0,), (0, 0), "toy", path)
        return Header(path, [tensor], {"made_by": "toy"}, size, size, self.name, facts="toy facts")

    def refuse_if_also_mine(self, path):
        if self.polyglot_says:
            raise CheckpointError(path, self.polyglot_says)


@pytest.fixture
def toy(monkeypatch):
    fmt = ToyFormat()
    monkeypatch.setattr(registry, "FORMATS", (*registry.FORMATS, fmt))
    return fmt


def test_a_new_format_is_one_plug_in(tmp_path, toy):
    path = tmp_path / "weights.toy"
    path.write_bytes(b"TOY1")
    with open_checkpoint(path) as ckpt:
        assert [t.name for t in ckpt.tensors] == ["toy"]
        assert ckpt.files[0].format == "toy" and ckpt.files[0].facts == "toy facts"
        assert ckpt.metadata == {"made_by": "toy"}


def test_every_other_format_checks_for_a_polyglot(tmp_path, toy):
    path = tmp_path / "m.safetensors"
    save_arrays(path, [("w", F32, np.zeros(2, np.float32))])
    assert registry.read_file(str(path)).format == SAFETENSORS
    toy.polyglot_says = "is also a toy file"
    with pytest.raises(CheckpointError, match="is also a toy file"):
        registry.read_file(str(path))


def test_a_claim_by_bytes_beats_a_claim_by_name(tmp_path, toy):
    path = tmp_path / "m.safetensors"  # named safetensors, its bytes say toy
    path.write_bytes(b"TOY1")
    assert registry.read_file(str(path)).format == "toy"


def test_equal_claims_are_tried_in_turn_and_the_last_refusal_is_shown(tmp_path):
    legacy = tmp_path / "m.bin"
    legacy.write_bytes(legacy_file(dumps({}), {}))  # safetensors tries first (MAYBE), then pickle
    header = registry.read_file(str(legacy))
    assert header.format == TORCH_PICKLE and header.tensors == []
    plain = tmp_path / "p.bin"
    plain.write_bytes(b"\x80\x02}q\x00.")
    with pytest.raises(CheckpointError, match="plain Python pickle"):
        registry.read_file(str(plain))
    broken = tmp_path / "b.bin"
    broken.write_bytes(b"\x80\x02}q\x00")  # no STOP: refused as a pickle, not as safetensors
    with pytest.raises(CheckpointError, match="pickle ends without a STOP"):
        registry.read_file(str(broken))


def test_a_file_no_format_claims_is_named_by_the_safetensors_reader(tmp_path):
    path = tmp_path / "m.onnx"
    path.write_bytes(b"\x08\x07\x12\x04" + b"\x00" * 60)
    with pytest.raises(CheckpointError) as e:
        registry.read_file(str(path))
    assert e.value.path == str(path) and "\n" not in e.value.reason


def test_header_fields_are_the_format_neutral_layout():
    h = Header("p", [], None, 0, 0, "x")
    assert replace(h, facts=1).facts == 1 and h.facts is None
