"""Top-level ``nki`` / ``neuronxcc.nki`` entry points: the kernel decorators (``jit``,
``baremetal``, ``benchmark``, ``profile``, ``simulate_kernel``, ``simulate``) and launch grids.

Under trnsim a decorated function stays a plain Python function that the tracer calls; the
decorators accept and ignore their options, so kernels run unmodified.
"""

from __future__ import annotations

import functools

from . import trace
from .errors import KernelError

NEW_MARKER = object()


class Kernel:
    def __init__(self, func, **options):
        self.func = func
        self.options = options
        functools.update_wrapper(self, func)

    def __call__(self, *args, **kwargs):
        if trace.active() is None:
            raise KernelError(
                f"kernel '{self.func.__name__}' was called outside trnsim's tracer; run it with "
                f"`trnsim run FILE.py::{self.func.__name__}` or `trnsim nki trace`")
        return self.func(*args, **kwargs)

    def __getitem__(self, grid):
        return Launcher(self, grid)

    # nki.benchmark's result object, for scripts that read it
    @property
    def benchmark_result(self):
        raise KernelError("benchmark results are produced by `trnsim run`, not by the decorator")


class Launcher:
    def __init__(self, kernel, grid):
        self.kernel = kernel
        self.grid = grid if isinstance(grid, tuple) else (grid,)

    def __call__(self, *args, **kwargs):
        import inspect

        from . import driver

        tracer = trace.active()
        if tracer is None:
            return self.kernel(*args, **kwargs)
        bound = inspect.signature(self.kernel.func).bind(*args, **kwargs)
        return driver.run_grid(tracer, self.kernel.func, dict(bound.arguments),
                               driver.grid_dims(self.grid))


def _decorator(func=None, **options):
    if func is None:
        return lambda f: Kernel(f, **options)
    if isinstance(func, Kernel):
        return func
    return Kernel(func, **options)


def jit(func=None, mode=None, **options):
    return _decorator(func, mode=mode, **options)


def baremetal(kernel=None, **options):
    return _decorator(kernel, **options)


def benchmark(kernel=None, **options):
    return _decorator(kernel, **options)


def profile(func=None, **options):
    return _decorator(func, **options)


def trace_decorator(func=None, **options):
    return _decorator(func, **options)


def simulate_kernel(kernel, *args, **kwargs):
    kernel = kernel if isinstance(kernel, (Kernel, Launcher)) else Kernel(kernel)
    return kernel(*args, **kwargs)


def simulate(kernel):
    return lambda *args, **kwargs: simulate_kernel(kernel, *args, **kwargs)


def common_namespace():
    return {"jit": jit, "baremetal": baremetal, "benchmark": benchmark, "profile": profile,
            "simulate_kernel": simulate_kernel, "simulate": simulate, "Kernel": Kernel}
