"""Causal flash-attention forward pass, classic API (head dimension 128, bfloat16).

q and k are [H, D, SEQ] per head (d on partitions), v and out [H, SEQ, D]. For each query tile
of 128 rows and each key block of 512 keys up to the diagonal (online-softmax tiling):
S = Q K^T on TensorE, scaled on ScalarE; the diagonal block is masked on GpSimd; VectorE keeps
the running row max; ScalarE computes P = exp(S - m) and its row sums in one instruction; the
running sum and output are rescaled by exp(m_old - m_new); P is transposed on TensorE and
O += P V accumulates in PSUM; finally O is divided by the row sums and stored.

  trnsim run examples/nki/flash_attention_fwd.py::flash_attention_fwd \
      --input q=bfloat16[2,128,4096] --input k=bfloat16[2,128,4096] --input v=bfloat16[2,4096,128]
"""

import math

from neuronxcc import nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl


@nki.jit
def flash_attention_fwd(q, k, v, softmax_scale=None):
    H, D, SEQ = q.shape
    P = nl.tile_size.pmax
    TQ = P  # query rows per tile
    TK = 4 * P  # keys per block: one PSUM bank of FP32 scores
    chunks = TK // P
    scale = softmax_scale if softmax_scale is not None else 1.0 / math.sqrt(D)
    out = nl.ndarray((H, SEQ, D), dtype=q.dtype, buffer=nl.shared_hbm)
    i_p = nl.arange(TQ)[:, None]
    i_f = nl.arange(TK)[None, :]
    for h in nl.affine_range(H):
        q_sb = nl.load(q[h])
        k_sb = nl.load(k[h])
        v_sb = nl.ndarray((SEQ // P, nl.par_dim(P), D), dtype=v.dtype, buffer=nl.sbuf)
        v_sb[...] = nl.load(v[h].reshape((SEQ // P, P, D)))
        for i in range(SEQ // TQ):
            blocks = (i * TQ) // TK + 1
            for j in range(blocks):
                s_ps = nisa.nc_matmul(q_sb[:, i * TQ:(i + 1) * TQ], k_sb[:, j * TK:(j + 1) * TK])
                s_sb = nisa.activation(op=nl.copy, data=s_ps, scale=scale)
                if j == blocks - 1:  # the diagonal block: keys after the query are masked
                    s_sb = nisa.affine_select(pred=(i * TQ + i_p - j * TK - i_f >= 0),
                                              on_true_tile=s_sb, on_false_value=-30000.0)
                m_blk = nisa.tensor_reduce(nl.maximum, s_sb, axis=(1,), keepdims=True)
                m_new = nl.copy(m_blk) if j == 0 else nl.maximum(m_run, m_blk)
                neg_m = nl.multiply(m_new, -1.0)
                l_blk = nl.ndarray((TQ, 1), dtype=nl.float32, buffer=nl.sbuf)
                p = nisa.activation(op=nl.exp, data=s_sb, bias=neg_m, reduce_op=nl.add,
                                    reduce_res=l_blk, dtype=q.dtype)
                if j == 0:
                    l_run = nl.copy(l_blk)
                else:
                    alpha = nl.exp(nl.subtract(m_run, m_new))
                    l_run = nisa.scalar_tensor_tensor(data=l_run, op0=nl.multiply, operand0=alpha,
                                                      op1=nl.add, operand1=l_blk)
                pT_ps = nl.ndarray((P, chunks, TQ), dtype=nl.float32, buffer=nl.psum)
                for c in range(chunks):
                    pT_ps[:, c, :] = nisa.nc_transpose(p[:, c * P:(c + 1) * P], engine=nki.isa.tensor_engine)
                pT = nl.copy(pT_ps, dtype=q.dtype)
                o_ps = nl.zeros((TQ, D), dtype=nl.float32, buffer=nl.psum)
                for c in range(chunks):
                    o_ps += nisa.nc_matmul(pT[:, c, :], v_sb[j * chunks + c])
                if j == 0:
                    o_acc = nl.copy(o_ps)
                else:
                    o_acc = nisa.scalar_tensor_tensor(data=o_acc, op0=nl.multiply, operand0=alpha,
                                                      op1=nl.add, operand1=o_ps)
                m_run = m_new
            inv_l = nisa.reciprocal(l_run)
            o_out = nl.multiply(o_acc, inv_l, dtype=q.dtype)
            nl.store(out[h, i * TQ:(i + 1) * TQ, :], value=o_out)
    return out
