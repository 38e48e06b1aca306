"""The pull-request author who knows the Python rules throws the same dangerous switch in
another shape: TLS checks off through a false flag written another way, a session's
attribute, `cert_reqs`, the default context or the environment; unpickling through joblib,
numpy's `allow_pickle` or ruamel's unsafe type; code run through `code`'s REPL objects;
a tar archive unpacked by `shutil`. Each twin is reported by the plain case's rule at its
severity; the near misses stay quiet."""

from __future__ import annotations

import pytest

from tests.rules.conftest import Base, hits

HEAD = ("import os\nimport ssl\nimport requests\nfrom flask import request\n\n\n"
        "def view():\n    url = request.args['u']\n    data = request.get_data()\n")


def _found(body: str, rule: str) -> set[tuple[str, str]]:
    return {hit for hit in hits("app/views.py", HEAD + body, base=Base(everything=True))
            if hit[0] == rule}


TLS = "python.tls-verify-disabled"
TLS_PLAIN = "    requests.get(url, verify=False)\n"
TLS_TWINS = {
    "verify=0": "    requests.get(url, verify=0)\n",
    "verify=not True": "    requests.get(url, verify=not True)\n",
    "an empty string": "    requests.get(url, verify='')\n",
    "a name bound to False": "    CHECK = False\n    requests.get(url, verify=CHECK)\n",
    "a session's attribute": "    s = requests.Session()\n    s.verify = False\n    s.get(url)\n",
    "requests.session() and 0": "    http = requests.session()\n    http.verify = 0\n",
    "aiohttp's ssl=False": "    import aiohttp\n    aiohttp.TCPConnector(ssl=False)\n",
    "aiohttp's verify_ssl": "    import aiohttp\n"
                            "    aiohttp.ClientSession().get(url, verify_ssl=False)\n",
    "urllib3's cert_reqs": "    import urllib3\n    urllib3.PoolManager(cert_reqs='CERT_NONE')\n",
    "the default context replaced": "    ssl._create_default_https_context = "
                                    "ssl._create_unverified_context\n",
    "check_hostname from a name": "    off = 0\n    c = ssl.create_default_context()\n"
                                  "    c.check_hostname = off\n",
    "verify_mode as a number": "    c = ssl.create_default_context()\n    c.verify_mode = 0\n",
    "PYTHONHTTPSVERIFY": "    os.environ['PYTHONHTTPSVERIFY'] = '0'\n",
    "an empty CURL_CA_BUNDLE": "    os.environ['CURL_CA_BUNDLE'] = ''\n",
    "os.environ.update": "    os.environ.update(REQUESTS_CA_BUNDLE='')\n",
    "os.putenv": "    os.putenv('GIT_SSL_NO_VERIFY', '1')\n",
}


@pytest.mark.parametrize("twin", TLS_TWINS.values(), ids=TLS_TWINS.keys())
def test_tls_checks_off_in_another_shape_are_the_same_error(twin: str) -> None:
    plain = _found(TLS_PLAIN, TLS)
    assert plain == {(TLS, "error")}
    assert _found(twin, TLS) == plain


@pytest.mark.parametrize("near", [
    "    requests.get(url, verify='/etc/ca.pem')\n",
    "    requests.get(url, verify=1)\n",
    "    def check(blob, verify=False):\n        return blob\n    check(data, verify=0)\n",
    "    class Job:\n        verify = True\n    job = Job()\n    job.verify = False\n",
    "    os.environ['PYTHONHTTPSVERIFY'] = '1'\n",
    "    os.environ['CURL_CA_BUNDLE'] = '/etc/ca.pem'\n",
    "    c = ssl.create_default_context()\n    c.check_hostname = True\n",
])
def test_tls_checks_kept_stay_quiet(near: str) -> None:
    assert _found(near, TLS) == set()


LOADING = "python.unsafe-deserialization"
LOADING_PLAIN = "    import pickle\n    pickle.loads(data)\n"
LOADING_TWINS = {
    "joblib": "    import joblib\n    joblib.load(url)\n",
    "numpy with allow_pickle": "    import numpy as np\n    np.load(url, allow_pickle=True)\n",
    "numpy with allow_pickle=1": "    import numpy as np\n    np.load(url, allow_pickle=1)\n",
    "ruamel's unsafe type": "    from ruamel.yaml import YAML\n    YAML(typ='unsafe').load(data)\n",
}


@pytest.mark.parametrize("twin", LOADING_TWINS.values(), ids=LOADING_TWINS.keys())
def test_unpickling_under_another_name_is_the_same_warning(twin: str) -> None:
    plain = _found(LOADING_PLAIN, LOADING)
    assert plain == {(LOADING, "warning")}
    assert _found(twin, LOADING) == plain


@pytest.mark.parametrize("near", [
    "    import numpy as np\n    np.load(url)\n",
    "    import numpy as np\n    np.load(url, allow_pickle=False)\n",
    "    from ruamel.yaml import YAML\n    YAML(typ='safe').load(data)\n",
])
def test_loading_without_pickle_stays_quiet(near: str) -> None:
    assert _found(near, LOADING) == set()


CODE = "python.eval-exec"


@pytest.mark.parametrize("twin", [
    "    import code\n    code.InteractiveInterpreter().runsource(url)\n",
    "    import code\n    code.InteractiveConsole().push(url)\n",
    "    __builtins__['exec'](url)\n",
])
def test_code_run_through_a_repl_object_is_eval(twin: str) -> None:
    plain = _found("    exec(url)\n", CODE)
    assert plain == {(CODE, "error")}
    assert _found(twin, CODE) == plain


def test_a_repl_object_given_constant_code_stays_quiet() -> None:
    assert _found("    import code\n    code.InteractiveConsole().push('x = 1')\n", CODE) == set()


PATH = "python.path-traversal"


def test_shutil_unpack_archive_is_tar_extraction() -> None:
    plain = _found("    import tarfile\n    tarfile.open(url).extractall('/tmp/x')\n", PATH)
    assert plain == {(PATH, "warning")}
    assert _found("    import shutil\n    shutil.unpack_archive(url, '/tmp/x')\n", PATH) == plain
    assert _found("    import shutil\n    shutil.unpack_archive(url, '/tmp/x', filter='data')\n",
                  PATH) == set()
