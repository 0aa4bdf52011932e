/**
 * More of the local node agent on the real control plane: an in-cluster client authenticates with
 * the projected service-account token, ConfigMap/Secret/downwardAPI volumes arrive, `previous`
 * and `follow` logs work through the apiserver, a native sidecar ends with its Job-like pod,
 * unknown images and missing programs get kubelet's waiting/terminated reasons, activeDeadlineSeconds
 * fails a pod, and a steady pod's status is not rewritten.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { path, R } from "@kruntimes/kube";
import { eventually, testCluster, testNamespace } from "../support/cluster.ts";

const cluster = testCluster();
// Runs only on the local cluster: it depends on the agent's host-process behaviour.
const suite = cluster?.local ? describe : describe.skip;

interface ContainerStatusLike {
  name: string;
  ready: boolean;
  restartCount: number;
  state: {
    waiting?: { reason?: string; message?: string };
    running?: object;
    terminated?: { exitCode: number; reason?: string; message?: string };
  };
}
interface PodLike {
  metadata: { name: string; resourceVersion: string };
  status?: {
    phase?: string;
    conditions?: { type: string; status: string }[];
    containerStatuses?: ContainerStatusLike[];
    initContainerStatuses?: ContainerStatusLike[];
  };
}

// The in-cluster client a workload would write: service-account files plus the injected service env.
const IN_CLUSTER_CHECK = `
const fs = require("node:fs");
const sa = "/var/run/secrets/kubernetes.io/serviceaccount";
const res = await fetch("https://" + process.env.KUBERNETES_SERVICE_HOST + ":" + process.env.KUBERNETES_SERVICE_PORT + "/apis/authentication.k8s.io/v1/selfsubjectreviews", {
  method: "POST",
  headers: { authorization: "Bearer " + fs.readFileSync(sa + "/token", "utf8"), "content-type": "application/json" },
  body: JSON.stringify({ apiVersion: "authentication.k8s.io/v1", kind: "SelfSubjectReview" }),
  tls: { ca: fs.readFileSync(sa + "/ca.crt", "utf8") },
});
const who = (await res.json()).status.userInfo.username;
console.log(who, fs.readFileSync(sa + "/namespace", "utf8"), fs.readFileSync("/cfg/greeting", "utf8"), fs.readFileSync("/sec/pw", "utf8"), fs.readFileSync("/info/name", "utf8"));
`;

suite("local node agent: pods", () => {
  const client = cluster!.client;
  let ns: string;
  let removeNs: () => Promise<void>;
  const getPod = (name: string) => client.get<PodLike>(path(R.pods, ns, name));
  const logs = async (name: string, query: Record<string, string | number | boolean>) => {
    const res = await client.request<Response>("GET", path(R.pods, ns, name, "log"), { raw: true, query });
    return res.text();
  };

  beforeAll(async () => {
    const n = await testNamespace(client, "agent-pods");
    ns = n.name;
    removeNs = n.remove;
  });
  afterAll(async () => {
    await removeNs?.();
  });

  test("an in-cluster client authenticates with the projected token; volumes carry ConfigMap, Secret, downward API", async () => {
    await client.create(path(R.configMaps, ns), { metadata: { name: "cfg" }, data: { greeting: "hi" } });
    await client.create(path(R.secrets, ns), { metadata: { name: "sec" }, stringData: { pw: "s3cret" } });
    await client.create(path(R.pods, ns), {
      metadata: { name: "incluster" },
      spec: {
        restartPolicy: "Never",
        volumes: [
          { name: "cfg", configMap: { name: "cfg" } },
          { name: "sec", secret: { secretName: "sec" } },
          {
            name: "info",
            downwardAPI: { items: [{ path: "name", fieldRef: { fieldPath: "metadata.name" } }] },
          },
        ],
        containers: [
          {
            name: "c",
            image: "busybox",
            command: ["bun", "-e", IN_CLUSTER_CHECK],
            volumeMounts: [
              { name: "cfg", mountPath: "/cfg" },
              { name: "sec", mountPath: "/sec" },
              { name: "info", mountPath: "/info" },
            ],
          },
        ],
      },
    });
    const pod = await eventually("incluster finished", async () => {
      const p = await getPod("incluster");
      return p.status?.phase === "Succeeded" || p.status?.phase === "Failed" ? p : undefined;
    });
    const out = await logs("incluster", { container: "c" });
    expect(pod.status?.phase, out).toBe("Succeeded");
    expect(out).toBe(`system:serviceaccount:${ns}:default ${ns} hi s3cret incluster\n`);
  });

  test("previous and follow logs through the apiserver", async () => {
    await client.create(path(R.pods, ns), {
      metadata: { name: "talker" },
      spec: {
        containers: [
          {
            name: "c",
            image: "busybox",
            // Attempt N prints "attempt N" (N from the emptyDir counter), exits, then runs longer.
            command: [
              "sh",
              "-c",
              'n=$(cat /w/n 2>/dev/null || echo 0); n=$((n+1)); echo $n > /w/n; echo "attempt $n"; [ $n -ge 2 ] && { sleep 1; echo tick; sleep 1; echo done; sleep 3600; }; exit 1',
            ],
            volumeMounts: [{ name: "w", mountPath: "/w" }],
          },
        ],
        volumes: [{ name: "w", emptyDir: {} }],
      },
    });
    await eventually("second attempt running", async () => {
      const s = (await getPod("talker")).status?.containerStatuses?.[0];
      return s?.restartCount === 1 && s.state.running !== undefined;
    });
    expect(await logs("talker", { container: "c", previous: true })).toBe("attempt 1\n");
    const followed = await logs("talker", {
      container: "c",
      follow: true,
      limitBytes: "attempt 2\ntick\ndone\n".length,
    });
    expect(followed).toBe("attempt 2\ntick\ndone\n");
    const stamped = await logs("talker", { container: "c", timestamps: true, tailLines: 1 });
    expect(stamped).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z done\n$/);
  });

  test("a native sidecar runs beside the app container and stops when it completes", async () => {
    await client.create(path(R.pods, ns), {
      metadata: { name: "with-sidecar" },
      spec: {
        restartPolicy: "Never",
        initContainers: [
          {
            name: "side",
            image: "busybox",
            restartPolicy: "Always",
            command: ["sh", "-c", "while :; do date > /w/side; sleep 0.1; done"],
            volumeMounts: [{ name: "w", mountPath: "/w" }],
            startupProbe: { exec: { command: ["test", "-s", "/w/side"] }, periodSeconds: 1 },
          },
        ],
        containers: [
          {
            name: "main",
            image: "busybox",
            command: ["sh", "-c", "test -s /w/side"],
            volumeMounts: [{ name: "w", mountPath: "/w" }],
          },
        ],
        volumes: [{ name: "w", emptyDir: {} }],
        terminationGracePeriodSeconds: 2,
      },
    });
    const pod = await eventually("with-sidecar finished", async () => {
      const p = await getPod("with-sidecar");
      return p.status?.phase === "Succeeded" || p.status?.phase === "Failed" ? p : undefined;
    });
    expect(pod.status?.phase).toBe("Succeeded");
    expect(pod.status?.containerStatuses?.[0]?.state.terminated?.exitCode).toBe(0);
    expect(pod.status?.initContainerStatuses?.[0]?.state.terminated).toBeDefined();
  });

  test("an unmapped image waits with ImageNotMapped; a missing program is a StartError", async () => {
    await client.create(path(R.pods, ns), {
      metadata: { name: "unmapped" },
      spec: { containers: [{ name: "c", image: "quay.io/nobody/nothing:1.0" }] },
    });
    await client.create(path(R.pods, ns), {
      metadata: { name: "missing-program" },
      spec: {
        restartPolicy: "Never",
        containers: [{ name: "c", image: "busybox", command: ["/no/such/program"] }],
      },
    });
    const waiting = await eventually("ImageNotMapped", async () => {
      const w = (await getPod("unmapped")).status?.containerStatuses?.[0]?.state.waiting;
      return w?.reason === "ImageNotMapped" ? w : undefined;
    });
    expect(waiting.message).toContain("test/localcluster/images.yaml");
    const term = await eventually(
      "StartError",
      async () => (await getPod("missing-program")).status?.containerStatuses?.[0]?.state.terminated,
    );
    expect(term).toMatchObject({ exitCode: 128, reason: "StartError" });
    expect((await getPod("missing-program")).status?.phase).toBe("Failed");
  });

  test("activeDeadlineSeconds stops the pod and fails it with DeadlineExceeded", async () => {
    await client.create(path(R.pods, ns), {
      metadata: { name: "deadline" },
      spec: {
        activeDeadlineSeconds: 2,
        terminationGracePeriodSeconds: 1,
        containers: [{ name: "c", image: "busybox", command: ["sleep", "3600"] }],
      },
    });
    const p = await eventually("deadline Failed", async () => {
      const p = await getPod("deadline");
      return p.status?.phase === "Failed" ? p : undefined;
    });
    expect((p.status as { reason?: string }).reason).toBe("DeadlineExceeded");
    expect(p.status?.containerStatuses?.[0]?.state.terminated).toBeDefined();
  });

  test("a steady pod's status is not rewritten (probes run, nothing changes)", async () => {
    // Each probe run leaves a line here (pods are host processes): the quiet period is counted
    // in probe runs, not in seconds, so a slow machine cannot cut it short.
    const probeLog = join(mkdtempSync(join(tmpdir(), "krt-steady-")), "probes");
    writeFileSync(probeLog, "");
    const probes = () => readFileSync(probeLog, "utf8").split("\n").filter(Boolean).length;
    await client.create(path(R.pods, ns), {
      metadata: { name: "steady" },
      spec: {
        containers: [
          {
            name: "c",
            image: "busybox",
            command: ["sleep", "3600"],
            readinessProbe: { exec: { command: ["sh", "-c", `echo ok >> ${probeLog}`] }, periodSeconds: 1 },
          },
        ],
      },
    });
    const ready = await eventually("steady Ready", async () => {
      const p = await getPod("steady");
      return p.status?.conditions?.find((c) => c.type === "Ready")?.status === "True" ? p : undefined;
    });
    const seen = probes();
    await eventually("four more probe runs", async () => probes() >= seen + 4, 60_000);
    expect((await getPod("steady")).metadata.resourceVersion).toBe(ready.metadata.resourceVersion);
  });
});
