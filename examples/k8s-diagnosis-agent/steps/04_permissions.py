"""Step 4: what this identity may do, asked of the API server (SelfSubjectAccessReview) and tried
for real where that is harmless → work/permissions.json. The intent is read-only access to pods,
their logs and events in the target namespace; anything else allowed is reported."""

import os

import kube

ns = kube.target_namespace()
own = kube.own_namespace()
run = os.environ.get("KRUNTIME_RUN_NAME", "")

# (namespace, verb, group, resource, subresource, intended)
CHECKS = [
    (ns, "list", "", "pods", "", True),
    (ns, "get", "", "pods", "log", True),
    (ns, "list", "", "events", "", True),
    (ns, "delete", "", "pods", "", False),
    (ns, "create", "", "pods", "", False),
    (ns, "create", "", "pods", "exec", False),
    (ns, "patch", "apps", "deployments", "", False),
    (ns, "list", "", "secrets", "", False),
    (ns, "get", "", "configmaps", "", False),
    (own, "list", "", "pods", "", False),
    (own, "list", "", "secrets", "", False),
    (own, "list", "kruntimes.io", "runs", "", False),
    (own, "patch", "kruntimes.io", "runs", "status", False),
    (own, "create", "coordination.k8s.io", "leases", "", False),
    ("", "list", "", "pods", "", False),
    ("", "list", "", "nodes", "", False),
]

whoami = kube.request("POST", "/apis/authentication.k8s.io/v1/selfsubjectreviews", body={
    "apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"})
username = whoami["status"]["userInfo"]["username"]

checks = []
for namespace, verb, group, resource, sub, intended in CHECKS:
    attrs = {"verb": verb, "group": group, "resource": resource}
    if namespace:
        attrs["namespace"] = namespace
    if sub:
        attrs["subresource"] = sub
    review = kube.request("POST", "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", body={
        "apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectAccessReview",
        "spec": {"resourceAttributes": attrs}})
    allowed = bool(review["status"].get("allowed"))
    checks.append({
        "namespace": namespace or "(all)", "verb": verb,
        "resource": (f"{resource}/{sub}" if sub else resource) + (f".{group}" if group else ""),
        "allowed": allowed, "intended": intended,
    })


def attempt(what: str, method: str, path: str, query: dict | None = None, body: dict | None = None) -> dict:
    """Tries a request for real; dryRun=All for writes, so nothing changes even when allowed."""
    try:
        kube.request(method, path, query, body,
                     content_type="application/merge-patch+json" if method == "PATCH" else "application/json")
        return {"attempt": what, "status": 200, "outcome": "allowed"}
    except kube.ApiError as e:
        return {"attempt": what, "status": e.status, "outcome": "forbidden" if e.status == 403 else e.message[:200]}


pods = kube.read_json("work/pods.json")
victim = pods[0]["name"] if pods else "none"
attempts = [
    attempt(f"list secrets in {ns}", "GET", f"/api/v1/namespaces/{ns}/secrets"),
    attempt(f"delete pod {ns}/{victim} (dry run)", "DELETE", f"/api/v1/namespaces/{ns}/pods/{victim}", {"dryRun": "All"}),
    attempt(f"list pods in {own}", "GET", f"/api/v1/namespaces/{own}/pods"),
]
if run:
    # The session's own Run: a dry-run merge patch of its status shows whether this identity could
    # rewrite Run statuses (the runtimed sidecar's permission; see the README's gaps).
    attempts.append(attempt(
        f"patch the status of run {own}/{run} (dry run)", "PATCH",
        f"/apis/kruntimes.io/v1alpha1/namespaces/{own}/runs/{run}/status", {"dryRun": "All"},
        {"status": {"message": "dry run by the diagnosis agent"}}))

unintended = [c for c in checks if c["allowed"] and not c["intended"]]
missing = [c for c in checks if c["intended"] and not c["allowed"]]
kube.write_json("work/permissions.json", {
    "username": username, "checks": checks, "attempts": attempts,
    "unintended": unintended, "missing": missing,
})
print(f"identity: {username}")
for c in checks:
    mark = "ok " if c["allowed"] == c["intended"] else "!! "
    print(f"{mark}{'allowed' if c['allowed'] else 'denied ':7}  {c['verb']:6} {c['resource']:32} in {c['namespace']}")
for a in attempts:
    print(f"tried: {a['attempt']}: {a['status']} {a['outcome']}")
