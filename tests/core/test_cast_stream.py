"""How a cast moves its bytes: outputs small and large reach the file in the file's order."""

from __future__ import annotations

import numpy as np
from safetensors.numpy import load_file, save_file

from inspector.core.cast.job import cast_checkpoint
from inspector.core.dtypes import DTYPES
from inspector.core.opening import open_checkpoint
from inspector.core.progress import run_job


def test_a_large_output_after_small_ones_lands_after_them(tmp_path):
    """Small outputs wait in a batch (4 MiB); an output as large as that, queued behind them,
    must still be written after them: b's 4 MiB of F16 follows a's 10 bytes, and c follows b."""
    rng = np.random.default_rng(7)
    tensors = {
        "a": np.arange(5, dtype=np.float32),
        "b": rng.standard_normal(2 << 20).astype(np.float32),  # one 8 MiB chunk: 4 MiB out
        "c": np.array([0.5, -2.0], np.float32),
    }
    save_file(tensors, str(tmp_path / "m.safetensors"))
    out = tmp_path / "o.safetensors"
    with open_checkpoint(str(tmp_path / "m.safetensors")) as ckpt:
        run_job(cast_checkpoint(ckpt, DTYPES["F16"], str(out), report=False, processes=0))
    cast = load_file(str(out))
    for name, values in tensors.items():
        assert np.array_equal(cast[name], values.astype(np.float16)), name
