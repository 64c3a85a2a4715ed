"""Bad kernels and inputs: one message naming the kernel's file:line, exit 2, no traceback."""

import os
import subprocess
import sys
import unittest

from nki_test_support import FRONTEND, NEW, TraceCase


class KernelErrors(TraceCase):
    def test_tile_over_the_partition_limit(self):
        message, line = self.trace_error("""
            @nki.jit
            def k(x):
                t = nl.ndarray((256, 64), dtype=nl.float32, buffer=nl.sbuf)
                return x
        """, "k", {"x": ("float32", [4, 4])})
        self.assertIn("256 partitions, more than the 128", message)
        self.assertEqual(line, 7)

    def test_shape_mismatch(self):
        message, line = self.trace_error("""
            @nki.jit
            def k(a, b):
                out = nl.ndarray((128, 64), dtype=nl.float32, buffer=nl.shared_hbm)
                ta = nl.load(a)
                tb = nl.load(b)
                nl.store(out, value=nl.add(ta, tb))
                return out
        """, "k", {"a": ("float32", [128, 64]), "b": ("float32", [128, 32])})
        self.assertIn("do not broadcast", message)
        self.assertEqual(line, 10)

    def test_out_of_range_index(self):
        message, line = self.trace_error("""
            @nki.jit
            def k(a):
                for i in nl.affine_range(5):
                    t = nl.load(a[i])
                return a
        """, "k", {"a": ("float32", [4, 128, 64])})
        self.assertIn("out of bounds", message)
        self.assertIn("0..4", message)  # the traced index takes the values 0..4
        self.assertEqual(line, 8)

    def test_unsupported_call(self):
        message, line = self.trace_error("""
            @nki.jit
            def k(a):
                t = nl.load(a)
                nisa.max8(src=t)
                return a
        """, "k", {"a": ("float32", [128, 64])})
        self.assertIn("nisa.max8 is not supported", message)
        self.assertEqual(line, 8)

    def test_free_size_over_sbuf_capacity(self):
        message, line = self.trace_error("""
            @nki.jit
            def k(a):
                t = nl.ndarray((128, 65536), dtype=nl.float32, buffer=nl.sbuf)
                return a
        """, "k", {"a": ("float32", [128, 64])})
        self.assertIn("262144 bytes per partition", message)
        self.assertEqual(line, 7)

    def test_sbuf_full_names_the_live_tiles(self):
        message, line = self.trace_error("""
            @nki.jit
            def k(a):
                t1 = nl.ndarray((128, 32768), dtype=nl.float32, buffer=nl.sbuf)
                t2 = nl.ndarray((128, 32768), dtype=nl.float32, buffer=nl.sbuf)
                nisa.dma_copy(dst=t1, src=a)
                nisa.dma_copy(dst=t2, src=a)
                nisa.dma_copy(dst=a, src=t1)
                return a
        """, "k", {"a": ("float32", [128, 32768])}, header=NEW)
        self.assertIn("SBUF is full", message)
        self.assertIn("kernel_1.py:7", message)  # the live tile t1
        self.assertEqual(line, 8)

    def test_psum_address_off_a_bank_boundary(self):
        message, line = self.trace_error("""
            @nki.jit
            def k(a):
                t = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.psum, address=(0, 100))
                return a
        """, "k", {"a": ("float32", [128, 64])}, header=NEW)
        self.assertIn("bank boundary", message)
        self.assertEqual(line, 7)


def run_cli(*args, cwd=None):
    env = dict(os.environ)
    env["PYTHONPATH"] = FRONTEND
    return subprocess.run([sys.executable, "-m", "trnsim_nki", "trace", *args], cwd=cwd,
                          env=env, capture_output=True, text=True, timeout=60)


