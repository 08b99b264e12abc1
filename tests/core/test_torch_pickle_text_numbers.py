"""Protocol 0's numbers read as torch.load reads them: ``torch.load(weights_only=False)``
unpickles with CPython's C unpickler, whose INT is C ``strtol`` (octal after a 0, hex after 0x),
whose every text argument ends at a NUL byte, whose LONG drops one ``L`` and whose FLOAT takes
no spaces. Before, this reader used ``int()``/``float()``: ``I010`` was 10 where torch gets 8,
and ``I7\\0…`` was refused where torch gets 7, so a hostile file's shapes and offsets could differ
from torch's. The reference in each test is ``pickle.loads``, run here."""

from __future__ import annotations

import pickle

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from inspector.core.formats.torch_pickle.machine import PickleError

from .pickle_reading import run, same

READ_AS_C_READS = {
    "INT in octal": b"I010\n.",
    "INT negative octal": b"I-010\n.",
    "INT in hex": b"I0x1F\n.",
    "INT with a space and a sign before it": b"I \t+12\n.",
    "INT that stops at a NUL": b"I7\x00junk\n.",
    "INT that is only a NUL": b"I\x00\n.",
    "INT in octal after 300 zeros": b"I" + b"0" * 300 + b"7\n.",
    "INT of two characters read as 1 is True": b"I+1\n.",
    "INT of two characters read as 0 is False": b"I-0\n.",
    "INT of 1 with a space after is the number": b"I1 \n.",
    "INT with underscores": b"I1_000\n.",
    "INT in 0o octal": b"I0o17\n.",
    "INT in binary": b"I0b101\n.",
    "INT past a C long": b"I9223372036854775808\n.",
    "INT at the bottom of a C long in hex": b"I-0x8000000000000000\n.",
    # strtol reads these; int(text, 0), where it stops short, refuses a leading 0
    "INT at the top of a C long in octal": b"I0777777777777777777777\n.",
    "INT at the bottom of a C long in octal": b"I-01000000000000000000000\n.",
    "LONG in hex with its L": b"L0x10L\n.",
    "LONG that stops at a NUL": b"L12\x00junk\n.",
    "LONG with spaces": b"L 12 L\n.",
    "FLOAT that stops at a NUL": b"F1.5\x00junk\n.",
    "FLOAT of a bare exponent dot": b"F1.e5\n.",
    "FLOAT infinity": b"F-Infinity\n.",
    "FLOAT that underflows to a subnormal": b"F2.4e-320\n.",
    "PUT and GET keys that stop at a NUL": b"]p3\x00x\ng3\x00y\n\x86.",
    "PUT and GET keys in base 10 with spaces": b"]p 07\ng7 \n\x86.",
    "PUT key past 9 in text, GET in binary": b"]p10\nh\x0a\x86.",
}


@pytest.mark.parametrize("data", READ_AS_C_READS.values(), ids=READ_AS_C_READS.keys())
def test_text_numbers_read_as_the_c_unpickler_reads_them(data):
    assert same(run(data), pickle.loads(data))


REFUSED_AS_C_REFUSES = {
    "INT empty": (b"I\n.", "pickle has an empty text argument (truncated or corrupt)"),
    "INT of a leading zero strtol stops at": (
        b"I08\n.",
        "pickle INT argument is not a whole number (corrupt)",
    ),
    "INT in octal past a C long": (
        b"I01000000000000000000000\n.",
        "pickle INT argument is not a whole number (corrupt)",
    ),
    "LONG in octal": (b"L010\n.", "pickle LONG argument is not a whole number (corrupt)"),
    "LONG with two Ls": (b"L12LL\n.", "pickle LONG argument is not a whole number (corrupt)"),
    "LONG empty": (b"L\n.", "pickle has an empty text argument (truncated or corrupt)"),
    "GET empty": (b"]p1\ng\n.", "pickle has an empty text argument (truncated or corrupt)"),
    "GET in hex": (b"]p1\ng0x1\n.", "pickle memo key is not a whole number (corrupt)"),
    "GET of a letter": (b"]p1\nga\n.", "pickle memo key is not a whole number (corrupt)"),
    "FLOAT with a space before": (b"F 1.5\n.", "pickle FLOAT argument is not a number (corrupt)"),
    "FLOAT with a space after": (b"F1.5 \n.", "pickle FLOAT argument is not a number (corrupt)"),
    "FLOAT with underscores": (b"F1_0\n.", "pickle FLOAT argument is not a number (corrupt)"),
    "FLOAT in hex": (b"F0x1p3\n.", "pickle FLOAT argument is not a number (corrupt)"),
    "FLOAT that overflows": (
        b"F-1e309\n.",
        "pickle FLOAT argument is too large for a float (corrupt)",
    ),
}


