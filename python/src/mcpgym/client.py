"""Clients for mcpgym's HTTP control plane: start episodes, call tools, read rewards.

`Client` and `Episode` are synchronous (over `httpx.Client`); `AsyncClient` and `AsyncEpisode`
are the same API with `async def` (over `httpx.AsyncClient`). Every call is one request to the
control plane; a failed request raises `McpgymError` carrying the server's own sentence.

A tool call carries an idempotency key of its own (`Idempotency-Key`), and a call whose
connection drops (or whose answer does not come within `timeout`) is sent again with the same
key: the server answers a key it has seen with its first answer, so a step is played once
however often the network fails. Each try waits for its own answer on its own connection (a
connection that failed or timed out is dropped, never reused), so a late answer can never be
taken for another request's. Reads (`GET`) and `DELETE`s, which change nothing when repeated,
are sent again the same way, unless the connection is refused (no server is there).
Starting an episode (`POST /episodes`) is not: a start whose connection drops raises
`McpgymError`, and the episode it may have started is closed by the server's idle reaper.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any, Generic, TypeVar

import httpx

from mcpgym._closing import Closing

__all__ = [
    "AsyncClient",
    "AsyncEpisode",
    "Client",
    "Episode",
    "McpgymError",
    "Step",
]

# Most episodes started at once by the synchronous `start_many` (each start is one request).
_START_THREADS = 16

# Times a tool call is sent when its connection drops, and the first pause between tries
# (doubled each time). Every try carries the call's idempotency key.
_CALL_ATTEMPTS = 8
_CALL_BACKOFF_S = 0.05
# Methods sent again, like tool calls, when their connection drops: repeating them changes
# nothing (a second DELETE of an episode answers 404, which `close` takes as closed).
_REPEATABLE = frozenset({"GET", "DELETE"})


def _keyed(headers: Mapping[str, str]) -> dict[str, str]:
    """`headers` with a fresh idempotency key for one tool call."""
    return {**headers, "Idempotency-Key": uuid.uuid4().hex}


class McpgymError(Exception):
    """A request the server refused or could not answer.

    `str(error)` is the server's sentence saying what was wrong; `status` is the HTTP status,
    or None when the server could not be reached or answered something unreadable.
    """

    status: int | None

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


@dataclass(frozen=True)
class Step:
    """One tool call: the observation, what it paid, and whether the episode is over."""

    episode: str
    """The episode id."""
    turn: int
    """Tool calls made so far, this one included."""
    content: list[dict[str, Any]]
    """The observation as MCP content blocks (`{"type": "text", "text"}`, `{"type": "image",
    "data", "mimeType"}`)."""
    structured: Any | None
    """The observation's structure, when the tool has an output schema."""
    is_error: bool
    """Whether the call was refused (a bad argument, an illegal move, a finished episode)."""
    reward: float
    """What this step paid."""
    reward_components: dict[str, float] = field(default_factory=dict)
    """This step's reward by component."""
    return_: float = 0.0
    """The sum of every step's reward so far (`return` on the wire)."""
    done: bool = False
    """Whether the episode is over."""
    truncated: bool = False
    """Whether it ended at the turn limit."""
    aborted: bool = False
    """Whether it ended because the environment failed (not the agent): drop it from training."""

    @property
    def text(self) -> str:
        """The observation's text blocks, joined by newlines."""
        return "\n".join(
            str(block.get("text", "")) for block in self.content if block.get("type") == "text"
        )

    @property
    def images(self) -> list[tuple[str, str]]:
        """The observation's images as (base64 data, mime type)."""
        return [
            (str(block.get("data", "")), str(block.get("mimeType", "")))
            for block in self.content
            if block.get("type") == "image"
        ]

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Step:
        """Reads the step record `POST /episodes/{id}/call` answers."""
        components = data.get("reward_components") or {}
        return cls(
            episode=str(data.get("episode", "")),
            turn=int(data.get("turn", 0)),
            content=[dict(block) for block in data.get("content") or []],
            structured=data.get("structured"),
            is_error=bool(data.get("is_error", False)),
            reward=float(data.get("reward", 0.0)),
            reward_components={
                str(name): float(value)
                for name, value in components.items()
                if isinstance(value, int | float)
            },
            return_=float(data.get("return", 0.0)),
            done=bool(data.get("done", False)),
            truncated=bool(data.get("truncated", False)),
            aborted=bool(data.get("aborted", False)),
        )


