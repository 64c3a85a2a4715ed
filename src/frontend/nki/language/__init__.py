"""``nki.language`` (new API), backed by trnsim's tracer."""

from trnsim_nki.api_language import namespace as _namespace

globals().update(_namespace(classic=False))
