"""llm-compressor's own data-free output for tiny llamas with hostile weights, once per session:
the reference every byte ``quantize`` writes is compared with (test-only dependency)."""

from __future__ import annotations

from pathlib import Path

import pytest

SCHEMES = ("FP8_DYNAMIC", "FP8_BLOCK", "W8A16", "W4A16", "NVFP4A16", "MXFP4A16")
# (torch dtype, hidden, intermediate, schemes): the third has rows and columns that are not
# multiples of 128, which only FP8 takes (FP8_BLOCK pads its last blocks)
MODELS = {
    "bf16": ("bfloat16", 256, 384, SCHEMES),
    "f16": ("float16", 256, 384, SCHEMES),
    "f32": ("float32", 128, 256, SCHEMES),
    "bf16-odd": ("bfloat16", 200, 328, ("FP8_DYNAMIC", "FP8_BLOCK")),
    # plain N(0, 0.02) weights, no outlier: every weight its own absmax (NVFP4's global scale
    # rounds twice in torch; with the hostile rows' 3.0 in every weight that never showed)
    "bf16-plain": ("bfloat16", 256, 384, ("NVFP4A16", "W4A16")),
    "f16-plain": ("float16", 256, 384, ("NVFP4A16",)),
    "f32-plain": ("float32", 128, 256, ("NVFP4A16",)),
    # an inf, a -inf or a NaN in three weights: the schemes whose bytes are then integers
    # torch's conversions define (codes of NaN, MXFP4's scale byte), not NaN bit patterns,
    # which differ between torch's vector and scalar loops
    "bf16-inf": ("bfloat16", 256, 384, ("W8A16", "W4A16", "NVFP4A16", "MXFP4A16")),
    "f32-inf": ("float32", 128, 256, SCHEMES),
    "bf16-nan": ("bfloat16", 256, 384, ("W8A16", "W4A16")),
    # a finite 60000 in F16: MXFP4's power-of-two scale of its group overflows to inf
    "f16-huge": ("float16", 256, 384, ("MXFP4A16",)),
}


def hostile_llama(
    folder: Path,
    dtype: str,
    hidden: int,
    inter: int,
    seed: int = 1,
    hostile: bool = True,
    extreme: str = "",
) -> None:
    """A 1-layer llama whose Linear weights hold the cases each scheme's arithmetic can trip on:
    an all-zero row and group (scale eps), a row of 1e-30 (subnormal / -0 after rounding),
    tiny negatives (FP4's -0 code), an outlier, exact FP4 ties, an all-negative row; with
    ``extreme`` ("inf", "nan" or "huge": 60000), such values in k_proj, o_proj and
    down_proj."""
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    torch.manual_seed(seed)
    config = transformers.LlamaConfig(
        vocab_size=128, hidden_size=hidden, intermediate_size=inter, num_hidden_layers=1,
        num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=64,
        tie_word_embeddings=False,
    )  # fmt: skip
    model = transformers.LlamaForCausalLM(config)
    ties = torch.tensor([0.25, 0.75, 1.25, 1.75, 2.5, 3.5, 5.0, 6.0] * 4) * 0.005
    with torch.no_grad():
        for _name, p in model.named_parameters():
            if p.ndim != 2 or not hostile:
                continue
            w = p.data
            w.normal_(0, 0.02)
            w[0].zero_()
            w[1, :16] = 0
            w[2] *= 1e-30
            w[3, ::7] = -1e-6
            w[4, 5] = 3.0
            w[5] = torch.linspace(-1, 1, w.shape[1])
            w[6, :32] = ties
            w[7] = -w[7].abs()
            if extreme and _name.endswith(("k_proj.weight", "o_proj.weight", "down_proj.weight")):
                value = {"inf": float("inf"), "nan": float("nan"), "huge": 60000.0}[extreme]
                w[8, 9] = value if "o_proj" not in _name else -value
    model.to(getattr(torch, dtype)).save_pretrained(folder)


@pytest.fixture(scope="session")
def llmc_reference(tmp_path_factory) -> dict[str, dict[str, Path]]:
    """{model: {"base": folder, scheme: llm-compressor's output folder}}."""
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    llmcompressor = pytest.importorskip("llmcompressor")
    from llmcompressor.modifiers.quantization import QuantizationModifier

    root = tmp_path_factory.mktemp("llmc-hostile")
    out: dict[str, dict[str, Path]] = {}
    for tag, (dtype, hidden, inter, schemes) in MODELS.items():
        base = root / tag / "base"
        kind = tag.split("-")[-1]
        hostile_llama(base, dtype, hidden, inter, hostile=kind != "plain",
                      extreme=kind if kind in ("inf", "nan", "huge") else "")  # fmt: skip
        out[tag] = {"base": base}
        for scheme in schemes:
            model = transformers.LlamaForCausalLM.from_pretrained(base, dtype=getattr(torch, dtype))
            recipe = QuantizationModifier(targets="Linear", scheme=scheme, ignore=["lm_head"])
            llmcompressor.oneshot(model=model, recipe=recipe)
            model.save_pretrained(root / tag / scheme, save_compressed=True)
            out[tag][scheme] = root / tag / scheme
    return out
