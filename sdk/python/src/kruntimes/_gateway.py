"""Finding the gateway, exactly as ``krt`` does (krt/gateway/locate.ts):

1. ``gateway_url`` (or ``$KRT_GATEWAY``): used as is; TLS is verified with ``ca_file``, else the
   chart's CA (best effort) added to the system roots.
2. The gateway Service (label ``app.kubernetes.io/name=kruntimes-gateway`` in the gateway
   namespace): its CA comes from the ConfigMap its ``kruntimes.io/ca-configmap`` annotation names,
   and the certificate is verified for the Service's DNS name ``<service>.<namespace>.svc``
   whatever address is dialled. The address is, by ``via``:

   - ``"service"``: the Service's DNS name itself (inside the cluster);
   - ``"direct"``: a ready pod's IP (EndpointSlices, else the pods matching the Service's selector);
   - ``"port-forward"``: ``kubectl port-forward`` to one ready pod, opened and closed by the client;
   - ``"auto"``: in a pod ``"service"``; outside, ``"direct"`` when a pod IP answers, else
     ``"port-forward"``.

Dialling an IP while verifying the Service's name is done with pyqwest's ``dns_overrides``: the
request URL keeps the Service's DNS name (so SNI, certificate verification and the Host header use
it) and the transport is told which address that name has. The apiserver's service proxy is no
option: it strips the caller's Authorization header.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import os
import random
import re
import shutil
import signal
import socket
import subprocess
import threading
import time
import weakref
from dataclasses import dataclass, field
from typing import Any, Callable
from urllib.parse import urlsplit

from ._kube import AsyncKube, Kube, core_path, slices_path
from .errors import ConfigError, GatewayUnreachable, KruntimesError, NotFound, PermissionDenied

GATEWAY_LABEL = "app.kubernetes.io/name=kruntimes-gateway"
CA_ANNOTATION = "kruntimes.io/ca-configmap"
VIAS = ("auto", "direct", "port-forward", "service")
DIAL_TIMEOUT = 1.5
FORWARDING = re.compile(r"Forwarding from 127\.0\.0\.1:(\d+) -> \d+")


@dataclass
class Endpoint:
    """A ready gateway pod's address."""

    address: str
    port: int
    pod: str = ""

    @property
    def host_port(self) -> str:
        return f"[{self.address}]:{self.port}" if ":" in self.address else f"{self.address}:{self.port}"


@dataclass
class Discovered:
    """The gateway Service's scheme, CA and ready endpoints."""

    namespace: str
    service: str
    scheme: str
    server_name: str
    ca: str | None
    endpoints: list[Endpoint]
    service_port: int


@dataclass
class Target:
    """Where and how to call the gateway.

    ``base_url`` is what requests go to; ``dns_overrides`` pins its host to the dialled address;
    ``ca`` is the PEM to trust (with the system roots too when ``system_roots``).
    """

    base_url: str
    via: str
    ca: bytes | None = None
    system_roots: bool = True
    dns_overrides: dict[str, list[str]] = field(default_factory=dict)
    close: Callable[[], Any] = lambda: None


def check_via(via: str) -> str:
    if via not in VIAS:
        raise ConfigError(f"via={via!r} is not one of {', '.join(VIAS)}")
    return via


def read_ca_file(path: str | None) -> str | None:
    if path is None:
        return None
    try:
        with open(path, encoding="utf-8") as f:
            return f.read()
    except OSError as e:
        raise ConfigError(f"ca_file {path}: cannot read it: {e}") from e


# --- pure parts -------------------------------------------------------------------------------


