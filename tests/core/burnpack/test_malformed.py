"""Every malformed Burnpack file is refused with its own one line, fast and in bounded memory."""

from __future__ import annotations

import pytest

from inspector.core.errors import CheckpointError
from inspector.core.opening import open_checkpoint
from tests.malformed.burnpack_corpus import CASES
from tests.malformed.refusal import refusal


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_refused_with_one_line(tmp_path, case):
    path = tmp_path / "m.bpk"
    path.write_bytes(case.build())
    error, peak = refusal(path)
    assert (error.path, error.reason) == (str(path), case.reason)
    assert "\n" not in str(error)
    assert peak < 256 << 20  # a 100 MB metadata claim is checked before it is read


def test_a_burnpack_named_safetensors_is_named_for_what_it_is(tmp_path):
    import numpy as np

    from tests.burnpack_files import burnpack_bytes, plain

    path = tmp_path / "m.safetensors"
    path.write_bytes(burnpack_bytes([plain("w", np.ones(2, np.float32))]))
    with pytest.raises(CheckpointError) as e:
        open_checkpoint(path)
    assert e.value.reason == "this is a Burnpack file (burn's .bpk), not safetensors"
