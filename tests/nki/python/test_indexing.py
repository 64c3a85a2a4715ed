"""Views of tensors (trnsim_nki.tensor): basic and advanced indexing, masks, reshapes and
explicit access patterns. Strides and offsets are elements, worked out by hand."""

import unittest

import nki_test_support  # noqa: F401  (sets sys.path)
from trnsim_nki import dtypes
from trnsim_nki.errors import KernelError
from trnsim_nki.expr import NotAffine, Sym, Var, render
from trnsim_nki.tensor import (
    HBM, SBUF, DynSlice, IndexExpr, Iota, Storage, Tensor, ap_view, index_view, reshape_view,
)


def hbm(*shape):
    return Tensor.whole(Storage(HBM, dtypes.float32, shape, 0, "x", hbm_kind="input"))


def sbuf(*shape, partition_dim=0):
    return Tensor.whole(Storage(SBUF, dtypes.float32, shape, partition_dim, "t"))


def arange(n, axis, ndim):
    shape = [1] * ndim
    shape[ndim + axis] = n
    return IndexExpr.of_iota(Iota(0, n, axis), shape)


class BasicIndexing(unittest.TestCase):
    def test_integer_and_slices_of_an_hbm_tensor(self):
        x = hbm(4, 128, 512)  # strides 65536, 512, 1
        v = index_view(x, (2, slice(0, 64), slice(10, 30, 4)))
        self.assertEqual(v.shape, (64, 5))
        self.assertEqual(v.offset, 2 * 65536 + 10)
        self.assertEqual([a[0] for a in v.axes], [512, 4])

    def test_ellipsis_none_negative_and_ds(self):
        x = hbm(4, 8, 16)
        self.assertEqual(index_view(x, (Ellipsis, 3)).shape, (4, 8))
        self.assertEqual(index_view(x, (-1,)).offset, 3 * 128)
        self.assertEqual(index_view(x, (None, 1)).shape, (1, 8, 16))
        v = index_view(x, (1, DynSlice(2, 3)))
        self.assertEqual((v.shape, v.offset), ((3, 16), 128 + 2 * 16))

    def test_out_of_range_and_empty_slices_are_errors(self):
        x = hbm(4, 8)
        with self.assertRaisesRegex(KernelError, "out of bounds for size 4"):
            index_view(x, (4,))
        with self.assertRaisesRegex(KernelError, "empty slice"):
            index_view(x, (slice(3, 3),))
        with self.assertRaisesRegex(KernelError, "too many indices"):
            index_view(x, (0, 0, 0))

    def test_a_symbolic_index_is_checked_over_all_iterations(self):
        k = Sym.var(Var("k", 0, 5, 1))
        with self.assertRaisesRegex(KernelError, r"k\) \(takes values 0..4\)|takes values 0..4"):
            index_view(hbm(4, 8), (k,))
        v = index_view(hbm(8, 8), (k * 2 % 8,))
        self.assertEqual(render(v.offset), "2*k % 8 * 8")  # (2k mod 8) rows of 8 elements
        self.assertEqual([v.offset.evaluate({"k": kv}) for kv in range(5)], [0, 16, 32, 48, 0])

    def test_a_slice_whose_size_varies_needs_unrolling(self):
        k = Sym.var(Var("k", 0, 4, 1))
        with self.assertRaises(NotAffine):
            index_view(hbm(16, 8), (slice(k, 8),))

    def test_on_chip_partition_axis_and_block_dimension(self):
        t = sbuf(3, 128, 64, partition_dim=1)  # block, partitions, free
        v = index_view(t, (2, slice(32, 64)))
        self.assertEqual((v.shape, v.pstart, v.paxis, v.offset), ((32, 64), 32, 0, 128))
        self.assertEqual(v.index_form, [("i", 2, None, None), ("s", 32, 32, 1), ("s", 0, 64, 1)])
        with self.assertRaisesRegex(KernelError, "partition axis cannot be indexed with a step"):
            index_view(t, (0, slice(0, 128, 2)))


class AdvancedIndexing(unittest.TestCase):
    def test_arange_grid_that_is_a_slice_keeps_its_slice_form(self):
        x = hbm(256, 512)
        ip, jf = arange(128, -2, 2), arange(64, -1, 2)
        v = index_view(x, (ip + 128, jf * 2 + 1))
        self.assertEqual(v.shape, (128, 64))
        self.assertEqual(v.offset, 128 * 512 + 1)
        self.assertEqual([a[0] for a in v.axes], [512, 2])
        self.assertEqual(v.index_form, [("s", 128, 128, 1), ("s", 1, 64, 2)])

    def test_virtual_dimensions_from_a_split_axis(self):
        t = sbuf(128, 16, 16)
        n = 5
        i0, i1, i2, i3, i4 = (arange(s, a - n, n) for a, s in enumerate((128, 8, 2, 8, 2)))
        v = index_view(t, (i0, i1 * 2 + i2, i3 * 2 + i4))
        self.assertEqual(v.shape, (128, 8, 2, 8, 2))
        self.assertEqual([a[0] for a in v.free_axes()], [32, 16, 2, 1])
        self.assertIsNone(v.index_form)

    def test_permuted_free_axes(self):
        t = sbuf(128, 6, 8)  # free strides 8, 1
        ip = arange(128, -3, 3)
        f0, f1 = arange(8, -2, 3), arange(6, -1, 3)
        v = index_view(t, (ip, f1, f0))  # element (p, a, b) = t[p, b, a]
        self.assertEqual(v.shape, (128, 8, 6))
        self.assertEqual([a[0] for a in v.free_axes()], [1, 8])

    def test_mask_ranges(self):
        ip = arange(128, -2, 2)
        r = Sym.var(Var("r", 0, 3, 1))
        self.assertEqual((ip < 100).ranges(), {-2: (0, 100)})
        self.assertEqual((ip + 256 < 300).ranges(), {-2: (0, 44)})
        self.assertEqual((ip >= 8).ranges(), {-2: (8, 128)})
        # always true over the loop: the whole axis
        self.assertEqual((r * 128 + ip < 384).ranges(), {-2: (0, 128)})


class Reshapes(unittest.TestCase):
    def test_reshape_of_a_contiguous_hbm_tensor(self):
        v = reshape_view(hbm(256000), (2, 128, 1000))
        self.assertEqual([a[0] for a in v.axes], [128000, 1000, 1])
        with self.assertRaisesRegex(KernelError, "cannot reshape"):
            reshape_view(hbm(10), (3, 3))

    def test_on_chip_reshape_keeps_the_partitions(self):
        v = reshape_view(sbuf(128, 64), (128, 8, 8))
        self.assertEqual([a[0] for a in v.free_axes()], [8, 1])
        with self.assertRaisesRegex(KernelError, "partition dimension first"):
            reshape_view(sbuf(128, 64), (64, 128))

    def test_ap_pattern_over_the_storage(self):
        v = ap_view(hbm(4, 64), [[64, 4], [1, 16]], 8)
        self.assertEqual((v.shape, v.offset), ((4, 16), 8))
        t = ap_view(sbuf(128, 64), [[64, 32], [2, 16]], 64 * 32 + 4)  # partition 32, offset 4
        self.assertEqual((t.pstart, t.partitions, t.offset), (32, 32, 4))


if __name__ == "__main__":
    unittest.main()
