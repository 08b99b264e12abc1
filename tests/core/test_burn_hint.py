"""The burn-store line the window and the CLI give: store and adapters by format and layout."""

from __future__ import annotations

import pytest

from inspector.core.burn_hint import burn_load_line, has_pytorch_layout, written_burnpack_line


@pytest.mark.parametrize(
    ("fmt", "metadata", "pytorch"),
    [
        ("safetensors", None, True),
        ("safetensors", {"format": "pt"}, True),
        ("safetensors", {"format": "safetensors", "producer": "burn"}, False),
        ("torch zip", None, True),
        ("burnpack", None, False),
        ("burnpack", {"producer": "burn"}, False),
        ("burnpack", {"producer": "checkpoint-inspector", "layout": "pytorch"}, True),
        ("safetensors", {"layout": "burn"}, False),
    ],
)
def test_whose_layout(fmt, metadata, pytorch):
    assert has_pytorch_layout(fmt, metadata) is pytorch


def test_lines():
    assert burn_load_line("m.safetensors", "safetensors", None, "F32") == (
        "PyTorchToBurnAdapter.chain(FloatCastAdapter::to(DType::F32))"
    )
    assert burn_load_line("/x/model.bpk", "burnpack", None, "BF16") == (
        'BurnpackStore::from_file("model.bpk").with_from_adapter(FloatCastAdapter::to(DType::BF16))'
    )
    assert burn_load_line('/x/a"b.bpk', "burnpack", {"layout": "pytorch"}, "F32") == (
        'BurnpackStore::from_file("a\\"b.bpk").with_from_adapter('
        "PyTorchToBurnAdapter.chain(FloatCastAdapter::to(DType::F32)))"
    )
    # a backslash is a file name's character on POSIX: doubled, it stays one in the Rust string
    assert burn_load_line("/x/a\\b.bpk", "burnpack", None, "F16") == (
        'BurnpackStore::from_file("a\\\\b.bpk").with_from_adapter(FloatCastAdapter::to(DType::F16))'
    )
    assert written_burnpack_line("o.bpk", "torch zip", None, "F16") == (
        "its names and layouts are still PyTorch's; load it in burn with: "
        'BurnpackStore::from_file("o.bpk").with_from_adapter('
        "PyTorchToBurnAdapter.chain(FloatCastAdapter::to(DType::F16)))"
    )
