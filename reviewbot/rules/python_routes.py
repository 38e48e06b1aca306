"""The functions and classes a module registers as web views without a decorator.

A view is a view however it is registered: `app.add_url_rule("/p", view_func=show)`
(Flask), `app.add_api_route("/p", show)` (FastAPI), `app.add_route(show, "/p")` (Sanic),
`router.add_get("/p", show)` (aiohttp), `config.add_view(show, ...)` (Pyramid), `path("p/",
show)` (Django), `app.route("/p")(show)` (a decorator called by hand), and a class through
`Show.as_view("show")`. Their parameters are the URL's parts, as a decorated view's are
(rules/python_flow.py). The module's text is searched first; only a module that names a way
to register is walked (Django's patterns by the `urlpatterns` they are listed in).
"""

from __future__ import annotations

import ast
import re

from reviewbot.code.python_walk import walk

# Methods that register a view: the function or class is among their arguments.
_REGISTRARS = frozenset({
    "add_url_rule", "add_api_route", "add_route", "add_get", "add_post", "add_put",
    "add_patch", "add_delete", "add_head", "add_view", "add_websocket_route",
    "add_api_websocket_route", "register_view", "add_resource"})
# Django's URL patterns, by their function's name.
_PATTERNS = frozenset({"path", "re_path", "url"})
# Decorators that register a view, when called by hand: `app.route("/p")(show)`.
_DECORATORS = frozenset({"route", "get", "post", "put", "patch", "delete", "websocket",
                         "api_route", "view_config"})
_MENTIONED = re.compile(r"add_url_rule|add_api_route|add_route|add_get|add_post|add_put|"
                        r"add_patch|add_delete|add_head|add_view|add_websocket|register_view|"
                        r"add_resource|as_view|\)\(|urlpatterns")


def registered_views(tree: ast.Module, text: str) -> frozenset[str]:
    """The names of the functions, methods and classes the module registers as views."""
    if not _MENTIONED.search(text):
        return frozenset()
    found: set[str] = set()
    for node in walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        called = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
        if called == "as_view" and isinstance(func, ast.Attribute):
            found |= _names([func.value])
        elif called in _REGISTRARS or (called in _PATTERNS and isinstance(func, ast.Name)):
            found |= _names([*node.args, *(k.value for k in node.keywords)])
        elif isinstance(func, ast.Call):
            inner = func.func
            decorator = inner.attr if isinstance(inner, ast.Attribute) \
                else getattr(inner, "id", "")
            if decorator in _DECORATORS:
                found |= _names(node.args)
    return frozenset(found)


def _names(values: list[ast.expr]) -> set[str]:
    """`show`, `self.show`, `views.show`: the function's own name."""
    found: set[str] = set()
    for value in values:
        if isinstance(value, ast.Name):
            found.add(value.id)
        elif isinstance(value, ast.Attribute):
            found.add(value.attr)
    return found
