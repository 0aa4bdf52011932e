"""Step 2: the namespace's events, grouped by the object they are about → work/events.json."""

import kube

ns = kube.target_namespace()
items = kube.get(f"/api/v1/namespaces/{ns}/events")["items"]

by_object: dict[str, list] = {}
for e in items:
    obj = e.get("involvedObject") or {}
    key = f"{obj.get('kind', '?')}/{obj.get('name', '?')}"
    by_object.setdefault(key, []).append({
        "type": e.get("type", ""),
        "reason": e.get("reason", ""),
        "message": (e.get("message") or "")[:500],
        "count": e.get("count") or 1,
        "last": e.get("lastTimestamp") or e.get("eventTime") or "",
    })
for events in by_object.values():
    events.sort(key=lambda e: e["last"] or "")

kube.write_json("work/events.json", by_object)
warnings = sum(1 for evs in by_object.values() for e in evs if e["type"] == "Warning")
print(f"{len(items)} events about {len(by_object)} objects, {warnings} warnings")
