"""Lowering NKI kernels to trnsim-kernel/1: loops, rotation, first touches, engines, queues.

Expected operands are written out by hand from the rules in docs/nki-frontend.md."""

import unittest

from nki_test_support import NEW, TraceCase, instructions, loops


class SymbolicLoops(TraceCase):
    VADD = """
        @nki.jit
        def vadd(a, b):
            R, C = a.shape
            out = nl.ndarray((R, C), dtype=a.dtype, buffer=nl.shared_hbm)
            for r in nl.affine_range(R // 128):
                ta = nl.load(a[r * 128:(r + 1) * 128, :])
                tb = nl.load(b[r * 128:(r + 1) * 128, :])
                nl.store(out[r * 128:(r + 1) * 128, :], value=ta + tb)
            return out
    """

    def test_affine_range_becomes_one_loop_with_rotating_tiles(self):
        doc, info = self.trace(self.VADD, "vadd", {"a": ("float32", [1024, 512]),
                                                   "b": ("float32", [1024, 512])})
        (loop,) = doc["program"]
        self.assertEqual(loop["for"], "r")
        self.assertEqual(loop["range"], 8)
        ops = [st["op"] for st in loop["body"]]
        self.assertEqual(ops, ["dma_copy", "dma_copy", "tensor_tensor", "dma_copy"])
        load_a, load_b, add, store = loop["body"]
        self.assertEqual(load_a["src"], "a[128*r:128*r + 128]")
        self.assertEqual(load_a["dst"], "ta[r % 2]")  # two buffers, iteration r uses r % 2
        self.assertEqual(doc["tensors"]["ta"]["shape"], [2, 128, 512])
        self.assertEqual(doc["tensors"]["ta"]["partition_dim"], 1)
        self.assertEqual(add["alu"], "add")
        self.assertEqual(store["dst"], "out[128*r:128*r + 128]")
        self.assertEqual(info["restarts"], 0)

    def test_dma_call_sites_spread_over_queues_round_robin(self):
        doc, _ = self.trace(self.VADD, "vadd", {"a": ("float32", [256, 64]),
                                                "b": ("float32", [256, 64])})
        queues = [st["queue"] for st in instructions(doc["program"]) if st["op"] == "dma_copy"]
        self.assertEqual(queues, [0, 1, 2])
        doc, _ = self.trace(self.VADD, "vadd", {"a": ("float32", [256, 64]),
                                                "b": ("float32", [256, 64])},
                            compiler={"dma_queues": 2})
        queues = [st["queue"] for st in instructions(doc["program"]) if st["op"] == "dma_copy"]
        self.assertEqual(queues, [0, 1, 0])

    def test_dma_copies_get_the_compilers_descriptor_generation(self):
        inputs = {"a": ("float32", [256, 64]), "b": ("float32", [256, 64])}
        doc, _ = self.trace(self.VADD, "vadd", inputs, compiler={"dge_mode": "hwdge"})
        dges = [st.get("dge") for st in instructions(doc["program"]) if st["op"] == "dma_copy"]
        self.assertEqual(dges, ["hwdge", "hwdge", "hwdge"])
        # none (trn1, which has no DGE): prebuilt descriptors, the format's default, so no key
        doc, _ = self.trace(self.VADD, "vadd", inputs, compiler={"dge_mode": "none"})
        dges = [st.get("dge") for st in instructions(doc["program"]) if st["op"] == "dma_copy"]
        self.assertEqual(dges, [None, None, None])

    CAST_LOAD = """
        @nki.jit
        def cast_load(a):
            out = nl.ndarray((128, 64), dtype=nl.float32, buffer=nl.shared_hbm)
            t = nl.ndarray((128, 64), dtype=nl.bfloat16, buffer=nl.sbuf)
            nisa.dma_copy(dst=t, src=a)
            nisa.dma_copy(dst=out, src=t, dge_mode=nisa.dge_mode.swdge)
            return out
    """

    def test_a_casting_dma_keeps_prebuilt_descriptors_and_a_kernels_mode_wins(self):
        doc, _ = self.trace(self.CAST_LOAD, "cast_load", {"a": ("float32", [128, 64])},
                            compiler={"dge_mode": "hwdge"})
        dges = [st.get("dge") for st in instructions(doc["program"]) if st["op"] == "dma_copy"]
        self.assertEqual(dges, [None, "swdge"])

    HWDGE_ON_CAST = """
        @nki.jit
        def hw_cast(a):
            t = nl.ndarray((128, 64), dtype=nl.bfloat16, buffer=nl.sbuf)
            nisa.dma_copy(dst=t, src=a, dge_mode=nisa.dge_mode.hwdge)
            return a
    """

    def test_hardware_dge_is_refused_where_the_hardware_has_none(self):
        message, line = self.trace_error(self.HWDGE_ON_CAST, "hw_cast",
                                         {"a": ("float32", [128, 64])})
        self.assertIn("cannot use dge_mode hwdge", message)
        self.assertEqual(line, 8)  # 3 header lines, then the source
        message, line = self.trace_error(self.HWDGE_ON_CAST, "hw_cast",
                                         {"a": ("bfloat16", [128, 64])}, nc_version=2,
                                         name="trn1")
        self.assertIn("dge_mode hwdge needs a NeuronCore with hardware DGE", message)
        self.assertEqual(line, 8)  # 3 header lines, then the source

    def test_one_buffer_per_loop_tile_when_configured(self):
        doc, _ = self.trace(self.VADD, "vadd", {"a": ("float32", [1024, 512]),
                                                "b": ("float32", [1024, 512])},
                            compiler={"loop_tile_buffers": 1})
        self.assertEqual(doc["tensors"]["ta"]["shape"], [128, 512])
        self.assertEqual(doc["program"][0]["body"][0]["dst"], "ta")

    def test_every_instruction_names_its_source_line(self):
        doc, _ = self.trace(self.VADD, "vadd", {"a": ("float32", [256, 64]),
                                                "b": ("float32", [256, 64])})
        lines = [int(st["source"].rsplit(":", 1)[1]) for st in instructions(doc["program"])]
        # header is 3 lines, the kernel's "ta = nl.load" is line 4 of the dedented source + 3
        self.assertEqual(lines, [10, 11, 12, 12])

    def test_a_python_condition_on_the_index_unrolls_that_loop(self):
        source = """
            @nki.jit
            def k(a):
                out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
                for i in nl.affine_range(4):
                    t = nl.load(a[i])
                    if i == 0:
                        t = nl.exp(t)
                    nl.store(out[i], value=t)
                return out
        """
        doc, info = self.trace(source, "k", {"a": ("float32", [4, 128, 64])})
        self.assertEqual(info["restarts"], 1)
        self.assertEqual(loops(doc["program"]), [])
        ops = [st["op"] for st in instructions(doc["program"])]
        self.assertEqual(ops.count("activation"), 1)
        self.assertEqual(ops.count("dma_copy"), 8)

    def test_plain_range_is_unrolled(self):
        source = """
            @nki.jit
            def k(a):
                out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
                for i in range(3):
                    nl.store(out[i], value=nl.load(a[i]))
                return out
        """
        doc, _ = self.trace(source, "k", {"a": ("float32", [3, 128, 64])})
        self.assertEqual(loops(doc["program"]), [])
        srcs = [st["src"] for st in instructions(doc["program"]) if st["src"].startswith("a")]
        self.assertEqual(srcs, ["a[0]", "a[1]", "a[2]"])

    def test_triangular_loop_bounds_stay_symbolic(self):
        source = """
            @nki.jit
            def k(a):
                out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
                for i in nl.affine_range(4):
                    for j in nl.affine_range(i + 1):
                        nl.store(out[j], value=nl.load(a[i]))
                return out
        """
        doc, _ = self.trace(source, "k", {"a": ("float32", [4, 128, 64])})
        outer, inner = loops(doc["program"])
        self.assertEqual(inner["range"], "i + 1")


