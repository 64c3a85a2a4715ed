"""``neuronxcc.nki.typing``: shape annotations, ignored by the tracer."""

from trnsim_nki.api_compiler import typing_namespace as _namespace

globals().update(_namespace())
