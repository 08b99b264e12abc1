"""``checkpoint-inspector scan PATH [--json]``: what each pickle imports, nothing executed.

Exit 0: only tensor rebuilds and plain containers (or safetensors: no code at all); 1: something
else is imported; 2: unreadable. The same convention as picklescan.
"""

from __future__ import annotations

import argparse
import os
import sys

from .output import counted, printable


def cmd_scan(args: argparse.Namespace) -> int:
    from ..core.formats.torch_pickle import ImportVerdict
    from ..core.json_output import json_text
    from ..core.scan.walk import DATA_ONLY, NOT_CHECKPOINTS, ScanStatus, scan_path

    report = scan_path(args.path)
    code = {ScanStatus.CLEAN: 0, ScanStatus.REFUSED: 1, ScanStatus.UNREADABLE: 2}[report.status]
    if args.json:
        doc = {
            "status": report.status.value,
            "files": [
                {
                    "path": f.path,
                    "format": f.format,
                    "status": f.status.value,
                    "error": f.error,
                    "findings": f.findings,
                    "imports": [
                        {"name": i.name, "verdict": i.verdict.value, "count": i.count}
                        for i in f.imports
                    ],
                }
                for f in report.files
            ],
        }
        sys.stdout.write(json_text(doc) + "\n")
        return code
    lines = []
    others = 0
    for f in report.files:
        if f.format in NOT_CHECKPOINTS and f.status is ScanStatus.CLEAN:
            others += 1  # a README, a tokenizer: counted, not listed one by one
            continue
        shown = os.path.relpath(f.path, report.root) if report.root else os.path.basename(f.path)
        lines.append(f"{printable(shown)}  ({f.format})")
        if not f.imports and f.error is None and not f.findings:
            lines.append("  data only: no code" if f.format in DATA_ONLY else "  imports nothing")
        width = max([10, *(len(printable(i.name)) for i in f.imports)])
        for i in f.imports:
            mark = "REFUSED" if i.verdict is ImportVerdict.REFUSED else i.verdict.value
            lines.append(f"  {printable(i.name):<{width}}  {mark:<11} ×{i.count}")
        for finding in f.findings:
            lines.append(f"  FINDING: {printable(finding)}")
        if f.error:
            lines.append(f"  unreadable: {printable(f.error)}")
    if others:
        lines.append(f"{counted(others, 'other file')}: not checkpoints, nothing torch would run")
    refused = sorted(
        {i.name for f in report.files for i in f.imports if i.verdict is ImportVerdict.REFUSED}
    )
    findings = sum(len(f.findings) for f in report.files)
    if findings:
        lines.append(
            f"{counted(findings, 'finding')}: torch would read these files otherwise than this tool, or "
            "run code through them; nothing was executed"
        )
    if refused:
        lines.append(
            f"{counted(len(refused), 'import')} outside the allowlist: {printable(', '.join(refused))}; "
            "nothing was executed"
        )
    if report.status is ScanStatus.CLEAN:
        pickles = [f for f in report.files if f.format not in (*NOT_CHECKPOINTS, *DATA_ONLY)]
        lines.append(
            "only tensor rebuilds and plain containers: safe to read"
            if pickles
            else "no pickle: nothing in it can run code"
        )
    sys.stdout.write("\n".join(lines) + "\n")
    return code
