"""The exact line a person reads for each kind of bad header: the tensor it names, the value it
shows. (Mutation testing: a message naming no tensor, or showing the wrong number, passed.)"""

from __future__ import annotations

import json
import struct

import pytest

from inspector.core.errors import CheckpointError
from inspector.core.formats.safetensors import parse_header_text, read_header


def _write(tmp_path, header: str, data_len: int):
    raw = header.encode()
    p = tmp_path / "x.safetensors"
    p.write_bytes(struct.pack("<Q", len(raw)) + raw + b"\0" * data_len)
    return p


def _refused(path) -> tuple[str | None, str]:
    """The file a refusal names and its reason."""
    with pytest.raises(CheckpointError) as e:
        read_header(path)
    return e.value.path, e.value.reason


@pytest.mark.parametrize(
    "header, data_len, reason",
    [
        (
            '{"w": {"dtype": "F32", "shape": [-1], "data_offsets": [0, 4]}}',
            4,
            "tensor 'w': shape must be a list of non-negative integers, got [-1]",
        ),
        (
            '{"w": {"dtype": "F32", "shape": [1], "data_offsets": [0]}}',
            4,
            "tensor 'w': data_offsets must be exactly two non-negative integers, got [0]",
        ),
        (
            '{"w": {"dtype": "F32", "shape": [2], "data_offsets": [0, 4]}}',
            4,
            "tensor 'w': shape [2] × F32 needs 8 bytes but data_offsets give 4",
        ),
        (
            '{"w": {"dtype": "U8", "shape": [1], "data_offsets": [0, 4]}}',
            4,
            "tensor 'w': shape [1] × U8 needs 1 byte but data_offsets give 4",
        ),
        (
            '{"w": {"dtype": "F4", "shape": [3], "data_offsets": [0, 2]}}',
            2,
            "tensor 'w': 3 × 4-bit F4 values do not fill whole bytes",
        ),
        (
            '{"w": {"dtype": "F32", "dtype": "F32", "shape": [1], "data_offsets": [0, 4]}}',
            4,
            "tensor 'w': field 'dtype' appears twice",
        ),
        (
            '{"w": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4], "x": 1'
            + "0" * 400
            + "}}",
            4,
            "header holds a number too large for a 64-bit float: 1000000000000000000000000000000000000...",
        ),
        (
            '{"w": [1, 2]}',
            0,
            "tensor 'w': entry must be an object with dtype, shape and data_offsets, "
            "got a list of 2 items",
        ),
        (
            '{"w": 5}',
            0,
            "tensor 'w': entry must be an object with dtype, shape and data_offsets, got a number",
        ),
        (
            '{"w": {"dtype": "f32", "shape": [1], "data_offsets": [0, 4]}}',
            4,
            "tensor 'w': unknown dtype \"f32\" (dtype names are upper case: F32)",
        ),
        (
            '{"w": {"dtype": {"F32": 1}, "shape": [1], "data_offsets": [0, 4]}}',
            4,
            "tensor 'w': unknown dtype {\"F32\": 1}",
        ),
        (  # serde's map form of a dtype, but repeated: refused like the reference
            '{"w": {"dtype": {"F32": null, "F32": null}, "shape": [1], "data_offsets": [0, 4]}}',
            4,
            "tensor 'w': unknown dtype {\"F32\": null}",
        ),
        (  # shown as written: not ASCII-escaped, the newline escaped
            '{"w": {"dtype": "é\\n", "shape": [1], "data_offsets": [0, 4]}}',
            4,
            "tensor 'w': unknown dtype \"é\\n\"",
        ),
        (
            '{"w": {"dtype": "F32", "shape": [1], "data_offsets": [0, 18446744073709551616]}}',
            4,
            "tensor 'w': data_offsets must be exactly two non-negative integers, "
            "got [0, 18446744073709551616]",
        ),
        (
            '{"w": {"dtype": "F32", "shape": [1], "data_offsets": [18446744073709551616, 4]}}',
            4,
            "tensor 'w': data_offsets must be exactly two non-negative integers, "
            "got [18446744073709551616, 4]",
        ),
        (
            '{"w": {"dtype": "F32", "shape": [1], "data_offsets": [-1, 4]}}',
            4,
            "tensor 'w': data_offsets must be exactly two non-negative integers, got [-1, 4]",
        ),
        (  # the largest u64 is a valid offset: the size check speaks
            '{"w": {"dtype": "F32", "shape": [1], "data_offsets": [0, 18446744073709551615]}}',
            4,
            "tensor 'w': shape [1] × F32 needs 4 bytes but data_offsets give "
            "18,446,744,073,709,551,615",
        ),
        (
            '{"a": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]}, '
            '"b": {"dtype": "F32", "shape": [0], "data_offsets": [8, 8]}}',
            8,
            "tensor 'b': data_offsets starts at byte 8, leaving a gap after byte 4",
        ),
        (
            '{"a": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]}, '
            '"b": {"dtype": "F32", "shape": [3], "data_offsets": [4, 8]}}',
            8,
            "tensor 'b': shape [3] × F32 needs 12 bytes but data_offsets give 4",
        ),
        (
            '{"a": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]}, '
            '"b": {"dtype": "F32", "shape": [1], "data_offsets": [8, 4]}}',
            8,
            "tensor 'b': data_offsets ends (4) before it starts (8)",
        ),
        (  # 2**59 elements of 64 bits: the byte count overflows a u64
            '{"w": {"dtype": "F64", "shape": [576460752303423488], "data_offsets": [0, 0]}}',
            0,
            "tensor 'w': shape [576460752303423488] overflows",
        ),
        (
            '{"w": {"dtype": "F32", "shape": [1099511627776, 1099511627776], '
            '"data_offsets": [0, 0]}}',
            0,
            "tensor 'w': shape [1099511627776, 1099511627776] overflows",
        ),
    ],
)
def test_exact_reasons(tmp_path, header, data_len, reason):
    path = _write(tmp_path, header, data_len)
    assert _refused(path) == (str(path), reason)


