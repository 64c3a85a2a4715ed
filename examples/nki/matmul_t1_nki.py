"""Calibration target T1 with the standalone `nki` API: the tutorial's matrix multiplication
versions, every instruction naming its destination. Loops are plain Python loops (unrolled);
tiles declared inside a loop rotate through two buffers, lists of tiles are kept as written.

result[M, N] = lhsT[K, M].T @ rhs[K, N], bfloat16 inputs, FP32 accumulation in PSUM.

  trnsim run examples/nki/matmul_t1_nki.py::matmul_v4_optimized -c trn1 \
      --input lhsT=bfloat16[8192,4096] --input rhs=bfloat16[8192,8192]
"""

import nki
import nki.isa as nisa
import nki.language as nl


def _tiles():
    return (nl.tile_size.gemm_stationary_fmax, nl.tile_size.pmax, nl.tile_size.psum_fmax)


@nki.jit
def matmul_v1_tiled(lhsT, rhs):
    """Every tile is loaded from HBM for every use."""
    K, M = lhsT.shape
    _, N = rhs.shape
    TILE_M, TILE_K, TILE_N = _tiles()
    result = nl.ndarray((M, N), dtype=lhsT.dtype, buffer=nl.shared_hbm)
    for m in range(M // TILE_M):
        for n in range(N // TILE_N):
            res_psum = nl.ndarray((TILE_M, TILE_N), dtype=nl.float32, buffer=nl.psum)
            for k in range(K // TILE_K):
                lhsT_tile = nl.ndarray((TILE_K, TILE_M), dtype=lhsT.dtype, buffer=nl.sbuf)
                rhs_tile = nl.ndarray((TILE_K, TILE_N), dtype=rhs.dtype, buffer=nl.sbuf)
                nisa.dma_copy(dst=lhsT_tile,
                              src=lhsT[k * TILE_K:(k + 1) * TILE_K, m * TILE_M:(m + 1) * TILE_M])
                nisa.dma_copy(dst=rhs_tile,
                              src=rhs[k * TILE_K:(k + 1) * TILE_K, n * TILE_N:(n + 1) * TILE_N])
                nisa.nc_matmul(dst=res_psum, stationary=lhsT_tile, moving=rhs_tile,
                               accumulate=(k > 0))
            res_sb = nl.ndarray((TILE_M, TILE_N), dtype=result.dtype, buffer=nl.sbuf)
            nisa.tensor_copy(dst=res_sb, src=res_psum)
            nisa.dma_copy(dst=result[m * TILE_M:(m + 1) * TILE_M, n * TILE_N:(n + 1) * TILE_N],
                          src=res_sb)
    return result


@nki.jit
def matmul_v2_hoisted(lhsT, rhs):
    """The stationary tiles of a row of output tiles are loaded once per row (a list of tiles)."""
    K, M = lhsT.shape
    _, N = rhs.shape
    TILE_M, TILE_K, TILE_N = _tiles()
    result = nl.ndarray((M, N), dtype=lhsT.dtype, buffer=nl.shared_hbm)
    for m in range(M // TILE_M):
        lhsT_tiles = nl.ndarray((TILE_K, K // TILE_K, TILE_M), dtype=lhsT.dtype, buffer=nl.sbuf)
        for k in range(K // TILE_K):
            nisa.dma_copy(dst=lhsT_tiles[:, k, :],
                          src=lhsT[k * TILE_K:(k + 1) * TILE_K, m * TILE_M:(m + 1) * TILE_M])
        for n in range(N // TILE_N):
            rhs_tiles = nl.ndarray((TILE_K, K // TILE_K, TILE_N), dtype=rhs.dtype, buffer=nl.sbuf)
            for k in range(K // TILE_K):
                nisa.dma_copy(dst=rhs_tiles[:, k, :],
                              src=rhs[k * TILE_K:(k + 1) * TILE_K, n * TILE_N:(n + 1) * TILE_N])
            res_psum = nl.ndarray((TILE_M, TILE_N), dtype=nl.float32, buffer=nl.psum)
            for k in range(K // TILE_K):
                nisa.nc_matmul(dst=res_psum, stationary=lhsT_tiles[:, k, :],
                               moving=rhs_tiles[:, k, :], accumulate=(k > 0))
            res_sb = nl.ndarray((TILE_M, TILE_N), dtype=result.dtype, buffer=nl.sbuf)
            nisa.tensor_copy(dst=res_sb, src=res_psum)
            nisa.dma_copy(dst=result[m * TILE_M:(m + 1) * TILE_M, n * TILE_N:(n + 1) * TILE_N],
                          src=res_sb)
    return result


@nki.jit
def matmul_v3_blocked(lhsT, rhs, TILES_IN_BLOCK_M=2, TILES_IN_BLOCK_N=2):
    """Blocks of output tiles share their loads."""
    K, M = lhsT.shape
    _, N = rhs.shape
    TILE_M, TILE_K, TILE_N = _tiles()
    BLOCK_M, BLOCK_N = TILE_M * TILES_IN_BLOCK_M, TILE_N * TILES_IN_BLOCK_N
    result = nl.ndarray((M, N), dtype=lhsT.dtype, buffer=nl.shared_hbm)
    for mb in range(M // BLOCK_M):
        lhsT_tiles = nl.ndarray((TILE_K, K // TILE_K, BLOCK_M), dtype=lhsT.dtype, buffer=nl.sbuf)
        for k in range(K // TILE_K):
            nisa.dma_copy(dst=lhsT_tiles[:, k, :],
                          src=lhsT[k * TILE_K:(k + 1) * TILE_K, mb * BLOCK_M:(mb + 1) * BLOCK_M])
        for nb in range(N // BLOCK_N):
            rhs_tiles = nl.ndarray((TILE_K, K // TILE_K, BLOCK_N), dtype=rhs.dtype, buffer=nl.sbuf)
            for k in range(K // TILE_K):
                nisa.dma_copy(dst=rhs_tiles[:, k, :],
                              src=rhs[k * TILE_K:(k + 1) * TILE_K, nb * BLOCK_N:(nb + 1) * BLOCK_N])
            for bm in range(TILES_IN_BLOCK_M):
                for bn in range(TILES_IN_BLOCK_N):
                    res_psum = nl.ndarray((TILE_M, TILE_N), dtype=nl.float32, buffer=nl.psum)
                    for k in range(K // TILE_K):
                        nisa.nc_matmul(dst=res_psum,
                                       stationary=lhsT_tiles[:, k, bm * TILE_M:(bm + 1) * TILE_M],
                                       moving=rhs_tiles[:, k, bn * TILE_N:(bn + 1) * TILE_N],
                                       accumulate=(k > 0))
                    res_sb = nl.ndarray((TILE_M, TILE_N), dtype=result.dtype, buffer=nl.sbuf)
                    nisa.tensor_copy(dst=res_sb, src=res_psum)
                    row = mb * BLOCK_M + bm * TILE_M
                    col = nb * BLOCK_N + bn * TILE_N
                    nisa.dma_copy(dst=result[row:row + TILE_M, col:col + TILE_N], src=res_sb)
    return result


@nki.jit
def matmul_v4_optimized(lhsT, rhs, TILES_IN_BLOCK_M=None, TILES_IN_BLOCK_N=2, TILES_IN_BLOCK_K=8):
    """Blocks of 16 x 2 x 8 tiles; an SBUF accumulator (a list of tiles) holds a column block.
    TILES_IN_BLOCK_M defaults to the tutorial's 16, but to 2048 // TILE_M on an array larger than
    128 x 128, so that the lhsT block keeps its bytes per partition (as matmul_t1_v4_optimized.json)."""
    K, M = lhsT.shape
    _, N = rhs.shape
    TILE_M, TILE_K, TILE_N = _tiles()
    if TILES_IN_BLOCK_M is None:
        TILES_IN_BLOCK_M = min(16, 2048 // TILE_M)
    BLOCK_M = TILE_M * TILES_IN_BLOCK_M
    BLOCK_N = TILE_N * TILES_IN_BLOCK_N
    BLOCK_K = TILE_K * TILES_IN_BLOCK_K
    NUM_BLOCK_M, NUM_BLOCK_N, NUM_BLOCK_K = M // BLOCK_M, N // BLOCK_N, K // BLOCK_K
    result = nl.ndarray((M, N), dtype=lhsT.dtype, buffer=nl.shared_hbm)
    for n in range(NUM_BLOCK_N):
        result_tiles = [[[nl.ndarray((TILE_M, TILE_N), dtype=lhsT.dtype, buffer=nl.sbuf)
                          for _ in range(TILES_IN_BLOCK_N)]
                         for _ in range(TILES_IN_BLOCK_M)]
                        for _ in range(NUM_BLOCK_M)]
        for k in range(NUM_BLOCK_K):
            rhs_tiles = nl.ndarray((TILE_K, TILES_IN_BLOCK_K, BLOCK_N), dtype=rhs.dtype,
                                   buffer=nl.sbuf)
            for bk in range(TILES_IN_BLOCK_K):
                row = (TILES_IN_BLOCK_K * k + bk) * TILE_K
                nisa.dma_copy(dst=rhs_tiles[:, bk, :],
                              src=rhs[row:row + TILE_K, n * BLOCK_N:(n + 1) * BLOCK_N])
            for m in range(NUM_BLOCK_M):
                lhsT_tiles = nl.ndarray((TILE_K, TILES_IN_BLOCK_K, BLOCK_M), dtype=lhsT.dtype,
                                        buffer=nl.sbuf)
                for bk in range(TILES_IN_BLOCK_K):
                    row = (TILES_IN_BLOCK_K * k + bk) * TILE_K
                    nisa.dma_copy(dst=lhsT_tiles[:, bk, :],
                                  src=lhsT[row:row + TILE_K, m * BLOCK_M:(m + 1) * BLOCK_M])
                for bn in range(TILES_IN_BLOCK_N):
                    for bm in range(TILES_IN_BLOCK_M):
                        res_tile = nl.ndarray((TILE_M, TILE_N), dtype=nl.float32, buffer=nl.psum)
                        for bk in range(TILES_IN_BLOCK_K):
                            nisa.nc_matmul(dst=res_tile,
                                           stationary=lhsT_tiles[:, bk, bm * TILE_M:(bm + 1) * TILE_M],
                                           moving=rhs_tiles[:, bk, bn * TILE_N:(bn + 1) * TILE_N],
                                           accumulate=(bk > 0))
                        acc = result_tiles[m][bm][bn]
                        if k == 0:
                            nisa.tensor_copy(dst=acc, src=res_tile)
                        else:
                            nisa.tensor_tensor(dst=acc, data1=acc, data2=res_tile, op=nl.add)
        for m in range(NUM_BLOCK_M):
            for bm in range(TILES_IN_BLOCK_M):
                result_packed = nl.ndarray((TILE_K, BLOCK_N), dtype=lhsT.dtype, buffer=nl.sbuf)
                for bn in range(TILES_IN_BLOCK_N):
                    nisa.tensor_copy(dst=result_packed[:, bn * TILE_N:(bn + 1) * TILE_N],
                                     src=result_tiles[m][bm][bn])
                row = (TILES_IN_BLOCK_M * m + bm) * TILE_K
                nisa.dma_copy(dst=result[row:row + TILE_K, n * BLOCK_N:(n + 1) * BLOCK_N],
                              src=result_packed)
    return result
