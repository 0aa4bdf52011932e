"""The asyncio client: :class:`AsyncClient`, the twin of :class:`kruntimes.Client` — the same
groups and methods, awaited (``await client.runs.get(name)``), with async iterators for logs,
command events, file chunks and directory listings (``async for``)."""

from __future__ import annotations

import asyncio
import json
import os
import time
from typing import Any, AsyncIterable, AsyncIterator, BinaryIO, Callable, Iterable, Mapping, Sequence

import pyqwest
from connectrpc.client import ResponseMetadata
from connectrpc.errors import ConnectError

from kruntimes.gateway.v1 import function_connect, session_connect, session_pb2

from . import _convert as cv
from . import _gateway as gw
from . import _logs as lg
from . import _spec as spec
from ._kube import SA_DIR, WATCH_SECONDS, AsyncKube, core_path, kubeconfig_namespace, runs_path
from .client import (
    GatewayInfo,
    _check_failed,
    _ended_before_ready,
    _metadata_headers,
    _no_token,
    _read_sa_namespace,
    _wait_timeout,
)
from .errors import ConfigError, InvalidArgument, KruntimesError, NotFound, from_connect_error, from_kube_status
from .models import ExecEvent, ExecResult, FileInfo, InvokeResult, LogLine, Run, TaskResult

__all__ = ["AsyncClient", "AsyncRuns", "AsyncFunctions", "AsyncSessions", "AsyncSession"]

Duration = spec.Duration


class _AsyncGateway:
    def __init__(self, target: gw.Target) -> None:
        self.target = target
        self.transport = pyqwest.HTTPTransport(
            tls_ca_cert=target.ca,
            tls_include_system_certs=target.system_roots,
            dns_overrides=target.dns_overrides or None,
            use_system_dns=True,
            enable_otel=False,
        )
        http = pyqwest.Client(self.transport)
        self.functions = function_connect.FunctionServiceClient(target.base_url, http_client=http)
        self.sessions = session_connect.SessionServiceClient(target.base_url, http_client=http)

    def info(self) -> GatewayInfo:
        addr = next(iter(self.target.dns_overrides.values()), [""])[0] if self.target.dns_overrides else ""
        return GatewayInfo(self.target.base_url, self.target.via, addr)

    async def aclose(self) -> None:
        try:
            await self.transport.aclose()
        finally:
            r = self.target.close()
            if asyncio.iscoroutine(r):
                await r


