#!/usr/bin/env bash
# Render checkpoint-inspector.svg to every PNG kept next to it (run after editing the SVG).
#   resources/icons/checkpoint-inspector.png                      256 px: window icon (inspector.assets)
#   resources/icons/hicolor/NxN/apps/io.github.checkpoint_inspector.png   freedesktop icon theme sizes
# Needs rsvg-convert (apt-get install librsvg2-bin) or inkscape. Windows .ico / macOS .icns are made
# from these PNGs at build time by packaging/make_icons.py, so they are not kept in the repo.
set -euo pipefail
cd "$(dirname "$0")"
SVG=checkpoint-inspector.svg
APP_ID=io.github.checkpoint_inspector
SIZES=(16 24 32 48 64 128 256 512)

render() { # size out.png
    if command -v rsvg-convert >/dev/null; then
        rsvg-convert --width "$1" --height "$1" --keep-aspect-ratio "$SVG" --output "$2"
    elif command -v inkscape >/dev/null; then
        inkscape "$SVG" --export-type=png --export-width="$1" --export-height="$1" --export-filename="$2" >/dev/null
    else
        echo "render_icons.sh: need rsvg-convert (apt-get install librsvg2-bin) or inkscape" >&2
        exit 2
    fi
}

for s in "${SIZES[@]}"; do
    mkdir -p "hicolor/${s}x${s}/apps"
    render "$s" "hicolor/${s}x${s}/apps/${APP_ID}.png"
done
cp "hicolor/256x256/apps/${APP_ID}.png" checkpoint-inspector.png
echo "rendered ${SIZES[*]} px from $SVG"
