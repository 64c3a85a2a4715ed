"""Idioms of the public NKI tutorials and samples, written here in their style: launch grids,
index expressions from nl.arange/nl.mgrid (virtual dimensions, free-axis permutations), block
dimensions, masks, shape annotations, wrappers that launch a kernel, and both API generations."""

import unittest

from nki_test_support import NEW, TraceCase, instructions, loops


class ClassicTutorials(TraceCase):
    def test_tensor_addition_with_a_launch_grid(self):
        source = """
            @nki.jit
            def tensor_add_kernel(a_input, b_input):
                c_output = nl.ndarray(a_input.shape, dtype=a_input.dtype, buffer=nl.shared_hbm)
                offset_i_x = nl.program_id(0) * 128
                offset_i_y = nl.program_id(1) * 512
                ix = offset_i_x + nl.arange(128)[:, None]
                iy = offset_i_y + nl.arange(512)[None, :]
                a_tile = nl.load(a_input[ix, iy])
                b_tile = nl.load(b_input[ix, iy])
                c_tile = a_tile + b_tile
                nl.store(c_output[ix, iy], value=c_tile)
                return c_output

            def tensor_add(a_input, b_input):
                grid_x = a_input.shape[0] // 128
                grid_y = a_input.shape[1] // 512
                return tensor_add_kernel[grid_x, grid_y](a_input, b_input)
        """
        inputs = {"a_input": ("bfloat16", [256, 1024]), "b_input": ("bfloat16", [256, 1024])}
        for func, grid in (("tensor_add_kernel", ((1, 2), (1, 2))), ("tensor_add", ())):
            with self.subTest(func=func):
                doc, _ = self.trace(source, func, inputs, grid=grid)
                outer, inner = loops(doc["program"])
                self.assertEqual((outer["for"], outer["range"]), ("program0", 2))
                self.assertEqual((inner["for"], inner["range"]), ("program1", 2))
                load = instructions(doc["program"])[0]
                self.assertEqual(load["src"],
                                 "a_input[128*program0:128*program0 + 128, "
                                 "512*program1:512*program1 + 512]")
                outs = [n for n, t in doc["tensors"].items() if t["memory"] == "hbm"]
                self.assertEqual(len(outs), 3)  # one shared output for every program

    def test_programs_over_two_neuron_cores(self):
        source = """
            @nki.jit
            def add(a, b):
                out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
                i = nl.program_id(0)
                nl.store(out[i * 128:(i + 1) * 128], value=nl.load(a[i * 128:(i + 1) * 128]) +
                         nl.load(b[i * 128:(i + 1) * 128]))
                return out

            def launch(a, b):
                return add[nl.spmd_dim(nl.nc(2), 2)](a, b)
        """
        doc, _ = self.trace(source, "launch", {"a": ("float32", [512, 64]),
                                               "b": ("float32", [512, 64])})
        self.assertEqual(doc["cores"], 2)
        (loop,) = loops(doc["program"])
        load = loop["body"][0]
        # program id = 2*pid + program0: core-major, two programs per core
        self.assertEqual(load["src"], "a[256*pid + 128*program0:256*pid + 128*program0 + 128]")

    def test_transpose_by_permuted_index_expressions(self):
        source = """
            @nki.jit
            def transpose2d(in_tensor, shape2D):
                out_tensor = nl.ndarray(in_tensor.shape, dtype=in_tensor.dtype, buffer=nl.shared_hbm)
                sz_p, _ = in_tensor.shape
                sz_f1, sz_f2 = shape2D
                i_p0 = nl.arange(sz_p)[:, None, None]
                i_f0 = nl.arange(sz_f1)[None, :, None]
                i_f1 = nl.arange(sz_f2)[None, None, :]
                in_tile = nl.ndarray(shape=(sz_p, sz_f1, sz_f2), dtype=in_tensor.dtype)
                in_tile[i_p0, i_f0, i_f1] = nl.load(in_tensor[i_p0, i_f0 * sz_f2 + i_f1])
                out_tile = nl.ndarray(shape=(sz_p, sz_f2, sz_f1), dtype=out_tensor.dtype)
                out_tile[i_p0, i_f1, i_f0] = nl.copy(in_tile[i_p0, i_f0, i_f1])
                nl.store(out_tensor[i_p0, i_f1 * sz_f1 + i_f0], value=out_tile[i_p0, i_f1, i_f0])
                return out_tensor
        """
        doc, _ = self.trace(source, "transpose2d", {"in_tensor": ("float32", [128, 48])},
                            kwargs={"shape2D": (8, 6)})
        load, copy, store = instructions(doc["program"])
        # the load splits the free axis into [8, 6]: element (f0, f1) at f0*6 + f1
        self.assertEqual(load["src"], "in_tensor.ap(0, [48, 128], [6, 8], [1, 6])")
        self.assertEqual(load["dst"], "in_tile")
        # the copy writes out_tile[p, f1, f0] for each (f0, f1): a transposed pattern over the
        # [6, 8] layout of out_tile (f1 strides 8, f0 strides 1)
        self.assertEqual(copy["op"], "tensor_copy")
        self.assertEqual(copy["dst"], "out_tile.ap(0:128, 0, [1, 8], [8, 6])")
        self.assertEqual(copy["src"], "in_tile")
        # the store reads it back transposed and writes out[p, f1*8 + f0]
        self.assertEqual(store["src"], "out_tile.ap(0:128, 0, [1, 8], [8, 6])")
        self.assertEqual(store["dst"], "out_tensor.ap(0, [48, 128], [1, 8], [8, 6])")

    def test_average_pool_with_virtual_dimensions(self):
        source = """
            from neuronxcc.nki.typing import tensor

            @nki.jit
            def avgpool(in_tensor, pool_size):
                sz_cin, sz_hin, sz_win = in_tensor.shape
                sz_hout, sz_wout = sz_hin // pool_size, sz_win // pool_size
                out_tensor = nl.ndarray((sz_cin, sz_hout, sz_wout), dtype=in_tensor.dtype,
                                        buffer=nl.shared_hbm)
                sz_p, sz_pool = sz_cin, pool_size
                i0, i1, i2, i3, i4 = nl.mgrid[0:sz_p, 0:sz_hin // sz_pool, 0:sz_pool,
                                              0:sz_win // sz_pool, 0:sz_pool]
                in_tile: tensor[sz_p, sz_hin, sz_win] = nl.load(in_tensor)
                out_tile: tensor[sz_p, sz_hout, sz_wout] = nl.sum(
                    in_tile[i0, sz_pool * i1 + i2, sz_pool * i3 + i4], axis=[2, 4]) / (pool_size * pool_size)
                nl.store(out_tensor, value=out_tile)
                return out_tensor
        """
        doc, _ = self.trace(source, "avgpool", {"in_tensor": ("float32", [128, 16, 16])},
                            kwargs={"pool_size": 2})
        ops = [st["op"] for st in instructions(doc["program"])]
        self.assertEqual(ops, ["dma_copy", "tensor_reduce", "tensor_scalar", "dma_copy"])
        reduce = instructions(doc["program"])[1]
        # [P, 8, 2, 8, 2] over a row-major [16, 16]: strides 32, 16, 2, 1
        self.assertEqual(reduce["src"], "in_tile.ap(0:128, 0, [32, 8], [16, 2], [2, 8], [1, 2])")
        self.assertEqual(reduce["axis"], [2, 4])

    def test_masked_last_tile_of_a_ragged_row_count(self):
        source = """
            import math

            @nki.jit
            def copy_rows(x):
                R, D = x.shape
                out = nl.ndarray((R, D), dtype=x.dtype, buffer=nl.shared_hbm)
                i_p = nl.arange(128)[:, None]
                i_f = nl.arange(D)[None, :]
                for i in nl.affine_range(math.ceil(R / 128)):
                    rows = i * 128 + i_p
                    t = nl.load(x[rows, i_f], mask=(rows < R))
                    nl.store(out[rows, i_f], value=t, mask=(rows < R))
                return out
        """
        doc, info = self.trace(source, "copy_rows", {"x": ("float32", [300, 64])})
        self.assertEqual(info["restarts"], 1)  # the masked extent differs per iteration
        loads = [st for st in instructions(doc["program"]) if st["src"].startswith("x")]
        self.assertEqual([st["src"] for st in loads],
                         ["x[0:128]", "x[128:256]", "x[256:300]"])

    def test_block_dimensions_and_mgrid(self):
        source = """
            @nki.jit
            def k(lhsT):
                K, M = lhsT.shape
                out = nl.ndarray((128, M), dtype=lhsT.dtype, buffer=nl.shared_hbm)
                i = nl.mgrid[0:128, 0:M]
                tiles = nl.ndarray((K // 128, nl.par_dim(128), M), dtype=lhsT.dtype, buffer=nl.sbuf)
                for k in nl.affine_range(K // 128):
                    tiles[k, i.p, i.x] = nl.load(lhsT[k * 128 + i.p, i.x])
                nl.store(out, value=tiles[0, i.p, i.x])
                return out
        """
        doc, _ = self.trace(source, "k", {"lhsT": ("bfloat16", [512, 256])})
        self.assertEqual(doc["tensors"]["tiles"]["shape"], [4, 128, 256])
        self.assertEqual(doc["tensors"]["tiles"]["partition_dim"], 1)
        load = instructions(doc["program"])[0]
        self.assertEqual(load["dst"], "tiles[k]")
        self.assertEqual(load["src"], "lhsT[128*k:128*k + 128]")

    def test_numpy_ufuncs_as_operators(self):
        try:
            import numpy as np  # noqa: F401
        except ImportError:
            self.skipTest("python3-numpy is not installed")
        source = """
            import numpy as np

            @nki.jit
            def scan(d, u):
                out = nl.ndarray(d.shape, dtype=d.dtype, buffer=nl.shared_hbm)
                dt = nl.load(d)
                ut = nl.load(u)
                r = nisa.tensor_tensor_scan(dt, ut, initial=0, op0=np.multiply, op1=np.add)
                m = nisa.tensor_reduce(np.max, r, axis=(1,))
                nl.store(out, value=nisa.tensor_scalar(r, np.subtract, m))
                return out
        """
        doc, _ = self.trace(source, "scan", {"d": ("float32", [128, 64]),
                                             "u": ("float32", [128, 64])})
        scan, red, ts = [st for st in instructions(doc["program"]) if st["op"] != "dma_copy"]
        self.assertEqual((scan["op0"], scan["op1"]), ("multiply", "add"))
        self.assertEqual(red["alu"], "max")
        self.assertEqual(ts["op0"], "subtract")


    def test_loop_reduce_accumulates_into_its_destination(self):
        source = """
            @nki.jit
            def k(x):
                out = nl.ndarray((128, 64), dtype=nl.float32, buffer=nl.shared_hbm)
                acc = nl.zeros((128, 64), dtype=nl.float32, buffer=nl.sbuf)
                for i in nl.affine_range(4):
                    acc[...] = nl.loop_reduce(nl.load(x[i]), op=nl.maximum, loop_indices=[i])
                nl.store(out, value=acc)
                return out
        """
        doc, _ = self.trace(source, "k", {"x": ("float32", [4, 128, 64])})
        (loop,) = loops(doc["program"])
        red = [st for st in loop["body"] if st.get("op") == "tensor_tensor"]
        self.assertEqual(len(red), 1)
        self.assertEqual((red[0]["dst"], red[0]["in0"], red[0]["alu"]), ("acc", "acc", "max"))

    def test_indirect_rows_are_timed_as_consecutive_rows(self):
        source = """
            @nki.jit
            def gather(table, idx):
                out = nl.ndarray((128, 64), dtype=table.dtype, buffer=nl.shared_hbm)
                ids = nl.load(idx)
                i_p = nl.arange(128)[:, None]
                i_f = nl.arange(64)[None, :]
                rows = nl.load(table[ids[i_p, 0], i_f])
                nl.store(out, value=rows)
                return out
        """
        doc, _ = self.trace(source, "gather", {"table": ("float32", [1000, 64]),
                                               "idx": ("int32", [128, 1])})
        loads = [st for st in instructions(doc["program"]) if st["op"] == "dma_copy"]
        self.assertEqual(loads[1]["src"], "table[0:128]")


