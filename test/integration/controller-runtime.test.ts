/**
 * The Runtime reconciler on the real control plane, with the controller as a separate process:
 * a Runtime becomes a Deployment (runtime container + runtimed sidecar), ServiceAccount, Role,
 * RoleBinding and headless Service, all owned by it and removed with it; a template change rolls
 * the pods; status readiness follows the pods up and down.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { type Runtime, RuntimeResource } from "@kruntimes/api";
import { type KubeClient, path, R } from "@kruntimes/kube";
import type { Deployment } from "../../controller/kube-types.ts";
import {
  type ControllerProcess,
  startController,
} from "../../controller/testing/cluster/controller-process.ts";
import {
  createRuntime,
  getRuntime,
  heartbeatControl,
  installCrds,
  readyPods,
  runtimeManifest,
} from "../../controller/testing/cluster/objects.ts";
import { eventually, testCluster, testNamespace } from "../support/cluster.ts";

const cluster = testCluster();
// The runtimed stand-in runs from this checkout, so this needs the local cluster's node agent.
const suite = cluster?.local ? describe : describe.skip;

suite("controller: Runtime → warm pool", () => {
  const client = cluster?.client as KubeClient;
  let ns: { name: string; remove(): Promise<void> };
  let ctl: ControllerProcess;

  beforeAll(async () => {
    await installCrds(client);
    ns = await testNamespace(client, "krt-ctl-runtime");
    ctl = startController({ namespace: ns.name, kubeconfig: cluster?.kubeconfig as string });
    await ctl.waitFor("scheduling and reconciling");
  });

  afterAll(async () => {
    ctl?.kill();
    await ctl?.exited;
    await ns?.remove();
  });

  const cond = (rt: { status?: { conditions?: { type: string; status: string }[] } }, type: string) =>
    rt.status?.conditions?.find((c) => c.type === type)?.status;

  test("creates the owned objects with owner references, and status goes Ready", async () => {
    const rt = await createRuntime(
      client,
      ns.name,
      runtimeManifest("pool", { replicas: 2, capacity: { runs: 3 } }),
    );
    const owner = { kind: "Runtime", name: "pool", uid: rt.metadata.uid, controller: true };
    const objects: [string, string][] = [
      [path(R.deployments, ns.name, "pool"), "Deployment"],
      [path(R.services, ns.name, "pool"), "Service"],
      [path(R.serviceAccounts, ns.name, "pool-runtimed"), "ServiceAccount"],
      [path(R.roles, ns.name, "pool-runtimed"), "Role"],
      [path(R.roleBindings, ns.name, "pool-runtimed"), "RoleBinding"],
    ];
    for (const [p, kind] of objects) {
      const obj = await eventually(`${kind} pool`, () =>
        client.get<{ metadata: { ownerReferences?: unknown[] } }>(p).catch(() => undefined),
      );
      expect(obj.metadata.ownerReferences).toEqual([expect.objectContaining(owner)]);
    }
    const svc = await client.get<{ spec: { clusterIP: string } }>(path(R.services, ns.name, "pool"));
    expect(svc.spec.clusterIP).toBe("None");
    const dep = await client.get<{ spec: { template: { spec: { containers: { name: string }[] } } } }>(
      path(R.deployments, ns.name, "pool"),
    );
    expect(dep.spec.template.spec.containers.map((c) => c.name)).toEqual(["runtime", "runtimed"]);

    const ready = await eventually(
      "Runtime pool Ready with 2 available pods",
      async () => {
        const r = await getRuntime(client, ns.name, "pool");
        return r.status?.availableReplicas === 2 && cond(r, "Ready") === "True" ? r : undefined;
      },
      60_000,
    );
    expect(ready.status).toMatchObject({
      replicas: 2,
      readyReplicas: 2,
      availableReplicas: 2,
      observedGeneration: 1,
    });
    expect(cond(ready, "Progressing")).toBe("False");
    // runtimed's heartbeat Leases exist, held by the pod UIDs.
    for (const pod of await readyPods(client, ns.name, "pool")) {
      const lease = await client.get<{ spec: { holderIdentity: string } }>(
        path(R.leases, ns.name, pod.metadata.name),
      );
      expect(lease.spec.holderIdentity).toBe(pod.metadata.uid as string);
    }
  });

  test("readiness goes down and up with the pods", async () => {
    // How fast status follows is measured by bench/runtime-readiness, not bounded here.
    const [pod] = await readyPods(client, ns.name, "pool");
    if (!pod) throw new Error("no ready pod");
    await heartbeatControl(pod, "unready");
    const down = await eventually(
      "readyReplicas 1",
      async () => {
        const r = await getRuntime(client, ns.name, "pool");
        return r.status?.readyReplicas === 1 ? r : undefined;
      },
      60_000,
    );
    expect(cond(down, "Ready")).toBe("False");
    expect(down.status?.availableReplicas).toBe(1);
    await heartbeatControl(pod, "ready");
    await eventually(
      "Ready again",
      async () => cond(await getRuntime(client, ns.name, "pool"), "Ready") === "True",
      60_000,
    );
  });

  test("a template change rolls the pods onto the new template", async () => {
    const before = new Set((await readyPods(client, ns.name, "pool")).map((p) => p.metadata.uid));
    const oldDep = await client.get<Deployment>(path(R.deployments, ns.name, "pool"));
    const oldHash = oldDep.metadata.annotations?.["kruntimes.io/template-hash"];
    await client.patch(
      path(RuntimeResource, ns.name, "pool"),
      {
        spec: {
          template: {
            spec: {
              containers: [
                {
                  name: "runtime",
                  image: "busybox",
                  command: ["sleep", "infinity"],
                  env: [{ name: "V", value: "2" }],
                },
              ],
            },
          },
        },
      },
      "merge",
    );
    const dep = await eventually("Deployment with a new template hash", async () => {
      const d = await client.get<Deployment>(path(R.deployments, ns.name, "pool"));
      const h = d.metadata.annotations?.["kruntimes.io/template-hash"];
      return h && h !== oldHash ? d : undefined;
    });
    const newHash = dep.metadata.annotations?.["kruntimes.io/template-hash"];
    await eventually(
      "2 ready pods on the new template, none of the old ones, Runtime Ready and not Progressing",
      async () => {
        const pods = await readyPods(client, ns.name, "pool");
        const r = await getRuntime(client, ns.name, "pool");
        return (
          pods.length === 2 &&
          pods.every(
            (p) =>
              p.metadata.annotations?.["kruntimes.io/template-hash"] === newHash &&
              !before.has(p.metadata.uid),
          ) &&
          r.status?.observedGeneration === 2 &&
          cond(r, "Ready") === "True" &&
          cond(r, "Progressing") === "False"
        );
      },
      90_000,
    );
  });

  test("a capacity change also rolls out (the annotation is part of the template)", async () => {
    await client.patch(path(RuntimeResource, ns.name, "pool"), { spec: { capacity: { runs: 5 } } }, "merge");
    await eventually(
      "pods annotated with the new capacity",
      async () => {
        const pods = await readyPods(client, ns.name, "pool");
        return (
          pods.length === 2 &&
          pods.every((p) => p.metadata.annotations?.["kruntimes.io/capacity"] === '{"runs":5}')
        );
      },
      90_000,
    );
  });

  test("the example in docs/concepts/runtimes.md becomes Ready", async () => {
    const doc = await Bun.file(new URL("../../docs/concepts/runtimes.md", import.meta.url)).text();
    const yaml = /```yaml\n([\s\S]*?)```/.exec(doc)?.[1];
    if (!yaml) throw new Error("no yaml example in runtimes.md");
    const example = Bun.YAML.parse(yaml) as Runtime;
    await createRuntime(client, ns.name, example);
    const name = example.metadata.name as string;
    await eventually(
      `${name} Ready with ${example.spec.replicas} available`,
      async () => {
        const r = await getRuntime(client, ns.name, name);
        return r.status?.availableReplicas === example.spec.replicas && cond(r, "Ready") === "True";
      },
      60_000,
    );
    await client.delete(path(RuntimeResource, ns.name, name));
  });

  test("deleting the Runtime removes everything it owns", async () => {
    await client.delete(path(RuntimeResource, ns.name, "pool"));
    for (const p of [
      path(R.deployments, ns.name, "pool"),
      path(R.services, ns.name, "pool"),
      path(R.serviceAccounts, ns.name, "pool-runtimed"),
      path(R.roles, ns.name, "pool-runtimed"),
      path(R.roleBindings, ns.name, "pool-runtimed"),
    ]) {
      await eventually(
        `${p} deleted`,
        () =>
          client.get(p).then(
            () => false,
            () => true,
          ),
        60_000,
      );
    }
  });
});