def _headers(token: str | None) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"} if token else {}


def _episode_request(
    env: str | None,
    task: str | None,
    seed: int | None,
    split: str | None,
    options: Mapping[str, Any] | None,
    levels: Sequence[str] | None = None,
) -> dict[str, Any]:
    """The `POST /episodes` body, leaving out what the server should choose."""
    body: dict[str, Any] = {}
    for key, value in (("env", env), ("task", task), ("seed", seed), ("split", split)):
        if value is not None:
            body[key] = value
    if levels is not None:
        body["levels"] = list(levels)
    if options is not None:
        body["options"] = dict(options)
    return body


def _call_request(
    tool: str, arguments: Mapping[str, Any] | None, kwargs: Mapping[str, Any]
) -> dict[str, Any]:
    merged = dict(arguments or {})
    merged.update(kwargs)
    return {"tool": tool, "arguments": merged}


def _seeds(n: int, seeds: Sequence[int] | None) -> list[int | None]:
    if n < 0:
        raise ValueError(f"cannot start {n} episodes; pass n >= 0")
    if seeds is None:
        return [None] * n
    if len(seeds) != n:
        raise ValueError(f"got {len(seeds)} seeds for {n} episodes; pass one seed per episode")
    return list(seeds)


def _check(response: httpx.Response) -> httpx.Response:
    """Raises `McpgymError` with the server's sentence unless the response succeeded."""
    if response.is_success:
        return response
    try:
        body = response.json()
        message = body["error"] if isinstance(body, dict) and "error" in body else response.text
    except ValueError:
        message = response.text
    message = str(message).strip() or f"HTTP {response.status_code} from {response.request.url}"
    raise McpgymError(message, response.status_code)


def _json(response: httpx.Response) -> Any:
    try:
        return _check(response).json()
    except ValueError as error:
        raise McpgymError(
            f"the server answered {response.request.url} with something that is not JSON: {error}"
        ) from error


def _json_lines(response: httpx.Response) -> list[dict[str, Any]]:
    records: list[dict[str, Any]] = []
    for line in _check(response).text.splitlines():
        if line.strip():
            try:
                records.append(json.loads(line))
            except ValueError as error:
                raise McpgymError(
                    f"the trajectory at {response.request.url} has a line that is not JSON: {error}"
                ) from error
    return records


def _unreachable(
    base_url: str, error: httpx.TransportError, diagnose: Callable[[], str] | None = None
) -> McpgymError:
    known = diagnose() if diagnose is not None else ""
    return McpgymError(
        f"cannot reach the mcpgym server at {base_url} ({error!r})"
        + (known or "; start one with `mcpgym serve --http 127.0.0.1:8000` or check the URL")
    )


_ClientT = TypeVar("_ClientT", "Client", "AsyncClient")
_EpisodeT = TypeVar("_EpisodeT", bound="_EpisodeBase[Any]")


class _EpisodeBase(Generic[_ClientT]):
    """What `Episode` and `AsyncEpisode` share: the server's description of one episode."""

    id: str
    """The episode id."""
    env: str
    """Its environment."""
    task: str
    """Its task id."""
    seed: int
    """Its seed."""
    mcp_url: str
    """The URL that serves MCP for exactly this episode."""
    client: _ClientT
    """The client it was started with."""

    def __init__(
        self, client: _ClientT, id: str, env: str, task: str, seed: int, mcp_url: str
    ) -> None:
        """Binds to an episode the server already started (see `Client.start`)."""
        self.client = client
        self.id = id
        self.env = env
        self.task = task
        self.seed = seed
        self.mcp_url = mcp_url
        self._closed = False

    @property
    def _routing(self) -> dict[str, str]:
        """The header naming the episode, which a proxy in front of several replicas routes
        on as it does on the path (the server holding the episode is the one its id names)."""
        return {"Mcpgym-Episode": self.id}

    @classmethod
    def _from_json(cls: type[_EpisodeT], client: Any, data: Mapping[str, Any]) -> _EpisodeT:
        """The episode `POST /episodes` answered with, played through `client`."""
        return cls(
            client,
            str(data["id"]),
            str(data["env"]),
            str(data["task"]),
            int(data["seed"]),
            client.base_url + str(data.get("mcp_url", f"/episodes/{data['id']}/mcp")),
        )

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(id={self.id!r}, env={self.env!r}, task={self.task!r}, "
            f"seed={self.seed})"
        )


