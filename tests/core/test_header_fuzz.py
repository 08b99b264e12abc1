"""Property tests for the header reader (bounded, a few seconds).

1. Whatever the bytes, ``read_header`` either returns or raises ``CheckpointError``.
2. For generated headers, near-valid ones and broken ones alike, we accept exactly when
   ``safetensors.safe_open`` accepts, and then see the same tensors.
"""

from __future__ import annotations

import json
import os
import struct

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from safetensors import safe_open

from inspector.core.dtypes import DTYPES
from inspector.core.errors import CheckpointError
from inspector.core.formats.safetensors import read_header

# bounded for the suite; HEADER_FUZZ_EXAMPLES=5000 for a longer hunt
FUZZ = settings(
    max_examples=int(os.environ.get("HEADER_FUZZ_EXAMPLES", "100")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)


@pytest.fixture(scope="module")
def scratch(tmp_path_factory):
    return tmp_path_factory.mktemp("fuzz") / "f.safetensors"


def frame(header: bytes, data_len: int) -> bytes:
    return struct.pack("<Q", len(header)) + header + b"\x01" * data_len


def ours(path) -> tuple | None:
    try:
        h = read_header(path)
    except CheckpointError as e:
        assert "\n" not in str(e)
        return None
    return h.metadata, sorted((t.name, t.dtype.name, list(t.shape), t.nbytes) for t in h.tensors)


def reference(path) -> tuple | None:
    try:
        with safe_open(str(path), "numpy") as f:
            rows = []
            for k in f.keys():  # noqa: SIM118 - safe_open is not iterable
                sl = f.get_slice(k)
                shape = list(sl.get_shape())
                rows.append((k, sl.get_dtype(), shape))
            return f.metadata(), sorted(rows)
    except Exception:  # safe_open raises several types
        return None


def agree(path) -> None:
    mine, ref = ours(path), reference(path)
    assert (mine is None) == (ref is None), f"ours={mine!r:.300} ref={ref!r:.300}"
    if mine is not None:
        assert mine[0] == ref[0]
        assert [r[:3] for r in mine[1]] == ref[1]


# -- 1. arbitrary bytes -----------------------------------------------------------------------


@FUZZ
@given(blob=st.binary(max_size=300))
def test_random_bytes_never_escape(scratch, blob):
    scratch.write_bytes(blob)
    agree(scratch)


@FUZZ
@given(header=st.binary(max_size=200), data_len=st.integers(0, 64))
def test_random_header_bytes_with_a_right_length(scratch, header, data_len):
    scratch.write_bytes(frame(header, data_len))
    agree(scratch)


# -- 2. generated JSON headers -------------------------------------------------------------------

json_scalars = (
    st.none()
    | st.booleans()
    | st.integers(-(2**70), 2**70)
    | st.floats(allow_nan=False, allow_infinity=False, min_value=-1e300, max_value=1e300)
    | st.text(max_size=8)
)
json_values = st.recursive(
    json_scalars,
    lambda kids: (
        st.lists(kids, max_size=4) | st.dictionaries(st.text(max_size=6), kids, max_size=4)
    ),
    max_leaves=12,
)
dtype_names = st.sampled_from(sorted(DTYPES))
odd_dtypes = st.sampled_from(["f32", "F12", "", "float32", "U1", "F8_E4M3FN"]) | json_values
dims = st.integers(0, 5)
odd_dims = st.sampled_from([-1, 2**64, 2**64 - 1, 2**32, 1.0, True, None, "2", -0.0])


@st.composite
def headers(draw):
    """A header that is valid, or valid but for a few draws of the dice; and its data length."""
    n = draw(st.integers(0, 5))
    names = draw(st.lists(st.text(max_size=6), min_size=n, max_size=n, unique=True))
    entries = []
    pos = 0
    for name in names:
        dtype = draw(dtype_names)
        shape = draw(st.lists(dims, max_size=3))
        numel = 1
        for d in shape:
            numel *= d
        nbytes = (numel * DTYPES[dtype].bits + 7) // 8
        info: dict = {"dtype": dtype, "shape": shape, "data_offsets": [pos, pos + nbytes]}
        pos += nbytes
        if draw(st.integers(0, 9)) == 0:
            info["dtype"] = draw(odd_dtypes)
        if draw(st.integers(0, 9)) == 0:
            info["shape"] = [*shape, draw(odd_dims)]
        if draw(st.integers(0, 9)) == 0:
            info["data_offsets"] = draw(
                st.lists(st.integers(-1, pos + 9), max_size=3) | st.just([pos, pos - nbytes])
            )
        if draw(st.integers(0, 9)) == 0:
            info[draw(st.text(max_size=5))] = draw(json_values)
        if draw(st.integers(0, 19)) == 0:
            del info[draw(st.sampled_from(sorted(info)))]
        if draw(st.integers(0, 19)) == 0:
            info = [info.get("dtype"), info.get("shape"), info.get("data_offsets")]
        entries.append((name, info))
    if draw(st.booleans()):
        meta = draw(
            st.dictionaries(st.text(max_size=5), st.text(max_size=5) | json_scalars, max_size=3)
            | st.none()
            | json_values
        )
        entries.insert(draw(st.integers(0, len(entries))), ("__metadata__", meta))
    if entries and draw(st.integers(0, 9)) == 0:  # a repeated key
        entries.append(draw(st.sampled_from(entries)))
    data_len = pos + draw(st.sampled_from([0, 0, 0, 1, -1]))
    return entries, max(data_len, 0)


def render(entries, ascii_only: bool, indent) -> bytes:
    """JSON text from (key, value) pairs, keeping repeated keys (json.dumps of a dict cannot)."""
    parts = [
        json.dumps(k, ensure_ascii=ascii_only)
        + ":"
        + json.dumps(v, ensure_ascii=ascii_only, indent=indent)
        for k, v in entries
    ]
    return ("{" + ",".join(parts) + "}").encode()


@FUZZ
@given(
    h=headers(),
    ascii_only=st.booleans(),
    indent=st.sampled_from([None, None, 1]),
    pad=st.integers(0, 7),
)
def test_generated_headers_agree_with_safe_open(scratch, h, ascii_only, indent, pad):
    entries, data_len = h
    text = render(entries, ascii_only, indent) + b" " * pad
    scratch.write_bytes(frame(text, data_len))
    agree(scratch)


@FUZZ
@given(value=json_values, data_len=st.integers(0, 16))
def test_any_json_value_as_header(scratch, value, data_len):
    scratch.write_bytes(frame(json.dumps(value).encode(), data_len))
    agree(scratch)


@FUZZ
@given(h=headers(), cut=st.integers(0, 400), flip=st.integers(0, 400), byte=st.integers(0, 255))
def test_corrupted_valid_files(scratch, h, cut, flip, byte):
    entries, data_len = h
    blob = bytearray(frame(render(entries, True, None), data_len))
    assume(blob)
    blob[flip % len(blob)] = byte
    scratch.write_bytes(bytes(blob[: max(0, len(blob) - cut % 9)]))
    agree(scratch)


@pytest.mark.parametrize(
    "meta",
    [
        '{"format":"pt"}',
        "{}",
        ' { "a" : "x}{\\"y[:" , "b" : "" } ',
        '{"k":"v","k":"w"}',
        '{"k":1}',
        '{"k":{"n":"v"}}',
        '{"k":["v"]}',
        "null",
        '{"k":"v"},"__metadata__":{"j":"w"}',
        '{"k":"v\\\\"}',
    ],
)
def test_metadata_written_first_reads_as_the_reference_reads_it(scratch, meta):
    """The fast path decodes a leading ``__metadata__`` from its own span: braces, quotes and
    colons inside its strings, repeats and non-string values end as the reference's do."""
    w = '"w":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}'
    scratch.write_bytes(frame(('{"__metadata__":' + meta + "," + w + "}").encode(), 4))
    agree(scratch)
    if meta == '{"format":"pt"}':
        assert ours(scratch)[0] == {"format": "pt"}
