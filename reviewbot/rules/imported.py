"""Functions a file imports from the project's own modules, as sinks: `utils.run_command(cmd)`
runs `cmd` through a shell when `run_command`, in the project's `utils.py`, passes its
parameter to one (rules/wrappers.py, applied to that module).

Bounded to what a hook can afford. Only a call that hands a formatted string or outside
input to an imported function is followed, and only into a module that is not the standard
library. The module's file is found by its dotted name (`pkg/utils.py`,
`pkg/utils/__init__.py`, at the root or under `src/`; a relative import from the importer's
folder), read from the reviewed side (the same content the rest of the review reads), the
modules of all a file's calls in one batch, each once a run (rules/base.py, ProjectFiles):
no budget is shared between calls, so calls into other modules cannot spend it before the
one that matters. A module over MAX_MODULE_CHARS is not parsed whole: the function a call
names is read alone (code/python_slices.py), whatever the module's size. A method of an
object (`self.adb.shell(cmd)`) is not followed: which class the object is takes more than
names.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Callable
from pathlib import PurePosixPath

import msgspec

from reviewbot.code.python_parse import parse_python
from reviewbot.code.python_slices import ModuleSlices
from reviewbot.rules.base import ProjectFiles
from reviewbot.rules.python_ast import module_imports
from reviewbot.rules.python_calls import CallShapes, import_aliases, qualified_name
from reviewbot.rules.wrappers import Kind, SinkArguments, Wrappers

MAX_MODULE_CHARS = 256_000


class Target(msgspec.Struct, frozen=True):
    """An imported function a call names: its module (dotted) and its name there."""

    module: str
    function: str


def project_aliases(tree: ast.Module, importer: str) -> dict[str, str]:
    """Every imported name as a dotted path; relative imports resolved against the
    importer's folder (`from .utils import run` in `pkg/cli.py` is `pkg.utils.run`)."""
    imports = module_imports(tree)
    aliases = import_aliases(imports)
    package = PurePosixPath(importer).parent.parts
    for node in imports:
        if not isinstance(node, ast.ImportFrom) or node.level == 0 \
                or node.level - 1 > len(package):
            continue
        base = package[:len(package) - (node.level - 1)]
        prefix = ".".join((*base, *(node.module.split(".") if node.module else ())))
        for name in node.names:
            aliases[name.asname or name.name] = f"{prefix}.{name.name}" if prefix else name.name
    return aliases


def target_of(call: ast.Call, aliases: dict[str, str]) -> Target | None:
    """The imported function a call names (`run(...)`, `utils.run(...)`,
    `pkg.utils.run(...)`), or None: a local name, a method of an object, the standard
    library."""
    root = call.func
    while isinstance(root, ast.Attribute):
        root = root.value
    if not isinstance(root, ast.Name) or root.id not in aliases:
        return None
    module, _, function = qualified_name(call.func, aliases).rpartition(".")
    if not module or "()" in module or module.split(".")[0] in sys.stdlib_module_names \
            or function[:1].isupper():
        return None  # a class (`Error(f"...")`) is built, not a wrapper called
    return Target(module=module, function=function)


def candidates(module: str) -> list[str]:
    path = module.replace(".", "/")
    return [f"{path}.py", f"{path}/__init__.py", f"src/{path}.py", f"src/{path}/__init__.py"]


KindsIn = Callable[[str], frozenset[Kind]]


def module_wrappers(project: ProjectFiles, module: str, sinks: dict[Kind, SinkArguments],
                    kinds_in: KindsIn) -> Wrappers | None:
    """The wrappers of a project module, from its file on the reviewed side; None when it
    is not the project's (no such file), too large, or does not parse. `kinds_in` says
    which kinds of sink a module's text can hold."""
    key = f"wrappers:{module}"
    if key not in project.memo:
        project.memo[key] = _read_wrappers(project, module, sinks, kinds_in)
    found = project.memo[key]
    return found if isinstance(found, Wrappers) else None


def is_project_module(project: ProjectFiles, module: str) -> bool:
    """Whether the module is a file of the reviewed side (asked before anything is read)."""
    key = f"module:{module}"
    if key not in project.memo:
        project.memo[key] = project.any_of(candidates(module))
    return project.memo[key] is True


def _read_wrappers(project: ProjectFiles, module: str, sinks: dict[Kind, SinkArguments],
                   kinds_in: KindsIn) -> Wrappers | None:
    found = project.first(candidates(module))
    if found is None:
        return None
    path, text = found
    if len(text) > MAX_MODULE_CHARS:
        # Too large to parse for a call into it: the called function is read alone.
        slices = ModuleSlices(text)
        imports = ast.Module(body=slices.imports(), type_ignores=[])
        shapes = CallShapes(imports, import_aliases(imports.body))
        wrappers = Wrappers(imports, shapes.name_of, sinks, file=path, kinds=kinds_in(text),
                            normalise=shapes.normalised, definitions=slices)
        wrappers.exports = project_aliases(imports, path)
        return wrappers
    tree = parse_python(text)[0]
    if tree is None:
        return None
    shapes = CallShapes(tree, import_aliases(module_imports(tree)))
    wrappers = Wrappers(tree, shapes.name_of, sinks, file=path, kinds=kinds_in(text),
                        normalise=shapes.normalised)
    wrappers.exports = project_aliases(tree, path)
    return wrappers


MAX_REEXPORTS = 3


def defining_module(project: ProjectFiles, target: Target, sinks: dict[Kind, SinkArguments],
                    kinds_in: KindsIn) -> tuple[Wrappers, str] | None:
    """The wrappers of the module that defines the target's function, and its name there:
    a package's `__init__.py` that imports it from another module (`from .utils import
    run_command`) hands it on, up to MAX_REEXPORTS times."""
    module, function = target.module, target.function
    for _ in range(MAX_REEXPORTS + 1):
        wrappers = module_wrappers(project, module, sinks, kinds_in)
        if wrappers is None:
            return None
        source = wrappers.exports.get(function)
        if wrappers.defines(function) or source is None or "." not in source:
            return wrappers, function
        module, _, function = source.rpartition(".")
        if not is_project_module(project, module):
            return None
    return None
