#!/usr/bin/env python3
"""Functional execution of the example kernels against NumPy references written here.

Each case runs `trnsim run KERNEL --numerics` on small shapes with inputs made by NumPy
(`--input NAME=FILE.npy`) and compares an output with a reference computed here with NumPy
(`--expect NAME=REF.npy`), independently of trnsim's code. The run must exit 0 and report
nothing (no read of unwritten memory, no NaN or infinity).

Tolerances, per output type: float32 outputs of float32 arithmetic use NumPy's defaults
(rtol 1e-5, atol 1e-8) unless the kernel reduces long rows in a different order than NumPy
(stated per case); bfloat16 outputs are compared after rounding the reference to bfloat16 the
same way (round to nearest even), with one bfloat16 unit in the last place (2^-7 relative, and
as absolute near zero) for differences in float32 summation order before the rounding.

NKI Python kernels (examples/nki) are traced with their inputs' types and shapes from the same
files; bfloat16 inputs are saved as raw 2-byte elements, as ml_dtypes saves them.

Usage: numerics_examples_test.py TRNSIM EXAMPLES_KERNELS_DIR"""

import concurrent.futures
import os
import subprocess
import sys
import tempfile

import numpy as np


def bf16(x):
    """float32 values rounded to the nearest bfloat16 (ties to even), as float32."""
    bits = np.asarray(x, dtype=np.float32).view(np.uint32).astype(np.uint64)
    rounded = (bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000
    return rounded.astype(np.uint32).view(np.float32)


class Bf16Input:
    """An input saved as raw bfloat16 ('|V2', as ml_dtypes saves it): an NKI kernel traced from
    the file then takes it as bfloat16."""

    def __init__(self, values):
        self.values = bf16(values)

    def save(self, path):
        bits = (self.values.view(np.uint32) >> 16).astype(np.uint16)
        np.save(path, bits.view(np.dtype("V2")))


def uniform(rng, shape):
    return rng.uniform(-1.0, 1.0, size=shape).astype(np.float32)


BF16_TOL = ["--rtol", str(2.0 ** -7), "--atol", str(2.0 ** -7)]


def vector_add(rng, shape):
    a, b = uniform(rng, shape), uniform(rng, shape)
    return {"a": a, "b": b}, {"out": (a + b).astype(np.float32)}, []


def matmul(lhs_name, rhs_name, out_name, out_bf16, accumulate_in_bf16_blocks=0):
    """out[M, N] = lhs[K, M].T @ rhs[K, N] with bfloat16 inputs and float32 accumulation."""
    def make(rng, k, m, n):
        lhs, rhs = bf16(uniform(rng, (k, m))), bf16(uniform(rng, (k, n)))
        if accumulate_in_bf16_blocks:
            # The sum of each block of K rows in float32, added into a bfloat16 accumulator.
            block = accumulate_in_bf16_blocks
            acc = None
            for start in range(0, k, block):
                part = lhs[start:start + block].T.astype(np.float64) @ rhs[start:start + block]
                part = part.astype(np.float32)
                acc = bf16(part) if acc is None else bf16(acc + part)
            out = acc
        else:
            out = (lhs.T.astype(np.float64) @ rhs).astype(np.float32)
            if out_bf16:
                out = bf16(out)
        return {lhs_name: lhs, rhs_name: rhs}, {out_name: out}, BF16_TOL if out_bf16 else [
            "--rtol", "1e-5", "--atol", "1e-5"]
    return make


def transpose(rng, r, c):
    x = uniform(rng, (r, c))
    return {"x": x}, {"y": x.T.copy()}, []


def layernorm(rng, rows, d):
    x, gamma, beta = uniform(rng, (rows, d)), uniform(rng, (1, d)), uniform(rng, (1, d))
    mean = x.mean(axis=1, keepdims=True, dtype=np.float64)
    var = ((x - mean) ** 2).mean(axis=1, keepdims=True)
    out = (x - mean) / np.sqrt(var + 1e-5) * gamma + beta
    # Row sums of D float32 values in another order than NumPy's pairwise sums: 1e-5 relative.
    return {"x": x, "gamma": gamma, "beta": beta}, {"out": out.astype(np.float32)}, [
        "--rtol", "1e-5", "--atol", "1e-5"]


def moe(rng, experts, cap_tiles, d, f, group=128):
    kt = d // 128
    cap = cap_tiles * group
    xT = bf16(uniform(rng, (experts, kt, 128, cap)))
    w = bf16(uniform(rng, (experts, kt, 128, f)))
    out = np.zeros((experts, cap, f), dtype=np.float32)
    for e in range(experts):
        tokens = group * (1 + (5 * e) % cap_tiles)
        x = xT[e].reshape(d, cap)[:, :tokens]
        out[e, :tokens] = bf16((x.T.astype(np.float64) @ w[e].reshape(d, f)).astype(np.float32))
    # Rows past an expert's token count are never written: compare only the written ones by
    # giving the kernel's own output for them (zeros: unwritten HBM reads back as zero).
    return {"xT": xT, "w": w}, {"out": out}, BF16_TOL


def softmax(rng, rows, cols):
    x = uniform(rng, (rows, cols)) * 4
    e = np.exp(x.astype(np.float64) - x.max(axis=1, keepdims=True))
    return {"x": x}, {"out": (e / e.sum(axis=1, keepdims=True)).astype(np.float32)}, []


def rmsnorm(rng, rows, d):
    x, gamma = bf16(uniform(rng, (rows, d))), bf16(uniform(rng, (1, d)))
    x64 = x.astype(np.float64)
    rstd = 1.0 / np.sqrt((x64 * x64).mean(axis=1, keepdims=True) + 1e-6)
    return {"x": x, "gamma": gamma}, {"out": bf16((x64 * rstd * gamma).astype(np.float32))}, \
        BF16_TOL


def layernorm_bn(rng, rows, d):
    # The same function as layernorm_v1; mean and variance come from bn_stats/bn_aggr.
    return layernorm(rng, rows, d)


def transpose_bf16(rng, r, c):
    x = bf16(uniform(rng, (r, c)))
    return {"x": x}, {"y": x.T.copy()}, []


def selective_scan(rng, channels, states, length):
    delta = rng.uniform(0.0, 0.1, size=(channels, length)).astype(np.float32)
    u = uniform(rng, (channels, length))
    a = rng.uniform(-1.0, 0.0, size=(channels, states)).astype(np.float32)
    b = uniform(rng, (states, 1, length))
    c = uniform(rng, (states, 1, length))
    d64, u64 = delta.astype(np.float64), u.astype(np.float64)
    y = np.zeros((channels, length))
    for s in range(states):
        decay = np.exp(d64 * a[:, s:s + 1])
        drive = d64 * u64 * b[s, 0]
        h = np.zeros(channels)
        for t in range(length):
            h = decay[:, t] * h + drive[:, t]
            y[:, t] += h * c[s, 0, t]
    # float32 recurrences over LEN steps and STATES sums against float64: 1e-4 relative.
    return {"delta": delta, "u": u, "A": a, "B": b, "C": c}, {"y": y.astype(np.float32)}, [
        "--rtol", "1e-4", "--atol", "1e-5"]


def matmul_fp8_double_row(rng, k, m, n):
    # Multiples of 1/8 in [-1, 1] are exact in float8_e4m3; products and float32 sums exact.
    lhs = (rng.integers(-8, 9, size=(k // 2, 2, m)) / 8).astype(np.float32)
    rhs = (rng.integers(-8, 9, size=(k // 2, 2, n)) / 8).astype(np.float32)
    out = lhs.reshape(k, m).T.astype(np.float64) @ rhs.reshape(k, n)
    return {"lhsT": lhs, "rhs": rhs}, {"result": bf16(out.astype(np.float32))}, BF16_TOL


def flash_attention(rng, heads, seq, d, v_layout):
    """Causal softmax(Q^T K / sqrt(D)) V per head; q, k [heads, D, SEQ], v [heads, SEQ, D]
    (v_layout gives the JSON kernel's [heads, SEQ / 128, 128, D] view of the same bytes)."""
    q, k = bf16(uniform(rng, (heads, d, seq))), bf16(uniform(rng, (heads, d, seq)))
    v = bf16(uniform(rng, (heads, seq, d)))
    out = np.zeros((heads, seq, d), dtype=np.float32)
    for h in range(heads):
        s = (q[h].T.astype(np.float64) @ k[h]) / np.sqrt(d)
        s[np.triu_indices(seq, 1)] = -np.inf
        p = np.exp(s - s.max(axis=1, keepdims=True))
        out[h] = bf16(((p / p.sum(axis=1, keepdims=True)) @ v[h]).astype(np.float32))
    # P goes through bfloat16 before P V while the row sums do not: 2^-6 relative.
    return {"q": q, "k": k, "v": v.reshape(v_layout)}, {"out": out}, [
        "--rtol", str(2.0 ** -6), "--atol", str(2.0 ** -7)]


def nki(make, raw_bf16=()):
    """An NKI kernel case: the named inputs saved as raw bfloat16 (their traced type)."""
    def wrapped(rng):
        inputs, expected, tolerance = make(rng)
        return ({n: Bf16Input(v) if n in raw_bf16 else v for n, v in inputs.items()}, expected,
                tolerance)
    return wrapped


def layernorm_1d(rng, rows, d):
    inputs, expected, tolerance = layernorm(rng, rows, d)
    inputs["gamma"], inputs["beta"] = inputs["gamma"].reshape(d), inputs["beta"].reshape(d)
    return inputs, expected, tolerance


def rmsnorm_1d(rng, rows, d):
    inputs, expected, tolerance = rmsnorm(rng, rows, d)
    inputs["gamma"] = inputs["gamma"].reshape(d)
    return inputs, expected, tolerance


def selective_scan_2d(rng, channels, states, length):
    inputs, expected, tolerance = selective_scan(rng, channels, states, length)
    inputs["B"], inputs["C"] = (inputs[n].reshape(states, length) for n in ("B", "C"))
    return inputs, expected, tolerance


def unchanged_source(rng, shape):
    src = bf16(uniform(rng, shape))
    return {"src": src}, {"src": src}, []


def all_reduce(rng, ranks, n):
    grad = uniform(rng, (ranks, n))  # per_core: one row per core
    total = grad.astype(np.float64).sum(axis=0).astype(np.float32)
    # A float32 sum of `ranks` values in rank order: exact for two, 1e-6 relative otherwise.
    return {"grad": grad}, {"reduced": np.tile(total, (ranks, 1))}, ["--rtol", "1e-6"]


def all_reduce_ranks(rng, cores, n, ranks):
    """all_reduce between `ranks` of `cores` per-core rows: the others' rows stay unwritten (0)."""
    grad = uniform(rng, (cores, n))
    reduced = np.zeros((cores, n), dtype=np.float32)
    total = grad[list(ranks)].astype(np.float64).sum(axis=0).astype(np.float32)
    for r in ranks:
        reduced[r] = total
    return {"grad": grad}, {"reduced": reduced}, []


def all_gather(rng, ranks, n):
    piece = uniform(rng, (ranks, n))
    return {"piece": piece}, {"gathered": np.stack([piece] * ranks)}, []


def ring_permute(rng, ranks, n):
    outbox = uniform(rng, (ranks, n))
    return {"outbox": outbox}, {"inbox": np.roll(outbox, 1, axis=0)}, []


def e4m3fn(codes):
    """Values of float8_e4m3fn codes (OCP FP8: bias 7, no infinities, S.1111.111 NaN)."""
    codes = codes.astype(np.int64)
    sign = np.where(codes & 0x80, -1.0, 1.0)
    exponent, mantissa = (codes >> 3) & 15, codes & 7
    normal = (1 + mantissa / 8) * np.exp2(exponent - 7.0)
    return sign * np.where(exponent == 0, mantissa / 8 * 2.0 ** -6, normal)


def matmul_mx(rng, m, k, n):
    """MXFP8: containers of four float8_e4m3fn codes (byte j = K value 4 p + j of partition p),
    one E8M0 exponent per 32 K values (partitions 8 g .. 8 g + 7 of a K tile of 512 values),
    scale tiles [TILES_K, 4 quadrants, 4, cols] (group g = 4 q + i)."""
    tiles = k // 512
    # Codes of exponent field 7 (values +-1 .. 1.875 in steps of 1/8) and exponents 126-128 keep
    # every float32 partial sum exact (22 significant bits at most), so only the final bfloat16
    # rounding differs from the float64 reference.

    def operand(cols):
        codes = (7 << 3) | rng.integers(0, 8, size=(tiles, 128, 4, cols), dtype=np.uint32)
        codes |= rng.integers(0, 2, size=codes.shape, dtype=np.uint32) << 7
        containers = (codes[:, :, 0] | codes[:, :, 1] << 8 | codes[:, :, 2] << 16 |
                      codes[:, :, 3] << 24).astype(np.uint32)
        scales = rng.integers(126, 129, size=(tiles, 4, 4, cols)).astype(np.uint8)
        group_scale = scales.reshape(tiles, 16, cols)[:, np.arange(128) // 8]  # [t, p, cols]
        values = e4m3fn(codes) * np.exp2(group_scale.astype(np.float64) - 127)[:, :, None, :]
        return containers, scales, values.reshape(k, cols)  # K index = 512 t + 4 p + j

    lhs, lhs_scale, a = operand(m)
    rhs, rhs_scale, b = operand(n)
    out = bf16((a.T @ b).astype(np.float32))
    return ({"lhsT": lhs, "rhs": rhs, "lhsT_scale": lhs_scale, "rhs_scale": rhs_scale},
            {"result": out}, BF16_TOL)


def flat_vector_add(rng, n):
    a, b = uniform(rng, (n,)), uniform(rng, (n,))
    return {"a": a, "b": b}, {"out": a + b}, []


CASES = [
    ("vector_add.json", ["T=2", "F=256"], lambda rng: vector_add(rng, (2, 128, 256))),
    ("vector_add_single_buffer.json", ["T=3", "F=128"], lambda rng: vector_add(rng, (3, 128, 128))),
    ("vector_add_t3.json", ["N=128000", "FREE_DIM=500"],
     lambda rng: vector_add(rng, (2, 128, 500))),
    ("matmul_tiled.json", ["K=256", "M=256", "N=1024"],
     lambda rng: matmul("A", "B", "C", False)(rng, 256, 256, 1024)),
    ("matmul_bf16_large.json", ["M=256", "K=256", "N=1024", "TILES_M=2", "TILES_K=2"],
     lambda rng: matmul("lhsT", "rhs", "result", True)(rng, 256, 256, 1024)),
    ("matmul_t1_v1_tiled.json", ["M=256", "K=256", "N=512"],
     lambda rng: matmul("lhsT", "rhs", "result", True)(rng, 256, 256, 512)),
    ("matmul_t1_v2_hoisted.json", ["M=256", "K=256", "N=512"],
     lambda rng: matmul("lhsT", "rhs", "result", True)(rng, 256, 256, 512)),
    ("matmul_t1_v3_blocked.json", ["M=256", "K=256", "N=1024"],
     lambda rng: matmul("lhsT", "rhs", "result", True)(rng, 256, 256, 1024)),
    # v4 adds each block of TILES_K x 128 rows of K into a bfloat16 SBUF accumulator.
    ("matmul_t1_v4_optimized.json", ["M=256", "K=512", "N=1024", "TILES_M=2", "TILES_K=2"],
     lambda rng: matmul("lhsT", "rhs", "result", True, accumulate_in_bf16_blocks=256)(
         rng, 512, 256, 1024)),
    ("transpose_tensor_engine.json", ["R=256", "C=384"], lambda rng: transpose(rng, 256, 384)),
    ("layernorm_v1.json", ["ROWS=256", "D=1024"], lambda rng: layernorm(rng, 256, 1024)),
    ("moe_grouped_matmul.json", ["EXPERTS=3", "CAP_TILES=2", "D=256", "F=512"],
     lambda rng: moe(rng, 3, 2, 256, 512)),
    ("softmax.json", ["ROWS=256", "COLS=512"], lambda rng: softmax(rng, 256, 512)),
    ("rmsnorm.json", ["ROWS=256", "D=1024"], lambda rng: rmsnorm(rng, 256, 1024)),
    ("layernorm_v2.json", ["ROWS=256", "D=1024"], lambda rng: layernorm_bn(rng, 256, 1024)),
    ("transpose_dma.json", ["R=256", "C=384"], lambda rng: transpose_bf16(rng, 256, 384)),
    ("selective_scan.json", ["CHANNELS=256", "STATES=4", "LEN=256"],
     lambda rng: selective_scan(rng, 256, 4, 256)),
    ("matmul_fp8_double_row.json", ["M=256", "K=512", "N=1024", "TILES_M=2", "TILES_K=2"],
     lambda rng: matmul_fp8_double_row(rng, 512, 256, 1024)),
    # Loads only (no output): the run must read nothing unwritten and leave src as it was.
    ("dma_load_stream.json", ["PARTS=128", "F=256", "COUNT=4", "BUFFERS=2"],
     lambda rng: unchanged_source(rng, (4, 128, 256))),
    ("dma_load_stream_hwdge.json", ["PARTS=128", "F=256", "COUNT=4"],
     lambda rng: unchanged_source(rng, (4, 128, 256))),
    # Collectives between the cores of one chip (per-core HBM tensors: one row per core).
    ("collective_all_reduce.json", ["N=1024", "STRIDE=1"], lambda rng: all_reduce(rng, 2, 1024)),
    ("collective_all_gather.json", ["R=4", "N=256"], lambda rng: all_gather(rng, 4, 256)),
    # Across two chips (cores 0 and 8 of trn2-48xl); the cores between take no part.
    ("collective_all_reduce.json", ["N=512", "STRIDE=8"],
     lambda rng: all_reduce_ranks(rng, 9, 512, (0, 8)), "trn2-48xl"),
    ("collective_permute.json", ["R=4", "STRIDE=1", "N=512"],
     lambda rng: ring_permute(rng, 4, 512)),
    ("matmul_mx.json", ["M=256", "N=1024", "K=1024", "TILES_M=2", "TILES_N=2"],
     lambda rng: matmul_mx(rng, 256, 1024, 1024)),
    ("flash_attention_fwd.json", ["SEQ=1024", "HEADS=2"],
     lambda rng: flash_attention(rng, 2, 1024, 128, (2, 8, 128, 128))),
    # NKI Python kernels: traced with the inputs' types and shapes from their files.
    ("../nki/vector_add.py::vector_add", [], lambda rng: vector_add(rng, (2, 128, 256))),
    ("../nki/vector_add.py::vector_add_single_buffer", [],
     lambda rng: vector_add(rng, (3, 128, 128))),
    ("../nki/cs149_t3.py::vector_add", [], lambda rng: flat_vector_add(rng, 256000)),
    ("../nki/cs149_t3.py::transpose", [], lambda rng: transpose(rng, 256, 384)),
    ("../nki/matmul_t1.py::matmul_v1_tiled", [],
     nki(lambda rng: matmul("lhsT", "rhs", "result", True)(rng, 256, 256, 512),
         ("lhsT", "rhs"))),
    ("../nki/matmul_t1.py::matmul_v2_hoisted", [],
     nki(lambda rng: matmul("lhsT", "rhs", "result", True)(rng, 256, 256, 512),
         ("lhsT", "rhs"))),
    ("../nki/matmul_t1.py::matmul_v3_blocked", [],
     nki(lambda rng: matmul("lhsT", "rhs", "result", True)(rng, 256, 256, 1024),
         ("lhsT", "rhs"))),
    ("../nki/matmul_t1_nki.py::matmul_v1_tiled", [],
     nki(lambda rng: matmul("lhsT", "rhs", "result", True)(rng, 256, 256, 512),
         ("lhsT", "rhs"))),
    ("../nki/matmul_t1_nki.py::matmul_v2_hoisted", [],
     nki(lambda rng: matmul("lhsT", "rhs", "result", True)(rng, 256, 256, 512),
         ("lhsT", "rhs"))),
    ("../nki/matmul_t1_nki.py::matmul_v3_blocked", [],
     nki(lambda rng: matmul("lhsT", "rhs", "result", True)(rng, 256, 256, 1024),
         ("lhsT", "rhs"))),
    ("../nki/matmul_t1.py::matmul_v4_optimized", [],
     nki(lambda rng: matmul("lhsT", "rhs", "result", True)(rng, 1024, 2048, 1024),
         ("lhsT", "rhs"))),
    # The tutorial's v4 blocks are fixed (BLOCK_M 2048, BLOCK_K and BLOCK_N 1024): one block.
    ("../nki/matmul_t1_nki.py::matmul_v4_optimized", [],
     nki(lambda rng: matmul("lhsT", "rhs", "result", True)(rng, 1024, 2048, 1024),
         ("lhsT", "rhs"))),
    ("../nki/layernorm.py::layernorm_v1", [], lambda rng: layernorm_1d(rng, 256, 1024)),
    ("../nki/layernorm.py::layernorm_v2", [], lambda rng: layernorm_1d(rng, 256, 1024)),
    ("../nki/softmax.py::softmax", [], lambda rng: softmax(rng, 256, 512)),
    ("../nki/rmsnorm.py::rmsnorm", [], nki(lambda rng: rmsnorm_1d(rng, 256, 1024),
                                           ("x", "gamma"))),
    ("../nki/selective_scan.py::selective_scan", [],
     lambda rng: selective_scan_2d(rng, 256, 4, 256)),
    ("../nki/flash_attention_fwd.py::flash_attention_fwd", [],
     nki(lambda rng: flash_attention(rng, 2, 1024, 128, (2, 1024, 128)), ("q", "k", "v"))),
]


def run_case(trnsim, kernels_dir, case, index):
    name, params, make = case[:3]
    config = case[3] if len(case) > 3 else None
    rng = np.random.default_rng(1000 + index)
    inputs, expected, tolerance = make(rng)
    with tempfile.TemporaryDirectory() as work:
        command = [trnsim, "run", os.path.join(kernels_dir, name), "--numerics", "-q"]
        if ".py::" in name:
            command += ["-c", "trn2"]
        if name == "matmul_mx.json":
            command += ["-c", "trn4"]  # nc_matmul_mx needs NeuronCore-v4
        if config:
            command += ["-c", config]
        for p in params:
            command += ["-p", p]
        for tensor, values in inputs.items():
            path = os.path.join(work, tensor + ".npy")
            if isinstance(values, Bf16Input):
                values.save(path)
            else:
                np.save(path, values)
            command += ["--input", f"{tensor}={path}"]
        for tensor, values in expected.items():
            path = os.path.join(work, "expected_" + tensor + ".npy")
            np.save(path, values)
            command += ["--expect", f"{tensor}={path}"]
        command += tolerance
        run = subprocess.run(command, capture_output=True, text=True, timeout=600)
    problems = []
    if run.returncode != 0:
        problems.append(f"exit {run.returncode}")
    if "warning" in run.stderr:
        problems.append("warnings")
    return name, problems, run.stderr


def main():
    trnsim, kernels_dir = sys.argv[1], sys.argv[2]
    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
        results = list(pool.map(lambda item: run_case(trnsim, kernels_dir, item[1], item[0]),
                                enumerate(CASES)))
    failed = 0
    for name, problems, stderr in results:
        if problems:
            failed += 1
            print(f"FAIL {name}: {', '.join(problems)}\n{stderr}")
        else:
            print(f"ok   {name}: {stderr.strip().splitlines()[-1] if stderr.strip() else ''}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
