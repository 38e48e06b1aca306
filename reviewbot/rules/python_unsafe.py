"""Python calls unsafe in themselves, on the syntax tree: code run from a string, data
deserialised into objects, a weak hash, a debugger left in, world-writable permissions,
race-prone temporary files, and a source encoding under which Python runs other code than the
file shows (TLS checks switched off: rules/python_tls.py)."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from typing import cast

from reviewbot.code.python_encoding import declared_codec, keeps_ascii
from reviewbot.lazy_re import lazy_re
from reviewbot.rules.base import FileChange, Hit, Rule, RuleBase, RuleInfo
from reviewbot.rules.python_ast import (
    PythonFile,
    Report,
    enclosing_function,
    first_arg,
    is_const,
    keyword_arg,
    line_pattern,
    rule,
    string_kind,
)
from reviewbot.rules.python_flow import source_of
from reviewbot.rules.python_loaders import LOADER_CLASSES as YAML_LOADER_CLASSES
from reviewbot.rules.python_loaders import LOADING as YAML_LOADING
from reviewbot.rules.python_loaders import UNSAFE as UNSAFE_YAML
from reviewbot.rules.python_loaders import loader_of, safe_loader

_SECURITY_NAMES = lazy_re(r"passw|secret|token|sign|auth|credential", re.IGNORECASE)


# Where a value may come from, when it is outside the program's control.
_OUTSIDE: dict[str, str] = {"request": "request data", "argv": "the command line",
                            "input": "input()", "environment": "the environment"}


# What runs a string as Python: `eval`, `exec`, and the interpreter objects of `code`
# (a REPL's `runsource`/`push` compile and run their string, as `exec` does).
_CODE_RUNNERS = frozenset({"eval", "exec", *(f"code.{kind}().{method}" for kind in (
    "InteractiveInterpreter", "InteractiveConsole") for method in ("runsource", "push"))})


def _eval_exec(parsed: PythonFile) -> Iterator[Report]:
    for call, name in parsed.calls:
        arg = first_arg(call)
        if name not in _CODE_RUNNERS or arg is None or string_kind(arg) == "constant":
            continue
        outside = _outside_source(parsed, call, arg)
        if outside == _OUTSIDE["request"]:
            # Code injection from a remote sender: as blocking as SQL or shell injection.
            yield (call, "error", f"`{name}` runs code from {outside}: whoever sends it runs "
                                  "code in this process.",
                   "Never run input as code: use ast.literal_eval for data, or a dispatch "
                   "table for behaviour.")
        elif outside:
            # The command line, the environment, input(): the person running the program,
            # whose own code a launcher or a REPL runs on purpose (setuptools' launch.py).
            yield (call, None, f"`{name}` runs code from {outside}: whoever controls it runs "
                               "code in this process.",
                   "If the program may run with someone else's arguments or environment, "
                   "use ast.literal_eval for data, or a dispatch table for behaviour.")
        else:
            yield (call, None, f"`{name}` runs a string as Python code; if any part of it "
                               "comes from input, so does the code.",
                   "Use ast.literal_eval for data, or a dispatch table for behaviour.")


def _outside_source(parsed: PythonFile, call: ast.Call, arg: ast.expr) -> str | None:
    flow = parsed.flow.at(call)
    source = source_of(arg, flow, parsed.flow.name_of, "code")
    if source == "parameter" and flow.handler:
        source = "request"  # a web handler's parameters are the URL's parts
    return _OUTSIDE.get(source or "")


_DESERIALISERS = frozenset({
    "pickle.load", "pickle.loads", "pickle.Unpickler", "cPickle.load", "cPickle.loads",
    "_pickle.load", "_pickle.loads", "_pickle.Unpickler", "cloudpickle.load",
    "cloudpickle.loads", "dill.load", "dill.loads", "marshal.load", "marshal.loads",
    "shelve.open", "jsonpickle.decode", "pandas.read_pickle", "joblib.load",
    "sklearn.externals.joblib.load", *UNSAFE_YAML,
})
# Loaders that unpickle only when a flag says to (numpy's `allow_pickle`), and ruamel's
# loader asked for its unsafe type.
_PICKLING_IF = {"numpy.load": "allow_pickle"}
_UNSAFE_TYPE = frozenset({"ruamel.yaml.YAML", "ruamel.yaml.main.YAML"})
# The ones that take the data itself (a path, `shelve.open("db")`, names a file to read).
_FROM_DATA = frozenset({"pickle.loads", "cPickle.loads", "_pickle.loads", "cloudpickle.loads",
                        "dill.loads", "marshal.loads", "jsonpickle.decode", *YAML_LOADING,
                        *UNSAFE_YAML})


def _unsafe_deserialisation(parsed: PythonFile) -> Iterator[Report]:
    for call, name in parsed.calls:
        unsafe = name in _DESERIALISERS or (name in YAML_LOADER_CLASSES and bool(call.args)) \
            or (name in _PICKLING_IF and is_const(keyword_arg(call, _PICKLING_IF[name]), True)) \
            or (name in _UNSAFE_TYPE and _text_of(keyword_arg(call, "typ")) == "unsafe")
        if name in YAML_LOADING:
            function = enclosing_function(parsed.tree, call.lineno) if parsed.tree else None
            unsafe = not safe_loader(loader_of(call), parsed.shapes, parsed.tree, function,
                                     call.lineno)
        # Data written in the source (a test's YAML) is the program, not input to it.
        if unsafe and not (name in _FROM_DATA and isinstance(first_arg(call), ast.Constant)):
            yield (call, None, f"`{name}` can run arbitrary code while loading untrusted data.",
                   "Load data with a safe format (json, yaml.safe_load); never unpickle input.")


def _text_of(node: ast.expr | None) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) \
        else None


_WEAK_HASHES = frozenset({"hashlib.md5", "hashlib.sha1", "md5.new", "sha.new"})


def _weak_hash(parsed: PythonFile) -> Iterator[Report]:
    for call, name in parsed.calls:
        weak = name in _WEAK_HASHES or (
            name == "hashlib.new" and isinstance(first_arg(call), ast.Constant)
            and str(cast(ast.Constant, first_arg(call)).value).lower() in ("md5", "sha1"))
        if not weak or is_const(keyword_arg(call, "usedforsecurity"), False):
            continue
        security = bool(_SECURITY_NAMES.search(ast.unparse(call)))
        yield (call, "warning" if security else "info",
               f"`{name}` is broken for security use (collisions are practical)"
               + (" and here it hashes something that looks like a credential." if security
                  else "; fine for checksums or cache keys."),
               "For passwords use hashlib.scrypt/argon2/bcrypt; for integrity use sha256; "
               "for non-security use pass usedforsecurity=False.")


_DEBUGGERS = frozenset({"breakpoint", "pdb.set_trace", "ipdb.set_trace", "pudb.set_trace",
                        "pdb.post_mortem"})


def _debug_leftover(parsed: PythonFile) -> Iterator[Report]:
    for call, name in parsed.calls:
        if name in _DEBUGGERS:
            yield (call, "warning", f"`{name}()` stops the program in a debugger.",
                   "Remove it before committing.")
        elif name == "print" and parsed.library and not _is_output(parsed, call):
            yield (call, "info", "`print` in library code is usually a debugging leftover.",
                   "Use logging, or remove it.")


# Functions whose job is to print: `dump_dfa`, `print_usage`, `show_tree`.
_PRINTING_FUNCTION = lazy_re(r"^_*(print|pprint|dump|show|display|usage)", re.IGNORECASE)


def _is_output(parsed: PythonFile, call: ast.Call) -> bool:
    """A print that is meant: written to a stream (`file=sys.stderr`), or in a function
    whose name says it prints."""
    if keyword_arg(call, "file") is not None:
        return True
    function = enclosing_function(parsed.tree, call.lineno) if parsed.tree else None
    return function is not None and bool(_PRINTING_FUNCTION.match(function.name))


def _world_writable(parsed: PythonFile) -> Iterator[Report]:
    for call, name in parsed.calls:
        if name in ("os.chmod", "os.makedirs", "os.mkdir", "pathlib.Path.chmod") or (
                name.endswith(".chmod") and len(call.args) == 1):
            mode = keyword_arg(call, "mode") or (call.args[-1] if call.args else None)
            if (isinstance(mode, ast.Constant) and isinstance(mode.value, int)
                    and mode.value & 0o002):
                yield (call, None, f"`{name}` with mode {oct(mode.value)} lets every local "
                                   "user write the file.",
                       "Use 0o644 for files and 0o755 for directories (or tighter).")


def _insecure_tempfile(parsed: PythonFile) -> Iterator[Report]:
    for call, name in parsed.calls:
        if name == "tempfile.mktemp":
            yield (call, None, "`tempfile.mktemp` returns a name another process can claim "
                               "before you create it.",
                   "Use tempfile.mkstemp() or NamedTemporaryFile().")


_TREE_RULES = (
    rule("python.eval-exec", "eval/exec of a non-constant string", "warning", "security",
         "Code built from strings runs whatever the string says.", _eval_exec,
         (line_pattern(r"(?<![\w.])(eval|exec)\s*\(\s*[^\s'\")]",
                       "`eval`/`exec` of a non-constant string runs it as Python code."),
          line_pattern(r"^\s*exec\s+[^\s'\"(]", "An `exec` statement runs a string as code.")),
         levels=("warning", "error")),
    rule("python.unsafe-deserialization", "Unsafe deserialisation", "warning", "security",
         "pickle, marshal and yaml.load run code from the data they load.",
         _unsafe_deserialisation,
         (line_pattern(r"\b(c?[Pp]ickle|dill|marshal)\.loads?\s*\(|\byaml\.(unsafe_)?load"
                       r"(_all)?\s*\((?![^)]*Safe)",
                       "This loader can run code from the data it loads."),)),
    rule("python.weak-hash", "MD5/SHA-1 hash", "info", "security",
         "MD5 and SHA-1 collide; they only suit non-security uses.", _weak_hash,
         (line_pattern(r"\b(hashlib\.(md5|sha1)|md5\.new|sha\.new)\s*\(",
                       "MD5/SHA-1 are broken for security use."),), levels=("info", "warning")),
    rule("python.debug-leftover", "Debugging leftover", "warning", "maintainability",
         "Debugger calls and prints left in code stall or clutter production.",
         _debug_leftover,
         (line_pattern(r"\b(i?pdb|pudb)\.set_trace\s*\(|(?<![\w.])breakpoint\s*\(\s*\)",
                       "A debugger call stops the program.", "warning"),),
         levels=("info", "warning")),
    rule("python.world-writable", "World-writable permissions", "warning", "security",
         "Any local user can change a world-writable file.", _world_writable,
         (line_pattern(r"\bchmod\s*\([^)]*\b0o?[0-7]?[0-7][0-7][2367]\b",
                       "This mode lets every local user write the file."),)),
    rule("python.insecure-tempfile", "Race-prone temporary file", "warning", "security",
         "mktemp's name can be taken by another process first.", _insecure_tempfile,
         (line_pattern(r"\btempfile\.mktemp\s*\(", "`tempfile.mktemp` is race-prone."),)),
)


class SourceEncodingRule(RuleBase, frozen=True):
    """A coding declaration under which Python reads other code than a reader sees."""

    def applies_to(self, change: FileChange) -> bool:
        return change.language == "python" and bool(change.added)

    def check(self, change: FileChange) -> Iterator[Hit]:
        codec = declared_codec(change.new_text or "")
        if codec is None or keeps_ascii(codec):
            return
        declared = 1 if declared_codec(change.line(1)) else 2
        # On the declaration when the change adds it, else where the change starts: code the
        # change adds under it is read by Python as nobody reads it.
        line = declared if declared in change.added_by_line else min(change.added_by_line)
        yield Hit(rule_id=self.id, line=line,
                  message=(f"The file declares the `{codec}` source encoding: Python decodes "
                           "it into other text than the file shows (a UTF-7 comment can hold "
                           "a statement), so what runs is not what anyone reviewed."),
                  suggestion="Save the file as UTF-8 and remove the coding declaration.")


RULES: tuple[Rule, ...] = (*_TREE_RULES, SourceEncodingRule(RuleInfo(
    id="python.source-encoding", title="Source encoding that hides code", severity="error",
    category="security",
    rationale="A codec that does not read ASCII as ASCII shows reviewers one program and "
              "runs another.")))
