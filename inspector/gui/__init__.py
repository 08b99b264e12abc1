"""Qt views over the Qt-free core: main window, tensor table, plots, workers.

Nothing in ``inspector.core`` imports this package; everything here adapts core objects.
"""
