import { describe, expect, test } from "bun:test";
import { PodInfo, PodUsage } from "../scheduler/cache/pod-info.ts";
import type { QueuedRun } from "../scheduler/queue/queued-run.ts";
import { aPod } from "../testing/fixtures.ts";
import { poolLoad } from "./pool-load.ts";

const perPod = { runs: 4 };

function pod(name: string, runs: number, o: { sealed?: boolean; terminating?: boolean } = {}): PodInfo {
  const p = aPod({ name, terminating: o.terminating ?? false });
  const usage = new PodUsage(`ns/${name}`, p.metadata.uid ?? "");
  for (let i = 0; i < runs; i++) usage.add(`ns/${name}-${i}`, ["runs"], [1]);
  if (o.sealed) usage.spent = true;
  return new PodInfo(p, usage);
}
const queued = (key: string, extra: Partial<QueuedRun> = {}): QueuedRun =>
  ({ key, runtimeKey: "ns/rt", names: ["runs"], amounts: [1], ...extra }) as QueuedRun;

describe("poolLoad", () => {
  test("capacity in use plus Pending Runs another pod could take", () => {
    const load = poolLoad(
      "ns/rt",
      perPod,
      [pod("a", 3), pod("b", 0, { sealed: true }), pod("c", 2, { terminating: true })],
      [
        queued("ns/1"),
        queued("ns/2", { amounts: [2] }),
        queued("ns/session", { exclusive: true }),
        queued("ns/too-big", { amounts: [5] }),
        queued("ns/ws", { waiting: { reason: "WorkspaceUnavailable", message: "", sinceMs: 0 } }),
        queued("ns/other", { runtimeKey: "ns/other" }),
      ],
    );
    // a: 3; b: a session's pod counts whole (4); c terminating: not counted.
    expect(load.used).toEqual({ runs: 7 });
    // 1 + 2 + a whole pod for the session; not the Run bigger than a pod, nor the one waiting for its workspace's pod.
    expect(load.pending).toEqual({ runs: 7 });
    expect(load.pendingRuns).toBe(3);
  });
});