class NewApi(TraceCase):
    def test_matmul_tutorial_basic(self):
        source = """
            @nki.jit
            def matmul_basic(lhsT, rhs):
                result = nl.ndarray((64, 512), dtype=lhsT.dtype, buffer=nl.shared_hbm)
                lhs_tile = nl.ndarray(lhsT.shape, dtype=lhsT.dtype, buffer=nl.sbuf)
                nisa.dma_copy(dst=lhs_tile, src=lhsT)
                rhs_tile = nl.ndarray(rhs.shape, dtype=rhs.dtype, buffer=nl.sbuf)
                nisa.dma_copy(dst=rhs_tile, src=rhs)
                result_psum = nl.ndarray((64, 512), dtype=nl.float32, buffer=nl.psum)
                nisa.nc_matmul(dst=result_psum, stationary=lhs_tile, moving=rhs_tile)
                result_sbuf = nl.ndarray(result_psum.shape, dtype=result.dtype, buffer=nl.sbuf)
                nisa.tensor_copy(dst=result_sbuf, src=result_psum, dtype=result.dtype)
                nisa.dma_copy(dst=result, src=result_sbuf)
                return result
        """
        doc, _ = self.trace(source, "matmul_basic", {"lhsT": ("bfloat16", [128, 64]),
                                                     "rhs": ("bfloat16", [128, 512])}, header=NEW)
        ops = [st["op"] for st in instructions(doc["program"])]
        self.assertEqual(ops, ["dma_copy", "dma_copy", "nc_matmul", "tensor_copy", "dma_copy"])
        mm = instructions(doc["program"])[2]
        self.assertNotIn("accumulate", mm)  # the first write of the PSUM tile overwrites

    def test_memset_psum_then_default_accumulate(self):
        source = """
            @nki.jit
            def mm(lhsT, rhs):
                K, M = lhsT.shape
                result = nl.ndarray((M, 512), dtype=nl.float32, buffer=nl.shared_hbm)
                res_psum = nl.ndarray((M, 512), dtype=nl.float32, buffer=nl.psum)
                nisa.memset(dst=res_psum, value=0.0)
                for k in nl.affine_range(K // 128):
                    lt = nl.ndarray((128, M), dtype=lhsT.dtype, buffer=nl.sbuf)
                    rt = nl.ndarray((128, 512), dtype=rhs.dtype, buffer=nl.sbuf)
                    nisa.dma_copy(dst=lt, src=lhsT[k * 128:(k + 1) * 128, :])
                    nisa.dma_copy(dst=rt, src=rhs[k * 128:(k + 1) * 128, :])
                    nisa.nc_matmul(res_psum, lt, rt)
                res = nl.ndarray((M, 512), dtype=nl.float32, buffer=nl.sbuf)
                nisa.tensor_copy(dst=res, src=res_psum)
                nisa.dma_copy(dst=result, src=res)
                return result
        """
        doc, _ = self.trace(source, "mm", {"lhsT": ("bfloat16", [384, 128]),
                                           "rhs": ("bfloat16", [384, 512])}, header=NEW)
        ops = [st["op"] for st in instructions(doc["program"])]
        self.assertNotIn("memset", ops)  # folded: the first matmul overwrites
        self.assertEqual(ops.count("nc_matmul"), 3)
        self.assertEqual(loops(doc["program"]), [])  # new API: range is unrolled


