"""JavaScript and TypeScript changes shaped after real bugs (a promise used as its value, an
assignment for a comparison, a loop bound one too far, HTML built from user text, a route
without its authorization, an interval never cleared, a query per row) and clean ones (a
rename with its callers, promise chains made async, a dependency bump, a test)."""

from __future__ import annotations

from ..case import Case, Defect, line_of

DB_TS = '''export interface Order {
  id: string;
  status: "open" | "shipped" | "cancelled";
}

export interface Orders {
  findById(id: string): Promise<Order | null>;
  update(id: string, fields: Partial<Order>): Promise<void>;
}

export declare const db: { orders: Orders };
'''
CANCEL_BASE = '''import { db } from "./db";

export async function shipOrder(id: string): Promise<void> {
  await db.orders.update(id, { status: "shipped" });
}
'''
CANCEL = CANCEL_BASE + '''
export async function cancelOrder(id: string): Promise<boolean> {
  const order = db.orders.findById(id);
  if (!order) {
    return false;
  }
  await db.orders.update(id, { status: "cancelled" });
  return true;
}
'''

PERMISSIONS_BASE = '''function canView(user, doc) {
  return doc.public || doc.ownerId === user.id;
}

module.exports = { canView };
'''
PERMISSIONS = '''function canView(user, doc) {
  return doc.public || doc.ownerId === user.id;
}

function canEdit(user, doc) {
  if (user.role = "admin") {
    return true;
  }
  return doc.ownerId === user.id;
}

module.exports = { canView, canEdit };
'''

CHUNK_BASE = '''export function first<T>(items: T[], count: number): T[] {
  return items.slice(0, count);
}
'''
CHUNK = CHUNK_BASE + '''
/** `items` in batches of `size` (the last may be shorter), for the bulk API. */
export function chunk<T>(items: T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i <= items.length; i += size) {
    out.push(items.slice(i, i + size));
  }
  return out;
}
'''

COMMENTS_BASE = '''export function renderComments(list, comments) {
  list.replaceChildren();
  for (const comment of comments) {
    const item = document.createElement("li");
    item.textContent = `${comment.author}: ${comment.body}`;
    list.appendChild(item);
  }
}
'''
COMMENTS = COMMENTS_BASE.replace('''    item.textContent = `${comment.author}: ${comment.body}`;
''', '''    item.innerHTML = `<strong>${comment.author}</strong>: ${comment.body}`;
''')

POSTS_BASE = '''const express = require("express");
const { requireAuth, requireOwner } = require("../auth");
const { Post } = require("../models");

const router = express.Router();

router.get("/posts/:id", async (req, res) => {
  const post = await Post.findByPk(req.params.id);
  if (!post) return res.sendStatus(404);
  res.json(post);
});

router.put("/posts/:id", requireAuth, requireOwner(Post), async (req, res) => {
  await Post.update(req.body, { where: { id: req.params.id } });
  res.sendStatus(204);
});

module.exports = router;
'''
POSTS = POSTS_BASE.replace('''
module.exports = router;
''', '''
router.delete("/posts/:id", async (req, res) => {
  await Post.destroy({ where: { id: req.params.id } });
  res.sendStatus(204);
});

module.exports = router;
''')

CLOCK_BASE = '''import { useState } from "react";

export function Clock() {
  const [now] = useState(new Date());
  return <span>{now.toLocaleTimeString()}</span>;
}
'''
CLOCK = '''import { useEffect, useState } from "react";

export function Clock() {
  const [now, setNow] = useState(new Date());
  useEffect(() => {
    setInterval(() => setNow(new Date()), 1000);
  }, []);
  return <span>{now.toLocaleTimeString()}</span>;
}
'''

ORDERS_BASE = '''export async function ordersOf(prisma, userId) {
  return prisma.order.findMany({ where: { userId } });
}
'''
ORDERS = ORDERS_BASE + '''
export async function ordersWithItems(prisma, userId) {
  const orders = await prisma.order.findMany({ where: { userId } });
  for (const order of orders) {
    order.items = await prisma.item.findMany({ where: { orderId: order.id } });
  }
  return orders;
}
'''

FORMAT_BASE = '''export function fmtPrice(cents: number, currency = "EUR"): string {
  return new Intl.NumberFormat("en", { style: "currency", currency }).format(cents / 100);
}
'''
CHECKOUT_BASE = '''import { fmtPrice } from "./format";

export function summary(totalCents: number): string {
  return `Total: ${fmtPrice(totalCents)}`;
}
'''

FETCH_BASE = '''function loadProfile(api, id) {
  return api.get(`/users/${id}`)
    .then((user) => api.get(`/teams/${user.teamId}`)
      .then((team) => ({ ...user, team })))
    .catch((error) => {
      throw new Error(`profile ${id}: ${error.message}`);
    });
}

module.exports = { loadProfile };
'''
FETCH = '''async function loadProfile(api, id) {
  try {
    const user = await api.get(`/users/${id}`);
    const team = await api.get(`/teams/${user.teamId}`);
    return { ...user, team };
  } catch (error) {
    throw new Error(`profile ${id}: ${error.message}`);
  }
}

module.exports = { loadProfile };
'''

