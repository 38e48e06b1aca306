"""XSS in Python: text marked safe or rendered as a template from input, HTML responses
built by formatting, and a Jinja environment without autoescaping where pages are served."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from typing import cast

from reviewbot.code.python_walk import walk
from reviewbot.lazy_re import lazy_re
from reviewbot.levels import Severity
from reviewbot.rules.python_ast import (
    PythonFile,
    Report,
    first_arg,
    is_const,
    keyword_arg,
    line_pattern,
    nodes_of,
    rule,
    string_kind,
)
from reviewbot.rules.python_flow import Flow, source_of
from reviewbot.rules.python_strings import is_formatted, literal_text
from reviewbot.rules.python_uses import OUTSIDE, Use, from_source, report_use, use_of

_MARK_SAFE = frozenset({
    "django.utils.safestring.mark_safe", "mark_safe", "markupsafe.Markup", "jinja2.Markup",
    "flask.Markup", "Markup", "django.utils.safestring.SafeString", "SafeString"})


_FORMAT_HTML = frozenset({"django.utils.html.format_html", "format_html"})


_TEMPLATE_STRINGS = frozenset({"flask.render_template_string", "render_template_string",
                               "jinja2.Template"})


_RESPONSES = frozenset({
    "django.http.HttpResponse", "HttpResponse", "flask.make_response", "make_response",
    "flask.Response", "werkzeug.Response", "werkzeug.wrappers.Response",
    "starlette.responses.HTMLResponse", "fastapi.responses.HTMLResponse", "HTMLResponse"})


# Calls that send a file to a browser, which renders it as its type says.
_SENDERS = frozenset({"flask.send_file", "send_file", "flask.send_from_directory",
                      "send_from_directory", "starlette.responses.FileResponse",
                      "fastapi.responses.FileResponse", "FileResponse",
                      "aiohttp.web.FileResponse", "django.http.FileResponse"})


_HTML = lazy_re(r"<\s*/?\s*[a-zA-Z]")


_ESCAPE_HINT = ("Escape the values (format_html(\"<b>{}</b>\", value), markupsafe.escape) "
                "or render a template with autoescaping.")


def xss(parsed: PythonFile) -> Iterator[Report]:
    for call, name in parsed.scope_calls:
        if name in ("jinja2.Environment", "jinja2.environment.Environment"):
            yield from _jinja_environment(parsed, call)
            continue
        if name.endswith(".from_string"):
            name = "jinja2.Template"  # Environment.from_string
        arg = first_arg(call, "source")
        if arg is None or not (name in _MARK_SAFE or name in _FORMAT_HTML
                               or name in _TEMPLATE_STRINGS or name in _RESPONSES):
            continue
        use = use_of(parsed, call, name, arg, "html")
        found = _html_finding(use)
        if found is not None:
            yield from report_use(parsed, use, found[0], found[1], _ESCAPE_HINT)
    yield from _html_elsewhere(parsed)


# Markup a browser acts on: a document, links, scripts, forms, frames, images.
_HTML_MARKUP = lazy_re(r"<\s*(html|body|script|a\s[^>]*href|form|iframe|img\s[^>]*src|"
                          r"meta\s[^>]*url)\b", re.IGNORECASE)


_ESCAPES = frozenset({"escape", "html.escape", "markupsafe.escape", "django.utils.html.escape",
                      "cgi.escape", "xml.sax.saxutils.escape", "quoteattr", "format_html",
                      "bleach.clean", "urllib.parse.quote", "quote"})


def _html_elsewhere(parsed: PythonFile) -> Iterator[Report]:
    """HTML a browser acts on (links, scripts, refreshes) built by formatting with input
    that no escape function went through."""
    for node in nodes_of(parsed, ast.JoinedStr, ast.BinOp, ast.Call):
        if not isinstance(node, ast.JoinedStr | ast.BinOp | ast.Call) or not is_formatted(node):
            continue
        if not _HTML_MARKUP.search(literal_text(node, parsed.constants)):
            continue
        flow = parsed.flow.at(node)
        values = [n for n in walk(node) if isinstance(n, ast.Name)
                  and not _escaped(n, node, parsed)]
        sources = [source_of(n, flow, parsed.flow.name_of, "html") for n in values]
        outside = [s for s in sources if s in OUTSIDE] or (
            ["request"] if flow.handler and any(sources) else [])
        if not outside or _written_to_text_files(node, parsed):
            continue
        yield (node, "warning", f"HTML is built by formatting with values{from_source(outside[0])} "
                                "that are not escaped: markup in them runs in the page (XSS).",
               _ESCAPE_HINT)


def _escaped(name: ast.Name, root: ast.AST, parsed: PythonFile) -> bool:
    """The name is an argument of an escape call inside `root`."""
    return any(isinstance(call, ast.Call) and parsed.flow.name_of(call) in _ESCAPES
               and any(n is name for arg in call.args for n in walk(arg))
               for call in walk(root))


def _html_finding(use: Use) -> tuple[Severity | None, str] | None:
    if string_kind(use.value) == "constant":
        return None
    outside = use.source in OUTSIDE
    name = use.name.rsplit(".", 1)[-1]
    if use.name in _FORMAT_HTML:
        if not use.formatted:
            return None
        return ("error" if outside else "warning",
                f"`{name}` gets HTML already built by formatting{from_source(use.source)}: it "
                "escapes only its own arguments, so the values in it are not escaped (XSS).")
    if use.name in _TEMPLATE_STRINGS:
        if not (use.formatted or outside):
            return None
        return ("error" if outside else "warning",
                f"`{name}` renders a template built{from_source(use.source)}: input in it is "
                "template code (server-side template injection, XSS).")
    if use.name in _RESPONSES:
        if not (outside and use.formatted and _HTML.search(literal_text(use.value))):
            return None
        return ("error" if use.source == "request" else "warning",
                f"`{name}` returns HTML built{from_source(use.source)} without escaping (XSS).")
    if use.formatted or outside:
        return ("error" if outside else "warning",
                f"`{name}` marks text built{from_source(use.source)} as safe HTML: input in it is "
                "not escaped (XSS).")
    if is_formatted(use.value):
        return None  # every value in it is escaped
    return ("info", f"`{name}` marks a value as safe HTML; check nothing in it comes from "
                    "input.")


def _jinja_environment(parsed: PythonFile, call: ast.Call) -> Iterator[Report]:
    autoescape = keyword_arg(call, "autoescape")
    if autoescape is not None and not is_const(autoescape, False):
        return
    if _renders_text_only(parsed, call):
        return
    yield (call, "warning", "A Jinja2 Environment without autoescape renders values into "
                            "HTML unescaped (XSS).",
           "Pass autoescape=jinja2.select_autoescape() (or True for HTML-only templates).")


# Names of files (or templates) whose text is not HTML: Markdown release notes, a comment
# body, a config file. A template's own extension after it (`notes.md.j2`) is looked through.
_TEXT_FILE = lazy_re(r"\.(md|markdown|rst|txt|text|py|toml|ya?ml|json|cfg|ini|sh|csv)"
                        r"(\.(j2|jinja2?|tmpl|tpl))?$", re.IGNORECASE)


_TEMPLATE_GETTERS = frozenset({"from_string", "get_template", "select_template",
                               "get_or_select_template"})


def _renders_text_only(parsed: PythonFile, environment: ast.Call) -> bool:
    """Every template the Environment renders is text, not HTML (a constant without tags, a
    `.md` or `.txt` name), and nothing in the module serves a page: a template's name
    alone cannot make HTML that a web handler returns into text."""
    if parsed.tree is None or _serves_pages(parsed):
        return False
    parents = _parents(parsed)
    holder = parents.get(id(environment))
    if isinstance(holder, ast.Attribute):
        return _text_template(parsed, parents.get(id(holder)), holder)
    function = parsed.flow.function_at(environment)
    # Passed on, returned, kept at module level or on an object: other code may render it.
    if function is None or not (isinstance(holder, ast.Assign) and len(holder.targets) == 1
                                and isinstance(holder.targets[0], ast.Name)):
        return False
    target = holder.targets[0].id
    uses = [n for n in walk(function) if isinstance(n, ast.Name) and n.id == target
            and isinstance(n.ctx, ast.Load)]
    return bool(uses) and all(_text_template(parsed, parents.get(id(parents.get(id(use)))),
                                             parents.get(id(use))) for use in uses)


def _text_template(parsed: PythonFile, call: ast.AST | None, attribute: ast.AST | None) -> bool:
    """`env.get_template("notes.md")`, `env.from_string(NOTES)` with no tags in it, or an
    environment's setting (`env.filters[...]`): nothing that makes HTML."""
    if not isinstance(attribute, ast.Attribute):
        return False
    if attribute.attr not in _TEMPLATE_GETTERS:
        return not isinstance(call, ast.Call) or call.func is not attribute \
            or attribute.attr not in ("render", "stream", "generate", "render_async")
    if not (isinstance(call, ast.Call) and call.func is attribute and call.args):
        return False
    source = call.args[0]
    if attribute.attr == "from_string":
        known = isinstance(source, ast.Constant) or (
            isinstance(source, ast.Name) and source.id in parsed.constants)
        return known and not _HTML.search(literal_text(source, parsed.constants))
    names = source.elts if isinstance(source, ast.List | ast.Tuple) else [source]
    return all(isinstance(n, ast.Constant) and isinstance(n.value, str)
               and _TEXT_FILE.search(n.value) is not None for n in names)


