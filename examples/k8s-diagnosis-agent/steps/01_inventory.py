"""Step 1: every pod of the target namespace and the state of each container → work/pods.json."""

import kube

ns = kube.target_namespace()
pods = kube.get(f"/api/v1/namespaces/{ns}/pods")["items"]


def state(s: dict) -> dict:
    for kind in ("waiting", "running", "terminated"):
        if kind in (s or {}):
            detail = s[kind] or {}
            return {"state": kind, **{k: detail[k] for k in ("reason", "message", "exitCode") if k in detail}}
    return {"state": "unknown"}


inventory = []
for p in pods:
    meta, spec, status = p["metadata"], p["spec"], p.get("status") or {}
    images = {c["name"]: c.get("image", "") for c in spec.get("containers", [])}
    containers = []
    for cs in status.get("containerStatuses") or []:
        containers.append({
            "name": cs["name"],
            "image": images.get(cs["name"], cs.get("image", "")),
            "ready": bool(cs.get("ready")),
            "restarts": cs.get("restartCount", 0),
            "current": state(cs.get("state")),
            "last": state(cs.get("lastState")) if cs.get("lastState") else None,
        })
    conditions = {c["type"]: c for c in status.get("conditions") or []}
    inventory.append({
        "name": meta["name"],
        "owner": next((o["kind"] + "/" + o["name"] for o in meta.get("ownerReferences") or []), ""),
        "app": (meta.get("labels") or {}).get("app", ""),
        "phase": status.get("phase", "Unknown"),
        "scheduled": conditions.get("PodScheduled", {}).get("status") == "True",
        "unschedulable": conditions.get("PodScheduled", {}).get("message", "")
        if conditions.get("PodScheduled", {}).get("status") == "False" else "",
        "containers": containers,
    })

kube.write_json("work/pods.json", inventory)
not_ready = [p["name"] for p in inventory if not p["containers"] or not all(c["ready"] for c in p["containers"])]
print(f"{len(inventory)} pods in {ns}, {len(not_ready)} not ready: {', '.join(not_ready) or '-'}")