PACKAGE = '''{
  "name": "shop-web",
  "version": "1.4.0",
  "private": true,
  "scripts": {
    "build": "vite build",
    "test": "vitest run"
  },
  "dependencies": {
    "react": "^18.2.0",
    "react-dom": "^18.2.0"
  },
  "devDependencies": {
    "vite": "^5.0.10",
    "vitest": "^1.1.0"
  }
}
'''

SLUG = '''export function slugify(title: string): string {
  return title
    .toLowerCase()
    .normalize("NFKD")
    .replace(/[\\u0300-\\u036f]/g, "")
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "");
}
'''
SLUG_TEST = '''import { describe, expect, it } from "vitest";

import { slugify } from "../src/slug";

describe("slugify", () => {
  it("joins words with dashes", () => {
    expect(slugify("Hello, World!")).toBe("hello-world");
  });

  it("drops accents", () => {
    expect(slugify("Crème brûlée")).toBe("creme-brulee");
  });

  it("trims dashes at both ends", () => {
    expect(slugify("  --Sale--  ")).toBe("sale");
  });
});
'''

JAVASCRIPT: tuple[Case, ...] = (
    Case("ts-missing-await", "typescript", "defect",
         {"src/db.ts": DB_TS, "src/orders.ts": CANCEL_BASE}, {"src/orders.ts": CANCEL},
         (Defect("src/orders.ts", line_of(CANCEL, "const order = db.orders.findById(id);"),
                 "bug", "the promise is always truthy: a missing order is cancelled anyway",
                 ("await", "promise", "truthy", "always")),), "Cancel orders"),
    Case("js-assignment-in-condition", "javascript", "defect",
         {"src/permissions.js": PERMISSIONS_BASE}, {"src/permissions.js": PERMISSIONS},
         (Defect("src/permissions.js", line_of(PERMISSIONS, 'user.role = "admin"'), "bug",
                 "assigns the role instead of comparing: everyone can edit",
                 ("assign", "===", "==", "always true", "comparison", "compar", "equality",
                  "overwrit")),), "Let owners and admins edit"),
    Case("ts-chunk-loop-bound", "typescript", "defect",
         {"src/batch.ts": CHUNK_BASE}, {"src/batch.ts": CHUNK},
         (Defect("src/batch.ts", line_of(CHUNK, "i <= items.length"), "bug",
                 "an extra empty batch when the length is a multiple of the size",
                 ("off-by-one", "off by one", "<=", "empty", "extra", "bound")),),
         "Send items to the bulk API in batches"),
    Case("js-comment-xss", "javascript", "defect",
         {"src/comments.js": COMMENTS_BASE}, {"src/comments.js": COMMENTS},
         (Defect("src/comments.js", line_of(COMMENTS, "item.innerHTML"), "security",
                 "comment text is written as HTML",
                 ("xss", "cross-site", "innerhtml", "escap", "sanitiz", "inject", "html",
                  "script")),), "Show comment authors in bold"),
    Case("js-route-without-authorization", "javascript", "defect",
         {"src/routes/posts.js": POSTS_BASE}, {"src/routes/posts.js": POSTS},
         (Defect("src/routes/posts.js", line_of(POSTS, "router.delete("), "security",
                 "anyone can delete any post",
                 ("auth", "requireauth", "requireowner", "permission", "anyone", "owner",
                  "access", "unauthori")),), "Delete posts"),
    Case("tsx-interval-never-cleared", "typescript", "defect",
         {"src/Clock.tsx": CLOCK_BASE}, {"src/Clock.tsx": CLOCK},
         (Defect("src/Clock.tsx", line_of(CLOCK, "setInterval("), "bug",
                 "the interval is never cleared: it outlives the component",
                 ("clearinterval", "cleanup", "clean up", "clean-up", "leak", "unmount",
                  "clear")),), "Make the clock tick"),
    Case("js-query-per-order", "javascript", "defect",
         {"src/orders.js": ORDERS_BASE}, {"src/orders.js": ORDERS},
         (Defect("src/orders.js", line_of(ORDERS, "prisma.item.findMany"), "performance",
                 "one query per order",
                 ("n+1", "n + 1", "per order", "each order", "loop", "include", "join", "batch",
                  "round trip")),), "List orders with their items"),
    Case("ts-clean-rename", "typescript", "clean",
         {"src/format.ts": FORMAT_BASE, "src/checkout.ts": CHECKOUT_BASE},
         {"src/format.ts": FORMAT_BASE.replace("fmtPrice", "formatPrice"),
          "src/checkout.ts": CHECKOUT_BASE.replace("fmtPrice", "formatPrice")},
         message="Rename fmtPrice to formatPrice"),
    Case("js-clean-async-await", "javascript", "clean",
         {"src/profile.js": FETCH_BASE}, {"src/profile.js": FETCH},
         message="Write loadProfile with async/await"),
    Case("js-clean-dependency-bump", "javascript", "clean",
         {"package.json": PACKAGE},
         {"package.json": PACKAGE.replace('"^18.2.0"', '"^18.3.1"').replace(
             '"^5.0.10"', '"^5.4.11"').replace('"^1.1.0"', '"^1.6.0"')},
         message="Bump react, vite and vitest"),
    Case("ts-clean-test", "typescript", "clean",
         {"src/slug.ts": SLUG}, {"test/slug.test.ts": SLUG_TEST}, message="Test slugify"),
)
