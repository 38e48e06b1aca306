"""Python changes shaped after real bugs (a comparison the wrong way round, a coroutine never
awaited, a shared mutable default, an authorization check removed, an API that returns None,
a verifying default turned off, a failure swallowed and recorded as success) and clean ones
(a helper extracted, docstrings, type hints, a dependency bump, a README)."""

from __future__ import annotations

from ..case import Case, Defect, line_of

TOKENS_BASE = '''import time
from dataclasses import dataclass


@dataclass
class Token:
    value: str
    expires_at: float


def is_valid(token: Token, now: float | None = None) -> bool:
    return bool(token.value)
'''
TOKENS = TOKENS_BASE.replace('''    return bool(token.value)
''', '''    """A token is valid until its expiry time."""
    now = time.time() if now is None else now
    return bool(token.value) and now > token.expires_at
''')

MAIL = '''async def send_mail(to: str, subject: str, body: str = "") -> None:
    """Hands the message to the mail relay (a network round trip)."""
    ...
'''
NOTIFY_BASE = '''from app.mail import send_mail


async def notify_owner(order):
    await send_mail(order.owner_email, f"Order {order.id} received")
'''
NOTIFY = NOTIFY_BASE + '''

async def notify_shipped(orders):
    """Tells every owner their order has shipped; returns how many were told."""
    for order in orders:
        send_mail(order.owner_email, f"Order {order.id} shipped")
    return len(orders)
'''

CART_BASE = '''class Cart:
    def __init__(self, owner):
        self.owner = owner
        self.items = []

    def add(self, item):
        self.items.append(item)

    def total(self):
        return sum(item.price for item in self.items)
'''
CART = CART_BASE.replace('''    def __init__(self, owner):
        self.owner = owner
        self.items = []
''', '''    def __init__(self, owner, items=[]):
        self.owner = owner
        self.items = items
''')

INVOICES_BASE = '''from flask import Blueprint, abort, g, jsonify

from app.models import Invoice

bp = Blueprint("invoices", __name__)


@bp.get("/invoices/<int:invoice_id>")
def show_invoice(invoice_id):
    invoice = Invoice.get(invoice_id)
    if invoice is None:
        abort(404)
    if invoice.account_id != g.user.account_id and not g.user.is_admin:
        abort(403)
    return jsonify(invoice.to_dict())
'''
CHECK = '''    if invoice.account_id != g.user.account_id and not g.user.is_admin:
        abort(403)
    return jsonify(invoice.to_dict())
'''
INVOICES = INVOICES_BASE.replace(CHECK, '''    data = invoice.to_dict()
    data["lines"] = [line.to_dict() for line in invoice.lines]
    return jsonify(data)
''')

BOARD_BASE = '''def top_players(players, count=10):
    """The `count` best players, best first."""
    return players[:count]
'''
BOARD = BOARD_BASE.replace('''    return players[:count]
''', '''    ranked = players.sort(key=lambda player: player.score, reverse=True)
    return ranked[:count]
''')

HTTP_BASE = '''import requests


def fetch_json(url, timeout=10):
    response = requests.get(url, timeout=timeout)
    response.raise_for_status()
    return response.json()
'''
HTTP = HTTP_BASE.replace('''def fetch_json(url, timeout=10):
    response = requests.get(url, timeout=timeout)
''', '''def fetch_json(url, timeout=10, verify=False):
    """GET `url` and decode its JSON; `verify` checks the server's certificate."""
    response = requests.get(url, timeout=timeout, verify=verify)
''')

SYNC_BASE = '''import logging

log = logging.getLogger(__name__)


def sync_accounts(client, store):
    synced = 0
    for account in store.pending():
        client.push(account)
        store.mark_synced(account)
        synced += 1
    return synced
'''
SYNC = SYNC_BASE.replace('''        client.push(account)
        store.mark_synced(account)
''', '''        try:
            client.push(account)
        except Exception:
            pass
        store.mark_synced(account)
''')

PRICING_BASE = '''def order_total(order):
    total = 0
    for line in order.lines:
        price = line.unit_price * line.quantity
        if line.discount:
            price -= price * line.discount / 100
        total += price
    return round(total, 2)


def quote_total(quote):
    total = 0
    for line in quote.lines:
        price = line.unit_price * line.quantity
        if line.discount:
            price -= price * line.discount / 100
        total += price
    return round(total, 2)
'''
PRICING = '''def line_price(line):
    """A line's price after its discount (a percentage)."""
    price = line.unit_price * line.quantity
    if line.discount:
        price -= price * line.discount / 100
    return price


def order_total(order):
    return round(sum(line_price(line) for line in order.lines), 2)


def quote_total(quote):
    return round(sum(line_price(line) for line in quote.lines), 2)
'''

GEO_BASE = '''import math

EARTH_RADIUS_KM = 6371.0


def haversine(a, b):
    lat1, lon1 = map(math.radians, a)
    lat2, lon2 = map(math.radians, b)
    dlat, dlon = lat2 - lat1, lon2 - lon1
    h = math.sin(dlat / 2) ** 2 + math.cos(lat1) * math.cos(lat2) * math.sin(dlon / 2) ** 2
    return 2 * EARTH_RADIUS_KM * math.asin(math.sqrt(h))
'''
GEO = GEO_BASE.replace('''def haversine(a, b):
''', '''def haversine(a, b):
    """Great-circle distance in kilometres between two (latitude, longitude) points given in
    degrees. Accurate to about 0.5% (the Earth is not a sphere), plenty for "nearby"."""
''').replace('''EARTH_RADIUS_KM = 6371.0
''', '''# The mean radius (IUGG); the equatorial one is 6378.1 km.
EARTH_RADIUS_KM = 6371.0
''')

