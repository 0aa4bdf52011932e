/**
 * The local node agent on the real control plane: Deployments become Available with each replica
 * on its own pod IP, ReplicaSets replace deleted pods (old process gone), readiness and restarts
 * are reported like a kubelet's, volumes and downward-API env reach containers, `kubectl logs`
 * works through the apiserver, and the agent survives an apiserver restart.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { type KubeClient, path, R } from "@kruntimes/kube";
import { controlComponent, eventually, testCluster, testNamespace } from "../support/cluster.ts";

const cluster = testCluster();
// Runs only on the local cluster: it reaches pod IPs on loopback and restarts the apiserver.
const suite = cluster?.local ? describe : describe.skip;

interface PodLike {
  metadata: { name: string; uid: string; labels?: Record<string, string> };
  status?: {
    phase?: string;
    podIP?: string;
    conditions?: { type: string; status: string }[];
    containerStatuses?: {
      name: string;
      ready: boolean;
      restartCount: number;
      state: Record<string, unknown>;
    }[];
  };
}
interface DeploymentLike {
  status?: { availableReplicas?: number; readyReplicas?: number; unavailableReplicas?: number };
}

const ready = (p: PodLike) => p.status?.conditions?.find((c) => c.type === "Ready")?.status === "True";

function webDeployment(name: string, replicas: number) {
  return {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: { name },
    spec: {
      replicas,
      selector: { matchLabels: { app: name } },
      template: {
        metadata: { labels: { app: name } },
        spec: {
          terminationGracePeriodSeconds: 5,
          containers: [
            {
              name: "web",
              image: "kruntimes.local/test/http-server:latest",
              env: [{ name: "POD_IP", valueFrom: { fieldRef: { fieldPath: "status.podIP" } } }],
              readinessProbe: {
                httpGet: { path: "/healthz", port: 8080 },
                periodSeconds: 1,
                failureThreshold: 1,
              },
            },
          ],
        },
      },
    },
  };
}

async function podsOf(client: KubeClient, ns: string, app: string): Promise<PodLike[]> {
  return (await client.list<PodLike>(path(R.pods, ns), { labelSelector: `app=${app}` })).items;
}

function pidsServing(ip: string): number[] {
  const p = Bun.spawnSync(["pgrep", "-f", "test/localcluster/images/http-server.ts"], { stdout: "pipe" });
  return p.stdout
    .toString()
    .split("\n")
    .filter(Boolean)
    .map(Number)
    .filter((pid) => {
      try {
        return require("node:fs")
          .readFileSync(`/proc/${pid}/environ`, "utf8")
          .split("\0")
          .includes(`POD_IP=${ip}`);
      } catch {
        return false;
      }
    });
}

suite("local node agent", () => {
  const client = cluster!.client;
  let ns: string;
  let removeNs: () => Promise<void>;

  beforeAll(async () => {
    const n = await testNamespace(client, "agent");
    ns = n.name;
    removeNs = n.remove;
  });
  afterAll(async () => {
    await removeNs?.();
  });

  test("a Deployment becomes Available and each replica answers on its own pod IP", async () => {
    await client.create(path(R.deployments, ns), webDeployment("web", 3));
    await eventually(
      "3 available replicas",
      async () =>
        ((await client.get<DeploymentLike>(path(R.deployments, ns, "web"))).status?.availableReplicas ??
          0) === 3,
    );
    const pods = await podsOf(client, ns, "web");
    const ips = pods.map((p) => p.status!.podIP!);
    expect(new Set(ips).size).toBe(3);
    for (const p of pods) {
      const body = await (await fetch(`http://${p.status!.podIP}:8080/`)).text();
      expect(body).toBe(`hello from ${p.metadata.name} ${p.status!.podIP}\n`);
    }
  });

  test("a deleted pod is replaced by the ReplicaSet and its process is gone", async () => {
    const [victim] = await podsOf(client, ns, "web");
    const ip = victim!.status!.podIP!;
    expect(pidsServing(ip).length).toBe(1);
    await client.delete(path(R.pods, ns, victim!.metadata.name));
    await eventually("victim removed and replaced", async () => {
      const pods = await podsOf(client, ns, "web");
      return !pods.some((p) => p.metadata.uid === victim!.metadata.uid) && pods.filter(ready).length === 3;
    });
    await eventually(
      "old process gone",
      async () => !pidsServing(ip).some((pid) => pid > 0) || undefined,
      10_000,
    );
  });

  test("a failing readiness probe turns Ready false and the Deployment shows it", async () => {
    const [p] = await podsOf(client, ns, "web");
    await fetch(`http://${p!.status!.podIP}:8080/ready?v=false`, { method: "POST" });
    await eventually(
      "pod not ready",
      async () => !ready(await client.get<PodLike>(path(R.pods, ns, p!.metadata.name))),
    );
    await eventually(
      "deployment shows 2 ready",
      async () =>
        (await client.get<DeploymentLike>(path(R.deployments, ns, "web"))).status?.readyReplicas === 2,
    );
    await fetch(`http://${p!.status!.podIP}:8080/ready?v=true`, { method: "POST" });
    await eventually("pod ready again", async () =>
      ready(await client.get<PodLike>(path(R.pods, ns, p!.metadata.name))),
    );
  });

  test("a container that exits is restarted and its restart count rises", async () => {
    const [p] = await podsOf(client, ns, "web");
    const get = () => client.get<PodLike>(path(R.pods, ns, p!.metadata.name));
    for (const n of [1, 2]) {
      await eventually("serving", async () => (await fetch(`http://${p!.status!.podIP}:8080/healthz`)).ok);
      await fetch(`http://${p!.status!.podIP}:8080/exit?code=3`, { method: "POST" });
      const cs = await eventually(`restart count ${n}`, async () => {
        const s = (await get()).status?.containerStatuses?.[0];
        return s && s.restartCount === n && s.state.running ? s : undefined;
      });
      expect(
        (cs as unknown as { lastState: { terminated: { exitCode: number } } }).lastState.terminated.exitCode,
      ).toBe(3);
    }
  });

  test("kubectl-style logs come from the kubelet endpoint through the apiserver", async () => {
    const [p] = await podsOf(client, ns, "web");
    // The previous test restarts this container: `running` comes before the server listens.
    await eventually("serving", async () => (await fetch(`http://${p!.status!.podIP}:8080/hello-logs`)).ok);
    const logs = await eventually("the request in the container's logs", async () => {
      const res = await client.request<Response>("GET", path(R.pods, ns, p!.metadata.name, "log"), {
        raw: true,
        query: { container: "web", tailLines: 50 },
      });
      const text = await res.text();
      return text.includes("GET /hello-logs") ? text : undefined;
    });
    expect(logs).toContain("GET /hello-logs");
  });

  test("emptyDir is shared by the pod's containers; downward API and ConfigMap env arrive", async () => {
    await client.create(path(R.configMaps, ns), { metadata: { name: "cfg" }, data: { greeting: "hi" } });
    await client.create(path(R.pods, ns), {
      metadata: { name: "vols", labels: { app: "vols" } },
      spec: {
        restartPolicy: "Never",
        volumes: [{ name: "shared", emptyDir: {} }],
        containers: [
          {
            name: "writer",
            image: "busybox",
            command: ["sh", "-c", 'echo "$GREETING $MY_NS" > /data/out; sleep 30'],
            env: [
              { name: "GREETING", valueFrom: { configMapKeyRef: { name: "cfg", key: "greeting" } } },
              { name: "MY_NS", valueFrom: { fieldRef: { fieldPath: "metadata.namespace" } } },
            ],
            volumeMounts: [{ name: "shared", mountPath: "/data" }],
          },
          {
            name: "reader",
            image: "busybox",
            command: [
              "sh",
              "-c",
              "for i in $(seq 100); do [ -s /in/out ] && cat /in/out && exit 0; sleep 0.1; done; exit 1",
            ],
            volumeMounts: [{ name: "shared", mountPath: "/in", readOnly: true }],
          },
        ],
      },
    });
    const reader = await eventually("reader finished", async () => {
      const p = await client.get<PodLike>(path(R.pods, ns, "vols"));
      const s = p.status?.containerStatuses?.find((c) => c.name === "reader");
      return s?.state.terminated ? (s.state.terminated as { exitCode: number }) : undefined;
    });
    expect(reader.exitCode).toBe(0);
    const res = await client.request<Response>("GET", path(R.pods, ns, "vols", "log"), {
      raw: true,
      query: { container: "reader" },
    });
    expect(await res.text()).toBe(`hi ${ns}\n`);
  });

  test("exec (inside the container's mounts), TCP and gRPC readiness probes drive Ready", async () => {
    const podIP = { name: "POD_IP", valueFrom: { fieldRef: { fieldPath: "status.podIP" } } };
    await client.create(path(R.pods, ns), {
      metadata: { name: "probes" },
      spec: {
        volumes: [{ name: "work", emptyDir: {} }],
        containers: [
          {
            name: "exec",
            image: "busybox",
            // /work exists only in this container's mount namespace, so the probe must run there.
            command: ["sh", "-c", "sleep 1; touch /work/ready; sleep 3600"],
            volumeMounts: [{ name: "work", mountPath: "/work" }],
            readinessProbe: { exec: { command: ["cat", "/work/ready"] }, periodSeconds: 1 },
          },
          {
            name: "tcp",
            image: "kruntimes.local/test/http-server",
            env: [podIP],
            readinessProbe: { tcpSocket: { port: 8080 }, periodSeconds: 1 },
          },
          {
            name: "grpc",
            image: "kruntimes.local/test/grpc-health-server",
            env: [podIP],
            ports: [{ name: "health", containerPort: 9090 }],
            readinessProbe: { grpc: { port: 9090 }, periodSeconds: 1 },
          },
        ],
      },
    });
    const pod = await eventually("probes pod Ready", async () => {
      const p = await client.get<PodLike>(path(R.pods, ns, "probes"));
      return ready(p) ? p : undefined;
    });
    expect(pod.status?.containerStatuses?.every((c) => c.ready)).toBe(true);
  });

  test("a failing liveness probe restarts the container", async () => {
    const created = Date.now();
    await client.create(path(R.pods, ns), {
      metadata: { name: "liveness" },
      spec: {
        volumes: [{ name: "work", emptyDir: {} }],
        containers: [
          {
            name: "c",
            image: "busybox",
            command: ["sh", "-c", "touch /work/alive; sleep 2; rm /work/alive; sleep 3600"],
            volumeMounts: [{ name: "work", mountPath: "/work" }],
            livenessProbe: {
              exec: { command: ["test", "-e", "/work/alive"] },
              initialDelaySeconds: 1,
              periodSeconds: 1,
              failureThreshold: 1,
            },
          },
        ],
        terminationGracePeriodSeconds: 1,
      },
    });
    await eventually(
      "restart after liveness failure",
      async () =>
        ((await client.get<PodLike>(path(R.pods, ns, "liveness"))).status?.containerStatuses?.[0]
          ?.restartCount ?? 0) >= 1,
    );
    // Healthy while /work/alive existed (2 s), restarted only after it went away.
    expect(Date.now() - created).toBeGreaterThan(2000);
  });

  test("init containers run first; OnFailure and Never policies end in Succeeded and Failed", async () => {
    await client.create(path(R.pods, ns), {
      metadata: { name: "init-ok" },
      spec: {
        restartPolicy: "OnFailure",
        volumes: [{ name: "work", emptyDir: {} }],
        initContainers: [
          {
            name: "prepare",
            image: "busybox",
            command: ["sh", "-c", "echo prepared > /work/x"],
            volumeMounts: [{ name: "work", mountPath: "/work" }],
          },
        ],
        containers: [
          {
            name: "main",
            image: "busybox",
            command: ["sh", "-c", "grep -q prepared /work/x"],
            volumeMounts: [{ name: "work", mountPath: "/work" }],
          },
        ],
      },
    });
    await client.create(path(R.pods, ns), {
      metadata: { name: "never-fails" },
      spec: {
        restartPolicy: "Never",
        containers: [{ name: "main", image: "busybox", command: ["sh", "-c", "exit 2"] }],
      },
    });
    const phase = (name: string) =>
      eventually(`${name} finished`, async () => {
        const p = await client.get<PodLike>(path(R.pods, ns, name));
        return p.status?.phase === "Succeeded" || p.status?.phase === "Failed" ? p : undefined;
      });
    const ok = await phase("init-ok");
    expect(ok.status?.phase).toBe("Succeeded");
    const failed = await phase("never-fails");
    expect(failed.status?.phase).toBe("Failed");
    const cs = failed.status!.containerStatuses![0]!;
    expect(cs.restartCount).toBe(0);
    expect((cs.state.terminated as { exitCode: number }).exitCode).toBe(2);
  });

  test("graceful deletion waits the grace period, then SIGKILLs a process that ignores SIGTERM", async () => {
    await client.create(path(R.pods, ns), {
      metadata: { name: "stubborn" },
      spec: {
        terminationGracePeriodSeconds: 2,
        containers: [
          {
            name: "c",
            image: "busybox",
            command: ["sh", "-c", "trap '' TERM; echo krt-stubborn-$$; while :; do sleep 0.2; done"],
          },
        ],
      },
    });
    await eventually("stubborn running", async () =>
      ready(await client.get<PodLike>(path(R.pods, ns, "stubborn"))),
    );
    // Ready comes when the process starts; the trap is set only when it has printed its line. A
    // SIGTERM before that would end it at once (a loaded machine made exactly that happen).
    await eventually("stubborn has set its trap", async () => {
      const res = await client.request<Response>("GET", path(R.pods, ns, "stubborn", "log"), {
        raw: true,
        query: { container: "c" },
      });
      return (await res.text()).includes("krt-stubborn-");
    });
    const started = Date.now();
    await client.delete(path(R.pods, ns, "stubborn"));
    // It ignores TERM and loops forever: that it is removed at all is the SIGKILL's doing.
    await eventually(
      "stubborn removed",
      async () =>
        !(await client.list<PodLike>(path(R.pods, ns))).items.some((p) => p.metadata.name === "stubborn"),
      60_000,
    );
    // Not before the grace period (a slow machine only makes this longer).
    expect(Date.now() - started).toBeGreaterThanOrEqual(1900);
    expect(Bun.spawnSync(["pgrep", "-f", "trap '' TERM; echo krt-stubborn"]).exitCode).toBe(1);
  });

  test("the agent survives an apiserver restart", async () => {
    await controlComponent(cluster!.local!, "kube-apiserver", "restart");
    // The node stays Ready and the agent still acts on new pods after relisting.
    await client.patch(path(R.deployments, ns, "web"), { spec: { replicas: 4 } }, "merge");
    await eventually(
      "4 available after the restart",
      async () =>
        ((await client.get<DeploymentLike>(path(R.deployments, ns, "web"))).status?.availableReplicas ??
          0) === 4,
      60_000,
    );
    const node = await client.get<PodLike>(path(R.nodes, undefined, cluster!.local!.nodeName));
    expect(ready(node)).toBe(true);
  }, 120_000);
});
