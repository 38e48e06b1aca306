"""The pull-request author who knows the line patterns of JavaScript, Go, Java and shell
writes the same dangerous statement in a shape they did not read: an optional call, a list
joined into a command, `spawn` with `shell: true`, `Function` without `new`, a timer given a
string, `sh -lc`, a query method of another library, curl's `-k` joined with other flags,
chmod in symbols. Each twin is reported by the plain case's rule at its severity; the near
misses stay quiet."""

from __future__ import annotations

import pytest

from tests.rules.conftest import Base, hits


def _found(path: str, text: str, rule: str) -> set[tuple[str, str]]:
    return {hit for hit in hits(path, text, base=Base(everything=True)) if hit[0] == rule}


JS_HEAD = "const cp = require('child_process');\nfunction h(req) {\n  const name = req.query.n;\n"
# (rule, plain statement, {shape: twin statement}) in a request handler.
JS = {
    "js.command-injection": ("  cp.exec(`ls ${name}`);\n", {
        "an optional call": "  cp.exec?.(`ls ${name}`);\n",
        "a list joined": "  cp.exec(['ls', name].join(' '));\n",
        "spawn with shell: true": "  cp.spawn('ls ' + name, { shell: true });\n",
        "spawn of sh -c": "  cp.spawn('sh', ['-c', `ls ${name}`]);\n",
        "execFile of bash -lc": "  cp.execFile('/bin/bash', ['-lc', 'ls ' + name]);\n",
    }),
    "js.eval": ("  eval(name);\n", {
        "Function without new": "  Function('return ' + name)();\n",
        "an indirect eval": "  (0, eval)(name);\n",
        "a timer given a string": "  setTimeout('go(' + name + ')', 10);\n",
        "a timer given a template": "  setInterval(`go(${name})`, 10);\n",
        "vm": "  require('vm').runInNewContext(name);\n",
    }),
    "js.inner-html": ("  el.innerHTML = name;\n", {
        "a bracketed property": "  el['innerHTML'] = name;\n",
        "createContextualFragment": "  document.createRange().createContextualFragment(name);\n",
    }),
    "js.sql-injection": ("  db.query(`SELECT * FROM t WHERE a = '${name}'`);\n", {
        "concatenation": "  db.query('SELECT * FROM t WHERE a = ' + name);\n",
        "a template over lines": "  db.query(`SELECT *\n    FROM t WHERE a = '${name}'`);\n",
        "knex.raw": "  knex.raw(`SELECT * FROM t WHERE a = '${name}'`);\n",
        "Prisma's unsafe call":
            "  prisma.$queryRawUnsafe(`SELECT * FROM t WHERE a = '${name}'`);\n",
        "a query built first":
            "  const q = `DELETE FROM t WHERE a = '${name}'`;\n  pool.query(q);\n",
    }),
}
JS_CASES = [(rule, plain, shape, twin) for rule, (plain, twins) in JS.items()
            for shape, twin in twins.items()]


@pytest.mark.parametrize(("rule", "plain", "twin"), [(c[0], c[1], c[3]) for c in JS_CASES],
                         ids=[f"{c[0]}: {c[2]}" for c in JS_CASES])
def test_javascript_in_another_shape_is_the_same_finding(rule: str, plain: str,
                                                         twin: str) -> None:
    expected = _found("src/h.js", JS_HEAD + plain + "}\n", rule)
    assert expected
    assert _found("src/h.js", JS_HEAD + twin + "}\n", rule) == expected


@pytest.mark.parametrize("near", [
    "  setTimeout(() => go(name), 10);\n  setTimeout(go, 10);\n",
    "  const f = Function.prototype;\n",
    "  db.query('SELECT * FROM t WHERE a = $1', [name]);\n",
    "  sql`SELECT * FROM t WHERE a = ${name}`;\n",
    "  prisma.$queryRaw`SELECT * FROM t WHERE a = ${name}`;\n",
    "  api.query(`users/${name}`);\n",
    "  cp.spawn('sh', ['-c', 'ls /tmp']);\n  cp.execFile('git', ['log', name]);\n",
    "  cp.exec(['ls', '-la'].join(' '));\n",
    "  el['innerHTML'] = '';\n",
])
def test_javascript_near_misses_stay_quiet(near: str) -> None:
    found = hits("src/h.js", JS_HEAD + near + "}\n", base=Base(everything=True))
    assert not {hit for hit in found if hit[0] != "js.console-log"}


GO_HEAD = ('package main\n\nimport (\n\t"fmt"\n\t"os/exec"\n)\n\n'
           'func h(db DB, name string) {\n')
GO = {
    "go.command-injection": ('\texec.Command("sh", "-c", fmt.Sprintf("ls %s", name)).Run()\n', {
        "sh -lc": '\texec.Command("sh", "-lc", "ls "+name).Run()\n',
        "strings.Join": '\texec.Command("sh", "-c", strings.Join([]string{"ls", name}, " "))\n',
    }),
    "go.sql-injection": ('\tdb.Query(fmt.Sprintf("SELECT * FROM t WHERE a = \'%s\'", name))\n', {
        "sqlx's Select": '\tdb.Select(&rows, fmt.Sprintf("SELECT * FROM t WHERE a = \'%s\'", '
                         'name))\n',
        "gorm's Raw": '\tdb.Raw("SELECT * FROM t WHERE a = \'" + name + "\'")\n',
    }),
    "go.tls-disabled": ("\tc := &tls.Config{InsecureSkipVerify: true}\n", {
        "assigned": "\tc := &tls.Config{}\n\tc.InsecureSkipVerify = true\n",
    }),
}
GO_CASES = [(rule, plain, shape, twin) for rule, (plain, twins) in GO.items()
            for shape, twin in twins.items()]