class AsyncClient:
    """The asyncio kruntimes client. Construction reads no file and opens no connection: the
    credentials are loaded on first use. Use ``async with`` (or ``await client.aclose()``) so a
    port-forward it opened is stopped.

    The constructors and their arguments are those of :class:`kruntimes.Client`:
    ``AsyncClient()`` (in a pod: in-cluster, else the kubeconfig), :meth:`in_cluster`,
    :meth:`from_kubeconfig`.

    Attributes:
        namespace: The namespace Runs are created and looked up in.
        runs: :class:`AsyncRuns`.
        functions: :class:`AsyncFunctions`.
        sessions: :class:`AsyncSessions`.

    Example::

        import asyncio
        from kruntimes import AsyncClient

        async def main():
            async with AsyncClient() as client:
                run = await client.runs.create_task("bash", "echo hello")
                print((await client.runs.result(run.name)).stdout_tail)

        asyncio.run(main())
    """

    def __init__(
        self,
        *,
        namespace: str | None = None,
        kubeconfig: str | None = None,
        context: str | None = None,
        gateway_url: str | None = None,
        gateway_namespace: str | None = None,
        via: str = "auto",
        ca_file: str | None = None,
        token: str | None = None,
        kubectl: str | None = None,
        _in_cluster: bool | None = None,
        _sa_dir: str = SA_DIR,
    ) -> None:
        gw.check_via(via)
        if _in_cluster is None:
            _in_cluster = kubeconfig is None and context is None and gw.in_pod()
        self._in_cluster = _in_cluster
        self._sa_dir = _sa_dir
        self._kubeconfig = kubeconfig
        self._context = context
        if namespace is None:
            namespace = _read_sa_namespace(_sa_dir) if _in_cluster else kubeconfig_namespace(kubeconfig, context)
        self.namespace: str = namespace
        self._gateway_url = gateway_url if gateway_url is not None else os.environ.get("KRT_GATEWAY") or None
        self._gateway_namespace = gateway_namespace or os.environ.get("KRT_GATEWAY_NAMESPACE") or "kruntimes"
        self._via = via
        self._ca_file = ca_file
        self._token = token
        self._kubectl = kubectl or os.environ.get("KRT_KUBECTL") or "kubectl"
        self._kube_client: AsyncKube | None = None
        self._gw: _AsyncGateway | None = None
        self._lock: asyncio.Lock | None = None
        self._closed = False
        self.runs = AsyncRuns(self)
        self.functions = AsyncFunctions(self)
        self.sessions = AsyncSessions(self)

    @classmethod
    def in_cluster(
        cls,
        *,
        namespace: str | None = None,
        gateway_url: str | None = None,
        gateway_namespace: str | None = None,
        via: str = "service",
        ca_file: str | None = None,
        token: str | None = None,
        service_account_dir: str = SA_DIR,
    ) -> AsyncClient:
        """A client for code running in a pod; see :meth:`kruntimes.Client.in_cluster`."""
        if not os.path.exists(os.path.join(service_account_dir, "token")):
            raise ConfigError(f"not running in a pod with a ServiceAccount token ({service_account_dir}/token is missing)")
        return cls(namespace=namespace, gateway_url=gateway_url, gateway_namespace=gateway_namespace, via=via,
                   ca_file=ca_file, token=token, _in_cluster=True, _sa_dir=service_account_dir)

    @classmethod
    def from_kubeconfig(
        cls,
        path: str | None = None,
        context: str | None = None,
        namespace: str | None = None,
        gateway_url: str | None = None,
        gateway_namespace: str | None = None,
        via: str = "auto",
        ca_file: str | None = None,
        token: str | None = None,
        kubectl: str | None = None,
    ) -> AsyncClient:
        """A client from a kubeconfig; see :meth:`kruntimes.Client.from_kubeconfig`."""
        return cls(namespace=namespace, kubeconfig=path, context=context, gateway_url=gateway_url,
                   gateway_namespace=gateway_namespace, via=via, ca_file=ca_file, token=token, kubectl=kubectl,
                   _in_cluster=False)

    async def aclose(self) -> None:
        """Closes the gateway connections and stops a port-forward the client opened."""
        self._closed = True
        g, self._gw = self._gw, None
        k, self._kube_client = self._kube_client, None
        try:
            if g is not None:
                await g.aclose()
        finally:
            if k is not None:
                await k.close()

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.aclose()

    async def gateway(self) -> GatewayInfo:
        """Finds the gateway now and says how it is reached (see :meth:`kruntimes.Client.gateway`)."""
        return (await self._gateway()).info()

    # --- internals ---

    def _ns(self, namespace: str | None) -> str:
        return namespace or self.namespace

    def _lock_(self) -> asyncio.Lock:
        if self._lock is None:
            self._lock = asyncio.Lock()
        return self._lock

    async def _kube(self) -> AsyncKube:
        if self._kube_client is not None:
            return self._kube_client
        async with self._lock_():
            if self._closed:
                raise ConfigError("the client is closed")
            if self._kube_client is None:
                if self._in_cluster:
                    self._kube_client = AsyncKube.in_cluster(self._sa_dir)
                else:
                    self._kube_client = await AsyncKube.from_kubeconfig(self._kubeconfig, self._context)
            return self._kube_client

    async def _gateway(self) -> _AsyncGateway:
        if self._gw is not None:
            return self._gw
        kube = await self._kube()
        async with self._lock_():
            if self._closed:
                raise ConfigError("the client is closed")
            if self._gw is None:
                target = await gw.locate_async(kube, url=self._gateway_url, namespace=self._gateway_namespace,
                                               via=self._via, ca_file=self._ca_file, kubectl=self._kubectl,
                                               in_cluster=self._in_cluster)
                self._gw = _AsyncGateway(target)
            return self._gw

    async def _auth(self) -> dict[str, str]:
        kube = await self._kube()
        token = self._token or await kube.bearer_token()
        if not token:
            raise _no_token(kube.source.kind)
        return {"authorization": f"Bearer {token}"}

    async def _unary(self, method: Callable[..., Any], request: Any, timeout_ms: int | None = None) -> Any:
        headers = await self._auth()
        with ResponseMetadata() as md:
            try:
                return await method(request, headers=headers, timeout_ms=timeout_ms)
            except ConnectError as e:
                raise from_connect_error(e, _metadata_headers(md)) from None

    async def _stream(self, method: Callable[..., Any], request: Any,
                      timeout_ms: int | None = None) -> AsyncIterator[Any]:
        headers = await self._auth()
        with ResponseMetadata() as md:
            try:
                async for m in method(request, headers=headers, timeout_ms=timeout_ms):
                    yield m
            except ConnectError as e:
                raise from_connect_error(e, _metadata_headers(md)) from None