def pick_service(services: dict[str, Any], namespace: str) -> dict[str, Any]:
    items = services.get("items") or []
    if not items:
        raise GatewayUnreachable(
            f"no gateway Service (label {GATEWAY_LABEL}) in namespace {namespace!r}: install the "
            "chart with gateway.enabled=true, pass gateway_namespace=<namespace of the release>, "
            "or gateway_url=<URL>"
        )
    if len(items) > 1:
        names = ", ".join(s["metadata"]["name"] for s in items)
        raise GatewayUnreachable(
            f"{len(items)} gateway Services in namespace {namespace!r}: {names}; pick one with "
            f"gateway_url='https://<service>.{namespace}.svc'"
        )
    return items[0]


def service_facts(svc: dict[str, Any]) -> tuple[str, str, str | None, int]:
    """(name, scheme, CA ConfigMap name, Service port of that scheme)."""
    name = svc["metadata"]["name"]
    ports = (svc.get("spec") or {}).get("ports") or []
    scheme = "https" if any(p.get("name") == "https" for p in ports) else "http"
    port = next((int(p["port"]) for p in ports if p.get("name") == scheme), 443 if scheme == "https" else 80)
    ca_name = ((svc["metadata"].get("annotations") or {}).get(CA_ANNOTATION)) if scheme == "https" else None
    return name, scheme, ca_name, port


def endpoints_from_slices(slices: dict[str, Any], scheme: str) -> list[Endpoint]:
    out: list[Endpoint] = []
    for s in slices.get("items") or []:
        port = next((p.get("port") for p in s.get("ports") or [] if p.get("name") == scheme), None)
        if not port:
            continue
        for e in s.get("endpoints") or []:
            cond = e.get("conditions") or {}
            if cond.get("ready") is False or cond.get("terminating"):
                continue
            ref = e.get("targetRef") or {}
            for address in (e.get("addresses") or [])[:1]:
                out.append(Endpoint(address, int(port), ref.get("name", "") if ref.get("kind") == "Pod" else ""))
    return out


def pod_selector(svc: dict[str, Any]) -> str:
    sel = (svc.get("spec") or {}).get("selector") or {}
    return ",".join(f"{k}={v}" for k, v in sel.items())


def endpoints_from_pods(pods: dict[str, Any], svc: dict[str, Any], scheme: str) -> list[Endpoint]:
    """The Service's ready pods, for when its EndpointSlices list none (EndpointSlice validation
    refuses loopback addresses, so on a local test cluster the slices stay empty)."""
    ports = (svc.get("spec") or {}).get("ports") or []
    target = next((p.get("targetPort") for p in ports if p.get("name") == scheme), None)
    if target is None:
        return []
    out: list[Endpoint] = []
    for p in pods.get("items") or []:
        st = p.get("status") or {}
        ready = any(c.get("type") == "Ready" and c.get("status") == "True" for c in st.get("conditions") or [])
        ip = st.get("podIP")
        if not ready or not ip or p["metadata"].get("deletionTimestamp"):
            continue
        if isinstance(target, int):
            port = target
        else:
            port = next((cp.get("containerPort") for c in (p.get("spec") or {}).get("containers") or []
                         for cp in c.get("ports") or [] if cp.get("name") == target), None)
        if port:
            out.append(Endpoint(ip, int(port), p["metadata"]["name"]))
    return out


def no_ready_pod(d: Discovered) -> GatewayUnreachable:
    return GatewayUnreachable(
        f"the gateway Service {d.namespace}/{d.service} has no ready pod; check it with "
        f"`kubectl -n {d.namespace} get pods -l {GATEWAY_LABEL}`"
    )


def not_dialable(d: Discovered) -> GatewayUnreachable:
    addrs = ", ".join(e.host_port for e in d.endpoints)
    return GatewayUnreachable(
        f"cannot connect to any gateway pod of {d.namespace}/{d.service} ({addrs}); outside the "
        "cluster's pod network use via='port-forward', or gateway_url=<URL> of an Ingress/LoadBalancer"
    )


