"""Calibration target T1: the four matrix-multiplication versions of the NKI tutorial, classic API.

result[M, N] = lhsT[K, M].T @ rhs[K, N] with bfloat16 inputs and FP32 accumulation in PSUM.
Tile sizes come from nl.tile_size, so each version re-tiles itself for the configured array.

  trnsim run examples/nki/matmul_t1.py::matmul_v1_tiled -c trn1 \
      --input lhsT=bfloat16[8192,4096] --input rhs=bfloat16[8192,8192]
"""

from neuronxcc import nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl


@nki.jit
def matmul_v1_tiled(lhsT, rhs):
    """Every tile is loaded from HBM for every use: bound by DMA fixed costs."""
    K, M = lhsT.shape
    K_, N = rhs.shape
    assert K == K_, "lhsT and rhs must have the same contraction dimension"
    result = nl.ndarray((M, N), dtype=lhsT.dtype, buffer=nl.shared_hbm)
    TILE_M = nl.tile_size.gemm_stationary_fmax
    TILE_K = nl.tile_size.pmax
    TILE_N = nl.tile_size.psum_fmax
    for m in nl.affine_range(M // TILE_M):
        for n in nl.affine_range(N // TILE_N):
            res_psum = nl.zeros((TILE_M, TILE_N), nl.float32, buffer=nl.psum)
            for k in nl.affine_range(K // TILE_K):
                lhsT_tile = nl.ndarray((TILE_K, TILE_M), dtype=lhsT.dtype, buffer=nl.sbuf)
                rhs_tile = nl.ndarray((TILE_K, TILE_N), dtype=rhs.dtype, buffer=nl.sbuf)
                lhsT_tile[...] = nl.load(lhsT[k * TILE_K:(k + 1) * TILE_K, m * TILE_M:(m + 1) * TILE_M])
                rhs_tile[...] = nl.load(rhs[k * TILE_K:(k + 1) * TILE_K, n * TILE_N:(n + 1) * TILE_N])
                res_psum += nl.matmul(lhsT_tile[...], rhs_tile[...], transpose_x=True)
            res_sb = nl.copy(res_psum, dtype=result.dtype)
            nl.store(result[m * TILE_M:(m + 1) * TILE_M, n * TILE_N:(n + 1) * TILE_N], value=res_sb)
    return result


@nki.jit
def matmul_v2_hoisted(lhsT, rhs):
    """The stationary tiles of a row of output tiles are loaded once per row."""
    K, M = lhsT.shape
    K_, N = rhs.shape
    result = nl.ndarray((M, N), dtype=lhsT.dtype, buffer=nl.shared_hbm)
    TILE_M = nl.tile_size.gemm_stationary_fmax
    TILE_K = nl.tile_size.pmax
    TILE_N = nl.tile_size.psum_fmax
    i_lhsT = nl.mgrid[0:TILE_K, 0:TILE_M]
    i_rhs = nl.mgrid[0:TILE_K, 0:TILE_N]
    i_res = nl.mgrid[0:TILE_M, 0:TILE_N]
    for m in nl.affine_range(M // TILE_M):
        lhsT_tiles = nl.ndarray((K // TILE_K, nl.par_dim(TILE_K), TILE_M), dtype=lhsT.dtype,
                                buffer=nl.sbuf)
        for k in nl.affine_range(K // TILE_K):
            lhsT_tiles[k, i_lhsT.p, i_lhsT.x] = nl.load(
                lhsT[k * TILE_K + i_lhsT.p, m * TILE_M + i_lhsT.x])
        for n in nl.affine_range(N // TILE_N):
            rhs_tiles = nl.ndarray((K // TILE_K, nl.par_dim(TILE_K), TILE_N), dtype=rhs.dtype,
                                   buffer=nl.sbuf)
            for k in nl.affine_range(K // TILE_K):
                rhs_tiles[k, i_rhs.p, i_rhs.x] = nl.load(
                    rhs[k * TILE_K + i_rhs.p, n * TILE_N + i_rhs.x])
            res_psum = nl.zeros((TILE_M, TILE_N), nl.float32, buffer=nl.psum)
            for k in nl.affine_range(K // TILE_K):
                res_psum[...] += nl.matmul(lhsT_tiles[k, i_lhsT.p, i_lhsT.x],
                                           rhs_tiles[k, i_rhs.p, i_rhs.x], transpose_x=True)
            res_sb = nl.copy(res_psum, dtype=result.dtype)
            nl.store(result[m * TILE_M + i_res.p, n * TILE_N + i_res.x], value=res_sb)
    return result


@nki.jit
def matmul_v3_blocked(lhsT, rhs, TILES_IN_BLOCK_M=2, TILES_IN_BLOCK_N=2):
    """Blocks of TILES_IN_BLOCK_M x TILES_IN_BLOCK_N output tiles share their loads."""
    K, M = lhsT.shape
    K_, N = rhs.shape
    result = nl.ndarray((M, N), dtype=lhsT.dtype, buffer=nl.shared_hbm)
    TILE_M = nl.tile_size.gemm_stationary_fmax
    TILE_K = nl.tile_size.pmax
    TILE_N = nl.tile_size.psum_fmax
    BLOCK_M = TILE_M * TILES_IN_BLOCK_M
    BLOCK_N = TILE_N * TILES_IN_BLOCK_N
    for mb in nl.affine_range(M // BLOCK_M):
        lhsT_tiles = nl.ndarray((K // TILE_K, nl.par_dim(TILE_K), BLOCK_M), dtype=lhsT.dtype,
                                buffer=nl.sbuf)
        for k in nl.affine_range(K // TILE_K):
            lhsT_tiles[k] = nl.load(lhsT[k * TILE_K:(k + 1) * TILE_K, mb * BLOCK_M:(mb + 1) * BLOCK_M])
        for nb in nl.affine_range(N // BLOCK_N):
            rhs_tiles = nl.ndarray((K // TILE_K, nl.par_dim(TILE_K), BLOCK_N), dtype=rhs.dtype,
                                   buffer=nl.sbuf)
            for k in nl.affine_range(K // TILE_K):
                rhs_tiles[k] = nl.load(rhs[k * TILE_K:(k + 1) * TILE_K, nb * BLOCK_N:(nb + 1) * BLOCK_N])
            for bm in nl.affine_range(TILES_IN_BLOCK_M):
                for bn in nl.affine_range(TILES_IN_BLOCK_N):
                    res_psum = nl.zeros((TILE_M, TILE_N), nl.float32, buffer=nl.psum)
                    for k in nl.affine_range(K // TILE_K):
                        res_psum += nisa.nc_matmul(lhsT_tiles[k, :, bm * TILE_M:(bm + 1) * TILE_M],
                                                   rhs_tiles[k, :, bn * TILE_N:(bn + 1) * TILE_N])
                    res_sb = nl.copy(res_psum, dtype=result.dtype)
                    row = mb * BLOCK_M + bm * TILE_M
                    col = nb * BLOCK_N + bn * TILE_N
                    nl.store(result[row:row + TILE_M, col:col + TILE_N], value=res_sb)
    return result


@nki.jit
def matmul_v4_optimized(lhsT, rhs, TILES_IN_BLOCK_M=None, TILES_IN_BLOCK_N=2, TILES_IN_BLOCK_K=8):
    """Blocks of 16 x 2 x 8 tiles; an SBUF accumulator holds a column block of the result.
    TILES_IN_BLOCK_M defaults to the tutorial's 16, but to 2048 // TILE_M on an array larger than
    128 x 128, so that the lhsT block keeps its bytes per partition (as matmul_t1_v4_optimized.json)."""
    K, M = lhsT.shape
    K_, N = rhs.shape
    result = nl.ndarray((M, N), dtype=lhsT.dtype, buffer=nl.shared_hbm)
    TILE_M = nl.tile_size.gemm_stationary_fmax
    TILE_K = nl.tile_size.pmax
    TILE_N = nl.tile_size.psum_fmax
    if TILES_IN_BLOCK_M is None:
        TILES_IN_BLOCK_M = min(16, 2048 // TILE_M)
    BLOCK_M = TILE_M * TILES_IN_BLOCK_M
    BLOCK_N = TILE_N * TILES_IN_BLOCK_N
    BLOCK_K = TILE_K * TILES_IN_BLOCK_K
    NUM_BLOCK_M = M // BLOCK_M
    NUM_BLOCK_N = N // BLOCK_N
    NUM_BLOCK_K = K // BLOCK_K
    for n in nl.affine_range(NUM_BLOCK_N):
        result_tiles = nl.zeros((NUM_BLOCK_M, TILES_IN_BLOCK_M, TILES_IN_BLOCK_N,
                                 nl.par_dim(TILE_M), TILE_N), dtype=lhsT.dtype, buffer=nl.sbuf)
        for k in nl.sequential_range(NUM_BLOCK_K):
            i_rhs = nl.mgrid[0:TILE_K, 0:BLOCK_N]
            rhs_tiles = nl.ndarray((TILES_IN_BLOCK_K, nl.par_dim(TILE_K), BLOCK_N), dtype=rhs.dtype,
                                   buffer=nl.sbuf)
            for bk_r in nl.affine_range(TILES_IN_BLOCK_K):
                rhs_tiles[bk_r, i_rhs.p, i_rhs.x] = nl.load(
                    rhs[(TILES_IN_BLOCK_K * k + bk_r) * TILE_K + i_rhs.p, BLOCK_N * n + i_rhs.x])
            for m in nl.affine_range(NUM_BLOCK_M):
                i_lhsT = nl.mgrid[0:TILE_K, 0:BLOCK_M]
                lhsT_tiles = nl.ndarray((TILES_IN_BLOCK_K, nl.par_dim(TILE_K), BLOCK_M),
                                        dtype=lhsT.dtype, buffer=nl.sbuf)
                for bk_l in nl.affine_range(TILES_IN_BLOCK_K):
                    lhsT_tiles[bk_l, i_lhsT.p, i_lhsT.x] = nl.load(
                        lhsT[(TILES_IN_BLOCK_K * k + bk_l) * TILE_K + i_lhsT.p, BLOCK_M * m + i_lhsT.x])
                i_lhsT_mm = nl.mgrid[0:TILE_K, 0:TILE_M]
                i_rhs_mm = nl.mgrid[0:TILE_K, 0:TILE_N]
                i_res_mm = nl.mgrid[0:TILE_M, 0:TILE_N]
                for bn in nl.affine_range(TILES_IN_BLOCK_N):
                    for bm in nl.affine_range(TILES_IN_BLOCK_M):
                        res_tile = nl.zeros((TILE_M, TILE_N), dtype=nl.float32, buffer=nl.psum)
                        for bk in nl.affine_range(TILES_IN_BLOCK_K):
                            res_tile[...] += nisa.nc_matmul(
                                lhsT_tiles[bk, i_lhsT_mm.p, bm * TILE_M + i_lhsT_mm.x],
                                rhs_tiles[bk, i_rhs_mm.p, bn * TILE_N + i_rhs_mm.x])
                        result_tiles[m, bm, bn, i_res_mm.p, i_res_mm.x] += res_tile[i_res_mm.p, i_res_mm.x]
        for m in nl.affine_range(NUM_BLOCK_M):
            for bm in nl.affine_range(TILES_IN_BLOCK_M):
                i_res = nl.mgrid[0:TILE_K, 0:TILE_N]
                i_res_packed = nl.mgrid[0:TILE_K, 0:BLOCK_N]
                result_packed = nl.ndarray((TILE_K, BLOCK_N), dtype=result_tiles.dtype, buffer=nl.sbuf)
                for bn in nl.affine_range(TILES_IN_BLOCK_N):
                    result_packed[i_res.p, bn * TILE_N + i_res.x] = nl.copy(
                        result_tiles[m, bm, bn, i_res.p, i_res.x])
                nl.store(result[(TILES_IN_BLOCK_M * m + bm) * TILE_K + i_res_packed.p,
                                BLOCK_N * n + i_res_packed.x],
                         value=result_packed[i_res_packed.p, i_res_packed.x])
    return result
