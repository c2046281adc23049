"""The served assistant: an HTTP API over the graph, and the web page at ``/``.

Conversations are threads of the one graph (``graph.build_graph``, what ``langgraph.json`` serves:
``messages`` in, the cited reply out, a clarifying question as an interrupt), kept by its checkpointer
(a SQLite file, or PostgreSQL shared by several instances). A thread stored by a release before that
graph kept conversations is rewritten as its thread the first time it is read
(``runtime.checkpoints.migrate_thread``). A turn is
``POST /api/threads/{id}/messages``; the answer comes back as server-sent events, exactly what
``runtime.streaming.iter_events`` yields: ``step`` (a stage's status line), ``text`` (answer text that
stands), ``retract`` (rare: withdraw what was shown), ``interrupt`` (a clarifying question: the next
message is the reply) and ``done`` (the answer cut into cited sentences, the cited passages, whether it
is an "I don't know": read from the reply's metadata, where ``nodes/finish.py`` put them), and a
``: keep-alive`` comment each ``KEEPALIVE_S`` the stream is silent. A message with ``after`` (the
number of turns the client saw) is idempotent: sent
again, to this or another instance, after a lost connection, it continues or replays the turn it
started instead of asking twice (the thread's last message only: an earlier one sent again is refused).
A turn saves one checkpoint when it ends, and the thread keeps only its latest (``serve.storage``); a
deleted thread goes whole, a turn of it running anywhere stopped first.

The graph's nodes are sync functions: each turn runs on a worker thread (``threads`` of them per
process); ``mtrag-graph serve --workers N`` runs N such processes.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
import logging
import time
import uuid
from collections.abc import AsyncIterator, Generator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack, asynccontextmanager
from dataclasses import dataclass
from importlib import resources
from typing import Annotated, Any, cast

from fastapi import Depends, FastAPI, HTTPException, Request, Security
from fastapi.exceptions import RequestValidationError
from fastapi.middleware.cors import CORSMiddleware
from fastapi.responses import FileResponse, JSONResponse, StreamingResponse
from fastapi.security import APIKeyHeader, HTTPAuthorizationCredentials, HTTPBearer
from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.runnables import RunnableConfig
from langgraph.types import Command
from pydantic import BaseModel, Field, field_validator
from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from mtrag_graph.citations import CitedAnswer
from mtrag_graph.context import Context
from mtrag_graph.graph import build_graph
from mtrag_graph.passages import Passage
from mtrag_graph.runtime.checkpoints import migrate_thread, open_checkpointer, snapshot_question
from mtrag_graph.runtime.streaming import iter_events
from mtrag_graph.serve.storage import can_prune, prune
from mtrag_graph.serve.threads import SQLITE_PRAGMAS, ThreadLimit, ThreadLocks, ThreadStore, is_postgres
from mtrag_graph.state import encodable

log = logging.getLogger(__name__)

MAX_BODY_BYTES = 64 * 1024
MAX_MESSAGE_CHARS = 4000
BODY_TIMEOUT_S = 30.0
MAX_MESSAGES_PER_THREAD = 100
MAX_THREADS_PER_OWNER = 1000
RETENTION_SWEEP_S = 3600.0
# An event stream silent this long gets a comment line: proxies and load balancers close a response that
# sends nothing for their read timeout (nginx: 60 s), and a long answer can think for longer than that.
KEEPALIVE_S = 15.0
KEEPALIVE = b": keep-alive\n\n"  # an SSE comment: clients skip it
ANONYMOUS = "-"  # the owner of every thread when no API key is set
OWNER_SECRET = "owner-hmac"  # the name of the deployment's secret that API keys are hashed under


@dataclass
class ServeConfig:
    """What ``mtrag-graph serve`` sets; defaults suit a test."""

    checkpointer: str = "chat.sqlite"
    passages: list[Passage] | None = None  # fixed passages; None: retrieve (Context.index_dir)
    api_keys: Sequence[str] = ()  # empty: no key asked
    cors_origins: Sequence[str] = ()  # empty: no CORS headers
    retention_days: float | None = None  # threads unused this long are deleted
    threads: int = 32  # turns run at once in this process
    max_body_bytes: int = MAX_BODY_BYTES
    body_timeout_s: float = BODY_TIMEOUT_S  # a request body not all there by then: 408
    allowed_hosts: Sequence[str] = ()  # Host header names served; empty: any (mtrag-graph serve sets them)
    max_message_chars: int = MAX_MESSAGE_CHARS
    pool_size: int = 16  # PostgreSQL connections of this process
    max_messages: int = MAX_MESSAGES_PER_THREAD  # messages a user sends in one thread
    max_threads: int = MAX_THREADS_PER_OWNER  # threads of one API key (of everyone without keys)
    delete_wait_s: float = (
        10.0  # a DELETE waits this long for a running turn to stop (else it deletes the rest)
    )
    keepalive_s: float = KEEPALIVE_S  # an event stream silent this long sends a keep-alive comment


def clean_text(value: Any) -> Any:
    """``value`` with every string made encodable: a lone surrogate (from a passage or a model reply;
    a request holding one is refused) becomes U+FFFD instead of failing the response that carries it."""
    if isinstance(value, str):
        return encodable(value)
    if isinstance(value, dict):
        return {clean_text(k): clean_text(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [clean_text(v) for v in value]
    return value


class NewThread(BaseModel):
    title: str = Field("", max_length=200, description="shown in the list; default: the first message")


class NewMessage(BaseModel):
    text: str = Field(
        ..., min_length=1, description="the user's message, or the reply to a clarifying question"
    )
    after: int | None = Field(
        None,
        ge=0,
        description="the number of turns the client saw in the thread; sent again with the same value, "
        "the message is not taken twice (the turn it started is continued or replayed)",
    )

    @field_validator("text")
    @classmethod
    def _not_blank(cls, text: str) -> str:
        if not text.strip():
            raise ValueError("the message is blank: write a question or a reply")
        return text


class BodyLimit:
    """Reads a request's body before the app sees it: above ``limit`` bytes, whether or not it says its
    length (a chunked body), 413; not all there within ``timeout_s``, 408 (a client holding a partial
    request holds a connection and a worker's attention)."""

    def __init__(self, app: ASGIApp, limit: int, timeout_s: float) -> None:
        self.app, self.limit, self.timeout_s = app, limit, timeout_s

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = dict(scope.get("headers") or []).get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > self.limit:
            await _refuse(send, 413, f"request body above {self.limit} bytes")
            return
        chunks: list[bytes] = []
        seen = 0
        try:
            async with asyncio.timeout(self.timeout_s):
                while True:
                    message = await receive()
                    if message["type"] == "http.disconnect":
                        return
                    chunks.append(message.get("body", b""))
                    seen += len(chunks[-1])
                    if seen > self.limit:
                        await _refuse(send, 413, f"request body above {self.limit} bytes")
                        return
                    if not message.get("more_body"):
                        break
        except TimeoutError:
            await _refuse(send, 408, f"the request body did not arrive within {self.timeout_s:g} s")
            return
        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if replayed:  # after the body: what the client does next (a disconnect)
                return await receive()
            replayed = True
            return {"type": "http.request", "body": b"".join(chunks), "more_body": False}

        await self.app(scope, replay, send)


async def _refuse(send: Send, status: int, detail: str) -> None:
    await JSONResponse({"detail": detail}, status_code=status)({"type": "http"}, _nothing, send)


async def _nothing() -> Message:
    return {"type": "http.disconnect"}


# How a request carries its API key: either header (the page sends the first). Neither refuses by
# itself: the caller dependency answers 401 with its own message, and only when keys are set.
KEYS_NEEDED = "needed when the server has API keys (--api-key-file, $MTRAG_API_KEYS)"
BEARER_KEY = HTTPBearer(
    auto_error=False, scheme_name="Bearer key", description=f"Authorization: Bearer KEY; {KEYS_NEEDED}"
)
HEADER_KEY = APIKeyHeader(
    name="X-API-Key", auto_error=False, scheme_name="X-API-Key", description=f"X-API-Key: KEY; {KEYS_NEEDED}"
)


def owner_of(key: str | None, secret: str) -> str:
    """The owner id of an API key: an HMAC under the deployment's secret (the key is not stored)."""
    if not key:
        return ANONYMOUS
    return hmac.new(secret.encode(), key.encode("utf-8"), hashlib.sha256).hexdigest()


def unsalted_owner_of(key: str) -> str:
    """The owner id of a key before ids were HMACs: threads made then are handed to the new id."""
    return hashlib.sha256(key.encode("utf-8")).hexdigest()[:32]


FINAL_EVENTS = ("done", "interrupt", "error")
FAILED = {"detail": "the answer failed; send the message again"}


def _sse(kind: str, data: Any) -> bytes:
    """One server-sent event; never fails (text that cannot be encoded is replaced, see clean_text)."""
    try:
        text = json.dumps(clean_text(data), ensure_ascii=False)
    except (TypeError, ValueError):
        log.exception("event %s could not be written", kind)
        kind, text = ("error", json.dumps(FAILED)) if kind in FINAL_EVENTS else ("step", "{}")
    return f"event: {kind}\ndata: {text}\n\n".encode()


async def _with_keepalive(
    queue: asyncio.Queue[tuple[str, bytes] | None], every_s: float
) -> AsyncIterator[tuple[str, bytes]]:
    """The queue's ``(kind, event)`` items up to its ``None`` (the turn's end), with a keep-alive
    comment each time ``every_s`` passed without one. The pending ``get`` is kept across the waits
    (a timeout that cancelled it could drop an item)."""
    getter: asyncio.Task[tuple[str, bytes] | None] | None = None
    try:
        while True:
            getter = getter or asyncio.ensure_future(queue.get())
            done, _ = await asyncio.wait({getter}, timeout=every_s)
            if not done:
                yield "keep-alive", KEEPALIVE
                continue
            item, getter = getter.result(), None
            if item is None:
                return
            yield item
    finally:
        if getter is not None:  # the client went away: the turn runs on, nobody reads its events
            getter.cancel()


class SafeJSONResponse(JSONResponse):
    """A JSON response whose text is always encodable (a thread holding a lone surrogate stays readable)."""

    def render(self, content: Any) -> bytes:
        return super().render(clean_text(content))


def conversation(values: dict[str, Any], waiting: str | None) -> list[dict[str, str]]:
    """A thread's messages as the page shows them, ``{"speaker", "text"}`` turns; the clarifying question
    the thread waits on is not among them (it is ``waiting``)."""
    messages = list(values.get("messages") or [])
    if waiting is not None and messages and isinstance(messages[-1], AIMessage):
        messages.pop()
    return [{"speaker": "user" if isinstance(m, HumanMessage) else "agent", "text": m.text} for m in messages]


def answer_of(reply: AIMessage, turns: int) -> dict[str, Any]:
    """A reply as the page shows it: cited sentences, the cited passages, "I don't know"."""
    metadata = reply.response_metadata.get("mtrag") or {}
    cited = CitedAnswer.of_reply(reply)
    return {
        "answer": reply.text,
        "parts": cited.parts,
        "sources": [source.shown() for source in cited.sources],
        "idk": metadata.get("kind") == "abstention",
        "abstain_reason": metadata.get("abstain_reason"),
        "turns": turns,
    }


class ThreadDeleted(Exception):
    """The thread was deleted while a turn of it ran."""


class Service:
    """The graph, its checkpointer and the thread rows of one process."""

    def __init__(self, config: ServeConfig, context: Context) -> None:
        self.config, self.context = config, context
        self._owners_seen: set[str] = set()
        self._stack = ExitStack()
        self.locks = ThreadLocks(config.checkpointer)
        self.executor = ThreadPoolExecutor(max_workers=config.threads, thread_name_prefix="turn")
        if is_postgres(config.checkpointer):
            saver, pool = self._postgres(config.checkpointer, config.pool_size)
            self.store = ThreadStore(config.checkpointer, pool=pool)
        else:
            saver = self._stack.enter_context(open_checkpointer(config.checkpointer))
            for pragma in SQLITE_PRAGMAS:
                saver.conn.execute(pragma)
            self.store = ThreadStore(config.checkpointer)
        self.saver = saver
        self.graph = build_graph(checkpointer=saver)
        self.prunable = can_prune(self.graph)
        self.owner_secret = self.store.secret(OWNER_SECRET)

    def _postgres(self, url: str, size: int) -> tuple[Any, Any]:
        from langgraph.checkpoint.postgres import PostgresSaver  # noqa: PLC0415 - optional (postgres extra)
        from psycopg.rows import dict_row  # noqa: PLC0415 - as above
        from psycopg_pool import ConnectionPool  # noqa: PLC0415 - as above

        kwargs = {"autocommit": True, "prepare_threshold": 0, "row_factory": dict_row}
        pool: Any = self._stack.enter_context(ConnectionPool(url, min_size=1, max_size=size, kwargs=kwargs))
        saver = PostgresSaver(pool)
        saver.setup()
        return saver, pool

    def close(self) -> None:
        self.executor.shutdown(wait=False, cancel_futures=True)
        self.store.close()
        self.locks.close()
        self._stack.close()

    # -- threads ---------------------------------------------------------------------------------

    def owned(self, thread_id: str, owner: str) -> dict[str, Any]:
        """The thread's row; 404 when it does not exist or another key owns it (the same answer)."""
        row = self.store.get(thread_id)
        if row is None or not hmac.compare_digest(row["owner"], owner):
            raise HTTPException(404, "no such thread")
        return row

    def owner(self, key: str | None) -> str:
        """The owner id of an API key (threads it made before ids were HMACs become its own)."""
        owner = owner_of(key, self.owner_secret)
        if key and owner not in self._owners_seen:
            self.store.rename_owner(unsalted_owner_of(key), owner)
            self._owners_seen.add(owner)
        return owner

    def config_of(self, thread_id: str) -> RunnableConfig:
        return {"configurable": {"thread_id": thread_id}}

    def migrate(self, thread_id: str) -> None:
        """Rewrite the thread as the graph's when a release before it stored it (under the thread's lock,
        which the caller holds; a turn of a thread running anywhere means it was rewritten already)."""
        migrate_thread(self.graph, self.config_of(thread_id))

    def snapshot(self, thread_id: str) -> dict[str, Any]:
        """The conversation as the page shows it: turns, the question it waits on, the last answer."""
        if self.locks.acquire(thread_id):
            try:
                self.migrate(thread_id)
            finally:
                self.locks.release(thread_id)
        saved = self.graph.get_state(self.config_of(thread_id))
        values = saved.values or {}
        waiting = snapshot_question(saved)
        turns = conversation(values, waiting)
        messages = values.get("messages") or []
        last = None
        if waiting is None and messages and isinstance(messages[-1], AIMessage):
            last = answer_of(messages[-1], len(turns))
        return {"turns": turns, "waiting": waiting, "running": bool(saved.next) and not waiting, "last": last}

    def delete(self, thread_id: str) -> None:
        """Delete the thread: its row at once (a turn of it, here or on another instance, stops at its
        next step), then its checkpoints and lock file when no turn of it runs: now, if one stops within
        ``delete_wait_s``, else when that turn stops (``end``) or at the next sweep."""
        self.store.delete(thread_id)
        if self.locks.wait(thread_id, self.config.delete_wait_s):
            self.end(thread_id)

    def purge(self, thread_id: str) -> None:
        """Delete a deleted thread's checkpoints (no turn of it runs: the caller holds its lock)."""
        self.saver.delete_thread(thread_id)
        self.store.forget(thread_id)

    def sweep(self) -> int:
        """Delete the threads unused for ``retention_days`` and what deleted threads left (a turn that
        ran on an instance that died); returns how many threads were deleted."""
        expired = []
        if self.config.retention_days:
            expired = self.store.unused_since(time.time() - self.config.retention_days * 86400)
            for thread_id in expired:
                self.store.delete(thread_id)
        for thread_id in self.store.deleted():
            if self.locks.acquire(thread_id):
                self.end(thread_id)
        return len(expired)

    # -- turns -----------------------------------------------------------------------------------

    def begin(self, thread_id: str, owner: str) -> None:
        """Take the thread's turn lock (every instance's); 409 when a turn of it runs anywhere, 404 when
        it is not the caller's (or was deleted meanwhile)."""
        if not self.locks.acquire(thread_id):
            raise HTTPException(409, "this thread is answering a message; send it again when that ends")
        try:
            self.owned(thread_id, owner)
        except BaseException:
            self.end(thread_id, ran=False)
            raise

    def end(self, thread_id: str, ran: bool = True) -> None:
        """Let go of the thread's lock (held by the caller): a deleted thread's checkpoints and lock
        file go now; a thread's checkpoints that a turn superseded go too (``storage.prune``)."""
        deleted = False
        try:
            deleted = self.store.get(thread_id) is None
            if deleted:
                self.purge(thread_id)
            elif ran and self.prunable:
                saved = self.graph.get_state(self.config_of(thread_id))
                prune(self.saver, thread_id, waiting=any(t.interrupts for t in saved.tasks))
        finally:
            self.locks.release(thread_id, remove=deleted)

    def plan(self, thread_id: str, message: NewMessage) -> tuple[str, Any]:
        """What a message does: ("run", inputs) a new turn, a reply or a continued turn; ("replay", None).

        ``after`` is the number of turns the client saw. Equal to the thread's: a new message (or the
        reply to the waiting question). Below it: the message was taken already, and is answered again
        (continued, or its answer replayed) only when it is the thread's last message, with this text;
        any other resend is refused, never answered with another message's answer.
        """
        self.migrate(thread_id)
        saved = self.graph.get_state(self.config_of(thread_id))
        question = snapshot_question(saved)
        waiting = question is not None
        turns = conversation(saved.values or {}, question)
        # the last user turn has no answer saved: an instance stopped (or the model failed) answering it
        unfinished = not waiting and bool(turns) and turns[-1]["speaker"] == "user"
        if message.after is not None and message.after > len(turns):
            raise HTTPException(409, f"the thread has {len(turns)} turns, not {message.after}")
        if message.after is not None and message.after < len(turns):
            if not _is_last_message(turns, message.after, message.text):
                raise HTTPException(
                    409,
                    f"the message sent with after={message.after} is not this thread's last message, whose "
                    f"answer is the only one sent again; the thread has {len(turns)} turns (read them "
                    "with GET /api/threads/ID)",
                )
            return ("run", None) if unfinished else ("replay", None)
        if waiting:
            return "run", Command(resume=message.text)
        if unfinished:
            raise HTTPException(
                409,
                f"the thread's last message has no answer: send it again with after={len(turns) - 1}, "
                "or start a new thread",
            )
        if sum(t["speaker"] == "user" for t in turns) >= self.config.max_messages:
            raise HTTPException(
                409,
                f"this thread has reached its limit of {self.config.max_messages} messages: start a new one",
            )
        # A new turn. An input an instance saved without taking it (no user turn in the state) is
        # replaced by this one.
        return "run", {"messages": [HumanMessage(message.text)], "contexts": self.config.passages}

    def run_turn(self, thread_id: str, inputs: Any, emit: Any) -> None:
        """Run one turn on this (worker) thread, handing each event to ``emit(kind, data)``."""
        done: dict[str, Any] = {}
        waiting = None
        stream = cast(
            Generator[tuple[str, Any], None, None],
            iter_events(
                CheckpointAtExit(self.graph), inputs, context=self.context, config=self.config_of(thread_id)
            ),
        )
        try:
            for kind, value in stream:
                if kind == "step":
                    if self.store.get(thread_id) is None:
                        raise ThreadDeleted(thread_id)
                    emit("step", {"label": value})
                elif kind == "text":
                    emit("text", {"text": value})
                elif kind == "retract":
                    emit("retract", {})
                elif kind == "interrupt":
                    waiting = value
                elif kind == "done":
                    done = value
        finally:
            stream.close()  # a deleted thread's run stops here (its checkpoint is deleted after)
        turns = conversation(done, waiting)
        messages = done.get("messages") or []
        if waiting is not None:
            emit("interrupt", {"question": waiting, "turns": len(turns)})
        elif messages and isinstance(messages[-1], AIMessage):
            emit("done", answer_of(messages[-1], len(turns)))

    def replay(self, thread_id: str, emit: Any) -> None:
        snapshot = self.snapshot(thread_id)
        if snapshot["waiting"]:
            emit("interrupt", {"question": snapshot["waiting"], "turns": len(snapshot["turns"])})
        elif snapshot["last"] is not None:
            emit("done", {**snapshot["last"], "replayed": True})
        else:
            emit("error", {"detail": "the thread has no answer to replay"})


def _is_last_message(turns: list[dict[str, Any]], after: int, text: str) -> bool:
    """Whether the message sent with ``after`` and ``text`` is the thread's last user turn: at
    ``after``, or just past it when it replied to a clarifying question (saved with the reply)."""
    index = after + 1 if turns[after]["speaker"] == "agent" else after
    last = max((i for i, t in enumerate(turns) if t["speaker"] == "user"), default=-1)
    return index == last and turns[index]["text"] == text


class CheckpointAtExit:
    """The graph run with ``durability="exit"``: a turn saves its checkpoint when it ends (or waits on a
    clarifying reply), not one per step of the graph, each carrying the passages."""

    def __init__(self, graph: Any) -> None:
        self.graph = graph

    def __getattr__(self, name: str) -> Any:
        return getattr(self.graph, name)

    def stream(self, *args: Any, **kwargs: Any) -> Any:
        return self.graph.stream(*args, durability="exit", **kwargs)


def create_app(config: ServeConfig, context: Context | None = None) -> FastAPI:
    """The ASGI app: the API under ``/api``, ``/health``, OpenAPI at ``/docs``, the page at ``/``."""
    context = context or Context()

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        service = Service(config, context)
        app.state.service = service
        sweeper = asyncio.create_task(_sweep_forever(service))
        try:
            yield
        finally:
            sweeper.cancel()
            service.close()

    app = FastAPI(
        title="mtrag-graph",
        description="Multi-turn RAG conversations: threads, streamed answers with citations, clarifying questions.",
        version="0.1.0",
        lifespan=lifespan,
        default_response_class=SafeJSONResponse,
        docs_url=None,  # served below from the package, not from a CDN
        redoc_url=None,
    )
    if config.cors_origins:
        app.add_middleware(
            CORSMiddleware,
            allow_origins=list(config.cors_origins),
            allow_methods=["GET", "POST", "DELETE"],
            allow_headers=["Authorization", "X-API-Key", "Content-Type"],
        )
    app.add_middleware(BodyLimit, limit=config.max_body_bytes, timeout_s=config.body_timeout_s)
    if config.allowed_hosts:
        # A web page that rebinds its own name to this server's address (DNS rebinding) sends its name,
        # not this server's: 400. No www. redirect: only the names given are answered.
        app.add_middleware(
            TrustedHostMiddleware, allowed_hosts=list(config.allowed_hosts), www_redirect=False
        )
    keys = [k for k in config.api_keys if k]

    def caller(
        bearer: Annotated[HTTPAuthorizationCredentials | None, Security(BEARER_KEY)],
        header_key: Annotated[str | None, Security(HEADER_KEY)],
    ) -> str:
        """The caller's owner id; 401 when keys are set and the request has none of them."""
        if not keys:
            return ANONYMOUS
        given = bearer.credentials.strip() if bearer is not None else header_key or ""
        if not any(hmac.compare_digest(given.encode(), k.encode()) for k in keys):
            raise HTTPException(
                401,
                "missing or wrong API key (Authorization: Bearer KEY, or X-API-Key)",
                headers={"WWW-Authenticate": "Bearer"},
            )
        return service().owner(given)

    def service() -> Service:
        return app.state.service

    def json_body(request: Request) -> None:
        """A request that changes state carries a JSON body: a page of another site cannot send one
        without asking first (CORS), so it cannot create threads or send messages in the user's name."""
        kind = (request.headers.get("content-type") or "").split(";")[0].strip().lower()
        if kind != "application/json":
            raise HTTPException(415, "send a JSON body with Content-Type: application/json")

    @app.exception_handler(Exception)
    async def internal_error(request: Request, error: Exception) -> JSONResponse:
        log.exception("error serving %s %s", request.method, request.url.path)
        return SafeJSONResponse({"detail": "internal error"}, status_code=500)

    @app.exception_handler(RequestValidationError)
    async def invalid(request: Request, error: RequestValidationError) -> JSONResponse:
        problems = [
            {"field": ".".join(str(p) for p in e.get("loc", ())[1:]), "problem": e.get("msg")}
            for e in error.errors()
        ]
        return SafeJSONResponse({"detail": "invalid request", "problems": problems}, status_code=422)

    @app.get("/health", tags=["service"])
    def health() -> dict[str, Any]:
        """Liveness and the checkpointer kind (no secrets)."""
        return {"status": "ok", "checkpointer": "postgres" if is_postgres(config.checkpointer) else "sqlite"}

    @app.get("/api/threads", tags=["threads"])
    def list_threads(owner: str = Depends(caller)) -> dict[str, Any]:
        """The caller's conversations, the most recently used first."""
        return {"threads": service().store.owned_by(owner)}

    @app.post("/api/threads", tags=["threads"], status_code=201, dependencies=[Depends(json_body)])
    def create_thread(body: NewThread, owner: str = Depends(caller)) -> dict[str, Any]:
        """A new, empty conversation (the body may be ``{}``); 409 when the caller has as many as the
        service allows (``--max-threads-per-key``)."""
        try:
            return service().store.create(uuid.uuid4().hex, owner, body.title, limit=config.max_threads)
        except ThreadLimit:
            raise HTTPException(
                409, f"you have {config.max_threads} conversations, the most this service keeps: delete one"
            ) from None

    @app.get("/api/threads/{thread_id}", tags=["threads"])
    def get_thread(thread_id: str, owner: str = Depends(caller)) -> dict[str, Any]:
        """The conversation: its turns, the clarifying question it waits on, the last answer with its sources."""
        row = service().owned(thread_id, owner)
        return {"thread_id": thread_id, "title": row["title"], **service().snapshot(thread_id)}

    @app.delete("/api/threads/{thread_id}", tags=["threads"], status_code=204)
    def delete_thread(thread_id: str, owner: str = Depends(caller)) -> None:
        """Delete the conversation and all its checkpoints (a turn of it that runs is stopped first)."""
        service().owned(thread_id, owner)
        service().delete(thread_id)

    @app.post(
        "/api/threads/{thread_id}/messages",
        tags=["threads"],
        response_class=StreamingResponse,
        responses={200: {"content": {"text/event-stream": {}}, "description": "server-sent events"}},
        dependencies=[Depends(json_body)],
    )
    async def post_message(
        thread_id: str, message: NewMessage, owner: str = Depends(caller)
    ) -> StreamingResponse:
        """Send a message (or the reply to a clarifying question); the answer streams as server-sent
        events: ``step``, ``text``, ``retract``, then ``interrupt`` or ``done`` (or ``error``); while the
        answer is waited for, a comment line (``: keep-alive``) that clients skip keeps proxies from
        closing the stream."""
        if len(message.text) > config.max_message_chars:
            raise HTTPException(413, f"message above {config.max_message_chars} characters")
        svc = service()
        await asyncio.to_thread(svc.owned, thread_id, owner)
        await asyncio.to_thread(svc.begin, thread_id, owner)
        try:
            action, inputs = await asyncio.to_thread(svc.plan, thread_id, message)
        except BaseException:
            await asyncio.to_thread(svc.end, thread_id, False)
            raise
        loop = asyncio.get_running_loop()
        queue: asyncio.Queue[tuple[str, bytes] | None] = asyncio.Queue()

        def emit(kind: str, data: Any) -> None:
            loop.call_soon_threadsafe(queue.put_nowait, (kind, _sse(kind, data)))

        final: list[tuple[str, Any]] = []

        def hold_final(kind: str, data: Any) -> None:
            """The turn's last event waits until the thread's lock is released: a client that sends its
            next message as soon as it has the answer finds the thread free."""
            if kind in FINAL_EVENTS:
                final.append((kind, data))
            else:
                emit(kind, data)

        def work() -> None:
            try:
                svc.store.touch(thread_id, message.text if action == "run" else None)
                if action == "replay":
                    svc.replay(thread_id, hold_final)
                else:
                    svc.run_turn(thread_id, inputs, hold_final)
            except ThreadDeleted:
                final[:] = [("error", {"detail": "the thread was deleted"})]
            except Exception:  # reported to the client without its details, logged in full
                log.exception("turn of thread %s failed", thread_id)
                final[:] = [("error", FAILED)]
            finally:
                try:
                    svc.end(thread_id)
                except Exception:  # the lock is released whatever failed; the answer stands
                    log.exception("ending the turn of thread %s failed", thread_id)
                for kind, data in final or [("error", FAILED)]:
                    emit(kind, data)
                loop.call_soon_threadsafe(queue.put_nowait, None)

        # The turn runs to its end even when the client goes away: its answer is saved in the thread.
        loop.run_in_executor(svc.executor, work)

        async def events() -> AsyncIterator[bytes]:
            ended = False
            async for item in _with_keepalive(queue, config.keepalive_s):
                ended = ended or item[0] in FINAL_EVENTS
                yield item[1]
            if not ended:  # every stream ends with done, interrupt or error
                yield _sse("error", FAILED)

        headers = {"Cache-Control": "no-store", "X-Accel-Buffering": "no"}
        return StreamingResponse(events(), media_type="text/event-stream", headers=headers)

    static = resources.files("mtrag_graph.serve") / "static"

    @app.get("/", include_in_schema=False)
    def page() -> FileResponse:
        return FileResponse(str(static / "index.html"), headers=_PAGE_HEADERS)

    @app.get("/docs", include_in_schema=False)
    def api_docs() -> FileResponse:
        """Swagger UI over ``/openapi.json``, from the package (``static/``): no third-party
        script runs on the origin where the page keeps its API key."""
        return FileResponse(str(static / "docs.html"), headers=_PAGE_HEADERS)

    @app.get("/static/{name}", include_in_schema=False)
    def asset(name: str) -> FileResponse:
        if name not in _ASSETS:
            raise HTTPException(404, "no such file")
        headers = _VENDORED_HEADERS if name in _VENDORED else _PAGE_HEADERS
        return FileResponse(str(static / name), media_type=_ASSETS[name], headers=headers)

    return app


# third-party code shipped in the package (static/VENDORED.md: versions, sources, licences)
_VENDORED = {"swagger-ui-bundle.js": "text/javascript", "swagger-ui.css": "text/css",
             "marked.umd.js": "text/javascript", "purify.min.js": "text/javascript"}  # fmt: skip
_ASSETS = {"app.js": "text/javascript", "style.css": "text/css", "docs.js": "text/javascript", **_VENDORED}
# The page's own script and style only: no inline script, so text a passage smuggles in cannot run.
_PAGE_HEADERS = {
    "Content-Security-Policy": "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "object-src 'none'; base-uri 'none'; frame-ancestors 'none'",
    "X-Content-Type-Options": "nosniff",
    "Cache-Control": "no-cache",
}
_VENDORED_HEADERS = {**_PAGE_HEADERS, "Cache-Control": "max-age=86400"}


async def _sweep_forever(service: Service) -> None:
    while True:
        try:
            deleted = await asyncio.to_thread(service.sweep)
            if deleted:
                log.info("retention: deleted %d threads", deleted)
        except Exception:  # a failed sweep is retried at the next one
            log.exception("retention sweep failed")
        await asyncio.sleep(RETENTION_SWEEP_S)
