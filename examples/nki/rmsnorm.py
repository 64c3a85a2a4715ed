"""RMSNorm as in LLM decoder layers, classic API: out = x * rsqrt(mean(x^2) + eps) * gamma.

x is bfloat16 [R, D], statistics FP32. gamma [D] is broadcast to all partitions once. Per row
tile ScalarE squares and sums in one instruction, VectorE computes sum / D + eps, ScalarE the
rsqrt, and one scalar_tensor_tensor applies rstd and gamma.

  trnsim run examples/nki/rmsnorm.py::rmsnorm --input x=bfloat16[4096,4096] \
      --input gamma=bfloat16[4096]
"""

from neuronxcc import nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl


@nki.jit
def rmsnorm(x, gamma, epsilon=1e-6):
    R, D = x.shape
    P = nl.tile_size.pmax
    out = nl.ndarray((R, D), dtype=x.dtype, buffer=nl.shared_hbm)
    gamma_sb = nl.load(gamma.reshape((1, D))).broadcast_to((P, D))
    for i in nl.affine_range(R // P):
        x_sb = nl.load(x[i * P:(i + 1) * P, :])
        sum_sq = nl.ndarray((P, 1), dtype=nl.float32, buffer=nl.sbuf)
        nisa.activation_reduce(op=nl.square, data=x_sb, reduce_op=nl.add, reduce_res=sum_sq)
        rstd = nl.rsqrt(sum_sq / D + epsilon)
        y = nisa.scalar_tensor_tensor(data=x_sb, op0=nl.multiply, operand0=rstd,
                                      op1=nl.multiply, operand1=gamma_sb)
        nl.store(out[i * P:(i + 1) * P, :], value=y)
    return out
