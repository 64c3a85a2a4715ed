"""Row softmax, classic API: out[r, :] = exp(x[r, :] - max(x[r, :])) / sum(exp(...)).

VectorE takes the negated row max, ScalarE computes exp(x - max) and the row sums in one
instruction, VectorE scales the row by the reciprocal of the sums.

  trnsim run examples/nki/softmax.py::softmax --input x=float32[4096,4096]
"""

from neuronxcc import nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl


@nki.jit
def softmax(x):
    R, C = x.shape
    P = nl.tile_size.pmax
    out = nl.ndarray((R, C), dtype=x.dtype, buffer=nl.shared_hbm)
    for i in nl.affine_range(R // P):
        x_sb = nl.load(x[i * P:(i + 1) * P, :])
        neg_max = nisa.tensor_reduce(nl.maximum, x_sb, axis=(1,), negate=True, keepdims=True)
        sums = nl.ndarray((P, 1), dtype=nl.float32, buffer=nl.sbuf)
        e = nisa.activation(op=nl.exp, data=x_sb, bias=neg_max, reduce_op=nl.add, reduce_res=sums)
        inv = nisa.reciprocal(sums)
        y = nisa.tensor_scalar(e, op0=nl.multiply, operand0=inv)
        nl.store(out[i * P:(i + 1) * P, :], value=y)
    return out
