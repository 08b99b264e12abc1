import os

# Before any QApplication exists: every test runs headless.
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")


def pytest_addoption(parser):
    parser.addoption("--run-slow", action="store_true", default=False, help="run tests marked slow")
    parser.addoption(
        "--without",
        default="",
        metavar="NAMES",
        help="switch platform facilities off (comma list, or 'all'; inspector/core/platform/"
        "facilities.py names them) so the tests run their fallbacks; worker processes and CLI "
        "children inherit it",
    )


def pytest_collection_modifyitems(config, items):
    import pytest

    from inspector.core.platform.facilities import switched_off

    off = switched_off()
    for item in items:
        for mark in item.iter_markers("needs"):
            missing = sorted(set(mark.args) & off)
            if missing:
                item.add_marker(pytest.mark.skip(reason=f"tests {', '.join(missing)} itself"))
    if config.getoption("--run-slow"):
        return
    skip = pytest.mark.skip(reason="slow: run with --run-slow (make package-test)")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip)


def pytest_configure(config):
    config.addinivalue_line(
        "markers",
        "needs(*facilities): checks what a platform facility itself gives; "
        "skipped when --without switches one off (its fallback has tests of its own)",
    )
    without = config.getoption("--without")
    if without:
        import pytest

        from inspector.core.errors import CheckpointError
        from inspector.core.platform.facilities import WITHOUT_ENV, check_switches

        os.environ[WITHOUT_ENV] = without
        try:
            check_switches()  # an unknown name fails here, before any test runs
        except CheckpointError as e:
            raise pytest.UsageError(str(e)) from None


def pytest_runtest_setup(item):
    """Under mutmut (``MUTANT_UNDER_TEST`` set), empty inspector's function caches before each
    test: mutmut forks every mutant's run from a process whose tests already filled them with
    the original's answers, and a cached answer never calls the mutant (the cast's conversion
    tables, the quantizer's code tables)."""
    if not os.environ.get("MUTANT_UNDER_TEST"):
        return
    import sys

    for name, module in list(sys.modules.items()):
        if name == "inspector" or name.startswith("inspector."):
            for value in list(vars(module).values()):
                clear = getattr(value, "cache_clear", None)
                if callable(clear):
                    clear()
