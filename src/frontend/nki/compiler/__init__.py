"""``nki.compiler``: accepted for compatibility; direct allocation in the new API is
``nl.ndarray(..., address=...)``."""

from trnsim_nki.api_compiler import namespace as _namespace

globals().update(_namespace())
