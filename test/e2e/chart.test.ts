/**
 * The Helm chart against a real cluster with the real helm binary: install (CRDs, controller,
 * RBAC, built-in Runtimes), the Runtimes becoming Ready, Runs succeeding on them, an upgrade that
 * changes values and rolls what it should, a second release in another namespace beside the
 * first, and uninstall. Both releases use controller.scope=Namespace so they never touch other
 * tests' namespaces; the cluster-wide default is exercised by the quickstart test.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { isTerminalPhase, type Run, RunResource, type Runtime, RuntimeResource } from "@kruntimes/api";
import { type KubeClient, KubeError, path, R } from "@kruntimes/kube";
import { eventually, testCluster, testNamespace } from "../support/cluster.ts";
import { applyChartCrds, CHART, HELM_MISSING, helm, helmPath } from "./chart-support.ts";

const cluster = testCluster();
if (cluster && !helmPath()) throw new Error(HELM_MISSING);
const suite = cluster ? describe : describe.skip;

interface Deployment {
  metadata: { name: string; generation?: number };
  spec: {
    template: {
      metadata?: { annotations?: Record<string, string> };
      spec: { containers: { args?: string[] }[] };
    };
  };
  status?: {
    observedGeneration?: number;
    readyReplicas?: number;
    updatedReplicas?: number;
    replicas?: number;
  };
}
interface Service {
  spec: { selector: Record<string, string>; ports: { name?: string; port: number; targetPort?: string }[] };
}
interface Lease {
  spec?: { holderIdentity?: string };
}
interface Pod {
  metadata: { name: string; deletionTimestamp?: string };
  status?: { podIP?: string; conditions?: { type: string; status: string }[] };
}

const podReady = (p: Pod) =>
  !p.metadata.deletionTimestamp &&
  p.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True");

async function pods(client: KubeClient, ns: string, selector: string): Promise<Pod[]> {
  return (await client.list<Pod>(path(R.pods, ns), { labelSelector: selector })).items;
}

async function runtimeReady(client: KubeClient, ns: string, name: string): Promise<Runtime | undefined> {
  const rt = await client.get<Runtime>(path(RuntimeResource, ns, name));
  const ready = rt.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True");
  return ready &&
    (rt.status?.readyReplicas ?? 0) >= 1 &&
    rt.status?.observedGeneration === rt.metadata.generation
    ? rt
    : undefined;
}

/** Creates an inline-script Run and waits for it to end; returns its final state. */
async function runScript(client: KubeClient, ns: string, runtime: string, script: string): Promise<Run> {
  const created = await client.create<Run>(path(RunResource, ns), {
    apiVersion: "kruntimes.io/v1alpha1",
    kind: "Run",
    metadata: { generateName: `${runtime}-chart-` },
    spec: { runtime, mode: { task: {} }, source: { inline: script } },
  });
  return eventually(
    `Run ${created.metadata.name} on ${runtime} to finish`,
    async () => {
      const run = await client.get<Run>(path(RunResource, ns, created.metadata.name));
      return isTerminalPhase(run.status?.phase) ? run : undefined;
    },
    60_000,
  );
}

