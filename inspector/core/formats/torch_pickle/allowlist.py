"""The globals a tensor checkpoint may import, and the stand-ins they resolve to.

Nothing here imports the module a global names: ``torch._utils._rebuild_tensor_v2`` resolves to
:class:`_RebuildTensor`, our own object that records a tensor's storage, offset, shape and stride.
Every other global (``os.system``, ``builtins.eval``, ``numpy.core.multiarray._reconstruct``,
``torch.load``…) is refused. The list follows what ``torch.load(weights_only=True)`` accepts, minus
what a tensor checkpoint does not need.
"""

from __future__ import annotations

from typing import Any

from ...dtypes import DTYPES, DType
from .machine import COMPUTED, EXTENSION, PickleError
from .plain_values import plain_stand_ins
from .records import AnyTensor, LeftOutTensor, StorageRef, TensorRecord, tensor_view
from .stand_ins import ImportVerdict, StandIn
from .tensor_state import check_requires_grad, set_obj_state, storage_dtype
from .values import bounded_repr

__all__ = [
    "ALLOWED",
    "ImportVerdict",
    "LeftOutTensor",
    "StandIn",
    "StorageRef",
    "TensorRecord",
    "qualname",
    "verdict_of",
]


class _Storage(StandIn):
    """``torch.FloatStorage`` & co. (typed) or ``torch.UntypedStorage``: named in persistent ids."""

    def __init__(self, qualname: str, dtype: DType | None, unheld: tuple[str, int] = ("", 1)):
        super().__init__(qualname, ImportVerdict.TENSOR)
        self.dtype = dtype
        self.unheld = unheld[0]  # torch's dtype, when safetensors has none for it: complex128
        self.untyped = qualname.endswith(".UntypedStorage")
        self.item_size = dtype.bits // 8 if dtype else unheld[1]  # bytes per element


class _DTypeValue(StandIn):
    """``torch.float8_e4m3fn`` & co.: the dtype argument of ``_rebuild_tensor_v3``."""

    def __init__(self, qualname: str, dtype: DType | None) -> None:
        super().__init__(qualname, ImportVerdict.TENSOR)
        self.dtype = dtype


class _RebuildTensor(StandIn):
    """``_rebuild_tensor_v2(storage, offset, size, stride, requires_grad, hooks[, metadata])`` and
    ``_rebuild_tensor_v3(…, hooks, dtype[, metadata])`` (dtypes without a typed storage)."""

    def __init__(self, qualname: str, with_dtype: bool) -> None:
        super().__init__(qualname, ImportVerdict.TENSOR)
        self.with_dtype = with_dtype

    def call(self, args: tuple) -> Any:
        need = 7 if self.with_dtype else 6
        if not need <= len(args) <= need + 1:
            raise PickleError(f"{self.qualname} called with {len(args)} arguments")
        storage = args[0]
        if self.with_dtype:
            named = args[6]
            if not isinstance(named, _DTypeValue):
                raise PickleError(f"{self.qualname} called without a dtype")
            dtype, unheld = named.dtype, named.qualname.removeprefix("torch.")
            if dtype is None and unheld.startswith(("qint", "quint")):
                raise PickleError(
                    f"holds a {named.qualname} tensor, which safetensors cannot store"
                )
        else:  # the tensor takes its storage's dtype (an untyped one is loaded as bytes)
            if not isinstance(storage, StorageRef):
                raise PickleError("a tensor is rebuilt from something that is not a stored storage")
            dtype, unheld = storage_dtype(storage), storage.unheld
        tensor: AnyTensor = tensor_view(storage, args[1], args[2], args[3], dtype or _U8)
        if dtype is None:
            tensor = LeftOutTensor(unheld, tensor.shape, f"safetensors has no {unheld} dtype")
        check_requires_grad(args[4], tensor)
        return _with_metadata(tensor, args[need] if len(args) > need else None)


_U8 = DTYPES["U8"]
_VIEW_BITS = {
    "conj": "a conjugate view (torch.load conjugates",
    "neg": "a negative view (torch.load negates",
}


def _with_metadata(tensor: AnyTensor, metadata: Any) -> AnyTensor:
    """``set_tensor_metadata``: a ``conj`` or ``neg`` key (whatever its value) makes torch give
    other values than the stored ones; this tool leaves such a tensor out rather than resolve it."""
    if not metadata:
        return tensor
    if not isinstance(metadata, dict):
        raise PickleError("gives a tensor metadata that is not a dict, which torch refuses")
    if isinstance(tensor, LeftOutTensor):
        return tensor
    if "conj" in metadata and tensor.dtype.kind != "complex":
        raise PickleError(f"marks a {tensor.dtype.name} tensor conjugate, which torch refuses")
    for bit, view in _VIEW_BITS.items():
        if bit in metadata:
            name = _TORCH_NAMES[tensor.dtype.name]
            return LeftOutTensor(name, tensor.shape, f"saved as {view} the stored values)")
    return tensor


