"""Which weights a scheme takes: Linear weights by name and rank, less ignored ones, each one
left out with its reason; the config's ignore list as llm-compressor writes it."""

from __future__ import annotations

from inspector.core.dtypes import DTYPES
from inspector.core.layout import TensorInfo
from inspector.core.quantize.schemes import SCHEMES
from inspector.core.quantize.targets import SkipReason, plan_quantize


def t(name: str, shape: tuple[int, ...], dtype: str = "BF16") -> TensorInfo:
    n = 1
    for d in shape:
        n *= d
    return TensorInfo(
        dtype_name=dtype, shape=shape, data_offsets=(0, DTYPES[dtype].nbytes(n)), name=name
    )


CKPT = [
    t("lm_head.weight", (64, 256)),
    t("model.embed_tokens.weight", (64, 256)),
    t("transformer.wte.weight", (64, 256)),
    t("shared.weight", (64, 256)),
    t("model.layers.0.input_layernorm.weight", (256,)),
    t("model.layers.0.self_attn.q_proj.weight", (256, 256)),
    t("model.layers.0.self_attn.q_proj.bias", (256,)),
    t("model.layers.0.self_attn.k_proj.weight", (128, 256)),
    t("model.layers.0.self_attn.v_proj.weight", (128, 256)),
    t("model.layers.0.mlp.down_proj.weight", (256, 200)),  # 200 inputs: no group of 128
    t("model.layers.0.mlp.gate.weight", (8, 256), "I32"),
    t("model.layers.0.conv.weight", (8, 4, 3, 3)),
]


def test_linear_weights_are_2d_float_weights_that_are_not_embeddings() -> None:
    plan = plan_quantize(CKPT, SCHEMES["FP8_DYNAMIC"])
    assert [x.name for x in plan.targets] == [
        "model.layers.0.self_attn.q_proj.weight",
        "model.layers.0.self_attn.k_proj.weight",
        "model.layers.0.self_attn.v_proj.weight",
        "model.layers.0.mlp.down_proj.weight",  # per channel: any width
    ]
    assert [(s.module, s.reason) for s in plan.skipped] == [
        ("lm_head", SkipReason.IGNORED),
        ("model.layers.0.mlp.gate", SkipReason.ROUTER),
    ]
    assert plan.ignore_config == ["model.layers.0.mlp.gate", "lm_head"]


def test_a_row_not_a_multiple_of_the_group_is_left_out_with_its_reason() -> None:
    plan = plan_quantize(CKPT, SCHEMES["W4A16"])
    down = next(s for s in plan.skipped if s.module.endswith("down_proj"))
    assert down.reason is SkipReason.COLUMNS
    assert down.reason.text(down.tensor, plan.scheme) == (
        "200 inputs are not a multiple of W4A16's group of 128"
    )
    assert "model.layers.0.mlp.down_proj" in plan.ignore_config
    # FP8_BLOCK pads a last partial block, as compressed-tensors does
    assert "model.layers.0.mlp.down_proj.weight" in {
        x.name for x in plan_quantize(CKPT, SCHEMES["FP8_BLOCK"]).targets
    }


def test_ignore_takes_names_globs_and_re_patterns() -> None:
    ignore = ["lm_head", "model.layers.*.self_attn.k_proj", "re:.*v_proj$"]
    plan = plan_quantize(CKPT, SCHEMES["FP8_DYNAMIC"], ignore)
    assert [x.name.split(".")[-2] for x in plan.targets] == ["q_proj", "down_proj"]
    assert plan.ignore_config == [
        "model.layers.0.self_attn.k_proj",
        "model.layers.0.self_attn.v_proj",
        "model.layers.0.mlp.gate",
        "lm_head",
    ]


def test_a_tied_head_absent_from_the_file_is_listed_as_ignored_whatever_the_patterns() -> None:
    """transformers builds lm_head and ties it to the embedding, which stays as it is: listed
    as quantized, it would look for a quantized head no file holds (found by the review)."""
    for ignore in (["lm_head"], [], ["re:.*lm_head"], ["*.k_proj"]):
        assert (
            plan_quantize(CKPT[1:], SCHEMES["FP8_DYNAMIC"], ignore).ignore_config[-1] == "lm_head"
        )
    # with a head in the file and no pattern for it, it is quantized and not listed
    assert "lm_head" not in plan_quantize(CKPT, SCHEMES["FP8_DYNAMIC"], []).ignore_config


def test_layers_transformers_does_not_build_as_linear_are_left_out() -> None:
    gpt2 = [t("h.0.attn.c_attn.weight", (768, 2304)), t("h.0.mlp.c_fc.weight", (768, 3072)),
            t("h.0.mlp.c_proj.weight", (3072, 768))]  # fmt: skip
    for model_type in (None, "gpt2"):
        plan = plan_quantize(gpt2, SCHEMES["W8A16"], model_type=model_type)
        assert plan.targets == [] and {s.reason for s in plan.skipped} == {SkipReason.CONV1D}
        # Conv1D is not Linear: not listed; the tied head is
        assert plan.ignore_config == ["lm_head"]
    # GPT-BigCode names its Linear layers the same way
    assert len(plan_quantize(gpt2, SCHEMES["W8A16"], model_type="gpt_bigcode").targets) == 3
    t5 = [t("encoder.block.0.layer.0.SelfAttention.relative_attention_bias.weight", (32, 8))]
    assert plan_quantize(t5, SCHEMES["FP8_DYNAMIC"]).skipped == []  # an embedding: not a target
    moe = [
        t("model.layers.0.mlp.gate.weight", (8, 256)),
        t("model.layers.0.mlp.router.weight", (8, 256)),
    ]
    plan = plan_quantize(moe, SCHEMES["FP8_DYNAMIC"])
    assert [s.reason for s in plan.skipped] == [SkipReason.ROUTER] * 2


def test_a_pattern_that_is_not_a_regular_expression_is_refused() -> None:
    import pytest

    with pytest.raises(ValueError, match=r"--ignore 're:\(' is not a regular expression"):
        plan_quantize(CKPT, SCHEMES["W4A16"], ["re:("])


def test_nvfp4_fuses_qkv_and_gate_up_that_are_quantized() -> None:
    plan = plan_quantize(CKPT, SCHEMES["NVFP4A16"])
    q = "model.layers.0.self_attn.q_proj.weight"
    assert plan.fused[q] == (q, q.replace("q_proj", "k_proj"), q.replace("q_proj", "v_proj"))
    assert plan_quantize(CKPT, SCHEMES["W4A16"]).fused == {}


def test_f64_and_empty_weights_are_left_out_with_their_reason() -> None:
    plan = plan_quantize(
        [t("a.weight", (256, 256), "F64"), t("b.weight", (0, 256)), t("c.weight", (8, 256))],
        SCHEMES["W8A16"],
    )
    assert [x.name for x in plan.targets] == ["c.weight"]
    assert [(s.module, s.reason.text(s.tensor, plan.scheme)) for s in plan.skipped] == [
        ("a", "F64 weights are not quantized (no runtime loads F64 scales); cast to F32 first"),
        ("b", "has no values"),
    ]