if __name__ == "__main__":
    unittest.main()


class TutorialStyleKernels(TraceCase):
    """Whole kernels under tests/nki/kernels/, traced as a user would."""

    def kernel(self, name):
        import os

        from nki_test_support import HERE
        return os.path.join(os.path.dirname(HERE), "kernels", name)

    def trace_file(self, path, func, inputs, kwargs=None):
        from nki_test_support import driver, dtypes, target
        parsed = {n: (dtypes.dtype_of(d), tuple(s)) for n, (d, s) in inputs.items()}
        return driver.trace_kernel(path, func, parsed, kwargs or {}, (), target())

    def test_attention_style(self):
        try:
            import numpy  # noqa: F401
        except ImportError:
            self.skipTest("python3-numpy is not installed")
        doc, info = self.trace_file(self.kernel("attention_style.py"), "fused_self_attn",
                                    {n: ("float32", [512, 64]) for n in ("q_ref", "k_ref", "v_ref")},
                                    {"use_causal_mask": True})
        self.assertEqual(info["restarts"], 0)
        ops = [st["op"] for st in instructions(doc["program"])]
        # float32 q/k loaded transposed into bfloat16: staged, transposed on TensorE, cast
        self.assertNotIn("dma_transpose", ops)
        sel = [st for st in instructions(doc["program"]) if st["op"] == "affine_select"][0]
        self.assertEqual(sel["pred"], "-f0 - 128*i_k_seq_tile + 128*i_q_seq_tile + p")
        # GpSimd cannot read PSUM: the mask reads an SBUF copy of the scores
        src_tensor = sel["src"].split("[")[0].split(".")[0]
        self.assertEqual(doc["tensors"][src_tensor]["memory"], "sbuf")
        store = [st for st in instructions(doc["program"]) if st["op"] == "dma_copy"][-1]
        self.assertEqual(store["dst"], "out_ref.ap(8192*i_q_seq_tile, [1, 64], [64, 128])")

    def test_mamba_style(self):
        try:
            import numpy  # noqa: F401
        except ImportError:
            self.skipTest("python3-numpy is not installed")
        doc, info = self.trace_file(self.kernel("mamba_style.py"), "mamba_v1",
                                    {"delta": ("float32", [1, 256, 512]),
                                     "u": ("float32", [1, 256, 512]),
                                     "A": ("float32", [256, 16]),
                                     "B": ("float32", [1, 16, 512]),
                                     "C": ("float32", [1, 16, 512])})
        self.assertEqual([lp["for"] for lp in loops(doc["program"])],
                         ["i_batch", "i_channel_tile", "i_state"])
        scan = [st for st in instructions(doc["program"]) if st["op"] == "tensor_tensor_scan"]
        self.assertEqual(len(scan), 1)
        # scanC_accum = zeros, += in the state loop: the first state writes it directly
        ifs = [st for st in loops(doc["program"])[-1]["body"] if "if" in st]
        self.assertEqual(ifs[0]["if"], "i_state == 0")