class _RebuildOldTensor(StandIn):
    """``_rebuild_tensor(storage, offset, size, stride)`` (torch < 0.4): a view in the storage's
    dtype, no requires_grad, no metadata."""

    def call(self, args: tuple) -> Any:
        if len(args) != 4:
            raise PickleError(f"{self.qualname} called with {len(args)} arguments")
        hooks: dict = {}
        return ALLOWED["torch._utils._rebuild_tensor_v2"].call((*args, False, hooks))


class _RebuildMetaTensor(StandIn):
    """``_rebuild_meta_tensor_no_storage(dtype, size, stride, requires_grad)``: a tensor on the
    meta device has a shape and no values: listed, left out of cast."""

    def call(self, args: tuple) -> Any:
        if len(args) != 4 or not isinstance(args[0], _DTypeValue):
            raise PickleError(f"{self.qualname} called with unexpected arguments")
        if type(args[3]) is not bool:
            raise PickleError("gives a tensor a requires_grad that is not True or False")
        shape = tensor_view(_NO_STORAGE, 0, args[1], args[2], _U8).shape
        return LeftOutTensor(
            args[0].qualname.removeprefix("torch."), shape, "on the meta device, no data"
        )


_NO_STORAGE = StorageRef("", None, 0)


class _RebuildParameter(StandIn):
    """``_rebuild_parameter(data, requires_grad, hooks)`` and ``_rebuild_parameter_with_state(…,
    state)``: a new parameter on data's view, its state set as torch's ``_set_obj_state`` does."""

    def __init__(self, qualname: str, with_state: bool) -> None:
        super().__init__(qualname, ImportVerdict.TENSOR)
        self.with_state = with_state

    def call(self, args: tuple) -> Any:
        if len(args) != 3 + self.with_state or not isinstance(args[0], AnyTensor):
            raise PickleError(f"{self.qualname} called without a tensor")
        param = args[0].copy()  # another object: a BUILD on it leaves data as it was
        check_requires_grad(args[1], param)
        if self.with_state:
            set_obj_state(param, args[3])
        return param


class _RebuildFromType(StandIn):
    """``_rebuild_from_type_v2(func, type, args, state)``: a Tensor or Parameter, rebuilt by func,
    then its state set (``_set_obj_state``: Tensor and Parameter keep torch's own __setstate__)."""

    def call(self, args: tuple) -> Any:
        if len(args) != 4 or not isinstance(args[0], StandIn) or not isinstance(args[2], tuple):
            raise PickleError(f"{self.qualname} called with unexpected arguments")
        if not isinstance(args[1], _TensorClass):
            raise PickleError(
                f"{self.qualname} rebuilds a {bounded_repr(args[1], 80)}, not a tensor"
            )
        tensor = args[0].call(args[2])
        if not isinstance(tensor, AnyTensor):
            raise PickleError(
                f"{self.qualname} calls {bounded_repr(args[0], 80)}, which gives no tensor"
            )
        set_obj_state(tensor, args[3])
        return tensor


class _TensorClass(StandIn):
    """``torch.Tensor``, ``torch.nn.parameter.Parameter``: named as types, never called."""


class _Unsupported(StandIn):
    def __init__(self, qualname: str, what: str) -> None:
        super().__init__(qualname, ImportVerdict.UNSUPPORTED)
        self.what = what

    def call(self, args: tuple) -> Any:
        raise PickleError(f"holds {self.what} ({self.qualname}), which this tool cannot read")


