"""Small real-looking changes with planted, labelled defects, and clean changes, for
`bench/review_quality.py`. Each case is a base version, a change, and the defects a careful
reviewer should report (file, the line the defect is on, category)."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Defect:
    path: str
    line: int
    category: str
    label: str


@dataclass(frozen=True)
class Case:
    name: str
    base: dict[str, str]
    change: dict[str, str]
    defects: tuple[Defect, ...] = field(default=())


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

CASES: tuple[Case, ...] = (
    Case("sql-built-by-formatting",
         {"app/search.py": "def search(db, term):\n    return []\n"},
         {"app/search.py": '''def search(db, term, order):
    cursor = db.cursor()
    sql = f"SELECT id, name FROM products WHERE name LIKE '%{term}%' ORDER BY {order}"
    cursor.execute(sql)
    return cursor.fetchall()
'''},
         (Defect("app/search.py", 3, "security", "SQL built from request input"),)),
    Case("missing-authorization",
         {"app/views.py": USERS},
         {"app/views.py": USERS + '''

@app.delete("/users/<int:user_id>")
def delete_user(user_id):
    get_db().delete_user(user_id)
    return "", 204
'''},
         (Defect("app/views.py", 19, "security", "any caller can delete any user"),)),
    Case("off-by-one",
         {"app/paging.py": "def page(items, number, size):\n    return items\n"},
         {"app/paging.py": '''def page(items, number, size):
    """Items of page `number` (1-based), `size` to a page."""
    start = (number - 1) * size
    return items[start:start + size + 1]
'''},
         (Defect("app/paging.py", 4, "bug", "a page returns one item too many"),)),
    Case("leaked-file-handle",
         {"app/report.py": "import json\n"},
         {"app/report.py": '''import json


def load_reports(paths):
    reports = []
    for path in paths:
        handle = open(path)
        reports.append(json.load(handle))
    return reports
'''},
         (Defect("app/report.py", 7, "bug", "file handles are never closed"),)),
    Case("race-on-shared-counter",
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
                                          "lock"),)),
    Case("unvalidated-path",
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
         (Defect("app/files.py", 12, "security", "path traversal through `name`"),)),
    Case("swallowed-payment-error",
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
                                              "failed"),)),
    Case("n-plus-one",
         {"app/orders.py": "def summary(db):\n    return []\n"},
         {"app/orders.py": '''def summary(db):
    rows = []
    for order in db.query("SELECT id FROM orders"):
        items = db.query("SELECT * FROM items WHERE order_id = ?", (order.id,))
        rows.append((order.id, len(items)))
    return rows
'''},
         (Defect("app/orders.py", 4, "performance", "one query per order"),)),
    Case("clean-rename",
         {"app/money.py": "def to_cents(amount):\n    return round(amount * 100)\n"},
         {"app/money.py": '''def to_minor_units(amount: float) -> int:
    """The amount in cents, rounded half to even."""
    return round(amount * 100)


to_cents = to_minor_units
'''}),
    Case("clean-test",
         {"tests/test_money.py": "from app.money import to_cents\n"},
         {"tests/test_money.py": '''from app.money import to_cents


def test_to_cents_rounds():
    assert to_cents(1.005) in (100, 101)
    assert to_cents(2) == 200
'''}),
    Case("clean-config",
         {"app/settings.py": 'TIMEOUT = 10\n'},
         {"app/settings.py": 'import os\n\nTIMEOUT = int(os.environ.get("APP_TIMEOUT", "10"))\n'}),
)
