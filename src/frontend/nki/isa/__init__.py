"""``nki.isa`` (new API: the destination is the first argument), backed by trnsim's tracer."""

from trnsim_nki.api_isa import new_namespace as _namespace

globals().update(_namespace())