# torch storage class name -> safetensors dtype (None: a dtype safetensors has no name for)
_STORAGES = {
    "DoubleStorage": "F64",
    "FloatStorage": "F32",
    "HalfStorage": "F16",
    "BFloat16Storage": "BF16",
    "LongStorage": "I64",
    "IntStorage": "I32",
    "ShortStorage": "I16",
    "CharStorage": "I8",
    "ByteStorage": "U8",
    "BoolStorage": "BOOL",
    "ComplexFloatStorage": "C64",
    "ComplexDoubleStorage": None,
    "QInt8Storage": None,
    "QUInt8Storage": None,
    "QInt32Storage": None,
    "QUInt4x2Storage": None,
    "QUInt2x4Storage": None,
}
# read, then left out (quantized ones are refused): torch's dtype and its bytes per element
_UNHELD = {"ComplexDoubleStorage": ("complex128", 16)}
# torch dtype name -> safetensors dtype, for _rebuild_tensor_v3 (and dtypes named elsewhere)
_DTYPE_NAMES = {
    "float64": "F64",
    "float32": "F32",
    "float16": "F16",
    "bfloat16": "BF16",
    "int64": "I64",
    "int32": "I32",
    "int16": "I16",
    "int8": "I8",
    "uint8": "U8",
    "bool": "BOOL",
    "complex64": "C64",
    "uint16": "U16",
    "uint32": "U32",
    "uint64": "U64",
    "float8_e4m3fn": "F8_E4M3",
    "float8_e5m2": "F8_E5M2",
    "float8_e8m0fnu": "F8_E8M0",
    "float8_e4m3fnuz": "F8_E4M3FNUZ",
    "float8_e5m2fnuz": "F8_E5M2FNUZ",
    **dict.fromkeys(
        [
            "complex128",
            "complex32",
            "float4_e2m1fn_x2",
            "bits8",
            "bits16",
            "bits1x8",
            "bits2x4",
            "bits4x2",
            "qint8",
            "quint8",
            "qint32",
            "quint4x2",
            "quint2x4",
        ],
        None,
    ),
}
_TORCH_NAMES = {st: torch for torch, st in _DTYPE_NAMES.items() if st}  # F32 -> float32
_UNSUPPORTED = {
    "_rebuild_qtensor": "a quantized tensor",
    "_rebuild_sparse_tensor": "a sparse tensor",
    "_rebuild_sparse_csr_tensor": "a sparse tensor",
    "_rebuild_nested_tensor": "a nested tensor",
    "_rebuild_wrapper_subclass": "a tensor subclass",
    "_rebuild_device_tensor_from_numpy": "a tensor saved through numpy",
    "_rebuild_device_tensor_from_cpu_tensor": "a device tensor",
    "_rebuild_xla_tensor": "an XLA tensor",
    "_rebuild_mtia_tensor": "an MTIA tensor",
}

_QSCHEMES = (
    "per_tensor_affine",
    "per_tensor_symmetric",
    "per_channel_affine",
    "per_channel_symmetric",
    "per_channel_affine_float_qparams",
)


def _table() -> dict[str, StandIn]:
    t: dict[str, StandIn] = {}

    def add(s: StandIn) -> None:
        t[s.qualname] = s

    for name, dt in _STORAGES.items():
        add(_Storage(f"torch.{name}", DTYPES[dt] if dt else None, _UNHELD.get(name, ("", 1))))
    add(_Storage("torch.UntypedStorage", None))
    add(_Storage("torch.storage.UntypedStorage", None))
    for name, dt in _DTYPE_NAMES.items():
        add(_DTypeValue(f"torch.{name}", DTYPES[dt] if dt else None))
    add(_RebuildTensor("torch._utils._rebuild_tensor_v2", with_dtype=False))
    add(_RebuildTensor("torch._utils._rebuild_tensor_v3", with_dtype=True))
    add(_RebuildOldTensor("torch._utils._rebuild_tensor", ImportVerdict.TENSOR))
    add(_RebuildMetaTensor("torch._utils._rebuild_meta_tensor_no_storage", ImportVerdict.TENSOR))
    add(_RebuildParameter("torch._utils._rebuild_parameter", with_state=False))
    add(_RebuildParameter("torch._utils._rebuild_parameter_with_state", with_state=True))
    add(_RebuildFromType("torch._tensor._rebuild_from_type_v2", ImportVerdict.TENSOR))
    for q in ("torch.Tensor", "torch.nn.parameter.Parameter", "torch.nn.Parameter"):
        add(_TensorClass(q, ImportVerdict.TENSOR))
    for fn, what in _UNSUPPORTED.items():
        add(_Unsupported(f"torch._utils.{fn}", what))
    for scheme in _QSCHEMES:  # arguments of _rebuild_qtensor: named, so the refusal is precise
        add(StandIn(f"torch.{scheme}", ImportVerdict.UNSUPPORTED))
    for plain in plain_stand_ins():
        add(plain)
    return t


ALLOWED: dict[str, StandIn] = _table()


def qualname(module: str, name: str) -> str:
    """How a global is named to a person: ``os.system``; extension codes and computed names say so."""
    if module == EXTENSION:
        return f"extension code {name} (copyreg registry)"
    if module == COMPUTED:
        return "a global whose name is computed at load time"
    return f"{module}.{name}"


def verdict_of(module: str, name: str) -> ImportVerdict:
    found = ALLOWED.get(f"{module}.{name}")
    return found.verdict if found is not None else ImportVerdict.REFUSED