def test_careful_parser_accepts_adjacent_tensors_and_refuses_overlap():
    """Tensors that touch (the next starts where the last ended) are fine; overlap is not."""
    ok = json.dumps(
        {
            "a": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]},
            "b": {"dtype": "F32", "shape": [1], "data_offsets": [4, 8]},
        }
    )
    header = parse_header_text("x", ok, data_start=8, file_size=16)
    assert [t.name for t in header.tensors] == ["a", "b"]
    bad = ok.replace("[4, 8]", "[2, 6]")
    with pytest.raises(CheckpointError):
        parse_header_text("x", bad, data_start=8, file_size=14)


@pytest.mark.parametrize(
    "shape",
    [[2**63, 0], [2**64 - 1, 0]],  # the running product stays within a u64 until the 0
)
def test_empty_tensors_with_huge_dimensions_open_like_the_reference(tmp_path, shape):
    header = json.dumps({"w": {"dtype": "F32", "shape": shape, "data_offsets": [0, 0]}})
    assert [t.shape for t in read_header(_write(tmp_path, header, 0)).tensors] == [tuple(shape)]


@pytest.mark.parametrize("shape", [[2**63, 0], [2**64 - 1, 0]])
def test_an_empty_tensor_with_huge_dimensions_and_a_wrong_size_is_refused_for_its_size(
    tmp_path, shape
):
    """The size check multiplies the dimensions in a u64 as the reference does: the product of
    [2**64 - 1, 0] never leaves a u64 (it is 2**64 - 1, then 0), so the reason is the byte count,
    not an overflow. (Mutation testing: a product started at 2, or refused at exactly 2**64 - 1,
    said "overflows".)"""
    header = json.dumps({"w": {"dtype": "F32", "shape": shape, "data_offsets": [0, 4]}})
    assert _refused(_write(tmp_path, header, 4))[1] == (
        f"tensor 'w': shape {shape} × F32 needs 0 bytes but data_offsets give 4"
    )


