/**
 * persistentVolumeClaim volumes on the local node agent, with the real PV binder of
 * kube-controller-manager: a pod whose claim does not exist yet waits in ContainerCreating with a
 * FailedMount event; once the claim exists and the binder binds it to the hostPath PV, the pod
 * starts, writes through a read-write mount into the PV's host directory, and cannot write
 * through a read-only mount of the same claim. Each run uses its own storage class name, so its
 * claim can bind only to its own PV.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type KubeClient, path, R } from "@kruntimes/kube";
import { parseAllDocuments } from "yaml";
import { eventually, testCluster, testNamespace } from "../support/cluster.ts";

const cluster = testCluster();
// Runs only on the local cluster: the PV's host directory must be on the agent's host.
const suite = cluster?.local ? describe : describe.skip;

const PVS = { version: "v1", plural: "persistentvolumes" } as const;
const PVCS = { version: "v1", plural: "persistentvolumeclaims" } as const;

interface PodLike {
  status?: {
    phase?: string;
    containerStatuses?: { state: { waiting?: { reason?: string; message?: string }; terminated?: object } }[];
  };
}

suite("local node agent: persistentVolumeClaim volumes", () => {
  const client = cluster?.client as KubeClient;
  let ns: string;
  let removeNs: () => Promise<void>;
  let hostDir: string;
  let pvName: string;

  beforeAll(async () => {
    const n = await testNamespace(client, "agent-pvc");
    ns = n.name;
    removeNs = n.remove;
    hostDir = mkdtempSync(join(tmpdir(), "krt-pv-"));
    pvName = `krt-test-${ns}`;
    await client.create(path(PVS), {
      metadata: { name: pvName },
      spec: {
        storageClassName: pvName,
        capacity: { storage: "1Gi" },
        accessModes: ["ReadWriteOnce"],
        persistentVolumeReclaimPolicy: "Retain",
        hostPath: { path: join(hostDir, "vol"), type: "DirectoryOrCreate" },
      },
    });
  });
  afterAll(async () => {
    await removeNs?.();
    await client.delete(path(PVS, undefined, pvName)).catch(() => {});
    rmSync(hostDir, { recursive: true, force: true });
  });

  test("a pod waits for its claim, starts once the binder binds it, and writes into the PV", async () => {
    await client.create(path(R.pods, ns), {
      metadata: { name: "writer" },
      spec: {
        // Bound directly: the scheduler would (rightly) hold a pod whose claim does not exist.
        nodeName: cluster!.local!.nodeName,
        restartPolicy: "Never",
        volumes: [
          { name: "rw", persistentVolumeClaim: { claimName: "data" } },
          { name: "ro", persistentVolumeClaim: { claimName: "data", readOnly: true } },
        ],
        containers: [
          {
            name: "c",
            image: "busybox",
            command: [
              "sh",
              "-c",
              "echo hello > /data/greeting && if touch /ro/denied 2>/dev/null; then exit 3; fi && cat /ro/greeting",
            ],
            volumeMounts: [
              { name: "rw", mountPath: "/data" },
              { name: "ro", mountPath: "/ro" },
            ],
          },
        ],
      },
    });
    const waiting = await eventually("writer waits for its claim", async () => {
      const w = (await client.get<PodLike>(path(R.pods, ns, "writer"))).status?.containerStatuses?.[0]?.state
        .waiting;
      return w?.reason === "ContainerCreating" && w.message ? w : undefined;
    });
    expect(waiting.message).toContain(`persistentvolumeclaim "data" not found in namespace ${ns}`);
    const events = await eventually("a FailedMount event", async () => {
      const list = await client.get<{ items: { reason: string; message: string; type: string }[] }>(
        path(R.events, ns),
        { fieldSelector: "involvedObject.name=writer" },
      );
      return list.items.find((e) => e.reason === "FailedMount");
    });
    expect(events.type).toBe("Warning");
    expect(events.message).toContain('persistentvolumeclaim "data" not found');

    await client.create(path(PVCS, ns), {
      metadata: { name: "data" },
      spec: {
        storageClassName: pvName,
        accessModes: ["ReadWriteOnce"],
        resources: { requests: { storage: "100Mi" } },
      },
    });
    const pod = await eventually(
      "writer finished after the claim bound",
      async () => {
        const p = await client.get<PodLike>(path(R.pods, ns, "writer"));
        return p.status?.phase === "Succeeded" || p.status?.phase === "Failed" ? p : undefined;
      },
      60_000,
    );
    const claim = await client.get<{ spec: { volumeName?: string }; status: { phase?: string } }>(
      path(PVCS, ns, "data"),
    );
    expect(claim.status.phase).toBe("Bound");
    expect(claim.spec.volumeName).toBe(pvName);
    const out = await (
      await client.request<Response>("GET", path(R.pods, ns, "writer", "log"), {
        raw: true,
        query: { container: "c" },
      })
    ).text();
    expect(pod.status?.phase, out).toBe("Succeeded");
    expect(out).toBe("hello\n");
    expect(readFileSync(join(hostDir, "vol", "greeting"), "utf8")).toBe("hello\n");
    expect(existsSync(join(hostDir, "vol", "denied"))).toBe(false);
  }, 90_000);

  test("the PV and claim example in docs/local-cluster-node-agent.md is accepted by the apiserver", async () => {
    const doc = readFileSync(join(import.meta.dir, "../../docs/local-cluster-node-agent.md"), "utf8");
    const block =
      /```yaml\n(kind: PersistentVolume[\s\S]*?|apiVersion: v1\nkind: PersistentVolume\n[\s\S]*?)```/.exec(
        doc,
      )?.[1];
    expect(block).toBeDefined();
    const objs = parseAllDocuments(block!).map((d) => d.toJS() as { kind: string });
    expect(objs.map((o) => o.kind)).toEqual(["PersistentVolume", "PersistentVolumeClaim"]);
    await client.request("POST", path(PVS), { body: objs[0], query: { dryRun: "All" } });
    await client.request("POST", path(PVCS, ns), { body: objs[1], query: { dryRun: "All" } });
  });
});
