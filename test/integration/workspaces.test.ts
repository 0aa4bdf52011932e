/**
 * PersistentWorkspaces on the local cluster: the controller as a process with the REAL runtimed
 * and Runtime Server, and a Runtime whose workspace volume is a PersistentVolumeClaim (a hostPath
 * PV here), so the directories are visible on the host: binding to one pod, data kept between
 * two Runs on it, the first Run picking the Runtime, Runs woken when their workspace appears,
 * Released, deletion removing the directory (Delete) or keeping it (Retain), the TTL after last
 * use, and Lost when the bound pod is replaced.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  isTerminalPhase,
  type PersistentWorkspace,
  type Run,
  RunResource,
  type RunSpec,
  type Runtime,
  WORKSPACE_FINALIZER,
  WorkspaceResource,
  workspaceDirectory,
} from "@kruntimes/api";
import { type KubeClient, KubeError, path, R } from "@kruntimes/kube";
import YAML from "yaml";
import {
  type ControllerProcess,
  startController,
} from "../../controller/testing/cluster/controller-process.ts";
import {
  createRuntime,
  getRuntime,
  installCrds,
  readyPods,
} from "../../controller/testing/cluster/objects.ts";
import { eventually, testCluster, testNamespace } from "../support/cluster.ts";
import { runUntil } from "../support/runs.ts";

const cluster = testCluster();
// runtimed and the Runtime Server run from this checkout, and the PV's directory must be on this
// host: the local cluster's node agent only.
const suite = cluster?.local ? describe : describe.skip;

setDefaultTimeout(60_000);

const PVS = { version: "v1", plural: "persistentvolumes" } as const;
const PVCS = { version: "v1", plural: "persistentvolumeclaims" } as const;

suite("PersistentWorkspaces (controller + real runtimed, workspace volume on a PVC)", () => {
  const client = cluster?.client as KubeClient;
  let ns: { name: string; remove(): Promise<void> };
  let ctl: ControllerProcess;
  let hostDir = "";
  let pvName = "";
  let n = 0;

  const wsPath = (name?: string) => path(WorkspaceResource, ns.name, name);
  const getWs = (name: string) => client.get<PersistentWorkspace>(wsPath(name));
  async function createWs(name: string, spec: PersistentWorkspace["spec"] = { runtime: "bash" }) {
    return client.create<PersistentWorkspace>(wsPath(), {
      apiVersion: "kruntimes.io/v1alpha1",
      kind: "PersistentWorkspace",
      metadata: { name },
      spec,
    });
  }
  const wsUntil = (name: string, what: string, ok: (w: PersistentWorkspace) => boolean, ms = 30_000) =>
    eventually(
      `workspace ${name} ${what}`,
      async () => {
        const w = await getWs(name);
        return ok(w) ? w : undefined;
      },
      ms,
    );
  const gone = (name: string, ms = 30_000) =>
    eventually(
      `workspace ${name} gone`,
      async () => {
        try {
          await getWs(name);
          return false;
        } catch (e) {
          return e instanceof KubeError && e.code === 404;
        }
      },
      ms,
    );
  /** The directory on the host: the PV holds the pods' /workspace, the server's root is runs/. */
  const hostDirOf = (w: PersistentWorkspace) =>
    join(hostDir, "vol", "runs", workspaceDirectory(w.metadata.name ?? "", w.metadata.uid ?? ""));

  async function createRun(workspace: string, inline: string, spec: Partial<RunSpec> = {}): Promise<string> {
    const name = `r${n++}`;
    await client.create<Run>(path(RunResource, ns.name), {
      apiVersion: "kruntimes.io/v1alpha1",
      kind: "Run",
      metadata: { name },
      spec: {
        runtime: "bash",
        mode: { task: {} },
        source: { inline },
        workspace: { name: workspace },
        ...spec,
      },
    });
    return name;
  }
  const finished = (name: string, ms = 30_000) =>
    runUntil(client, ns.name, name, "finished", (r) => isTerminalPhase(r.status?.phase), ms);
  const waitingOn = (name: string, message: string, ms = 30_000) =>
    runUntil(
      client,
      ns.name,
      name,
      `waiting with "${message}"`,
      (r) => r.status?.waitingReason === "WorkspaceUnavailable" && (r.status.message ?? "").includes(message),
      ms,
    );

  beforeAll(async () => {
    await installCrds(client);
    ns = await testNamespace(client, "krt-workspaces");
    hostDir = mkdtempSync(join(tmpdir(), "krt-ws-pv-"));
    pvName = `krt-ws-${ns.name}`;
    // Each run its own storage class name: the claim can bind only to this PV.
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
    await client.create(path(PVCS, ns.name), {
      metadata: { name: "workspaces" },
      spec: {
        storageClassName: pvName,
        accessModes: ["ReadWriteOnce"],
        resources: { requests: { storage: "100Mi" } },
      },
    });
    ctl = startController({
      namespace: ns.name,
      kubeconfig: cluster?.kubeconfig as string,
      runtimed: "real",
    });
    await ctl.waitFor("scheduling and reconciling");
    await createRuntime(client, ns.name, {
      apiVersion: "kruntimes.io/v1alpha1",
      kind: "Runtime",
      metadata: { name: "bash" },
      spec: {
        replicas: 2,
        capacity: { runs: 4 },
        // The pool's workspaces live on the claim (Runtime.spec.workspace is a VolumeSource).
        workspace: { persistentVolumeClaim: { claimName: "workspaces" } },
        template: {
          spec: {
            terminationGracePeriodSeconds: 2,
            containers: [
              {
                name: "runtime",
                image: "ghcr.io/kruntimes/bash",
                env: [{ name: "HOME", value: "/workspace" }],
              },
            ],
          },
        },
      },
    } as Runtime);
    await eventually(
      "Runtime bash: 2 pods available",
      async () => (await getRuntime(client, ns.name, "bash")).status?.availableReplicas === 2,
      120_000,
    );
  }, 180_000);

  afterAll(async () => {
    // Workspaces first, while runtimed still runs to remove their finalizers.
    await client.delete(wsPath()).catch(() => {});
    await eventually(
      "workspaces gone",
      async () => (await client.list(wsPath())).items.length === 0,
      20_000,
    ).catch(async () => {
      for (const w of (await client.list<PersistentWorkspace>(wsPath())).items)
        await client
          .patch(wsPath(w.metadata.name), { metadata: { finalizers: null } }, "merge")
          .catch(() => {});
    });
    ctl?.kill();
    await ctl?.exited;
    await ns?.remove();
    await client.delete(path(PVS, undefined, pvName)).catch(() => {});
    if (hostDir) rmSync(hostDir, { recursive: true, force: true });
  }, 90_000);

  test("binds to one pod; two Runs there share its directory, which stays between them", async () => {
    const created = await createWs("data");
    const w = await wsUntil("data", "Bound", (x) => x.status?.phase === "Bound");
    const pods = (await readyPods(client, ns.name, "bash")).map((p) => [p.metadata.name, p.metadata.uid]);
    expect(pods).toContainEqual([w.status?.boundPod, w.status?.boundPodUID]);
    expect(w.metadata.finalizers).toContain(WORKSPACE_FINALIZER);
    expect(w.status).toMatchObject({
      runtime: "bash",
      path: `/workspace/runs/workspaces/data-${created.metadata.uid?.slice(0, 8)}`,
      activeRuns: 0,
    });
    expect(w.status?.conditions?.find((c) => c.type === "Bound")).toMatchObject({ status: "True" });

    const first = await finished(
      await createRun(
        "data",
        'echo "written by $KRUNTIME_RUN_NAME" > notes.txt\necho "dir=$PWD" >> "$KRUNTIME_OUTPUTS"\n',
      ),
    );
    const second = await finished(await createRun("data", "cat notes.txt\nls\n"));
    for (const r of [first, second]) {
      expect(r.status?.phase).toBe("Succeeded");
      expect(r.status?.assignment?.pod).toBe(w.status?.boundPod as string);
    }
    expect(first.status?.outputs?.dir).toBe(w.status?.path as string);
    expect(second.status?.stdoutTail).toBe(`written by ${first.metadata.name}\nnotes.txt\n`);
    expect(readFileSync(join(hostDirOf(created), "notes.txt"), "utf8")).toBe(
      `written by ${first.metadata.name}\n`,
    );
    const idle = await wsUntil(
      "data",
      "idle again",
      (x) => x.status?.activeRuns === 0 && !!x.status.lastUsedMicros,
    );
    expect(idle.status?.lastUsedMicros as number).toBeGreaterThanOrEqual(
      second.status?.timing?.finishedMicros ?? 0,
    );
  });

  test("the example in docs/concepts/workspaces.md: the second Run reads what the first wrote", async () => {
    const doc = readFileSync(join(import.meta.dir, "../../docs/concepts/workspaces.md"), "utf8");
    const yaml = /```yaml\n([\s\S]*?)```/.exec(doc)?.[1];
    if (!yaml) throw new Error("no yaml example in workspaces.md");
    const [ws, write, read] = YAML.parseAllDocuments(yaml).map((d) => d.toJS()) as [
      PersistentWorkspace,
      Run,
      Run,
    ];
    await client.create(wsPath(), ws);
    await client.create(path(RunResource, ns.name), write);
    expect((await finished(write.metadata.name as string)).status?.phase).toBe("Succeeded");
    await client.create(path(RunResource, ns.name), read);
    const r = await finished(read.metadata.name as string);
    expect(r.status).toMatchObject({ phase: "Succeeded", stdoutTail: "first line\n" });
  });

  test("a Run created before its workspace waits, is woken when it binds, and picks its Runtime", async () => {
    const early = await createRun("later", "echo hi > f\ncat f\n");
    await waitingOn(early, 'PersistentWorkspace "later" not found');
    const t0 = Date.now();
    await createWs("later", {});
    const r = await finished(early);
    const wokenMs = Date.now() - t0;
    expect(r.status).toMatchObject({ phase: "Succeeded", stdoutTail: "hi\n" });
    const w = await getWs("later");
    expect(w.spec.runtime).toBeUndefined();
    expect(w.status).toMatchObject({ phase: "Bound", runtime: "bash", boundPod: r.status?.assignment?.pod });
    // Woken by the workspace's own events, not the 5-minute safety flush.
    expect(wokenMs).toBeLessThan(15_000);
  });

  test("Released takes no new Runs; deleting it removes the directory and wakes the waiting Run", async () => {
    const created = await createWs("rel");
    await finished(await createRun("rel", "echo x > kept\n"));
    expect(existsSync(join(hostDirOf(created), "kept"))).toBe(true);
    await client.patch(wsPath("rel"), { spec: { released: true } }, "merge");
    await wsUntil("rel", "Released", (x) => x.status?.phase === "Released");
    const blocked = await createRun("rel", "echo never\n");
    await waitingOn(blocked, 'PersistentWorkspace "rel" is Released');
    await client.delete(wsPath("rel"));
    await gone("rel");
    expect(existsSync(hostDirOf(created))).toBe(false);
    await waitingOn(blocked, 'PersistentWorkspace "rel" not found');
  });

  test("reclaimPolicy Retain keeps the directory on the volume after deletion", async () => {
    const created = await createWs("keep", { runtime: "bash", reclaimPolicy: "Retain" });
    await finished(await createRun("keep", "echo precious > data\n"));
    await client.delete(wsPath("keep"));
    await gone("keep");
    expect(readFileSync(join(hostDirOf(created), "data"), "utf8")).toBe("precious\n");
  });

  test("ttlSecondsAfterUnused deletes it that long after its last Run, directory included", async () => {
    const created = await createWs("ttl", { runtime: "bash", ttlSecondsAfterUnused: 2 });
    const r = await finished(await createRun("ttl", "echo y > f\n"));
    expect(existsSync(join(hostDirOf(created), "f"))).toBe(true);
    await gone("ttl", 20_000);
    const ended = (r.status?.timing?.finishedMicros ?? 0) / 1000;
    expect(Date.now() - ended).toBeGreaterThanOrEqual(2000);
    expect(existsSync(hostDirOf(created))).toBe(false);
  });

  test("the bound pod replaced: Lost for good, a new Run says so, deletion needs no runtimed", async () => {
    await createWs("lost");
    const w = await wsUntil("lost", "Bound", (x) => x.status?.phase === "Bound");
    await finished(await createRun("lost", "echo z > f\n"));
    await client.delete(path(R.pods, ns.name, w.status?.boundPod), { gracePeriodSeconds: 0 });
    const lost = await wsUntil("lost", "Lost", (x) => x.status?.phase === "Lost");
    expect(lost.status?.message).toContain(`pod "${w.status?.boundPod}"`);
    expect(lost.status?.boundPodUID).toBe(w.status?.boundPodUID as string);
    const late = await createRun("lost", "echo never\n");
    await waitingOn(late, 'PersistentWorkspace "lost" is Lost');
    // The Deployment's new pod never inherits it.
    await eventually(
      "Runtime bash: 2 pods available again",
      async () => (await getRuntime(client, ns.name, "bash")).status?.availableReplicas === 2,
      60_000,
    );
    expect((await getWs("lost")).status?.phase).toBe("Lost");
    await client.delete(wsPath("lost"));
    await gone("lost");
  }, 90_000);
});