suite("chart on a cluster (helm install / upgrade / uninstall)", () => {
  const kubeconfig = cluster?.kubeconfig as string;
  const client = cluster?.client as KubeClient;
  let nsA: { name: string; remove(): Promise<void> };
  let nsB: { name: string; remove(): Promise<void> };
  const releases: [string, string][] = [];

  const install = async (release: string, ns: string, sets: string[], scope = "Namespace") => {
    // Other suites sharing the cluster re-apply the CRDs as their own; make them Helm's again.
    await applyChartCrds(client);
    const args = ["install", release, CHART, "-n", ns, "--wait", "--timeout", "3m"];
    for (const s of [`controller.scope=${scope}`, ...sets]) args.push("--set", s);
    const r = await helm(args, kubeconfig);
    if (r.code === 0) releases.push([release, ns]);
    return r;
  };

  beforeAll(async () => {
    nsA = await testNamespace(client, "chart-a");
    nsB = await testNamespace(client, "chart-b");
  });

  afterAll(async () => {
    for (const [release, ns] of releases) await helm(["uninstall", release, "-n", ns, "--wait"], kubeconfig);
    await nsA?.remove();
    await nsB?.remove();
  });

  test("helm install: controller, its RBAC and the built-in Runtimes", async () => {
    const r = await install("kr", nsA.name, []);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("STATUS: deployed");
    const dep = await client.get<Deployment>(path(R.deployments, nsA.name, "kr-kruntimes-controller"));
    expect(dep.status?.readyReplicas).toBe(1);
    expect(dep.spec.template.spec.containers[0]?.args).toContain(`--namespace=${nsA.name}`);
    await client.get(path(R.roles, nsA.name, "kr-kruntimes-controller"));
    await client.get(path(R.roleBindings, nsA.name, "kr-kruntimes-controller"));
    await client.get(path(R.serviceAccounts, nsA.name, "kr-kruntimes-controller"));
    await client.get(path(R.services, nsA.name, "kr-kruntimes-controller-metrics"));
  }, 240_000);

  test("the metrics Service selects the controller, which serves /metrics on its pod IP", async () => {
    // The Service's own selector finds the controller pod (EndpointSlices cannot hold the local
    // cluster's loopback pod IPs, so the selector is checked directly).
    const svc = await client.get<Service>(path(R.services, nsA.name, "kr-kruntimes-controller-metrics"));
    expect(svc.spec.ports).toEqual([
      expect.objectContaining({ name: "metrics", port: 8080, targetPort: "metrics" }),
    ]);
    const selector = Object.entries(svc.spec.selector)
      .map(([k, v]) => `${k}=${v}`)
      .join(",");
    const selected = (await pods(client, nsA.name, selector)).filter(podReady);
    expect(selected).toHaveLength(1);
    // Pod IPs are host addresses only on the local cluster (kind's are inside Docker).
    if (!cluster?.local) return;
    const ip = selected[0]?.status?.podIP;
    const text = await (await fetch(`http://${ip}:8080/metrics`)).text();
    expect(text).toContain("kruntimes_scheduler_queue_depth");
    expect((await fetch(`http://${ip}:8080/readyz`)).status).toBe(200);
  });

  test("the built-in Runtimes become Ready on their warm pods", async () => {
    for (const name of ["bash", "python"]) {
      const rt = await eventually(
        `Runtime ${name} Ready`,
        () => runtimeReady(client, nsA.name, name),
        120_000,
      );
      expect(rt.spec.capacity?.runs).toBe(8);
    }
    // The controller made each Runtime's objects with the chart's RBAC (nothing was denied).
    await client.get(path(R.roles, nsA.name, "bash-runtimed"));
    await client.get(path(R.deployments, nsA.name, "python"));
  }, 150_000);

  test("runtimed's Lease requests are classified by the chart's FlowSchema; its other requests are not", async () => {
    const fs = await client.get<{ metadata: { uid: string } }>(
      `/apis/flowcontrol.apiserver.k8s.io/v1/flowschemas/${nsA.name}-kr-kruntimes-runtimed-heartbeats`,
    );
    // As bash's runtimed: API Priority and Fairness classifies a request before authorization, and
    // says which FlowSchema matched in a response header.
    const as = async (p: string) => {
      const sa = `system:serviceaccount:${nsA.name}:bash-runtimed`;
      const headers = new Headers({ "Impersonate-User": sa });
      for (const g of [
        "system:serviceaccounts",
        `system:serviceaccounts:${nsA.name}`,
        "system:authenticated",
      ])
        headers.append("Impersonate-Group", g);
      const { server, ca, cert, key } = client.conn;
      const res = await fetch(`${server}${p}`, { headers, tls: { ca, cert, key } } as RequestInit);
      await res.arrayBuffer();
      return res.headers.get("x-kubernetes-pf-flowschema-uid");
    };
    // The apiserver's APF config controller takes a new FlowSchema up from its own informer, a
    // moment after helm created it.
    const leases = `/apis/coordination.k8s.io/v1/namespaces/${nsA.name}/leases/any`;
    await eventually(
      "the heartbeat FlowSchema classifying Lease requests",
      async () => (await as(leases)) === fs.metadata.uid,
      30_000,
    );
    expect(await as(path(RunResource, nsA.name))).not.toBe(fs.metadata.uid);
  }, 60_000);

  test("Runs succeed on both built-in Runtimes", async () => {
    const bash = await runScript(client, nsA.name, "bash", 'echo "hello from $(hostname)"; echo warn >&2');
    expect(bash.status?.phase).toBe("Succeeded");
    expect(bash.status?.exitCode).toBe(0);
    expect(bash.status?.stdoutTail).toStartWith("hello from bash-");
    expect(bash.status?.stderrTail).toBe("warn\n");
    const py = await runScript(client, nsA.name, "python", "import sys\nprint(6 * 7)\nsys.exit(3)\n");
    expect(py.status?.phase).toBe("Failed");
    expect(py.status?.exitCode).toBe(3);
    expect(py.status?.stdoutTail).toBe("42\n");
  }, 150_000);

  test("helm upgrade: changed values roll the controller and the bash pool", async () => {
    const controllerSelector = "app.kubernetes.io/instance=kr,app.kubernetes.io/component=controller";
    const oldController = (await pods(client, nsA.name, controllerSelector)).map((p) => p.metadata.name);
    const oldBash = (await pods(client, nsA.name, "kruntimes.io/runtime=bash")).map((p) => p.metadata.name);
    expect(oldController).toHaveLength(1);
    expect(oldBash).toHaveLength(1);

    const r = await helm(
      [
        "upgrade",
        "kr",
        CHART,
        "-n",
        nsA.name,
        "--reuse-values",
        "--wait",
        "--timeout",
        "3m",
        "--set",
        "controller.logLevel=debug",
        "--set",
        "controller.replicas=2",
        "--set",
        "runtimes.bash.capacity.runs=4",
      ],
      kubeconfig,
    );
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("REVISION: 2");

    const dep = await client.get<Deployment>(path(R.deployments, nsA.name, "kr-kruntimes-controller"));
    expect(dep.spec.template.spec.containers[0]?.args).toContain("--log-level=debug");
    // Two replicas of the new template, both Ready (a standby's informers sync too), one leader.
    const now = await eventually(
      "the controller replaced by two pods of the new template",
      async () => {
        const list = await pods(client, nsA.name, controllerSelector);
        const fresh = list.filter((p) => !oldController.includes(p.metadata.name));
        return list.length === 2 && fresh.length === 2 && fresh.every(podReady) ? fresh : undefined;
      },
      120_000,
    );
    const holder = await eventually(
      "the leader Lease held by one of the new pods",
      async () => {
        const lease = await client.get<Lease>(path(R.leases, nsA.name, "kr-kruntimes-controller"));
        const id = lease.spec?.holderIdentity ?? "";
        return now.some((p) => id.startsWith(`${p.metadata.name}_`)) ? id : undefined;
      },
      60_000,
    );
    expect(holder).toBeTruthy();
    const bashRt = await eventually(
      "bash Runtime with capacity 4, Ready",
      async () => {
        const rt = await runtimeReady(client, nsA.name, "bash");
        return rt?.spec.capacity?.runs === 4 ? rt : undefined;
      },
      120_000,
    );
    expect(bashRt.spec.replicas).toBe(1);
    await eventually(
      "the bash pool rolled to new pods",
      async () => {
        const now = (await pods(client, nsA.name, "kruntimes.io/runtime=bash")).filter(podReady);
        return now.length === 1 && !oldBash.includes(now[0]!.metadata.name);
      },
      120_000,
    );
    const after = await runScript(client, nsA.name, "bash", "echo after upgrade");
    expect(after.status?.phase).toBe("Succeeded");
    expect(after.status?.stdoutTail).toBe("after upgrade\n");
  }, 400_000);

  test("a second release in another namespace works beside the first", async () => {
    const r = await install("kr", nsB.name, ["runtimes.python.enabled=false"]);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    await eventually(
      "bash Ready in the second release",
      () => runtimeReady(client, nsB.name, "bash"),
      120_000,
    );
    await expect(client.get(path(RuntimeResource, nsB.name, "python"))).rejects.toBeInstanceOf(KubeError);
    const runB = await runScript(client, nsB.name, "bash", "echo second release");
    expect(runB.status?.stdoutTail).toBe("second release\n");
    // Each release has its own leader Lease, in its own namespace.
    await client.get(path(R.leases, nsA.name, "kr-kruntimes-controller"));
    await client.get(path(R.leases, nsB.name, "kr-kruntimes-controller"));
    const runA = await runScript(client, nsA.name, "bash", "echo first release");
    expect(runA.status?.stdoutTail).toBe("first release\n");
    const list = await helm(["list", "-A", "-o", "json"], kubeconfig);
    const mine = (JSON.parse(list.stdout) as { name: string; namespace: string; status: string }[]).filter(
      (x) => [nsA.name, nsB.name].includes(x.namespace),
    );
    expect(mine.map((x) => x.status)).toEqual(["deployed", "deployed"]);
  }, 240_000);

  test("helm uninstall removes the controller and the Runtimes with their pools; CRDs stay", async () => {
    for (const [release, ns] of releases.splice(0)) {
      const r = await helm(["uninstall", release, "-n", ns, "--wait", "--timeout", "2m"], kubeconfig);
      expect(r.code).toBe(0);
    }
    for (const ns of [nsA.name, nsB.name]) {
      await eventually(
        `every chart and Runtime object gone from ${ns}`,
        async () => {
          const left = [
            ...(await client.list<{ metadata: { name: string } }>(path(R.deployments, ns))).items,
            ...(await client.list<{ metadata: { name: string } }>(path(RuntimeResource, ns))).items,
            ...(await client.list<{ metadata: { name: string } }>(path(R.roles, ns))).items,
            ...(await pods(client, ns, "app.kubernetes.io/part-of=kruntimes")),
            ...(await pods(client, ns, "kruntimes.io/runtime")),
          ];
          return left.length === 0;
        },
        120_000,
      );
    }
    await client.get(path(R.crds, undefined, "runs.kruntimes.io"));
    await client.get(path(R.crds, undefined, "runtimes.kruntimes.io"));
  }, 300_000);

  test("cluster-scoped installs of the same release name in two namespaces do not collide", async () => {
    // No controller runs (replicas 0) and no Runtimes: only the objects are checked, so no
    // cluster-wide controller touches other suites' namespaces. No workspace webhook either: with
    // no controller to answer it, it would refuse workspace Runs in every namespace meanwhile.
    const sets = [
      "controller.replicas=0",
      "webhook.enabled=false",
      "runtimes.bash.enabled=false",
      "runtimes.python.enabled=false",
    ];
    for (const ns of [nsA.name, nsB.name]) {
      const r = await install("kr", ns, sets, "Cluster");
      expect(r.stderr).toBe("");
      expect(r.code).toBe(0);
    }
    const rbac = { group: "rbac.authorization.k8s.io", version: "v1" } as const;
    for (const ns of [nsA.name, nsB.name]) {
      const name = `${ns}-kr-kruntimes-controller`;
      await client.get(path({ ...rbac, plural: "clusterroles" }, undefined, name));
      const binding = await client.get<{ subjects: { namespace: string }[] }>(
        path({ ...rbac, plural: "clusterrolebindings" }, undefined, name),
      );
      expect(binding.subjects[0]?.namespace).toBe(ns);
    }
    for (const [release, ns] of releases.splice(0)) {
      expect((await helm(["uninstall", release, "-n", ns, "--wait"], kubeconfig)).code).toBe(0);
      await expect(
        client.get(path({ ...rbac, plural: "clusterroles" }, undefined, `${ns}-kr-kruntimes-controller`)),
      ).rejects.toBeInstanceOf(KubeError);
    }
  }, 240_000);
});
