"""Helpers of the cluster tests: sources of the functions they create, the gateway pod's address,
a token without grants, the kubectl stand-in, a ServiceAccount directory for in-cluster mode."""

from __future__ import annotations

import base64
import os
import stat
import sys
import uuid
from typing import Any
from urllib.parse import urlsplit

import yaml

PY_FN = """calls = 0

def handler(request):
    global calls
    calls += 1
    if request.headers.get("x-fail") == "yes":
        raise ValueError("asked to fail")
    data = request.json() if request.body else {}
    print(f"handling {data.get('name', 'world')}")
    return {"hello": data.get("name", "world"), "calls": calls, "type": request.content_type}
"""

BASH_FN = """handler() {
  body=$(cat)
  echo "bash got ${#body} bytes: $body"
  [[ $body != fail ]]
}
"""


def gateway_pod_address(admin: Any, namespace: str) -> str:
    """``ip:8443`` of a ready gateway pod (the admin reads it; tests use it as the forward target)."""
    from kubernetes import client

    pods = client.CoreV1Api(admin).list_namespaced_pod(namespace, label_selector="app.kubernetes.io/name=kruntimes-gateway")
    for p in pods.items:
        if p.status.pod_ip and any(c.type == "Ready" and c.status == "True" for c in p.status.conditions or []):
            return f"{p.status.pod_ip}:8443"
    raise RuntimeError("no ready gateway pod")


def token_without_grants(admin: Any, namespace: str) -> str:
    """A ServiceAccount token of a new ServiceAccount that may call nothing."""
    from kubernetes import client

    name = f"nobody-{uuid.uuid4().hex[:6]}"
    core = client.CoreV1Api(admin)
    core.create_namespaced_service_account(namespace, {"metadata": {"name": name}})
    tr = core.create_namespaced_service_account_token(
        name, namespace, {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest",
                          "spec": {"expirationSeconds": 600}})
    return tr.status.token


def kubectl_shim(directory: str) -> str:
    """An executable kubectl stand-in (see kubectl_shim.py) in ``directory``."""
    src = os.path.join(os.path.dirname(__file__), "kubectl_shim.py")
    path = os.path.join(directory, "kubectl")
    with open(src, encoding="utf-8") as f, open(path, "w", encoding="utf-8") as out:
        out.write(f"#!{sys.executable}\n{f.read()}")
    os.chmod(path, os.stat(path).st_mode | stat.S_IEXEC)
    return path


def service_account_dir(kubeconfig: str, directory: str, namespace: str) -> tuple[str, str, str]:
    """What a pod has mounted, from the test's token kubeconfig: token, ca.crt, namespace files;
    returns (the directory, the API server's host, its port)."""
    with open(kubeconfig, encoding="utf-8") as f:
        doc = yaml.safe_load(f)
    cluster = doc["clusters"][0]["cluster"]
    user = doc["users"][0]["user"]
    os.makedirs(directory, exist_ok=True)
    with open(os.path.join(directory, "token"), "w") as f:
        f.write(user["token"])
    with open(os.path.join(directory, "ca.crt"), "wb") as f:
        f.write(base64.b64decode(cluster["certificate-authority-data"]))
    with open(os.path.join(directory, "namespace"), "w") as f:
        f.write(namespace)
    u = urlsplit(cluster["server"])
    return directory, u.hostname or "", str(u.port or 443)
