"""``neuronxcc.nki.compiler`` (direct allocation, directives, decorators) and ``nki.typing``."""

from __future__ import annotations

from . import buffers


class _Directive:
    def __init__(self, name, **options):
        self.name = name
        self.options = options


def multi_buffer(factor=2):
    return _Directive("multi_buffer", factor=int(factor))


def no_reorder():
    return _Directive("no_reorder")


def allocation_scope():
    return _Directive("allocation_scope")


def _passthrough_decorator(func=None, **options):
    if func is None:
        return lambda f: f
    return func


def namespace():
    return {
        "sbuf": buffers.sbuf, "psum": buffers.psum,
        "multi_buffer": multi_buffer, "no_reorder": no_reorder,
        "allocation_scope": allocation_scope,
        "skip_middle_end_transformations": _passthrough_decorator,
        "enable_stack_allocator": _passthrough_decorator,
        "force_auto_alloc": _passthrough_decorator,
    }


class _Annotation:
    def __getitem__(self, item):
        return self

    def __call__(self, *args, **kwargs):
        return self


def typing_namespace():
    return {"tensor": _Annotation(), "scalar": _Annotation(), "Tensor": _Annotation()}
