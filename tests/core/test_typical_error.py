"""The typical relative error beside the largest one (issue 29 item 15): a randn F32 file cast to
F16 reads a max relative error of 1 in the tensors where one of its values underflowed, while its
values typically lost ~2e-4; ``mean_rel_err`` says the latter (``rms_rel_err`` beside it),
``underflow`` counts the former."""

from __future__ import annotations

import json
import math

import numpy as np
from safetensors.numpy import load_file, save_file

from inspector.cli.dispatch import main

N_TENSORS, NUMEL = 16, 500_000


def test_randn_f32_to_f16_typical_error_beside_the_underflows(tmp_path, capsys):
    rng = np.random.default_rng(3)
    src = {  # a weight's init scale: about one value in 840,000 is below F16's half-subnormal
        f"model.layers.{i}.w": (rng.standard_normal(NUMEL) * 0.02).astype(np.float32)
        for i in range(N_TENSORS)
    }
    save_file(src, str(tmp_path / "randn.safetensors"))
    out, report = tmp_path / "f16.safetensors", tmp_path / "report.json"
    code = main(["cast", str(tmp_path / "randn.safetensors"), "--target", "F16",
                 "-o", str(out), "--report", str(report)])  # fmt: skip
    assert code == 0
    rows = {r["name"]: r for r in json.loads(report.read_text())["tensors"]}
    saved = load_file(str(out))
    with_underflow = 0
    for name, a32 in src.items():
        row, a = rows[name], a32.astype(np.float64)
        b = saved[name].astype(np.float64)
        underflows = int(np.count_nonzero((b == 0) & (a != 0)))
        assert (row["underflow"], row["overflow"]) == (underflows, 0)
        rel = np.abs(b - a)[a != 0] / np.abs(a[a != 0])
        assert row["max_rel_err"] == rel.max()
        typical = rel[rel != 1.0]  # the underflows left out
        assert math.isclose(row["mean_rel_err"], np.mean(typical), rel_tol=1e-5)
        assert math.isclose(row["rms_rel_err"], np.sqrt(np.mean(typical**2)), rel_tol=1e-5)
        assert 1.7e-4 < row["mean_rel_err"] < 1.9e-4  # F16's 11 bits
        # one value that lands among the subnormals, off by a good part of itself, can pull a
        # tensor's RMS up to ~2e-3: the mean is the typical figure
        assert 3e-4 < row["rms_rel_err"] < 2e-3
        if underflows:
            with_underflow += 1
            assert row["max_rel_err"] == 1.0
        else:
            assert row["max_rel_err"] < 1.0  # a subnormal F16 value can be off by half
    assert 3 <= with_underflow <= N_TENSORS - 3  # both kinds are in the file
    printed = capsys.readouterr().out
    assert "non-zero values became zero" in printed
    assert (
        f"relative error per tensor: typical (mean) 0.00018, largest 1 (1 in {with_underflow} "
        "tensors: a value became zero)" in printed
    )