class AsyncRuns:
    """Runs through the Kubernetes API (``client.runs``); see :class:`kruntimes.client.Runs`
    for what each method does — here they are coroutines."""

    def __init__(self, client: AsyncClient) -> None:
        self._c = client

    async def create(self, manifest: Mapping[str, Any], *, namespace: str | None = None) -> Run:
        """Creates a Run from a whole manifest (see :meth:`kruntimes.client.Runs.create`)."""
        body = dict(manifest)
        meta = dict(body.get("metadata") or {})
        ns = meta.get("namespace") or self._c._ns(namespace)
        meta["namespace"] = ns
        body["metadata"] = meta
        body.setdefault("apiVersion", spec.API_VERSION)
        body.setdefault("kind", "Run")
        what = f"create run {meta.get('name') or meta.get('generateName', '')} in namespace {ns!r}"
        kube = await self._c._kube()
        return Run.from_dict(await kube.request("POST", runs_path(ns), what, body=body))

    async def create_task(
        self,
        runtime: str,
        script: str | None = None,
        *,
        entrypoint: str | None = None,
        args: Sequence[str] | None = None,
        env: Mapping[str, str] | None = None,
        name: str | None = None,
        timeout: Duration | None = None,
        retries: int | None = None,
        ttl_seconds: int | None = None,
        labels: Mapping[str, str] | None = None,
        namespace: str | None = None,
    ) -> Run:
        """Creates a task Run (see :meth:`kruntimes.client.Runs.create_task`)."""
        ns = self._c._ns(namespace)
        return await self.create(spec.task_run(ns, runtime, script=script, entrypoint=entrypoint, args=args, env=env,
                                               name=name, timeout=timeout, retries=retries, ttl_seconds=ttl_seconds,
                                               labels=labels), namespace=ns)

    async def create_function(
        self,
        runtime: str,
        source: str,
        *,
        handler: str | None = None,
        concurrency: int | None = None,
        idle_timeout: Duration | None = None,
        invocation_timeout: Duration | None = None,
        max_request_bytes: int | None = None,
        max_response_bytes: int | None = None,
        env: Mapping[str, str] | None = None,
        name: str | None = None,
        timeout: Duration | None = None,
        retries: int | None = None,
        ttl_seconds: int | None = None,
        labels: Mapping[str, str] | None = None,
        namespace: str | None = None,
        wait: bool = False,
        wait_timeout: float | None = None,
    ) -> Run:
        """Creates a function Run (see :meth:`kruntimes.client.Runs.create_function`)."""
        ns = self._c._ns(namespace)
        run = await self.create(spec.function_run(
            ns, runtime, source, handler=handler, concurrency=concurrency, idle_timeout=idle_timeout,
            invocation_timeout=invocation_timeout, max_request_bytes=max_request_bytes,
            max_response_bytes=max_response_bytes, env=env, name=name, timeout=timeout, retries=retries,
            ttl_seconds=ttl_seconds, labels=labels), namespace=ns)
        return await self.wait_ready(run.name, timeout=wait_timeout, namespace=ns) if wait else run

    async def create_session(
        self,
        runtime: str = "bash",
        *,
        idle_timeout: Duration | None = None,
        default_operation_timeout: Duration | None = None,
        max_operation_timeout: Duration | None = None,
        max_queued_operations: int | None = None,
        env: Mapping[str, str] | None = None,
        name: str | None = None,
        timeout: Duration | None = None,
        ttl_seconds: int | None = None,
        labels: Mapping[str, str] | None = None,
        namespace: str | None = None,
    ) -> Run:
        """Creates a session Run (see :meth:`kruntimes.client.Runs.create_session`)."""
        ns = self._c._ns(namespace)
        return await self.create(spec.session_run(
            ns, runtime, idle_timeout=idle_timeout, default_operation_timeout=default_operation_timeout,
            max_operation_timeout=max_operation_timeout, max_queued_operations=max_queued_operations, env=env,
            name=name, timeout=timeout, ttl_seconds=ttl_seconds, labels=labels), namespace=ns)

    async def get(self, name: str, *, namespace: str | None = None) -> Run:
        """Reads a Run (:class:`NotFound` when there is none)."""
        ns = self._c._ns(namespace)
        kube = await self._c._kube()
        return Run.from_dict(await kube.request("GET", runs_path(ns, name), f"get run {ns}/{name}"))

    async def list(self, *, namespace: str | None = None, label_selector: str | None = None) -> list[Run]:
        """Lists the Runs of the namespace."""
        ns = self._c._ns(namespace)
        kube = await self._c._kube()
        doc = await kube.request("GET", runs_path(ns), f"list runs in namespace {ns!r}",
                                 query={"labelSelector": label_selector})
        return [Run.from_dict(i) for i in doc.get("items") or []]

    async def wait(self, name: str, *, timeout: float | None = None, until: Callable[[Run], bool] | None = None,
                   namespace: str | None = None) -> Run:
        """Waits by watching until the Run finished or ``until(run)`` (see
        :meth:`kruntimes.client.Runs.wait`)."""
        return await self._wait(self._c._ns(namespace), name, until, timeout)

    async def _wait(self, ns: str, name: str, until: Callable[[Run], bool] | None, timeout: float | None,
                    on_update: Callable[[Run], None] | None = None) -> Run:
        deadline = None if timeout is None else time.monotonic() + timeout
        kube = await self._c._kube()

        def done(run: Run) -> bool:
            if on_update:
                on_update(run)
            return run.finished or bool(until and until(run))

        while True:
            last = await self.get(name, namespace=ns)
            if done(last):
                return last
            rv = last.resource_version
            expired = False
            while not expired:
                remaining = None if deadline is None else deadline - time.monotonic()
                if remaining is not None and remaining <= 0:
                    raise _wait_timeout(name, timeout, last, until is not None)
                secs = WATCH_SECONDS if remaining is None else max(1, min(WATCH_SECONDS, int(remaining + 0.999)))
                stream = kube.lines(runs_path(ns), f"watch run {ns}/{name}", {
                    "watch": "true", "fieldSelector": f"metadata.name={name}", "resourceVersion": rv,
                    "timeoutSeconds": secs, "allowWatchBookmarks": "true"})
                try:
                    async for text in stream:
                        ev = json.loads(text)
                        kind, obj = ev.get("type"), ev.get("object") or {}
                        if kind == "ERROR":
                            if obj.get("code") == 410:
                                expired = True
                                break
                            raise from_kube_status(int(obj.get("code") or 500), json.dumps(obj),
                                                   f"watch run {ns}/{name}")
                        rv = (obj.get("metadata") or {}).get("resourceVersion") or rv
                        if kind == "BOOKMARK":
                            continue
                        if kind == "DELETED":
                            raise NotFound(f"run {name!r} was deleted while waiting for it")
                        last = Run.from_dict(obj)
                        if done(last):
                            return last
                finally:
                    await stream.aclose()  # type: ignore[attr-defined]

    async def wait_ready(self, name: str, *, timeout: float | None = None, namespace: str | None = None) -> Run:
        """Waits until a function or session Run is Ready (:class:`RunEnded` if it ended first)."""
        run = await self.wait(name, timeout=timeout, until=lambda r: r.ready, namespace=namespace)
        if not run.ready:
            raise _ended_before_ready(run)
        return run

    async def result(self, name: str, *, timeout: float | None = None, namespace: str | None = None) -> TaskResult:
        """Waits until a task finished and returns its :class:`TaskResult`."""
        run = await self.wait(name, timeout=timeout, namespace=namespace)
        if run.mode != "task":
            raise InvalidArgument(f"run {name!r} is a {run.mode} Run; result() is for tasks (use get())")
        return TaskResult.from_run(run)

    async def cancel(self, name: str, *, namespace: str | None = None) -> Run:
        """Asks a Run to stop now (``spec.termination.mode: Immediate``)."""
        return await self._terminate(self._c._ns(namespace), name, "Immediate")

    async def _terminate(self, ns: str, name: str, mode: str) -> Run:
        run = await self.get(name, namespace=ns)
        if run.finished:
            return run
        if mode == "Drain" and run.mode != "session":
            raise InvalidArgument(f"run {name!r} is a {run.mode} Run; only sessions drain (use cancel())")
        current = ((run.raw.get("spec") or {}).get("termination") or {}).get("mode")
        if current == "Immediate" or current == mode:
            return run
        kube = await self._c._kube()
        return Run.from_dict(await kube.request(
            "PATCH", runs_path(ns, name), f"patch run {ns}/{name}", body=spec.termination_patch(mode),
            content_type="application/merge-patch+json"))

    async def delete(self, name: str, *, namespace: str | None = None, missing_ok: bool = False) -> None:
        """Deletes a Run (:class:`NotFound` unless ``missing_ok``)."""
        ns = self._c._ns(namespace)
        kube = await self._c._kube()
        try:
            await kube.request("DELETE", runs_path(ns, name), f"delete run {ns}/{name}")
        except NotFound:
            if not missing_ok:
                raise

    def logs(self, name: str, *, follow: bool = False, attempt: int | None = None, call: str | None = None,
             timeout: float | None = None, namespace: str | None = None) -> AsyncIterator[LogLine]:
        """A Run's output line by line (``async for``); see :meth:`kruntimes.client.Runs.logs`."""
        ns = self._c._ns(namespace)
        if follow:
            return self._follow(ns, name, attempt, call, timeout)
        return self._read_named(ns, name, attempt, call)

    async def _read_named(self, ns: str, name: str, attempt: int | None, call: str | None) -> AsyncIterator[LogLine]:
        run = await self.get(name, namespace=ns)
        async for line in self._read(run, attempt, None, True, call):
            yield line

    async def _pod_lines(self, run: Run, pod: str, follow: bool) -> AsyncIterator[str]:
        kube = await self._c._kube()
        async for text in kube.lines(core_path(run.namespace, "pods", pod, "log"),
                                     f"read the log of pod {run.namespace}/{pod}",
                                     {"container": lg.RUNTIMED_CONTAINER, "follow": "true" if follow else None,
                                      "sinceTime": lg.since_creation(run)}):
            yield text

    async def _read(self, run: Run, attempt: int | None, before: int | None, tail_fallback: bool,
                    call: str | None) -> AsyncIterator[LogLine]:
        lg.check_attempt(run, attempt)
        latest = lg.latest_attempt(run)
        if latest == 0:
            return
        a = run.assignment or {}

        def wants(n: int) -> bool:
            return (attempt is None or n == attempt) and (before is None or n < before)

        pods = [a["pod"]] if a.get("pod") else []
        if any(wants(n) and n != a.get("attempt") for n in range(1, latest + 1)):
            try:
                kube = await self._c._kube()
                doc = await kube.request("GET", core_path(run.namespace, "pods"), "list pods",
                                         query={"labelSelector": f"{lg.RUNTIME_LABEL}={run.runtime}"})
                pods += [p["metadata"]["name"] for p in doc.get("items") or [] if p["metadata"]["name"] not in pods]
            except KruntimesError:
                pass
        by_attempt: dict[int, list[LogLine]] = {}
        for pod in pods:
            try:
                async for text in self._pod_lines(run, pod, False):
                    rec = lg.parse_output_line(text)
                    if rec and lg.matches(rec, run.uid) and wants(rec.attempt):
                        by_attempt.setdefault(rec.attempt, []).append(rec.to_line())
            except (NotFound, InvalidArgument):
                pass
        for n in sorted(by_attempt):
            for line in by_attempt[n]:
                if call is None or line.call == call:
                    yield line
        if wants(latest) and latest not in by_attempt and tail_fallback and run.finished:
            for line in lg.tails(run, call):
                yield line

    async def _follow(self, ns: str, name: str, attempt: int | None, call: str | None,
                      timeout: float | None) -> AsyncIterator[LogLine]:
        first = await self.get(name, namespace=ns)
        current = int((first.assignment or {}).get("attempt") or 0)
        if first.finished or (attempt is not None and attempt < current):
            async for line in self._read(first, attempt, None, True, call):
                yield line
            return
        if attempt is None and current > 1:
            async for line in self._read(first, None, current, False, call):
                yield line
        events: asyncio.Queue[tuple[Any, ...]] = asyncio.Queue()
        followers: list[_AsyncFollower] = []
        state: dict[str, _AsyncFollower | None] = {"f": None}
        loop = asyncio.get_running_loop()

        def on_run(run: Run) -> None:
            a = run.assignment
            if not a or (attempt is not None and a.get("attempt") != attempt):
                return
            f = state["f"]
            if f is not None and f.pod == a["pod"] and f.attempt == a["attempt"]:
                return
            if f is not None:
                loop.call_later(1.0, f.stop)
            nf = _AsyncFollower(self, run, a["pod"], int(a["attempt"]), events)
            followers.append(nf)
            state["f"] = nf

        async def watcher() -> None:
            try:
                final = await self._wait(ns, name, None, timeout, on_run)
                events.put_nowait(("done", final))
            except asyncio.CancelledError:
                raise
            except BaseException as e:
                events.put_nowait(("error", e))

        on_run(first)
        watch = asyncio.ensure_future(watcher())
        try:
            final: Run | None = None
            while final is None:
                ev = await events.get()
                if ev[0] == "line":
                    for line in _emit(ev[1], ev[2], call):
                        yield line
                elif ev[0] == "error":
                    raise ev[1]
                elif ev[0] == "done":
                    final = ev[1]
            f = state["f"]
            if f is None:
                async for line in self._read(final, attempt, None, True, call):
                    yield line
                return
            started = time.monotonic()
            while not f.ended and time.monotonic() - started < _DRAIN_MAX:
                if lg.caught_up(final, f.last) if lg.has_tails(final) else time.monotonic() - f.last_at >= _QUIET:
                    break
                try:
                    ev = await asyncio.wait_for(events.get(), 0.02)
                except asyncio.TimeoutError:
                    continue
                if ev[0] == "line":
                    for line in _emit(ev[1], ev[2], call):
                        yield line
            f.stop()
            while not events.empty():
                ev = events.get_nowait()
                if ev[0] == "line" and ev[1] is f:
                    for line in _emit(ev[1], ev[2], call):
                        yield line
            if f.error is not None:
                raise f.error
            if f.lines == 0 and f.attempt == (final.attempt or f.attempt):
                for line in lg.tails(final, call):
                    yield line
        finally:
            watch.cancel()
            for fl in followers:
                fl.stop()


