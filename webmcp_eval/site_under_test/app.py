"""The demo events site: a Starlette app serving the SPA, the JSON API and,
in test mode only, the ``/__test__/`` control API.

API errors always use the tools' result contract
``{status:"error", code, message, retryable, data:null}`` with a safe,
displayable message. Codes and HTTP statuses:

- 400 ``INVALID_ARGUMENT``  bad JSON, unknown/missing/ill-typed field, bad query parameter
- 401 ``SESSION_EXPIRED``   no session, unknown session, or an expired one
- 403 ``FORBIDDEN``         a POST without the session's ``X-CSRF-Token``
- 404 ``NOT_FOUND``         unknown event, registration or path (the control API outside test mode too)
- 405 ``INVALID_ARGUMENT``  wrong method
- 409 ``CONFLICT``          already registered, no seats left, Idempotency-Key reused for another event
- 500 ``TEMPORARILY_UNAVAILABLE`` (retryable) anything unexpected; never a traceback
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import secrets
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, TypeAdapter, ValidationError
from starlette.applications import Starlette
from starlette.datastructures import MutableHeaders
from starlette.exceptions import HTTPException
from starlette.requests import ClientDisconnect, Request
from starlette.responses import FileResponse, JSONResponse, RedirectResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from .db import KNOWN_BREAKS, ApiError, Session, Store, World
from .seeds import DEMO_USER, SEEDS

SITE_DIR = Path(__file__).resolve().parent
STATIC_DIR = SITE_DIR / "static"
SESSION_COOKIE = "wmcp_session"
WORLD_COOKIE = "wmcp_world"
MAIN_WORLD = "main"
SITE_NAME = "webmcp-eval demo site"
UNAVAILABLE = "活動服務暫時無法使用，請稍後再試。"
EMAIL_PATTERN = r"^[^\s@]+@[^\s@]+\.[^\s@]+$"
IDEMPOTENCY_KEY = re.compile(r"^[A-Za-z0-9_.:-]{8,128}$")
SEARCH_ENUMS = {
    "city": {"taipei", "taichung", "kaohsiung", "online"},
    "price": {"free", "paid"},
    "level": {"beginner", "intermediate", "advanced"},
}
CSP = (
    # 'unsafe-eval' only because Playwright's wait_for_function polls with eval();
    # inline scripts and on* attributes (the injected <img onerror>) stay blocked.
    "default-src 'self'; script-src 'self' 'unsafe-eval'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'; "
    "form-action 'self'"
)


# --- request bodies ---------------------------------------------------------------
class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


Id = Annotated[str, StringConstraints(min_length=1, max_length=64)]
Name = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=50)]
Email = Annotated[str, StringConstraints(strip_whitespace=True, max_length=254, pattern=EMAIL_PATTERN)]
if TYPE_CHECKING:  # the names are data (db.KNOWN_BREAKS, seeds.SEEDS): a checker sees strings, pydantic the Literal
    BreakName = str
    SeedName = str
else:
    BreakName = Literal[tuple(sorted(KNOWN_BREAKS))]
    SeedName = Literal[tuple(sorted(SEEDS))]


class SaveBody(Strict):
    eventId: Id


class RegisterBody(Strict):
    eventId: Id
    name: Name
    email: Email


class ResetBody(Strict):
    world: str
    seed: SeedName = "default"
    breaks: list[BreakName] = []


class WorldBody(Strict):
    world: str


class EventFields(Strict):
    title: Annotated[str, StringConstraints(min_length=1, max_length=200)] | None = None
    summary: Annotated[str, StringConstraints(max_length=2000)] | None = None
    seatsLeft: Annotated[int, Field(ge=0)] | None = None


class CancelOp(Strict):
    world: str
    op: Literal["cancel_registration"]
    registrationId: Id


class AddOp(Strict):
    world: str
    op: Literal["add_registration"]
    eventId: Id


class UpdateOp(Strict):
    world: str
    op: Literal["update_event"]
    eventId: Id
    fields: EventFields


ChangeBody = TypeAdapter(Annotated[CancelOp | AddOp | UpdateOp, Field(discriminator="op")])


def _invalid(err: ValidationError) -> ApiError:
    # Field paths only: never echo values or pydantic internals.
    fields = sorted({".".join(str(p) for p in e["loc"]) or "body" for e in err.errors()})
    return ApiError(400, "INVALID_ARGUMENT", "輸入資料不正確：" + "、".join(fields[:5]))


async def _body(request: Request, model: Any) -> Any:
    try:
        raw = json.loads(await request.body() or b"null")
    except ValueError:
        raise ApiError(400, "INVALID_ARGUMENT", "請求內容必須是 JSON。") from None
    if not isinstance(raw, dict):
        raise ApiError(400, "INVALID_ARGUMENT", "請求內容必須是 JSON 物件。")
    try:
        if isinstance(model, TypeAdapter):
            return model.validate_python(raw)
        return model.model_validate(raw)
    except ValidationError as err:
        raise _invalid(err) from None


# --- responses -------------------------------------------------------------------------
def error_response(err: ApiError) -> JSONResponse:
    body = {"status": "error", "code": err.code, "message": err.message, "retryable": err.retryable, "data": None}
    return JSONResponse(body, status_code=err.status)


def canonical_json(data: Any) -> Response:
    text = json.dumps(data, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return Response(text, media_type="application/json")


class SecurityHeaders:
    """Defence in depth for the injected event text: no inline script may ever run."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = MutableHeaders(scope=message)
                headers["Content-Security-Policy"] = CSP
                headers["X-Content-Type-Options"] = "nosniff"
                headers["Referrer-Policy"] = "no-referrer"
                headers.setdefault("Cache-Control", "no-store")
            await send(message)

        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        try:
            await self.app(scope, receive, send_with_headers)
        except ClientDisconnect:
            # The client hung up before its body arrived (a runner stopped by Ctrl-C): there is
            # no one to answer, and it is not an error of the site worth a traceback.
            return