@pytest.mark.parametrize("nest", [("[", "]"), ('{"a":', "}")])
def test_an_extra_field_nested_to_the_reference_limit_opens_one_more_does_not(tmp_path, nest):
    opening, closing = nest
    inner = "1" if opening.startswith("{") else ""

    def header(levels: int) -> str:
        value = opening * levels + inner + closing * levels
        return '{"w": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4], "x": ' + value + "}}"

    assert len(read_header(_write(tmp_path, header(125), 4)).tensors) == 1  # depth 127 in all
    with pytest.raises(CheckpointError) as err:
        read_header(_write(tmp_path, header(126), 4))
    assert err.value.reason == "tensor 'w': extra field 'x' nested more than 127 levels deep"


W = '{"w": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]%s}}'


@pytest.mark.parametrize(
    "header, data_len, reason",
    [
        ("[" * 100_000, 0, "header JSON is nested too deeply"),
        (
            "{",
            0,
            "header is not valid JSON (Expecting property name enclosed in double quotes at "
            "character 1)",
        ),
        ('{"a\x01": 1}', 0, "header is not valid JSON (Invalid control character at character 3)"),
        (
            '{"__metadata__": {"a": "b"}, "__metadata__": {"a": "c"}, '
            '"w": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]}}',
            4,
            "header JSON has __metadata__ twice",
        ),
        (
            '{"__metadata__": [1], "w": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]}}',
            4,
            "__metadata__ must be an object of string to string",
        ),
        (
            '{"\\ud800": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]}}',
            4,
            "header is not valid JSON (a \\u escape encodes a lone surrogate, which is not "
            "valid UTF-8)",
        ),
        (
            '{"w": {"dtype": "F32", "shape": [-0], "data_offsets": [0, 0]}}',
            0,
            "tensor 'w': shape must be a list of non-negative integers, got [-0.0]",
        ),
        ('{"w": {"dtype": "F32", "data_offsets": [0, 4]}}', 4, "tensor 'w': missing field 'shape'"),
        ('{"w": {"shape": [1], "data_offsets": [0, 4]}}', 4, "tensor 'w': missing field 'dtype'"),
        ('{"w": {"dtype": "F32", "shape": [1]}}', 4, "tensor 'w': missing field 'data_offsets'"),
        (
            W % "",
            8,
            "4 bytes after the last tensor are not described by the header (trailing data)",
        ),
        (  # an empty tensor with a dimension past u64: msgspec read it, the reference refuses
            '{"w": {"dtype": "BF16", "shape": [0, 18446744073709551616], "data_offsets": [0, 0]}}',
            0,
            "tensor 'w': shape must be a list of non-negative integers, "
            "got [0, 18446744073709551616]",
        ),
    ],
)
def test_more_exact_reasons(tmp_path, header, data_len, reason):
    path = _write(tmp_path, header, data_len)
    assert _refused(path) == (str(path), reason)


@pytest.mark.parametrize(
    "header, metadata",
    [
        (W % ', "x": -0', None),  # -0 is only a problem as a dimension
        (W % ', "x": 10000000000000000000000000', None),  # beyond u64, still a finite float
        (W.replace('"w"', '"block-0.w"') % "", None),  # "-0" in a name
        (
            '{"__metadata__": {"a": "b"}, "\\u00e9": '
            '{"dtype": "F32", "shape": [1], "data_offsets": [0, 4]}}',
            {"a": "b"},
        ),
    ],
)
def test_headers_that_open_on_either_path(tmp_path, header, metadata):
    import gc

    h = read_header(_write(tmp_path, header, 4))
    assert len(h.tensors) == 1 and h.tensors[0].shape == (1,)
    assert h.metadata == metadata
    assert gc.isenabled()  # the fast path pauses the collector while decoding, never for good


def test_a_device_is_named_as_one():
    assert _refused("/dev/null") == (
        "/dev/null",
        "is a device, not a .safetensors file",
    )


