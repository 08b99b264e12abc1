"""What config.json says about the weights, field by field: which dtype key wins (newer spelling,
top level before nested configs, "auto" says nothing), torch-prefixed names, the quantization
config's skipped modules, and the size limit to the byte."""

from __future__ import annotations

import json

import pytest

from inspector.core.dtypes import DTYPES
from inspector.core.errors import CheckpointError
from inspector.core.model_folder.config import (
    MAX_CONFIG_BYTES,
    ModelConfig,
    read_model_config,
    weights_disagree,
)

BF16, F16, F32 = DTYPES["BF16"], DTYPES["F16"], DTYPES["F32"]


@pytest.mark.parametrize(
    "config, dtype, text, key, skip, quantized",
    [
        ({"torch_dtype": "torch.bfloat16"}, BF16, "torch.bfloat16", "torch_dtype", [], False),
        ({"torch_dtype": "half"}, F16, "half", "torch_dtype", [], False),
        ({"dtype": "float16", "torch_dtype": "float32"}, F16, "float16", "dtype", [], False),
        ({"dtype": "auto", "torch_dtype": "float32"}, F32, "float32", "torch_dtype", [], False),
        ({"torch_dtype": "auto"}, None, None, None, [], False),
        ({"torch_dtype": 5}, None, None, None, [], False),
        ({"torch_dtype": "int4"}, None, "int4", "torch_dtype", [], False),
        ({"torch_dtype": "mytorch.float32"}, None, "mytorch.float32", "torch_dtype", [], False),
        (
            {"text_config": {"torch_dtype": "auto", "dtype": "bfloat16"}},
            BF16,
            "bfloat16",
            "text_config.dtype",
            [],
            False,
        ),
        (
            {"torch_dtype": "float32", "text_config": {"torch_dtype": "float16"}},
            F32,
            "float32",
            "torch_dtype",
            [],
            False,
        ),
        (
            {"quantization_config": {"modules_to_not_convert": ["lm_head", 3, "vision"]}},
            None,
            None,
            None,
            ["lm_head", "vision"],
            True,
        ),
        (
            {"quantization_config": {"modules_to_not_convert": "lm_head"}},
            None,
            None,
            None,
            [],
            True,
        ),
        ({"quantization_config": {}}, None, None, None, [], True),
        (
            {"llm_config": {"torch_dtype": "float16", "dtype": "bfloat16"}},
            BF16,
            "bfloat16",
            "llm_config.dtype",
            [],
            False,
        ),
        ({"text_config": {"dtype": "auto"}}, None, None, None, [], False),
    ],
)
def test_what_a_config_says(tmp_path, config, dtype, text, key, skip, quantized):
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config))
    quant = config.get("quantization_config") if quantized else None
    assert read_model_config(str(tmp_path / "model.safetensors")) == ModelConfig(
        str(path), dtype, text, key, skip, quantized, quant
    )


def test_no_config_says_nothing(tmp_path):
    assert read_model_config(str(tmp_path / "model.safetensors")) is None


def test_a_config_of_exactly_the_limit_is_read_one_byte_more_is_not(tmp_path):
    path = tmp_path / "config.json"
    body = b'{"torch_dtype": "float16"}'
    path.write_bytes(body + b" " * (MAX_CONFIG_BYTES - len(body)))
    assert read_model_config(str(path)).dtype is F16
    path.write_bytes(body + b" " * (MAX_CONFIG_BYTES - len(body) + 1))
    with pytest.raises(CheckpointError) as e:
        read_model_config(str(path))
    assert (e.value.path, e.value.reason) == (str(path), "is over 16 MiB; not a model config")


@pytest.mark.parametrize(
    "raw, says",
    [
        (b"{nope", "is not valid JSON"),
        (b"[1, 2]", "is not a JSON object"),
        (b"[" * 100_000 + b"]" * 100_000, "is nested too deeply to be a model config"),
        (b'{"torch_dtype": "\xff"}', "is not valid JSON"),  # not UTF-8: no traceback
    ],
)
def test_a_config_that_cannot_be_read_says_why(tmp_path, raw, says):
    (tmp_path / "config.json").write_bytes(raw)
    with pytest.raises(CheckpointError) as e:
        read_model_config(str(tmp_path))
    assert (e.value.path, e.value.reason) == (str(tmp_path / "config.json"), says)


def test_weights_off_the_config_name_each_kind_once():
    class T:  # a tensor as weights_disagree reads it
        def __init__(self, name):
            self.dtype = DTYPES[name]

    config = ModelConfig("config.json", BF16, "bfloat16", "torch_dtype")
    off = weights_disagree(config, [T("F32"), T("F16"), T("F32"), T("BF16"), T("I64")])
    assert (off.n_off, off.n_floats, off.kinds) == (3, 4, "F16/F32")
    assert off.line() == "config.json torch_dtype = bfloat16, but 3 of 4 float tensors are F16/F32"
    assert weights_disagree(config, [T("BF16"), T("I64")]) is None


def test_one_tensor_off_the_config_is_said_in_the_singular():
    class T:
        def __init__(self, name):
            self.dtype = DTYPES[name]

    config = ModelConfig("config.json", BF16, "bfloat16", "torch_dtype")
    assert weights_disagree(config, [T("F32"), T("BF16")]).line() == (
        "config.json torch_dtype = bfloat16, but 1 of 2 float tensors is F32"
    )
    assert weights_disagree(config, [T("F32"), T("I64")]).line() == (
        "config.json torch_dtype = bfloat16, but 1 of 1 float tensor is F32"
    )


def test_the_fp32_norms_preset_is_suggested_for_a_cast_below_f32_only():
    """The window asks with every tensor of the checkpoint (check asks with the differing ones):
    an F32 norm makes a cast to BF16 keep the preset, and a cast to F32 does not (nothing to
    keep). (Mutation testing: comparing the target with another spelling of F32 prefilled the
    globs for a cast to F32.)"""
    from inspector.core.layout import TensorInfo
    from inspector.core.model_folder.intended import preset_globs, suggests_fp32_norms

    norm = TensorInfo("F32", (4,), (0, 16), name="model.norm.weight")
    globs = preset_globs("fp32-norms", ())
    assert suggests_fp32_norms([norm], "BF16", globs)
    assert not suggests_fp32_norms([norm], "F32", globs)
