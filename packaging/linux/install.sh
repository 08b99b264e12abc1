#!/usr/bin/env bash
# Install checkpoint-inspector for the current user (no root): the app, its menu entry, its icon, and
# the application/x-safetensors file type, so a file manager offers "Open with Checkpoint Inspector".
#
#   install.sh [--bundle DIR | --exec PROGRAM] [--prefix DIR] [--set-default] [--dry-run]
#
#   --bundle DIR    copy this PyInstaller bundle (default: the bundle this script is in, or the
#                   repo's dist/checkpoint-inspector) to PREFIX/lib/checkpoint-inspector and link
#                   its executables into PREFIX/bin
#   --exec PROGRAM  only integrate an already installed program (e.g. from `pip install`); default
#                   when no bundle is found: checkpoint-inspector-gui or checkpoint-inspector on PATH
#   --prefix DIR    default: $HOME/.local (files go to PREFIX/{bin,lib,share})
#   --set-default   also make it the default application for .safetensors (xdg-mime default)
#   --dry-run       print what would be done, change nothing
#
# uninstall.sh (next to this script) removes everything again.
set -euo pipefail

APP_ID=io.github.checkpoint_inspector
NAME=checkpoint-inspector
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

PREFIX=${HOME:?HOME is not set}/.local
BUNDLE=
EXEC=
SET_DEFAULT=0
DRY=0
usage() { sed -n '2,17p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; }
while [ $# -gt 0 ]; do
    case $1 in
        --bundle) BUNDLE=${2:?--bundle needs a directory}; shift ;;
        --exec) EXEC=${2:?--exec needs a program}; shift ;;
        --prefix) PREFIX=${2:?--prefix needs a directory}; shift ;;
        --set-default) SET_DEFAULT=1 ;;
        --dry-run) DRY=1 ;;
        -h | --help) usage; exit 0 ;;
        *) echo "install.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
    esac
    shift
done
[ -n "$BUNDLE" ] && [ -n "$EXEC" ] && { echo "install.sh: give --bundle or --exec, not both" >&2; exit 2; }

run() { # print, and run unless --dry-run
    echo "+ $*"
    [ "$DRY" = 1 ] || "$@"
}
have() { command -v "$1" >/dev/null 2>&1; }

# --- where the pieces are: next to this script (in a bundle), or in the repo checkout ---------
find_first() { for p in "$@"; do [ -e "$p" ] && { echo "$p"; return 0; }; done; return 1; }
DESKTOP_SRC=$HERE/$APP_ID.desktop
MIME_SRC=$HERE/$APP_ID.xml
ICONS=$(find_first "$HERE/../_internal/resources/icons" "$HERE/../../resources/icons") || {
    echo "install.sh: cannot find the icons (resources/icons) near $HERE" >&2
    exit 2
}
ICONS=$(cd "$ICONS" && pwd)

if [ -z "$BUNDLE" ] && [ -z "$EXEC" ]; then
    if [ -x "$HERE/../$NAME" ]; then
        BUNDLE=$HERE/..                      # running from inside a built bundle
    elif [ -x "$HERE/../../dist/$NAME/$NAME" ]; then
        BUNDLE=$HERE/../../dist/$NAME        # running from the repo after `make package`
    elif have "$NAME-gui"; then
        EXEC=$(command -v "$NAME-gui")       # pip-installed: gui script
    elif have "$NAME"; then
        EXEC=$(command -v "$NAME")
    else
        echo "install.sh: nothing to install: build the bundle (make package) or pip install ." >&2
        echo "            first, or pass --bundle DIR / --exec PROGRAM" >&2
        exit 2
    fi
fi

BIN=$PREFIX/bin
LIB=$PREFIX/lib/$NAME
SHARE=$PREFIX/share
if [ -n "$BUNDLE" ]; then
    BUNDLE=$(cd "$BUNDLE" && pwd)
    [ -x "$BUNDLE/$NAME" ] || { echo "install.sh: $BUNDLE/$NAME is not an executable" >&2; exit 2; }
    EXEC=$LIB/$NAME