class Client(Closing):
    """A synchronous client for one mcpgym server's control plane."""

    def __init__(self, base_url: str, token: str | None = None, timeout: float = 300.0) -> None:
        """Connects to `base_url` (e.g. `http://127.0.0.1:8000`), sending `token` as a bearer
        token when given; `timeout` bounds each request in seconds."""
        self.base_url = base_url.rstrip("/")
        self.token = token
        self._http = httpx.Client(base_url=self.base_url, headers=_headers(token), timeout=timeout)
        # Adds to "cannot reach" what is known of the server (the `Server` helper's exit).
        self._diagnose: Callable[[], str] | None = None

    def _request(
        self, method: str, path: str, *, call: bool = False, **kwargs: Any
    ) -> httpx.Response:
        """Sends a request; a tool call (`call`, its key in the headers) is sent again on any
        transport error, reads and closes too unless the connection is refused outright."""
        attempts = _CALL_ATTEMPTS if call or method in _REPEATABLE else 1
        for attempt in range(attempts):
            try:
                return self._http.request(method, path, **kwargs)
            except httpx.TransportError as error:
                # Refused outright: no server there, and a read or close cannot wait for one
                # (a tool call does wait, for a server restarting on its address).
                refused = isinstance(error, httpx.ConnectError) and not call
                if attempt + 1 == attempts or refused:
                    raise _unreachable(self.base_url, error, self._diagnose) from error
                time.sleep(_CALL_BACKOFF_S * 2**attempt)
        raise AssertionError("unreachable: the last attempt returns or raises")

    def _send_call(
        self, path: str, headers: Mapping[str, str], body: dict[str, Any]
    ) -> httpx.Response:
        """POSTs a tool call, sending it again with the same key when the connection drops."""
        return self._request("POST", path, call=True, headers=_keyed(headers), json=body)

    def start(
        self,
        env: str | None = None,
        *,
        task: str | None = None,
        seed: int | None = None,
        split: str | None = None,
        options: Mapping[str, Any] | None = None,
        levels: Sequence[str] | None = None,
    ) -> Episode:
        """Starts an episode. `env` may be left out when the server hosts one environment; a
        task is drawn from `split` with `seed` unless `task` names one, of `levels` only
        (`["hard"]`) when they are given."""
        body = _episode_request(env, task, seed, split, options, levels)
        return Episode._from_json(self, _json(self._request("POST", "/episodes", json=body)))

    def start_many(
        self,
        n: int,
        env: str | None = None,
        *,
        seeds: Sequence[int] | None = None,
        task: str | None = None,
        split: str | None = None,
        options: Mapping[str, Any] | None = None,
        levels: Sequence[str] | None = None,
    ) -> list[Episode]:
        """Starts `n` episodes at once (one seed each when `seeds` is given). If any fails to
        start, the others are closed and the first error is raised."""
        seed_list = _seeds(n, seeds)
        if n == 0:
            return []

        def start_one(seed: int | None) -> Episode:
            return self.start(
                env, task=task, seed=seed, split=split, options=options, levels=levels
            )

        with ThreadPoolExecutor(max_workers=min(n, _START_THREADS)) as pool:
            futures = [pool.submit(start_one, seed) for seed in seed_list]
        episodes: list[Episode] = []
        failure: BaseException | None = None
        for future in futures:
            error = future.exception()
            if error is None:
                episodes.append(future.result())
            elif failure is None:
                failure = error
        if failure is not None:
            for episode in episodes:
                with contextlib.suppress(McpgymError):
                    episode.close()
            raise failure
        return episodes

    def tasks(self, env: str | None = None, split: str = "train") -> list[str]:
        """The task ids of `env`'s `split` (`train` or `test`)."""
        params = {"split": split} | ({"env": env} if env is not None else {})
        body = _json(self._request("GET", "/tasks", params=params))
        return [str(task) for task in body["tasks"]]

    def tools(self, env: str | None = None) -> list[dict[str, Any]]:
        """`env`'s tools as MCP lists them (`name`, `description`, `inputSchema`, ...)."""
        params = {"env": env} if env is not None else {}
        body = _json(self._request("GET", "/tools", params=params))
        return [dict(tool) for tool in body["tools"]]

    def metrics(self) -> str:
        """The server's Prometheus metrics, as text."""
        return _check(self._request("GET", "/metrics")).text

    def close(self) -> None:
        """Closes the connections (episodes stay open on the server)."""
        self._http.close()