class Accumulation(TraceCase):
    MATMUL = """
        @nki.jit
        def mm(aT, b):
            K, M = aT.shape
            _, N = b.shape
            out = nl.ndarray((M, N), dtype=b.dtype, buffer=nl.shared_hbm)
            for m in nl.affine_range(M // 128):
                for n in nl.affine_range(N // 512):
                    acc = nl.zeros((128, 512), dtype=nl.float32, buffer=nl.psum)
                    for k in nl.affine_range(K // 128):
                        st = nl.load(aT[k * 128:(k + 1) * 128, m * 128:(m + 1) * 128])
                        mv = nl.load(b[k * 128:(k + 1) * 128, n * 512:(n + 1) * 512])
                        acc += nisa.nc_matmul(st, mv)
                    nl.store(out[m * 128:(m + 1) * 128, n * 512:(n + 1) * 512],
                             value=nl.copy(acc, dtype=out.dtype))
            return out
    """

    def test_psum_zeroing_folds_into_the_first_matmul(self):
        doc, _ = self.trace(self.MATMUL, "mm", {"aT": ("bfloat16", [512, 256]),
                                                "b": ("bfloat16", [512, 1024])})
        ops = [st["op"] for st in instructions(doc["program"])]
        self.assertNotIn("memset", ops)
        (mm,) = [st for st in instructions(doc["program"]) if st["op"] == "nc_matmul"]
        self.assertEqual(mm["accumulate"], "k != 0")
        self.assertEqual(mm["dst"], "acc[n]")  # (2*m + n) % 2 == n for n in [0, 2)
        self.assertEqual(mm["stationary"], "st[k % 2]")

    def test_zeroing_is_kept_when_something_reads_the_zeros(self):
        source = """
            @nki.jit
            def k(a):
                out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
                acc = nl.zeros((128, 512), dtype=nl.float32, buffer=nl.psum)
                nl.store(out, value=nl.copy(acc))
                return out
        """
        doc, _ = self.trace(source, "k", {"a": ("float32", [128, 512])})
        memsets = [st for st in instructions(doc["program"]) if st["op"] == "memset"]
        self.assertEqual(len(memsets), 1)
        self.assertNotIn("engine", memsets[0])  # PSUM: VectorE, the default

    def test_sbuf_accumulator_first_update_is_a_copy(self):
        source = """
            @nki.jit
            def k(a):
                out = nl.ndarray((128, 64), dtype=nl.float32, buffer=nl.shared_hbm)
                acc = nl.zeros((128, 64), dtype=nl.float32, buffer=nl.sbuf)
                for i in nl.affine_range(4):
                    acc += nl.load(a[i])
                nl.store(out, value=acc)
                return out
        """
        doc, _ = self.trace(source, "k", {"a": ("float32", [4, 128, 64])})
        (loop,) = loops(doc["program"])
        cond = [st for st in loop["body"] if "if" in st][0]
        self.assertEqual(cond["if"], "i == 0")
        self.assertEqual([st["op"] for st in cond["then"]], ["dma_copy"])  # loaded straight in
        self.assertEqual([st["op"] for st in cond["else"]], ["dma_copy", "tensor_tensor"])

    def test_new_api_accumulate_none_overwrites_on_first_write(self):
        source = """
            @nki.jit
            def k(aT, b):
                out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
                acc = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.psum)
                for kk in range(3):
                    st = nl.ndarray((128, 128), dtype=aT.dtype, buffer=nl.sbuf)
                    mv = nl.ndarray((128, 512), dtype=b.dtype, buffer=nl.sbuf)
                    nisa.dma_copy(dst=st, src=aT[kk * 128:(kk + 1) * 128, :])
                    nisa.dma_copy(dst=mv, src=b[kk * 128:(kk + 1) * 128, :])
                    nisa.nc_matmul(dst=acc, stationary=st, moving=mv)
                res = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
                nisa.tensor_copy(dst=res, src=acc)
                nisa.dma_copy(dst=out, src=res)
                return out
        """
        doc, _ = self.trace(source, "k", {"aT": ("bfloat16", [384, 128]),
                                          "b": ("bfloat16", [384, 512])}, header=NEW)
        mms = [st for st in instructions(doc["program"]) if st["op"] == "nc_matmul"]
        self.assertEqual([m.get("accumulate", False) for m in mms], [False, True, True])