def target_for(d: Discovered, via: str, address: str | None, ca_file_pem: str | None,
               close: Callable[[], Any] = lambda: None) -> Target:
    """The target for a discovered gateway reached at ``address`` (``ip:port``; None = the Service's
    DNS name). TLS trusts only the given or the chart's CA, for the Service's DNS name."""
    host = d.server_name
    default = 443 if d.scheme == "https" else 80
    port = "" if d.service_port == default else f":{d.service_port}"
    ca = ca_file_pem or d.ca
    return Target(
        base_url=f"{d.scheme}://{host}{port}",
        via=via,
        ca=ca.encode() if ca else None,
        system_roots=ca is None,
        dns_overrides={host: [address]} if address else {},
        close=close,
    )


def url_target(url: str, ca_file_pem: str | None, chart_ca: str | None) -> Target:
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ConfigError(f"gateway_url {url!r} must be an http:// or https:// URL, e.g. "
                          "https://kruntimes-gateway.kruntimes.svc")
    ca = ca_file_pem or chart_ca
    return Target(base_url=url.rstrip("/"), via="url", ca=ca.encode() if ca else None,
                  system_roots=ca_file_pem is None)


def _readable_error(e: KruntimesError, what: str) -> KruntimesError:
    if isinstance(e, PermissionDenied):
        return PermissionDenied(
            f"cannot find the gateway: you may not {what}; the chart's gateway.discovery Role grants "
            "it to every authenticated user, or pass gateway_url=<URL>", status=403)
    if isinstance(e, NotFound):
        return GatewayUnreachable(f"cannot find the gateway: {what}: not found", status=404)
    return e


def in_pod() -> bool:
    return bool(os.environ.get("KUBERNETES_SERVICE_HOST")) and os.path.exists(
        "/var/run/secrets/kubernetes.io/serviceaccount/token")


# --- sync ---------------------------------------------------------------------------------------


def discover(kube: Kube, namespace: str) -> Discovered:
    def read(path: str, what: str, query: dict[str, Any] | None = None) -> Any:
        try:
            return kube.request("GET", path, what, query=query)
        except KruntimesError as e:
            raise _readable_error(e, what) from e

    svc = pick_service(read(core_path(namespace, "services"), f"list services in namespace {namespace!r}",
                            {"labelSelector": GATEWAY_LABEL}), namespace)
    name, scheme, ca_name, port = service_facts(svc)
    ca = None
    if ca_name:
        cm = read(core_path(namespace, "configmaps", ca_name), f"get configmap {ca_name!r} in namespace {namespace!r}")
        ca = (cm.get("data") or {}).get("ca.crt")
    eps = endpoints_from_slices(read(slices_path(namespace), f"list endpointslices in namespace {namespace!r}",
                                     {"labelSelector": f"kubernetes.io/service-name={name}"}), scheme)
    if not eps and pod_selector(svc):
        try:
            pods = kube.request("GET", core_path(namespace, "pods"), "list pods",
                                query={"labelSelector": pod_selector(svc)})
            eps = endpoints_from_pods(pods, svc, scheme)
        except KruntimesError:
            pass  # without list on pods, the slices' answer (no ready pod) stands
    return Discovered(namespace, name, scheme, f"{name}.{namespace}.svc", ca, eps, port)


def can_dial(ep: Endpoint, timeout: float) -> bool:
    try:
        socket.create_connection((ep.address, ep.port), timeout=timeout).close()
        return True
    except OSError:
        return False


def first_dialable(eps: list[Endpoint], timeout: float = DIAL_TIMEOUT) -> Endpoint | None:
    """The first endpoint a TCP connection opens to, all tried at once (outside the pod network
    an attempt may hang until the timeout, so one after another would add up)."""
    if not eps:
        return None
    eps = random.sample(eps, len(eps))
    with concurrent.futures.ThreadPoolExecutor(len(eps)) as pool:
        futures = {pool.submit(can_dial, ep, timeout): ep for ep in eps}
        for f in concurrent.futures.as_completed(futures):
            if f.result():
                return futures[f]
    return None