def test_a_four_byte_file_is_still_recognised_by_its_magic(tmp_path):
    p = tmp_path / "x.safetensors"
    p.write_bytes(b"GGUF")
    with pytest.raises(CheckpointError) as err:
        read_header(p)
    assert err.value.path == str(p) and "GGUF" in err.value.reason


@pytest.mark.parametrize(
    "header, reason",
    [
        (  # "\u0061" is "a": the second entry replaces the first, as in the reference's map
            '{"a": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]}, '
            '"\\u0061": {"dtype": "F32", "shape": [1], "data_offsets": [4, 8]}}',
            "tensor 'a': data_offsets starts at byte 4, leaving a gap after byte 0",
        ),
        (
            '{"\\ud800": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]}}',
            "header is not valid JSON (a \\u escape encodes a lone surrogate, which is not "
            "valid UTF-8)",
        ),
    ],
)
def test_names_written_with_escapes_are_judged_after_decoding(tmp_path, header, reason):
    path = _write(tmp_path, header, 8)
    assert _refused(path) == (str(path), reason)


@pytest.mark.parametrize(
    "header, reason",
    [
        (
            '{"w": {"dtype": "F32", "shape": "x", "data_offsets": [0, 4]}}',
            "tensor 'w': shape must be a list of non-negative integers, got \"x\"",
        ),
        (  # a start of exactly u64::MAX is a valid offset, out of place
            '{"w": {"dtype": "F32", "shape": [0], "data_offsets": '
            "[18446744073709551615, 18446744073709551615]}}",
            "tensor 'w': data_offsets starts at byte 18446744073709551615, leaving a gap after "
            "byte 0",
        ),
        (  # the reference judges the dropped first entry of a repeated name
            '{"w": {"dtype": "NOPE", "shape": [1], "data_offsets": [0, 4]}, '
            '"w": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]}}',
            "tensor 'w': unknown dtype \"NOPE\"",
        ),
        (  # the kept last entry of a repeated name is judged in its place, after 'b' (one
            # judged early with the dropped ones named 'a' first)
            '{"b": {"dtype": "NOPE", "shape": [1], "data_offsets": [0, 4]}, '
            '"a": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]}, '
            '"a": {"dtype": "ALSO", "shape": [1], "data_offsets": [0, 4]}}',
            "tensor 'b': unknown dtype \"NOPE\"",
        ),
        (
            '{"w": {"dtype": "F32", "dtype": "F32", "shape": [1], "data_offsets": [0, 4]}, '
            '"w": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]}}',
            "tensor 'w': field 'dtype' appears twice",
        ),
        (  # four escaped colons balance the four colons of the dropped entry: still found
            '{"w": {"dtype": "NOPE", "shape": [1], "data_offsets": [0, 4]}, '
            '"__metadata__": {"k": "\\u003a\\u003a\\u003a\\u003a"}, '
            '"w": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]}}',
            "tensor 'w': unknown dtype \"NOPE\"",
        ),
        (
            '{"w": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]}, '
            '"x": [1.7976931348623158e308]}',
            "header holds a number too large for a 64-bit float: 1.7976931348623158e308",
        ),
    ],
)
def test_careful_path_reasons(tmp_path, header, reason):
    path = _write(tmp_path, header, 4)
    assert _refused(path) == (str(path), reason)


@pytest.mark.parametrize(
    "dtype, reason",
    [
        ('["F32"]', "tensor 'w': unknown dtype [\"F32\"]"),  # one item, but not a map
        ('"X"', "tensor 'w': unknown dtype \"X\""),  # one character
        ("[1]", "tensor 'w': unknown dtype [1]"),
    ],
)
def test_a_one_item_dtype_that_is_not_a_map_is_unknown(tmp_path, dtype, reason):
    header = '{"w": {"dtype": ' + dtype + ', "shape": [1], "data_offsets": [0, 4]}}'
    path = _write(tmp_path, header, 4)
    assert _refused(path) == (str(path), reason)