class Engines(TraceCase):
    def test_language_calls_map_to_engines(self):
        source = """
            @nki.jit
            def k(x):
                out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
                t = nl.load(x)
                e = nl.exp(t)                  # ScalarE activation
                s = nl.sum(e, axis=1)          # VectorE tensor_reduce
                r = nl.reciprocal(s)           # VectorE reciprocal
                y = nl.multiply(e, r)          # [P, F] x [P, 1]: VectorE tensor_scalar
                p = nl.power(y, y)             # GpSimd tensor_tensor
                nl.store(out, value=p)
                return out
        """
        doc, _ = self.trace(source, "k", {"x": ("float32", [128, 256])})
        got = [(st["op"], st.get("engine")) for st in instructions(doc["program"])]
        self.assertEqual(got, [("dma_copy", None), ("activation", None),
                               ("tensor_reduce", None), ("reciprocal", None),
                               ("tensor_scalar", None), ("tensor_tensor", "gpsimd"),
                               ("dma_copy", None)])

    def test_scalar_chains_fuse_into_one_tensor_scalar(self):
        source = """
            @nki.jit
            def k(x):
                out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
                t = nl.load(x)
                nl.store(out, value=t * 0.5 + 1.0)
                return out
        """
        doc, _ = self.trace(source, "k", {"x": ("float32", [128, 64])})
        (ts,) = [st for st in instructions(doc["program"]) if st["op"] == "tensor_scalar"]
        self.assertEqual((ts["op0"], ts["operand0"], ts["op1"], ts["operand1"]),
                         ("multiply", 0.5, "add", 1.0))

    def test_partition_broadcast_is_a_matmul_with_ones(self):
        source = """
            @nki.jit
            def k(x, g):
                out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
                gb = nl.load(g).broadcast_to((128, 1024))
                nl.store(out, value=nl.multiply(nl.load(x), gb))
                return out
        """
        doc, _ = self.trace(source, "k", {"x": ("float32", [128, 1024]),
                                          "g": ("float32", [1, 1024])})
        ops = [st["op"] for st in instructions(doc["program"])]
        # one ones row, and per PSUM bank of 512 FP32: a matmul and a copy
        self.assertEqual(ops.count("memset"), 1)
        self.assertEqual(ops.count("nc_matmul"), 2)
        self.assertEqual(ops.count("tensor_copy"), 2)
        self.assertEqual(ops[0], "memset")  # constants come first