else
    case $EXEC in
        /*) ;;
        *) EXEC=$(command -v "$EXEC") || { echo "install.sh: $EXEC not found" >&2; exit 2; } ;;
    esac
    [ -x "$EXEC" ] || { echo "install.sh: $EXEC is not an executable" >&2; exit 2; }
fi

echo "Installing $NAME into $PREFIX (program: $EXEC)${BUNDLE:+ from $BUNDLE}"
[ "$DRY" = 1 ] && echo "(dry run: nothing is changed)"

# --- the program ------------------------------------------------------------------------------
if [ -n "$BUNDLE" ]; then
    if [ "$BUNDLE" != "$LIB" ]; then
        run rm -rf "$LIB"
        run mkdir -p "$LIB"
        run cp -a "$BUNDLE/." "$LIB/"
    fi
    run mkdir -p "$BIN"
    run ln -sfn "$LIB/$NAME" "$BIN/$NAME"
    [ -e "$BUNDLE/$NAME-gui" ] && run ln -sfn "$LIB/$NAME-gui" "$BIN/$NAME-gui"
fi

# --- icons: hicolor PNG sizes + scalable SVG -----------------------------------------------------
for dir in "$ICONS"/hicolor/*/apps; do
    size=$(basename "$(dirname "$dir")")
    run install -D -m 644 "$dir/$APP_ID.png" "$SHARE/icons/hicolor/$size/apps/$APP_ID.png"
done
run install -D -m 644 "$ICONS/$NAME.svg" "$SHARE/icons/hicolor/scalable/apps/$APP_ID.svg"

# --- menu entry, pointing at the absolute program path ------------------------------------------
# Desktop-entry Exec quoting: wrap in double quotes, escape " ` $ \ inside.
quoted=$(printf '%s' "$EXEC" | sed 's/[\\"`$]/\\&/g')
desktop=$SHARE/applications/$APP_ID.desktop
echo "+ write $desktop (Exec=\"$quoted\" %f)"
if [ "$DRY" = 0 ]; then
    mkdir -p "$SHARE/applications"
    sed -e "s|^TryExec=.*|TryExec=$EXEC|" -e "s|^Exec=.*|Exec=\"$quoted\" %f|" \
        "$DESKTOP_SRC" >"$desktop.tmp"
    chmod 644 "$desktop.tmp"
    mv "$desktop.tmp" "$desktop"
fi

# --- file type ------------------------------------------------------------------------------------
run install -D -m 644 "$MIME_SRC" "$SHARE/mime/packages/$APP_ID.xml"

# --- refresh the caches the desktop reads (each tool is optional) --------------------------------
if have update-mime-database; then
    run update-mime-database "$SHARE/mime"
else
    echo "note: update-mime-database not found (package shared-mime-info): .safetensors files" \
        "are recognised after the next login or once it runs"
fi
have update-desktop-database && run update-desktop-database -q "$SHARE/applications"
have gtk-update-icon-cache && [ -f "$SHARE/icons/hicolor/index.theme" ] &&
    run gtk-update-icon-cache -q -t -f "$SHARE/icons/hicolor"
if [ "$SET_DEFAULT" = 1 ]; then
    if have xdg-mime; then
        run xdg-mime default "$APP_ID.desktop" application/x-safetensors
        run xdg-mime default "$APP_ID.desktop" application/x-safetensors-index
    else
        echo "note: xdg-mime not found (package xdg-utils): --set-default skipped"
    fi
fi

echo "Done. 'Checkpoint Inspector' is in the application menu; .safetensors files offer it under"
uninstaller=$HERE/uninstall.sh
[ -n "$BUNDLE" ] && uninstaller=$LIB/linux/uninstall.sh
[ -e "$uninstaller" ] || [ "$DRY" = 1 ] || uninstaller=$HERE/uninstall.sh
echo "'Open With'. Remove with: $uninstaller --prefix $PREFIX"
case ":$PATH:" in
    *":$BIN:"*) ;;
    *) [ -n "$BUNDLE" ] && echo "note: $BIN is not on PATH; add it to run '$NAME' from a terminal" ;;
esac
exit 0