_QUIET = 0.3
_DRAIN_MAX = 3.0


def _emit(f: _AsyncFollower, rec: lg.OutputRecord, call: str | None) -> list[LogLine]:
    f.lines += 1
    if not rec.audit:
        f.last[rec.stream] = rec.line
    f.last_at = time.monotonic()
    return [rec.to_line()] if call is None or rec.call == call else []


class _AsyncFollower:
    """Streams one attempt's output live from runtimed's log on its pod, in a task."""

    def __init__(self, runs: AsyncRuns, run: Run, pod: str, attempt: int,
                 events: asyncio.Queue[tuple[Any, ...]]) -> None:
        self.runs, self.run, self.pod, self.attempt, self.events = runs, run, pod, attempt, events
        self.lines = 0
        self.last: dict[str, str] = {}
        self.last_at = time.monotonic()
        self.ended = False
        self.gone = False
        self.error: BaseException | None = None
        self._stopped = False
        self._task = asyncio.ensure_future(self._pump())

    async def _pump(self) -> None:
        try:
            async for text in self.runs._pod_lines(self.run, self.pod, True):
                rec = lg.parse_output_line(text)
                if rec and lg.matches(rec, self.run.uid, self.attempt):
                    self.events.put_nowait(("line", self, rec))
        except (NotFound, InvalidArgument):
            self.gone = True
        except asyncio.CancelledError:
            pass
        except BaseException as e:
            if not self._stopped:
                self.error = e
        finally:
            self.ended = True

    def stop(self) -> None:
        self._stopped = True
        self._task.cancel()


