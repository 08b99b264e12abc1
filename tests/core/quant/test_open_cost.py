"""Opening a quantized folder reads what opening any folder reads (header, config.json): the
recognition works from names, dtypes and shapes, never from tensor data."""

from __future__ import annotations

import json

import ml_dtypes
import numpy as np
import pytest

from inspector.core.dtypes import DTYPES
from inspector.core.model_folder.config import read_model_config
from inspector.core.opening import open_checkpoint
from inspector.core.quant.recognise import recognise
from inspector.core.save.writer import save_arrays


def _bytes_read() -> int:
    with open("/proc/self/io") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("rchar:"))


@pytest.mark.skipif(not __import__("os").path.exists("/proc/self/io"), reason="Linux /proc")
def test_recognising_a_64_mib_fp8_folder_reads_no_tensor_data(tmp_path):
    rows, cols = 4096, 8192
    save_arrays(
        tmp_path / "model.safetensors",
        [
            ("m.weight", DTYPES["F8_E4M3"], np.zeros((rows, cols), ml_dtypes.float8_e4m3fn)),
            ("n.weight", DTYPES["F8_E4M3"], np.zeros((rows, cols), ml_dtypes.float8_e4m3fn)),
            ("m.weight_scale_inv", DTYPES["F32"], np.ones((32, 64), np.float32)),
            ("n.weight_scale_inv", DTYPES["F32"], np.ones((32, 64), np.float32)),
        ],
    )
    qc = {"quant_method": "fp8", "weight_block_size": [128, 128]}
    (tmp_path / "config.json").write_text(json.dumps({"quantization_config": qc}))
    before = _bytes_read()
    with open_checkpoint(str(tmp_path)) as ckpt:
        layout = recognise(ckpt.tensors, read_model_config(str(tmp_path)).quant_config)
    read = _bytes_read() - before
    assert layout is not None and len(layout.weights) == 2 and layout.cast_refusal() is None
    assert read < 256 << 10  # the header and config.json, not the 64 MiB of codes
