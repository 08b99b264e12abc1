#!/usr/bin/env bash
# Undo install.sh: remove the bundle copy, links, menu entry, icons and file type from PREFIX.
#
#   uninstall.sh [--prefix DIR] [--dry-run]      (default prefix: $HOME/.local)
set -euo pipefail

APP_ID=io.github.checkpoint_inspector
NAME=checkpoint-inspector
PREFIX=${HOME:?HOME is not set}/.local
DRY=0
while [ $# -gt 0 ]; do
    case $1 in
        --prefix) PREFIX=${2:?--prefix needs a directory}; shift ;;
        --dry-run) DRY=1 ;;
        -h | --help) sed -n '2,4p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "uninstall.sh: unknown option $1" >&2; exit 2 ;;
    esac
    shift
done
run() { echo "+ $*"; [ "$DRY" = 1 ] || "$@"; }
have() { command -v "$1" >/dev/null 2>&1; }
SHARE=$PREFIX/share

# Links in bin/ only if they point into our lib/ copy (a pip-installed script there is not ours).
for exe in "$NAME" "$NAME-gui"; do
    link=$PREFIX/bin/$exe
    if [ -L "$link" ] && [ "$(readlink "$link")" = "$PREFIX/lib/$NAME/$exe" ]; then
        run rm -f "$link"
    fi
done
[ -d "$PREFIX/lib/$NAME" ] && run rm -rf "$PREFIX/lib/$NAME"
for f in "$SHARE"/icons/hicolor/*/apps/"$APP_ID".png "$SHARE/icons/hicolor/scalable/apps/$APP_ID.svg" \
    "$SHARE/applications/$APP_ID.desktop" "$SHARE/mime/packages/$APP_ID.xml"; do
    [ -e "$f" ] && run rm -f "$f"
done
have update-mime-database && [ -d "$SHARE/mime/packages" ] && run update-mime-database "$SHARE/mime"
have update-desktop-database && [ -d "$SHARE/applications" ] &&
    run update-desktop-database -q "$SHARE/applications"
have gtk-update-icon-cache && [ -f "$SHARE/icons/hicolor/index.theme" ] &&
    run gtk-update-icon-cache -q -t -f "$SHARE/icons/hicolor"
echo "Removed $NAME from $PREFIX."
exit 0
