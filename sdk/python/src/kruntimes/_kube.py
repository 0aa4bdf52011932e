"""The Kubernetes API as the SDK uses it: JSON in, JSON out, watches and pod logs as line
streams. Built on the official ``kubernetes`` package's ApiClient (sync) and
``kubernetes.aio`` (asyncio) so that kubeconfig handling — contexts, client certificates, exec
plugins, OIDC, token refresh, in-cluster ServiceAccount tokens — is theirs; only requests are made
here, without the generated models (Runs are custom resources, read as dicts anyway)."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from typing import Any, AsyncIterator, Iterator
from urllib.parse import quote

from .errors import ConfigError, KruntimesError, Unavailable, from_kube_status

RUNS = "/apis/kruntimes.io/v1alpha1/namespaces/{ns}/runs"
SA_DIR = "/var/run/secrets/kubernetes.io/serviceaccount"
#: Seconds a watch request asks the server to keep it open before it is re-established.
WATCH_SECONDS = 240


def runs_path(ns: str, name: str | None = None) -> str:
    base = RUNS.format(ns=quote(ns, safe=""))
    return f"{base}/{quote(name, safe='')}" if name else base


def core_path(ns: str, plural: str, name: str | None = None, sub: str | None = None) -> str:
    p = f"/api/v1/namespaces/{quote(ns, safe='')}/{plural}"
    if name:
        p += f"/{quote(name, safe='')}"
    if sub:
        p += f"/{sub}"
    return p


def slices_path(ns: str) -> str:
    return f"/apis/discovery.k8s.io/v1/namespaces/{quote(ns, safe='')}/endpointslices"


class LineSplitter:
    """Turns a byte stream's chunks into lines (a watch event or a log line may span chunks, and a
    chunk may hold many)."""

    def __init__(self) -> None:
        self._buf = b""

    def feed(self, chunk: bytes) -> list[str]:
        self._buf += chunk
        if b"\n" not in self._buf:
            return []
        *lines, self._buf = self._buf.split(b"\n")
        return [ln.decode("utf-8", "replace").rstrip("\r") for ln in lines]

    def end(self) -> list[str]:
        rest, self._buf = self._buf, b""
        return [rest.decode("utf-8", "replace")] if rest else []


@dataclass
class KubeSource:
    """Where the API credentials came from, for messages and for ``kubectl port-forward``."""

    kind: str  # "kubeconfig" or "in-cluster"
    kubeconfig: str | None = None
    context: str | None = None


def _resolve(path: str | None) -> str | None:
    """The kubeconfig to read: the given path, else ``$KUBECONFIG`` as it is now (the kubernetes
    package reads it once, at import), else its default ``~/.kube/config``."""
    return path or os.environ.get("KUBECONFIG") or None


def _token_of(value: str | None) -> str | None:
    if not value:
        return None
    parts = value.split(" ", 1)
    return parts[1].strip() if len(parts) == 2 and parts[0].lower() == "bearer" else value.strip()


def kubeconfig_namespace(path: str | None, context: str | None) -> str:
    """The namespace of the kubeconfig context (``default`` when it names none)."""
    from kubernetes import config as kconfig

    try:
        contexts, active = kconfig.list_kube_config_contexts(config_file=_resolve(path))
    except Exception as e:  # the loader raises ConfigException and plain errors alike
        raise ConfigError(f"cannot read kubeconfig {path or os.environ.get('KUBECONFIG') or '~/.kube/config'}: {e}") from e
    chosen = active
    if context:
        chosen = next((c for c in contexts if c.get("name") == context), None)
        if chosen is None:
            names = ", ".join(c.get("name", "") for c in contexts)
            raise ConfigError(f"kubeconfig has no context {context!r} (it has: {names})")
    return ((chosen or {}).get("context") or {}).get("namespace") or "default"


def _check(status: int, body: bytes | None, what: str) -> None:
    if not 200 <= status <= 299:
        raise from_kube_status(status, body, what)


def _query(q: dict[str, Any] | None) -> list[tuple[str, Any]]:
    return [(k, v) for k, v in (q or {}).items() if v is not None and v is not False]


class Kube:
    """Synchronous access to the Kubernetes API."""

    def __init__(self, api_client: Any, source: KubeSource) -> None:
        self.api = api_client
        self.source = source

    @classmethod
    def from_kubeconfig(cls, path: str | None, context: str | None) -> Kube:
        from kubernetes import config as kconfig

        try:
            api = kconfig.new_client_from_config(config_file=_resolve(path), context=context)
        except Exception as e:
            raise ConfigError(f"cannot load kubeconfig {path or os.environ.get('KUBECONFIG') or '~/.kube/config'}: {e}") from e
        return cls(api, KubeSource("kubeconfig", path, context))

    @classmethod
    def in_cluster(cls, sa_dir: str = SA_DIR) -> Kube:
        from kubernetes import client as kclient
        from kubernetes.config.incluster_config import InClusterConfigLoader

        cfg = kclient.Configuration()
        try:
            InClusterConfigLoader(os.path.join(sa_dir, "token"), os.path.join(sa_dir, "ca.crt")).load_and_set(cfg)
        except Exception as e:
            raise ConfigError(f"not running in a pod with a ServiceAccount token ({sa_dir}): {e}") from e
        return cls(kclient.ApiClient(cfg), KubeSource("in-cluster"))

    def bearer_token(self) -> str | None:
        """The bearer token the API credentials carry (refreshed when it expires), if any."""
        return _token_of(self.api.configuration.get_api_key_with_prefix("BearerToken"))

    def close(self) -> None:
        self.api.close()

    def _send(self, method: str, path: str, query: dict[str, Any] | None, body: Any,
              content_type: str | None, timeout: Any, what: str) -> Any:
        headers = {"Accept": "application/json"}
        if content_type:
            headers["Content-Type"] = content_type
        try:
            m, url, hdrs, b, post = self.api.param_serialize(
                method=method, resource_path=path, query_params=_query(query),
                header_params=headers, body=body, auth_settings=["BearerToken"],
            )
            return self.api.call_api(m, url, hdrs, b, post, _request_timeout=timeout)
        except KruntimesError:
            raise
        except Exception as e:
            status = getattr(e, "status", None)
            if isinstance(status, int) and status:
                raise from_kube_status(status, getattr(e, "body", None), what) from e
            raise Unavailable(f"{what}: cannot reach the Kubernetes API: {e}") from e

    def request(self, method: str, path: str, what: str, *, query: dict[str, Any] | None = None,
                body: Any = None, content_type: str | None = None) -> Any:
        """One request; its JSON answer (a 2xx), else the typed error."""
        r = self._send(method, path, query, body, content_type, 60, what)
        data = r.read()
        _check(r.status, data, what)
        return json.loads(data) if data else None

    def lines(self, path: str, what: str, query: dict[str, Any]) -> LineStream:
        """A streamed GET (a watch, a followed log), line by line."""
        r = self._send("GET", path, query, None, None, (30, None), what)
        if not 200 <= r.status <= 299:
            data = r.read()
            _check(r.status, data, what)
        return LineStream(r.response)


class LineStream:
    """The lines of a streamed answer; ``close()`` (from any thread) ends the iteration."""

    def __init__(self, resp: Any) -> None:
        self._resp = resp
        self.closed = False

    def __iter__(self) -> Iterator[str]:
        split = LineSplitter()
        try:
            for chunk in self._resp.stream(amt=65536, decode_content=True):
                yield from split.feed(chunk)
            yield from split.end()
        except Exception:
            if not self.closed:
                raise
        finally:
            self.close()

    def close(self) -> None:
        if self.closed:
            return
        self.closed = True
        # shutdown() (urllib3 ≥ 2.3) unblocks a read in progress on another thread.
        shutdown = getattr(self._resp, "shutdown", None)
        try:
            if shutdown:
                shutdown()
            self._resp.release_conn()
        except Exception:
            pass


class AsyncKube:
    """asyncio access to the Kubernetes API (``kubernetes.aio``)."""

    def __init__(self, api_client: Any, source: KubeSource) -> None:
        self.api = api_client
        self.source = source

    @classmethod
    async def from_kubeconfig(cls, path: str | None, context: str | None) -> AsyncKube:
        from kubernetes.aio import config as kconfig

        try:
            api = await kconfig.new_client_from_config(config_file=_resolve(path), context=context)
        except Exception as e:
            raise ConfigError(f"cannot load kubeconfig {path or os.environ.get('KUBECONFIG') or '~/.kube/config'}: {e}") from e
        return cls(api, KubeSource("kubeconfig", path, context))

    @classmethod
    def in_cluster(cls, sa_dir: str = SA_DIR) -> AsyncKube:
        from kubernetes.aio import client as kclient
        from kubernetes.aio.config.incluster_config import InClusterConfigLoader

        cfg = kclient.Configuration()
        try:
            InClusterConfigLoader(os.path.join(sa_dir, "token"), os.path.join(sa_dir, "ca.crt")).load_and_set(cfg)
        except Exception as e:
            raise ConfigError(f"not running in a pod with a ServiceAccount token ({sa_dir}): {e}") from e
        return cls(kclient.ApiClient(cfg), KubeSource("in-cluster"))

    async def bearer_token(self) -> str | None:
        """The bearer token the API credentials carry (refreshed when it expires), if any."""
        return _token_of(await self.api.configuration.get_api_key_with_prefix("BearerToken"))

    async def close(self) -> None:
        await self.api.close()

    async def _send(self, method: str, path: str, query: dict[str, Any] | None, body: Any,
                    content_type: str | None, timeout: Any, what: str) -> Any:
        headers = {"Accept": "application/json"}
        if content_type:
            headers["Content-Type"] = content_type
        try:
            m, url, hdrs, b, post = await self.api.param_serialize(
                method=method, resource_path=path, query_params=_query(query),
                header_params=headers, body=body, auth_settings=["BearerToken"],
            )
            return await self.api.call_api(m, url, hdrs, b, post, _request_timeout=timeout)
        except KruntimesError:
            raise
        except Exception as e:
            status = getattr(e, "status", None)
            if isinstance(status, int) and status:
                raise from_kube_status(status, getattr(e, "body", None), what) from e
            raise Unavailable(f"{what}: cannot reach the Kubernetes API: {e}") from e

    async def request(self, method: str, path: str, what: str, *, query: dict[str, Any] | None = None,
                      body: Any = None, content_type: str | None = None) -> Any:
        """One request; its JSON answer (a 2xx), else the typed error."""
        r = await self._send(method, path, query, body, content_type, 60, what)
        data = await r.read()
        _check(r.status, data, what)
        return json.loads(data) if data else None

    async def lines(self, path: str, what: str, query: dict[str, Any]) -> AsyncIterator[str]:
        """A streamed GET (a watch, a followed log), line by line. Close the iterator (or cancel
        the task iterating it) to end it."""
        import aiohttp

        r = await self._send("GET", path, query, None, None,
                             aiohttp.ClientTimeout(total=None, connect=30, sock_read=None), what)
        resp = r.response
        try:
            if not 200 <= r.status <= 299:
                data = await r.read()
                _check(r.status, data, what)
            split = LineSplitter()
            async for chunk in resp.content.iter_any():
                for line in split.feed(chunk):
                    yield line
            for line in split.end():
                yield line
        finally:
            resp.release()
            resp.close()
