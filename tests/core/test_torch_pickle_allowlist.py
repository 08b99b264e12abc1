"""The stand-ins for torch's rebuild functions check their arguments exactly: how many, and that
offsets, shapes and strides are non-negative integers (a crafted pickle may send anything)."""

from __future__ import annotations

import pytest

from inspector.core.dtypes import DTYPES
from inspector.core.formats.torch_pickle.allowlist import (
    ALLOWED,
    StorageRef,
    TensorRecord,
    qualname,
)
from inspector.core.formats.torch_pickle.machine import PickleError
from inspector.core.formats.torch_pickle.values import COMPUTED, EXTENSION

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
        ({"offset": -1}, "storage offset is not an integer from 0 to 2**63"),
        ({"offset": 1.0}, "storage offset is not an integer from 0 to 2**63"),
        ({"size": 12}, "tensor shape is not a tuple of integers from 0 to 2**63"),
        ({"size": (3, -4)}, "tensor shape is not a tuple of integers from 0 to 2**63"),
        ({"size": (3, True)}, "tensor shape is not a tuple of integers from 0 to 2**63"),
        ({"stride": (4, -1)}, "tensor stride is not a tuple of integers from 0 to 2**63"),
        ({"stride": (4,)}, "shape and stride have different lengths"),
        ({"extra": ({}, "one too many")}, "called with 8 arguments"),
    ],
)
def test_malformed_arguments_are_refused_with_the_reason(kwargs, says):
    with pytest.raises(PickleError) as e:
        v2(**kwargs)
    assert str(e.value) in (says, f"a tensor's {says}", f"torch._utils._rebuild_tensor_v2 {says}")
    assert str(e.value).endswith(says) and len(str(e.value)) <= len(says) + 33


def test_argument_counts_of_v2_v3_and_parameters():
    with pytest.raises(PickleError, match="called with 5 arguments"):
        V2.call((F32_STORAGE, 0, (12,), (1,), False))
    f16 = ALLOWED["torch.float16"]
    untyped = StorageRef("0", None, 24)
    rec = V3.call((untyped, 0, (12,), (1,), False, {}, f16))
    assert rec.dtype == DTYPES["F16"]
    with pytest.raises(PickleError, match="called with 6 arguments"):
        V3.call((untyped, 0, (12,), (1,), False, {}))
    with_state = ALLOWED["torch._utils._rebuild_parameter_with_state"]
    for param in (PARAM.call((rec, False, {})), with_state.call((rec, False, {}, {"state": 1}))):
        # a new object on the same view (torch's Parameter(data) is one): BUILD on it is its own
        assert param is not rec and param.__dict__ == rec.__dict__
    for args in ((rec, False), (rec, False, {}, {}), ("not a tensor", False, {})):
        with pytest.raises(PickleError, match="called without a tensor"):
            PARAM.call(args)
    with pytest.raises(PickleError, match="called without a tensor"):
        with_state.call((rec, False, {}))
    assert isinstance(rec, TensorRecord)


def test_unusual_globals_are_named_for_a_person():
    assert qualname("os", "system") == "os.system"
    assert qualname(COMPUTED, "x") == "a global whose name is computed at load time"
    assert qualname(EXTENSION, "7") == "extension code 7 (copyreg registry)"


