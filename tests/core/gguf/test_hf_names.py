"""A GGUF file against the HF model it came from: names mapped back, llama's Q/K rows put back
(checked against a torch re-implementation of llama.cpp's converter ``permute``), and a cast
that writes the HF names and row order."""

from __future__ import annotations

import numpy as np
import torch
from gguf.quants import dequantize, quantize
from safetensors.numpy import load_file, save_file

from inspector.core.cast.job import cast_checkpoint
from inspector.core.diff import diff_checkpoints
from inspector.core.dtypes import DTYPES
from inspector.core.opening import open_checkpoint
from inspector.core.progress import run_job
from inspector.core.quant.recognise import recognise
from inspector.core.status import DiffStatus
from tests.gguf_files import Q, permute, write_gguf

H, N_HEAD, N_KV, HEAD = 256, 4, 2, 64


def model(tmp_path):
    g = torch.Generator().manual_seed(0)
    hf = {
        "model.embed_tokens.weight": torch.randn(512, H, generator=g),
        "model.layers.0.self_attn.q_proj.weight": torch.randn(H, H, generator=g),
        "model.layers.0.self_attn.k_proj.weight": torch.randn(N_KV * HEAD, H, generator=g),
        "model.layers.0.mlp.down_proj.weight": torch.randn(H, 512, generator=g),
        "model.layers.0.input_layernorm.weight": torch.randn(H, generator=g),
        "model.norm.weight": torch.randn(H, generator=g),
        "lm_head.weight": torch.randn(512, H, generator=g),
    }
    save_file({k: v.numpy() for k, v in hf.items()}, str(tmp_path / "hf.safetensors"))
    q = permute(hf["model.layers.0.self_attn.q_proj.weight"], N_HEAD, N_HEAD).numpy()
    k = permute(hf["model.layers.0.self_attn.k_proj.weight"], N_HEAD, N_KV).numpy()
    path = write_gguf(
        tmp_path / "m.gguf",
        {
            "token_embd.weight": (hf["model.embed_tokens.weight"].numpy(), None),
            "blk.0.attn_q.weight": (np.ascontiguousarray(q), Q.Q8_0),
            "blk.0.attn_k.weight": (np.ascontiguousarray(k), None),
            "blk.0.ffn_down.weight": (hf["model.layers.0.mlp.down_proj.weight"].numpy(), Q.Q4_0),
            "blk.0.attn_norm.weight": (hf["model.layers.0.input_layernorm.weight"].numpy(), None),
            "output_norm.weight": (hf["model.norm.weight"].numpy(), None),
            "output.weight": (hf["lm_head.weight"].numpy(), Q.Q8_0),
            "rope_freqs.weight": (np.ones(32, np.float32), None),
        },
        kv={"llama.attention.head_count": N_HEAD, "llama.attention.head_count_kv": N_KV},
    )
    return hf, q, path


def test_diff_maps_names_and_puts_rows_back(tmp_path):
    hf, _q, path = model(tmp_path)
    with open_checkpoint(path) as a, open_checkpoint(tmp_path / "hf.safetensors") as b:
        diffs = {d.name: d for d in run_job(diff_checkpoints(a, b, quant_a=recognise(a.tensors)))}
    assert diffs["blk.0.attn_k.weight"].status is DiffStatus.EQUAL  # F32, rows put back
    assert diffs["blk.0.attn_k.weight"].name_b == "model.layers.0.self_attn.k_proj.weight"
    for name in ("token_embd.weight", "blk.0.attn_norm.weight", "output_norm.weight"):
        assert diffs[name].status is DiffStatus.EQUAL, name
    q = diffs["blk.0.attn_q.weight"]
    assert q.name_b == "model.layers.0.self_attn.q_proj.weight" and q.quant == "gguf"
    assert q.status is DiffStatus.DIFFER and q.rel_fro_err < 0.01  # Q8_0 noise, not a reorder
    assert diffs["rope_freqs.weight"].status is DiffStatus.ONLY_A