class NewApiPatterns(TraceCase):
    def test_iota_and_affine_select_patterns(self):
        source = """
            @nki.jit
            def k(x):
                out = nl.ndarray((128, 64), dtype=nl.float32, buffer=nl.shared_hbm)
                idx = nl.ndarray((128, 64), dtype=nl.int32, buffer=nl.sbuf)
                nisa.iota(dst=idx, pattern=[[1, 64]], offset=0, channel_multiplier=64)
                t = nl.ndarray((128, 64), dtype=nl.float32, buffer=nl.sbuf)
                nisa.dma_copy(dst=t, src=x)
                masked = nl.ndarray((128, 64), dtype=nl.float32, buffer=nl.sbuf)
                nisa.affine_select(dst=masked, pattern=[[-1, 64]], channel_multiplier=1,
                                   on_true_tile=t, on_false_value=-9984.0,
                                   cmp_op=nl.greater_equal)
                nisa.dma_copy(dst=out, src=masked)
                return out
        """
        doc, _ = self.trace(source, "k", {"x": ("float32", [128, 64])}, header=NEW)
        iota, _, select, _ = instructions(doc["program"])
        self.assertEqual(iota["expr"], "f0 + 64*p")
        self.assertEqual((select["pred"], select["cmp"]), ("-f0 + p", "ge"))
