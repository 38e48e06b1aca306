"""Every rule: code that must fire (with its severity) and near misses that must stay quiet.

Each case is (path, added code, the exact set of (rule_id, severity) expected).
"""

from __future__ import annotations

import pytest

from reviewbot.rules import scanners
from tests.rules.conftest import Base, hits


@pytest.fixture(autouse=True)
def _own_rules_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """The table is about reviewbot's rules; shellcheck, hadolint and zizmor have their own
    tests (tests/rules/scanners_test.py)."""
    monkeypatch.setattr(scanners, "find_executable", lambda name: None)

E, W, I = "error", "warning", "info"  # noqa: E741

PRT = ("on:\n  pull_request_target:\njobs:\n  build:\n    runs-on: ubuntu-latest\n"
       "    steps:\n      - uses: actions/checkout@v4\n        with:\n{ref}"
       "      - run: make test\n")

CASES: list[tuple[str, str, str, set[tuple[str, str]]]] = [
    # --- secrets -----------------------------------------------------------------------
    ("aws-key", "app/settings.py", 'KEY = "AKIAQWERTYUIOPASDFGH"\n',
     {("secrets.hardcoded", E)}),
    ("private-key", "deploy/id_rsa.txt",
     "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAx7Yl3QkZs9mFqkTnB2dRzQ2hhbmdlTWVQbGVhc2\n",
     {("secrets.hardcoded", E)}),
    ("an encrypted PEM key", "deploy/key.pem",
     "-----BEGIN RSA PRIVATE KEY-----\nProc-Type: 4,ENCRYPTED\n", {("secrets.hardcoded", E)}),
    ("a key in one string", "app/keys.py",
     'KEY = "-----BEGIN OPENSSH PRIVATE KEY-----\\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9u"\n',
     {("secrets.hardcoded", E)}),
    ("near: the armour alone, in a constant", "app/pem.py",
     'HEADER = "-----BEGIN RSA PRIVATE KEY-----"\nFOOTER = "-----END RSA PRIVATE KEY-----"\n',
     set()),
    ("near: the armour quoted in a comment", "app/pem.py",
     "# a key starts with -----BEGIN OPENSSH PRIVATE KEY-----\nx = 1\n", set()),
    ("near: a key format's name in a pattern list", "scanner/keys.py",
     "PATTERNS = [\n    r'BEGIN DSA PRIVATE KEY',\n    r'PuTTY-User-Key-File-2',\n]\n", set()),
    ("an SSH2 private key", "deploy/key.txt",
     "---- BEGIN SSH2 ENCRYPTED PRIVATE KEY ----\nComment: \"rsa-key-20260101\"\n"
     "AAAAB3NzaC1yc2EAAAABJQAAAQEAhHy9e7kcnxxm/vR3o0TxbdeYu+kFNrtPj7w\n",
     {("secrets.hardcoded", E)}),
    ("github-token", "ci.sh", "export GH=ghp_abcdefghijklmnopqrstuvwxyz0123456789\n",
     {("secrets.hardcoded", E)}),
    ("keyword-password", "app/db.py", 'password = "hunter2-correct-horse"\n',
     {("secrets.hardcoded", W)}),
    ("entropy-only-is-info", "app/consts.py",
     'BLOB = "Zm9vYmFyYmF6cXV4MTIzNDU2Nzg5MGFiY2RlZmdoaWprbG1u"\n',
     {("secrets.hardcoded", I)}),
    ("near: hex digest without a secret word", "app/consts.py",
     'CHECKSUM = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"\n', set()),
    ("hex value named like a key", "app/consts.py",
     'API_KEY = "3f786850e387550fdab836ed7e6dc881de23001b"\n', {("secrets.hardcoded", W)}),
    ("near: placeholder credentials in a URL", "app/url.py",
     "# Handle http://username:password@hostname/\n", set()),
    ("password in a URL", "app/url.py",
     'DSN = "postgres://admin:s3cr3tP4ss@db.internal:5432/app"\n', {("secrets.hardcoded", E)}),
    ("near: a password example with words in it", "app/urls.py",
     '        username="jo@example.com", password="a secret"\n', set()),
    ("near: a placeholder of words on a docs page", "docs/sanic/nginx.rst",
     '    app.config.FORWARDED_SECRET = "YOUR SECRET"\n', set()),
    ("near: a placeholder of words in code", "app/proxy.py",
     'FORWARDED_SECRET = "your api key here"\n', set()),
    ("near: a value that names itself on a docs page", "guide/auth.md",
     'app.config.SECRET = "KEEP_IT_SECRET_KEEP_IT_SAFE"\n'
     "sanic inspect --api-key=Super-Secret-200\n", set()),
    ("near: words as a credential on a docs page", "guide/tls.md",
     '    "password": "for encrypted privkey file",\n', set()),
    ("a value that names itself in code is a credential it runs with", "app/auth.py",
     'SECRET = "KEEP_IT_SECRET_KEEP_IT_SAFE"\n', {("secrets.hardcoded", W)}),
    ("words as a credential in a config file", "deploy/.env",
     'PASSWORD="correct horse battery staple"\n', {("secrets.hardcoded", W)}),
    ("near: a workflow permission named like a token", ".github/workflows/release.yml",
     "permissions:\n  id-token: write\n", set()),
    ("near: encrypted CI value", ".travis.yml",
     'env:\n  global:\n    - secure: "Zm9vYmFyYmF6cXV4MTIzNDU2Nzg5MGFiY2RlZmdoaWprbG1ub3Bx"\n',
     set()),
    ("near: fixture hash in tests is quiet", "tests/test_hash.py",
     'EXPECTED = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"\n', set()),
    ("near: a fixture's password is quiet", "fixtures/users.json",
     '{"password": "hunter2hunter2"}\n', {("secrets.hardcoded", I)}),
    ("key in tests is a key all the same", "tests/test_aws.py",
     'KEY = "AKIAQWERTYUIOPASDFGH"\n', {("secrets.hardcoded", E)}),
    ("near: AWS's documented example key", "app/aws.py",
     'KEY = "AKIAIOSFODNN7EXAMPLE"\n', set()),
    ("near: password from env", "app/db.py", 'password = os.environ["DB_PASSWORD"]\n', set()),
    ("near: allowlist pragma", "app/db.py",
     'KEY = "AKIAQWERTYUIOPASDFGH"  # pragma: allowlist secret\n', set()),
    ("near: template placeholder", "app/config.yaml", "password: ${DB_PASSWORD}\n", set()),
    ("near: a comment's example value", "app/keyword.py",
     '# Support for a suffix, e.g. password_secure = "value"\n', set()),
    ("github fine-grained token", "app/settings.py",
     "TOKEN = 'github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRS"
     "TUVWXYZ0123456789abcd'\n", {("secrets.hardcoded", E)}),
    ("openai project key", "app/settings.py",
     'OPENAI = "sk-proj-Abcdefghijklmnopqrstuvwxyz0123456789_ABCDEF"\n',
     {("secrets.hardcoded", E)}),
    ("unquoted github token in yaml", "deploy/values.yaml",
     "token: ghp_abcdefghijklmnopqrstuvwxyz0123456789\n", {("secrets.hardcoded", E)}),
    ("password in a dotenv file", ".env.production", "DB_PASSWORD=hunter2hunter2\n",
     {("secrets.hardcoded", W)}),
    ("near: dotenv reference", ".env", "DB_PASSWORD=${VAULT_DB_PASSWORD}\n", set()),
    ("near: code reference, not a literal", "app/db.py", "password = settings.db_password\n",
     set()),
    # --- python: shell -------------------------------------------------------------------
    ("shell formatted", "app/run.py",
     'import subprocess\nsubprocess.run(f"ls {path}", shell=True)\n',
     {("python.shell-injection", E)}),
    ("shell percent via alias", "app/run.py",
     'from subprocess import check_output as co\nco("ls %s" % path, shell=True)\n',
     {("python.shell-injection", E)}),
    ("shell variable", "app/run.py", "import subprocess\nsubprocess.call(cmd, shell=True)\n",
     {("python.shell-injection", W)}),
    ("near: shell constant is info", "app/run.py",
     'import subprocess\nsubprocess.run("ls -l", shell=True)\n', {("python.shell-injection", I)}),
    ("near: list args without shell", "app/run.py",
     'import subprocess\nsubprocess.run(["ls", path], check=True)\n', set()),
    ("os.system formatted", "app/run.py", 'import os\nos.system("rm -rf " + path)\n',
     {("python.shell-injection", E)}),
    ("near: os.system constant", "app/run.py", 'import os\nos.system("clear")\n', set()),
    ("shell command built earlier from a parameter", "app/run.py",
     'import subprocess\ndef run(path):\n    cmd = "convert %s out.png" % path\n'
     "    subprocess.Popen(cmd, shell=True)\n", {("python.shell-injection", E)}),
    ("shell command from the environment", "app/run.py",
     'import os\ndef run():\n    target = os.environ.get("TARGET")\n    os.system(target)\n',
     {("python.shell-injection", E)}),
    ("unresolved Popen with shell=True is a quieter shell", "app/run.py",
     "def run(cmd):\n    Popen(cmd, shell=True)\n", {("python.shell-injection", I)}),
    ("asyncio shell", "app/run.py",
     "import asyncio\nasync def run(host):\n"
     '    await asyncio.create_subprocess_shell(f"ping {host}")\n',
     {("python.shell-injection", E)}),
    ("near: constant command through a variable", "app/run.py",
     'import os\ndef run():\n    cmd = "make clean"\n    os.system(cmd)\n', set()),
    # --- python: options of a command (argument injection) ---------------------------------
    ("a parameter reaches a version-control command as an argument", "app/vcs.py",
     "import subprocess\ndef clone(repo_type, checkout):\n"
     "    subprocess.check_output([repo_type, 'checkout', checkout])\n",
     {("python.option-injection", I)}),
    ("request data reaches git through a variable", "app/views.py",
     "import subprocess\ndef fetch(request):\n    url = request.GET['url']\n"
     "    subprocess.run(['git', 'clone', url, 'dest'], check=True)\n",
     {("python.option-injection", W)}),
    ("asyncio exec of ssh with input", "app/remote.py",
     "import asyncio\nimport sys\nasync def run():\n"
     "    await asyncio.create_subprocess_exec('/usr/bin/ssh', sys.argv[1], 'uptime')\n",
     {("python.option-injection", W)}),
    ("near: `--` ends the options", "app/vcs.py",
     "import subprocess\ndef checkout(rev):\n"
     "    subprocess.run(['git', 'checkout', '--', rev], check=True)\n", set()),
    ("near: the value fused to its option", "app/vcs.py",
     "import subprocess\ndef update(rev):\n"
     "    subprocess.run(['hg', 'update', f'--rev={rev}'], check=True)\n", set()),
    ("near: the value of an option", "app/vcs.py",
     "import subprocess\ndef files(root):\n"
     "    return subprocess.check_output(['git', '-C', root, 'ls-files'])\n", set()),
    ("near: a leading dash is rejected", "app/vcs.py",
     "import subprocess\ndef checkout(rev):\n    if rev.startswith('-'):\n"
     "        raise ValueError(rev)\n    subprocess.run(['git', 'checkout', rev])\n", set()),
    ("near: a program that reads no options from its operands", "app/run.py",
     "import subprocess\ndef show(path):\n    subprocess.run(['cat', path], check=True)\n",
     set()),
    ("near: the program's own values", "app/vcs.py",
     "import subprocess\nBRANCH = 'main'\ndef main():\n"
     "    subprocess.run(['git', 'checkout', BRANCH], check=True)\n", set()),
    ("near: a command string through a shell is the shell rule's", "app/vcs.py",
     "import subprocess\ndef checkout(rev):\n"
     "    subprocess.run(['git', 'checkout', rev], shell=True)\n",
     {("python.shell-injection", W)}),
    ("a formatted command split into arguments, from request data", "app/convert.py",
     "import subprocess\nfrom flask import request\n\n\ndef convert():\n"
     "    size = request.args['size']\n"
     "    subprocess.check_output(f'convert in.png -resize {size} out.png'.split())\n",
     {("python.option-injection", W)}),
    ("shlex.split of a command formatted from a parameter", "app/tools.py",
     "import shlex\nimport subprocess\n\n\ndef archive(name):\n"
     "    cmd = f'tar czf {name}.tgz data'\n    subprocess.Popen(shlex.split(cmd))\n",
     {("python.option-injection", I)}),
    ("near: a constant command split", "app/tools.py",
     "import subprocess\nsubprocess.run('git status --short'.split())\n", set()),
    ("near: a list built from the values", "app/tools.py",
     "import subprocess\n\n\ndef resize(src, dst):\n"
     "    subprocess.run(['convert', src, '-resize', '50%', dst])\n", set()),
    # --- python: eval, sql, deserialisation ----------------------------------------------
    ("eval input", "app/calc.py", "result = eval(expression)\n", {("python.eval-exec", W)}),
    ("eval of request data is an error", "app/views.py",
     "from flask import request\n\n\ndef calc():\n    return eval(request.args['expr'])\n",
     {("python.eval-exec", E)}),
    ("exec of a form field is an error", "app/views.py",
     "from flask import request\n\n\ndef run():\n    code = request.form['code']\n"
     "    exec(code)\n", {("python.eval-exec", E)}),
    ("near: code from the command line is the runner's own (a launcher), a warning",
     "launch.py", "import sys\nsource = open(sys.argv[1]).read()\nexec(source)\n",
     {("python.eval-exec", W)}),
    ("eval of a handler's parameter (the URL's parts) is an error", "app/views.py",
     "from flask import Flask\napp = Flask(__name__)\n\n\n@app.route('/calc/<expr>')\n"
     "def calc(expr):\n    return eval(expr)\n", {("python.eval-exec", E)}),
    ("near: literal_eval", "app/calc.py", "import ast\nresult = ast.literal_eval(text)\n",
     set()),
    ("near: eval of constant", "app/calc.py", 'x = eval("1 + 1")\n', set()),
    ("sql f-string executed", "app/db.py",
     "cur.execute(f\"SELECT * FROM users WHERE id = {uid}\")\n", {("python.sql-injection", E)}),
    ("sql format executed", "app/db.py",
     'cur.execute("DELETE FROM t WHERE id = {}".format(i))\n', {("python.sql-injection", E)}),
    ("sql f-string assigned", "app/db.py",
     "q = f\"SELECT name FROM users WHERE id = {uid}\"\n", {("python.sql-injection", W)}),
    ("near: parameterised sql", "app/db.py",
     'cur.execute("SELECT * FROM users WHERE id = %s", (uid,))\n', set()),
    ("near: f-string that is not sql", "app/msg.py",
     'msg = f"Please select a user from {team}"\n', set()),
    ("sql built in a variable, then executed", "app/db.py",
     "def find(cur, name):\n    query = \"SELECT * FROM users WHERE name = '%s'\" % name\n"
     "    cur.execute(query)\n", {("python.sql-injection", E)}),
    ("sql extended with +=", "app/db.py",
     'def find(cur, name):\n    q = "SELECT * FROM users WHERE 1 = 1"\n'
     "    q += \" AND name = '\" + name + \"'\"\n    cur.execute(q)\n",
     {("python.sql-injection", E)}),
    # sanic's `raw` is a response body, not Django's Manager.raw.
    ("near: a web framework's raw response", "app/sitemap.py",
     "from sanic import raw\n\n\nasync def sitemap(request):\n"
     "    return raw(request.app.ctx.sitemap, content_type='application/xml')\n", set()),
    ("near: a module's raw function", "app/sitemap.py",
     "from sanic import response\n\n\nasync def sitemap(request):\n"
     "    return response.raw(request.body)\n", set()),
    ("a manager's raw with request data", "app/views.py",
     "def search(request):\n"
     "    return Person.objects.raw('SELECT * FROM p WHERE n = ' + request.GET['n'])\n",
     {("python.sql-injection", E)}),
    ("lower-case triple-quoted sql in raw()", "app/db.py",
     'def f(name):\n    return User.objects.raw("""\n        select *\n'
     "        from users where name = '%s'\"\"\" % name)\n", {("python.sql-injection", E)}),
    ("django extra where", "app/db.py",
     "def f(qs, name):\n    return qs.extra(where=[\"name = '%s'\" % name])\n",
     {("python.sql-injection", E)}),
    ("sqlalchemy text", "app/db.py",
     "from sqlalchemy import text\ndef f(conn, name):\n"
     "    conn.execute(text(f\"select * from t where name = '{name}'\"))\n",
     {("python.sql-injection", E)}),
    ("joined clauses with parameters is a warning", "app/db.py",
     'def find(cur, clauses, params):\n'
     '    cur.execute("SELECT * FROM t WHERE " + " AND ".join(clauses), params)\n',
     {("python.sql-injection", W)}),
    ("a value quoted by hand in as_sql", "app/lookups.py",
     "class KeyTransform(Transform):\n    def as_sql(self, compiler, connection):\n"
     "        lhs, params = compiler.compile(self.lhs)\n"
     "        lookup = \"'%s'\" % self.key_name\n"
     "        return '(%s -> %s)' % (lhs, lookup), params\n", {("python.sql-injection", W)}),
    ("near: a quoted placeholder in a log message of a query function", "app/db.py",
     "def run_query(cur, sql):\n    log.debug(\"running '%s'\", sql)\n"
     "    return cur.execute(sql)\n", set()),
    ("near: a quoted value outside SQL code", "app/msg.py",
     "def greet(name):\n    return \"hello '%s'\" % name\n", set()),
    ("bind parameters formatted into the SQL text", "app/lookups.py",
     "class HasKey(Lookup):\n    def as_oracle(self, compiler, connection):\n"
     "        sql, params = self.as_sql(compiler, connection)\n"
     "        return sql % tuple(params), []\n", {("python.sql-injection", W)}),
    ("bind parameters formatted into a query attribute", "app/raw.py",
     "def render(self):\n    return self.query % self.params\n", {("python.sql-injection", W)}),
    ("near: a query shown by __str__ or last_executed_query", "app/sql.py",
     "class Query:\n    def __str__(self):\n        sql, params = self.sql_with_params()\n"
     "        return sql % params\n"
     "def last_executed_query(cursor, sql, params):\n    return sql % tuple(params)\n", set()),
    ("near: SQL fragments composed by template", "app/expr.py",
     "def as_sql(self, compiler, connection, template_params):\n"
     "    lhs_sql, lhs_params = compiler.compile(self.lhs)\n"
     "    return self.template % template_params, lhs_sql % lhs_params\n", set()),
    ("near: parameterised through a variable", "app/db.py",
     'def find(cur, name):\n    query = "SELECT * FROM users WHERE name = %s"\n'
     "    cur.execute(query, (name,))\n", set()),
    ("near: prose with `where` and a quoted placeholder", "setup/sysconfig.py",
     "import os\ndef include():\n    raise OSError(\"I don't know where Python installs its "
     "headers on platform '%s'\" % os.name)\n", set()),
    ("near: a docstring that shows SQL injection", "scanner/sql.py",
     '"""Flags code such as:\n\n    query = "DELETE FROM foo WHERE id = \'%s\'" % x\n"""\n',
     set()),
    ("a quoted placeholder in a VALUES list", "app/db.py",
     "Q = \"INSERT INTO users (name) VALUES ('%s')\"\n", {("python.sql-injection", W)}),
    ("a Django expression quotes a value its caller passes", "app/aggregates.py",
     "class StringAgg(Aggregate):\n    function = 'STRING_AGG'\n"
     "    template = \"%(function)s(%(expressions)s, '%(delimiter)s')\"\n"
     "    def __init__(self, expression, delimiter, **extra):\n"
     "        super().__init__(expression, delimiter=delimiter, **extra)\n",
     {("python.sql-injection", W)}),
    ("a Django template filled with a value from the caller's keywords", "app/gis.py",
     "class OracleToleranceMixin:\n    tolerance = 0.05\n"
     "    def as_oracle(self, compiler, connection, **extra_context):\n"
     "        tol = self.extra.get('tolerance', self.tolerance)\n"
     "        return self.as_sql(compiler, connection,\n"
     "            template='%%(function)s(%%(expressions)s, %s)' % tol, **extra_context)\n",
     {("python.sql-injection", W)}),
    ("near: a Django template filled with a constant", "app/math.py",
     "class Degrees(Func):\n    def as_oracle(self, compiler, connection, **extra_context):\n"
     "        return super().as_sql(compiler, connection,\n"
     "            template='((%%(expressions)s) * 180 / %s)' % math.pi, **extra_context)\n",
     set()),
    ("near: a quoted name the class fills itself", "app/functions.py",
     "class SHA224(Func):\n    function = 'SHA224'\n"
     "    template = \"ENCODE(DIGEST(%(expressions)s, '%(function)s'), 'hex')\"\n"
     "    def __init__(self, expression, **extra):\n"
     "        super().__init__(expression, **extra)\n", set()),
    ("near: the caller's value passed as an expression", "app/aggregates.py",
     "class StringAgg(Aggregate):\n    function = 'STRING_AGG'\n"
     "    template = '%(function)s(%(expressions)s)'\n"
     "    def __init__(self, expression, delimiter, **extra):\n"
     "        super().__init__(expression, Value(delimiter), **extra)\n", set()),
    ("a trigger's value rendered into a templated shell command", "dags/example.py",
     "run = BashOperator(\n    task_id='run',\n"
     "    bash_command='echo \"run_id={{ run_id }} | dag_run={{ dag_run }}\"',\n)\n",
     {("python.shell-injection", W)}),
    ("a trigger's conf rendered into a templated shell command", "dags/example.py",
     "run = BashOperator(task_id='run', bash_command=\"ls {{ dag_run.conf['dir'] }}\")\n",
     {("python.shell-injection", W)}),
    ("near: the scheduler's own values in a templated shell command", "dags/example.py",
     "run = BashOperator(task_id='run', bash_command='echo {{ ds }} {{ ti.try_number }}')\n",
     set()),
    ("a formatted command run over SSH", "ops/remote.py",
     "def restart(client, service):\n"
     "    client.exec_command(f'systemctl restart {service}')\n", {("python.shell-injection", W)}),
    ("a command from a request run on a device", "app/views.py",
     "from flask import request\n@app.route('/run')\ndef run():\n"
     "    device.shell('pm clear ' + request.args['pkg'])\n", {("python.shell-injection", W)}),
    ("near: a constant command run over SSH", "ops/remote.py",
     "def uptime(client):\n    client.exec_command('uptime')\n", set()),
    ("near: the module's own shell method", "ops/remote.py",
     "class Box:\n    def shell(self, text):\n        return text.upper()\n\n"
     "    def greet(self, name):\n        self.shell(f'hello {name}')\n", set()),
    ("placeholders filled one at a time in a loop", "app/cursor.py",
     "def execute(self, stmt, prepared):\n    for key, value in prepared.items():\n"
     "        stmt = stmt.replace(f\"%({key})s\".encode(), value)\n    return stmt\n",
     {("python.sql-injection", W)}),
    ("placeholders built by concatenation, filled in a while loop", "app/cursor.py",
     "def fill(sql, names, values):\n    while names:\n        key = names.pop()\n"
     "        sql = sql.replace('%(' + key + ')s', values[key])\n    return sql\n",
     {("python.sql-injection", W)}),
    ("near: one placeholder filled once", "app/cursor.py",
     "def fill(stmt, key, value):\n    return stmt.replace(f\"%({key})s\", value)\n", set()),
    ("near: template names filled in a loop", "app/text.py",
     "def fill(text, values):\n    for key, value in values.items():\n"
     "        text = text.replace('{' + key + '}', value)\n    return text\n", set()),
    # --- python: paths and html ------------------------------------------------------------
    ("path from request data", "app/views.py",
     "from flask import request, send_file\n@app.route('/download')\ndef download():\n"
     "    name = request.args['file']\n    return send_file(os.path.join(BASE, name))\n",
     {("python.path-traversal", E)}),
    ("path from a route parameter", "app/views.py",
     "@app.route('/files/<path:name>')\ndef files(name):\n"
     "    return send_file(os.path.join(BASE, name))\n", {("python.path-traversal", W)}),
    ("near: secure_filename", "app/views.py",
     "from werkzeug.utils import secure_filename\n@app.route('/f/<name>')\ndef files(name):\n"
     "    return send_file(os.path.join(BASE, secure_filename(name)))\n", set()),
    ("near: checked against the base", "app/views.py",
     "@app.route('/f/<path:name>')\ndef files(name):\n"
     "    path = os.path.realpath(os.path.join(BASE, name))\n"
     "    if not path.startswith(BASE):\n        abort(404)\n    return send_file(path)\n",
     set()),
    ("a containment check that runs only under a setting", "web/static.py",
     "from aiohttp.web import FileResponse\nclass Static:\n"
     "    async def _handle(self, request):\n"
     "        path = self._directory.joinpath(request.match_info['name']).resolve()\n"
     "        if not self._follow_symlinks:\n            path.relative_to(self._directory)\n"
     "        return FileResponse(path)\n", {("python.path-traversal", E)}),
    ("near: the containment check in a try, on every path", "web/static.py",
     "from aiohttp.web import FileResponse\nclass Static:\n"
     "    async def _handle(self, request):\n        try:\n"
     "            path = self._directory.joinpath(request.match_info['name']).resolve()\n"
     "            path.relative_to(self._directory)\n"
     "        except ValueError:\n            raise HTTPNotFound()\n"
     "        return FileResponse(path)\n", set()),
    ("near: a check under an if about the path itself", "web/static.py",
     "from aiohttp.web import FileResponse\nclass Static:\n"
     "    async def _handle(self, request):\n        name = request.match_info['name']\n"
     "        path = self._directory.joinpath(name).resolve()\n"
     "        if name:\n            path.relative_to(self._directory)\n"
     "        return FileResponse(path)\n", set()),
    ("library joins a folder with a parameter: info", "app/store.py",
     "def read(self, name):\n    with open(os.path.join(self.root, name)) as f:\n"
     "        return f.read()\n", {("python.path-traversal", I)}),
    ("near: a path parameter opened as given", "app/store.py",
     "def read(path):\n    with open(path) as f:\n        return f.read()\n", set()),
    ("near: a command-line argument", "app/cli.py",
     "import sys\ndef main():\n    open(sys.argv[1]).read()\n", set()),
    ("a probe of a folder joined with a parameter, the path returned", "app/static.py",
     "def loader(path):\n    full = os.path.join(ROOT, path)\n"
     "    if os.path.isfile(full):\n        return full\n", {("python.path-traversal", I)}),
    ("a probe of a folder joined with a parameter, the path opened elsewhere",
     "app/static.py",
     "def loader(self, path):\n    path = os.path.join(ROOT, path)\n"
     "    if os.path.isfile(path):\n        return self._opener(path)\n",
     {("python.path-traversal", I)}),
    ("near: a probe of a folder joined with a parameter, nothing handed on", "app/static.py",
     "def has(path):\n    full = os.path.join(ROOT, path)\n"
     "    return os.path.isfile(full)\n", set()),
    ("a Path method on a joined path", "app/static.py",
     "def read(self, name):\n    return self.root.joinpath(name).open()\n",
     {("python.path-traversal", I)}),
    ("an else branch does not clear what the if branch joined", "app/static.py",
     "def loader(path):\n    if path is not None:\n        path = os.path.join(ROOT, path)\n"
     "    else:\n        path = ROOT\n    if os.path.isfile(path):\n"
     "        return open(path)\n", {("python.path-traversal", I)}),
    ("archive member names joined to the target folder", "app/archive.py",
     "def extract(self, to_path):\n    for member in self._archive.getmembers():\n"
     "        filename = os.path.join(to_path, member.name)\n"
     "        os.makedirs(filename, exist_ok=True)\n", {("python.path-traversal", W)}),
    ("near: archive member names checked against the folder", "app/archive.py",
     "def extract(self, to_path):\n    for name in self._zip.namelist():\n"
     "        target = os.path.realpath(os.path.join(to_path, name))\n"
     "        if os.path.commonpath([target, to_path]) != to_path:\n            continue\n"
     "        os.makedirs(target, exist_ok=True)\n", set()),
    ("near: a probe of a path given whole, in a function taking a request", "app/adapters.py",
     "def context(request, verify):\n    if os.path.isdir(verify):\n"
     "        return {'ca_cert_dir': verify}\n", set()),
    ("a match case's join survives the other case", "app/static.py",
     "def read(path, kind):\n    match kind:\n        case 'a':\n"
     "            path = os.path.join(ROOT, path)\n        case _:\n            path = ROOT\n"
     "    return open(path)\n", {("python.path-traversal", I)}),
    ("an f-string path with a parameter after the folder", "app/store.py",
     "def read(name):\n    return open(f'{ROOT}/{name}').read()\n",
     {("python.path-traversal", I)}),
    ("near: an f-string path whose parameter is the folder", "app/store.py",
     "def read(root):\n    return open(f'{root}/setup.cfg').read()\n", set()),
    ("near: '..' replaced at module level", "app/names.py",
     "NAME = RAW.replace('..', '.')\nPATH = os.path.join(BASE, NAME)\n", set()),
    ("near: a parameter folder with a fixed file name", "app/config.py",
     "def has_config(folder):\n    return os.path.exists(os.path.join(folder, 'setup.cfg'))\n",
     set()),
    ("commonprefix as a containment check", "app/static.py",
     "def lookup(directory, path):\n    full = os.path.realpath(os.path.join(directory, path))\n"
     "    if os.path.commonprefix([full, directory]) != directory:\n        return None\n"
     "    return full\n", {("python.path-traversal", W)}),
    ("near: commonpath as a containment check", "app/static.py",
     "def lookup(directory, path):\n    full = os.path.realpath(os.path.join(directory, path))\n"
     "    if os.path.commonpath([full, directory]) != directory:\n        return None\n"
     "    return open(full)\n", set()),
    ("near: commonprefix that checks nothing", "app/names.py",
     "def stem(names):\n    return os.path.commonprefix(names)\n", set()),
    ("'..' removed from a name joined to a folder", "app/download.py",
     "def target(tmpdir, name):\n    while '..' in name:\n"
     "        name = name.replace('..', '.')\n    return os.path.join(tmpdir, name)\n",
     {("python.path-traversal", W)}),
    ("near: '..' replaced in a version string", "app/version.py",
     "def clean(version):\n    return version.replace('..', '.')\n", set()),
    ("near: '..' replaced in a name that is only concatenated", "app/version.py",
     "def tag(version):\n    version = version.replace('..', '.')\n"
     "    return 'v' + version + f'/{version}'\n", set()),
    ("tar extraction without a filter", "app/unpack.py",
     "import tarfile\ndef unpack(path, dest):\n    with tarfile.open(path) as tar:\n"
     "        tar.extractall(dest)\n", {("python.path-traversal", W)}),
    ("near: tar extraction with a filter", "app/unpack.py",
     "import tarfile\ndef unpack(path, dest):\n    with tarfile.open(path) as tar:\n"
     "        tar.extractall(dest, filter='data')\n", set()),
    ("mark_safe of formatted html", "app/html.py",
     "from django.utils.safestring import mark_safe\ndef label(name):\n"
     "    return mark_safe('<b>%s</b>' % name)\n", {("python.xss", W)}),
    ("mark_safe of a value is info", "app/html.py",
     "from django.utils.safestring import mark_safe\ndef label(html):\n"
     "    return mark_safe(html)\n", {("python.xss", I)}),
    ("format_html given formatted html", "app/html.py",
     "from django.utils.html import format_html\ndef label(name):\n"
     "    return format_html('<b>{}</b>'.format(name))\n", {("python.xss", W)}),
    ("near: format_html used right", "app/html.py",
     "from django.utils.html import format_html\ndef label(name):\n"
     "    return format_html('<b>{}</b>', name)\n", set()),
    ("render_template_string of request data", "app/views.py",
     "from flask import render_template_string, request\n@app.route('/hi')\ndef hi():\n"
     "    name = request.args.get('name')\n"
     "    return render_template_string('<h1>Hello %s</h1>' % name)\n", {("python.xss", E)}),
    ("HttpResponse of formatted html", "app/views.py",
     "from django.http import HttpResponse\ndef view(request):\n    q = request.GET.get('q')\n"
     "    return HttpResponse(f'<p>Results for {q}</p>')\n", {("python.xss", E)}),
    ("near: HttpResponse of plain text from the program", "app/views.py",
     "from django.http import HttpResponse\ndef view(request):\n"
     "    return HttpResponse(f'<p>{VERSION}</p>')\n", set()),
    ("jinja environment without autoescape", "app/render.py",
     "import jinja2\nenv = jinja2.Environment(loader=jinja2.FileSystemLoader('t'))\n",
     {("python.xss", W)}),
    ("near: jinja environment with autoescape", "app/render.py",
     "import jinja2\nenv = jinja2.Environment(autoescape=jinja2.select_autoescape())\n", set()),
    ("template |safe", "app/templates/page.html", "<p>{{ comment.body|safe }}</p>\n",
     {("template.unescaped", W)}),
    ("template autoescape off", "app/templates/page.jinja",
     "{% autoescape false %}{{ body }}{% endautoescape %}\n", {("template.unescaped", W)}),
    ("near: escaped template value", "app/templates/page.html", "<p>{{ comment.body }}</p>\n",
     set()),
    # --- python: the flow behind them --------------------------------------------------------
    ("a quoted placeholder is made for formatting", "app/db.py",
     "Q = \"SELECT * FROM t WHERE name = '%s'\"\n", {("python.sql-injection", W)}),
    ("a module constant formatted into a query() wrapper", "app/db.py",
     "PC = 'SELECT * FROM codes WHERE fsa = ?'\n\n\ndef get(self, pc):\n"
     "    return self.db.query(PC % pc)\n", {("python.sql-injection", E)}),
    ("sql taken from the request as is", "app/views.py",
     "def view(request):\n    return cur.execute(request.GET['q'])\n",
     {("python.sql-injection", E)}),
    ("a class-based view's URL kwargs into a path", "app/views.py",
     "class V(TemplateView):\n    def get_context_data(self, **kwargs):\n"
     "        name = self.kwargs['t']\n        f = Path(BASE) / name\n"
     "        return f.read_text()\n", {("python.path-traversal", E)}),
    ("a tornado handler's path argument", "app/web.py",
     "class H(RequestHandler):\n    def get(self, path):\n"
     "        return open(os.path.join(ROOT, path)).read()\n", {("python.path-traversal", W)}),
    ("near: a sanitised name", "app/views.py",
     "def up(request):\n    name = secure_filename(request.files['f'].filename)\n"
     "    return open(os.path.join(UPLOADS, name), 'wb')\n", set()),
    ("request data through try/except", "app/views.py",
     "def f(request):\n    try:\n        p = request.args['p']\n    except KeyError:\n"
     "        p = request.form['p']\n    return send_file(p)\n", {("python.path-traversal", E)}),
    ("tornado get_argument into a shell", "app/web.py",
     "import subprocess\nclass H(RequestHandler):\n    def post(self):\n"
     "        cmd = self.get_argument('c')\n        subprocess.call(cmd, shell=True)\n",
     {("python.shell-injection", E)}),
    ("input() into os.system", "app/tool.py",
     "import os\ndef main():\n    cmd = input()\n    os.system(cmd)\n",
     {("python.shell-injection", E)}),
    ("a loop over request values", "app/views.py",
     "import subprocess\ndef f(request):\n    for n in request.args.getlist('n'):\n"
     "        subprocess.call(n, shell=True)\n", {("python.shell-injection", E)}),
    ("HTML a browser follows, built from a handler's argument", "app/web.py",
     "def redirect_to(url, request):\n    return b'<a href=\"%(url)s\">here</a>' % {b'url': url}\n",
     {("python.xss", W)}),
    ("near: the same HTML with the value escaped", "app/web.py",
     "import html\ndef redirect_to(url, request):\n"
     "    return '<a href=\"%s\">here</a>' % html.escape(url)\n", set()),
    ("a template from request text", "app/views.py",
     "def render(env, request):\n"
     "    return env.from_string('Hi ' + request.args['n']).render()\n", {("python.xss", E)}),
    ("a falcon responder's req is a request", "app/files.py",
     "def on_get(self, req, resp):\n    name = req.get_param('name')\n"
     "    resp.stream = open('/srv/files/' + name, 'rb')\n",
     {("python.path-traversal", E)}),
    ("an annotated req is a request", "app/files.py",
     "from aiohttp import web\nasync def show(req: web.Request):\n"
     "    return web.FileResponse(open(req.match_info['name']))\n",
     {("python.path-traversal", E)}),
    ("near: an HTTP client's adapter opens the file:// URL it is sending", "pip/session.py",
     "from requests.adapters import BaseAdapter\nclass LocalFSAdapter(BaseAdapter):\n"
     "    def send(self, request, stream=False):\n"
     "        pathname = url_to_path(request.url)\n        return open(pathname, 'rb')\n",
     set()),
    ("a view class's request is still a request", "app/views.py",
     "from django.views import View\nclass Download(View):\n"
     "    def get(self, request):\n        pathname = request.GET['file']\n"
     "        return open(pathname, 'rb')\n", {("python.path-traversal", E)}),
    ("an API's auth class is called with the incoming request", "app/auth.py",
     "from ninja.security.base import AuthBase\nclass KeyFile(AuthBase):\n"
     "    def __call__(self, request):\n        return open(request.GET['key'])\n",
     {("python.path-traversal", E)}),
    ("near: a requirement named req is not a request", "pip/wheel.py",
     "import shutil\ndef copy_wheel(req, wheel_dir):\n"
     "    shutil.copy(req.local_file_path, wheel_dir)\n", set()),
    # --- python that does not parse: line patterns ------------------------------------------
    ("python 2 file falls back to line patterns", "app/legacy.py",
     'import os\ndef f(x):\n    print "hello"\n    os.system("ls " + x)\n'
     "    cur.execute(\"SELECT * FROM t WHERE a = '%s'\" % x)\n",
     {("python.shell-injection", W), ("python.sql-injection", W)}),
    ("pickle loads", "app/cache.py", "import pickle\nobj = pickle.loads(blob)\n",
     {("python.unsafe-deserialization", W)}),
    # Data written in the source is not untrusted input (black's formatter fixtures).
    ("yaml load of a literal", "app/cfg.py", 'import yaml\ndata = yaml.load("""a: 1\n""")\n',
     set()),
    ("pickle loads of a literal", "app/cfg.py", "import pickle\nobj = pickle.loads(b'x')\n",
     set()),
    ("a pickle file named by a literal", "app/cfg.py",
     "import pandas\ndf = pandas.read_pickle('data.pkl')\n",
     {("python.unsafe-deserialization", W)}),
    ("yaml load without loader", "app/cfg.py", "import yaml\ndata = yaml.load(text)\n",
     {("python.unsafe-deserialization", W)}),
    ("near: yaml safe loader", "app/cfg.py",
     "import yaml\ndata = yaml.load(text, Loader=yaml.SafeLoader)\n", set()),
    ("near: json loads", "app/cfg.py", "import json\ndata = json.loads(text)\n", set()),
    # --- python: crypto, tls, files, debug -----------------------------------------------
    ("md5 password", "app/auth.py", "import hashlib\nh = hashlib.md5(password.encode())\n",
     {("python.weak-hash", W)}),
    ("md5 checksum is info", "app/cache.py", "import hashlib\nh = hashlib.md5(data)\n",
     {("python.weak-hash", I)}),
    ("near: md5 not for security", "app/cache.py",
     "import hashlib\nh = hashlib.md5(data, usedforsecurity=False)\n", set()),
    ("requests verify false", "app/http.py",
     "import requests\nrequests.get(url, verify=False)\n", {("python.tls-verify-disabled", E)}),
    ("ssl cert none", "app/http.py", "import ssl\nctx.verify_mode = ssl.CERT_NONE\n",
     {("python.tls-verify-disabled", E)}),
    ("near: verify with ca bundle", "app/http.py",
     'import requests\nrequests.get(url, verify="/etc/ca.pem")\n', set()),
    ("chmod 777", "app/files.py", 'import os\nos.chmod(path, 0o777)\n',
     {("python.world-writable", W)}),
    ("near: chmod 755", "app/files.py", "import os\nos.chmod(path, 0o755)\n", set()),
    ("mktemp", "app/files.py", "import tempfile\nname = tempfile.mktemp()\n",
     {("python.insecure-tempfile", W)}),
    ("breakpoint", "app/core.py", "def f():\n    breakpoint()\n", {("python.debug-leftover", W)}),
    ("pdb", "app/core.py", "import pdb\npdb.set_trace()\n", {("python.debug-leftover", W)}),
    ("print in library", "app/core.py", "def f(x):\n    print(x)\n",
     {("python.debug-leftover", I)}),
    ("near: print in a script", "tools/report.py",
     'def main():\n    print("done")\n\nif __name__ == "__main__":\n    main()\n', set()),
    ("near: verify=False for a helper that is not an HTTP client", "app/pkg.py",
     "def f(pkg):\n    check_package(pkg, verify=False)\n", set()),
    ("session verify false", "app/http.py",
     "def f(session, url):\n    session.get(url, verify=False)\n",
     {("python.tls-verify-disabled", E)}),
    ("near: print in an argparse program", "app/tool.py",
     "import argparse\ndef run(args):\n    print(args.name)\n", set()),
    ("near: print under commands/", "app/commands/sync.py",
     "def run(args):\n    print(args.name)\n", set()),
    ("near: print in a formatter's test data", "tests/data/cases/fmtskip.py",
     "def f(x):\n    print(x)\n", set()),
    ("near: print in an example", "examples/hello/app.py", "def f(x):\n    print(x)\n", set()),
    ("near: print in a docs program", "docs/tutorial/app.py", "def f(x):\n    print(x)\n",
     set()),
    ("near: print under tools/", "tools/stats.py", "def f(x):\n    print(x)\n", set()),
    ("near: print in a cli package", "pkg/cli/console.py", "def f(x):\n    print(x)\n",
     set()),
    ("near: print in a script that exits at its top level", "action/main.py",
     'import sys\nprint("Installing")\nsys.exit(run())\n', set()),
    ("near: print to a stream", "app/parsing.py",
     'import sys\ndef f():\n    print("typed_ast is required", file=sys.stderr)\n', set()),
    ("near: print in a function that dumps", "app/pgen.py",
     "def dump_dfa(self, dfa):\n    print(dfa)\n", set()),
    ("print in a library method", "app/mixins/base.py",
     "class Base:\n    def _generate_name(self, *objects):\n        print(objects)\n",
     {("python.debug-leftover", I)}),
    ("an exit inside a function does not make a program", "app/core.py",
     "import sys\ndef f(x):\n    print(x)\n    sys.exit(1)\n", {("python.debug-leftover", I)}),
    ("breakpoint in test data is still reported", "tests/data/cases/f.py",
     "def f():\n    breakpoint()\n", {("python.debug-leftover", I)}),
    ("test file one level quieter", "tests/test_http.py",
     "import requests\nrequests.get(url, verify=False)\n", {("python.tls-verify-disabled", W)}),
    # --- javascript / typescript --------------------------------------------------------
    ("js eval", "web/app.js", "const v = eval(userInput);\n", {("js.eval", W)}),
    ("near: js regex exec", "web/app.js", "const m = /a(b)/.exec(text);\n", set()),
    ("js exec template", "web/run.ts", "exec(`git log ${branch}`, cb);\n",
     {("js.command-injection", E)}),
    ("near: execFile with args", "web/run.ts", 'execFile("git", ["log", branch], cb);\n', set()),
    ("innerHTML", "web/ui.js", "el.innerHTML = message;\n", {("js.inner-html", W)}),
    ("dangerouslySetInnerHTML", "web/Ui.tsx",
     "return <div dangerouslySetInnerHTML={{__html: html}} />;\n", {("js.inner-html", W)}),
    ("near: clearing innerHTML", "web/ui.js", 'el.innerHTML = "";\n', set()),
    ("near: textContent", "web/ui.js", "el.textContent = message;\n", set()),
    ("js tls", "web/client.js", "const agent = new Agent({ rejectUnauthorized: false });\n",
     {("js.tls-disabled", E)}),
    ("js md5", "web/hash.js", "crypto.createHash('md5').update(x);\n", {("js.weak-hash", I)}),
    ("debugger", "web/app.js", "  debugger;\n", {("js.debugger", W)}),
    ("console.log", "web/app.js", "console.log(state);\n", {("js.console-log", I)}),
    ("near: console.log in a test", "web/__tests__/app.test.js", "console.log(state);\n",
     set()),
    ("near: commented eval", "web/app.js", "// never use eval(x) here\n", set()),
    # --- go --------------------------------------------------------------------------
    ("go sprintf query", "db/store.go",
     'rows, err := db.Query(fmt.Sprintf("SELECT * FROM t WHERE id = %s", id))\n',
     {("go.sql-injection", E)}),
    ("go sprintf sql", "db/store.go", 'q := fmt.Sprintf("SELECT * FROM t WHERE id = %d", id)\n',
     {("go.sql-injection", W)}),
    ("near: go placeholder", "db/store.go",
     'rows, err := db.Query("SELECT * FROM t WHERE id = $1", id)\n', set()),
    ("go insecure tls", "net/client.go", "cfg := &tls.Config{InsecureSkipVerify: true}\n",
     {("go.tls-disabled", E)}),
    ("go sh -c sprintf", "cmd/run.go",
     'out, _ := exec.Command("sh", "-c", fmt.Sprintf("ls %s", dir)).Output()\n',
     {("go.command-injection", E)}),
    ("near: go direct exec", "cmd/run.go", 'out, _ := exec.Command("ls", dir).Output()\n', set()),
    ("go md5", "util/hash.go", "sum := md5.Sum(data)\n", {("go.weak-hash", I)}),
    # --- java ------------------------------------------------------------------------
    ("java concat query", "src/main/java/Repo.java",
     'ResultSet rs = stmt.executeQuery("SELECT * FROM t WHERE id = " + id);\n',
     {("java.sql-injection", E)}),
    ("near: java prepared", "src/main/java/Repo.java",
     'PreparedStatement ps = conn.prepareStatement("SELECT * FROM t WHERE id = ?");\n', set()),
    ("java runtime exec concat", "src/main/java/Run.java",
     'Runtime.getRuntime().exec("ping " + host);\n', {("java.command-injection", E)}),
    ("java ois", "src/main/java/Load.java",
     "ObjectInputStream in = new ObjectInputStream(stream);\n",
     {("java.unsafe-deserialization", W)}),
    ("java noop verifier", "src/main/java/Http.java",
     "builder.setSSLHostnameVerifier(NoopHostnameVerifier.INSTANCE);\n",
     {("java.tls-disabled", E)}),
    ("java md5", "src/main/java/Hash.java", 'MessageDigest.getInstance("MD5");\n',
     {("java.weak-hash", I)}),
    ("java println", "src/main/java/App.java", 'System.out.println("x");\n',
     {("java.debug-leftover", I)}),
    # --- shell, docker, sql ----------------------------------------------------------
    ("curl pipe sh", "install.sh", "curl -fsSL https://example.invalid/i.sh | sh\n",
     {("shell.curl-pipe-shell", W)}),
    ("near: curl to file", "install.sh", "curl -fsSLo i.sh https://example.invalid/i.sh\n",
     set()),
    ("chmod 777 in Dockerfile", "Dockerfile", "RUN chmod -R 777 /app\n",
     {("shell.world-writable", W)}),
    ("near: chmod 755", "install.sh", "chmod 755 bin/tool\n", set()),
    ("curl -k", "install.sh", "curl -k https://internal.invalid/x\n", {("shell.tls-disabled", W)}),
    ("shell eval", "run.sh", 'eval "$USER_CMD"\n', {("shell.eval", W)}),
    ("drop table", "db/schema.sql", "DROP TABLE users;\n", {("sql.destructive", W)}),
    ("delete without where", "db/cleanup.sql", "DELETE FROM sessions;\n",
     {("sql.destructive", W)}),
    ("near: delete with where", "db/cleanup.sql", "DELETE FROM sessions WHERE expired;\n",
     set()),
    # --- GitHub Actions ----------------------------------------------------------------
    ("pull_request_target checks out the PR head", ".github/workflows/ci.yml", PRT.format(
        ref="          ref: ${{ github.event.pull_request.head.sha }}\n"),
     {("gha.pull-request-target-checkout", E)}),
    ("near: pull_request_target without PR checkout", ".github/workflows/label.yml",
     PRT.format(ref=""), set()),
    ("near: pull_request checking out the head", ".github/workflows/ci.yml", PRT.replace(
        "pull_request_target", "pull_request").format(
        ref="          ref: ${{ github.event.pull_request.head.sha }}\n"), set()),
    ("expression injection in run", ".github/workflows/greet.yml",
     "jobs:\n  hi:\n    steps:\n      - run: echo \"${{ github.event.issue.title }}\"\n",
     {("gha.expression-injection", W)}),
    ("near: same expression through env", ".github/workflows/greet.yml",
     "jobs:\n  hi:\n    steps:\n      - env:\n          TITLE: ${{ github.event.issue.title }}\n"
     "        run: echo \"$TITLE\"\n", set()),
    # --- hygiene ---------------------------------------------------------------------
    ("conflict markers", "app/core.py",
     "<<<<<<< HEAD\nx = 1\n=======\nx = 2\n>>>>>>> feature\n",
     {("conflict-marker", E)}),
    ("near: rst underline", "docs/index.rst", "Title\n=======\n", set()),
    ("todo without issue", "app/core.py", "x = 1  # TODO make this faster\n",
     {("todo-without-issue", I)}),
    ("near: todo with issue", "app/core.py", "x = 1  # TODO(#123): make this faster\n", set()),
    ("near: todo with jira key", "web/app.js", "// FIXME PAY-42 handle refunds\n", set()),
    # A long line whose comments cannot be stripped with certainty (a `/` before them) is
    # searched by RE2 over its bytes: the same answer, after non-ASCII text too, and the
    # issue reference still read after it.
    ("todo on a long line", "web/app.js", "var a=1/2;" * 110 + "f(); // TODO speed up\n",
     {("todo-without-issue", I)}),
    ("todo on a long line after non-ASCII text", "web/app.js",
     "var a='é—ü'/2;" * 100 + "f(); /* HACK around it */\n", {("todo-without-issue", I)}),
    # Python reads any space as one (`\s` of `re`: a no-break space, an ideographic
    # one), where RE2's `\s` is ASCII: the long line's search finds what the short one does.
    ("todo after a no-break space on a long line", "app/core.py",
     "x = '" + "é" * 1100 + "'  #\u00a0TODO speed up\n", {("todo-without-issue", I)}),
    ("todo after an ideographic space on a long line", "web/app.js",
     "var a=1/2;" * 110 + "f(); //\u3000TODO speed up\n", {("todo-without-issue", I)}),
    ("a TODO word is not a comment on a long line", "web/app.js",
     "var a='TODO'/2;" * 100 + "f(TODOS);\n", set()),
    ("near: todo with issue on a long line", "web/app.js",
     "var a=1/2;" * 110 + "f(); // TODO(#12) speed up\n", set()),
    # --- generated / vendored / lockfiles: secrets only ----------------------------------
    ("vendored code is not reviewed", "vendor/lib/run.py",
     'import subprocess\nsubprocess.run(f"ls {p}", shell=True)\n', set()),
    ("a long line the change adds is pattern-checked", "static/app.min.js",
     "var a=1;" * 130 + "el.innerHTML = x; eval(y);\n",
     {("js.eval", W), ("js.inner-html", W)}),
    ("but the file's other lines are", "static/app.min.js",
     "var a=1;" * 130 + "\nel.innerHTML = x;\n", {("js.inner-html", W)}),
    ("but secrets in vendored code are", "vendor/lib/keys.py",
     'KEY = "AKIAQWERTYUIOPASDFGH"\n', {("secrets.hardcoded", E)}),
]


@pytest.mark.parametrize(("path", "code", "expected"),
                         [pytest.param(p, c, e, id=name) for name, p, c, e in CASES])
def test_rule_table(path: str, code: str, expected: set[tuple[str, str]]) -> None:
    """Each case is a new file in a repository whose base already has every folder its path
    names (`tests/`, `vendor/`): what a folder declares holds (rules/quieting.py)."""
    assert hits(path, code, base=Base(everything=True)) == expected


def test_every_severity_the_table_expects_is_one_the_rule_lists() -> None:
    """`reviewbot rules` shows what a rule reports: its levels hold every severity its
    findings take (in test code, one level lower, but for secrets)."""
    from reviewbot.code.path_kinds import path_tags
    from reviewbot.rules import RULES

    lower = {E: W, W: I, I: I}
    for name, path, _, expected in CASES:
        for rule_id, severity in expected:
            levels = RULES[rule_id].levels
            in_tests = "test_file" in path_tags(path) and not rule_id.startswith("secrets.")
            allowed = {lower[level] for level in levels} if in_tests else set(levels)
            assert severity in allowed, f"{name}: {rule_id} reports {severity}, lists {levels}"
