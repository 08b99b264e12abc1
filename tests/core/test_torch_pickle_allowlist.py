"""The stand-ins for torch's rebuild functions check their arguments exactly: how many, and that
offsets, shapes and strides are non-negative integers (a crafted pickle may send anything)."""

from __future__ import annotations

import pytest

from inspector.core.dtypes import DTYPES
from inspector.core.torch_pickle.allowlist import ALLOWED, StorageRef, TensorRecord, qualname
from inspector.core.torch_pickle.machine import PickleError
from inspector.core.torch_pickle.values import COMPUTED, EXTENSION

V2 = ALLOWED["torch._utils._rebuild_tensor_v2"]
V3 = ALLOWED["torch._utils._rebuild_tensor_v3"]
PARAM = ALLOWED["torch._utils._rebuild_parameter"]
F32_STORAGE = StorageRef("0", DTYPES["F32"], 12)


def v2(offset=0, size=(3, 4), stride=(4, 1), extra=()):
    return V2.call((F32_STORAGE, offset, size, stride, False, {}, *extra))


def test_a_well_formed_call_gives_the_view():
    rec = v2(offset=1, size=[2, 2], stride=[2, 1])
    assert (rec.dtype, rec.offset, rec.shape, rec.stride) == (DTYPES["F32"], 1, (2, 2), (2, 1))
    assert v2(extra=({"meta": 1},)).shape == (3, 4)  # the optional metadata argument


@pytest.mark.parametrize(
    ("kwargs", "says"),
    [
        ({"offset": -1}, "storage offset is not a non-negative integer"),
        ({"offset": 1.0}, "storage offset is not a non-negative integer"),
        ({"size": 12}, "tensor shape is not a tuple of non-negative integers"),
        ({"size": (3, -4)}, "tensor shape is not a tuple of non-negative integers"),
        ({"size": (3, True)}, "tensor shape is not a tuple of non-negative integers"),
        ({"stride": (4, -1)}, "tensor stride is not a tuple of non-negative integers"),
        ({"stride": (4,)}, "shape and stride have different lengths"),
        ({"extra": ({}, "one too many")}, "called with 8 arguments"),
    ],
)
def test_malformed_arguments_are_refused_with_the_reason(kwargs, says):
    with pytest.raises(PickleError, match=says):
        v2(**kwargs)


def test_argument_counts_of_v2_v3_and_parameters():
    with pytest.raises(PickleError, match="called with 5 arguments"):
        V2.call((F32_STORAGE, 0, (12,), (1,), False))
    f16 = ALLOWED["torch.float16"]
    untyped = StorageRef("0", None, 24)
    rec = V3.call((untyped, 0, (12,), (1,), False, {}, f16))
    assert rec.dtype == DTYPES["F16"]
    with pytest.raises(PickleError, match="called with 6 arguments"):
        V3.call((untyped, 0, (12,), (1,), False, {}))
    for args in ((rec, False, {}), (rec, False, {}, {"state": 1})):
        assert PARAM.call(args) is rec
    for args in ((rec, False), (rec, False, {}, {}, 5), ("not a tensor", False, {})):
        with pytest.raises(PickleError, match="called without a tensor"):
            PARAM.call(args)
    assert isinstance(rec, TensorRecord)


def test_unusual_globals_are_named_for_a_person():
    assert qualname("os", "system") == "os.system"
    assert qualname(COMPUTED, "x") == "a global whose name is computed at load time"
    assert qualname(EXTENSION, "7") == "extension code 7 (copyreg registry)"
