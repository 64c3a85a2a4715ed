"""Adds tiles of different shapes when a and b differ: an error the front end locates (line 11)."""
from neuronxcc import nki
import neuronxcc.nki.language as nl


@nki.jit
def add_mismatched(a, b):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    ta = nl.load(a)
    tb = nl.load(b)
    nl.store(out, value=ta + tb)
    return out
