"""Copies the 128-row block of `a` chosen by the launch grid (nl.program_id(0)): with --grid N the
kernel runs once per block."""
from neuronxcc import nki
import neuronxcc.nki.language as nl


@nki.jit
def row_blocks(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    i = nl.program_id(0)
    block = nl.load(a[i * 128:(i + 1) * 128, :])
    nl.store(out[i * 128:(i + 1) * 128, :], value=block)
    return out
