/**
 * The local node agent across its own restarts: after a graceful restart pods keep their IPs and
 * count a restart; a pod deleted while the agent was down is finished and removed; after a crash
 * (SIGKILL) the processes a container forked are killed by the next agent, not left behind.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { path, R } from "@kruntimes/kube";
import { controlComponent, eventually, testCluster, testNamespace } from "../support/cluster.ts";

const cluster = testCluster();
// Runs only on the local cluster: it stops, kills and restarts the node agent.
const suite = cluster?.local ? describe : describe.skip;

interface PodLike {
  metadata: { name: string; uid: string; deletionTimestamp?: string };
  status?: {
    phase?: string;
    podIP?: string;
    conditions?: { type: string; status: string }[];
    containerStatuses?: { restartCount: number; state: { running?: object } }[];
  };
}

/** Live processes whose environment carries `marker` (children inherit it). */
function pidsWith(marker: string): number[] {
  const out: number[] = [];
  for (const name of readdirSync("/proc")) {
    if (!/^[0-9]+$/.test(name)) continue;
    try {
      if (readFileSync(`/proc/${name}/stat`, "utf8").split(") ")[1]?.startsWith("Z")) continue;
      if (readFileSync(`/proc/${name}/environ`, "utf8").split("\0").includes(marker)) out.push(Number(name));
    } catch {
      // exited meanwhile
    }
  }
  return out;
}

function sleeper(name: string, marker: string) {
  return {
    metadata: { name },
    spec: {
      // Node 1's agent is the one this suite stops and kills (a cluster may have several nodes).
      nodeName: cluster?.local?.nodeName,
      terminationGracePeriodSeconds: 2,
      containers: [
        {
          name: "c",
          image: "busybox",
          // A forked child (the grandchild of the agent) that pdeathsig alone would not kill.
          command: ["sh", "-c", "sleep 3600 & sleep 3600"],
          env: [{ name: "KRT_TEST_MARKER", value: marker }],
        },
      ],
    },
  };
}

async function agentState(): Promise<{ pid: number; running: boolean }> {
  const res = await fetch("http://localhost/status", { unix: cluster!.local!.controlSocket } as RequestInit);
  return ((await res.json()) as Record<string, { pid: number; running: boolean }>)["node-agent"]!;
}
const agentPid = async () => (await agentState()).pid;
const agentRunning = async () => (await agentState()).running;

suite("local node agent: its own restarts", () => {
  const client = cluster!.client;
  let ns: string;
  let removeNs: () => Promise<void>;
  const getPod = (name: string) => client.get<PodLike>(path(R.pods, ns, name));
  const running = async (name: string) => {
    const p = await getPod(name);
    return p.status?.conditions?.find((c) => c.type === "Ready")?.status === "True" ? p : undefined;
  };
  const gone = async (name: string) =>
    !(await client.list<PodLike>(path(R.pods, ns))).items.some((p) => p.metadata.name === name);

  beforeAll(async () => {
    const n = await testNamespace(client, "agent-recovery");
    ns = n.name;
    removeNs = n.remove;
  });
  afterAll(async () => {
    // Whatever happened above, leave a running agent behind (and only one).
    if (!(await agentRunning())) await controlComponent(cluster!.local!, "node-agent", "start");
    await removeNs?.();
  });

  test("a graceful agent restart keeps pod IPs and counts a restart; deletions while down complete", async () => {
    const tag = `keep-${ns}`;
    await client.create(path(R.pods, ns), sleeper("keep", tag));
    await client.create(path(R.pods, ns), sleeper("doomed", `doomed-${ns}`));
    const before = await eventually("keep running", () => running("keep"));
    await eventually("doomed running", () => running("doomed"));

    await controlComponent(cluster!.local!, "node-agent", "stop");
    // The agent stops its pods' processes when it stops.
    expect(pidsWith(`KRT_TEST_MARKER=${tag}`)).toEqual([]);
    await client.delete(path(R.pods, ns, "doomed"));
    expect((await getPod("doomed")).metadata.deletionTimestamp).toBeDefined();
    await controlComponent(cluster!.local!, "node-agent", "start");

    const after = await eventually("keep running again", async () => {
      const p = await running("keep");
      return p?.status?.containerStatuses?.[0]?.restartCount === 1 ? p : undefined;
    });
    expect(after.metadata.uid).toBe(before.metadata.uid);
    expect(after.status?.podIP).toBe(before.status?.podIP);
    await eventually("doomed removed", () => gone("doomed"));
  }, 180_000);

  test("after an agent crash the next agent kills what the containers forked", async () => {
    const tag = `crash-${ns}`;
    await client.create(path(R.pods, ns), sleeper("crashy", tag));
    await eventually("crashy running", () => running("crashy"));
    // Ready comes when sh starts; its background child may be forked a moment later.
    const forked = await eventually("sh and its forked sleep", async () => {
      const pids = pidsWith(`KRT_TEST_MARKER=${tag}`);
      return pids.length >= 2 ? pids : undefined;
    });
    expect(forked.length).toBeGreaterThanOrEqual(2);

    process.kill(await agentPid(), "SIGKILL");
    // Start only once the supervisor saw the exit, or it would track the wrong process.
    await eventually("supervisor saw the agent exit", async () => !(await agentRunning()), 30_000);
    // pdeathsig takes the container's main process with the agent; its forked child survives.
    await eventually(
      "main process gone",
      async () => pidsWith(`KRT_TEST_MARKER=${tag}`).length < forked.length,
      30_000,
    );
    await controlComponent(cluster!.local!, "node-agent", "start");
    await eventually("restarted under the new agent", async () => {
      const p = await running("crashy");
      return p?.status?.containerStatuses?.[0]?.restartCount === 1;
    });
    const now = pidsWith(`KRT_TEST_MARKER=${tag}`);
    for (const pid of forked) expect(now).not.toContain(pid);
    await client.delete(path(R.pods, ns, "crashy"));
    await eventually("crashy removed", () => gone("crashy"));
    await eventually(
      "no processes left",
      async () => pidsWith(`KRT_TEST_MARKER=${tag}`).length === 0,
      30_000,
    );
  }, 180_000);
});
