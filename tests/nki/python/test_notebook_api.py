"""The notebook API (src/frontend/trnsim): trnsim.run and trnsim.trace call the trnsim binary
($TRNSIM_BINARY, set by CTest to the build's) and return its JSON, or raise TrnsimError."""

import importlib.util
import os
import sys
import tempfile
import unittest
from pathlib import Path
from unittest import mock

import trnsim

ROOT = Path(__file__).resolve().parents[3]
KERNELS = ROOT / "tests" / "nki" / "kernels"
VECTOR_ADD = f"{KERNELS / 'vector_add.py'}::vector_add"
SCALED_COPY = f"{KERNELS / 'scaled_copy.py'}::scaled_copy"
INPUTS = {"a": "float32[256,512]", "b": "float32[256,512]"}

try:
    import numpy
except ImportError:  # NumPy is optional for the API
    numpy = None


def load_kernel_module(name):
    spec = importlib.util.spec_from_file_location(f"kernel_{name}", KERNELS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class RunTest(unittest.TestCase):
    def test_returns_the_run_statistics(self):
        stats = trnsim.run(VECTOR_ADD, inputs=INPUTS)
        self.assertGreater(stats["time"]["kernel_us"], 0)
        self.assertEqual(stats["provenance"]["config"], "trn2")
        self.assertEqual(stats["system"]["hbm_bytes"], 3 * 256 * 512 * 4)

    def test_config_and_overrides_reach_the_simulation(self):
        trn2 = trnsim.run(VECTOR_ADD, inputs=INPUTS)
        trn1 = trnsim.run(VECTOR_ADD, inputs=INPUTS, config="trn1")
        slow = trnsim.run(VECTOR_ADD, inputs=INPUTS, set={"dma.fixed_cost_ns": 5000})
        self.assertEqual(trn1["provenance"]["config"], "trn1")
        self.assertNotEqual(trn1["time"]["kernel_us"], trn2["time"]["kernel_us"])
        self.assertGreater(slow["time"]["kernel_us"], trn2["time"]["kernel_us"])

    def test_kwargs_and_grid_change_the_kernel(self):
        one = trnsim.run(SCALED_COPY, inputs={"a": "float32[128,512]"}, kwargs={"T": 1})
        four = trnsim.run(SCALED_COPY, inputs={"a": "float32[128,512]"},
                          kwargs={"T": 4, "scale": 0.5})
        self.assertEqual(one["system"]["instructions"], 3)
        self.assertEqual(four["system"]["instructions"], 12)

    @unittest.skipIf(numpy is None, "NumPy is not installed")
    def test_numpy_arrays_give_their_dtype_and_shape(self):
        a = numpy.zeros((256, 512), dtype=numpy.float32)
        from_arrays = trnsim.run(VECTOR_ADD, inputs={"a": a, "b": a.copy()})
        from_specs = trnsim.run(VECTOR_ADD, inputs=INPUTS)
        self.assertEqual(from_arrays["time"], from_specs["time"])
        self.assertEqual(from_arrays["provenance"]["kernel"]["hash"],
                         from_specs["provenance"]["kernel"]["hash"])

    def test_a_kernel_function_defined_in_a_file(self):
        module = load_kernel_module("vector_add")
        stats = trnsim.run(module.vector_add, inputs=INPUTS)
        self.assertEqual(stats["time"], trnsim.run(VECTOR_ADD, inputs=INPUTS)["time"])

    def test_a_json_kernel_with_params(self):
        kernel = ROOT / "examples" / "kernels" / "vector_add.json"
        small = trnsim.run(kernel, params={"T": 2})
        large = trnsim.run(kernel, params={"T": 8})
        self.assertLess(small["system"]["hbm_bytes"], large["system"]["hbm_bytes"])


class TraceTest(unittest.TestCase):
    def test_returns_the_lowered_kernel(self):
        lowered = trnsim.trace(VECTOR_ADD, inputs=INPUTS)
        self.assertEqual(lowered["format"], "trnsim-kernel/1")
        self.assertEqual(lowered["name"], "vector_add")
        self.assertEqual(lowered["tensors"]["a"]["shape"], [256, 512])

    def test_the_config_and_compiler_section_shape_the_lowering(self):
        double = trnsim.trace(VECTOR_ADD, inputs=INPUTS)
        single = trnsim.trace(VECTOR_ADD, inputs=INPUTS, set={"compiler.loop_tile_buffers": 1})
        self.assertNotEqual(double["tensors"], single["tensors"])
        self.assertIn("for trn1", trnsim.trace(VECTOR_ADD, inputs=INPUTS,
                                               config="trn1")["description"])


class ErrorTest(unittest.TestCase):
    def test_a_kernel_error_names_file_and_line(self):
        with self.assertRaises(trnsim.TrnsimError) as caught:
            trnsim.run(f"{KERNELS / 'raises_value_error.py'}::checked_copy",
                       inputs={"a": "float32[128,500]"})
        self.assertEqual(caught.exception.exit_code, 2)
        self.assertIn("raises_value_error.py:9: the kernel raised ValueError", str(caught.exception))

    def test_an_unknown_kwarg(self):
        with self.assertRaises(trnsim.TrnsimError) as caught:
            trnsim.trace(VECTOR_ADD, inputs=INPUTS, kwargs={"tile": 4})
        self.assertIn("has no parameter tile", str(caught.exception))

    def test_a_value_that_is_not_a_python_literal(self):
        with self.assertRaises(TypeError):
            trnsim.trace(SCALED_COPY, inputs={"a": "float32[128,512]"}, kwargs={"T": object()})

    def test_a_function_without_a_file(self):
        namespace = {}
        exec("def notebook_kernel(a):\n    return a\n", namespace)
        with self.assertRaises(trnsim.TrnsimError) as caught:
            trnsim.trace(namespace["notebook_kernel"], inputs={"a": "float32[128,512]"})
        self.assertIn("not defined in a .py file", str(caught.exception))

    def test_a_missing_binary(self):
        with tempfile.TemporaryDirectory() as scratch:
            missing = os.path.join(scratch, "trnsim")
            with mock.patch.dict(os.environ, {"TRNSIM_BINARY": missing}):
                with self.assertRaises(trnsim.TrnsimError) as caught:
                    trnsim.run(VECTOR_ADD, inputs=INPUTS)
        self.assertIn("cannot run", str(caught.exception))


if __name__ == "__main__":
    sys.exit(unittest.main())