class AsyncFunctions:
    """Calls function Runs through the gateway (``client.functions``); see
    :class:`kruntimes.client.Functions`."""

    def __init__(self, client: AsyncClient) -> None:
        self._c = client

    async def invoke(self, name: str, body: bytes | str = b"", *, content_type: str | None = None,
                     headers: Mapping[str, str] | None = None, timeout: float | None = None,
                     namespace: str | None = None) -> InvokeResult:
        """Calls a Ready function Run once (see :meth:`kruntimes.client.Functions.invoke`)."""
        c = self._c
        req = cv.invoke_request(c._ns(namespace), name, body, content_type, headers)
        g = await c._gateway()
        res = await c._unary(g.functions.invoke, req, cv.timeout_ms("timeout", timeout) or None)
        return cv.invoke_result(res)

    async def invoke_json(self, name: str, obj: Any = None, *, headers: Mapping[str, str] | None = None,
                          timeout: float | None = None, namespace: str | None = None) -> Any:
        """Calls a function with a JSON body and returns its JSON response, parsed."""
        res = await self.invoke(name, cv.json_body(obj), content_type="application/json", headers=headers,
                                timeout=timeout, namespace=namespace)
        return res.json()


class AsyncSessions:
    """Creates and opens session Runs (``client.sessions``); see :class:`kruntimes.client.Sessions`."""

    def __init__(self, client: AsyncClient) -> None:
        self._c = client

    async def create(
        self,
        runtime: str = "bash",
        *,
        idle_timeout: Duration | None = None,
        default_operation_timeout: Duration | None = None,
        max_operation_timeout: Duration | None = None,
        max_queued_operations: int | None = None,
        env: Mapping[str, str] | None = None,
        name: str | None = None,
        timeout: Duration | None = None,
        ttl_seconds: int | None = None,
        labels: Mapping[str, str] | None = None,
        namespace: str | None = None,
        wait: bool = True,
        wait_timeout: float | None = 120,
    ) -> AsyncSession:
        """Creates a session Run and returns its :class:`AsyncSession`, by default once Ready
        (a session not Ready within ``wait_timeout`` is cancelled and :class:`WaitTimeout`
        raised). ``async with await client.sessions.create(...) as s:`` drains it on exit."""
        run = await self._c.runs.create_session(
            runtime, idle_timeout=idle_timeout, default_operation_timeout=default_operation_timeout,
            max_operation_timeout=max_operation_timeout, max_queued_operations=max_queued_operations, env=env,
            name=name, timeout=timeout, ttl_seconds=ttl_seconds, labels=labels, namespace=namespace)
        s = AsyncSession(self._c, run)
        if wait:
            try:
                await s.wait_ready(timeout=wait_timeout)
            except BaseException:
                try:
                    await s.cancel()
                except KruntimesError:
                    pass
                raise
        return s

    async def open(self, name: str, *, wait: bool = False, wait_timeout: float | None = None,
                   namespace: str | None = None) -> AsyncSession:
        """The :class:`AsyncSession` of an existing session Run."""
        run = await self._c.runs.get(name, namespace=namespace)
        if run.mode != "session":
            raise InvalidArgument(f"run {name!r} is a {run.mode} Run, not a session")
        s = AsyncSession(self._c, run)
        if wait:
            await s.wait_ready(timeout=wait_timeout)
        return s