def locate(kube: Kube, *, url: str | None, namespace: str, via: str, ca_file: str | None,
           kubectl: str, in_cluster: bool) -> Target:
    ca_pem = read_ca_file(ca_file)
    if url:
        chart_ca = None
        if urlsplit(url).scheme == "https" and ca_pem is None:
            try:
                chart_ca = discover(kube, namespace).ca
            except KruntimesError:
                pass  # best effort: a URL with a public certificate needs no chart CA
        return url_target(url, ca_pem, chart_ca)
    d = discover(kube, namespace)
    if via == "auto" and in_cluster:
        via = "service"
    if via == "service":
        return target_for(d, "service", None, ca_pem)
    if not d.endpoints:
        raise no_ready_pod(d)
    if via != "port-forward":
        ep = first_dialable(d.endpoints)
        if ep:
            return target_for(d, f"direct {ep.address}", ep.host_port, ca_pem)
        if via == "direct":
            raise not_dialable(d)
    ep = next((e for e in d.endpoints if e.pod), None)
    if ep is None:
        raise GatewayUnreachable("the gateway's endpoints name no pod to port-forward to")
    pf = PortForward.open(kubectl, kube, namespace, ep.pod, ep.port)
    return target_for(d, f"port-forward {ep.pod}", f"127.0.0.1:{pf.local_port}", ca_pem, pf.close)


def kubectl_args(kubectl: str, kube: Kube | AsyncKube, namespace: str, pod: str, port: int) -> list[str]:
    args = [kubectl, "port-forward", "-n", namespace, f"pod/{pod}", f":{port}", "--address", "127.0.0.1"]
    if kube.source.kubeconfig:
        args += ["--kubeconfig", kube.source.kubeconfig]
    if kube.source.context:
        args += ["--context", kube.source.context]
    return args


def _no_kubectl(kubectl: str, e: Exception) -> GatewayUnreachable:
    return GatewayUnreachable(
        f"cannot reach the gateway pods directly, and cannot run {kubectl!r} for a port-forward: {e}; "
        "install kubectl (or pass kubectl=<path>), or pass gateway_url=<URL> of an Ingress, "
        "LoadBalancer or your own port-forward"
    )


def _forward_failed(namespace: str, pod: str, why: str) -> GatewayUnreachable:
    return GatewayUnreachable(
        f"kubectl port-forward to pod {namespace}/{pod} failed{': ' + why if why else ''}; it needs "
        "create on pods/portforward, or pass gateway_url=<URL>"
    )


def _kill_quietly(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGTERM)
    except OSError:
        pass


