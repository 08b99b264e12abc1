"""The files a folder cast carries along: which count as companions, copied byte for byte with
their permissions, and config.json rewritten with the target dtype as transformers writes it."""

from __future__ import annotations

import json
import os

import numpy as np
import pytest

from inspector.core.dtypes import DTYPES
from inspector.core.errors import CheckpointError
from inspector.core.model_folder.companions import (
    MAX_COMPANION_BYTES,
    companion_files,
    copy_companions,
)
from inspector.core.model_folder.config import MAX_CONFIG_BYTES, config_with_dtype
from inspector.core.save.writer import AtomicWriter


def test_config_is_rewritten_as_transformers_writes_it():
    text = json.dumps(
        {"zeta": 1, "torch_dtype": "float32", "alpha": [1, 2], "text_config": {"dtype": "float32"}}
    )
    assert config_with_dtype(text, DTYPES["BF16"]) == (
        "{\n"
        '  "alpha": [\n'
        "    1,\n"
        "    2\n"
        "  ],\n"
        '  "text_config": {\n'
        '    "dtype": "bfloat16"\n'
        "  },\n"
        '  "torch_dtype": "bfloat16",\n'
        '  "zeta": 1\n'
        "}\n"
    )


@pytest.mark.parametrize(
    "target, name",
    [("F32", "float32"), ("F16", "float16"), ("F64", "float64"), ("BF16", "bfloat16")],
)
def test_the_dtype_is_written_by_its_torch_name_not_an_alias(target, name):
    out = json.loads(config_with_dtype('{"torch_dtype": "x"}', DTYPES[target]))
    assert out == {"torch_dtype": name}  # never "float", "half" or "double"


def test_which_files_are_companions(tmp_path):
    for name in ("config.json", "tokenizer.json", "README.md", "chat_template.jinja"):
        (tmp_path / name).write_text("x")
    for name in (
        ".hidden",
        "model.safetensors",
        "pytorch_model.BIN",
        "model.safetensors.index.json",
    ):
        (tmp_path / name).write_text("x")
    (tmp_path / "sub").mkdir()
    with open(tmp_path / "exactly_the_limit.txt", "wb") as f:
        f.truncate(MAX_COMPANION_BYTES)  # sparse: no disk used
    with open(tmp_path / "over_the_limit.txt", "wb") as f:
        f.truncate(MAX_COMPANION_BYTES + 1)
    assert companion_files(str(tmp_path)) == [
        "README.md",
        "chat_template.jinja",
        "config.json",
        "exactly_the_limit.txt",
        "tokenizer.json",
    ]
    assert companion_files(str(tmp_path / "missing")) == []


def test_companions_are_copied_with_their_permissions_and_the_config_cast(tmp_path):
    src, out = tmp_path / "src", tmp_path / "out"
    src.mkdir()
    out.mkdir()
    (src / "config.json").write_text('{"torch_dtype": "float32"}')
    (src / "tokenizer.json").write_bytes(b"\x00\xffbytes as they are")
    os.chmod(src / "tokenizer.json", 0o600)
    os.chmod(src / "config.json", 0o640)
    with AtomicWriter() as writer:
        names = copy_companions(writer, str(src), str(out), DTYPES["F16"])
        writer.commit()
    assert names == ["config.json", "tokenizer.json"]
    assert (out / "tokenizer.json").read_bytes() == b"\x00\xffbytes as they are"
    assert json.loads((out / "config.json").read_text()) == {"torch_dtype": "float16"}
    assert os.stat(out / "tokenizer.json").st_mode & 0o777 == 0o600
    assert os.stat(out / "config.json").st_mode & 0o777 == 0o640


def test_a_config_that_is_not_json_or_no_cast_is_copied_as_it_is(tmp_path):
    src, out = tmp_path / "src", tmp_path / "out"
    src.mkdir()
    out.mkdir()
    (src / "config.json").write_bytes(b"{not json")
    with AtomicWriter() as writer:
        copy_companions(writer, str(src), str(out), DTYPES["F16"])
        writer.commit()
    assert (out / "config.json").read_bytes() == b"{not json"
    (src / "config.json").write_bytes(b'{"torch_dtype":"float32"}')
    with AtomicWriter() as writer:
        copy_companions(writer, str(src), str(out), None)
        writer.commit()
    assert (out / "config.json").read_bytes() == b'{"torch_dtype":"float32"}'


def test_a_companion_never_replaces_an_input_of_the_save(tmp_path):
    (tmp_path / "config.json").write_text("{}")
    with AtomicWriter([str(tmp_path / "config.json")]) as w, pytest.raises(CheckpointError) as e:
        copy_companions(w, str(tmp_path), str(tmp_path), None)
    assert e.value.reason == "is an input file of this save; the model file must not replace it"


def test_big_companions_are_copied_whole(tmp_path):
    """Files are streamed, not read in one piece: a 3 MiB tokenizer and a config.json over the
    16 MiB config limit (not rewritten: it is copied as it is) arrive byte for byte."""
    src, out = tmp_path / "src", tmp_path / "out"
    src.mkdir()
    out.mkdir()
    tokenizer = np.random.default_rng(0).bytes(3 << 20)
    config = b'{"torch_dtype": "float32", "pad": "' + b"x" * (17 << 20) + b'"}'
    (src / "tokenizer.json").write_bytes(tokenizer)
    (src / "config.json").write_bytes(config)
    with AtomicWriter() as writer:
        copy_companions(writer, str(src), str(out), DTYPES["F16"])
        writer.commit()
    assert (out / "tokenizer.json").read_bytes() == tokenizer
    assert (out / "config.json").read_bytes() == config


def test_a_config_of_exactly_the_config_limit_is_still_cast(tmp_path):
    src, out = tmp_path / "src", tmp_path / "out"
    src.mkdir()
    out.mkdir()
    body = b'{"torch_dtype": "float32"'
    (src / "config.json").write_bytes(body + b" " * (MAX_CONFIG_BYTES - len(body) - 1) + b"}")
    with AtomicWriter() as writer:
        copy_companions(writer, str(src), str(out), DTYPES["F16"])
        writer.commit()
    assert json.loads((out / "config.json").read_text()) == {"torch_dtype": "float16"}


def test_a_big_companion_is_copied_in_pieces_not_held_whole(tmp_path):
    """A 64 MiB tokenizer is streamed: Python's own allocations stay at a few MiB (tracemalloc
    counts bytes objects, so one whole read would show 64 MiB)."""
    import tracemalloc

    src, out = tmp_path / "src", tmp_path / "out"
    src.mkdir()
    out.mkdir()
    with open(src / "tokenizer.json", "wb") as f:
        f.truncate(64 << 20)  # sparse
    tracemalloc.start()
    try:
        with AtomicWriter() as writer:
            copy_companions(writer, str(src), str(out), None)
            writer.commit()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert (out / "tokenizer.json").stat().st_size == 64 << 20
    assert peak < 8 << 20, f"peak {peak / (1 << 20):.1f} MiB"
