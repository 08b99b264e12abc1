"""A checkpoint whose pickle names unknown classes (omegaconf hyper-parameters, a class of the
training code) opens: the unknown objects are inert placeholders, every tensor that allowlisted
code alone rebuilds is read bit for bit as torch gives it, and a tensor whose rebuild needs an
unknown object is named as not read. Nothing of the file's code is imported or run."""

from __future__ import annotations

import sys

import numpy as np
import pytest

from inspector.core.formats.torch_pickle import ImportVerdict, pickle_facts
from inspector.core.opening import open_checkpoint
from inspector.core.scan.walk import ScanStatus, scan_file
from inspector.core.unknown_objects import unknown_imports, unknown_notices, unread_tensors
from tests.unknown_objects_ckpt import FAKE_OMEGACONF, MODULE, UNKNOWN, UNREAD, make_checkpoint

torch = pytest.importorskip("torch")


def _bytes(a) -> bytes:
    """A tensor's or array's values as bytes, in row-major order."""
    if isinstance(a, torch.Tensor):
        return a.contiguous().view(torch.uint8).numpy().tobytes()
    return np.ascontiguousarray(a).tobytes()


@pytest.fixture(params=[False, True], ids=["zip", "legacy"])
def made(tmp_path, request):
    return make_checkpoint(tmp_path, legacy=request.param)


def test_torch_weights_only_refuses_the_fixture(made):
    """What the issue is about: torch's safe loader refuses the whole file."""
    with pytest.raises(Exception, match="Unsupported global"):
        torch.load(made.path, weights_only=True)


def test_it_opens_as_its_model_with_every_allowlisted_tensor_bit_exact(made):
    with open_checkpoint(made.path) as ckpt:
        assert ckpt.training is not None and ckpt.training.prefix == "state_dict."
        assert sorted(t.name for t in ckpt.tensors) == sorted(made.state_dict)
        for name, t in made.state_dict.items():
            info = ckpt[name]
            assert info.shape == tuple(t.shape), name
            assert _bytes(ckpt.view(name)) == _bytes(t), name
    assert not made.canary.exists()
    assert MODULE not in sys.modules and not set(FAKE_OMEGACONF) & set(sys.modules)


def test_a_tensor_inside_an_unknown_object_is_read_under_its_attribute_or_key(made):
    with open_checkpoint(made.path, keep_all=True) as ckpt:
        names = {t.name for t in ckpt.tensors}
        assert {"settings.scale", "hparams.mask"} <= names
        assert _bytes(ckpt.view("settings.scale")) == _bytes(made.settings_scale)
        assert ckpt["settings.scale"].dtype_name == "F64"
        assert ckpt.view("hparams.mask").tolist() == [True, False, True]


def test_the_unknown_imports_and_unread_tensors_are_named(made):
    with open_checkpoint(made.path) as ckpt:
        facts = pickle_facts(ckpt.files[0])
        assert facts.unknown == UNKNOWN == unknown_imports(ckpt)
        assert unread_tensors(ckpt) == list(UNREAD)
        values = {v.name: v for v in facts.values}
        for name, needs in UNREAD.items():
            assert values[name].unread and values[name].left_out
            assert values[name].text == (
                f"tensor not read: its rebuild needs {needs}, which was not executed; "
                "left out of cast"
            )
        assert values["hyper_parameters"].text == (
            "omegaconf.dictconfig.DictConfig object, not built (unknown code, not executed)"
        )
        assert not values["hyper_parameters"].left_out
        assert values["settings"].text.startswith(f"{MODULE}.Settings object, not built")
        assert values["epoch"].text == "3"
        # the placeholder's own state (lr, nodes, metadata) is not listed as values
        assert not [
            n for n in values if n.startswith(("hyper_parameters.", "settings.", "hparams."))
        ]
        notes = unknown_notices(ckpt)
    assert notes == [
        f"unknown objects not executed: {', '.join(UNKNOWN[:5])} and 6 more (kept as inert "
        "placeholders; torch.load(weights_only=True) refuses this file: see "
        "checkpoint-inspector scan)",
        "2 tensors not read, their rebuild needs an unknown object: state_dict.head.scaled, "
        "state_dict.head.packed",
    ]
    assert not made.canary.exists()


def test_scan_still_calls_it_unsafe_for_torch(made):
    scan = scan_file(str(made.path))
    assert scan.status is ScanStatus.REFUSED
    refused = [i.name for i in scan.imports if i.verdict is ImportVerdict.REFUSED]
    assert sorted(refused) == sorted(UNKNOWN)


def test_a_checkpoint_of_allowlisted_objects_has_no_unknown_and_no_notice(tmp_path):
    path = tmp_path / "plain.pt"
    torch.save({"w": torch.ones(2)}, path)
    with open_checkpoint(path) as ckpt:
        assert pickle_facts(ckpt.files[0]).unknown == []
        assert unknown_notices(ckpt) == [] and unknown_imports(ckpt) == []
