"""Classic NKI (``neuronxcc.nki``) under trnsim: decorators, and the language/isa/compiler/typing
modules, all backed by trnsim's tracer (trnsim_nki)."""

from trnsim_nki.api_top import common_namespace as _common

globals().update(_common())

from . import compiler, isa, language, typing  # noqa: E402,F401

tensor = language.tensor
