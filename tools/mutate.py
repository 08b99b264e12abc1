"""mutmut with one of the mutation sets of pyproject.toml (``make mutate MUTATE_SET=…``).

mutmut reads a single configuration, ``[tool.mutmut]``: the core set. Each table
``[tool.mutmut.sets.NAME]`` replaces some of its keys (what is mutated, which tests run and with
which pytest arguments), so the window's job runner and controllers can run with pytest-qt while
the core set runs without it. ``--only`` (globs of files to mutate) and ``--tests`` (test paths)
narrow a set further, e.g. to one module and its tests.

    python tools/mutate.py --set gui -- run --max-children 1
    python tools/mutate.py --set gui -- results
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

try:
    from tomllib import loads
except ModuleNotFoundError:  # Python 3.10: mutmut depends on toml there
    from toml import loads


def set_keys(pyproject: Path, name: str, only: list[str], tests: list[str]) -> dict[str, Any]:
    """[tool.mutmut] with the keys of set ``name`` (and the narrowing options) put over it."""
    base = loads(pyproject.read_text("utf-8"))["tool"]["mutmut"]
    sets = base.pop("sets", {})
    if name != "core" and name not in sets:
        raise SystemExit(f"no mutation set {name!r} in {pyproject} (sets: core, {', '.join(sets)})")
    keys = {**base, **sets.get(name, {})}
    if only:
        keys["only_mutate"] = only
    if tests:
        keys["pytest_add_cli_args_test_selection"] = tests
    return keys


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--set", default="core", help="[tool.mutmut.sets.SET], or core")
    parser.add_argument("--only", action="append", default=[], help="glob of files to mutate")
    parser.add_argument("--tests", action="append", default=[], help="test path to run")
    parser.add_argument("mutmut_args", nargs=argparse.REMAINDER, help="-- then mutmut's")
    args = parser.parse_args(argv)
    keys = set_keys(Path("pyproject.toml"), args.set, args.only, args.tests)

    from mutmut import configuration
    from mutmut.__main__ import cli

    # mutmut reads its keys through _config_reader() (pinned: mutmut>=3.8,<4); each forked
    # worker inherits the configuration loaded here
    configuration._config_reader = lambda: lambda key, default: keys.get(key, default)
    configuration.reset_config()
    rest = args.mutmut_args[1:] if args.mutmut_args[:1] == ["--"] else args.mutmut_args
    cli(rest, prog_name="mutmut")


if __name__ == "__main__":
    main(sys.argv[1:])
