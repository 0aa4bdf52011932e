"""The synchronous client: :class:`Client` with ``client.runs``, ``client.functions`` and
``client.sessions``. The asyncio twin is :mod:`kruntimes.aio`."""

from __future__ import annotations

import json
import os
import queue
import threading
import time
from typing import Any, BinaryIO, Callable, Iterable, Iterator, Mapping, Sequence

import pyqwest
from connectrpc.client import ResponseMetadata
from connectrpc.errors import ConnectError

from kruntimes.gateway.v1 import function_connect, session_connect, session_pb2

from . import _convert as cv
from . import _gateway as gw
from . import _logs as lg
from . import _spec as spec
from ._kube import SA_DIR, WATCH_SECONDS, Kube, core_path, kubeconfig_namespace, runs_path
from .errors import (
    ConfigError,
    InvalidArgument,
    KruntimesError,
    NotFound,
    RunEnded,
    WaitTimeout,
    from_connect_error,
    from_kube_status,
)
from .models import ExecEvent, ExecResult, FileInfo, InvokeResult, LogLine, Run, TaskResult

__all__ = ["Client", "Runs", "Functions", "Sessions", "Session", "GatewayInfo"]

Duration = spec.Duration


class GatewayInfo:
    """How the client reaches the gateway (``Client.gateway()``).

    Attributes:
        base_url: The URL requests go to (the Service's DNS name unless a URL was given).
        via: ``"url"``, ``"service"``, ``"direct <pod IP>"`` or ``"port-forward <pod>"``.
        address: The address dialled for ``base_url``'s host, when it is pinned (direct,
            port-forward), else ``""``.
    """

    def __init__(self, base_url: str, via: str, address: str) -> None:
        self.base_url = base_url
        self.via = via
        self.address = address

    def __repr__(self) -> str:
        return f"GatewayInfo(base_url={self.base_url!r}, via={self.via!r}, address={self.address!r})"


def _metadata_headers(md: ResponseMetadata) -> dict[str, str]:
    out = {k: v for k, v in md.headers().items()}
    out.update({k: v for k, v in md.trailers().items()})
    return out


def _no_token(kind: str) -> ConfigError:
    why = ("this kubeconfig user has no bearer token (it may authenticate with a client certificate, "
           "which the gateway cannot see: it checks bearer tokens with a TokenReview)")
    return ConfigError(
        f"{why}; pass token=<a token>, e.g. the output of `kubectl create token <serviceaccount> -n <namespace>` "
        f"for a ServiceAccount allowed to create runs/invoke or runs/session, or use a kubeconfig context with a token"
        if kind == "kubeconfig" else "the ServiceAccount token file is empty or missing; pass token=<a token>"
    )


class _Gateway:
    """The located gateway and its Connect clients."""

    def __init__(self, target: gw.Target) -> None:
        self.target = target
        transport = pyqwest.SyncHTTPTransport(
            tls_ca_cert=target.ca,
            tls_include_system_certs=target.system_roots,
            dns_overrides=target.dns_overrides or None,
            use_system_dns=True,
            enable_otel=False,
        )
        self.transport = transport
        http = pyqwest.SyncClient(transport)
        self.functions = function_connect.FunctionServiceClientSync(target.base_url, http_client=http)
        self.sessions = session_connect.SessionServiceClientSync(target.base_url, http_client=http)

    def info(self) -> GatewayInfo:
        addr = next(iter(self.target.dns_overrides.values()), [""])[0] if self.target.dns_overrides else ""
        return GatewayInfo(self.target.base_url, self.target.via, addr)

    def close(self) -> None:
        try:
            self.transport.close()
        finally:
            self.target.close()


