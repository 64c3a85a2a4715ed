"""out = a + b over T tiles of [128, F], classic API: the format's first example.

`vector_add` declares its tiles inside the loop, so the compiler (and trnsim) rotates them
through two buffers and the loads of tile t+1 overlap the add of tile t.
`vector_add_single_buffer` declares one tile per operand outside the loop and overwrites it:
every load waits until the add of the previous tile has read the buffer.

  trnsim run examples/nki/vector_add.py::vector_add \
      --input a=float32[8,128,2048] --input b=float32[8,128,2048]
"""

from neuronxcc import nki
import neuronxcc.nki.language as nl


@nki.jit
def vector_add(a, b):
    T, P, F = a.shape
    out = nl.ndarray((T, P, F), dtype=a.dtype, buffer=nl.shared_hbm)
    for t in nl.affine_range(T):
        a_sb = nl.load(a[t])
        b_sb = nl.load(b[t])
        nl.store(out[t], value=nl.add(a_sb, b_sb))
    return out


@nki.jit
def vector_add_single_buffer(a, b):
    T, P, F = a.shape
    out = nl.ndarray((T, P, F), dtype=a.dtype, buffer=nl.shared_hbm)
    a_sb = nl.ndarray((P, F), dtype=a.dtype, buffer=nl.sbuf)
    b_sb = nl.ndarray((P, F), dtype=b.dtype, buffer=nl.sbuf)
    c_sb = nl.ndarray((P, F), dtype=a.dtype, buffer=nl.sbuf)
    for t in nl.affine_range(T):
        a_sb[...] = nl.load(a[t])
        b_sb[...] = nl.load(b[t])
        c_sb[...] = nl.add(a_sb, b_sb)
        nl.store(out[t], value=c_sb)
    return out