TEXT_BASE = '''import re

_SPACES = re.compile(r"\\s+")


def normalise(text):
    return _SPACES.sub(" ", text).strip()


def initials(name):
    return "".join(part[0].upper() for part in normalise(name).split(" ") if part)
'''
TEXT = '''from __future__ import annotations

import re

_SPACES = re.compile(r"\\s+")


def normalise(text: str) -> str:
    return _SPACES.sub(" ", text).strip()


def initials(name: str) -> str:
    return "".join(part[0].upper() for part in normalise(name).split(" ") if part)
'''

README_BASE = '''# shop

A small shop backend.

## Running

    flask --app app run
'''
README = '''# shop

A small shop backend: products, carts, orders and invoices, behind a JSON API.

## Running

    pip install -r requirements.txt
    flask --app app run

The API listens on http://127.0.0.1:5000. Set `DATABASE_URL` to use another database than
the default SQLite file (`shop.db`).

## Tests

    pytest
'''

PYTHON: tuple[Case, ...] = (
    Case("py-token-expiry-inverted", "python", "defect",
         {"app/tokens.py": TOKENS_BASE}, {"app/tokens.py": TOKENS},
         (Defect("app/tokens.py", line_of(TOKENS, "now > token.expires_at"), "bug",
                 "a token counts as valid only once it has expired",
                 ("invert", "revers", "backward", "opposite", "expired", "after", "flipped",
                  "wrong way", "comparison")),), "Check token expiry"),
    Case("py-missing-await", "python", "defect",
         {"app/mail.py": MAIL, "app/notify.py": NOTIFY_BASE}, {"app/notify.py": NOTIFY},
         (Defect("app/notify.py", line_of(NOTIFY, '        send_mail(order.owner_email'),
                 "bug", "the coroutine is never awaited: no mail is sent",
                 ("await", "coroutine", "never sent", "not sent", "never run", "async")),),
         "Tell owners their orders shipped"),
    Case("py-mutable-default", "python", "defect",
         {"app/cart.py": CART_BASE}, {"app/cart.py": CART},
         (Defect("app/cart.py", line_of(CART, "items=[]"), "bug",
                 "every cart made without items shares one list",
                 ("mutable", "default", "shared", "same list", "persist", "between instances")),),
         "Let a cart start with items"),
    Case("py-authorization-check-removed", "python", "defect",
         {"app/invoices.py": INVOICES_BASE}, {"app/invoices.py": INVOICES},
         (Defect("app/invoices.py", line_of(INVOICES, "abort(404)"), "security",
                 "any signed-in user can read any account's invoice",
                 ("auth", "permission", "access", "account", "owner", "403", "forbidden",
                  "check", "any user", "other user"),
                 end_line=line_of(INVOICES, "data = invoice.to_dict()")),),
         "Show an invoice's lines"),
    Case("py-sort-returns-none", "python", "defect",
         {"app/leaderboard.py": BOARD_BASE}, {"app/leaderboard.py": BOARD},
         (Defect("app/leaderboard.py", line_of(BOARD, "players.sort("), "bug",
                 "list.sort returns None: the next line raises",
                 ("none", "sorted", "in place", "in-place", "not subscriptable", "returns")),),
         "Rank the leaderboard by score"),
    Case("py-tls-verification-off-by-default", "python", "defect",
         {"app/http.py": HTTP_BASE}, {"app/http.py": HTTP},
         (Defect("app/http.py", line_of(HTTP, "def fetch_json"), "security",
                 "certificates are not checked unless a caller asks",
                 ("verif", "tls", "ssl", "certificate", "man-in-the-middle", "mitm",
                  "insecure"),
                 end_line=line_of(HTTP, "requests.get(")),),
         "Let callers choose certificate verification"),
    Case("py-sync-failure-swallowed", "python", "defect",
         {"app/sync.py": SYNC_BASE}, {"app/sync.py": SYNC},
         (Defect("app/sync.py", line_of(SYNC, "except Exception:"), "bug",
                 "an account that failed to push is marked synced and never retried",
                 ("swallow", "ignor", "silent", "except", "fail", "lost", "never retried",
                  "marked", "log"),
                 end_line=line_of(SYNC, "store.mark_synced(account)")),),
         "Keep syncing when one account fails"),
    Case("py-clean-extract-helper", "python", "clean",
         {"app/pricing.py": PRICING_BASE}, {"app/pricing.py": PRICING},
         message="Share the line price between orders and quotes"),
    Case("py-clean-docstrings", "python", "clean",
         {"app/geo.py": GEO_BASE}, {"app/geo.py": GEO}, message="Document haversine"),
    Case("py-clean-type-hints", "python", "clean",
         {"app/text.py": TEXT_BASE}, {"app/text.py": TEXT}, message="Type the text helpers"),
    Case("py-clean-dependency-bump", "python", "clean",
         {"requirements.txt": "flask==3.0.0\nrequests==2.31.0\nsqlalchemy==2.0.23\n"},
         {"requirements.txt": "flask==3.0.3\nrequests==2.32.3\nsqlalchemy==2.0.36\n"},
         message="Bump flask, requests and sqlalchemy"),
    Case("docs-clean-readme", "markdown", "clean",
         {"README.md": README_BASE, "app/__init__.py": ""}, {"README.md": README},
         message="Say how to install, configure and test"),
)
