"""The first eleven cases (eight planted defects, three clean changes), kept whole so that
a finding on any of them can be followed from one model half to the next."""

from __future__ import annotations

from ..case import Case, Defect

USERS = '''from flask import Flask, abort, request

from app.db import get_db
from app.auth import current_user

app = Flask(__name__)


@app.get("/users/<int:user_id>")
def show_user(user_id):
    user = get_db().get_user(user_id)
    if user is None:
        abort(404)
    return user.to_json()
'''

ORIGINAL: tuple[Case, ...] = (
    Case("sql-built-by-formatting", "python", "defect",
         {"app/search.py": "def search(db, term):\n    return []\n"},
         {"app/search.py": '''def search(db, term, order):
    cursor = db.cursor()
    sql = f"SELECT id, name FROM products WHERE name LIKE '%{term}%' ORDER BY {order}"
    cursor.execute(sql)
    return cursor.fetchall()
'''},
         (Defect("app/search.py", 3, "security", "SQL built from request input",
                 ("sql", "inject", "interpolat", "parameteri", "sanitiz", "escap")),)),
    Case("missing-authorization", "python", "defect",
         {"app/views.py": USERS},
         {"app/views.py": USERS + '''

@app.delete("/users/<int:user_id>")
def delete_user(user_id):
    get_db().delete_user(user_id)
    return "", 204
'''},
         (Defect("app/views.py", 19, "security", "any caller can delete any user",
                 ("auth", "permission", "access control", "privilege", "anyone", "any user",
                  "admin", "owner")),)),
    Case("off-by-one", "python", "defect",
         {"app/paging.py": "def page(items, number, size):\n    return items\n"},
         {"app/paging.py": '''def page(items, number, size):
    """Items of page `number` (1-based), `size` to a page."""
    start = (number - 1) * size
    return items[start:start + size + 1]
'''},
         (Defect("app/paging.py", 4, "bug", "a page returns one item too many",
                 ("off-by-one", "off by one", "one too many", "one more", "extra", "+ 1", "+1",
                  "too many", "bound")),)),
    Case("leaked-file-handle", "python", "defect",
         {"app/report.py": "import json\n"},
         {"app/report.py": '''import json


def load_reports(paths):
    reports = []
    for path in paths:
        handle = open(path)
        reports.append(json.load(handle))
    return reports
'''},
         (Defect("app/report.py", 7, "bug", "file handles are never closed",
                 ("close", "leak", "context manager", "with open", "with statement",
                  "resource", "descriptor")),)),
    Case("race-on-shared-counter", "python", "defect",
         {"app/stats.py": "hits = 0\n"},
         {"app/stats.py": '''import threading

hits = 0


def record_hit():
    global hits
    current = hits
    hits = current + 1


def serve(requests):
    workers = [threading.Thread(target=record_hit) for _ in requests]
    for worker in workers:
        worker.start()
'''},
         (Defect("app/stats.py", 8, "bug", "read-modify-write of a shared counter without a "
                                          "lock",
                 ("race", "lock", "thread-safe", "thread safe", "atomic", "concurren",
                  "synchroni")),)),
    Case("unvalidated-path", "python", "defect",
         {"app/files.py": "from flask import Flask\n\napp = Flask(__name__)\n"},
         {"app/files.py": '''import os

from flask import Flask, request, send_file

app = Flask(__name__)
UPLOADS = "/srv/uploads"


@app.get("/download")
def download():
    name = request.args["name"]
    return send_file(os.path.join(UPLOADS, name))
'''},
         (Defect("app/files.py", 12, "security", "path traversal through `name`",
                 ("traversal", "directory", "..", "sanitiz", "validat", "arbitrary file",
                  "outside")),)),
    Case("swallowed-payment-error", "python", "defect",
         {"app/checkout.py": "def checkout(cart, gateway):\n    return gateway.charge(cart)\n"},
         {"app/checkout.py": '''import logging

log = logging.getLogger(__name__)


def checkout(cart, gateway):
    try:
        receipt = gateway.charge(cart.total)
    except Exception:
        receipt = None
    cart.mark_paid()
    return receipt
'''},
         (Defect("app/checkout.py", 11, "bug", "the cart is marked paid when the charge "
                                              "failed",
                 ("swallow", "paid", "fail", "except", "ignor", "silent", "charge")),)),
    Case("n-plus-one", "python", "defect",
         {"app/orders.py": "def summary(db):\n    return []\n"},
         {"app/orders.py": '''def summary(db):
    rows = []
    for order in db.query("SELECT id FROM orders"):
        items = db.query("SELECT * FROM items WHERE order_id = ?", (order.id,))
        rows.append((order.id, len(items)))
    return rows
'''},
         (Defect("app/orders.py", 4, "performance", "one query per order",
                 ("n+1", "n + 1", "per order", "each order", "in a loop", "loop", "join",
                  "batch", "round trip")),)),
    Case("clean-rename", "python", "clean",
         {"app/money.py": "def to_cents(amount):\n    return round(amount * 100)\n"},
         {"app/money.py": '''def to_minor_units(amount: float) -> int:
    """The amount in cents, rounded half to even."""
    return round(amount * 100)


to_cents = to_minor_units
'''}),
    Case("clean-test", "python", "clean",
         {"tests/test_money.py": "from app.money import to_cents\n"},
         {"tests/test_money.py": '''from app.money import to_cents


def test_to_cents_rounds():
    assert to_cents(1.005) in (100, 101)
    assert to_cents(2) == 200
'''}),
    Case("clean-config", "python", "clean",
         {"app/settings.py": 'TIMEOUT = 10\n'},
         {"app/settings.py": 'import os\n\nTIMEOUT = int(os.environ.get("APP_TIMEOUT", "10"))\n'}),
)
