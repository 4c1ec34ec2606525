#!/usr/bin/env python3
"""A calibrated model without its layout pairs' own reorder lines, for an A/B of them.

    python3 bench/reorder_lines_off.py IN.msgpack OUT.msgpack

Renames the six keys of the calibration's own reorder lines (docs/model-format.md: line_a, line_b,
pairs_fittable, pairs_own, loo_scaled, loo_line) so that convsel skips them as unknown keys: OUT is
IN with every other price as it was (the factors and the slot's fixed cost included), so that
`bench/compare_models.sh -m IN -m OUT` isolates what the own lines change. A file with more than
one calibration, or none with own lines, is refused.
"""
import sys

KEYS = (b"line_a", b"line_b", b"pairs_fittable", b"pairs_own", b"loo_scaled", b"loo_line")


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: python3 bench/reorder_lines_off.py IN.msgpack OUT.msgpack")
    with open(sys.argv[1], "rb") as f:
        data = f.read()
    for key in KEYS:
        # msgpack writes a short string as its length byte 0xa0 + n, then the bytes
        packed = bytes([0xA0 + len(key)]) + key
        if data.count(packed) != 1:
            sys.exit(f"reorder_lines_off: {sys.argv[1]}: key {key.decode()} found {data.count(packed)} times, not once")
        data = data.replace(packed, bytes([0xA0 + len(key)]) + b"x" + key[1:])
    with open(sys.argv[2], "wb") as f:
        f.write(data)


if __name__ == "__main__":
    main()
