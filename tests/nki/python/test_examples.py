"""Every kernel of examples/nki (listed in examples/nki/examples.json):

- traces to its golden lowered JSON (tests/nki/golden/, byte for byte: the trace is
  deterministic; with the entry's golden_inputs when it has them); TRNSIM_REGEN_GOLDEN=1
  rewrites the golden files instead;
- has the same instruction counts (in total and per op), matmul FLOPs and HBM bytes as its JSON
  twin in examples/kernels, as `trnsim check` reports them on the example's generation.

Runs the trnsim binary named by TRNSIM_BINARY (CTest sets it)."""

import json
import os
import subprocess
import unittest

from nki_test_support import ROOT

MANIFEST = os.path.join(ROOT, "examples", "nki", "examples.json")
GOLDEN = os.path.join(ROOT, "tests", "nki", "golden")


def manifest():
    with open(MANIFEST) as f:
        return json.load(f)["kernels"]


def golden_name(entry):
    name = entry["kernel"].replace(".py::", "__")
    for key, value in sorted(entry.get("kwargs", {}).items()):
        name += f"__{key}_{value}"
    return name + ".json"


def nki_arguments(entry, golden=False):
    args = [os.path.join("examples", "nki", entry["kernel"]), "--config", entry["config"]]
    inputs = entry.get("golden_inputs", entry["inputs"]) if golden else entry["inputs"]
    for name, spec in inputs.items():
        args += ["--input", f"{name}={spec}"]
    for name, value in entry.get("kwargs", {}).items():
        args += ["--kwarg", f"{name}={value}"]
    return args


class Examples(unittest.TestCase):
    def setUp(self):
        self.binary = os.environ.get("TRNSIM_BINARY")
        if not self.binary:
            self.skipTest("TRNSIM_BINARY is not set (run through CTest)")

    def trnsim(self, *args):
        result = subprocess.run([self.binary, *args], cwd=ROOT, capture_output=True, text=True,
                                timeout=600)
        self.assertEqual(result.returncode, 0, f"trnsim {' '.join(args)}\n{result.stderr}")
        return result.stdout

    def test_golden_traces(self):
        regen = os.environ.get("TRNSIM_REGEN_GOLDEN") == "1"
        for entry in manifest():
            with self.subTest(kernel=entry["kernel"], kwargs=entry.get("kwargs")):
                text = self.trnsim("nki", "trace", *nki_arguments(entry, golden=True))
                path = os.path.join(GOLDEN, golden_name(entry))
                if regen:
                    os.makedirs(GOLDEN, exist_ok=True)
                    with open(path, "w") as f:
                        f.write(text)
                    continue
                with open(path) as f:
                    self.assertEqual(text, f.read(), f"{path} differs: TRNSIM_REGEN_GOLDEN=1 "
                                     "rewrites it after a deliberate change")

    def test_same_counts_as_the_json_twin(self):
        for entry in manifest():
            with self.subTest(kernel=entry["kernel"], kwargs=entry.get("kwargs")):
                nki = json.loads(self.trnsim("check", *nki_arguments(entry), "--json"))
                twin_args = [os.path.normpath(os.path.join("examples", "nki", entry["twin"])),
                             "--config", entry["config"]]
                for name, value in entry.get("twin_params", {}).items():
                    twin_args += ["--param", f"{name}={value}"]
                twin = json.loads(self.trnsim("check", *twin_args, "--json"))
                for key in ("flops", "hbm_bytes"):
                    self.assertEqual(nki[key], twin[key], key)
                self.assertEqual(nki["instructions"]["total"], twin["instructions"]["total"])
                self.assertEqual(nki["instructions"]["per_op"], twin["instructions"]["per_op"])


if __name__ == "__main__":
    unittest.main()
