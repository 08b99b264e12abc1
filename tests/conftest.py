import os

# Before any QApplication exists: every test runs headless.
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")


def pytest_addoption(parser):
    parser.addoption("--run-slow", action="store_true", default=False, help="run tests marked slow")


def pytest_collection_modifyitems(config, items):
    if config.getoption("--run-slow"):
        return
    import pytest

    skip = pytest.mark.skip(reason="slow: run with --run-slow (make package-test)")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip)


def pytest_configure(config):
    """A run started in the background by a non-interactive shell (``make mutate &``) inherits
    SIGINT ignored, and Python then installs no KeyboardInterrupt handler: the tests that press
    Ctrl-C need the disposition an interactive run has, so the suite sets it itself."""
    import signal

    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)
