"""Which YAML loader a call uses, whatever it is called.

`yaml.load(data, Loader=SafeLoader)` is safe only when `SafeLoader` is one: a name proves
nothing (`NotSafeLoader = yaml.Loader`, `from yaml import Loader as SafeLoader`, a class of
one's own over `yaml.Loader`, a parameter whose default is `yaml.UnsafeLoader`). The loader is
followed to what it is: through imports and bindings (rules/python_calls.py), the module's
classes and their bases, and a parameter's default; only a loader nothing here can follow
is judged by its name.
"""

from __future__ import annotations

import ast

from reviewbot.lazy_re import lazy_re
from reviewbot.rules.python_calls import CallShapes

# PyYAML's loaders that construct no Python object.
SAFE_LOADERS = frozenset({"SafeLoader", "CSafeLoader", "BaseLoader", "CBaseLoader"})
# Calls that load YAML with the loader they are given (none: PyYAML's default before 6.0,
# the full loader), and those that always construct Python objects.
LOADING = frozenset({"yaml.load", "yaml.load_all"})
UNSAFE = frozenset({"yaml.unsafe_load", "yaml.unsafe_load_all"})
# A loader built on a stream and read (`yaml.Loader(stream).get_single_data()`).
LOADER_CLASSES = frozenset({"yaml.Loader", "yaml.UnsafeLoader", "yaml.FullLoader",
                            "yaml.CLoader", "yaml.CUnsafeLoader", "yaml.CFullLoader"})
_SAFE_NAME = lazy_re(r"Safe|CSafe|BaseLoader")
_MAX_DEPTH = 6


def loader_of(call: ast.Call) -> ast.expr | None:
    return next((k.value for k in call.keywords if k.arg == "Loader"),
                call.args[1] if len(call.args) > 1 else None)


def safe_loader(loader: ast.expr | None, shapes: CallShapes, tree: ast.Module | None,
                function: ast.FunctionDef | ast.AsyncFunctionDef | None,
                line: int) -> bool:
    """Whether the loader constructs no Python object (None, PyYAML's old default: no)."""
    return loader is not None and _safe(loader, shapes, tree, function, line, 0)


def _safe(loader: ast.expr, shapes: CallShapes, tree: ast.Module | None,
          function: ast.FunctionDef | ast.AsyncFunctionDef | None, line: int,
          depth: int) -> bool:
    if depth > _MAX_DEPTH:
        return False
    name = shapes.qualified(loader, line)
    last = name.rsplit(".", 1)[-1]
    if name.startswith("yaml."):
        return last in SAFE_LOADERS
    default = _default(function, name) if isinstance(loader, ast.Name) else None
    if default is not None:
        return _safe(default, shapes, tree, None, line, depth + 1)
    bases = _class_bases(tree, name)
    if bases is not None:
        # A class of the module's own: as safe as every loader it is built on.
        return bool(bases) and all(_safe(base, shapes, tree, None, line, depth + 1)
                                   for base in bases)
    return bool(_SAFE_NAME.search(last))  # an attribute, a parameter: its name is all there is


def _default(function: ast.FunctionDef | ast.AsyncFunctionDef | None,
             name: str) -> ast.expr | None:
    """The default of the function's parameter of that name."""
    if function is None:
        return None
    args = function.args
    positional = [*args.posonlyargs, *args.args]
    defaults = dict(zip([a.arg for a in positional[len(positional) - len(args.defaults):]],
                        args.defaults, strict=True))
    defaults.update((a.arg, d) for a, d in zip(args.kwonlyargs, args.kw_defaults, strict=True)
                    if d is not None)
    return defaults.get(name)


def _class_bases(tree: ast.Module | None, name: str) -> list[ast.expr] | None:
    """The bases of the module's class of that name (None: no such class)."""
    if tree is None or "." in name:
        return None
    found = next((node for node in tree.body
                  if isinstance(node, ast.ClassDef) and node.name == name), None)
    return None if found is None else list(found.bases)
