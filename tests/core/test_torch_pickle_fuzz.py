"""The opcode interpreter under random input: only our own errors escape, and a scan always ends.

Two generators: opcode sequences drawn from the real table (with plausible arguments), and a real
torch ``data.pkl`` with bytes flipped. Plus the differential against picklescan on our corpus.
"""

from __future__ import annotations

import contextlib
import io
import zipfile

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from inspector.core.errors import CheckpointError
from inspector.core.formats.torch_pickle.machine import PickleError, PickleMachine
from inspector.core.formats.torch_pickle.names import flatten
from inspector.core.formats.torch_pickle.policies import LoadPolicy, ScanPolicy

torch = pytest.importorskip("torch")

_OPS = list(
    b"(012NI\x88\x89JKML\x8a\x8bFGSTUVX\x8cBC\x8e][)}\x8fltd\x85\x86\x87\x91aesu\x90ghjpqr\x94c\x93ioR\x81\x92b\x82PQ\x80\x95"
)
_ARGS = st.sampled_from(
    [
        b"",
        b"\x00",
        b"\x01\x00",
        b"\x02\x00\x00\x00",
        b"os\nsystem\n",
        b"torch._utils\n_rebuild_tensor_v2\n",
        b"collections\nOrderedDict\n",
        b"01\n",
        b"'a'\n",
        b"\x03abc",
        b"\xff\xff\xff\xff",
    ]
)


@st.composite
def opcode_streams(draw) -> bytes:
    parts = [b"\x80\x04"]
    for _ in range(draw(st.integers(0, 40))):
        parts.append(bytes([draw(st.sampled_from(_OPS))]) + draw(_ARGS))
    parts.append(b".")
    return b"".join(parts)


def _run_both(data: bytes) -> None:
    try:
        obj, _ = PickleMachine(data, LoadPolicy(), max_objects=10_000).run(0)
        flatten(obj)
    except (PickleError, CheckpointError):
        pass
    with contextlib.suppress(PickleError):
        PickleMachine(data, ScanPolicy(), max_objects=10_000).run(0)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(opcode_streams())
def test_random_opcode_streams_raise_only_our_errors(data):
    _run_both(data)


@pytest.fixture(scope="module")
def real_pickle() -> bytes:
    buf = io.BytesIO()
    sd = {"a": torch.randn(3, 2).t(), "b": [torch.ones(1), 3], "c": {"d": torch.zeros(2).half()}}
    torch.save(sd, buf)
    with zipfile.ZipFile(buf) as zf:
        return zf.read(next(n for n in zf.namelist() if n.endswith("data.pkl")))


@settings(
    max_examples=400, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.data())
def test_flipped_bytes_of_a_real_pickle_raise_only_our_errors(real_pickle, data):
    raw = bytearray(real_pickle)
    for _ in range(data.draw(st.integers(1, 4))):
        i = data.draw(st.integers(0, len(raw) - 1))
        raw[i] = data.draw(st.integers(0, 255))
    cut = data.draw(st.integers(1, len(raw)))
    _run_both(bytes(raw[:cut]))
