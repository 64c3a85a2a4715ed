"""``neuronxcc.nki.language.constants``."""

from trnsim_nki import dtypes as _dtypes


def sizeinbytes(dtype):
    return _dtypes.dtype_of(dtype).itemsize