class Episode(Closing, _EpisodeBase["Client"]):
    """One episode on the server, played through its client."""

    def prompt(self) -> str:
        """What the agent is asked: the environment's instructions and the task."""
        body = _json(
            self.client._request("GET", f"/episodes/{self.id}/prompt", headers=self._routing)
        )
        return str(body["prompt"])

    def call(self, tool: str, arguments: Mapping[str, Any] | None = None, **kwargs: Any) -> Step:
        """Calls `tool` with `arguments` (and any keyword arguments) and returns the step."""
        body = _call_request(tool, arguments, kwargs)
        return Step.from_json(
            _json(self.client._send_call(f"/episodes/{self.id}/call", self._routing, body))
        )

    def status(self) -> dict[str, Any]:
        """The episode's state: `return`, `done`, `truncated`, and e.g. `answer` once done."""
        return dict(
            _json(self.client._request("GET", f"/episodes/{self.id}", headers=self._routing))
        )

    def trajectory(self) -> list[dict[str, Any]]:
        """The episode's trajectory, one record per line of its JSON Lines."""
        return _json_lines(
            self.client._request("GET", f"/episodes/{self.id}/trajectory", headers=self._routing)
        )

    def close(self) -> None:
        """Closes the episode on the server; closing it again does nothing."""
        if self._closed:
            return
        response = self.client._request("DELETE", f"/episodes/{self.id}", headers=self._routing)
        if response.status_code != 404:
            _check(response)
        self._closed = True