class PortForward:
    """``kubectl port-forward`` to one gateway pod on a free local port, read from kubectl's
    ``Forwarding from 127.0.0.1:<port> -> <port>`` line; ``close()`` stops kubectl."""

    def __init__(self, proc: subprocess.Popen[bytes], local_port: int) -> None:
        self.proc = proc
        self.local_port = local_port
        # A client dropped without close() (or the interpreter exiting) still stops kubectl.
        self._finalizer = weakref.finalize(self, _kill_quietly, proc.pid)

    @classmethod
    def open(cls, kubectl: str, kube: Kube, namespace: str, pod: str, port: int,
             timeout: float = 15.0) -> PortForward:
        bin_ = shutil.which(kubectl) or kubectl
        try:
            proc = subprocess.Popen(kubectl_args(bin_, kube, namespace, pod, port), stdin=subprocess.DEVNULL,
                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        except OSError as e:
            raise _no_kubectl(kubectl, e) from e
        found: list[int] = []
        ready = threading.Event()
        errors: list[bytes] = []

        def pump_stdout() -> None:
            seen = ""
            assert proc.stdout is not None
            for line in iter(proc.stdout.readline, b""):
                if not found:
                    seen += line.decode("utf-8", "replace")
                    m = FORWARDING.search(seen)
                    if m:
                        found.append(int(m.group(1)))
                        ready.set()
            ready.set()  # kubectl exited (or closed stdout) without forwarding

        def pump_stderr() -> None:
            assert proc.stderr is not None
            for chunk in iter(lambda: proc.stderr.read(4096), b""):  # type: ignore[union-attr]
                if len(b"".join(errors)) < 8192:
                    errors.append(chunk)

        # Keep draining kubectl's output so it never blocks on a full pipe.
        threading.Thread(target=pump_stdout, daemon=True).start()
        threading.Thread(target=pump_stderr, daemon=True).start()
        ready.wait(timeout)
        if found:
            return cls(proc, found[0])
        proc.kill()
        proc.wait()
        time.sleep(0.05)
        raise _forward_failed(namespace, pod, b"".join(errors).decode("utf-8", "replace").strip())

    def close(self) -> None:
        self._finalizer.detach()
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


# --- asyncio ------------------------------------------------------------------------------------


async def discover_async(kube: AsyncKube, namespace: str) -> Discovered:
    async def read(path: str, what: str, query: dict[str, Any] | None = None) -> Any:
        try:
            return await kube.request("GET", path, what, query=query)
        except KruntimesError as e:
            raise _readable_error(e, what) from e

    svc = pick_service(await read(core_path(namespace, "services"), f"list services in namespace {namespace!r}",
                                  {"labelSelector": GATEWAY_LABEL}), namespace)
    name, scheme, ca_name, port = service_facts(svc)
    ca = None
    if ca_name:
        cm = await read(core_path(namespace, "configmaps", ca_name),
                        f"get configmap {ca_name!r} in namespace {namespace!r}")
        ca = (cm.get("data") or {}).get("ca.crt")
    eps = endpoints_from_slices(await read(slices_path(namespace), f"list endpointslices in namespace {namespace!r}",
                                           {"labelSelector": f"kubernetes.io/service-name={name}"}), scheme)
    if not eps and pod_selector(svc):
        try:
            pods = await kube.request("GET", core_path(namespace, "pods"), "list pods",
                                      query={"labelSelector": pod_selector(svc)})
            eps = endpoints_from_pods(pods, svc, scheme)
        except KruntimesError:
            pass
    return Discovered(namespace, name, scheme, f"{name}.{namespace}.svc", ca, eps, port)


async def can_dial_async(ep: Endpoint, timeout: float) -> bool:
    try:
        _, w = await asyncio.wait_for(asyncio.open_connection(ep.address, ep.port), timeout)
        w.close()
        return True
    except (OSError, asyncio.TimeoutError):
        return False


async def first_dialable_async(eps: list[Endpoint], timeout: float = DIAL_TIMEOUT) -> Endpoint | None:
    if not eps:
        return None
    tasks = {asyncio.ensure_future(can_dial_async(ep, timeout)): ep for ep in random.sample(eps, len(eps))}
    pending: set[asyncio.Future[bool]] = set(tasks)
    try:
        while pending:
            done, pending = await asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED)
            for t in done:
                if t.result():
                    return tasks[t]
        return None
    finally:
        for t in pending:
            t.cancel()


async def locate_async(kube: AsyncKube, *, url: str | None, namespace: str, via: str, ca_file: str | None,
                       kubectl: str, in_cluster: bool) -> Target:
    ca_pem = read_ca_file(ca_file)
    if url:
        chart_ca = None
        if urlsplit(url).scheme == "https" and ca_pem is None:
            try:
                chart_ca = (await discover_async(kube, namespace)).ca
            except KruntimesError:
                pass
        return url_target(url, ca_pem, chart_ca)
    d = await discover_async(kube, namespace)
    if via == "auto" and in_cluster:
        via = "service"
    if via == "service":
        return target_for(d, "service", None, ca_pem)
    if not d.endpoints:
        raise no_ready_pod(d)
    if via != "port-forward":
        ep = await first_dialable_async(d.endpoints)
        if ep:
            return target_for(d, f"direct {ep.address}", ep.host_port, ca_pem)
        if via == "direct":
            raise not_dialable(d)
    ep = next((e for e in d.endpoints if e.pod), None)
    if ep is None:
        raise GatewayUnreachable("the gateway's endpoints name no pod to port-forward to")
    pf = await AsyncPortForward.open(kubectl, kube, namespace, ep.pod, ep.port)
    return target_for(d, f"port-forward {ep.pod}", f"127.0.0.1:{pf.local_port}", ca_pem, pf.close)


