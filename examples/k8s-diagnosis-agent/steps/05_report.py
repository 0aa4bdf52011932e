"""Step 5: a finding per unhealthy pod from the files of steps 1–4 → report.json."""

import datetime
import os

import kube

ns = kube.target_namespace()
pods = kube.read_json("work/pods.json")
events = kube.read_json("work/events.json")
perms = kube.read_json("work/permissions.json")

IMAGE = {"ErrImagePull", "ImagePullBackOff", "InvalidImageName", "ImageNotMapped"}
CONFIG = {"CreateContainerConfigError", "CreateContainerError"}


def log_tail(pod: str, container: str) -> list[str]:
    path = f"work/logs/{pod}.{container}.log"
    if not os.path.exists(path):
        return []
    with open(path, encoding="utf-8", errors="replace") as f:
        return [line for line in f.read().splitlines() if line.strip()][-5:]


def finding(pod: dict) -> dict | None:
    pod_events = [f"{e['reason']}: {e['message']}" for e in events.get(f"Pod/{pod['name']}", [])
                  if e["type"] == "Warning"][-3:]
    if not pod["scheduled"] and pod["unschedulable"]:
        return {"problem": "unschedulable", "detail": pod["unschedulable"], "events": pod_events}
    for c in pod["containers"]:
        cur, last = c["current"], c["last"] or {}
        reason = cur.get("reason", "")
        base = {"container": c["name"], "image": c["image"], "restarts": c["restarts"], "events": pod_events}
        if reason in IMAGE:
            return {"problem": "image cannot be pulled", "detail": f"{reason}: {cur.get('message', '')}".strip(": "),
                    **base}
        if reason in CONFIG:
            return {"problem": "container cannot be configured", "detail": cur.get("message", ""), **base}
        crashed = reason == "CrashLoopBackOff" or (c["restarts"] > 0 and last.get("state") == "terminated")
        if crashed or (cur["state"] == "terminated" and cur.get("exitCode", 0) != 0):
            code = last.get("exitCode", cur.get("exitCode"))
            tail = log_tail(pod["name"], c["name"])
            return {"problem": "crash loop" if crashed else "exited with an error",
                    "detail": f"exit code {code}, {c['restarts']} restarts", "last_log_lines": tail, **base}
        if not c["ready"]:
            return {"problem": "not ready", "detail": f"{cur['state']} {reason}".strip(), **base}
    if not pod["containers"]:
        return {"problem": "no containers started", "detail": pod["phase"], "events": pod_events}
    return None


findings = []
healthy = []
for pod in pods:
    f = finding(pod)
    if f is None:
        healthy.append(pod["name"])
    else:
        findings.append({"pod": pod["name"], "app": pod["app"], "owner": pod["owner"], **f})

intermediate = sorted(os.path.join(d, name) for d, _, names in os.walk("work") for name in names)
report = {
    "namespace": ns,
    "generated_at": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
    "pods": len(pods),
    "healthy": sorted(healthy),
    "findings": findings,
    "permissions": {
        "identity": perms["username"],
        "intended_and_allowed": [f"{c['verb']} {c['resource']} in {c['namespace']}"
                                 for c in perms["checks"] if c["allowed"] and c["intended"]],
        "denied": [f"{c['verb']} {c['resource']} in {c['namespace']}" for c in perms["checks"] if not c["allowed"]],
        "unintended": [f"{c['verb']} {c['resource']} in {c['namespace']}" for c in perms["unintended"]],
        "attempts": perms["attempts"],
    },
    "intermediate_files": intermediate,
}
kube.write_json("report.json", report)
print(f"{len(findings)} findings, {len(healthy)} healthy pods; report.json written")
