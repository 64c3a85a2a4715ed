"""Calibration target T2: the two LayerNorm versions of the NKI tutorial, classic API.

out = (x - mean) * rsqrt(var + eps) * gamma + beta over the rows of x[R, D], float32.
gamma and beta [D] are broadcast to all partitions once, before the row loop.

  trnsim run examples/nki/layernorm.py::layernorm_v1 -c trn1 --input x=float32[4096,8192] \
      --input gamma=float32[8192] --input beta=float32[8192]
"""

import math

from neuronxcc import nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl


def _broadcast_params(gamma, beta):
    """gamma and beta as [pmax, D] tiles (a one-row load, then a partition broadcast)."""
    D = gamma.shape[0]
    gamma_row = nl.load(gamma.reshape((1, D)))
    beta_row = nl.load(beta.reshape((1, D)))
    return (gamma_row.broadcast_to((nl.tile_size.pmax, D)),
            beta_row.broadcast_to((nl.tile_size.pmax, D)))


@nki.jit
def layernorm_v1(x, gamma, beta, epsilon=1e-5):
    """Mean and variance by free-axis reductions: five VectorE passes over each row tile."""
    R, D = x.shape
    out = nl.ndarray((R, D), dtype=x.dtype, buffer=nl.shared_hbm)
    P = nl.tile_size.pmax
    gamma_sb, beta_sb = _broadcast_params(gamma, beta)
    i_p = nl.arange(P)[:, None]
    i_f = nl.arange(D)[None, :]
    for i in nl.affine_range(math.ceil(R / P)):
        rows = i * P + i_p
        x_sb = nl.load(x[rows, i_f], mask=(rows < R))
        mean = nl.sum(x_sb, axis=1) / D
        centered = nl.subtract(x_sb, mean)
        var = nl.sum(nl.square(centered), axis=1)
        rstd = nl.rsqrt(var / D + epsilon)
        normalized = nl.multiply(centered, rstd)
        y = nl.add(nl.multiply(normalized, gamma_sb), beta_sb)
        nl.store(out[rows, i_f], value=y, mask=(rows < R))
    return out


@nki.jit
def layernorm_v2(x, gamma, beta, epsilon=1e-5):
    """Mean and variance from bn_stats/bn_aggr, and one tensor_scalar that subtracts the mean and
    scales by rstd: two VectorE passes fewer than v1."""
    R, D = x.shape
    out = nl.ndarray((R, D), dtype=x.dtype, buffer=nl.shared_hbm)
    P = nl.tile_size.pmax
    CHUNK = nl.tile_size.bn_stats_fmax
    n_chunks = math.ceil(D / CHUNK)
    gamma_sb, beta_sb = _broadcast_params(gamma, beta)
    i_p = nl.arange(P)[:, None]
    i_f = nl.arange(D)[None, :]
    for i in nl.affine_range(math.ceil(R / P)):
        rows = i * P + i_p
        x_sb = nl.load(x[rows, i_f], mask=(rows < R))
        stats = nl.ndarray((P, n_chunks, 6), dtype=nl.float32, buffer=nl.sbuf)
        for j in nl.affine_range(n_chunks):
            stats[:, j, :] = nisa.bn_stats(x_sb[:, j * CHUNK:(j + 1) * CHUNK])
        mean_var = nisa.bn_aggr(stats)
        rstd = nl.rsqrt(mean_var[:, 1:2] + epsilon)
        normalized = nisa.tensor_scalar(x_sb, op0=nl.subtract, operand0=mean_var[:, 0:1],
                                        op1=nl.multiply, operand1=rstd)
        y = nl.add(nl.multiply(normalized, gamma_sb), beta_sb)
        nl.store(out[rows, i_f], value=y, mask=(rows < R))
    return out
