#!/usr/bin/env python3
"""A Kubernetes diagnosis agent on a kruntimes session.

It opens a session on the `diag` Runtime (whose pods run as a ServiceAccount that may only read
pods, their logs and events in one namespace), uploads the diagnosis steps in steps/, runs them
one after the other — each reads the files the previous ones wrote in the session's workspace —,
downloads the JSON report the last one writes, and cleans up: the session is drained and its Run
deleted, whatever happened.

    python agent.py --target-namespace shop [--runtime diag] [--out diagnosis-report.json]

Credentials: $KUBECONFIG (or ~/.kube/config), or the pod's ServiceAccount when run in a pod; the
gateway is looked up in $KRT_GATEWAY_NAMESPACE (default "kruntimes").
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

from kruntimes import Client, KruntimesError, Session

HERE = Path(__file__).resolve().parent
STEPS = ["01_inventory.py", "02_events.py", "03_logs.py", "04_permissions.py", "05_report.py"]


def upload_steps(session: Session) -> None:
    for path in sorted((HERE / "steps").glob("*.py")):
        session.write_file(f"steps/{path.name}", path.read_bytes(), parents=True)


def run_steps(session: Session, target: str) -> None:
    for i, step in enumerate(STEPS, 1):
        started = time.monotonic()
        # spec.env does not reach a session's commands, so the step's settings go with each exec.
        r = session.exec(["python3", f"steps/{step}"], env={"TARGET_NAMESPACE": target}, timeout=120)
        took = time.monotonic() - started
        print(f"[{i}/{len(STEPS)}] {step} ({took:.1f}s)")
        for line in r.stdout_text.splitlines():
            print(f"      {line}")
        if not r.ok:
            raise SystemExit(
                f"step {step} {'exited ' + str(r.exit_code) if r.reason == 'EXITED' else 'ended ' + r.reason}:\n"
                f"{r.stderr_text[-3000:]}")


def walk(session: Session, path: str) -> list[tuple[str, int]]:
    """Every file under path in the workspace, with its size (list_files pages as it goes)."""
    out: list[tuple[str, int]] = []
    for entry in session.list_files(path):
        if entry.is_dir:
            out += walk(session, entry.path)
        else:
            out.append((entry.path, entry.size))
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--target-namespace", default=os.environ.get("TARGET_NAMESPACE"),
                    help="the namespace to diagnose (default $TARGET_NAMESPACE)")
    ap.add_argument("--runtime", default="diag", help="the Runtime to open the session on (default diag)")
    ap.add_argument("--namespace", help="namespace of the session Run (default: the kubeconfig's)")
    ap.add_argument("--out", default="diagnosis-report.json", help="where to write the report")
    args = ap.parse_args()
    if not args.target_namespace:
        ap.error("--target-namespace (or $TARGET_NAMESPACE) is required")

    with Client(namespace=args.namespace) as client:
        started = time.monotonic()
        session = client.sessions.create(args.runtime, idle_timeout="10m", timeout="30m",
                                          labels={"app.kubernetes.io/name": "k8s-diagnosis-agent"},
                                          wait_timeout=180)
        pod = (session.run.assignment or {}).get("pod", "?")
        print(f"session {session.namespace}/{session.name} ready on pod {pod} "
              f"in {time.monotonic() - started:.1f}s")
        try:
            upload_steps(session)
            run_steps(session, args.target_namespace)
            print("files in the session's workspace:")
            for path, size in walk(session, "work") + [("report.json", session.stat("report.json").size)]:
                print(f"      {size:7d}  {path}")
            report = json.loads(session.read_file("report.json"))
        finally:
            # Drain (running work finishes, then the session ends Succeeded), then delete the Run.
            try:
                ended = session.close(wait=True, timeout=120)
                client.runs.delete(session.name)
                print(f"session {session.name} drained ({ended.phase}) and deleted")
            except KruntimesError as e:
                print(f"cleanup of session {session.name} failed: {e}; delete it with "
                      f"`kubectl -n {session.namespace} delete run {session.name}`", file=sys.stderr)

    Path(args.out).write_text(json.dumps(report, indent=2) + "\n")
    print(f"\n{report['namespace']}: {report['pods']} pods, {len(report['findings'])} findings "
          f"(healthy: {', '.join(report['healthy']) or '-'})")
    for f in report["findings"]:
        print(f"  - {f['pod']}: {f['problem']} — {f['detail']}")
        for line in f.get("last_log_lines", [])[-2:]:
            print(f"      log: {line}")
    perms = report["permissions"]
    print(f"identity {perms['identity']}: denied {len(perms['denied'])} of the checked rights; "
          f"unintended rights: {', '.join(perms['unintended']) or 'none'}")
    print(f"report written to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