class AsyncSession:
    """One session Run, driven with coroutines and async iterators; see
    :class:`kruntimes.Session` for what each method does."""

    def __init__(self, client: AsyncClient, run: Run) -> None:
        self._c = client
        self.name = run.name
        self.namespace = run.namespace
        self.run = run

    def __repr__(self) -> str:
        return f"AsyncSession({self.namespace}/{self.name}, phase={self.run.phase})"

    async def __aenter__(self) -> AsyncSession:
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.close()

    async def refresh(self) -> Run:
        """Reads the Run again."""
        self.run = await self._c.runs.get(self.name, namespace=self.namespace)
        return self.run

    async def wait_ready(self, *, timeout: float | None = None) -> Run:
        """Waits until the session is Ready."""
        self.run = await self._c.runs.wait_ready(self.name, timeout=timeout, namespace=self.namespace)
        return self.run

    def _target(self) -> Any:
        return cv.target(self.namespace, self.name)

    async def _svc(self) -> session_connect.SessionServiceClient:
        return (await self._c._gateway()).sessions

    async def exec_stream(self, cmd: str | Sequence[str], *, env: Mapping[str, str] | None = None, cwd: str = "",
                          timeout: float | None = None, stdin: bytes | str | None = None) -> AsyncIterator[ExecEvent]:
        """Runs a command and yields its events as they happen (``async for``)."""
        req = cv.exec_request(self.namespace, self.name, cmd, env, cwd, timeout, stdin)
        svc = await self._svc()
        async for ev in self._c._stream(svc.exec, req):
            yield cv.exec_event(ev)

    async def exec(self, cmd: str | Sequence[str], *, env: Mapping[str, str] | None = None, cwd: str = "",
                   timeout: float | None = None, stdin: bytes | str | None = None, check: bool = False) -> ExecResult:
        """Runs a command and returns its exit code and whole output."""
        col = cv.ExecCollector()
        async for ev in self.exec_stream(cmd, env=env, cwd=cwd, timeout=timeout, stdin=stdin):
            col.add(ev)
        res = col.result()
        if check and not res.ok:
            raise _check_failed(cmd, res)
        return res

    async def cancel_operation(self, operation_id: str) -> bool:
        """Stops a queued or running command by its operation ID."""
        req = session_pb2.CancelOperationRequest(target=self._target(), operation_id=operation_id)
        return bool((await self._c._unary((await self._svc()).cancel_operation, req)).cancelled)

    async def read_file_stream(self, path: str, *, offset: int = 0, length: int = 0) -> AsyncIterator[bytes]:
        """Yields a file's bytes chunk by chunk (``async for``)."""
        req = session_pb2.ReadFileRequest(target=self._target(), path=path, offset=offset, length=length)
        svc = await self._svc()
        async for chunk in self._c._stream(svc.read_file, req):
            if chunk.data:
                yield bytes(chunk.data)

    async def read_file(self, path: str, *, offset: int = 0, length: int = 0) -> bytes:
        """A file's content."""
        out = bytearray()
        async for chunk in self.read_file_stream(path, offset=offset, length=length):
            out.extend(chunk)
        return bytes(out)

    async def read_text(self, path: str, *, encoding: str = "utf-8") -> str:
        """A file's content decoded as text."""
        return (await self.read_file(path)).decode(encoding)

    async def write_file(self, path: str, data: bytes | str | BinaryIO | Iterable[bytes] | AsyncIterable[bytes], *,
                         mode: str = "truncate", parents: bool = False, file_mode: int | None = None,
                         chunk_size: int = cv.UPLOAD_CHUNK) -> FileInfo:
        """Writes a file in chunks, committed atomically by the last one (see
        :meth:`kruntimes.Session.write_file`); ``data`` may also be an async iterable of bytes."""
        wm = cv.write_mode(mode)
        upload = cv.new_id("py")
        svc = await self._svc()
        offset = 0
        res: Any = None
        async for chunk, last in _achunks(data, chunk_size):
            req = session_pb2.WriteFileRequest(target=self._target(), path=path, upload_id=upload, offset=offset,
                                               data=chunk, mode=wm, file_mode=file_mode or 0, last=last,
                                               parents=parents)
            res = await self._c._unary(svc.write_file, req)
            offset += len(chunk)
        return cv.file_info(res.info)

    async def list_files(self, path: str = "", *, page_size: int = 100) -> AsyncIterator[FileInfo]:
        """Yields a directory's entries page after page (``async for``)."""
        svc = await self._svc()
        token = ""
        while True:
            req = session_pb2.ListFilesRequest(target=self._target(), path=path, limit=page_size, page_token=token)
            page = await self._c._unary(svc.list_files, req)
            for e in page.entries:
                yield cv.file_info(e)
            token = page.next_page_token
            if not token:
                return

    async def stat(self, path: str) -> FileInfo:
        """Describes a path."""
        req = session_pb2.StatRequest(target=self._target(), path=path)
        return cv.file_info((await self._c._unary((await self._svc()).stat, req)).info)

    async def exists(self, path: str) -> bool:
        """Whether a path exists."""
        try:
            await self.stat(path)
            return True
        except NotFound:
            return False

    async def remove(self, path: str, *, recursive: bool = False) -> bool:
        """Deletes a path; whether something was removed."""
        req = session_pb2.RemoveRequest(target=self._target(), path=path, recursive=recursive)
        return bool((await self._c._unary((await self._svc()).remove, req)).removed)

    async def make_dir(self, path: str, *, parents: bool = False, mode: int | None = None) -> FileInfo:
        """Creates a directory."""
        req = session_pb2.MakeDirRequest(target=self._target(), path=path, parents=parents, mode=mode or 0)
        return cv.file_info((await self._c._unary((await self._svc()).make_dir, req)).info)

    async def rename(self, src: str, dst: str, *, overwrite: bool = False) -> FileInfo:
        """Moves a path."""
        req = session_pb2.RenameRequest(target=self._target(), to=dst, overwrite=overwrite, **{"from": src})
        return cv.file_info((await self._c._unary((await self._svc()).rename, req)).info)

    def logs(self, *, follow: bool = False, call: str | None = None,
             timeout: float | None = None) -> AsyncIterator[LogLine]:
        """The session's output and audit records (``async for``)."""
        return self._c.runs.logs(self.name, follow=follow, call=call, timeout=timeout, namespace=self.namespace)

    async def close(self, *, wait: bool = False, timeout: float | None = None) -> Run:
        """Drains the session (``spec.termination.mode: Drain``)."""
        self.run = await self._c.runs._terminate(self.namespace, self.name, "Drain")
        if wait:
            self.run = await self._c.runs.wait(self.name, timeout=timeout, namespace=self.namespace)
        return self.run

    async def cancel(self, *, wait: bool = False, timeout: float | None = None) -> Run:
        """Ends the session now (``spec.termination.mode: Immediate``)."""
        self.run = await self._c.runs._terminate(self.namespace, self.name, "Immediate")
        if wait:
            self.run = await self._c.runs.wait(self.name, timeout=timeout, namespace=self.namespace)
        return self.run


async def _achunks(data: Any, size: int) -> AsyncIterator[tuple[bytes, bool]]:
    if hasattr(data, "__aiter__"):
        pending = bytearray()
        async for piece in data:
            pending.extend(piece.encode("utf-8") if isinstance(piece, str) else piece)
            while len(pending) > size:
                yield bytes(pending[:size]), False
                del pending[:size]
        yield bytes(pending), True
        return
    for item in cv.chunks(data, size):
        yield item
