"""``neuronxcc.nki.compiler`` (classic direct allocation and directives) under trnsim."""

from trnsim_nki.api_compiler import namespace as _namespace

globals().update(_namespace())
