"""For tests/sensitivity: an NKI kernel whose lowering depends on every `compiler.*` choice.
Each of T row tiles of `a` is loaded, added to a zero-filled SBUF tile that is read first (a
memset the front end must emit, on compiler.sbuf_memset_engine), accumulated into a second
zero-filled tile (a fill that compiler.fold_zero_fill folds into the first `+=`), copied without
naming an engine (compiler.copy_engine) and stored; the loop's tiles rotate through
compiler.loop_tile_buffers buffers and the load and store sites take queues round robin over
compiler.dma_queues."""
from neuronxcc import nki
import neuronxcc.nki.language as nl


@nki.jit
def compiler_choices(a, T=4):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    rows = a.shape[0] // T
    for t in nl.affine_range(T):
        x = nl.load(a[t * rows:(t + 1) * rows, :])
        zeros = nl.zeros((rows, a.shape[1]), dtype=a.dtype, buffer=nl.sbuf)
        shifted = nl.add(zeros, x)
        acc = nl.zeros((rows, a.shape[1]), dtype=a.dtype, buffer=nl.sbuf)
        acc += shifted
        result = nl.copy(acc)
        nl.store(out[t * rows:(t + 1) * rows, :], value=result)
    return out
