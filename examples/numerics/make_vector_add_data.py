#!/usr/bin/env python3
"""Writes the inputs and the NumPy reference of the README's numerics example:
a.npy and b.npy, float32 [1, 128, 8] (vector_add.json with T=1, F=8), and out_expected.npy =
a + b, into the directory of this script (or the one given).

Usage: python3 make_vector_add_data.py [DIR]"""

import os
import sys

import numpy as np


def main():
    folder = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))
    rng = np.random.default_rng(2026)
    a = rng.standard_normal((1, 128, 8)).astype(np.float32)
    b = rng.standard_normal((1, 128, 8)).astype(np.float32)
    np.save(os.path.join(folder, "a.npy"), a)
    np.save(os.path.join(folder, "b.npy"), b)
    np.save(os.path.join(folder, "out_expected.npy"), a + b)


if __name__ == "__main__":
    main()
