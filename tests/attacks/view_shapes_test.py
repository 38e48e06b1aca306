"""The pull-request author registers a view without a decorator, or writes HTML to a file
named as text and then serves it as HTML. A view is a view however it is registered (its
parameters are the URL's parts), and a file's name cannot make HTML that a view sends into
text: each twin is the plain case's finding at the plain case's severity."""

from __future__ import annotations

import pytest

from tests.rules.conftest import Base, hits

APP = ("from flask import Flask, request, send_file\nfrom flask.views import MethodView\n"
       "from markupsafe import Markup\n\napp = Flask(__name__)\n\n\n")
SHOW = "def show(name):\n    return Markup(f'<b>{name}</b>')\n\n\n"
PLAIN = "@app.route('/hello/<name>')\n" + SHOW
TWINS = {
    "add_url_rule with view_func": SHOW + "app.add_url_rule('/hello/<name>', view_func=show)\n",
    "add_url_rule positionally": SHOW + "app.add_url_rule('/hello/<name>', 'show', show)\n",
    "add_url_rule in an app factory": "def create_app():\n"
                                      "    app.add_url_rule('/hello/<name>', view_func=show)\n"
                                      "\n\n" + SHOW,
    "a decorator called by hand": SHOW + "app.route('/hello/<name>')(show)\n",
    "FastAPI's add_api_route": SHOW + "api.add_api_route('/hello/{name}', show)\n",
    "aiohttp's add_get": SHOW + "router.add_get('/hello/{name}', show)\n",
    "Django's path": "from django.urls import path\n\n\n" + SHOW
                     + "urlpatterns = [path('hello/<name>/', show)]\n",
    "a class through as_view": "class Show:\n    def get(self, name):\n"
                               "        return Markup(f'<b>{name}</b>')\n\n\n"
                               "app.add_url_rule('/hello/<name>', view_func=Show.as_view('s'))\n",
}


def _xss(code: str) -> set[tuple[str, str]]:
    return {hit for hit in hits("app/views.py", APP + code, base=Base(everything=True))
            if hit[0] == "python.xss"}


@pytest.mark.parametrize("twin", TWINS.values(), ids=TWINS.keys())
def test_a_view_registered_without_a_decorator_is_a_view(twin: str) -> None:
    plain = _xss(PLAIN)
    assert plain == {("python.xss", "error")}
    assert _xss(twin) == plain


def test_a_function_no_one_registers_is_no_view() -> None:
    assert _xss(SHOW) == {("python.xss", "warning")}


PAGE = ("def page():\n    body = f'<a href=\"{request.args[\"u\"]}\">go</a>'\n"
        "    with open(NAME, 'w') as f:\n        f.write(body)\n\n\n")
SERVE = "@app.route('/p')\ndef serve():\n    return send_file(NAME, mimetype='text/html')\n"


@pytest.mark.parametrize("name", ["page.md", "page.txt"])
def test_html_written_to_a_text_file_and_served_as_html_is_xss(name: str) -> None:
    plain = _xss((PAGE + SERVE).replace("NAME", "'page.html'"))
    assert plain == {("python.xss", "warning")}
    assert _xss((PAGE + SERVE).replace("NAME", repr(name))) == plain


def test_html_written_to_a_text_file_in_a_module_that_serves_nothing_is_quiet() -> None:
    assert _xss(PAGE.replace("NAME", "'page.md'")) == set()
