"""Differential test over the malformed corpus: we accept exactly what ``safetensors.safe_open``
accepts, read the same tensors from it, and refuse the rest with one clear, specific line."""

from __future__ import annotations

import re

import numpy as np
import pytest
from safetensors import safe_open

from inspector.core.checkpoint import open_checkpoint
from inspector.core.errors import CheckpointError
from tests.malformed.make_corpus import CASES, Case

NO_ARRAY = "no array"
REF_NUMPY_DTYPES = {
    "BOOL",
    "U8",
    "I8",
    "I16",
    "U16",
    "F16",
    "I32",
    "U32",
    "F32",
    "F64",
    "I64",
    "U64",
    "C64",
}


def reference_open(path) -> dict | None:
    """What safe_open sees, or None if it refuses the file."""
    try:
        with safe_open(str(path), "numpy") as f:
            out = {"metadata": f.metadata(), "tensors": {}}
            for k in f.keys():  # noqa: SIM118 - safe_open is not iterable
                sl = f.get_slice(k)
                dtype, shape = sl.get_dtype(), list(sl.get_shape())
                value = None
                if dtype in REF_NUMPY_DTYPES:
                    try:
                        value = f.get_tensor(k)
                    except Exception:  # e.g. a valid shape numpy cannot hold
                        value = NO_ARRAY
                out["tensors"][k] = (dtype, shape, value)
            return out
    except Exception:  # safe_open raises assorted types (SafetensorError, OSError, ...)
        return None


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    base = tmp_path_factory.mktemp("corpus")
    return {c.name: c.make(base / c.name) for c in CASES}


def test_corpus_is_broad():
    rejects = [c for c in CASES if c.expect == "reject"]
    oks = [c for c in CASES if c.expect == "ok"]
    assert len(rejects) >= 30 and len(oks) >= 5
    assert all(c.says for c in rejects)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_accepts_exactly_what_safe_open_accepts(case: Case, corpus):
    path = corpus[case.name]
    ref = reference_open(path)
    assert (ref is not None) == (case.expect == "ok"), "corpus expectation disagrees with safe_open"
    try:
        ckpt = open_checkpoint(path)
    except CheckpointError as e:
        assert case.expect == "reject", f"we refuse a file safe_open opens: {e}"
        assert e.path == str(path)
        assert "\n" not in str(e) and len(str(e)) < 400
        assert re.search(case.says, e.reason), e.reason
        return
    assert case.expect == "ok", "we open a file safe_open refuses"
    with ckpt:
        assert (ckpt.metadata or None) == ref["metadata"]
        assert {t.name for t in ckpt.tensors} == set(ref["tensors"])
        for t in ckpt.tensors:
            dtype, shape, value = ref["tensors"][t.name]
            assert (t.dtype.name, list(t.shape)) == (dtype, shape)
            if value is NO_ARRAY:  # neither can make an array; we say so in one line
                with pytest.raises(CheckpointError, match="cannot be shown as an array"):
                    ckpt.view(t)
                continue
            mine = ckpt.view(t)
            assert mine.shape == tuple(shape)
            if value is not None:
                np.testing.assert_array_equal(mine, value)


def test_good_file_values(corpus):
    """The writer-made file reads back the exact values torch wrote, BF16 included."""
    with open_checkpoint(corpus["good"]) as ckpt:
        np.testing.assert_array_equal(ckpt.view("w"), np.arange(6, dtype=np.float32).reshape(2, 3))
        assert ckpt.view("ids").tolist() == [1, -2, 3, 2**40]
        assert ckpt.view("h").astype(np.float32).tolist() == [1.5, -2.0]
        assert ckpt.metadata == {"format": "pt"}


def test_pickle_named_as_pytorch_not_bad_header(corpus):
    for name in ("torch_pickle_zip", "torch_pickle_legacy"):
        with pytest.raises(CheckpointError) as err:
            open_checkpoint(corpus[name])
        assert "PyTorch pickle" in err.value.reason
        assert "header" not in err.value.reason


def test_scalar_and_odd_valid_values(corpus):
    with open_checkpoint(corpus["scalar"]) as ckpt:
        v = ckpt.view("a")
        assert v.shape == () and float(v) == 2.5
    with open_checkpoint(corpus["zero_times_huge"]) as ckpt:
        assert ckpt["a"].nbytes == 0 and ckpt["a"].shape == (0, 2**64 - 1)
        with pytest.raises(CheckpointError, match=r"'a'.*cannot be shown as an array"):
            ckpt.view("a")
    with open_checkpoint(corpus["zero_size"]) as ckpt:
        assert ckpt.view("a").shape == (0, 3) and ckpt.view("b").tolist() == [0.0]
    with open_checkpoint(corpus["dup_tensor_name"]) as ckpt:
        assert [t.shape for t in ckpt.tensors] == [(2,)]  # the last entry wins, as in serde
    with open_checkpoint(corpus["entry_as_list"]) as ckpt:
        assert (ckpt["a"].dtype.name, ckpt["a"].shape) == ("F32", (2,))
