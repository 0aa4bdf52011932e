"""A tiny Kubernetes API client for the diagnosis steps: the standard library only (the runtime
image has python3 and nothing else), authenticated as the pod's ServiceAccount."""

import json
import os
import ssl
import urllib.error
import urllib.parse
import urllib.request

SA = "/var/run/secrets/kubernetes.io/serviceaccount"


class ApiError(Exception):
    def __init__(self, status: int, message: str):
        super().__init__(f"{status}: {message}")
        self.status = status
        self.message = message


def _base() -> str:
    host = os.environ.get("KUBERNETES_SERVICE_HOST")
    port = os.environ.get("KUBERNETES_SERVICE_PORT", "443")
    if not host:
        raise SystemExit("KUBERNETES_SERVICE_HOST is not set: this step must run in a pod")
    if ":" in host:
        host = f"[{host}]"
    return f"https://{host}:{port}"


def _token() -> str:
    try:
        # Read on every call: the projected token is rotated while the pod runs.
        with open(f"{SA}/token", encoding="utf-8") as f:
            return f.read().strip()
    except FileNotFoundError:
        raise SystemExit(
            f"no ServiceAccount token at {SA}/token: the Runtime's pod template must set "
            "automountServiceAccountToken: true (see setup.yaml)"
        ) from None


_ctx = None


def _context() -> ssl.SSLContext:
    global _ctx
    if _ctx is None:
        _ctx = ssl.create_default_context(cafile=f"{SA}/ca.crt")
    return _ctx


def own_namespace() -> str:
    with open(f"{SA}/namespace", encoding="utf-8") as f:
        return f.read().strip()


def request(method: str, path: str, query: dict | None = None, body: dict | None = None, raw: bool = False,
            content_type: str = "application/json"):
    """One API request; the decoded JSON (or text with raw=True), else ApiError. PATCH bodies
    need content_type="application/merge-patch+json"."""
    url = _base() + path + ("?" + urllib.parse.urlencode(query) if query else "")
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(url, data=data, method=method)
    req.add_header("Authorization", f"Bearer {_token()}")
    req.add_header("Accept", "application/json")
    if data is not None:
        req.add_header("Content-Type", content_type)
    try:
        with urllib.request.urlopen(req, context=_context(), timeout=30) as res:
            text = res.read().decode("utf-8", "replace")
    except urllib.error.HTTPError as e:
        text = e.read().decode("utf-8", "replace")
        try:
            message = json.loads(text).get("message", text)
        except ValueError:
            message = text
        raise ApiError(e.code, message) from None
    return text if raw else json.loads(text)


def get(path: str, **query):
    return request("GET", path, query or None)


def write_json(path: str, obj) -> None:
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        json.dump(obj, f, indent=2, sort_keys=True)
        f.write("\n")


def read_json(path: str):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def target_namespace() -> str:
    ns = os.environ.get("TARGET_NAMESPACE")
    if not ns:
        raise SystemExit("TARGET_NAMESPACE is not set (the agent passes it to every step)")
    return ns
