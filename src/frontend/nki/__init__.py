"""The standalone ``nki`` package (new NKI API) under trnsim: decorators and the language/isa
modules, backed by trnsim's tracer (trnsim_nki). See docs/nki-frontend.md."""

from trnsim_nki.api_top import common_namespace as _common

globals().update(_common())

from . import compiler, isa, language, typing  # noqa: E402,F401

tensor = language.tensor
