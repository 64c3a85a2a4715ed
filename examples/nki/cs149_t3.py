"""Calibration target T3: the small CS149 kernels profiled on Trainium2, written at the ISA level
with the standalone `nki` API (every instruction names its destination).

  trnsim run examples/nki/cs149_t3.py::vector_add -c trn2 \
      --input a=float32[256000] --input b=float32[256000]
  trnsim run examples/nki/cs149_t3.py::vector_add -c trn2 --kwarg free_dim=1000 \
      --input a=float32[256000] --input b=float32[256000]
  trnsim run examples/nki/cs149_t3.py::transpose -c trn2 --input x=float32[1024,1024]
"""

import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def vector_add(a, b, free_dim=2000):
    """out = a + b for N float32 values viewed as [N / (128 * free_dim), 128, free_dim] (128 rows
    as the assignment's PARTITION_DIM, or every partition of a smaller PE array)."""
    N = a.shape[0]
    P = min(nl.tile_size.pmax, 128)
    iters = N // (P * free_dim)
    out = nl.ndarray((N,), dtype=a.dtype, buffer=nl.shared_hbm)
    a3 = a.reshape((iters, P, free_dim))
    b3 = b.reshape((iters, P, free_dim))
    out3 = out.reshape((iters, P, free_dim))
    for i in range(iters):
        a_tile = nl.ndarray((P, free_dim), dtype=a.dtype, buffer=nl.sbuf)
        b_tile = nl.ndarray((P, free_dim), dtype=b.dtype, buffer=nl.sbuf)
        c_tile = nl.ndarray((P, free_dim), dtype=a.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=a_tile, src=a3[i])
        nisa.dma_copy(dst=b_tile, src=b3[i])
        nisa.tensor_tensor(dst=c_tile, data1=a_tile, data2=b_tile, op=nl.add)
        nisa.dma_copy(dst=out3[i], src=c_tile)
    return out


@nki.jit
def transpose(x):
    """y = x.T in [128, 128] tiles through the Tensor Engine: load, transpose into PSUM, copy to
    SBUF, store at the transposed tile position."""
    R, C = x.shape
    T = nl.tile_size.pmax
    y = nl.ndarray((C, R), dtype=x.dtype, buffer=nl.shared_hbm)
    for i in range(R // T):
        for j in range(C // T):
            t_in = nl.ndarray((T, T), dtype=x.dtype, buffer=nl.sbuf)
            nisa.dma_copy(dst=t_in, src=x[i * T:(i + 1) * T, j * T:(j + 1) * T])
            t_ps = nl.ndarray((T, T), dtype=nl.float32, buffer=nl.psum)
            nisa.nc_transpose(dst=t_ps, data=t_in)
            t_out = nl.ndarray((T, T), dtype=x.dtype, buffer=nl.sbuf)
            nisa.tensor_copy(dst=t_out, src=t_ps)
            nisa.dma_copy(dst=y[j * T:(j + 1) * T, i * T:(i + 1) * T], src=t_out)
    return y
