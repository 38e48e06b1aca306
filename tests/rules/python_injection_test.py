"""Where HTML is made and where a path is joined: the sinks python.xss and
python.path-traversal stand on, and what a change cannot claim to get past them."""

from __future__ import annotations

import pytest

from tests.rules.conftest import Base, findings, hits

W, I = "warning", "info"  # noqa: E741

NOTES = ('import jinja2\nNOTES = """\n# {{ name }}\n{% for row in rows %}* {{ row }}\n'
         '{% endfor %}\n"""\n')


def _rule(code: str, rule_id: str, path: str = "app/mod.py") -> set[tuple[str, str]]:
    return {hit for hit in hits(path, code, base=Base(everything=True)) if hit[0] == rule_id}


@pytest.mark.parametrize("code", [
    NOTES + "TEMPLATE = jinja2.Environment(loader=jinja2.BaseLoader).from_string(NOTES)\n",
    "import jinja2\ndef notes(rows):\n    env = jinja2.Environment()\n"
    "    env.filters['up'] = str.upper\n"
    "    return env.get_template('release.md.j2').render(rows=rows)\n",
])
def test_a_jinja_environment_rendering_text_is_not_xss(code: str) -> None:
    assert _rule(code, "python.xss") == set()


@pytest.mark.parametrize("code", [
    # the Markdown-named template is returned by a web handler: a browser renders it
    "import jinja2\nfrom flask import request\n@app.route('/hi')\ndef hi():\n"
    "    env = jinja2.Environment()\n"
    "    return env.get_template('page.md').render(name=request.args['n'])\n",
    # text without tags made into an HTML response elsewhere in the module
    NOTES + "from starlette.responses import HTMLResponse\n"
    "TEMPLATE = jinja2.Environment().from_string(NOTES)\n"
    "def page(rows):\n    return HTMLResponse(TEMPLATE.render(rows=rows))\n",
    # one template of the environment is HTML
    "import jinja2\ndef mail(rows):\n    env = jinja2.Environment()\n"
    "    text = env.get_template('mail.txt').render(rows=rows)\n"
    "    return text, env.get_template('mail.html').render(rows=rows)\n",
    # the environment leaves the function: whoever renders it is out of sight
    "import jinja2\ndef environment():\n    env = jinja2.Environment()\n"
    "    env.get_template('notes.md')\n    return env\n",
])
def test_a_text_template_name_cannot_hide_html(code: str) -> None:
    """A template's name or text cannot make an Environment that serves pages quiet: only an
    Environment whose every template is text, in a module that serves no page, is."""
    assert _rule(code, "python.xss") == {("python.xss", W)}


HTML_BODY = ("import os\ndef comment(style):\n    url = os.environ['RUN_URL']\n"
             "    body = f'<a href=\"{url}\">{style}</a>'\n")


def test_html_written_to_a_markdown_file_is_not_xss() -> None:
    code = (HTML_BODY + "    name = f'.{style}.pr-comment.md'\n"
            "    with open(name, 'w') as f:\n        f.write(body)\n")
    assert _rule(code, "python.xss") == set()


@pytest.mark.parametrize("tail", [
    "    with open(f'{style}.html', 'w') as f:\n        f.write(body)\n",
    "    with open('comment.md', 'w') as f:\n        f.write(body)\n    return body\n",
])
def test_html_going_anywhere_but_a_text_file_stays_xss(tail: str) -> None:
    """HTML built from input is quiet only when every use of it writes a text file: written
    to a `.html` file, or also returned, it is still reported."""
    assert _rule(HTML_BODY + tail, "python.xss") == {("python.xss", W)}


@pytest.mark.parametrize("code", [
    # a folder joined with a parameter, looked at and listed (black's test cases)
    "from pathlib import Path\ndef cases(name):\n    folder = Path(ROOT) / name\n"
    "    return sorted(folder.iterdir()) if folder.is_dir() else []\n",
    "import os\ndef fresh(store, repo):\n    assert os.path.exists(os.path.join(store, repo))\n",
    # `+` that builds a pattern to replace, not a path (sanic's load_module_from_file_location)
    "from os import environ as os_environ\nfrom re import findall\ndef load(location):\n"
    "    for key in set(findall(r'\\${(.+?)}', location)):\n"
    "        location = location.replace('${' + key + '}', os_environ[key])\n"
    "    with open(location) as f:\n        return f.read()\n",
    # a package's resources, named by its own callers
    "import importlib.resources\ndef resource_text(filename):\n"
    "    files = importlib.resources.files('pkg.resources')\n"
    "    return files.joinpath(filename).read_text()\n",
])
def test_what_joins_nothing_or_reads_nothing_is_quiet(code: str) -> None:
    assert _rule(code, "python.path-traversal") == set()


@pytest.mark.parametrize("code", [
    "import importlib.resources\nfrom flask import request\n@app.route('/r')\ndef r():\n"
    "    name = request.args['n']\n"
    "    return (importlib.resources.files('pkg') / name).read_bytes()\n",
    "import os\nfrom flask import request\n@app.route('/ls')\ndef ls():\n"
    "    return os.listdir(os.path.join(ROOT, request.args['d']))\n",
    "from pathlib import Path\nfrom flask import request\n@app.route('/x')\ndef x():\n"
    "    return (Path(ROOT) / request.args['d']).exists()\n",
])
def test_request_data_in_a_resource_path_or_a_listing_is_traversal(code: str) -> None:
    """A package's resource folder, a listing or an existence check holds only for the
    program's own names: request data joined to them is still path traversal."""
    assert _rule(code, "python.path-traversal") == {("python.path-traversal", "error")}


def test_a_parameter_join_names_the_parameter() -> None:
    """The finding says what is joined: the parameter's name, not "a parameter"."""
    code = ("import os\ndef read(root, name):\n"
            "    with open(os.path.join(root, name)) as f:\n        return f.read()\n")
    found = [f for f in findings("app/store.py", code, base=Base(everything=True))
             if f.rule_id == "python.path-traversal"]
    assert [(f.severity, "joins a folder with `name`" in f.message) for f in found] == [
        (I, True)]


def test_a_path_built_with_plus_after_a_folder_is_still_joined() -> None:
    code = "def read(name):\n    return open('/srv/files/' + name).read()\n"
    assert _rule(code, "python.path-traversal") == {("python.path-traversal", I)}
