"""Every malformed GGUF header is refused with its own one line, in bounded memory."""

from __future__ import annotations

import pytest

from tests.malformed.gguf_corpus import CASES
from tests.malformed.refusal import refusal


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_refused_with_one_line(tmp_path, case):
    path = tmp_path / "m.gguf"
    path.write_bytes(case.build())
    error, peak = refusal(path)
    assert (error.path, error.reason) == (str(path), case.reason)
    assert "\n" not in str(error)
    assert peak < 64 << 20  # no allocation from a count the file claims
