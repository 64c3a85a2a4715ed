"""trnsim's stand-in for the ``neuronxcc`` package: only ``neuronxcc.nki`` (the classic NKI API),
which traces kernels for the trnsim simulator. See docs/nki-frontend.md."""