class AsyncClient:
    """An asynchronous client for one mcpgym server's control plane."""

    def __init__(self, base_url: str, token: str | None = None, timeout: float = 300.0) -> None:
        """Connects to `base_url` (e.g. `http://127.0.0.1:8000`), sending `token` as a bearer
        token when given; `timeout` bounds each request in seconds."""
        self.base_url = base_url.rstrip("/")
        self.token = token
        self._http = httpx.AsyncClient(
            base_url=self.base_url, headers=_headers(token), timeout=timeout
        )
        # Adds to "cannot reach" what is known of the server (the `Server` helper's exit).
        self._diagnose: Callable[[], str] | None = None

    async def _request(
        self, method: str, path: str, *, call: bool = False, **kwargs: Any
    ) -> httpx.Response:
        """Sends a request; a tool call (`call`, its key in the headers) is sent again on any
        transport error, reads and closes too unless the connection is refused outright."""
        attempts = _CALL_ATTEMPTS if call or method in _REPEATABLE else 1
        for attempt in range(attempts):
            try:
                return await self._http.request(method, path, **kwargs)
            except httpx.TransportError as error:
                # Refused outright: no server there, and a read or close cannot wait for one
                # (a tool call does wait, for a server restarting on its address).
                refused = isinstance(error, httpx.ConnectError) and not call
                if attempt + 1 == attempts or refused:
                    raise _unreachable(self.base_url, error, self._diagnose) from error
                await asyncio.sleep(_CALL_BACKOFF_S * 2**attempt)
        raise AssertionError("unreachable: the last attempt returns or raises")

    async def _send_call(
        self, path: str, headers: Mapping[str, str], body: dict[str, Any]
    ) -> httpx.Response:
        """POSTs a tool call, sending it again with the same key when the connection drops."""
        return await self._request("POST", path, call=True, headers=_keyed(headers), json=body)

    async def start(
        self,
        env: str | None = None,
        *,
        task: str | None = None,
        seed: int | None = None,
        split: str | None = None,
        options: Mapping[str, Any] | None = None,
        levels: Sequence[str] | None = None,
    ) -> AsyncEpisode:
        """Starts an episode. `env` may be left out when the server hosts one environment; a
        task is drawn from `split` with `seed` unless `task` names one, of `levels` only
        (`["hard"]`) when they are given."""
        body = _episode_request(env, task, seed, split, options, levels)
        response = await self._request("POST", "/episodes", json=body)
        return AsyncEpisode._from_json(self, _json(response))

    async def start_many(
        self,
        n: int,
        env: str | None = None,
        *,
        seeds: Sequence[int] | None = None,
        task: str | None = None,
        split: str | None = None,
        options: Mapping[str, Any] | None = None,
        levels: Sequence[str] | None = None,
    ) -> list[AsyncEpisode]:
        """Starts `n` episodes at once (one seed each when `seeds` is given). If any fails to
        start, the others are closed and the first error is raised."""
        seed_list = _seeds(n, seeds)
        results = await asyncio.gather(
            *(
                self.start(env, task=task, seed=seed, split=split, options=options, levels=levels)
                for seed in seed_list
            ),
            return_exceptions=True,
        )
        episodes = [result for result in results if isinstance(result, AsyncEpisode)]
        failures = [result for result in results if isinstance(result, BaseException)]
        if failures:
            for episode in episodes:
                with contextlib.suppress(McpgymError):
                    await episode.close()
            raise failures[0]
        return episodes

    async def tasks(self, env: str | None = None, split: str = "train") -> list[str]:
        """The task ids of `env`'s `split` (`train` or `test`)."""
        params = {"split": split} | ({"env": env} if env is not None else {})
        body = _json(await self._request("GET", "/tasks", params=params))
        return [str(task) for task in body["tasks"]]

    async def tools(self, env: str | None = None) -> list[dict[str, Any]]:
        """`env`'s tools as MCP lists them (`name`, `description`, `inputSchema`, ...)."""
        params = {"env": env} if env is not None else {}
        body = _json(await self._request("GET", "/tools", params=params))
        return [dict(tool) for tool in body["tools"]]

    async def metrics(self) -> str:
        """The server's Prometheus metrics, as text."""
        return _check(await self._request("GET", "/metrics")).text

    async def close(self) -> None:
        """Closes the connections (episodes stay open on the server)."""
        await self._http.aclose()

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()


class AsyncEpisode(_EpisodeBase["AsyncClient"]):
    """One episode on the server, played through its asynchronous client."""

    async def prompt(self) -> str:
        """What the agent is asked: the environment's instructions and the task."""
        body = _json(
            await self.client._request("GET", f"/episodes/{self.id}/prompt", headers=self._routing)
        )
        return str(body["prompt"])

    async def call(
        self, tool: str, arguments: Mapping[str, Any] | None = None, **kwargs: Any
    ) -> Step:
        """Calls `tool` with `arguments` (and any keyword arguments) and returns the step."""
        body = _call_request(tool, arguments, kwargs)
        response = await self.client._send_call(f"/episodes/{self.id}/call", self._routing, body)
        return Step.from_json(_json(response))

    async def status(self) -> dict[str, Any]:
        """The episode's state: `return`, `done`, `truncated`, and e.g. `answer` once done."""
        return dict(
            _json(await self.client._request("GET", f"/episodes/{self.id}", headers=self._routing))
        )

    async def trajectory(self) -> list[dict[str, Any]]:
        """The episode's trajectory, one record per line of its JSON Lines."""
        return _json_lines(
            await self.client._request(
                "GET", f"/episodes/{self.id}/trajectory", headers=self._routing
            )
        )

    async def close(self) -> None:
        """Closes the episode on the server; closing it again does nothing."""
        if self._closed:
            return
        response = await self.client._request(
            "DELETE", f"/episodes/{self.id}", headers=self._routing
        )
        if response.status_code != 404:
            _check(response)
        self._closed = True

    async def __aenter__(self) -> AsyncEpisode:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()
