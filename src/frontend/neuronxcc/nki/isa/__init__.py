"""``neuronxcc.nki.isa`` (classic API: instructions return their result), backed by trnsim."""

from trnsim_nki.api_isa import classic_namespace as _namespace

globals().update(_namespace())

from . import constants  # noqa: E402,F401
