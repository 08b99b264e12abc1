"""lint's findings in the window's language: the templates the window marks for translation are
exactly the ones lint writes, and in zh_CN a finding reads in Chinese with its fields filled in."""

from __future__ import annotations

import numpy as np
from safetensors.numpy import save_file

from inspector.core.model_folder.findings import TEMPLATES, Severity, finding
from inspector.core.model_folder.lint import lint_path
from inspector.gui.lint_texts import LINT_TEMPLATES, finding_text, severity_text


def test_the_window_marks_every_template_lint_writes():
    assert sorted(LINT_TEMPLATES) == sorted(TEMPLATES.values())


def test_every_finding_lint_makes_has_a_template_but_an_error_s_reason(tmp_path):
    (tmp_path / "config.json").write_text('{"torch_dtype": "bfloat16"}')
    save_file(
        {"w": np.zeros(4, np.float32), "b": np.zeros(4, np.float32)},
        str(tmp_path / "model.safetensors"),
    )
    (tmp_path / "pytorch_model.bin").write_bytes(b"\x80\x02}.")
    found = lint_path(str(tmp_path))
    assert {f.code for f in found} == {"config_dtype", "pickle_twin"}
    for f in found:
        assert f.template in TEMPLATES.values() and f.message == f.template.format(**f.fields)


def test_a_finding_reads_in_english_without_a_translator(qapp):
    f = finding(Severity.WARNING, "nan_inf", "nan_inf", ["a"], n=12345)
    assert finding_text(f) == f.message == "Tensors that hold NaN or ±inf values: 12,345"
    assert severity_text(Severity.WARNING) == "warning"


def test_a_finding_reads_in_chinese_in_zh_cn(qapp, zh_cn):
    f = finding(Severity.WARNING, "nan_inf", "nan_inf", ["a"], n=12345)
    assert finding_text(f) == "含有 NaN 或 ±inf 值的张量：12,345"
    assert severity_text(Severity.ERROR) == "错误"
    twin = finding(Severity.WARNING, "pickle_twin", "pickle_twin", name="a.bin", weights="b")
    assert finding_text(twin).startswith("a.bin 与 b 并存")
