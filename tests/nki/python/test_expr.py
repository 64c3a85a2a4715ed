"""Symbolic loop indices: normal form, simplification, rendering, bounds (trnsim_nki.expr)."""

import unittest

import nki_test_support  # noqa: F401  (sets sys.path)
from trnsim_nki.expr import NotAffine, Sym, Var, render, sym_min, sym_not


def var(name, stop, start=0, step=1):
    return Sym.var(Var(name, start, stop, step))


class AffineForm(unittest.TestCase):
    def test_differences_of_affine_expressions_are_plain_integers(self):
        k = var("k", 64)
        self.assertEqual((k + 1) * 128 - k * 128, 128)
        self.assertIsInstance((k + 1) * 128 - k * 128, int)

    def test_rendering_uses_the_kernel_format_syntax(self):
        k, m = var("k", 64), var("m", 32)
        self.assertEqual(render(k * 128 + 5), "128*k + 5")
        self.assertEqual(render(m * 16 + k - 3), "k + 16*m - 3")
        self.assertEqual(render(-k), "-k")
        self.assertEqual(render((k + 1) * (m + 2)), "(k + 1) * (m + 2)")

    def test_modulo_drops_multiples_of_the_divisor(self):
        k, m = var("k", 64), var("m", 32)
        # (16*m + k) % 2 == k % 2: 16*m is a multiple of 2
        self.assertEqual(render((m * 16 + k) % 2), "k % 2")
        # n in [0, 2): n % 2 == n
        n = var("n", 2)
        self.assertEqual(render((m * 2 + n) % 2), "n")

    def test_floor_division_of_an_exact_multiple(self):
        k = var("k", 64)
        self.assertEqual(render((k * 128) // 128), "k")
        self.assertEqual(render((k * 128 + 5) // 128), "k")  # 5 < 128

    def test_evaluation_matches_python(self):
        k, m = var("k", 64), var("m", 32)
        e = ((m * 16 + k) * 3 - 7) // 4 % 5
        for kv in (0, 3, 63):
            for mv in (0, 31):
                expected = ((mv * 16 + kv) * 3 - 7) // 4 % 5
                self.assertEqual(e.evaluate({"k": kv, "m": mv}), expected)

    def test_bounds_are_interval_arithmetic(self):
        k = var("k", 64)
        self.assertEqual((k * 128 + 128).bounds(), (128, 8192))
        self.assertEqual((-k + 10).bounds(), (-53, 10))


class Conditions(unittest.TestCase):
    def test_a_python_condition_on_an_index_raises_not_affine(self):
        k = var("k", 64)
        with self.assertRaises(NotAffine) as ctx:
            if k == 0:
                pass
        self.assertEqual({v.name for v in ctx.exception.variables}, {"k"})

    def test_indexing_a_list_with_an_index_raises_not_affine(self):
        k = var("k", 4)
        with self.assertRaises(NotAffine):
            [1, 2][k % 2]

    def test_comparisons_known_for_every_iteration_are_plain_integers(self):
        k = var("k", 64)
        self.assertEqual(k < 64, 1)
        self.assertEqual(k >= 0, 1)
        self.assertEqual(k > 100, 0)

    def test_negation_flips_comparisons(self):
        k = var("k", 64)
        self.assertEqual(render(sym_not(k == 0)), "k != 0")
        self.assertEqual(render(sym_not(k < 5)), "k >= 5")

    def test_min_is_resolved_when_the_bounds_decide_it(self):
        k = var("k", 64)
        self.assertIs(sym_min(k * 128 + 128, 8192).__class__, Sym)
        self.assertEqual(render(sym_min(k * 128 + 128, 8192)), "128*k + 128")
        self.assertEqual(render(sym_min(k * 128, 4096)), "min(128*k, 4096)")


if __name__ == "__main__":
    unittest.main()