# The whole allowlist, entry by entry: widening it (or changing what an entry means) must be a
# deliberate edit here, reviewed as the security change it is.
EVERY_ALLOWED_GLOBAL = {
    "torch.DoubleStorage": "Storage | tensor | F64",
    "torch.FloatStorage": "Storage | tensor | F32",
    "torch.HalfStorage": "Storage | tensor | F16",
    "torch.BFloat16Storage": "Storage | tensor | BF16",
    "torch.LongStorage": "Storage | tensor | I64",
    "torch.IntStorage": "Storage | tensor | I32",
    "torch.ShortStorage": "Storage | tensor | I16",
    "torch.CharStorage": "Storage | tensor | I8",
    "torch.ByteStorage": "Storage | tensor | U8",
    "torch.BoolStorage": "Storage | tensor | BOOL",
    "torch.ComplexFloatStorage": "Storage | tensor | C64",
    "torch.ComplexDoubleStorage": "Storage | tensor | -",
    "torch.QInt8Storage": "Storage | tensor | -",
    "torch.QUInt8Storage": "Storage | tensor | -",
    "torch.QInt32Storage": "Storage | tensor | -",
    "torch.QUInt4x2Storage": "Storage | tensor | -",
    "torch.QUInt2x4Storage": "Storage | tensor | -",
    "torch.UntypedStorage": "Storage | tensor | -",
    "torch.storage.UntypedStorage": "Storage | tensor | -",
    "torch.float64": "DTypeValue | tensor | F64",
    "torch.float32": "DTypeValue | tensor | F32",
    "torch.float16": "DTypeValue | tensor | F16",
    "torch.bfloat16": "DTypeValue | tensor | BF16",
    "torch.int64": "DTypeValue | tensor | I64",
    "torch.int32": "DTypeValue | tensor | I32",
    "torch.int16": "DTypeValue | tensor | I16",
    "torch.int8": "DTypeValue | tensor | I8",
    "torch.uint8": "DTypeValue | tensor | U8",
    "torch.bool": "DTypeValue | tensor | BOOL",
    "torch.complex64": "DTypeValue | tensor | C64",
    "torch.uint16": "DTypeValue | tensor | U16",
    "torch.uint32": "DTypeValue | tensor | U32",
    "torch.uint64": "DTypeValue | tensor | U64",
    "torch.float8_e4m3fn": "DTypeValue | tensor | F8_E4M3",
    "torch.float8_e5m2": "DTypeValue | tensor | F8_E5M2",
    "torch.float8_e8m0fnu": "DTypeValue | tensor | F8_E8M0",
    "torch.float8_e4m3fnuz": "DTypeValue | tensor | F8_E4M3FNUZ",
    "torch.float8_e5m2fnuz": "DTypeValue | tensor | F8_E5M2FNUZ",
    "torch.complex128": "DTypeValue | tensor | -",
    "torch.complex32": "DTypeValue | tensor | -",
    "torch.float4_e2m1fn_x2": "DTypeValue | tensor | -",
    "torch.bits8": "DTypeValue | tensor | -",
    "torch.bits16": "DTypeValue | tensor | -",
    "torch.bits1x8": "DTypeValue | tensor | -",
    "torch.bits2x4": "DTypeValue | tensor | -",
    "torch.bits4x2": "DTypeValue | tensor | -",
    "torch.qint8": "DTypeValue | tensor | -",
    "torch.quint8": "DTypeValue | tensor | -",
    "torch.qint32": "DTypeValue | tensor | -",
    "torch.quint4x2": "DTypeValue | tensor | -",
    "torch.quint2x4": "DTypeValue | tensor | -",
    "torch._utils._rebuild_tensor_v2": "RebuildTensor | tensor | no dtype",
    "torch._utils._rebuild_tensor_v3": "RebuildTensor | tensor | with dtype",
    "torch._utils._rebuild_parameter": "RebuildParameter | tensor",
    "torch._utils._rebuild_parameter_with_state": "RebuildParameter | tensor",
    "torch._tensor._rebuild_from_type_v2": "RebuildFromType | tensor",
    "torch.Tensor": "TensorClass | tensor",
    "torch.nn.parameter.Parameter": "TensorClass | tensor",
    "torch.nn.Parameter": "TensorClass | tensor",
    "torch._utils._rebuild_qtensor": "Unsupported | unsupported | a quantized tensor",
    "torch._utils._rebuild_sparse_tensor": "Unsupported | unsupported | a sparse tensor",
    "torch._utils._rebuild_sparse_csr_tensor": "Unsupported | unsupported | a sparse tensor",
    "torch._utils._rebuild_nested_tensor": "Unsupported | unsupported | a nested tensor",
    "torch._utils._rebuild_wrapper_subclass": "Unsupported | unsupported | a tensor subclass",
    "torch._utils._rebuild_meta_tensor_no_storage": "RebuildMetaTensor | tensor",
    "torch._utils._rebuild_device_tensor_from_numpy": "Unsupported | unsupported | a tensor saved through numpy",
    "torch._utils._rebuild_device_tensor_from_cpu_tensor": "Unsupported | unsupported | a device tensor",
    "torch._utils._rebuild_tensor": "RebuildOldTensor | tensor",
    "torch._utils._rebuild_xla_tensor": "Unsupported | unsupported | an XLA tensor",
    "torch._utils._rebuild_mtia_tensor": "Unsupported | unsupported | an MTIA tensor",
    "torch.per_tensor_affine": "StandIn | unsupported",
    "torch.per_tensor_symmetric": "StandIn | unsupported",
    "torch.per_channel_affine": "StandIn | unsupported",
    "torch.per_channel_symmetric": "StandIn | unsupported",
    "torch.per_channel_affine_float_qparams": "StandIn | unsupported",
    "collections.OrderedDict": "Plain | container | {}",
    "collections.Counter": "Plain | container | {}",
    "torch.Size": "Plain | container | ()",
    "torch.device": "Plain | container | ''",
    "torch.serialization._get_layout": "Plain | container | ''",
    "_codecs.encode": "Plain | container | needs arguments",
    "builtins.set": "Plain | container | set()",
    "builtins.frozenset": "Plain | container | frozenset()",
    "builtins.bytearray": "Plain | container | bytearray(b'')",
    "builtins.complex": "Plain | container | 0j",
    "__builtin__.set": "Plain | container | set()",
    "__builtin__.frozenset": "Plain | container | frozenset()",
    "__builtin__.bytearray": "Plain | container | bytearray(b'')",
}


