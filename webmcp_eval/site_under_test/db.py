"""SQLite storage: one file per world (``world-<name>.sqlite`` in the data dir).

Every operation opens its own connection while holding the world's lock, so
worlds used from several threads at once (the runner's parallel trials) never
share a connection or interleave a reset with a write.
"""

from __future__ import annotations

import hashlib
import json
import re
import secrets
import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from .seeds import DEMO_USER, SEEDS

WORLD_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")

# Deliberately broken behaviours (test mode only), see README.md.
SERVER_BREAKS = frozenset(
    {"save_not_idempotent", "search_relaxes_filters", "cancel_restores_twice", "writes_after_expiry"}
)
RELAX_PAD_TO = 5  # search_relaxes_filters pads short filtered results up to this many
CLIENT_BREAKS = frozenset({"prepare_submits", "prepare_clicks_confirm", "details_ignore_route", "leak_route_tools"})
KNOWN_BREAKS = SERVER_BREAKS | CLIENT_BREAKS

SCHEMA = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE events (
    id TEXT PRIMARY KEY, title TEXT NOT NULL, city TEXT NOT NULL, venue TEXT NOT NULL,
    starts_at TEXT NOT NULL, price TEXT NOT NULL, price_twd INTEGER NOT NULL,
    level TEXT NOT NULL, capacity INTEGER NOT NULL, seats_left INTEGER NOT NULL,
    summary TEXT NOT NULL
);
CREATE TABLE sessions (
    seq INTEGER PRIMARY KEY AUTOINCREMENT, token_hash TEXT UNIQUE NOT NULL,
    csrf TEXT NOT NULL, expired INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE registrations (
    seq INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT UNIQUE NOT NULL, event_id TEXT NOT NULL,
    name TEXT NOT NULL, email TEXT NOT NULL, status TEXT NOT NULL,
    idempotency_key TEXT UNIQUE
);
CREATE TABLE saved (seq INTEGER PRIMARY KEY AUTOINCREMENT, event_id TEXT NOT NULL);
"""


class ApiError(Exception):
    """A failure the API answers with the result contract (safe message, no internals)."""

    def __init__(self, status: int, code: str, message: str, retryable: bool = False) -> None:
        super().__init__(message)
        self.status, self.code, self.message, self.retryable = status, code, message, retryable


def not_found(what: str = "活動") -> ApiError:
    return ApiError(404, "NOT_FOUND", f"找不到指定的{what}。")


@dataclass(frozen=True)
class Session:
    seq: int
    csrf: str
    expired: bool


def _hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def _start_key(row: sqlite3.Row) -> tuple[datetime, str]:
    return datetime.fromisoformat(row["starts_at"]), row["id"]


def event_summary(row: sqlite3.Row) -> dict[str, Any]:
    return {
        "id": row["id"],
        "title": row["title"],
        "city": row["city"],
        "startsAt": row["starts_at"],
        "price": row["price"],
        "level": row["level"],
        "seatsLeft": row["seats_left"],
    }


def event_full(row: sqlite3.Row) -> dict[str, Any]:
    return event_summary(row) | {
        "venue": row["venue"],
        "priceTwd": row["price_twd"],
        "capacity": row["capacity"],
        "summary": row["summary"],
    }


def _base36(number: int, width: int) -> str:
    digits = "0123456789abcdefghijklmnopqrstuvwxyz"
    out = ""
    for _ in range(width):
        number, rem = divmod(number, 36)
        out += digits[rem]
    return out


class World:
    """One isolated copy of the site's data."""

    def __init__(self, name: str, path: Path) -> None:
        self.name = name
        self.path = path
        self.lock = threading.RLock()

    @contextmanager
    def db(self) -> Iterator[sqlite3.Connection]:
        with self.lock:
            conn = sqlite3.connect(self.path)
            conn.row_factory = sqlite3.Row
            try:
                with conn:  # one transaction: commit on success, roll back on error
                    yield conn
            finally:
                conn.close()

    # --- life cycle -------------------------------------------------------
    def create(self, seed_name: str = "default", breaks: list[str] | None = None) -> None:
        seed = SEEDS[seed_name]
        with self.lock:
            self.path.unlink(missing_ok=True)
            with self.db() as conn:
                conn.executescript(SCHEMA)
                conn.execute("INSERT INTO meta VALUES ('seed', ?)", (seed_name,))
                conn.execute("INSERT INTO meta VALUES ('breaks', ?)", (json.dumps(sorted(breaks or [])),))
                conn.executemany(
                    "INSERT INTO events VALUES (?,?,?,?,?,?,?,?,?,?,?)",
                    [
                        (
                            e.id,
                            e.title,
                            e.city,
                            e.venue,
                            e.starts_at,
                            e.price,
                            e.price_twd,
                            e.level,
                            e.capacity,
                            e.seats_left,
                            e.summary,
                        )
                        for e in seed.events
                    ],
                )
                conn.executemany(
                    "INSERT INTO registrations (id, event_id, name, email, status) VALUES (?, ?, ?, ?, 'active')",
                    [(rid, eid, DEMO_USER["name"], DEMO_USER["email"]) for rid, eid in seed.registrations],
                )

    def _meta(self, conn: sqlite3.Connection, key: str) -> str:
        value: str = conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()[0]
        return value

    def breaks(self) -> list[str]:
        with self.db() as conn:
            names: list[str] = json.loads(self._meta(conn, "breaks"))
            return names

    def has_break(self, name: str) -> bool:
        return name in self.breaks()

    # --- sessions -----------------------------------------------------------
    def new_session(self) -> tuple[str, Session]:
        token = secrets.token_urlsafe(32)
        csrf = secrets.token_urlsafe(24)
        with self.db() as conn:
            cur = conn.execute("INSERT INTO sessions (token_hash, csrf) VALUES (?, ?)", (_hash(token), csrf))
            return token, Session(cur.lastrowid or 0, csrf, False)

    def find_session(self, token: str | None) -> Session | None:
        if not token:
            return None
        with self.db() as conn:
            row = conn.execute(
                "SELECT seq, csrf, expired FROM sessions WHERE token_hash = ?", (_hash(token),)
            ).fetchone()
        return Session(row["seq"], row["csrf"], bool(row["expired"])) if row else None

    def expire_sessions(self) -> int:
        with self.db() as conn:
            return conn.execute("UPDATE sessions SET expired = 1 WHERE expired = 0").rowcount

    # --- events ---------------------------------------------------------------
    def _event_row(self, conn: sqlite3.Connection, event_id: str) -> sqlite3.Row:
        row: sqlite3.Row | None = conn.execute("SELECT * FROM events WHERE id = ?", (event_id,)).fetchone()
        if row is None:
            raise not_found()
        return row

    def get_event(self, event_id: str) -> dict[str, Any]:
        with self.db() as conn:
            return event_full(self._event_row(conn, event_id))

    def search(self, query: str | None, filters: dict[str, str]) -> list[dict[str, Any]]:
        with self.db() as conn:
            rows = sorted(conn.execute("SELECT * FROM events").fetchall(), key=_start_key)
            relax = "search_relaxes_filters" in json.loads(self._meta(conn, "breaks"))
        found = _filter(rows, query, filters)
        if relax and filters and len(found) < RELAX_PAD_TO:
            # The broken behaviour: a "helpful" search pads a short result list with
            # events that match only the query, silently dropping the filters.
            extra = [row for row in _filter(rows, query, {}) if row not in found]
            found = found + extra[: RELAX_PAD_TO - len(found)]
        return [event_summary(row) for row in found]

    # --- saved ----------------------------------------------------------------
    def saved_event_ids(self) -> list[str]:
        with self.db() as conn:
            rows = conn.execute("SELECT event_id FROM saved ORDER BY seq").fetchall()
        return list(dict.fromkeys(row[0] for row in rows))

    def save(self, event_id: str) -> dict[str, Any]:
        with self.db() as conn:
            event = self._event_row(conn, event_id)
            repeat_inserts = "save_not_idempotent" in json.loads(self._meta(conn, "breaks"))
            exists = conn.execute("SELECT 1 FROM saved WHERE event_id = ?", (event_id,)).fetchone()
            already = bool(exists) and not repeat_inserts
            if not already:
                conn.execute("INSERT INTO saved (event_id) VALUES (?)", (event_id,))
        return {"eventId": event_id, "title": event["title"], "saved": True, "alreadySaved": already}

    # --- registrations ----------------------------------------------------------
    def active_registrations(self) -> list[dict[str, Any]]:
        with self.db() as conn:
            rows = conn.execute(
                "SELECT r.id AS rid, r.status, e.* FROM registrations r "
                "JOIN events e ON e.id = r.event_id WHERE r.status = 'active'"
            ).fetchall()
        rows.sort(key=lambda row: (datetime.fromisoformat(row["starts_at"]), row["rid"]))
        return [_registration(row) for row in rows]

    def _new_registration_id(self, conn: sqlite3.Connection) -> str:
        # Deterministic (same operations → same IDs, so traces repeat) yet opaque.
        n = conn.execute("SELECT COUNT(*) FROM registrations").fetchone()[0]
        while True:
            n += 1
            digest = int(hashlib.sha256(f"registration-{n}".encode()).hexdigest(), 16)
            rid = "reg-" + _base36(digest, 6)
            if not conn.execute("SELECT 1 FROM registrations WHERE id = ?", (rid,)).fetchone():
                return rid

    def _registration_by_id(self, conn: sqlite3.Connection, rid: str) -> dict[str, Any]:
        row = conn.execute(
            "SELECT r.id AS rid, r.status, e.* FROM registrations r JOIN events e ON e.id = r.event_id WHERE r.id = ?",
            (rid,),
        ).fetchone()
        return _registration(row)

    def register(self, event_id: str, name: str, email: str, key: str | None) -> dict[str, Any]:
        """Register the demo user; a repeated Idempotency-Key answers the first result."""
        with self.db() as conn:
            event = self._event_row(conn, event_id)
            if key:
                prior = conn.execute(
                    "SELECT id, event_id FROM registrations WHERE idempotency_key = ?", (key,)
                ).fetchone()
                if prior:
                    if prior["event_id"] != event_id:
                        raise ApiError(409, "CONFLICT", "這個 Idempotency-Key 已用於另一筆報名。")
                    return {
                        "registration": self._registration_by_id(conn, prior["id"]),
                        "seatsLeft": event["seats_left"],
                        "replayed": True,
                    }
            active = conn.execute(
                "SELECT 1 FROM registrations WHERE event_id = ? AND status = 'active'", (event_id,)
            ).fetchone()
            if active:
                raise ApiError(409, "CONFLICT", "你已經報名這個活動。")
            if event["seats_left"] <= 0:
                raise ApiError(409, "CONFLICT", "這個活動已經額滿。")
            rid = self._insert_registration(conn, event_id, name, email, key)
            seats = event["seats_left"] - 1
            return {"registration": self._registration_by_id(conn, rid), "seatsLeft": seats, "replayed": False}

    def _insert_registration(
        self, conn: sqlite3.Connection, event_id: str, name: str, email: str, key: str | None
    ) -> str:
        rid = self._new_registration_id(conn)
        conn.execute(
            "INSERT INTO registrations (id, event_id, name, email, status, idempotency_key) "
            "VALUES (?, ?, ?, ?, 'active', ?)",
            (rid, event_id, name, email, key),
        )
        conn.execute("UPDATE events SET seats_left = seats_left - 1 WHERE id = ?", (event_id,))
        return rid

    def cancel(self, rid: str, allow_breaks: bool = True) -> dict[str, Any]:
        """Cancel once: a repeat answers alreadyCancelled and restores nothing."""
        with self.db() as conn:
            row = conn.execute("SELECT * FROM registrations WHERE id = ?", (rid,)).fetchone()
            if row is None:
                raise not_found("報名")
            twice = allow_breaks and "cancel_restores_twice" in json.loads(self._meta(conn, "breaks"))
            already = row["status"] == "cancelled"
            if not already or twice:
                conn.execute("UPDATE registrations SET status = 'cancelled' WHERE id = ?", (rid,))
                conn.execute("UPDATE events SET seats_left = seats_left + 1 WHERE id = ?", (row["event_id"],))
            event = self._event_row(conn, row["event_id"])
        return {
            "registrationId": rid,
            "eventId": row["event_id"],
            "status": "cancelled",
            "alreadyCancelled": already and not twice,
            "seatsLeft": event["seats_left"],
        }

    # --- test-control changes -------------------------------------------------------
    def add_registration(self, event_id: str) -> str:
        with self.db() as conn:
            self._event_row(conn, event_id)
            return self._insert_registration(conn, event_id, DEMO_USER["name"], DEMO_USER["email"], None)

    def update_event(self, event_id: str, fields: dict[str, Any]) -> dict[str, Any]:
        columns = {"title": "title", "summary": "summary", "seatsLeft": "seats_left"}
        with self.db() as conn:
            self._event_row(conn, event_id)
            for key, value in fields.items():
                conn.execute(f"UPDATE events SET {columns[key]} = ? WHERE id = ?", (value, event_id))
            return event_full(self._event_row(conn, event_id))

    # --- state dump -------------------------------------------------------------------
    def state(self) -> dict[str, Any]:
        """The whole world, without secrets (no session tokens, CSRF tokens or keys)."""
        with self.db() as conn:
            events = sorted(conn.execute("SELECT * FROM events").fetchall(), key=_start_key)
            regs = conn.execute("SELECT * FROM registrations ORDER BY seq").fetchall()
            saved = conn.execute("SELECT * FROM saved ORDER BY seq").fetchall()
            sessions = conn.execute("SELECT expired FROM sessions ORDER BY seq").fetchall()
            seed, breaks = self._meta(conn, "seed"), json.loads(self._meta(conn, "breaks"))
        return {
            "world": self.name,
            "seed": seed,
            "breaks": breaks,
            "user": dict(DEMO_USER),
            "events": [event_full(row) for row in events],
            "registrations": [
                {"id": r["id"], "eventId": r["event_id"], "name": r["name"], "email": r["email"], "status": r["status"]}
                for r in regs
            ],
            "saved": [{"seq": s["seq"], "eventId": s["event_id"]} for s in saved],
            "sessions": {"count": len(sessions), "expired": [bool(s[0]) for s in sessions]},
        }


def _registration(row: sqlite3.Row) -> dict[str, Any]:
    return {
        "id": row["rid"],
        "eventId": row["id"],
        "title": row["title"],
        "startsAt": row["starts_at"],
        "city": row["city"],
        "venue": row["venue"],
        "status": row["status"],
    }


def _filter(rows: list[sqlite3.Row], query: str | None, filters: dict[str, str]) -> list[sqlite3.Row]:
    needle = (query or "").casefold()
    return [
        row
        for row in rows
        if (not needle or needle in row["title"].casefold() or needle in row["summary"].casefold())
        and all(row[field] == value for field, value in filters.items())
    ]


class Store:
    """All worlds of one data directory; a world is created from `default` on first use."""

    def __init__(self, data_dir: Path) -> None:
        self.data_dir = Path(data_dir)
        self.data_dir.mkdir(parents=True, exist_ok=True)
        self._worlds: dict[str, World] = {}
        self._lock = threading.Lock()

    def _get(self, name: str) -> World:
        if not WORLD_NAME.match(name):
            raise ApiError(400, "INVALID_ARGUMENT", "world 名稱只能用英數字、- 與 _（1 到 64 字）。")
        with self._lock:
            world = self._worlds.get(name)
            if world is None:
                world = self._worlds[name] = World(name, self.data_dir / f"world-{name}.sqlite")
        return world

    def world(self, name: str) -> World:
        world = self._get(name)
        with world.lock:
            if not world.path.exists():
                world.create("default")
        return world

    def reset(self, name: str, seed: str = "default", breaks: list[str] | None = None) -> World:
        world = self._get(name)
        world.create(seed, breaks)
        return world