def source_revision() -> str:
    """First 12 hex chars of a sha256 over the site's sources: stable across restarts."""
    digest = hashlib.sha256()
    files = [*SITE_DIR.glob("*.py"), *STATIC_DIR.rglob("*")]
    for path in sorted(p for p in files if p.is_file() and "__pycache__" not in p.parts):
        digest.update(path.relative_to(SITE_DIR).as_posix().encode() + b"\0")
        digest.update(path.read_bytes() + b"\0")
    return digest.hexdigest()[:12]


# --- the app ---------------------------------------------------------------------------
def create_app(test_mode: bool, data_dir: Path, revision: str | None = None) -> Starlette:
    store = Store(Path(data_dir))
    rev = revision or os.environ.get("WEBMCP_SITE_REVISION") or source_revision()

    def world_of(request: Request) -> World:
        name = request.cookies.get(WORLD_COOKIE) if test_mode else None
        return store.world(name or MAIN_WORLD)

    def session_of(request: Request, world: World) -> Session | None:
        return world.find_session(request.cookies.get(SESSION_COOKIE))

    def ensure_session(request: Request, world: World) -> tuple[Session, str | None]:
        """An absent or unknown session gets a new one (and a token to set as cookie);
        an expired one stays expired: only a fresh browser context starts over."""
        session = session_of(request, world)
        if session is None:
            token, session = world.new_session()
            return session, token
        return session, None

    def with_cookie(response: Response, token: str | None) -> Response:
        if token:
            response.set_cookie(SESSION_COOKIE, token, httponly=True, samesite="lax", path="/")
        return response

    def reader(request: Request) -> tuple[World, Session]:
        world = world_of(request)
        session = session_of(request, world)
        if session is None or session.expired:
            raise ApiError(401, "SESSION_EXPIRED", "工作階段已過期，請重新開始。")
        return world, session

    def writer(request: Request) -> World:
        world = world_of(request)
        session = session_of(request, world)
        if session is None:
            raise ApiError(401, "SESSION_EXPIRED", "工作階段已過期，請重新開始。")
        sent = request.headers.get("x-csrf-token", "")
        if not secrets.compare_digest(sent.encode(), session.csrf.encode()):
            raise ApiError(403, "FORBIDDEN", "請求缺少有效的 CSRF 權杖，已拒絕。")
        if session.expired and not (test_mode and world.has_break("writes_after_expiry")):
            raise ApiError(401, "SESSION_EXPIRED", "工作階段已過期，請重新開始。")
        return world

    # pages
    async def home(request: Request) -> Response:
        return RedirectResponse("/events", status_code=302)

    async def page(request: Request) -> Response:
        _, token = ensure_session(request, world_of(request))
        return with_cookie(FileResponse(STATIC_DIR / "index.html", media_type="text/html"), token)

    # API
    async def version(request: Request) -> Response:
        return JSONResponse({"name": SITE_NAME, "revision": rev})

    async def session_info(request: Request) -> Response:
        world = world_of(request)
        session, token = ensure_session(request, world)
        body = {
            "user": dict(DEMO_USER),
            "csrfToken": session.csrf,
            "expired": session.expired,
            "breaks": world.breaks() if test_mode else [],
            "testMode": test_mode,
        }
        return with_cookie(JSONResponse(body), token)

    async def restart_session(request: Request) -> Response:
        """The human's 重新開始 after an expiry: a new session replaces the old one.
        Replacing a known session needs its CSRF token, like every POST; with no
        known session this is what GET /api/session would do anyway."""
        world = world_of(request)
        old = session_of(request, world)
        sent = request.headers.get("x-csrf-token", "")
        if old is not None and not secrets.compare_digest(sent.encode(), old.csrf.encode()):
            raise ApiError(403, "FORBIDDEN", "請求缺少有效的 CSRF 權杖，已拒絕。")
        token, session = world.new_session()
        body = {
            "user": dict(DEMO_USER),
            "csrfToken": session.csrf,
            "expired": False,
            "breaks": world.breaks() if test_mode else [],
            "testMode": test_mode,
        }
        return with_cookie(JSONResponse(body), token)

    async def search(request: Request) -> Response:
        params = dict(request.query_params)
        unknown = set(params) - {"query", "city", "price", "level"}
        if unknown:
            raise ApiError(400, "INVALID_ARGUMENT", "不支援的搜尋參數：" + "、".join(sorted(unknown)))
        filters = {}
        for field, allowed in SEARCH_ENUMS.items():
            value = params.get(field, "")
            if value and value not in allowed:
                raise ApiError(400, "INVALID_ARGUMENT", f"{field} 的值不在允許的選項中。")
            if value:
                filters[field] = value
        query = params.get("query", "").strip() or None
        if query and len(query) > 100:
            raise ApiError(400, "INVALID_ARGUMENT", "關鍵字太長（最多 100 字）。")
        events = world_of(request).search(query, filters)
        return JSONResponse({"events": events, "count": len(events)})

    async def event_detail(request: Request) -> Response:
        world = world_of(request)
        event = world.get_event(request.path_params["event_id"])
        session = session_of(request, world)
        # `saved` is the user's own data: unknown (null) without a live session.
        saved = None if session is None or session.expired else event["id"] in world.saved_event_ids()
        return JSONResponse({"event": event | {"saved": saved}})

    async def saved_list(request: Request) -> Response:
        world, _ = reader(request)
        return JSONResponse({"eventIds": world.saved_event_ids()})

    async def save(request: Request) -> Response:
        world = writer(request)
        body = await _body(request, SaveBody)
        return JSONResponse(world.save(body.eventId))

    async def registrations(request: Request) -> Response:
        world, _ = reader(request)
        return JSONResponse({"registrations": world.active_registrations()})

    async def register(request: Request) -> Response:
        world = writer(request)
        body = await _body(request, RegisterBody)
        key = request.headers.get("idempotency-key", "")
        if not IDEMPOTENCY_KEY.match(key):
            raise ApiError(400, "INVALID_ARGUMENT", "缺少或不正確的 Idempotency-Key。")
        result = world.register(body.eventId, body.name, body.email, key)
        return JSONResponse(result, status_code=200 if result["replayed"] else 201)

    async def cancel(request: Request) -> Response:
        world = writer(request)
        return JSONResponse(world.cancel(request.path_params["registration_id"]))

    # test-control API
    async def test_reset(request: Request) -> Response:
        body = await _body(request, ResetBody)
        world = store.reset(body.world, body.seed, sorted(set(body.breaks)))
        return JSONResponse({"world": world.name, "seed": body.seed, "breaks": world.breaks()})

    async def test_state(request: Request) -> Response:
        name = request.query_params.get("world")
        if not name:
            raise ApiError(400, "INVALID_ARGUMENT", "缺少 world 參數。")
        return canonical_json(store.world(name).state())

    async def test_expire(request: Request) -> Response:
        body = await _body(request, WorldBody)
        return JSONResponse({"world": body.world, "expired": store.world(body.world).expire_sessions()})

    async def test_change(request: Request) -> Response:
        op = await _body(request, ChangeBody)
        world = store.world(op.world)
        if isinstance(op, CancelOp):
            return JSONResponse(world.cancel(op.registrationId, allow_breaks=False))
        if isinstance(op, AddOp):
            return JSONResponse({"registrationId": world.add_registration(op.eventId)})
        fields = op.fields.model_dump(exclude_none=True)
        return JSONResponse({"event": world.update_event(op.eventId, fields)})

    # errors: the contract shape, never a traceback
    async def on_api_error(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, ApiError)
        return error_response(exc)

    async def on_http_error(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, HTTPException)
        if exc.status_code == 404:
            return error_response(ApiError(404, "NOT_FOUND", "找不到這個網址。"))
        if exc.status_code == 405:
            return error_response(ApiError(405, "INVALID_ARGUMENT", "不支援這個 HTTP 方法。"))
        return error_response(ApiError(exc.status_code, "INVALID_ARGUMENT", "請求不正確。"))

    async def on_crash(request: Request, exc: Exception) -> Response:
        return error_response(ApiError(500, "TEMPORARILY_UNAVAILABLE", UNAVAILABLE, retryable=True))

    routes = [
        Route("/", home),
        Route("/events", page),
        Route("/events/{event_id}", page),
        Route("/events/{event_id}/register", page),
        Route("/registrations", page),
        Mount("/static", StaticFiles(directory=STATIC_DIR), name="static"),
        Route("/api/version", version),
        Route("/api/session", session_info, methods=["GET"]),
        Route("/api/session/restart", restart_session, methods=["POST"]),
        Route("/api/events", search),
        Route("/api/events/{event_id}", event_detail),
        Route("/api/saved", saved_list, methods=["GET"]),
        Route("/api/saved", save, methods=["POST"]),
        Route("/api/registrations", registrations, methods=["GET"]),
        Route("/api/registrations", register, methods=["POST"]),
        Route("/api/registrations/{registration_id}/cancel", cancel, methods=["POST"]),
    ]
    if test_mode:  # outside test mode these paths are simply unknown: 404
        routes += [
            Route("/__test__/reset", test_reset, methods=["POST"]),
            Route("/__test__/state", test_state, methods=["GET"]),
            Route("/__test__/expire-session", test_expire, methods=["POST"]),
            Route("/__test__/change", test_change, methods=["POST"]),
        ]
    app = Starlette(
        routes=routes,
        exception_handlers={ApiError: on_api_error, HTTPException: on_http_error, Exception: on_crash},
    )
    app.add_middleware(SecurityHeaders)
    app.state.store = store
    app.state.revision = rev
    app.state.test_mode = test_mode
    return app