def test_cast_writes_hf_names_and_row_order(tmp_path):
    hf, q, path = model(tmp_path)
    with open_checkpoint(path) as ckpt:
        run_job(cast_checkpoint(ckpt, DTYPES["F32"], str(tmp_path / "out.safetensors")))
    out = load_file(str(tmp_path / "out.safetensors"))
    np.testing.assert_array_equal(
        out["model.layers.0.self_attn.k_proj.weight"],
        hf["model.layers.0.self_attn.k_proj.weight"].numpy(),
    )
    # the reference: the GGUF rows dequantized by gguf, then un-permuted by the torch inverse
    deq = torch.from_numpy(dequantize(quantize(q, Q.Q8_0), Q.Q8_0))
    back = deq.reshape(N_HEAD, HEAD // 2, 2, H).swapaxes(1, 2).reshape(H, H)
    assert torch.equal(permute(back, N_HEAD, N_HEAD), deq)  # the inverse really inverts
    np.testing.assert_array_equal(out["model.layers.0.self_attn.q_proj.weight"], back.numpy())
    assert "lm_head.weight" in out and "model.norm.weight" in out


def test_a_name_two_tensors_would_share_is_left_as_it_is(tmp_path):
    """token_embd.weight maps to model.embed_tokens.weight, which the file also holds under that
    name: renaming either would write two tensors under one name, so neither is renamed."""
    ones, twos = np.ones((8, 32), np.float32), np.full((8, 32), 2, np.float32)
    path = write_gguf(tmp_path / "m.gguf", {
        "token_embd.weight": (ones, None),
        "model.embed_tokens.weight": (twos, None),
        "output_norm.weight": (ones[0], None),
    })  # fmt: skip
    with open_checkpoint(path) as ckpt:
        run_job(cast_checkpoint(ckpt, DTYPES["F32"], str(tmp_path / "out.safetensors")))
    out = load_file(str(tmp_path / "out.safetensors"))
    assert sorted(out) == ["model.embed_tokens.weight", "model.norm.weight", "token_embd.weight"]
    assert out["token_embd.weight"].tolist() == ones.tolist()
    assert out["model.embed_tokens.weight"].tolist() == twos.tolist()


def test_without_the_other_checkpoint_each_name_maps_to_transformers_own_first(tmp_path):
    """Among a GGUF name's candidates, transformers' module names come first (``model.norm``,
    ``lm_head``, ``model.layers.N.self_attn…``), then other ``model.…`` names, then the rest,
    each kept in the gguf package's order; names outside the blocks (one without a dot, a
    vision tower's ``v.blk.…``) are read, and keep their names when the map has none."""
    from inspector.core.gguf_names import gguf_naming

    one = (np.ones(32, np.float32), None)
    path = write_gguf(
        tmp_path / "m.gguf",
        {"token_embd.weight": one, "blk.0.attn_q.weight": one, "output_norm.weight": one,
         "output.weight": one, "rope_freqs": one, "v.blk.0.attn_k.weight": one},
        kv={"llama.attention.head_count": 1},
    )  # fmt: skip
    with open_checkpoint(path) as ckpt:
        naming = gguf_naming(ckpt)
    assert naming is not None
    assert naming.hf_name("token_embd.weight") == "model.embed_tokens.weight"
    assert naming.hf_name("blk.0.attn_q.weight") == "model.layers.0.self_attn.q_proj.weight"
    assert naming.hf_name("output.weight") == "lm_head.weight"
    assert naming.candidates["output_norm.weight"][:6] == [
        "model.norm.weight", "model.norm_f.weight",  # transformers' words
        "model.final_layernorm.weight", "model.ln_out.weight", "model.transformer.ln_f.weight",
        "gpt_neox.final_layer_norm.weight",  # the first of the rest
    ]  # fmt: skip
    assert naming.hf_name("rope_freqs") == "rope.freqs"
    assert naming.hf_name("v.blk.0.attn_k.weight") == "v.blk.0.attn_k.weight"


def test_the_block_count_comes_from_names_of_up_to_6_digits():
    """The name map is built block by block for as many blocks as the names say: a name's
    block number counts only in ``blk.N.…`` with N of at most 6 digits (a 7-digit N would
    take the gguf package minutes to map), never a name outside the blocks."""
    from inspector.core.gguf_names import _block_of

    assert _block_of("blk.12.attn_q.weight") == 12
    assert _block_of("blk.999999.attn_q.weight") == 999999
    assert _block_of("blk.1000000.attn_q.weight") == -1
    for name in ("output.weight", "blk.5", "rope_freqs", "v.blk.0.attn_k.weight", "blk.x.y"):
        assert _block_of(name) == -1, name


def test_rows_are_put_back_a_head_at_a_time_however_the_chunks_fall():
    """3 heads of 4 rows of 3 values in chunks of 3, 6 and 3 rows: a head split across chunks,
    two heads in one, a chunk that ends a head exactly; each yield is flat."""
    from inspector.core.gguf_names import unpermute_rows

    rows = np.arange(36, dtype=np.float32).reshape(12, 3)
    want = rows.reshape(3, 2, 2, 3).swapaxes(1, 2).reshape(-1)
    got = list(unpermute_rows(iter([rows[:3], rows[3:9], rows[9:]]), 3, 4))
    assert [g.ndim for g in got] == [1, 1]
    assert np.concatenate(got).tolist() == want.tolist()


def _small_pair(tmp_path, q_type=None):
    """An HF model naming its embeddings ``model.tok_embeddings`` (not the first HF name the
    GGUF map offers for ``token_embd``) and its GGUF conversion: Q/K rows permuted, the
    attention output stored transposed (never read so: GGUF keeps HF's layout), and a
    ``rope_freqs`` the HF model has no tensor for."""
    h, n_head, n_kv, head = 64, 4, 2, 16
    g = torch.Generator().manual_seed(3)
    hf = {
        "model.tok_embeddings.weight": torch.randn(8, h, generator=g),
        "model.layers.0.self_attn.q_proj.weight": torch.randn(h, h, generator=g),
        "model.layers.0.self_attn.k_proj.weight": torch.randn(n_kv * head, h, generator=g),
        "model.layers.0.self_attn.o_proj.weight": torch.randn(h, h, generator=g),
    }
    save_file({k: v.numpy() for k, v in hf.items()}, str(tmp_path / "hf.safetensors"))
    q = permute(hf["model.layers.0.self_attn.q_proj.weight"], n_head, n_head).numpy()
    k = permute(hf["model.layers.0.self_attn.k_proj.weight"], n_head, n_kv).numpy()
    o = hf["model.layers.0.self_attn.o_proj.weight"].numpy()
    path = write_gguf(
        tmp_path / f"m{q_type is not None:d}.gguf",
        {
            "token_embd.weight": (hf["model.tok_embeddings.weight"].numpy(), None),
            "blk.0.attn_q.weight": (np.ascontiguousarray(q), q_type),
            "blk.0.attn_k.weight": (np.ascontiguousarray(k), None),
            "blk.0.attn_output.weight": (np.ascontiguousarray(o.T), None),
            "rope_freqs.weight": (np.ones(8, np.float32), None),
        },
        kv={"llama.attention.head_count": n_head, "llama.attention.head_count_kv": n_kv},
    )
    return tmp_path / "hf.safetensors", path


def test_a_gguf_file_is_paired_with_its_hf_model_on_either_side(tmp_path):
    """Names mapped back to the HF name the other file holds, Q/K rows put back on the GGUF
    side whether it is A or B, a tensor without counterpart listed as such, and no transposed
    reading (GGUF keeps HF's layout). Mutation testing: the HF names A holds not consulted,
    the B side's rows left permuted, and a GGUF name kept when B lacked it all went unnoticed
    (the existing test has the GGUF file as A, its embeddings under the first HF name)."""
    hf_path, gguf_path = _small_pair(tmp_path)
    with open_checkpoint(hf_path) as hf, open_checkpoint(gguf_path) as gg:
        forth = {d.name: d for d in run_job(diff_checkpoints(hf, gg))}
        back = {d.name: d for d in run_job(diff_checkpoints(gg, hf))}
    assert {n: (d.status, d.name_b) for n, d in forth.items()} == {
        "model.tok_embeddings.weight": (DiffStatus.EQUAL, "token_embd.weight"),
        "model.layers.0.self_attn.q_proj.weight": (DiffStatus.EQUAL, "blk.0.attn_q.weight"),
        "model.layers.0.self_attn.k_proj.weight": (DiffStatus.EQUAL, "blk.0.attn_k.weight"),
        "model.layers.0.self_attn.o_proj.weight": (DiffStatus.DIFFER, "blk.0.attn_output.weight"),
        "rope_freqs.weight": (DiffStatus.ONLY_B, None),
    }
    assert {n: (d.status, d.name_b) for n, d in back.items()} == {
        "token_embd.weight": (DiffStatus.EQUAL, "model.tok_embeddings.weight"),
        "blk.0.attn_q.weight": (DiffStatus.EQUAL, "model.layers.0.self_attn.q_proj.weight"),
        "blk.0.attn_k.weight": (DiffStatus.EQUAL, "model.layers.0.self_attn.k_proj.weight"),
        "blk.0.attn_output.weight": (DiffStatus.DIFFER, "model.layers.0.self_attn.o_proj.weight"),
        "rope_freqs.weight": (DiffStatus.ONLY_A, None),
    }
    assert not any(d.transposed for d in (*forth.values(), *back.values()))


def test_a_quantized_gguf_file_as_b_has_its_rows_put_back(tmp_path):
    """Compared by logical weight (B's Q8_0 query dequantized): B's K rows are still put back
    in the HF order, and the query differs by Q8_0's noise only."""
    hf_path, gguf_path = _small_pair(tmp_path, Q.Q8_0)
    with open_checkpoint(hf_path) as hf, open_checkpoint(gguf_path) as gg:
        diffs = {
            d.name: d for d in run_job(diff_checkpoints(hf, gg, quant_b=recognise(gg.tensors)))
        }
    k = diffs["model.layers.0.self_attn.k_proj.weight"]
    assert (k.status, k.max_abs_diff, k.name_b) == (DiffStatus.EQUAL, 0.0, "blk.0.attn_k.weight")
    q = diffs["model.layers.0.self_attn.q_proj.weight"]
    assert q.status is DiffStatus.DIFFER and q.quant == "gguf" and q.rel_fro_err < 0.01


def test_a_quantized_a_is_paired_with_a_gguf_b_by_its_logical_names(tmp_path):
    """A GPTQ model's ``mlp.fc1`` (the third HF name the map offers for ``ffn_up``) against a
    GGUF file holding its dequantized values: paired through the logical weight's name, which
    no stored tensor of A carries (``fc1.qweight``, ``fc1.scales``…), and equal. Mutation
    testing: pairing by A's stored names instead went unnoticed."""
    from inspector.core.quant.of_checkpoint import quant_layout
    from inspector.core.quant.values import dequantized_f32
    from tests.quant_folders import folder, gptq_tensors

    w_name = "model.layers.0.mlp.fc1.weight"
    qc = {"quant_method": "gptq", "bits": 4, "group_size": 32, "desc_act": False, "sym": True}
    folder(tmp_path / "q", gptq_tensors("model.layers.0.mlp.fc1")[:-1], qc)
    with open_checkpoint(tmp_path / "q") as a:
        w = quant_layout(a).weights[w_name]
        values = np.concatenate(list(dequantized_f32(a, w))).reshape(64, 128)
    path = write_gguf(tmp_path / "b.gguf", {"blk.0.ffn_up.weight": (values, None)})
    with open_checkpoint(tmp_path / "q") as a, open_checkpoint(path) as b:
        diffs = run_job(diff_checkpoints(a, b, quant_a=quant_layout(a)))
    assert [(d.name, d.name_b, d.max_abs_diff, d.quant) for d in diffs] == [
        (w_name, "blk.0.ffn_up.weight", 0.0, "gptq")
    ]