class Client:
    """A kruntimes client: Runs through the Kubernetes API, function calls and sessions through
    the gateway. Use it as a context manager (or call :meth:`close`) so a port-forward it opened
    is stopped.

    ``Client()`` picks its credentials like kubectl does in each place: inside a pod (a
    ServiceAccount token is mounted and ``KUBERNETES_SERVICE_HOST`` is set) it is
    :meth:`in_cluster`, else :meth:`from_kubeconfig` (``$KUBECONFIG`` or ``~/.kube/config``).
    The keyword arguments are those of the chosen constructor.

    Attributes:
        namespace: The namespace Runs are created in and looked up in (each method takes
            ``namespace=`` to override it).
        runs: Create, read, wait for, cancel, delete Runs and read their logs (:class:`Runs`).
        functions: Call function Runs (:class:`Functions`).
        sessions: Create and open session Runs (:class:`Sessions`).

    Example::

        from kruntimes import Client

        with Client() as client:
            run = client.runs.create_task("bash", "echo hello")
            print(client.runs.result(run.name).stdout_tail)
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
        _kube: Kube | None = None,
        _in_cluster: bool | None = None,
    ) -> None:
        gw.check_via(via)
        if _kube is None:
            if kubeconfig is None and context is None and gw.in_pod():
                _kube, _in_cluster = Kube.in_cluster(), True
            else:
                if namespace is None:
                    namespace = kubeconfig_namespace(kubeconfig, context)
                _kube, _in_cluster = Kube.from_kubeconfig(kubeconfig, context), False
        self._kube = _kube
        self._in_cluster = bool(_in_cluster)
        if namespace is None:
            if self._in_cluster:
                namespace = _read_sa_namespace(SA_DIR)
            else:
                namespace = kubeconfig_namespace(kubeconfig, context)
        self.namespace: str = namespace
        self._gateway_url = gateway_url if gateway_url is not None else os.environ.get("KRT_GATEWAY") or None
        self._gateway_namespace = (gateway_namespace or os.environ.get("KRT_GATEWAY_NAMESPACE") or "kruntimes")
        self._via = via
        self._ca_file = ca_file
        self._token = token
        self._kubectl = kubectl or os.environ.get("KRT_KUBECTL") or "kubectl"
        self._gw: _Gateway | None = None
        self._lock = threading.Lock()
        self._closed = False
        self.runs = Runs(self)
        self.functions = Functions(self)
        self.sessions = Sessions(self)

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
    ) -> Client:
        """A client for code running in a pod: the pod's ServiceAccount token for the Kubernetes
        API and the gateway, the API server from ``KUBERNETES_SERVICE_HOST``/``_PORT``.

        Args:
            namespace: Namespace of the Runs; default: the pod's own namespace.
            gateway_url: Call the gateway here instead of finding its Service.
            gateway_namespace: Where the gateway Service is (default ``$KRT_GATEWAY_NAMESPACE``,
                else ``"kruntimes"``).
            via: ``"service"`` (default: the Service's DNS name ``<service>.<namespace>.svc``)
                or ``"direct"`` (a gateway pod's IP); both verify the certificate for the
                Service's name with the chart's CA.
            ca_file: PEM bundle to verify the gateway with, instead of the chart's CA ConfigMap.
            token: Bearer token for the gateway instead of the ServiceAccount's.
            service_account_dir: Where the token, ``ca.crt`` and ``namespace`` files are mounted.

        Raises:
            ConfigError: not in a pod (no token file or no ``KUBERNETES_SERVICE_HOST``).
        """
        kube = Kube.in_cluster(service_account_dir)
        ns = namespace or _read_sa_namespace(service_account_dir)
        return cls(namespace=ns, gateway_url=gateway_url, gateway_namespace=gateway_namespace, via=via,
                   ca_file=ca_file, token=token, _kube=kube, _in_cluster=True)

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
    ) -> Client:
        """A client from a kubeconfig file, with its credentials (token, client certificate, exec
        plugin, …) for the Kubernetes API and its bearer token for the gateway.

        Args:
            path: The kubeconfig; default ``$KUBECONFIG``, else ``~/.kube/config``.
            context: A context of it; default its current context.
            namespace: Namespace of the Runs; default the context's namespace, else ``default``.
            gateway_url: Call the gateway here (an Ingress, a LoadBalancer, your own
                port-forward) instead of finding it; default ``$KRT_GATEWAY``.
            gateway_namespace: Where the gateway Service is; default ``$KRT_GATEWAY_NAMESPACE``,
                else ``"kruntimes"``.
            via: ``"auto"`` (a gateway pod's IP when it answers, else a port-forward),
                ``"direct"``, ``"port-forward"`` or ``"service"`` (the Service's DNS name, when
                this machine resolves cluster DNS).
            ca_file: PEM bundle to verify the gateway with, instead of the chart's CA.
            token: Bearer token for the gateway, for a kubeconfig whose user has none (client
                certificates), or to call as someone else.
            kubectl: The kubectl used for port-forwards; default ``$KRT_KUBECTL``, else
                ``kubectl`` on ``PATH``.

        Raises:
            ConfigError: the kubeconfig or context cannot be read.
        """
        gw.check_via(via)
        ns = namespace or kubeconfig_namespace(path, context)  # first: it names a missing context clearly
        return cls(namespace=ns, kubeconfig=path, context=context, gateway_url=gateway_url,
                   gateway_namespace=gateway_namespace, via=via, ca_file=ca_file, token=token,
                   kubectl=kubectl, _kube=Kube.from_kubeconfig(path, context), _in_cluster=False)

    # --- lifecycle ---

    def close(self) -> None:
        """Closes the gateway connections and stops a port-forward the client opened."""
        with self._lock:
            self._closed = True
            g, self._gw = self._gw, None
        try:
            if g is not None:
                g.close()
        finally:
            self._kube.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def gateway(self) -> GatewayInfo:
        """Finds the gateway now (it is otherwise found on the first call that needs it) and says
        how it is reached."""
        return self._gateway().info()

    # --- internals shared by Runs, Functions, Sessions ---

    def _ns(self, namespace: str | None) -> str:
        return namespace or self.namespace

    def _gateway(self) -> _Gateway:
        with self._lock:
            if self._closed:
                raise ConfigError("the client is closed")
            if self._gw is None:
                target = gw.locate(self._kube, url=self._gateway_url, namespace=self._gateway_namespace,
                                   via=self._via, ca_file=self._ca_file, kubectl=self._kubectl,
                                   in_cluster=self._in_cluster)
                self._gw = _Gateway(target)
            return self._gw

    def _auth(self) -> dict[str, str]:
        token = self._token or self._kube.bearer_token()
        if not token:
            raise _no_token(self._kube.source.kind)
        return {"authorization": f"Bearer {token}"}

    def _unary(self, method: Callable[..., Any], request: Any, timeout_ms: int | None = None) -> Any:
        headers = self._auth()
        with ResponseMetadata() as md:
            try:
                return method(request, headers=headers, timeout_ms=timeout_ms)
            except ConnectError as e:
                raise from_connect_error(e, _metadata_headers(md)) from None

    def _stream(self, method: Callable[..., Any], request: Any, timeout_ms: int | None = None) -> Iterator[Any]:
        headers = self._auth()
        with ResponseMetadata() as md:
            try:
                yield from method(request, headers=headers, timeout_ms=timeout_ms)
            except ConnectError as e:
                raise from_connect_error(e, _metadata_headers(md)) from None


def _read_sa_namespace(sa_dir: str) -> str:
    try:
        with open(os.path.join(sa_dir, "namespace"), encoding="utf-8") as f:
            return f.read().strip() or "default"
    except OSError:
        return "default"


class Runs:
    """Runs through the Kubernetes API (``client.runs``). Needs RBAC on ``runs`` in the namespace
    (create, get, list, watch, patch, delete) and, for logs, ``get`` on ``pods/log`` and ``list``
    on ``pods``."""

    def __init__(self, client: Client) -> None:
        self._c = client

    @property
    def _kube(self) -> Kube:
        return self._c._kube

    def create(self, manifest: Mapping[str, Any], *, namespace: str | None = None) -> Run:
        """Creates a Run from a whole manifest (a dict as in YAML), for fields the helpers do not
        cover. Its ``metadata.namespace`` wins over ``namespace``.

        Raises:
            AlreadyExists: a Run of that name exists.
            InvalidArgument: the API's validation refused it (the message says which rule).
        """
        body = dict(manifest)
        meta = dict(body.get("metadata") or {})
        ns = meta.get("namespace") or self._c._ns(namespace)
        meta["namespace"] = ns
        body["metadata"] = meta
        body.setdefault("apiVersion", spec.API_VERSION)
        body.setdefault("kind", "Run")
        what = f"create run {meta.get('name') or meta.get('generateName', '')} in namespace {ns!r}"
        return Run.from_dict(self._kube.request("POST", runs_path(ns), what, body=body))

    def create_task(
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
        """Creates a task Run: a script or command run once on a warm pod of ``runtime``.

        Exactly one input: ``script`` (a standalone inline script run by the Runtime's
        interpreter; pass values through ``env``), ``entrypoint`` (a script file in the runtime
        container, with ``args``), or ``args`` alone (shell command lines, for bash-like runtimes).

        Args:
            runtime: Name of the Runtime in the namespace (the chart ships ``bash`` and ``python``).
            script: The inline script.
            entrypoint: A script file in the runtime container.
            args: Its arguments, or shell commands without an entrypoint.
            env: Environment variables of the task.
            name: The Run's name; default generated (``<runtime>-xxxxx``).
            timeout: Longest one attempt may run (``"30s"`` or seconds).
            retries: Attempts after the first one (``retryPolicy.maxAttempts`` = retries + 1).
            ttl_seconds: Delete the Run this long after it finished.
            labels: Labels of the Run.
            namespace: Override the client's namespace.

        Returns:
            The created Run (phase Pending). Follow it with :meth:`wait`, :meth:`result`,
            :meth:`logs`.
        """
        ns = self._c._ns(namespace)
        return self.create(spec.task_run(ns, runtime, script=script, entrypoint=entrypoint, args=args, env=env,
                                         name=name, timeout=timeout, retries=retries, ttl_seconds=ttl_seconds,
                                         labels=labels), namespace=ns)

    def create_function(
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
        """Creates a function Run: ``source`` loaded once on a warm pod, its ``handler`` serving
        invocations through the gateway (:meth:`Functions.invoke`) while the Run is Ready.

        Args:
            runtime: ``python`` (``def handler(request): …``) or ``bash`` (a shell function that
                reads the body on stdin and writes the response to stdout), or your own Runtime.
            source: The module (python) or script (bash) defining the handler.
            handler: The handler's name; default ``handler``.
            concurrency: Invocations served at once (1–64; default 1).
            idle_timeout: End the Run after this long without a call.
            invocation_timeout: Default and longest time of one call (at most 15m).
            max_request_bytes: Largest request body (default 1 MiB, at most 16 MiB).
            max_response_bytes: Largest response body (default 1 MiB, at most 16 MiB).
            env: Environment variables of the workers.
            name: The Run's name; default generated.
            timeout: The Run's whole lifetime.
            retries: Attempts after the first (``RegistrationFailed`` is retried only when listed
                in a retryPolicy you write with :meth:`create`).
            ttl_seconds: Delete the Run this long after it ended.
            labels: Labels of the Run.
            namespace: Override the client's namespace.
            wait: Return only once the Run is Ready (see :meth:`wait_ready`).
            wait_timeout: With ``wait``: give up after this many seconds.

        Raises:
            RunEnded: with ``wait``, the Run ended before it was Ready (e.g. its source does not
                load: reason ``RegistrationFailed``, the error in ``run.message``).
        """
        ns = self._c._ns(namespace)
        run = self.create(spec.function_run(
            ns, runtime, source, handler=handler, concurrency=concurrency, idle_timeout=idle_timeout,
            invocation_timeout=invocation_timeout, max_request_bytes=max_request_bytes,
            max_response_bytes=max_response_bytes, env=env, name=name, timeout=timeout, retries=retries,
            ttl_seconds=ttl_seconds, labels=labels), namespace=ns)
        return self.wait_ready(run.name, timeout=wait_timeout, namespace=ns) if wait else run

    def create_session(
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
        """Creates a session Run and returns it (Pending). :meth:`Sessions.create` does the same
        and returns a :class:`Session` to drive it.

        Args:
            runtime: The Runtime whose warm pod the session holds alone.
            idle_timeout: Drain and end the session after this long without an operation.
            default_operation_timeout: Timeout of an operation that asks for none (default 5m).
            max_operation_timeout: Longest timeout an operation may ask for (default, max 60m).
            max_queued_operations: Mutations that may wait behind the running one (default 64).
            env: Environment of the session's commands.
            name: The Run's name; default generated (``<runtime>-session-xxxxx``).
            timeout: The session's whole lifetime.
            ttl_seconds: Delete the Run this long after it ended.
            labels: Labels of the Run.
            namespace: Override the client's namespace.
        """
        ns = self._c._ns(namespace)
        return self.create(spec.session_run(
            ns, runtime, idle_timeout=idle_timeout, default_operation_timeout=default_operation_timeout,
            max_operation_timeout=max_operation_timeout, max_queued_operations=max_queued_operations, env=env,
            name=name, timeout=timeout, ttl_seconds=ttl_seconds, labels=labels), namespace=ns)

    def get(self, name: str, *, namespace: str | None = None) -> Run:
        """Reads a Run.

        Raises:
            NotFound: no such Run.
        """
        ns = self._c._ns(namespace)
        return Run.from_dict(self._kube.request("GET", runs_path(ns, name), f"get run {ns}/{name}"))

    def list(self, *, namespace: str | None = None, label_selector: str | None = None) -> list[Run]:
        """Lists the Runs of the namespace (optionally those matching ``label_selector``)."""
        ns = self._c._ns(namespace)
        doc = self._kube.request("GET", runs_path(ns), f"list runs in namespace {ns!r}",
                                 query={"labelSelector": label_selector})
        return [Run.from_dict(i) for i in doc.get("items") or []]

    def wait(
        self,
        name: str,
        *,
        timeout: float | None = None,
        until: Callable[[Run], bool] | None = None,
        namespace: str | None = None,
    ) -> Run:
        """Waits until the Run finished (Succeeded, Failed, Timeout, Cancelled) — or until
        ``until(run)`` is true — by watching it (one GET, then a watch from its resourceVersion,
        re-established when the server ends it; nothing polls).

        Args:
            name: The Run.
            timeout: Give up after this many seconds (default: wait as long as it takes).
            until: Also stop at a state of your choice, e.g. ``lambda r: r.ready``.
            namespace: Override the client's namespace.

        Returns:
            The Run as last seen.

        Raises:
            WaitTimeout: ``timeout`` passed first (the Run keeps going; ``e.run`` is the last
                version seen).
            NotFound: the Run does not exist, or was deleted while waiting.
        """
        return self._wait(self._c._ns(namespace), name, until, timeout)

    def _wait(self, ns: str, name: str, until: Callable[[Run], bool] | None, timeout: float | None,
              on_update: Callable[[Run], None] | None = None, holder: list[Any] | None = None,
              stop: threading.Event | None = None) -> Run:
        deadline = None if timeout is None else time.monotonic() + timeout
        last: Run | None = None

        def done(run: Run) -> bool:
            if on_update:
                on_update(run)
            return run.finished or bool(until and until(run))

        while True:
            last = self.get(name, namespace=ns)
            if done(last):
                return last
            rv = last.resource_version
            expired = False
            while not expired:
                remaining = None if deadline is None else deadline - time.monotonic()
                if remaining is not None and remaining <= 0:
                    raise _wait_timeout(name, timeout, last, until is not None)
                if stop is not None and stop.is_set():
                    return last
                secs = WATCH_SECONDS if remaining is None else max(1, min(WATCH_SECONDS, int(remaining + 0.999)))
                stream = self._kube.lines(runs_path(ns), f"watch run {ns}/{name}", {
                    "watch": "true", "fieldSelector": f"metadata.name={name}", "resourceVersion": rv,
                    "timeoutSeconds": secs, "allowWatchBookmarks": "true"})
                if holder is not None:
                    holder[:] = [stream]
                for text in stream:
                    ev = json.loads(text)
                    kind, obj = ev.get("type"), ev.get("object") or {}
                    if kind == "ERROR":
                        if obj.get("code") == 410:
                            expired = True  # the resourceVersion is too old: GET again
                            break
                        raise from_kube_status(int(obj.get("code") or 500), json.dumps(obj), f"watch run {ns}/{name}")
                    rv = (obj.get("metadata") or {}).get("resourceVersion") or rv
                    if kind == "BOOKMARK":
                        continue
                    if kind == "DELETED":
                        raise NotFound(f"run {name!r} was deleted while waiting for it")
                    last = Run.from_dict(obj)
                    if done(last):
                        stream.close()
                        return last
                stream.close()

    def wait_ready(self, name: str, *, timeout: float | None = None, namespace: str | None = None) -> Run:
        """Waits until a function or session Run is Ready.

        Raises:
            RunEnded: the Run ended first (``e.run`` says how: phase, reason, message).
            WaitTimeout: ``timeout`` seconds passed first.
        """
        run = self.wait(name, timeout=timeout, until=lambda r: r.ready, namespace=namespace)
        if not run.ready:
            raise _ended_before_ready(run)
        return run

    def result(self, name: str, *, timeout: float | None = None, namespace: str | None = None) -> TaskResult:
        """Waits until a task Run finished and returns how: phase, reason, exit code, outputs,
        the tails of stdout and stderr.

        Raises:
            InvalidArgument: the Run is not a task.
            WaitTimeout: ``timeout`` seconds passed first.
        """
        run = self.wait(name, timeout=timeout, namespace=namespace)
        if run.mode != "task":
            raise InvalidArgument(f"run {name!r} is a {run.mode} Run; result() is for tasks (use get())")
        return TaskResult.from_run(run)

    def cancel(self, name: str, *, namespace: str | None = None) -> Run:
        """Asks a Run to stop now (``spec.termination.mode: Immediate``): a task is killed, a
        function unregistered, a session closed at once; it ends Cancelled. A Run that already
        ended is left alone. Returns the Run (wait for the end with :meth:`wait`)."""
        return self._terminate(self._c._ns(namespace), name, "Immediate")

    def _terminate(self, ns: str, name: str, mode: str) -> Run:
        run = self.get(name, namespace=ns)
        if run.finished:
            return run
        if mode == "Drain" and run.mode != "session":
            raise InvalidArgument(f"run {name!r} is a {run.mode} Run; only sessions drain (use cancel())")
        current = ((run.raw.get("spec") or {}).get("termination") or {}).get("mode")
        if current == "Immediate" or current == mode:
            return run
        return Run.from_dict(self._kube.request(
            "PATCH", runs_path(ns, name), f"patch run {ns}/{name}", body=spec.termination_patch(mode),
            content_type="application/merge-patch+json"))

    def delete(self, name: str, *, namespace: str | None = None, missing_ok: bool = False) -> None:
        """Deletes a Run (a running one is stopped; a function drains its calls first).

        Raises:
            NotFound: no such Run (unless ``missing_ok``).
        """
        ns = self._c._ns(namespace)
        try:
            self._kube.request("DELETE", runs_path(ns, name), f"delete run {ns}/{name}")
        except NotFound:
            if not missing_ok:
                raise

    def logs(
        self,
        name: str,
        *,
        follow: bool = False,
        attempt: int | None = None,
        call: str | None = None,
        timeout: float | None = None,
        namespace: str | None = None,
    ) -> Iterator[LogLine]:
        """A Run's output, line by line, from runtimed's log on its pod (what ``krt logs`` shows).

        All attempts by default (earlier attempts are looked up on the Runtime's pods that still
        exist), or one (``attempt``). A function's lines carry their invocation and a session's
        their operation in ``LogLine.call``; ``call=`` keeps only the lines of one. When the
        latest attempt's records are gone but the Run ended, the status tails are returned
        (``LogLine.from_tail``).

        Args:
            name: The Run.
            follow: Return what was written, then follow the output live until the Run ends
                (moving to the next attempt's pod on a retry).
            attempt: Only this attempt (1, 2, …).
            call: Only the lines of this invocation or operation ID.
            timeout: With ``follow``: stop waiting for the end after this many seconds
                (:class:`WaitTimeout`).
            namespace: Override the client's namespace.
        """
        ns = self._c._ns(namespace)
        if follow:
            return self._follow(ns, name, attempt, call, timeout)
        return self._read(self.get(name, namespace=ns), attempt, None, True, call)

    def _pod_lines(self, run: Run, pod: str, follow: bool) -> Any:
        return self._kube.lines(core_path(run.namespace, "pods", pod, "log"), f"read the log of pod {run.namespace}/{pod}",
                                {"container": lg.RUNTIMED_CONTAINER, "follow": "true" if follow else None,
                                 "sinceTime": lg.since_creation(run)})

    def _read(self, run: Run, attempt: int | None, before: int | None, tail_fallback: bool,
              call: str | None) -> Iterator[LogLine]:
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
                doc = self._kube.request("GET", core_path(run.namespace, "pods"), "list pods",
                                         query={"labelSelector": f"{lg.RUNTIME_LABEL}={run.runtime}"})
                pods += [p["metadata"]["name"] for p in doc.get("items") or [] if p["metadata"]["name"] not in pods]
            except KruntimesError:
                pass  # without list on pods, earlier attempts are searched on the current pod only
        by_attempt: dict[int, list[LogLine]] = {}
        for pod in pods:
            try:
                for text in self._pod_lines(run, pod, False):
                    rec = lg.parse_output_line(text)
                    if rec and lg.matches(rec, run.uid) and wants(rec.attempt):
                        by_attempt.setdefault(rec.attempt, []).append(rec.to_line())
            except (NotFound, InvalidArgument):
                pass  # the pod (or its runtimed container) is gone
        for n in sorted(by_attempt):
            for line in by_attempt[n]:
                if call is None or line.call == call:
                    yield line
        if wants(latest) and latest not in by_attempt and tail_fallback and run.finished:
            yield from lg.tails(run, call)

    def _follow(self, ns: str, name: str, attempt: int | None, call: str | None,
                timeout: float | None) -> Iterator[LogLine]:
        first = self.get(name, namespace=ns)
        current = int((first.assignment or {}).get("attempt") or 0)
        if first.finished or (attempt is not None and attempt < current):
            yield from self._read(first, attempt, None, True, call)
            return
        if attempt is None and current > 1:
            yield from self._read(first, None, current, False, call)
        events: queue.Queue[tuple[Any, ...]] = queue.Queue()
        stop = threading.Event()
        holder: list[Any] = []
        followers: list[_Follower] = []
        state: dict[str, _Follower | None] = {"f": None}

        def on_run(run: Run) -> None:
            a = run.assignment
            if not a or (attempt is not None and a.get("attempt") != attempt):
                return
            f = state["f"]
            if f is not None and f.pod == a["pod"] and f.attempt == a["attempt"]:
                return
            if f is not None:
                grace = threading.Timer(1.0, f.stop)  # the old attempt's last lines may still come
                grace.daemon = True
                grace.start()
            nf = _Follower(self, run, a["pod"], int(a["attempt"]), events)
            followers.append(nf)
            state["f"] = nf
            nf.start()

        def watcher() -> None:
            try:
                final = self._wait(ns, name, None, timeout, lambda r: events.put(("run", r)), holder, stop)
                events.put(("done", final))
            except BaseException as e:  # handed to the iterating thread
                events.put(("error", e))

        on_run(first)
        threading.Thread(target=watcher, daemon=True).start()
        try:
            final: Run | None = None
            while final is None:
                ev = events.get()
                if ev[0] == "line":
                    yield from _emit(ev[1], ev[2], call)
                elif ev[0] == "run":
                    on_run(ev[1])
                elif ev[0] == "error":
                    raise ev[1]
                elif ev[0] == "done":
                    final = ev[1]
            f = state["f"]
            if f is None:
                yield from self._read(final, attempt, None, True, call)
                return
            started = time.monotonic()
            while not f.ended and time.monotonic() - started < _DRAIN_MAX:
                if lg.caught_up(final, f.last) if lg.has_tails(final) else time.monotonic() - f.last_at >= _QUIET:
                    break
                try:
                    ev = events.get(timeout=0.02)
                except queue.Empty:
                    continue
                if ev[0] == "line":
                    yield from _emit(ev[1], ev[2], call)
            f.stop()
            while True:
                try:
                    ev = events.get_nowait()
                except queue.Empty:
                    break
                if ev[0] == "line" and ev[1] is f:
                    yield from _emit(ev[1], ev[2], call)
            if f.error is not None:
                raise f.error
            if f.lines == 0 and f.attempt == (final.attempt or f.attempt):
                yield from lg.tails(final, call)
        finally:
            stop.set()
            for s in holder:
                s.close()
            for f in followers:
                f.stop()


_QUIET = 0.3
_DRAIN_MAX = 3.0


def _emit(f: _Follower, rec: lg.OutputRecord, call: str | None) -> Iterator[LogLine]:
    f.lines += 1
    if not rec.audit:
        f.last[rec.stream] = rec.line
    f.last_at = time.monotonic()
    if call is None or rec.call == call:
        yield rec.to_line()


class _Follower:
    """Streams one attempt's output live from runtimed's log on its pod, on a thread."""

    def __init__(self, runs: Runs, run: Run, pod: str, attempt: int, events: queue.Queue[tuple[Any, ...]]) -> None:
        self.runs, self.run, self.pod, self.attempt, self.events = runs, run, pod, attempt, events
        self.lines = 0
        self.last: dict[str, str] = {}
        self.last_at = time.monotonic()
        self.gone = False
        self.ended = False
        self.error: BaseException | None = None
        self._stream: Any = None
        self._stopped = threading.Event()

    def start(self) -> None:
        threading.Thread(target=self._pump, daemon=True).start()

    def _pump(self) -> None:
        try:
            self._stream = self.runs._pod_lines(self.run, self.pod, True)
            if self._stopped.is_set():
                self._stream.close()
                return
            for text in self._stream:
                rec = lg.parse_output_line(text)
                if rec and lg.matches(rec, self.run.uid, self.attempt):
                    self.events.put(("line", self, rec))
        except (NotFound, InvalidArgument):
            self.gone = True
        except BaseException as e:
            if not self._stopped.is_set():
                self.error = e
        finally:
            self.ended = True

    def stop(self) -> None:
        self._stopped.set()
        if self._stream is not None:
            self._stream.close()


def _wait_timeout(name: str, timeout: float | None, run: Run | None, until: bool) -> WaitTimeout:
    phase = run.phase if run else "Pending"
    return WaitTimeout(
        f"run {name!r} did not {'get there' if until else 'finish'} within {timeout}s (phase {phase}); "
        f"it keeps running: wait again, or stop it with runs.cancel({name!r})", run=run)


def _ended_before_ready(run: Run) -> RunEnded:
    why = f" ({run.reason})" if run.reason else ""
    msg = f": {run.message}" if run.message else ""
    return RunEnded(f"run {run.name!r} ended {run.phase}{why} before it was Ready{msg}", run=run)


class Functions:
    """Calls function Runs through the gateway (``client.functions``). Needs ``create`` on
    ``runs/invoke`` of the Run."""

    def __init__(self, client: Client) -> None:
        self._c = client

    def invoke(
        self,
        name: str,
        body: bytes | str = b"",
        *,
        content_type: str | None = None,
        headers: Mapping[str, str] | None = None,
        timeout: float | None = None,
        namespace: str | None = None,
    ) -> InvokeResult:
        """Calls a Ready function Run once and returns what its handler returned.

        Args:
            name: The function Run.
            body: The request body, passed to the handler as it is (a str is sent as UTF-8).
            content_type: Its content type; default ``application/json`` when the body parses as
                JSON, else ``application/octet-stream``.
            headers: Headers for the handler (names are lower-cased).
            timeout: Deadline of the call in seconds (default the gateway's 30 s; never more than
                the Run's ``invocationTimeout``).
            namespace: Override the client's namespace.

        Raises:
            HandlerError: the handler raised or exited non-zero (type, message, traceback).
            NotReady: the Run is not Ready, or not a function (``e.phase``, ``e.mode``).
            Busy: the function's queue or the gateway is full (``e.retry_after``).
            DeadlineExceeded: ``timeout`` passed.
            PermissionDenied, NotFound, TooLarge, Unavailable: see :mod:`kruntimes.errors`.
        """
        c = self._c
        req = cv.invoke_request(c._ns(namespace), name, body, content_type, headers)
        res = c._unary(c._gateway().functions.invoke, req, cv.timeout_ms("timeout", timeout) or None)
        return cv.invoke_result(res)

    def invoke_json(
        self,
        name: str,
        obj: Any = None,
        *,
        headers: Mapping[str, str] | None = None,
        timeout: float | None = None,
        namespace: str | None = None,
    ) -> Any:
        """Calls a function with ``obj`` as a JSON body and returns its response body parsed as
        JSON (raises ``ValueError`` when the handler did not return JSON). Errors as
        :meth:`invoke`."""
        res = self.invoke(name, cv.json_body(obj), content_type="application/json", headers=headers,
                          timeout=timeout, namespace=namespace)
        return res.json()


class Sessions:
    """Creates and opens session Runs (``client.sessions``). Driving a session needs ``create``
    on ``runs/session`` of the Run; creating one, ``create`` on ``runs``."""

    def __init__(self, client: Client) -> None:
        self._c = client

    def create(
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
    ) -> Session:
        """Creates a session Run and returns its :class:`Session`, by default once it is Ready.
        Use it as a context manager to drain it on exit::

            with client.sessions.create("bash", idle_timeout="15m") as s:
                print(s.exec("uname -a").stdout_text)

        The arguments are those of :meth:`Runs.create_session`, plus:

        Args:
            wait: Wait until the session is Ready (default); else call :meth:`Session.wait_ready`.
            wait_timeout: Seconds to wait for Ready (default 120; ``None``: as long as it takes).

        Raises:
            RunEnded: the session ended before it was Ready.
            WaitTimeout: it was not Ready in time (e.g. no free pod: a session holds a whole,
                empty pod). The session is cancelled then, so it does not take a pod later
                nobody drives; ``e.run.waiting_reason`` says why it waited.
        """
        run = self._c.runs.create_session(
            runtime, idle_timeout=idle_timeout, default_operation_timeout=default_operation_timeout,
            max_operation_timeout=max_operation_timeout, max_queued_operations=max_queued_operations, env=env,
            name=name, timeout=timeout, ttl_seconds=ttl_seconds, labels=labels, namespace=namespace)
        s = Session(self._c, run)
        if wait:
            try:
                s.wait_ready(timeout=wait_timeout)
            except BaseException:
                # A session nobody will drive should not hold its pod.
                try:
                    s.cancel()
                except KruntimesError:
                    pass
                raise
        return s

    def open(self, name: str, *, wait: bool = False, wait_timeout: float | None = None,
             namespace: str | None = None) -> Session:
        """The :class:`Session` of an existing session Run (optionally once it is Ready).

        Raises:
            NotFound: no such Run.
            InvalidArgument: the Run is not a session.
        """
        run = self._c.runs.get(name, namespace=namespace)
        if run.mode != "session":
            raise InvalidArgument(f"run {name!r} is a {run.mode} Run, not a session")
        s = Session(self._c, run)
        if wait:
            s.wait_ready(timeout=wait_timeout)
        return s


class Session:
    """One session Run: run commands, read and write files, end it. Every path is relative to
    the session's workspace and confined to it. Mutations (``exec``, ``write_file``,
    ``make_dir``, ``remove``, ``rename``) run one at a time in arrival order; reads never wait
    behind them.

    Attributes:
        name: The Run's name.
        namespace: The Run's namespace.
        run: The Run as last read (``refresh()`` reads it again).
    """

    def __init__(self, client: Client, run: Run) -> None:
        self._c = client
        self.name = run.name
        self.namespace = run.namespace
        self.run = run

    def __repr__(self) -> str:
        return f"Session({self.namespace}/{self.name}, phase={self.run.phase})"

    def __enter__(self) -> Session:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def refresh(self) -> Run:
        """Reads the Run again (phase, reason, …)."""
        self.run = self._c.runs.get(self.name, namespace=self.namespace)
        return self.run

    def wait_ready(self, *, timeout: float | None = None) -> Run:
        """Waits until the session is Ready (see :meth:`Runs.wait_ready`)."""
        self.run = self._c.runs.wait_ready(self.name, timeout=timeout, namespace=self.namespace)
        return self.run

    def _target(self) -> Any:
        return cv.target(self.namespace, self.name)

    def _svc(self) -> session_connect.SessionServiceClientSync:
        return self._c._gateway().sessions

    # --- commands ---

    def exec_stream(
        self,
        cmd: str | Sequence[str],
        *,
        env: Mapping[str, str] | None = None,
        cwd: str = "",
        timeout: float | None = None,
        stdin: bytes | str | None = None,
    ) -> Iterator[ExecEvent]:
        """Runs a command and yields its events as they happen: ``started``, ``output`` chunks
        (``stream``, ``data``), then ``exited`` (``reason``, ``exit_code``, ``signal``).

        Args:
            cmd: A shell command line (a str), or an argv (a list; ``argv[0]`` looked up in PATH).
            env: Extra environment variables.
            cwd: Working directory relative to the workspace (default the workspace).
            timeout: Operation timeout in seconds, time queued behind other mutations included
                (default the Run's ``defaultOperationTimeout``); when it passes the command is
                killed and exits with reason ``TIMEOUT``.
            stdin: Bytes (or text) on the command's stdin.

        Raises:
            Busy: the session's queue is full (``e.retry_after``).
            NotReady: the session is not Ready (Pending, Finalizing, ended).
        """
        req = cv.exec_request(self.namespace, self.name, cmd, env, cwd, timeout, stdin)
        for ev in self._c._stream(self._svc().exec, req):
            yield cv.exec_event(ev)

    def exec(
        self,
        cmd: str | Sequence[str],
        *,
        env: Mapping[str, str] | None = None,
        cwd: str = "",
        timeout: float | None = None,
        stdin: bytes | str | None = None,
        check: bool = False,
    ) -> ExecResult:
        """Runs a command and returns its exit code and whole output (see :meth:`exec_stream`
        for the arguments). A non-zero exit is not an error unless ``check`` is set.

        Raises:
            KruntimesError: with ``check``, the command did not exit 0 (its stderr in the
                message).
        """
        col = cv.ExecCollector()
        for ev in self.exec_stream(cmd, env=env, cwd=cwd, timeout=timeout, stdin=stdin):
            col.add(ev)
        res = col.result()
        if check and not res.ok:
            raise _check_failed(cmd, res)
        return res

    def cancel_operation(self, operation_id: str) -> bool:
        """Stops a queued or running command by the ``operation_id`` its events carry; whether
        one was found."""
        req = session_pb2.CancelOperationRequest(target=self._target(), operation_id=operation_id)
        return bool(self._c._unary(self._svc().cancel_operation, req).cancelled)

    # --- files ---

    def read_file_stream(self, path: str, *, offset: int = 0, length: int = 0) -> Iterator[bytes]:
        """Yields a file's bytes chunk by chunk as they are read (``length`` 0 = to the end).

        Raises:
            NotFound: no such file.
        """
        req = session_pb2.ReadFileRequest(target=self._target(), path=path, offset=offset, length=length)
        for chunk in self._c._stream(self._svc().read_file, req):
            if chunk.data:
                yield bytes(chunk.data)

    def read_file(self, path: str, *, offset: int = 0, length: int = 0) -> bytes:
        """A file's content (or ``length`` bytes of it from ``offset``; 0 = to the end)."""
        return b"".join(self.read_file_stream(path, offset=offset, length=length))

    def read_text(self, path: str, *, encoding: str = "utf-8") -> str:
        """A file's content decoded as text."""
        return self.read_file(path).decode(encoding)

    def write_file(
        self,
        path: str,
        data: bytes | str | BinaryIO | Iterable[bytes],
        *,
        mode: str = "truncate",
        parents: bool = False,
        file_mode: int | None = None,
        chunk_size: int = cv.UPLOAD_CHUNK,
    ) -> FileInfo:
        """Writes a file: bytes, text (UTF-8), a binary file object or an iterable of bytes,
        uploaded in chunks of ``chunk_size`` sharing one upload ID; the last chunk commits the
        file atomically (readers never see half of it).

        Args:
            path: Where, relative to the workspace.
            data: The content.
            mode: ``"truncate"`` (replace, default), ``"create"`` (fail with
                :class:`AlreadyExists` if it exists) or ``"append"``.
            parents: Create missing parent directories.
            file_mode: Permission bits of a new file (default ``0o644``).
            chunk_size: Bytes per request (at most the gateway's request limit, 16 MiB).

        Returns:
            The committed file's info.
        """
        wm = cv.write_mode(mode)
        upload = cv.new_id("py")
        offset = 0
        res: Any = None
        for chunk, last in cv.chunks(data, chunk_size):
            req = session_pb2.WriteFileRequest(target=self._target(), path=path, upload_id=upload, offset=offset,
                                               data=chunk, mode=wm, file_mode=file_mode or 0, last=last,
                                               parents=parents)
            res = self._c._unary(self._svc().write_file, req)
            offset += len(chunk)
        return cv.file_info(res.info)

    def list_files(self, path: str = "", *, page_size: int = 100) -> Iterator[FileInfo]:
        """Yields a directory's entries, ordered by the UTF-8 bytes of their names, fetching page
        after page (``page_size`` per request, at most 1000) as you iterate.

        Raises:
            NotFound: no such directory.
        """
        token = ""
        while True:
            req = session_pb2.ListFilesRequest(target=self._target(), path=path, limit=page_size, page_token=token)
            page = self._c._unary(self._svc().list_files, req)
            for e in page.entries:
                yield cv.file_info(e)
            token = page.next_page_token
            if not token:
                return

    def stat(self, path: str) -> FileInfo:
        """Describes a path.

        Raises:
            NotFound: no such path.
        """
        req = session_pb2.StatRequest(target=self._target(), path=path)
        return cv.file_info(self._c._unary(self._svc().stat, req).info)

    def exists(self, path: str) -> bool:
        """Whether a path exists."""
        try:
            self.stat(path)
            return True
        except NotFound:
            return False

    def remove(self, path: str, *, recursive: bool = False) -> bool:
        """Deletes a path (a non-empty directory needs ``recursive``); whether something was removed."""
        req = session_pb2.RemoveRequest(target=self._target(), path=path, recursive=recursive)
        return bool(self._c._unary(self._svc().remove, req).removed)

    def make_dir(self, path: str, *, parents: bool = False, mode: int | None = None) -> FileInfo:
        """Creates a directory (and its parents with ``parents``)."""
        req = session_pb2.MakeDirRequest(target=self._target(), path=path, parents=parents, mode=mode or 0)
        return cv.file_info(self._c._unary(self._svc().make_dir, req).info)

    def rename(self, src: str, dst: str, *, overwrite: bool = False) -> FileInfo:
        """Moves a path (over an existing one only with ``overwrite``)."""
        req = session_pb2.RenameRequest(target=self._target(), to=dst, overwrite=overwrite, **{"from": src})
        return cv.file_info(self._c._unary(self._svc().rename, req).info)

    # --- logs and the end ---

    def logs(self, *, follow: bool = False, call: str | None = None, timeout: float | None = None) -> Iterator[LogLine]:
        """The session's output and audit records (see :meth:`Runs.logs`); ``call`` = one
        operation's lines."""
        return self._c.runs.logs(self.name, follow=follow, call=call, timeout=timeout, namespace=self.namespace)

    def close(self, *, wait: bool = False, timeout: float | None = None) -> Run:
        """Drains the session (``spec.termination.mode: Drain``): new operations are refused, the
        accepted ones finish, processes stop, artifacts are exported, and it ends Succeeded.

        Args:
            wait: Wait until it has ended.
            timeout: With ``wait``: give up after this many seconds.
        """
        self.run = self._c.runs._terminate(self.namespace, self.name, "Drain")
        if wait:
            self.run = self._c.runs.wait(self.name, timeout=timeout, namespace=self.namespace)
        return self.run

    def cancel(self, *, wait: bool = False, timeout: float | None = None) -> Run:
        """Ends the session now (``spec.termination.mode: Immediate``): the running operation is
        killed, the queue cancelled; it ends Cancelled. Arguments as :meth:`close`."""
        self.run = self._c.runs._terminate(self.namespace, self.name, "Immediate")
        if wait:
            self.run = self._c.runs.wait(self.name, timeout=timeout, namespace=self.namespace)
        return self.run


def _check_failed(cmd: str | Sequence[str], res: ExecResult) -> KruntimesError:
    shown = cmd if isinstance(cmd, str) else " ".join(cmd)
    how = (f"exited {res.exit_code}" if res.reason == "EXITED" and not res.signal
           else f"ended {res.reason}{' ' + res.signal if res.signal else ''}")
    tail = res.stderr_text.strip()[-2000:]
    return KruntimesError(f"command {shown!r} {how}{(': ' + tail) if tail else ''}"
                          f"{(' (' + res.message + ')') if res.message else ''}")
