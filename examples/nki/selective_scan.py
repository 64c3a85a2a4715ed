"""Mamba-style selective scan (the SSM recurrence of a Mamba block), classic API.

For every channel c and state s: h[t] = exp(delta[c, t] * A[c, s]) * h[t-1] + delta[c, t] *
u[c, t] * B[s, t], and y[c, t] = sum over s of C[s, t] * h[t]. Channels sit on partitions, time
along the free axis. B and C rows are broadcast to all partitions by matmuls with a ones row;
the recurrence is one tensor_tensor_scan per state.

  trnsim run examples/nki/selective_scan.py::selective_scan --input delta=float32[512,512] \
      --input u=float32[512,512] --input A=float32[512,16] --input B=float32[16,512] \
      --input C=float32[16,512]
"""

from neuronxcc import nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl


@nki.jit
def selective_scan(delta, u, A, B, C):
    channels, seq_len = delta.shape
    states = A.shape[1]
    P = nl.tile_size.pmax
    y = nl.ndarray((channels, seq_len), dtype=delta.dtype, buffer=nl.shared_hbm)
    ones = nl.full((1, P), 1.0, dtype=nl.float32, buffer=nl.sbuf)
    b_rows = nl.ndarray((states, nl.par_dim(1), seq_len), dtype=B.dtype, buffer=nl.sbuf)
    c_rows = nl.ndarray((states, nl.par_dim(1), seq_len), dtype=C.dtype, buffer=nl.sbuf)
    b_rows[...] = nl.load(B.reshape((states, 1, seq_len)))
    c_rows[...] = nl.load(C.reshape((states, 1, seq_len)))
    for ct in nl.affine_range(channels // P):
        rows = slice(ct * P, (ct + 1) * P)
        delta_sb = nl.load(delta[rows, :])
        u_sb = nl.load(u[rows, :])
        A_sb = nl.load(A[rows, :])
        delta_u = nisa.tensor_tensor(delta_sb, u_sb, op=nl.multiply)
        y_sb = nl.zeros((P, seq_len), dtype=nl.float32, buffer=nl.sbuf)
        for s in nl.affine_range(states):
            B_bcast = nisa.nc_matmul(ones, b_rows[s])
            C_bcast = nisa.nc_matmul(ones, c_rows[s])
            deltaA = nisa.activation(op=nl.exp, data=delta_sb, scale=A_sb[:, s:s + 1])
            deltaBu = nisa.tensor_tensor(delta_u, B_bcast, op=nl.multiply)
            h = nisa.tensor_tensor_scan(deltaA, deltaBu, initial=0.0, op0=nl.multiply, op1=nl.add)
            y_sb += nisa.tensor_tensor(h, C_bcast, op=nl.multiply)
        nl.store(y[rows, :], value=y_sb)
    return y