class Allocation(TraceCase):
    def test_explicit_buffer_lists_keep_their_buffers(self):
        source = """
            @nki.jit
            def k(x):
                out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
                bufs = [nl.ndarray((128, 64), dtype=x.dtype, buffer=nl.sbuf) for _ in range(3)]
                for i in range(6):
                    t = bufs[i % 3]
                    nisa.dma_copy(dst=t, src=x[i])
                    nisa.dma_copy(dst=out[i], src=t)
                return out
        """
        doc, _ = self.trace(source, "k", {"x": ("float32", [6, 128, 64])}, header=NEW)
        (pool,) = [name for name, t in doc["tensors"].items() if t["memory"] == "sbuf"]
        self.assertEqual(doc["tensors"][pool]["shape"], [3, 128, 64])
        dsts = [st["dst"] for st in instructions(doc["program"]) if st["dst"].startswith(pool)]
        self.assertEqual(dsts, [f"{pool}[{i % 3}]" for i in range(6)])

    def test_tiles_of_an_unrolled_loop_rotate_like_a_traced_loop(self):
        source = """
            @nki.jit
            def k(x):
                out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
                for i in range(4):
                    t = nl.ndarray((128, 64), dtype=x.dtype, buffer=nl.sbuf)
                    nisa.dma_copy(dst=t, src=x[i])
                    nisa.dma_copy(dst=out[i], src=t)
                return out
        """
        doc, _ = self.trace(source, "k", {"x": ("float32", [4, 128, 64])}, header=NEW)
        dsts = [st["dst"] for st in instructions(doc["program"]) if st["dst"].startswith("t")]
        self.assertEqual(dsts, ["t[0]", "t[1]", "t[0]", "t[1]"])

    def test_placements_are_explicit_and_aligned(self):
        doc, _ = self.trace(SymbolicLoops.VADD, "vadd", {"a": ("float32", [256, 100]),
                                                          "b": ("float32", [256, 100])})
        offsets = sorted(t["offset"] for t in doc["tensors"].values() if t["memory"] == "sbuf")
        self.assertEqual(offsets[0], 0)
        self.assertTrue(all(o % 64 == 0 for o in offsets))
        # [2, 128, 100] float32 = 800 bytes per partition -> the next starts at 832
        self.assertIn(832, offsets)

    def test_reduced_buffering_when_sbuf_is_full(self):
        # 3 tiles of 64 KiB per partition, double-buffered, need 384 KiB; trn2 has 192 KiB
        source = """
            @nki.jit
            def k(a, b):
                out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
                for i in nl.affine_range(a.shape[0]):
                    ta = nl.load(a[i])
                    tb = nl.load(b[i])
                    nl.store(out[i], value=nl.add(ta, tb))
                return out
        """
        doc, _ = self.trace(source, "k", {"a": ("float32", [4, 128, 16384]),
                                          "b": ("float32", [4, 128, 16384])})
        shapes = sorted(len(t["shape"]) for t in doc["tensors"].values() if t["memory"] == "sbuf")
        used = sum(t["shape"][0] * 65536 if len(t["shape"]) == 3 else 65536
                   for t in doc["tensors"].values() if t["memory"] == "sbuf")
        self.assertLessEqual(max(t["offset"] for t in doc["tensors"].values()
                                 if t["memory"] == "sbuf") + 65536, 196608)
        self.assertIn(2, shapes)  # at least one tile lost its second buffer
        self.assertGreater(used, 0)