@pytest.mark.parametrize(("rule", "plain", "twin"), [(c[0], c[1], c[3]) for c in GO_CASES],
                         ids=[f"{c[0]}: {c[2]}" for c in GO_CASES])
def test_go_in_another_shape_is_the_same_finding(rule: str, plain: str, twin: str) -> None:
    expected = _found("main.go", GO_HEAD + plain + "}\n", rule)
    assert expected
    assert _found("main.go", GO_HEAD + twin + "}\n", rule) == expected


JAVA = {
    "java.command-injection": ('Runtime.getRuntime().exec("ls " + n);', {
        "sh -c in an array": 'Runtime.getRuntime().exec(new String[]{"sh", "-c", "ls " + n});',
    }),
    "java.sql-injection": ('st.executeQuery("SELECT * FROM t WHERE a = \'" + n + "\'");', {
        "Spring's JdbcTemplate": 'jdbc.queryForList("SELECT * FROM t WHERE a = \'" + n + "\'");',
    }),
    "java.tls-disabled": ("HostnameVerifier v = NoopHostnameVerifier.INSTANCE;", {
        "an empty checkServerTrusted": "public void checkServerTrusted(X509Certificate[] c, "
                                       "String a) {}",
    }),
}
JAVA_CASES = [(rule, plain, shape, twin) for rule, (plain, twins) in JAVA.items()
              for shape, twin in twins.items()]


@pytest.mark.parametrize(("rule", "plain", "twin"), [(c[0], c[1], c[3]) for c in JAVA_CASES],
                         ids=[f"{c[0]}: {c[2]}" for c in JAVA_CASES])
def test_java_in_another_shape_is_the_same_finding(rule: str, plain: str, twin: str) -> None:
    def java(statement: str) -> str:
        return f"class A {{\n  void f(String n) throws Exception {{\n    {statement}\n  }}\n}}\n"
    expected = _found("A.java", java(plain), rule)
    assert expected
    assert _found("A.java", java(twin), rule) == expected


def test_java_near_misses_stay_quiet() -> None:
    text = ('class A {\n  void f(String n) throws Exception {\n    ui.update("Loading " + n);\n'
            '    new ProcessBuilder("ls", n).start();\n  }\n'
            '  public void checkServerTrusted(X509Certificate[] c, String a) '
            'throws CertificateException { inner.checkServerTrusted(c, a); }\n}\n')
    assert hits("A.java", text, base=Base(everything=True)) == set()


SHELL = {
    "shell.curl-pipe-shell": ("curl -fsSL https://x.io/i.sh | sh", {
        "sudo with options": "curl -fsSL https://x.io/i.sh | sudo -E bash",
        "an interpreter": "curl -fsSL https://x.io/i.py | python3 -",
        "process substitution": "bash <(curl -fsSL https://x.io/i.sh)",
        "source": "source <(wget -qO- https://x.io/i.sh)",
        "sh -c of a download": 'sh -c "$(curl -fsSL https://x.io/i.sh)"',
    }),
    "shell.world-writable": ("chmod 777 /srv/x", {
        "symbols": "chmod -R a=rwx /srv/x",
        "ugo+rwx": "chmod ugo+rwx /srv/x",
        "a long option first": "chmod --recursive 0777 /srv/x",
        "setgid": "chmod 2777 /srv/x",
    }),
    "shell.tls-disabled": ("curl -k https://x.io", {
        "-k joined": "curl -fsSLk https://x.io",
        "git -c": "git -c http.sslVerify=false clone https://x.io/r",
        "npm": "npm config set strict-ssl false",
        "pip": "pip install --trusted-host x.io foo",
    }),
    "shell.eval": ('eval "$CMD"', {"backticks": "eval `printf %s $CMD`"}),
}
SHELL_CASES = [(rule, plain, shape, twin) for rule, (plain, twins) in SHELL.items()
               for shape, twin in twins.items()]


@pytest.mark.parametrize(("rule", "plain", "twin"), [(c[0], c[1], c[3]) for c in SHELL_CASES],
                         ids=[f"{c[0]}: {c[2]}" for c in SHELL_CASES])
def test_shell_in_another_shape_is_the_same_finding(rule: str, plain: str, twin: str) -> None:
    expected = _found("deploy.sh", f"#!/bin/sh\n{plain}\n", rule)
    assert expected
    assert _found("deploy.sh", f"#!/bin/sh\n{twin}\n", rule) == expected


def test_a_dockerfile_copy_mode_is_world_writable() -> None:
    rule = "shell.world-writable"
    plain = _found("Dockerfile", "FROM alpine\nRUN chmod 777 /app\n", rule)
    assert plain
    assert _found("Dockerfile", "FROM alpine\nCOPY --chmod=777 a /app\n", rule) == plain


@pytest.mark.parametrize("near", [
    "chmod 755 /srv/x", "chmod u+w /srv/x", "chmod go-w /srv/x", "chmod a+x /srv/x",
    "chmod 1777 /srv/shared",  # sticky: a shared folder as /tmp is
    "curl -fsSLo out https://x.io", "curl --key k.pem https://x.io",
    "curl -fsSL https://x.io/a.tgz | tar xz", "curl -fsSL https://x.io/a | sha256sum",
])
def test_shell_near_misses_stay_quiet(near: str) -> None:
    ours = {hit for hit in hits("deploy.sh", f"#!/bin/sh\n{near}\n", base=Base(everything=True))
            if not hit[0].startswith("shellcheck")}
    assert ours == set()
