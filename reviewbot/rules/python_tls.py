"""TLS certificate checks switched off in Python, in every shape the off switch takes.

An HTTP client's `verify=False` is the plain case. The same switch is thrown by a false
flag in another shape (`verify=0`, a name bound to `False`: rules/python_calls.py reads
them as `False`), by aiohttp's `ssl=False`, by `cert_reqs="CERT_NONE"`, by a session's
attribute (`session.verify = False` on a `requests.Session()`), by replacing the standard
library's default context with the unverified one, and by the environment variables the
clients read (`PYTHONHTTPSVERIFY=0`, an empty `CURL_CA_BUNDLE`, which older requests
took as "verify nothing").
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

from reviewbot.rules.python_ast import (
    PythonFile,
    Report,
    is_const,
    keyword_arg,
    line_pattern,
    nodes_of,
    rule,
)

_HTTP_CLIENTS = ("requests.", "httpx.", "urllib3.", "aiohttp.", "niquests.", "treq.")
_HTTP_METHODS = frozenset({"get", "post", "put", "patch", "delete", "head", "options",
                           "request", "send", "stream", "urlopen", "Client", "AsyncClient",
                           "Session", "ClientSession", "PoolManager", "TCPConnector"})
# The objects whose `verify` attribute is the check for every request they send.
_SESSIONS = frozenset({"requests.Session", "requests.session", "requests.sessions.Session",
                       "httpx.Client", "httpx.AsyncClient", "niquests.Session"})
# Keywords that switch the check off when false, beside `verify`.
_OFF_WHEN_FALSE = ("verify", "ssl", "verify_ssl")
_CERT_NONE = ("CERT_NONE", "ssl.CERT_NONE", "0")
# An environment variable, and the values of it that switch the check off.
_ENVIRONMENT: dict[str, tuple[str, ...]] = {
    "PYTHONHTTPSVERIFY": ("0",), "CURL_CA_BUNDLE": ("",), "REQUESTS_CA_BUNDLE": ("",),
    "GIT_SSL_NO_VERIFY": ("1", "true", "True"), "NODE_TLS_REJECT_UNAUTHORIZED": ("0",)}
_OFF = ("Keep verification on; for a private CA pass verify=\"/path/to/ca.pem\" "
        "(or set REQUESTS_CA_BUNDLE to it).")


def tls_disabled(parsed: PythonFile) -> Iterator[Report]:
    yield from _calls(parsed)
    for node in nodes_of(parsed, ast.Assign):
        if isinstance(node, ast.Assign):
            yield from _assigned(parsed, node)
    for call, name in parsed.calls:
        if name in ("os.putenv", "os.environ.setdefault") and len(call.args) == 2:
            yield from _environment(call, call.args[0], call.args[1])
        elif name == "os.environ.update":
            for keyword in call.keywords:
                if keyword.arg is not None:
                    yield from _environment(call, ast.Constant(keyword.arg), keyword.value)


def _calls(parsed: PythonFile) -> Iterator[Report]:
    for call, name in parsed.calls:
        # verify=False is TLS only for an HTTP client; a helper's own `verify` flag
        # (a checksum, a signature) is something else.
        client = name.startswith(_HTTP_CLIENTS) or name.rsplit(".", 1)[-1] in _HTTP_METHODS
        off = next((k for k in _OFF_WHEN_FALSE if is_const(keyword_arg(call, k), False)),
                   None)
        if name == "ssl._create_unverified_context" or (client and off is not None):
            yield (call, "error", f"`{name}` turns off TLS certificate verification: anyone "
                                  "on the network path can read and change the traffic.", _OFF)
        elif _text(keyword_arg(call, "cert_reqs")) in _CERT_NONE:
            yield (call, "error", f"`{name}` is given `cert_reqs=CERT_NONE`: it accepts any "
                                  "certificate.", _OFF)


def _session_names(parsed: PythonFile) -> frozenset[str]:
    """Names (and `self.` fields) the module binds to an HTTP session."""
    found: set[str] = set()
    for node in ast.walk(parsed.tree) if parsed.tree is not None else ():
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call) \
                and parsed.shapes.name_of(node.value) in _SESSIONS:
            found |= {ast.unparse(target) for target in node.targets}
    return frozenset(found)


def _assigned(parsed: PythonFile, node: ast.Assign) -> Iterator[Report]:
    # Only the targets that can switch TLS off are unparsed: a module has many assignments.
    for target in node.targets:
        if isinstance(target, ast.Attribute):
            yield from _attribute_set(parsed, node, target)
        elif isinstance(target, ast.Subscript) and isinstance(target.value, ast.Attribute) \
                and target.value.attr == "environ" and ast.unparse(target.value) == "os.environ":
            yield from _environment(node, target.slice, node.value)


def _attribute_set(parsed: PythonFile, node: ast.Assign,
                   target: ast.Attribute) -> Iterator[Report]:
    if (target.attr == "check_hostname" and _false(parsed, node.value)) or (
            target.attr == "verify_mode" and ast.unparse(node.value) in _CERT_NONE):
        yield (node, "error", "TLS hostname or certificate checking is switched off.",
               "Keep ssl.create_default_context() defaults.")
    elif target.attr == "verify" and _false(parsed, node.value) \
            and ast.unparse(target.value) in _session_names(parsed):
        yield (node, "error", "The session's `verify` is switched off: every request it "
                              "sends accepts any certificate.", _OFF)
    elif target.attr == "_create_default_https_context" \
            and ast.unparse(target).endswith("ssl._create_default_https_context") \
            and ast.unparse(node.value) != "ssl.create_default_context":
        yield (node, "error", "The standard library's default TLS context is replaced: "
                              "every HTTPS connection made through it skips the checks.",
               "Keep the default context; pass a context with a private CA where needed.")


def _environment(node: ast.AST, key: ast.expr, value: ast.expr) -> Iterator[Report]:
    name = _text(key)
    if name in _ENVIRONMENT and _text(value) in _ENVIRONMENT[name]:
        yield (node, "error", f"`{name}` is set to switch TLS certificate checks off for this "
                              "process and the programs it starts.", _OFF)


def _false(parsed: PythonFile, value: ast.expr) -> bool:
    return parsed.shapes.truth(value, getattr(value, "lineno", 0)) is False


def _text(node: ast.expr | None) -> str | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str | int) \
            and not isinstance(node.value, bool):
        return str(node.value)
    if isinstance(node, ast.Attribute | ast.Name):
        return ast.unparse(node)
    return None


RULES = (
    rule("python.tls-verify-disabled", "TLS verification disabled", "error", "security",
         "Without certificate checks TLS protects against nobody.", tls_disabled,
         (line_pattern(r"\b(requests|httpx|session|client)\b.*\bverify\s*=\s*False|"
                       r"_create_unverified_context|CERT_NONE",
                       "TLS certificate verification is switched off.", "warning"),)),
)
