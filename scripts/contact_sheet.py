#!/usr/bin/env python3
"""A contact sheet of chosen frames of a video (OpenCV from .venv), each labelled with its
frame number: how docs/images/sample_contact_sheet.jpg is made from `corrtrack track --video`.

  .venv/bin/python scripts/contact_sheet.py out.mp4 sheet.jpg --frames 0,30,60,108,119
"""
import argparse
import sys

import cv2
import numpy as np


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("video")
    ap.add_argument("out", help="image to write (.jpg or .png)")
    ap.add_argument("--frames", required=True, help="comma-separated frame numbers (0-based)")
    ap.add_argument("--columns", type=int, default=4)
    ap.add_argument("--scale", type=float, default=0.5, help="each frame's scale (default 0.5)")
    ap.add_argument("--crop", help="x,y,w,h of each frame to keep before scaling")
    ap.add_argument("--quality", type=int, default=85, help="JPEG quality")
    a = ap.parse_args()
    try:
        wanted = sorted({int(f) for f in a.frames.split(",")})
        crop = [int(v) for v in a.crop.split(",")] if a.crop else None
    except ValueError:
        print("contact_sheet: --frames and --crop take integers", file=sys.stderr)
        return 2
    if a.columns < 1 or a.scale <= 0 or (crop and len(crop) != 4):
        print("contact_sheet: --columns >= 1, --scale > 0, --crop x,y,w,h", file=sys.stderr)
        return 2
    cap = cv2.VideoCapture(a.video)
    if not cap.isOpened():
        print(f"contact_sheet: cannot open {a.video}", file=sys.stderr)
        return 1
    tiles, index = {}, 0
    while len(tiles) < len(wanted):
        ok, frame = cap.read()
        if not ok:
            break
        if index in wanted:
            if crop:
                x, y, w, h = crop
                frame = frame[y : y + h, x : x + w]
            tile = cv2.resize(frame, None, fx=a.scale, fy=a.scale, interpolation=cv2.INTER_AREA)
            cv2.putText(tile, f"frame {index}", (6, 20), cv2.FONT_HERSHEY_SIMPLEX, 0.55, (0, 0, 0), 3, cv2.LINE_AA)
            cv2.putText(tile, f"frame {index}", (6, 20), cv2.FONT_HERSHEY_SIMPLEX, 0.55, (0, 255, 255), 1, cv2.LINE_AA)
            tiles[index] = tile
        index += 1
    missing = [f for f in wanted if f not in tiles]
    if missing:
        print(f"contact_sheet: {a.video} has {index} frames; missing {missing}", file=sys.stderr)
        return 1
    row_tiles = [tiles[f] for f in wanted]
    blank = np.zeros_like(row_tiles[0])
    while len(row_tiles) % a.columns:
        row_tiles.append(blank)
    rows = [np.hstack(row_tiles[i : i + a.columns]) for i in range(0, len(row_tiles), a.columns)]
    params = [cv2.IMWRITE_JPEG_QUALITY, a.quality] if a.out.lower().endswith((".jpg", ".jpeg")) else []
    if not cv2.imwrite(a.out, np.vstack(rows), params):
        print(f"contact_sheet: cannot write {a.out}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
