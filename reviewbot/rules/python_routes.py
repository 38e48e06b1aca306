"""Which functions serve web requests: decorated as views, taking a request, or registered
as views without a decorator.

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

from reviewbot.code.python_walk import walk
from reviewbot.lazy_re import lazy_re

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
_MENTIONED = lazy_re(r"add_url_rule|add_api_route|add_route|add_get|add_post|add_put|"
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


# `req` is a request (falcon, aiohttp, Express-style code) when it is used like one: in
# packaging code (pip, setuptools) it is a requirement, whose paths are the program's own.
REQUEST_DATA = frozenset({
    "args", "form", "values", "files", "json", "data", "body", "GET", "POST", "FILES",
    "COOKIES", "META", "headers", "cookies", "params", "query", "query_params", "path_params",
    "match_info", "path", "url", "full_path", "query_string", "get_param", "get_json",
    "get_data", "media", "stream", "bounded_stream", "rel_url", "content", "text", "post",
    "uri", "relative_uri"})
_HANDLER_DECORATORS = ("route", "get", "post", "put", "patch", "delete", "api_view",
                       "view_config", "websocket")


def is_handler(function: ast.FunctionDef | ast.AsyncFunctionDef, params: list[str]) -> bool:
    """A web handler: decorated as a route or view, or taking a web request."""
    if ("request" in params and not _annotated_otherwise(function, "request")) \
            or ("req" in params and _req_is_request(function)):
        return True
    for decorator in function.decorator_list:
        target = decorator.func if isinstance(decorator, ast.Call) else decorator
        name = target.attr if isinstance(target, ast.Attribute) else getattr(target, "id", "")
        if name in _HANDLER_DECORATORS:
            return True
    return False


# What a web framework's request is called when a parameter is annotated with it.
_WEB_REQUEST_TYPE = lazy_re(r"(?<![\w])(I|Http|WSGI|ASGI|Base|Local|HTTPServer)?Request\b")


def _annotated_otherwise(function: ast.FunctionDef | ast.AsyncFunctionDef, name: str) -> bool:
    """A parameter annotated with a type that is not a web request (`request: ChangeRequest`
    in a program's own pipeline)."""
    arg = next((a for a in (*function.args.posonlyargs, *function.args.args,
                            *function.args.kwonlyargs) if a.arg == name), None)
    return arg is not None and arg.annotation is not None \
        and not _WEB_REQUEST_TYPE.search(ast.unparse(arg.annotation))


def _req_is_request(function: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """A parameter `req` annotated as a request, or read like one (`req.params`)."""
    arg = next((a for a in (*function.args.posonlyargs, *function.args.args,
                            *function.args.kwonlyargs) if a.arg == "req"), None)
    if arg is not None and arg.annotation is not None:
        return "Request" in ast.unparse(arg.annotation)
    return any(isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
               and node.value.id == "req" and node.attr in REQUEST_DATA
               for node in walk(function))