class CommandLine(TraceCase):
    def test_a_kernel_exception_is_reported_as_the_kernel_error(self):
        path = self.write("""
            @nki.jit
            def k(a):
                raise ValueError("unsupported head size 96")
        """)
        result = run_cli(f"{path}::k", "--input", "a=float32[128,64]", cwd=os.path.dirname(path))
        self.assertEqual(result.returncode, 2)
        self.assertEqual(result.stderr.count("\n"), 1, result.stderr)
        self.assertIn("kernel_1.py:7: the kernel raised ValueError: unsupported head size 96",
                      result.stderr)
        self.assertNotIn("Traceback", result.stderr)
        self.assertEqual(result.stdout, "")

    def test_traceback_on_request(self):
        path = self.write("""
            @nki.jit
            def k(a):
                raise ValueError("boom")
        """)
        result = run_cli(f"{path}::k", "--input", "a=float32[128,64]", "--traceback")
        self.assertEqual(result.returncode, 2)
        self.assertIn("Traceback", result.stderr)
        self.assertTrue(result.stderr.rstrip().splitlines()[-1].startswith("trnsim: error:"))

    def test_syntax_error_in_the_kernel_file(self):
        path = self.write("""
            def k(a:
                return a
        """)
        result = run_cli(f"{path}::k", "--input", "a=float32[4]")
        self.assertEqual(result.returncode, 2)
        self.assertEqual(result.stderr.count("\n"), 1, result.stderr)
        self.assertIn("SyntaxError", result.stderr)

    def test_a_nul_byte_in_the_kernel_file(self):
        path = self.write("""
            def k(a):
                return a
        """)
        with open(path, "ab") as f:
            f.write(b"x = 1\0\n")
        result = run_cli(f"{path}::k", "--input", "a=float32[4]", cwd=os.path.dirname(path))
        self.assertEqual(result.returncode, 2, result.stderr)
        self.assertEqual(result.stderr.count("\n"), 1, result.stderr)
        self.assertIn("kernel_1.py:7: SyntaxError: a NUL byte in the source", result.stderr)

    def test_a_kernel_file_that_is_not_utf8(self):
        path = self.write("""
            def k(a):
                return a
        """)
        with open(path, "ab") as f:
            f.write(b"def f():\n    d\x86ype = 1\n")
        result = run_cli(f"{path}::k", "--input", "a=float32[4]", cwd=os.path.dirname(path))
        self.assertEqual(result.returncode, 2, result.stderr)
        self.assertEqual(result.stderr.count("\n"), 1, result.stderr)
        self.assertIn("kernel_1.py:8: SyntaxError: ", result.stderr)
        self.assertIn("0x86", result.stderr)

    def test_bad_inputs(self):
        path = self.write("""
            @nki.jit
            def k(a):
                return a
        """)
        cases = [
            (["--input", "a=float32"], "expected NAME=DTYPE[SHAPE]"),
            (["--input", "a=float99[4]"], "unknown dtype 'float99'"),
            (["--input", "a=float32[0]"], "dimensions must be positive"),
            (["--input", "a=float32[4]", "--input", "b=float32[4]"], "has no parameter b"),
            ([], "needs a"),
            (["--input", "a=float32[4]", "--grid", "x"], "--grid 'x'"),
        ]
        for args, expected in cases:
            with self.subTest(args=args):
                result = run_cli(f"{path}::k", *args)
                self.assertEqual(result.returncode, 2, result.stderr)
                self.assertIn(expected, result.stderr)
                self.assertEqual(result.stderr.count("\n"), 1, result.stderr)

    def test_missing_file_and_function(self):
        result = run_cli("/nonexistent/k.py::f")
        self.assertEqual(result.returncode, 2)
        self.assertIn("no such file", result.stderr)
        path = self.write("""
            @nki.jit
            def kernel_a(a):
                return a
        """)
        result = run_cli(f"{path}::kernel_b", "--input", "a=float32[4]")
        self.assertEqual(result.returncode, 2)
        self.assertIn("did you mean 'kernel_a'", result.stderr)

    def test_output_file_is_written_whole(self):
        path = self.write("""
            @nki.jit
            def k(a):
                out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
                nl.store(out, value=nl.load(a))
                return out
        """)
        out = os.path.join(os.path.dirname(path), "k.json")
        result = run_cli(f"{path}", "--input", "a=float32[128,64]", "-o", out)
        self.assertEqual(result.returncode, 0, result.stderr)
        with open(out) as f:
            self.assertIn('"format": "trnsim-kernel/1"', f.read())
        self.assertFalse(os.path.exists(out + ".tmp"))


if __name__ == "__main__":
    unittest.main()


class NpyInputs(TraceCase):
    """--input NAME=FILE.npy takes the dtype and shape from the file's header (format 1.0:
    magic, version, a little-endian uint16 header length, a Python dict literal)."""

    def npy(self, descr, shape, name="a.npy", magic=b"\x93NUMPY"):
        import os
        import struct

        header = f"{{'descr': '{descr}', 'fortran_order': False, 'shape': {shape}, }}"
        header = header.ljust(118) + "\n"
        path = os.path.join(self._dir.name, name)
        with open(path, "wb") as f:
            f.write(magic + bytes([1, 0]) + struct.pack("<H", len(header)) + header.encode())
        return path

    def test_dtype_and_shape_from_the_header(self):
        from nki_test_support import driver

        name, dtype, shape = driver.parse_input(f"x={self.npy('<f4', (128, 512))}")
        self.assertEqual((name, dtype.name, shape), ("x", "float32", (128, 512)))
        _, dtype, _ = driver.parse_input(f"x={self.npy('<f2', (4,))}")
        self.assertEqual(dtype.name, "float16")
        _, dtype, _ = driver.parse_input(f"x={self.npy('|u1', (4, 2))}")
        self.assertEqual(dtype.name, "uint8")

    def test_bad_npy_files(self):
        from nki_test_support import UsageError, driver

        with self.assertRaisesRegex(UsageError, "64-bit"):
            driver.parse_input(f"x={self.npy('<f8', (4,))}")
        with self.assertRaisesRegex(UsageError, "not a .npy file"):
            driver.parse_input(f"x={self.npy('<f4', (4,), magic=b'NOTNPY')}")
        with self.assertRaisesRegex(UsageError, "holds a scalar"):
            driver.parse_input(f"x={self.npy('<f4', ())}")
        with self.assertRaisesRegex(UsageError, "cannot read"):
            driver.parse_input("x=/nonexistent/a.npy")
