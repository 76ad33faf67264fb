"""Pictures of a run made smaller or put together: thumbnails for saved notebooks, and a GIF of the steps.

A step's screenshot is kept full size in the run folder; a notebook needs a smaller picture that still reads (a
record shows pictures 480 px wide: a 1280 px page's names, prices and buttons), and sharing a run wants one
animated picture. Pillow does the decoding and encoding.
"""

from __future__ import annotations

import io
from collections.abc import Iterable
from pathlib import Path

THUMBNAIL_WIDTH = 800
"""Wider than the 480 px a record shows, so the page's text stays sharp on a high-density screen too. A demo-shop
step's picture is about 14.6 KB (19.4 KB as base64 in the notebook); at 480 px and quality 70, it was 7.1 KB but
shown 240 px wide, where the page's text could not be read."""

THUMBNAIL_QUALITY = 65
"""JPEG quality: the page's text stays clean at 800 px, a photo-free page compresses well."""


def thumbnail(picture: bytes, width: int = THUMBNAIL_WIDTH, quality: int = THUMBNAIL_QUALITY) -> bytes:
    """A JPEG at most ``width`` pixels wide; the picture unchanged when it is smaller already or unreadable
    (a thumbnail is a convenience: a broken one must not lose the record)."""
    from PIL import Image, UnidentifiedImageError

    try:
        with Image.open(io.BytesIO(picture)) as image:
            if image.width <= width:
                return picture
            height = max(1, round(image.height * width / image.width))
            small = image.convert("RGB").resize((width, height), Image.Resampling.LANCZOS)
    except (UnidentifiedImageError, OSError, ValueError):
        return picture
    out = io.BytesIO()
    small.save(out, format="JPEG", quality=quality, optimize=True)
    data = out.getvalue()
    return data if len(data) < len(picture) else picture


def gif(pictures: Iterable[bytes], path: str | Path | None = None, *, width: int = 640, seconds: float = 1.0) -> bytes:
    """An animated GIF of ``pictures`` (each shown ``seconds``, at most ``width`` px wide, looping); written to
    ``path`` too when given. Unreadable pictures are skipped; no readable picture is a ``ValueError``."""
    from PIL import Image, UnidentifiedImageError

    frames = []
    for picture in pictures:
        try:
            with Image.open(io.BytesIO(picture)) as image:
                rgb = image.convert("RGB")
        except (UnidentifiedImageError, OSError, ValueError):
            continue
        if rgb.width > width:
            rgb = rgb.resize((width, max(1, round(rgb.height * width / rgb.width))), Image.Resampling.LANCZOS)
        frames.append(rgb.convert("P", palette=Image.Palette.ADAPTIVE))
    if not frames:
        raise ValueError("No screenshots to make a GIF of (the run kept none: screenshots=False, or not loaded).")
    out = io.BytesIO()
    frames[0].save(out, format="GIF", save_all=True, append_images=frames[1:], duration=int(seconds * 1000), loop=0)
    data = out.getvalue()
    if path is not None:
        Path(path).write_bytes(data)
    return data
