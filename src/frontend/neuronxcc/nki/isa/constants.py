"""``neuronxcc.nki.isa.constants``."""

from trnsim_nki.api_isa import dge_mode, engine, oob_mode, reduce_cmd  # noqa: F401
