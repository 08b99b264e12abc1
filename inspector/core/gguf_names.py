"""A GGUF file's tensors under the names of the HF model they came from, in its row order.

llama.cpp's converter renames every tensor (``model.layers.0.self_attn.q_proj.weight`` →
``blk.0.attn_q.weight``; the ``gguf`` package's ``TensorNameMap`` lists every name each GGUF
name stands for, per architecture) and, for llama-family models, reorders the rows of the Q and
K projections per head (its ``permute``: the two rotary halves of each head interleaved). To
compare with the original or convert back, the name is mapped back (the candidate the other
checkpoint has, else the transformers one) and the rows are put back, one head at a time.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from .formats.gguf import gguf_facts

if TYPE_CHECKING:
    from .checkpoint import Checkpoint

_PERMUTED = ("attn_q", "attn_k")  # convert_hf_to_gguf's LlamaModel.permute (weights and biases)
# the converter's model classes that apply it (LlamaModel and the ones reusing its permute)
_PERMUTING_ARCHS = ("llama", "granite", "smollm3", "arcee", "llama-embed", "deepseek", "llada",
                    "deci")  # fmt: skip
_SUFFIXES = (".weight", ".bias")


@dataclass
class GgufNaming:
    """GGUF name → the HF names it stands for (best first), and the Q/K rows to put back."""

    candidates: dict[str, list[str]] = field(default_factory=dict)
    head_rows: dict[str, int] = field(default_factory=dict)  # rows per head, for Q and K

    def hf_name(self, name: str, among: object = None) -> str:
        """The HF name of ``name``: the first candidate ``among`` holds (a checkpoint, a set),
        else the most likely one; a tensor the map does not know keeps its name."""
        names = self.candidates.get(name)
        if not names:
            return name
        if among is not None:
            for n in names:
                if n in among:  # type: ignore[operator]
                    return n
        return names[0]


def gguf_naming(ckpt: Checkpoint) -> GgufNaming | None:
    """The naming of a GGUF checkpoint whose architecture the gguf package knows; else None."""
    facts = gguf_facts(ckpt.files[0])
    if facts is None or facts.architecture is None:
        return None
    import gguf

    arch_name = facts.architecture
    arch = {v: k for k, v in gguf.MODEL_ARCH_NAMES.items()}.get(arch_name)
    if arch is None:
        return None
    # as many blocks as the file has tensors for: the header's count is not trusted (the name
    # map is built block by block, and 2**40 blocks would never finish)
    blocks = 1 + max((_block_of(t.name) for t in ckpt.tensors), default=-1)
    tmap = gguf.get_tensor_name_map(arch, blocks)
    reverse: dict[str, list[str]] = {}
    for hf, (_kind, gg) in tmap.mapping.items():
        if hf != gg:
            reverse.setdefault(gg, []).append(hf)
    naming = GgufNaming()
    n_head = facts.kv.get(f"{arch_name}.attention.head_count")
    n_kv = facts.kv.get(f"{arch_name}.attention.head_count_kv", n_head)
    for t in ckpt.tensors:
        base, suffix = _split(t.name)
        hf = reverse.get(base)
        if hf:
            ranked = sorted(enumerate(hf), key=lambda ih: (_likely(ih[1]), ih[0]))
            naming.candidates[t.name] = [n + suffix for _i, n in ranked]
        kind = base.rsplit(".", 1)[-1]
        heads = n_head if kind == "attn_q" else n_kv
        if (
            arch_name in _PERMUTING_ARCHS
            and kind in _PERMUTED
            and suffix in _SUFFIXES
            and isinstance(heads, int)
            and not isinstance(heads, bool)
            and heads > 0
        ):
            rows = facts.shape(t.name)[0] if t.name in facts.dims else t.shape[0]
            if rows % (2 * heads) == 0:
                naming.head_rows[t.name] = rows // heads
    return naming


def _block_of(name: str) -> int:
    """``blk.12.attn_q.weight`` → 12; -1 for a tensor outside the blocks."""
    parts = name.split(".", 2)
    if len(parts) > 2 and parts[0] == "blk" and parts[1].isdigit() and len(parts[1]) < 7:
        return int(parts[1])
    return -1


def _split(name: str) -> tuple[str, str]:
    for s in _SUFFIXES:
        if name.endswith(s):
            return name[: -len(s)], s
    return name, ""


_HF_WORDS = ("self_attn.", "mlp.", "input_layernorm", "post_attention_layernorm",
             "embed_tokens", "model.norm")  # fmt: skip


def _likely(hf: str) -> int:
    """transformers' own module names first (``model.layers.N.self_attn.q_proj``,
    ``model.embed_tokens``, ``lm_head``), then other ``model.…`` names, then the rest; the
    gguf package's order among equals."""
    if hf == "lm_head" or (hf.startswith("model.") and any(w in hf for w in _HF_WORDS)):
        return 0
    return 1 if hf.startswith("model.") else 2


def unpermute_rows(
    chunks: Iterator[np.ndarray], row_len: int, head_rows: int
) -> Iterator[np.ndarray]:
    """The rows of a Q/K weight in the HF order, from its GGUF rows in any chunking: one head
    (``head_rows`` rows of ``row_len`` elements) at a time, its interleaved halves put back."""
    block = row_len * head_rows
    pending: list[np.ndarray] = []
    have = 0
    for chunk in chunks:
        flat = chunk.reshape(-1)
        pending.append(flat.copy())  # the reader may reuse its buffer
        have += flat.size
        if have < block:
            continue
        data = np.concatenate(pending)
        whole = have - have % block
        heads = data[:whole].reshape(-1, head_rows // 2, 2, row_len)
        yield np.ascontiguousarray(heads.swapaxes(1, 2)).reshape(-1)
        pending, have = [data[whole:]], have - whole
    if have:  # a partial head cannot be put back: the caller checked the rows divide
        raise ValueError(f"{have} values left after the last whole head")
