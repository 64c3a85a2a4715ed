"""bench/nki_trace_bench.py runs (its numbers are printed, not judged)."""

import os
import subprocess
import sys
import unittest

from nki_test_support import ROOT


class TraceBench(unittest.TestCase):
    def test_quick_run_prints_a_table(self):
        result = subprocess.run([sys.executable, os.path.join(ROOT, "bench", "nki_trace_bench.py"),
                                 "--quick", "--repeat", "1"], capture_output=True, text=True,
                                timeout=300)
        self.assertEqual(result.returncode, 0, result.stderr)
        lines = result.stdout.splitlines()
        self.assertTrue(lines[0].startswith("kernel"), result.stdout)
        self.assertEqual(len(lines), 3, result.stdout)

    def test_bad_arguments(self):
        result = subprocess.run([sys.executable, os.path.join(ROOT, "bench", "nki_trace_bench.py"),
                                 "--repeat", "0"], capture_output=True, text=True, timeout=60)
        self.assertEqual(result.returncode, 2)
        self.assertIn("--repeat", result.stderr)


if __name__ == "__main__":
    unittest.main()