class AsyncPortForward:
    """``kubectl port-forward`` run with asyncio's subprocess support (see :class:`PortForward`)."""

    def __init__(self, proc: asyncio.subprocess.Process, local_port: int, pumps: list[asyncio.Task[None]]) -> None:
        self.proc = proc
        self.local_port = local_port
        self._pumps = pumps
        self._finalizer = weakref.finalize(self, _kill_quietly, proc.pid)

    @classmethod
    async def open(cls, kubectl: str, kube: AsyncKube, namespace: str, pod: str, port: int,
                   timeout: float = 15.0) -> AsyncPortForward:
        bin_ = shutil.which(kubectl) or kubectl
        try:
            proc = await asyncio.create_subprocess_exec(
                *kubectl_args(bin_, kube, namespace, pod, port), stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
        except OSError as e:
            raise _no_kubectl(kubectl, e) from e
        assert proc.stdout is not None and proc.stderr is not None
        errors = bytearray()

        async def drain_stderr() -> None:
            assert proc.stderr is not None
            while chunk := await proc.stderr.read(4096):
                if len(errors) < 8192:
                    errors.extend(chunk)

        err_task = asyncio.ensure_future(drain_stderr())
        seen = ""
        local: int | None = None
        try:
            async with _timeout(timeout):
                while local is None:
                    line = await proc.stdout.readline()
                    if not line:
                        break
                    seen += line.decode("utf-8", "replace")
                    m = FORWARDING.search(seen)
                    if m:
                        local = int(m.group(1))
        except asyncio.TimeoutError:
            pass
        if local is not None:
            async def drain_stdout() -> None:
                assert proc.stdout is not None
                while await proc.stdout.read(4096):
                    pass

            return cls(proc, local, [err_task, asyncio.ensure_future(drain_stdout())])
        if proc.returncode is None:
            proc.kill()
        await proc.wait()
        await asyncio.sleep(0.05)
        err_task.cancel()
        raise _forward_failed(namespace, pod, errors.decode("utf-8", "replace").strip())

    async def close(self) -> None:
        self._finalizer.detach()
        for t in self._pumps:
            t.cancel()
        if self.proc.returncode is None:
            try:
                self.proc.terminate()
                await asyncio.wait_for(self.proc.wait(), 5)
            except ProcessLookupError:
                pass
            except asyncio.TimeoutError:
                self.proc.kill()
                await self.proc.wait()


class _timeout:
    """``asyncio.timeout`` for Python 3.10 too."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self._handle: asyncio.TimerHandle | None = None
        self._task: asyncio.Task[Any] | None = None
        self.expired = False

    async def __aenter__(self) -> _timeout:
        self._task = asyncio.current_task()
        loop = asyncio.get_running_loop()
        self._handle = loop.call_later(self.seconds, self._expire)
        return self

    def _expire(self) -> None:
        self.expired = True
        if self._task is not None:
            self._task.cancel()

    async def __aexit__(self, et: Any, e: Any, tb: Any) -> bool:
        if self._handle:
            self._handle.cancel()
        if et is asyncio.CancelledError and self.expired:
            if self._task is not None and hasattr(self._task, "uncancel"):
                self._task.uncancel()
            raise asyncio.TimeoutError
        return False
