"""Not valid Python: the colon after the signature is missing (line 6)."""
from neuronxcc import nki


@nki.jit
def broken(a)
    return a
