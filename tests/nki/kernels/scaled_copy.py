"""out = a * scale, in column tiles of width T (a kwarg): a kernel whose lowering depends on a
Python argument, for sweeps over --kwarg."""
from neuronxcc import nki
import neuronxcc.nki.language as nl


@nki.jit
def scaled_copy(a, T=1, scale=2.0):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    width = a.shape[1] // T
    for j in nl.affine_range(T):
        tile = nl.load(a[:, j * width:(j + 1) * width])
        nl.store(out[:, j * width:(j + 1) * width], value=nl.multiply(tile, scale))
    return out