@pytest.mark.parametrize(
    "data, says", REFUSED_AS_C_REFUSES.values(), ids=REFUSED_AS_C_REFUSES.keys()
)
def test_text_numbers_the_c_unpickler_refuses_are_refused(data, says):
    with pytest.raises((ValueError, OverflowError, pickle.UnpicklingError)):
        pickle.loads(data)
    with pytest.raises(PickleError) as e:
        run(data)
    assert f"pickle {e.value}" == says


def test_the_digit_limit_counts_digits_and_spares_hex():
    # int() counts digits, not underscores; and a power-of-two base has no limit at all
    spaced = b"L" + b"1_" * 4299 + b"1\n."  # 4,300 digits in 8,599 characters
    hexed = b"I0x" + b"f" * 5000 + b"\n."
    assert run(spaced) == pickle.loads(spaced)
    assert run(hexed) == pickle.loads(hexed) == 16**5000 - 1


_NUMBER_TEXT = st.lists(
    st.sampled_from(list(b"0123456789+-_.xXoObeEinfaty \t\v\f\r\0L")), max_size=12
).map(bytes)


def _number_pickles(opcode: bytes, text: bytes, key: bytes) -> bytes:
    if opcode == b"g":  # a list stored under key 1 and popped, fetched by the text key
        return b"]p1\n0g" + text + b"\n."
    if opcode == b"p":  # stored under the text key, fetched by the binary key
        return b"]p" + text + b"\nh" + key + b"\x86."
    return opcode + text + b"\n."


@settings(max_examples=2000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.sampled_from([b"I", b"L", b"F", b"g", b"p"]), _NUMBER_TEXT, st.binary(min_size=1, max_size=1)
)
def test_any_number_text_reads_or_fails_as_in_the_c_unpickler(opcode, text, key):
    data = _number_pickles(opcode, text, key)
    try:
        want = pickle.loads(data)
    except (ValueError, OverflowError, pickle.UnpicklingError):
        with pytest.raises(PickleError):
            run(data)
    else:
        assert same(run(data), want)


def test_a_checkpoint_whose_shape_and_offset_are_text_shows_the_tensor_torch_loads(tmp_path):
    """End to end: offset ``I0x2`` (hex) and shape ``I010`` (octal: 8 elements, not 10) give the
    view ``torch.load(weights_only=False)`` gives, elements 2 to 9."""
    torch = pytest.importorskip("torch")
    import numpy as np

    from inspector.core.opening import open_checkpoint

    from .pickle_craft import Raw, dumps, storage, v2, zip_file

    values = np.arange(12, dtype=np.float32)
    stor = storage("FloatStorage", "0", 12)
    pkl = dumps({"w": v2(stor, Raw(b"I0x2\n"), (Raw(b"I010\n"),), (Raw(b"I1\n"),))})
    path = tmp_path / "text_numbers.pt"
    path.write_bytes(zip_file(pkl, {"0": values.tobytes()}))
    want = torch.load(path, weights_only=False)["w"]
    with open_checkpoint(path) as ckpt:
        (t,) = ckpt.tensors
        assert t.shape == tuple(want.shape) == (8,)
        got = np.ascontiguousarray(ckpt.view(t))
    assert got.tobytes() == want.numpy().tobytes() == values[2:10].tobytes()
