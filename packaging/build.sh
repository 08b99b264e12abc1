#!/usr/bin/env bash
# Build the one-folder bundle dist/checkpoint-inspector/ with PyInstaller (`make package` runs this).
#
#   packaging/build.sh [--clean]          PYTHON=/path/to/python to use another interpreter
#
# Result (Linux):
#   dist/checkpoint-inspector/checkpoint-inspector       CLI + window
#   dist/checkpoint-inspector/checkpoint-inspector-gui   windowed twin (matters on Windows/macOS)
#   dist/checkpoint-inspector/linux/install.sh           desktop integration into ~/.local
# Windows: checkpoint-inspector-gui.exe has no console; install.ps1 / uninstall.ps1 beside it
# (per-user: the app, a Start menu entry, "Open with" for every format it reads, an uninstall entry).
# macOS additionally: "dist/Checkpoint Inspector.app".
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
PY=${PYTHON:-$ROOT/.venv/bin/python}
NAME=checkpoint-inspector
DIST=$ROOT/dist
BUNDLE=$DIST/$NAME
CLEAN=()
for arg in "$@"; do
    case $arg in
        --clean) CLEAN=(--clean) ;;
        *) echo "build.sh: unknown option $arg" >&2; exit 2 ;;
    esac
done

if [ ! -x "$PY" ] && ! command -v "$PY" >/dev/null; then
    echo "build.sh: no Python at $PY (run 'make install' or set PYTHON=...)" >&2
    exit 2
fi
if ! "$PY" -c "import PyInstaller" 2>/dev/null; then
    echo "build.sh: installing PyInstaller into $("$PY" -c 'import sys; print(sys.prefix)')"
    "$PY" -m pip -q --disable-pip-version-check install "pyinstaller>=6.5"
fi
# The bundle is built from what this interpreter imports: the app and its runtime dependencies.
"$PY" -c "import inspector, PySide6.QtWidgets, pyqtgraph, numpy, ml_dtypes, safetensors" || {
    echo "build.sh: install the app first (make install, or pip install .)" >&2
    exit 2
}

start=$(date +%s)
"$PY" packaging/make_icons.py build/icons
# (The GTK3 theme plugin is dropped by the spec; its "libgtk-3 not found" warnings are noise.)
"$PY" -m PyInstaller --noconfirm "${CLEAN[@]}" --log-level WARN \
    --distpath "$DIST" --workpath build/pyinstaller \
    packaging/$NAME.spec 2>&1 | { grep -v "dependency of '.*/libqgtk3.so'" || true; }

# Some Python builds ship libpython and its extension modules with debug info (~25 MB): drop it.
# Only these, which come from the interpreter's own build; wheels' libraries are left untouched.
if [ "$(uname)" = Linux ] && command -v strip >/dev/null; then
    find "$BUNDLE/_internal" -maxdepth 1 -name 'libpython*.so*' -type f -exec strip --strip-debug {} +
    find "$BUNDLE/_internal" -path '*/lib-dynload/*.so' -type f -exec strip --strip-debug {} +
fi

# Linux desktop integration travels with the bundle: unpack anywhere, run linux/install.sh.
if [ "$(uname)" = Linux ]; then
    mkdir -p "$BUNDLE/linux"
    cp packaging/linux/install.sh packaging/linux/uninstall.sh \
        packaging/linux/io.github.checkpoint_inspector.desktop \
        packaging/linux/io.github.checkpoint_inspector.xml "$BUNDLE/linux/"
fi

case "$(uname)" in
    MINGW* | MSYS* | CYGWIN*) cp packaging/windows/install.ps1 packaging/windows/uninstall.ps1 "$BUNDLE/" ;;
esac

# Guard the size budget: nothing test-only may leak in.
leaked=$(find "$BUNDLE" -maxdepth 3 \( -name torch -o -name pytest -o -name hypothesis \
    -o -name 'libQt6Quick*' -o -name 'libQt6Qml*' -o -name tkinter \) -print)
if [ -n "$leaked" ]; then
    echo "build.sh: unwanted files in the bundle:" >&2
    echo "$leaked" >&2
    exit 1
fi

exe=$BUNDLE/$NAME
[ -x "$exe.exe" ] && exe=$exe.exe
"$exe" --version
echo "built $BUNDLE ($(du -sh "$BUNDLE" | cut -f1), $(($(date +%s) - start)) s)"
