"""A persistent cache of model results under `.reviewbot/cache`, so a re-run on an unchanged
change makes no model calls and a change to one unit re-reviews that unit only.

- Keys hash what determines the answer: the prompt/schema version, the model, the endpoint,
  and the prompt itself (the unit's code and context, the rule findings, the guidance),
  after the redaction pass, so no secret is hashed or stored.
- Entries are JSON files written to a temporary name and renamed into place: two hooks at
  once, or parallel CI jobs on one runner, never see a half-written entry; an unreadable entry
  is a miss, and is removed.
- Only successes are stored (callers decide); the cache is bounded in bytes, and the entries
  read least recently go first.
- `reviewbot cache --clear` (or deleting the folder) empties it; `--no-cache` skips it.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import tempfile
from pathlib import Path
from typing import Any

import msgspec

from reviewbot.store.files import write_if_absent

MAX_BYTES = 50_000_000
_SUFFIX = ".json"


def cache_key(*parts: str) -> str:
    digest = hashlib.sha256()
    for part in parts:
        digest.update(part.encode("utf-8", "surrogatepass"))
        digest.update(b"\0")
    return digest.hexdigest()


class ResultCache(msgspec.Struct):
    folder: Path
    max_bytes: int = MAX_BYTES
    hits: int = 0
    misses: int = 0
    _ready: bool = False

    def get(self, kind: str, key: str) -> dict[str, Any] | None:
        path = self._path(kind, key)
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            self.misses += 1
            return None
        except (OSError, ValueError):
            with contextlib.suppress(OSError):
                path.unlink()
            self.misses += 1
            return None
        if not isinstance(data, dict):
            self.misses += 1
            return None
        with contextlib.suppress(OSError):
            os.utime(path)  # recently used: evicted last
        self.hits += 1
        return data

    def put(self, kind: str, key: str, value: dict[str, Any]) -> None:
        """Store an entry atomically. A cache that cannot be written is not an error."""
        try:
            self._prepare()
            target = self._path(kind, key)
            target.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            descriptor, temporary = tempfile.mkstemp(dir=target.parent, prefix=".tmp-")
            with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
                json.dump(value, handle, ensure_ascii=False)
            Path(temporary).replace(target)
        except OSError:
            return
        self.evict()

    def evict(self) -> int:
        """Remove the least recently used entries beyond max_bytes; how many went."""
        entries = []
        for path in self.folder.glob(f"*/*{_SUFFIX}"):
            with contextlib.suppress(OSError):
                stat = path.stat()
                entries.append((stat.st_mtime, stat.st_size, path))
        total = sum(size for _, size, _ in entries)
        removed = 0
        for _, size, path in sorted(entries):
            if total <= self.max_bytes:
                break
            with contextlib.suppress(OSError):
                path.unlink()
                removed += 1
            total -= size
        return removed

    def size(self) -> tuple[int, int]:
        """(entries, bytes)."""
        sizes = [p.stat().st_size for p in self.folder.glob(f"*/*{_SUFFIX}") if p.is_file()]
        return len(sizes), sum(sizes)

    def clear(self) -> int:
        count = 0
        for path in self.folder.glob(f"*/*{_SUFFIX}"):
            with contextlib.suppress(OSError):
                path.unlink()
                count += 1
        return count

    def _path(self, kind: str, key: str) -> Path:
        return self.folder / kind / f"{key}{_SUFFIX}"

    def _prepare(self) -> None:
        if self._ready:
            return
        self.folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        write_if_absent(self.folder / ".gitignore",
                        "# Written by reviewbot: a local cache of model results.\n*\n")
        self._ready = True
