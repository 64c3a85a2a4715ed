"""Element-wise a + b over [N, F] float32 tensors, 128 rows per tile (classic neuronxcc.nki API).

Used by the tests and the README: `trnsim run tests/nki/kernels/vector_add.py::vector_add
--input a=float32[256,512] --input b=float32[256,512]`.
"""
from neuronxcc import nki
import neuronxcc.nki.language as nl


@nki.jit
def vector_add(a, b):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    for i in nl.affine_range(a.shape[0] // 128):
        ta = nl.load(a[i * 128:(i + 1) * 128, :])
        tb = nl.load(b[i * 128:(i + 1) * 128, :])
        nl.store(out[i * 128:(i + 1) * 128, :], value=ta + tb)
    return out