def _serves_pages(parsed: PythonFile) -> bool:
    """The module has a web handler, makes a response or sends a file."""
    served = parsed.memo.get("serves_pages")
    if isinstance(served, bool):
        return served
    parsed.memo["serves_pages"] = served = _finds_page(parsed)
    return served


def _finds_page(parsed: PythonFile) -> bool:
    for node in walk(cast(ast.Module, parsed.tree)):
        if isinstance(node, ast.Call) and parsed.flow.name_of(node) in _RESPONSES | _SENDERS:
            return True
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) \
                and parsed.flow.at(node.body[0]).handler:
            return True
    return False


def _parents(parsed: PythonFile) -> dict[int, ast.AST]:
    parents = parsed.memo.get("parents")
    if not isinstance(parents, dict):
        parents = {id(child): node for node in walk(cast(ast.Module, parsed.tree))
                   for child in ast.iter_child_nodes(node)}
        parsed.memo["parents"] = parents
    return cast(dict[int, ast.AST], parents)


def _written_to_text_files(node: ast.AST, parsed: PythonFile) -> bool:
    """HTML assigned to a name that its function only writes to files with a text name
    (`body` written to `.pr-comment.md`): a Markdown file or a comment body, not a page,
    in a module that serves none (a file's name cannot make HTML a view sends into text:
    `send_file("notes.md", mimetype="text/html")`)."""
    if _serves_pages(parsed):
        return False
    assign = _parents(parsed).get(id(node))
    function = parsed.flow.function_at(node)
    if function is None or not (isinstance(assign, ast.Assign) and len(assign.targets) == 1
                                and isinstance(assign.targets[0], ast.Name)):
        return False
    name, flow = assign.targets[0].id, parsed.flow.at(node)
    files = {item.optional_vars.id: item.context_expr for statement in walk(function)
             if isinstance(statement, ast.With | ast.AsyncWith) for item in statement.items
             if isinstance(item.optional_vars, ast.Name)
             and isinstance(item.context_expr, ast.Call)
             and parsed.flow.name_of(item.context_expr) in ("open", "builtins.open", "io.open")}
    uses = [n for n in walk(function) if isinstance(n, ast.Name) and n.id == name
            and isinstance(n.ctx, ast.Load)]
    writes = [call for call in walk(function) if isinstance(call, ast.Call)
              and isinstance(call.func, ast.Attribute) and call.func.attr == "write"
              and isinstance(call.func.value, ast.Name) and call.func.value.id in files
              and len(call.args) == 1 and isinstance(call.args[0], ast.Name)
              and call.args[0].id == name]
    if not uses or len(uses) != len(writes):
        return False
    opened = [files[cast(ast.Name, cast(ast.Attribute, w.func).value).id] for w in writes]
    return all(_text_file(call, flow, parsed) for call in opened)


def _text_file(opened: ast.Call, flow: Flow, parsed: PythonFile) -> bool:
    path = first_arg(opened, "file")
    if isinstance(path, ast.Name):
        before = flow.assignments_before(path.id, opened.lineno)
        path = before[0] if before else None
    return path is not None and bool(
        _TEXT_FILE.search(literal_text(path, parsed.constants).rstrip()))


RULES = (
    rule("python.xss", "HTML from input without escaping", "warning", "security",
         "Text marked safe or rendered as a template is not escaped.", xss,
         (line_pattern(r"\b(mark_safe|Markup|render_template_string)\s*\(\s*[^\s'\")]",
                       "A non-constant value is marked safe or rendered as a template."),),
         levels=("info", "warning", "error")),
)
