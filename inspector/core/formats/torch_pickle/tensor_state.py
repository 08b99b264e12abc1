"""torch's two ways of giving a rebuilt tensor a saved state, done on our records exactly, or
refused by name where the state would change values in a way we do not follow:

- ``Tensor.__setstate__`` (what ``BUILD`` on a tensor or parameter calls): a 4-item state is
  ``set_(storage, offset, size, stride)``; a 5-item state (a legacy Variable) is ``self.data =
  state[0]`` plus ``requires_grad``; a 3-item state sets ``requires_grad`` only. These follow
  ``torch.load(weights_only=False)``; ``weights_only=True`` agrees on the 4-item form and on
  parameters, and refuses the other forms on a plain tensor.
- ``torch._utils._set_obj_state`` (the state of ``_rebuild_parameter_with_state`` and
  ``_rebuild_from_type_v2``): ``setattr`` of each item. ``data`` replaces the view; the other
  attributes a tensor intercepts (``real`` copies values in, ``imag``, ``grad``…) are refused.
"""

from __future__ import annotations

from typing import Any

from ...dtypes import DTYPES, DType
from .records import AnyTensor, LeftOutTensor, StorageRef, TensorRecord, tensor_view
from .values import PickleError, bounded_repr

# Names a torch.nn.Parameter intercepts on setattr (data descriptors of its classes, torch 2.13;
# a test compares this with the installed torch). Any other name is a plain Python attribute.
TENSOR_DESCRIPTORS = frozenset(
    {
        "H", "T", "__class__", "__cuda_array_interface__", "__dict__", "__weakref__",
        "_backward_hooks", "_base", "_cdata", "_grad", "_grad_fn",
        "_has_symbolic_sizes_strides", "_post_accumulate_grad_hooks", "_python_dispatch",
        "_version", "data", "device", "dtype", "grad", "grad_dtype", "grad_fn", "imag", "is_cpu",
        "is_cuda", "is_ipu", "is_leaf", "is_maia", "is_meta", "is_mkldnn", "is_mps", "is_mtia",
        "is_nested", "is_quantized", "is_sparse", "is_sparse_csr", "is_vulkan", "is_xla",
        "is_xpu", "itemsize", "layout", "mH", "mT", "name", "nbytes", "ndim", "output_nr",
        "real", "requires_grad", "retains_grad", "shape", "volatile",
    }
)  # fmt: skip


def check_requires_grad(value: Any, tensor: AnyTensor) -> None:
    """torch refuses a requires_grad that is not a bool, and True on an integer or bool tensor."""
    if type(value) is not bool:
        raise PickleError("gives a tensor a requires_grad that is not True or False")
    if value and isinstance(tensor, TensorRecord) and tensor.dtype.kind not in ("float", "complex"):
        raise PickleError(
            f"makes a {tensor.dtype.name} tensor require grad, which torch refuses (not a float)"
        )


def setstate(tensor: AnyTensor, state: Any) -> None:
    """``Tensor.__setstate__(state)``, in place."""
    if not isinstance(state, (tuple, list)) or len(state) not in (3, 4, 5):
        what = f"a {len(state)}-item" if isinstance(state, (tuple, list)) else "a non-tuple"
        raise PickleError(f"uses Tensor.__setstate__ with {what} state; not read")
    if len(state) == 4:
        set_view(tensor, *state)
    elif len(state) == 5:
        _assign_data(tensor, state[0], "Tensor.__setstate__ with a 5-item state")
        check_requires_grad(state[3], tensor)
    else:
        check_requires_grad(state[0], tensor)


def set_view(tensor: AnyTensor, storage: Any, offset: Any, size: Any, stride: Any) -> None:
    """``tensor.set_(storage, offset, size, stride)``: same dtype, a new view."""
    if not isinstance(tensor, TensorRecord) or not isinstance(storage, StorageRef):
        raise PickleError(
            "uses Tensor.__setstate__ to set a tensor this tool cannot hold; not read"
        )
    held = storage_dtype(storage)
    if held is not tensor.dtype:
        name = held.name if held is not None else storage.unheld
        raise PickleError(
            f"uses Tensor.__setstate__ to put a {tensor.dtype.name} tensor on a {name} storage, "
            "which torch refuses"
        )
    tensor.take_view_of(tensor_view(storage, offset, size, stride, tensor.dtype))


def storage_dtype(storage: StorageRef) -> DType | None:
    """The dtype torch gives a storage: an UntypedStorage is loaded as uint8 bytes."""
    if storage.unheld:
        return None
    return storage.dtype or DTYPES["U8"]


def set_obj_state(tensor: AnyTensor, state: Any) -> None:
    """``torch._utils._set_obj_state(tensor, state)``, in place."""
    if isinstance(state, tuple):
        if len(state) != 2:
            raise PickleError(f"gives a tensor a {len(state)}-item state, which torch refuses")
        parts = state
    else:
        parts = (state, None)
    for part in parts:
        if not part:
            continue
        if not isinstance(part, dict):
            raise PickleError(
                f"gives a tensor a state that is a {type(part).__name__}, which torch refuses"
            )
        for name, value in part.items():
            _setattr(tensor, name, value)


def _setattr(tensor: AnyTensor, name: Any, value: Any) -> None:
    if not isinstance(name, str):
        raise PickleError("gives a tensor an attribute whose name is not text, which torch refuses")
    if name not in TENSOR_DESCRIPTORS or name == "_backward_hooks":
        return  # a plain attribute (Megatron's tensor_model_parallel…): no value changes
    if name == "data":
        _assign_data(tensor, value, "a saved state that sets 'data'")
    elif name == "requires_grad":
        check_requires_grad(value, tensor)
    else:
        raise PickleError(
            f"uses Tensor.__setstate__ with {bounded_repr(name, 80)} in its state; not read"
        )


def _assign_data(tensor: AnyTensor, data: Any, how: str) -> None:
    """``tensor.data = data``: the view, dtype included, becomes data's."""
    if isinstance(tensor, LeftOutTensor) or isinstance(data, LeftOutTensor):
        raise PickleError(f"uses {how} on a tensor this tool cannot hold; not read")
    if not isinstance(data, TensorRecord):
        raise PickleError(f"uses {how} whose data is not a tensor, which torch refuses")
    tensor.take_view_of(data)
