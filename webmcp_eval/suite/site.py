"""The site under test as the runner sees it: a base URL plus optional site hooks.

The embedded demo site gives every hook (reset a world to a seed, dump its
state, expire its session, change data). A deployed site may give none: then
the checks that need a hook are ``not_run``, never ``passed``. A small YAML
site config (``--site-config``) names the hooks a deployment has; the same
mapping can sit unchanged inside a suite's own config file.

Routes resolve under the base URL's path, as static hosting expects: with the
base ``http://host/demo/`` the routes ``/``, ``./`` and ``""`` are the base
itself, and ``/cart.html``, ``./cart.html`` and ``cart.html`` all mean
``http://host/demo/cart.html``. Hook paths follow the same rule. A base that
names a file (``http://host/x/index.html``, a ``file:`` URL) is that document:
``/`` is the base as written, query included, and a hash route (``#/hotel/x``)
opens it at that hash (``resolve_route``).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Literal
from urllib.parse import unquote, urljoin, urlsplit, urlunsplit

import httpx
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)

from webmcp_eval.data_file import (
    FileProblem,
    Renames,
    deepest_line,
    load_yaml,
    rename_keys,
    renamed_in_model,
    say_renamed,
)
from webmcp_eval.errors import InvalidInput
from webmcp_eval.matchers import route_key as route_key  # its readers import it from here
from webmcp_eval.trace import NotRunKind


class Hooks(BaseModel):
    """The site hooks (``hooks:``): the site's test-only endpoints, which the runner calls itself (never the
    agent, never through the proxy). Not the trial hooks (webmcp_eval/play/run/settings.py ``TrialHook``), which
    change a trial from inside the runner."""

    model_config = ConfigDict(extra="forbid")
    reset: str | None = Field(default=None, description="POST {world, seed, breaks}")
    state: str | None = Field(default=None, description="GET ?world=W -> canonical JSON")
    expire_session: str | None = Field(default=None, description="POST {world}")
    change: str | None = Field(default=None, description="POST {world, op, ...}")
    state_js: str | None = Field(
        default=None,
        description="a JavaScript expression evaluated in the page before and after the steps: "
        "the state of a site that keeps it in the page (localStorage, a JS object)",
    )

    @model_validator(mode="after")
    def _one_state(self) -> Hooks:
        if self.state and self.state_js:
            raise ValueError("give the state either by HTTP (state) or in the page (state_js), not both")
        return self


# keys of a site config renamed since (README.md, "Renamed"): the old one reads as the new for one release
RENAMED_KEYS: Renames = {("mutation_methods",): "write_methods"}


class SiteConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")
    base_url: str = ""
    # HTTP credentials taken out of a base URL's user:password@ (take_credentials): never stored, never shown
    _credentials: tuple[str, str] | None = PrivateAttr(default=None)
    world_cookie: str | None = Field(default=None, description="cookie that picks an isolated world")
    version_path: str | None = Field(default=None, description="GET -> JSON with the site's revision")
    hooks: Hooks = Field(default_factory=Hooks)
    write_methods: list[str] = Field(
        default_factory=lambda: ["POST", "PUT", "PATCH", "DELETE"], description="request methods counted as writes"
    )
    ignore_paths: list[str] = Field(default_factory=list, description="requests never counted as writes")
    block_other_hosts: bool = Field(
        default=False,
        description="answer requests to other hosts (not in allow_hosts) with 403 instead of passing them on; "
        "either way every such request is recorded in the trace",
    )
    allow_hosts: list[str] = Field(
        default_factory=list, description="with block_other_hosts: other hosts the browser may still reach"
    )
    outbound: int | None = Field(
        default=None,
        ge=0,
        description="every case asserts this many requests to other hosts unless it says otherwise "
        "(none: only cases that ask assert it)",
    )
    settle_ms: int = Field(
        default=100,
        ge=0,
        le=10_000,
        description="the longest a step waits for a page whose document keeps changing (settle: evidence), "
        "or how long its tools and requests must stay quiet (settle: window)",
    )
    app_tools: list[str] = Field(
        default_factory=list,
        description="tools the site registers once for all its routes (an app's own tools): the check that no tool "
        "outlives its route leaves them out",
    )
    settle: Literal["evidence", "window"] = Field(
        default="evidence",
        description="evidence: a step is settled once the page has nothing under way (requests, registrations, "
        "changes of the document); window: once its tools and requests were quiet for settle_ms, for a site that "
        "registers tools after bare timers",
    )

    @model_validator(mode="before")
    @classmethod
    def _renamed(cls, data: object) -> Any:
        return renamed_in_model(data, RENAMED_KEYS)  # the file's reader says so at its line

    @field_validator("ignore_paths")
    @classmethod
    def _ignore_paths_leave_the_site_counted(cls, value: list[str], info: ValidationInfo) -> list[str]:
        for i, prefix in enumerate(value):
            problem = ignore_path_problem(prefix, info.data.get("base_url") or "")
            if problem:
                raise ValueError(f"[{i}] {prefix!r}: {problem}")
        return value

    def take_credentials(self) -> None:
        """Credentials in the base URL move out of it: the browser and the hooks send them (HTTP
        authentication), and every stored or shown URL is the bare one."""
        self.base_url, found = split_credentials(self.base_url)
        if found:
            self._credentials = found

    @property
    def credentials(self) -> tuple[str, str] | None:
        return self._credentials

    def url_for(self, route: str) -> str:
        return resolve_route(self.base_url, route)


def ignore_path_problem(prefix: str, base_url: str) -> str | None:
    """Why an ``ignore_paths`` entry would hide the site's own writes (or match nothing), or None.

    An entry is a prefix of the request path; one that every path of the site starts with (``/``, or
    the base URL's own path) would leave no write counted, so a case that forbids saving passes."""
    if not prefix.startswith("/"):
        return "a request path prefix starts with / (e.g. /__test__/)"
    if any(c in prefix for c in "*?["):
        return "a prefix, not a glob: write the start of the paths (e.g. /api/analytics/)"
    base_path = urlsplit(base_url).path or "/"
    if base_path.startswith(prefix):
        return f"every request of the site starts with it (the base URL's path is {base_path}): no write would count"
    return None


def resolve_route(base_url: str, route: str) -> str:
    """A case route as a URL under the base URL's path (see the module doc); a full URL stays as it is.

    A base whose last segment names a file (``index.html``) is that document, its folder the base path; a
    route that names the base itself (``/``, ``./``, ``""``) keeps the base as the user wrote it (query and
    hash), and a route of only a query or a hash (``?x``, ``#/hotel/x``, also ``/#/hotel/x``) applies it to the
    base document, as a browser follows such a link. A ``file:`` base resolves the same way."""
    if "://" in route:
        return route
    parts = urlsplit(base_url)
    rest = route[2:] if route.startswith("./") else route[1:] if route.startswith("/") else route
    if rest in ("", "."):
        return base_url
    if rest.startswith("#"):
        return urlunsplit(parts._replace(fragment="")) + rest
    if rest.startswith("?"):
        return urlunsplit(parts._replace(query=rest[1:].split("#")[0], fragment=rest.partition("#")[2]))
    folder = parts.path if parts.path.endswith("/") or not _names_a_file(parts.path) else parts.path.rsplit("/", 1)[0]
    base_dir = folder if folder.endswith("/") else folder + "/"
    return urljoin(f"{parts.scheme}://{parts.netloc}{base_dir}", rest)


def _names_a_file(path: str) -> bool:
    """A last path segment with a dot in it (``index.html``, ``app.php``) is a document, not a folder."""
    return "." in path.rsplit("/", 1)[-1]


def demo_site_config(base_url: str) -> SiteConfig:
    """The embedded demo site in test mode: every hook there."""
    return SiteConfig(
        base_url=base_url,
        world_cookie="wmcp_world",
        version_path="/api/version",
        block_other_hosts=True,  # nothing of the demo leaves the machine
        hooks=Hooks(
            reset="/__test__/reset",
            state="/__test__/state",
            expire_session="/__test__/expire-session",
            change="/__test__/change",
        ),
        ignore_paths=["/__test__/"],
    )


class SiteConfigError(InvalidInput, ValueError):
    """A site config that cannot be used; the message is one line naming the file (and line, field)."""


def load_site_config(path: Path, base_url: str | None) -> SiteConfig:
    """The site config at path; SiteConfigError (one line: file, line, field, what to do) when it is unusable."""
    if path.is_dir():
        raise SiteConfigError(f"{path}: is a directory; --site-config takes a YAML file")
    try:
        data, lines = load_yaml(path)
    except FileProblem as err:
        raise SiteConfigError(f"{err.at(path)} (--site-config takes a YAML file)") from None
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise SiteConfigError(f"{path}:1: a site config must be a YAML mapping (key: value), not {type(data).__name__}")
    say_renamed(str(path), rename_keys(data, RENAMED_KEYS, lines))
    try:
        config = SiteConfig.model_validate(data)
    except ValidationError as err:
        first = err.errors()[0]
        field = ".".join(str(p) for p in first["loc"])
        line = deepest_line(lines, first["loc"])
        more = f" (and {err.error_count() - 1} more)" if err.error_count() > 1 else ""
        message = "unknown key" if first["type"] == "extra_forbidden" else first["msg"]
        keys = "docs/running.md's site config example lists the keys"
        raise SiteConfigError(f"{path}:{line}: {field}: {message}{more}; {keys}") from None
    if base_url:
        config.base_url = base_url
        for prefix in config.ignore_paths:  # checked again under the base URL the run uses
            problem = ignore_path_problem(prefix, base_url)
            if problem:
                raise SiteConfigError(f"{path}: ignore_paths {prefix!r} under --base-url {base_url}: {problem}")
    return config


class HookMissing(Exception):
    """The site has no hook for this; the checks that need it are not_run."""


class SiteUnavailable(Exception):
    """A hook of the site could not be reached or failed: the trial cannot run (not_run).

    ``kind`` is the trace's not_run kind: "infrastructure" when the site was unreachable or answered
    5xx (worth another attempt), "setup" when it answered 4xx or nonsense (it will again).
    """

    def __init__(self, message: str, kind: NotRunKind = "infrastructure") -> None:
        super().__init__(message)
        self.kind = kind


def _hook_failure(hook: str, url: str, err: httpx.HTTPError) -> SiteUnavailable:
    kind: NotRunKind = "infrastructure"
    if isinstance(err, httpx.HTTPStatusError):
        what = f"answered HTTP {err.response.status_code}"
        kind = "infrastructure" if err.response.status_code >= 500 else "setup"
    else:
        what = f"could not be reached ({type(err).__name__}: {str(err).strip() or 'no answer'})"
    message = f"setup: the site's {hook} hook at {url} {what}; check that the site is running there"
    return SiteUnavailable(message, kind)


def shown_url(url: str) -> str:
    """url as an error message may show it: without ``user:password@`` (read as text: url may not parse)."""
    return re.sub(r"//[^/@]*@", "//", url, count=1)


def page_url_problem(url: str) -> str | None:
    """Why url cannot be a page to open (None when it can): an http(s) URL with a host and a valid port, or a
    ``file:`` URL with a path; no control character or space anywhere (a CR would split a request line)."""
    if any(ord(c) < 0x21 or ord(c) == 0x7F for c in url):
        return "it holds a space or a control character (percent-encode it)"
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises ValueError when the port is out of range
    except ValueError as err:
        return f"not a usable URL ({err})"
    if parts.scheme == "file" and parts.path:
        return None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return "not an http(s) or file URL (e.g. http://127.0.0.1:8000/demo/)"
    return None


def route_problem(base_url: str, route: str) -> str | None:
    """Why route is not a page to open beside base_url (None when it is): it resolves to an http(s) page when
    the base is one (another site's page is a page too: the routes of ``tools`` and the audit may name full
    URLs), a ``file:`` page when the base is a file; never a file of the machine under a site, a ``data:`` or a
    ``javascript:`` URL."""
    resolved = resolve_route(base_url, route)
    problem = page_url_problem(resolved)
    if problem:
        return problem
    web = ("http", "https")
    base, there = urlsplit(base_url).scheme, urlsplit(resolved).scheme
    if (base in web) != (there in web):
        return f"{resolved} is not a page of the {'web' if base in web else 'disk'} as {shown_url(base_url)} is"
    return None


def split_credentials(url: str) -> tuple[str, tuple[str, str] | None]:
    """(the URL without ``user:password@``, the credentials): a password never travels inside a stored URL."""
    parts = urlsplit(url)
    if "@" not in parts.netloc:
        return url, None
    host = parts.netloc.rsplit("@", 1)[1]
    return urlunsplit(parts._replace(netloc=host)), (unquote(parts.username or ""), unquote(parts.password or ""))


class SiteClient:
    """Calls the site hooks directly (not through the proxy: it is the runner's own traffic)."""

    def __init__(self, config: SiteConfig):
        self.config = config
        self.http = httpx.AsyncClient(timeout=15, trust_env=False, auth=config.credentials)

    async def aclose(self) -> None:
        await self.http.aclose()

    def has(self, hook: str) -> bool:
        """An HTTP hook of the site (state_js is read in the page by the trial, not here)."""
        return getattr(self.config.hooks, hook) is not None

    async def _post(self, hook: str, body: dict[str, Any]) -> Any:
        path = getattr(self.config.hooks, hook)
        if path is None:
            raise HookMissing(hook)
        try:
            response = await self.http.post(self._url(path), json=body)
            response.raise_for_status()
        except httpx.HTTPError as err:
            raise _hook_failure(hook, self._url(path), err) from None
        return response.json() if response.content else None

    def _url(self, path: str) -> str:
        return self.config.url_for(path)

    async def reset(self, world: str, seed: str, breaks: list[str]) -> None:
        await self._post("reset", {"world": world, "seed": seed, "breaks": breaks})

    async def state(self, world: str) -> Any:
        if self.config.hooks.state is None:
            raise HookMissing("state")
        try:
            response = await self.http.get(self._url(self.config.hooks.state), params={"world": world})
            response.raise_for_status()
        except httpx.HTTPError as err:
            raise _hook_failure("state", self._url(self.config.hooks.state), err) from None
        try:
            return response.json()
        except ValueError:
            url = self._url(self.config.hooks.state)
            raise SiteUnavailable(
                f"setup: the site's state hook at {url} answered something not JSON", "setup"
            ) from None

    async def expire_session(self, world: str) -> None:
        await self._post("expire_session", {"world": world})

    async def change(self, world: str, op: str, params: dict[str, Any]) -> Any:
        return await self._post("change", {"world": world, "op": op, **params})

    async def version(self) -> dict[str, Any]:
        if not self.config.version_path:
            return {}
        try:
            response = await self.http.get(self.config.url_for(self.config.version_path))
            return response.json() if response.status_code == 200 else {}
        except (httpx.HTTPError, ValueError):
            return {}
