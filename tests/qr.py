"""Reads a QR code the way a phone's camera does, from the inline SVG a page draws."""

from __future__ import annotations

import re

import zxingcpp

SCALE = 4  # pixels per module: zxing wants more than one


def qr_text(svg: str) -> str:
    """The text of an SVG QR code made by ``qrcode.image.svg.SvgPathImage``, decoded."""
    size = int(re.search(r'viewBox="0 0 (\d+) (\d+)"', svg).group(1))
    dark = {(int(x), int(y)) for x, y in re.findall(r"M(\d+),(\d+)H", svg)}
    width = size * SCALE
    pixels = bytearray(b"\xff" * width * width)
    for x, y in dark:
        for row in range(y * SCALE, (y + 1) * SCALE):
            start = row * width + x * SCALE
            pixels[start : start + SCALE] = b"\x00" * SCALE
    image = memoryview(bytes(pixels)).cast("B", (width, width))
    (barcode,) = zxingcpp.read_barcodes(image, formats=zxingcpp.BarcodeFormat.QRCode)
    return barcode.text