def _describe(s) -> str:
    parts = [type(s).__name__.lstrip("_"), s.verdict.value]
    if hasattr(s, "dtype"):
        parts.append(s.dtype.name if s.dtype else "-")
    if hasattr(s, "with_dtype"):
        parts.append("with dtype" if s.with_dtype else "no dtype")
    if hasattr(s, "what"):
        parts.append(s.what)
    if hasattr(s, "make"):
        try:
            parts.append(repr(s.make()))
        except TypeError:
            parts.append("needs arguments")
    return " | ".join(parts)


def test_the_allowlist_is_exactly_this():
    from inspector.core.formats.torch_pickle import allowlist

    # ALLOWED is built once, at import; the table is built afresh too, so that a change to how
    # it is built shows here and not only in a new process
    for table in (allowlist.ALLOWED, allowlist._table()):
        assert all(q == s.qualname for q, s in table.items())
        assert {q: _describe(s) for q, s in table.items()} == EVERY_ALLOWED_GLOBAL


def test_containers_and_numbers_are_rebuilt_or_refused_exactly():
    ordered = ALLOWED["collections.OrderedDict"]
    assert ordered.call(([("a", 1), ["b", 2]],)) == {"a": 1, "b": 2}
    for items in ([1, 2], [("a", 1, 2)], [("a",)]):
        with pytest.raises(PickleError) as e:
            ordered.call((items,))
        assert str(e.value) == "an OrderedDict is built from items that are not pairs"
    assert ALLOWED["builtins.set"].call((["a", "b"],)) == {"a", "b"}
    with pytest.raises(PickleError):  # an item that cannot be hashed safely
        ALLOWED["builtins.set"].call(([[1]],))
    assert ALLOWED["builtins.complex"].call((1.0, 2.0)) == 1 + 2j
    assert ALLOWED["builtins.complex"].call((3,)) == 3 + 0j
    encode = ALLOWED["_codecs.encode"]
    assert encode.call(("é", "latin1")) == b"\xe9" and encode.call(("é",)) == b"\xc3\xa9"


def test_codecs_encode_takes_each_spelling_of_latin1_and_utf8_and_only_text():
    """Python 2 checkpoints carry bytes as ``_codecs.encode(text, "latin1")``; CPython accepts
    "latin-1" and "utf8" as well, so a file spelling them so must read the same, and anything
    but text is refused by name, not with an AttributeError from deep inside."""
    encode = ALLOWED["_codecs.encode"]
    assert encode.call(("é", "latin-1")) == b"\xe9" == encode.call(("é", "latin1"))
    assert encode.call(("é", "utf8")) == b"\xc3\xa9" == encode.call(("é", "utf-8"))
    for args in ((b"x", "latin1"), (7, "utf-8"), ("é", "utf-16")):
        with pytest.raises(PickleError) as e:
            encode.call(args)
        assert str(e.value) == "_codecs.encode called with something other than text and latin1"
