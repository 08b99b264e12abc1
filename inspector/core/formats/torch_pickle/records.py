"""What the stand-ins build instead of torch's objects: a storage named by key, a tensor as a
strided view of one, and a tensor torch would load that this tool leaves out (and says so)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ...dtypes import DType
from .values import PickleError


@dataclass(frozen=True, eq=False)
class StorageRef:
    """A storage the pickle refers to by key; ``dtype`` is None for torch's UntypedStorage and for
    a dtype safetensors has no name for (then ``unheld`` is torch's name of it: ``complex128``)."""

    key: str
    dtype: DType | None
    numel: int  # elements of ``dtype`` (bytes when untyped)
    unheld: str = ""


@dataclass(eq=False)
class TensorRecord:
    """One tensor as the pickle describes it: a strided view of a storage. Mutable, as torch's
    tensor is: ``BUILD`` and ``Tensor.__setstate__`` change it in place, for every reference."""

    storage: StorageRef
    dtype: DType
    offset: int  # in elements
    shape: tuple[int, ...]
    stride: tuple[int, ...]

    def copy(self) -> TensorRecord:
        """What ``Parameter(data)`` or ``x.data = data`` share: the view, not the object."""
        return TensorRecord(self.storage, self.dtype, self.offset, self.shape, self.stride)

    def take_view_of(self, other: TensorRecord) -> None:
        """``self.data = other``: storage, dtype, offset, shape and stride all become other's."""
        self.storage, self.dtype, self.offset = other.storage, other.dtype, other.offset
        self.shape, self.stride = other.shape, other.stride


@dataclass(eq=False)
class LeftOutTensor:
    """A tensor ``torch.load`` gives but safetensors cannot hold (complex128) or this tool does not
    resolve (a conjugate or negative view): listed as a value with the reason, never written."""

    torch_dtype: str  # torch's name: complex128
    shape: tuple[int, ...]
    why: str

    def copy(self) -> LeftOutTensor:
        return LeftOutTensor(self.torch_dtype, self.shape, self.why)

    def text(self) -> str:
        shape = ", ".join(map(str, self.shape))
        return f"{self.torch_dtype} tensor [{shape}]: {self.why}; left out of cast"


AnyTensor = TensorRecord | LeftOutTensor


MAX_DIMS = 64  # numpy's limit; torch allows more, no checkpoint has them
INT_LIMIT = 1 << 63  # a dimension, stride or offset torch can hold (int64)


def _as_int_tuple(value: Any, what: str) -> tuple[int, ...]:
    if not isinstance(value, (tuple, list)) or not all(
        type(v) is int and 0 <= v < INT_LIMIT for v in value
    ):
        raise PickleError(f"tensor {what} is not a tuple of integers from 0 to 2**63")
    if len(value) > MAX_DIMS:
        raise PickleError(f"a tensor has {len(value):,} dimensions (at most {MAX_DIMS} are read)")
    return tuple(value)


def tensor_view(storage: Any, offset: Any, size: Any, stride: Any, dtype: DType) -> TensorRecord:
    """A view of ``storage`` with its arguments checked (a crafted pickle may send anything)."""
    if not isinstance(storage, StorageRef):
        raise PickleError("a tensor is rebuilt from something that is not a stored storage")
    if type(offset) is not int or not 0 <= offset < INT_LIMIT:
        raise PickleError("a tensor's storage offset is not an integer from 0 to 2**63")
    shape, strides = _as_int_tuple(size, "shape"), _as_int_tuple(stride, "stride")
    if len(shape) != len(strides):
        raise PickleError("a tensor's shape and stride have different lengths")
    return TensorRecord(storage, dtype, offset, shape, strides)