if __name__ == "__main__":
    unittest.main()


class DirectAllocation(TraceCase):
    def test_mod_alloc_folds_blocks_onto_its_buffers(self):
        source = """
            import neuronxcc.nki.compiler as ncc

            @nki.jit
            def k(x):
                n, P, T = x.shape
                out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
                inb = nl.ndarray((n, nl.par_dim(P), T), dtype=x.dtype,
                                 buffer=ncc.sbuf.mod_alloc(base_addr=0, num_free_tiles=(2,)))
                outb = nl.ndarray((n, nl.par_dim(P), T), dtype=x.dtype,
                                  buffer=ncc.sbuf.mod_alloc(base_addr=2 * T * 4, num_free_tiles=(2,)))
                for i in nl.affine_range(n):
                    inb[i] = nl.load(x[i])
                    outb[i] = nisa.activation(op=nl.exp, data=inb[i])
                    nl.store(out[i], value=outb[i])
                return out
        """
        doc, _ = self.trace(source, "k", {"x": ("float32", [6, 128, 256])})
        self.assertEqual(doc["tensors"]["inb"],
                         {"memory": "sbuf", "dtype": "float32", "shape": [2, 128, 256],
                          "partition_dim": 1, "offset": 0})
        self.assertEqual(doc["tensors"]["outb"]["offset"], 2048)
        load, act, store = instructions(doc["program"])
        self.assertEqual(load["dst"], "inb[i % 2]")
        self.assertEqual(act["dst"], "outb[i % 2]")

    def test_psum_mod_alloc_puts_one_block_in_each_bank(self):
        source = """
            import neuronxcc.nki.compiler as ncc

            @nki.jit
            def k(a, b):
                out = nl.ndarray((4, 128, 128), dtype=nl.float32, buffer=nl.shared_hbm)
                ps = nl.ndarray((4, nl.par_dim(128), 128), dtype=nl.float32,
                                buffer=ncc.psum.mod_alloc(base_bank=2, num_bank_tiles=(2,)))
                for i in nl.affine_range(4):
                    ps[i] = nisa.nc_matmul(nl.load(a[i]), nl.load(b[i]))
                    nl.store(out[i], value=nl.copy(ps[i]))
                return out
        """
        doc, _ = self.trace(source, "k", {"a": ("bfloat16", [4, 128, 128]),
                                          "b": ("bfloat16", [4, 128, 128])})
        # two buffers of one 2 KiB bank each (512 FP32 per partition), from bank 2
        self.assertEqual(doc["tensors"]["ps"]["shape"], [2, 128, 512])
        self.assertEqual(doc["tensors"]["ps"]["offset"], 4096)
        (mm,) = [st for st in instructions(doc["program"]) if st["op"] == "nc_matmul"]
        self.assertEqual(mm["dst"], "ps.ap(0:128, i % 2 * 512, [1, 128])")

    def test_multi_buffer_directive_sets_the_rotation_depth(self):
        source = """
            import neuronxcc.nki.compiler as ncc

            @nki.jit
            def k(x):
                out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
                for i in nl.sequential_range(x.shape[0], directives=ncc.multi_buffer(3)):
                    nl.store(out[i], value=nl.exp(nl.load(x[i])))
                return out
        """
        doc, _ = self.trace(source, "k", {"x": ("float32", [6, 128, 64])})
        shapes = [t["shape"] for t in doc["tensors"].values() if t["memory"] == "sbuf"]
        self.assertTrue(all(s[0] == 3 for s in shapes), shapes)


class LoopDepth(TraceCase):
    def test_loops_deeper_than_the_format_allows_are_unrolled(self):
        body = "nl.store(out[i0], value=nl.load(a[i1]))"
        lines = ["@nki.jit", "def k(a):",
                 "    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)"]
        for depth in range(9):
            lines.append("    " + " " * depth + f"for i{depth} in nl.affine_range(2):")
        lines.append("    " + " " * 9 + body)
        lines.append("    return out")
        doc, _ = self.trace("\n".join(lines) + "\n", "k", {"a": ("float32", [2, 128, 4])})
        self.assertEqual(len(loops(doc["program"])), 8)
        self.assertEqual(len(instructions(doc["program"])), 4)  # the 9th loop: 2 x (load, store)
