"""Step 3: the last lines of every container that crashed or is not ready → work/logs/."""

import os

import kube

ns = kube.target_namespace()
pods = kube.read_json("work/pods.json")
TAIL = 20
saved = 0
for pod in pods:
    for c in pod["containers"]:
        crashed = c["restarts"] > 0 or c["current"]["state"] == "terminated"
        if c["ready"] and not crashed:
            continue
        # A crashed container's useful output is usually the previous attempt's.
        for previous in ([True, False] if crashed else [False]):
            query = {"container": c["name"], "tailLines": TAIL}
            if previous:
                query["previous"] = "true"
            try:
                text = kube.request("GET", f"/api/v1/namespaces/{ns}/pods/{pod['name']}/log", query, raw=True)
            except kube.ApiError as e:
                # 400: the container never started (no log yet), or no previous attempt.
                text = None if e.status in (400, 404) else f"<cannot read the log: {e}>"
            if text:
                break
        if text is None:
            continue
        os.makedirs("work/logs", exist_ok=True)
        with open(f"work/logs/{pod['name']}.{c['name']}.log", "w", encoding="utf-8") as f:
            f.write(text)
        saved += 1
print(f"saved the logs of {saved} containers")
