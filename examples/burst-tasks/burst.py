#!/usr/bin/env python3
"""A burst of short task Runs: create them all at once, wait for every one by watching it, and
summarize — phases, outputs, and the latency from create to Succeeded out of each Run's
status.timing (microsecond stamps written by the client, the scheduler and runtimed).

    python burst.py [--count 200] [--runtime bash] [--parallel 32] [--keep]

Credentials: $KUBECONFIG (or ~/.kube/config), or the pod's ServiceAccount when run in a pod.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import math
import sys
import time
import uuid

from kruntimes import AsyncClient, Run

# Each task squares its N and reports it as an output (key=value lines in $KRUNTIME_OUTPUTS).
SCRIPTS = {
    "bash": 'echo "square=$((N * N))" >> "$KRUNTIME_OUTPUTS"\n',
    "python": 'import os\nn = int(os.environ["N"])\nwith open(os.environ["KRUNTIME_OUTPUTS"], "a") as f:\n'
              '    f.write(f"square={n * n}\\n")\n',
}

STAGES = [
    ("create → scheduled", "createdMicros", "scheduledMicros"),
    ("scheduled → started", "scheduledMicros", "startedMicros"),
    ("started → finished", "startedMicros", "finishedMicros"),
    ("finished → reported", "finishedMicros", "reportedMicros"),
    ("create → Succeeded", "createdMicros", "reportedMicros"),
]


def percentile(values: list[float], p: float) -> float:
    """Nearest-rank percentile."""
    ordered = sorted(values)
    return ordered[max(0, math.ceil(p / 100 * len(ordered)) - 1)]


async def burst(args: argparse.Namespace) -> int:
    batch = f"burst-{uuid.uuid4().hex[:6]}"
    labels = {"app.kubernetes.io/name": "burst-tasks", "kruntimes.io/burst": batch}
    script = SCRIPTS[args.runtime]
    async with AsyncClient(namespace=args.namespace) as client:
        gate = asyncio.Semaphore(args.parallel)

        async def create(i: int) -> Run:
            async with gate:
                # ttl_seconds: the Runs delete themselves later even if this program dies.
                return await client.runs.create_task(args.runtime, script, env={"N": str(i)}, labels=labels,
                                                     timeout="2m", ttl_seconds=900)

        async def wait(run: Run) -> Run:
            async with gate:
                # One GET, then a watch on this Run until it ends (none when it already has).
                return await client.runs.wait(run.name, timeout=args.timeout)

        first = time.monotonic()
        runs = await asyncio.gather(*(create(i) for i in range(args.count)))
        created = time.monotonic() - first
        print(f"{batch}: created {len(runs)} task Runs on runtime {args.runtime} in {created:.2f}s "
              f"({len(runs) / created:.0f}/s, {args.parallel} creates in flight)")
        finals = await asyncio.gather(*(wait(r) for r in runs))
        ended = time.monotonic() - first

        phases = collections.Counter(r.phase for r in finals)
        print(f"all ended {ended:.2f}s after the first create; phases: "
              + ", ".join(f"{p} {n}" for p, n in phases.most_common()))
        index = {r.name: i for i, r in enumerate(runs)}
        wrong = [r.name for r in finals
                 if r.phase == "Succeeded" and (r.status.get("outputs") or {}).get("square") != str(index[r.name] ** 2)]
        succeeded = [r for r in finals if r.phase == "Succeeded"]
        print(f"outputs: {len(succeeded) - len(wrong)}/{len(succeeded)} Succeeded Runs reported the right square")
        for r in finals:
            if r.phase != "Succeeded":
                print(f"  {r.name}: {r.phase} {r.reason} {r.message}".rstrip())

        print(f"latency in ms over {len(succeeded)} Succeeded Runs (status.timing)")
        print(f"  {'stage':22} {'p50':>8} {'p95':>8} {'max':>8}")
        for stage, start, end in STAGES:
            values = [(t[end] - t[start]) / 1000 for t in (r.status.get("timing") or {} for r in succeeded)
                      if t.get(start) and t.get(end)]
            if values:
                print(f"  {stage:22} {percentile(values, 50):8.1f} {percentile(values, 95):8.1f} {max(values):8.1f}")

        if not args.keep:
            async def delete(run: Run) -> None:
                async with gate:
                    await client.runs.delete(run.name, missing_ok=True)

            await asyncio.gather(*(delete(r) for r in runs))
            print(f"deleted the {len(runs)} Runs (label kruntimes.io/burst={batch})")
        else:
            print(f"kept the Runs: kubectl get runs -l kruntimes.io/burst={batch}")
    return 0 if phases.get("Succeeded") == args.count and not wrong else 1


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--count", type=int, default=200, help="task Runs to create (default 200)")
    ap.add_argument("--runtime", default="bash", choices=sorted(SCRIPTS), help="bash (default) or python")
    ap.add_argument("--parallel", type=int, default=32, help="API requests in flight at once (default 32)")
    ap.add_argument("--timeout", type=float, default=300, help="seconds to wait for each Run (default 300)")
    ap.add_argument("--namespace", help="namespace of the Runs (default: the kubeconfig's)")
    ap.add_argument("--keep", action="store_true", help="do not delete the Runs at the end")
    args = ap.parse_args()
    if not 1 <= args.count <= 10000 or not 1 <= args.parallel <= 90:
        ap.error("--count must be 1–10000 and --parallel 1–90 (the client keeps at most 100 API connections)")
    return asyncio.run(burst(args))


if __name__ == "__main__":
    sys.exit(main())
