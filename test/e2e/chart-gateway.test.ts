/**
 * The chart's gateway on a real cluster, installed by the real helm binary: the Deployment
 * becomes available (both replicas, non-root, with the projected dataplane token), /healthz and
 * /readyz answer, the CA ConfigMap verifies the served certificate strictly (curl --cacert, for
 * the Service's DNS name), the plain http listener serves when asked, the controller hands the
 * gateway's ServiceAccount to runtimed and renders each Runtime's NetworkPolicy, and the
 * chart-made certificate survives `helm upgrade` unchanged. controller.scope=Namespace keeps the
 * release out of other tests' namespaces.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type KubeClient, path, R } from "@kruntimes/kube";
import { eventually, testCluster, testNamespace } from "../support/cluster.ts";
import { runProcess } from "../support/process.ts";
import { applyChartCrds, CHART, HELM_MISSING, helm, helmPath } from "./chart-support.ts";

const cluster = testCluster();
if (cluster && !helmPath()) throw new Error(HELM_MISSING);
const suite = cluster ? describe : describe.skip;
const RELEASE = "kr";
const GW = `${RELEASE}-kruntimes-gateway`;

interface Deployment {
  spec: { template: { spec: { containers: { args: string[] }[]; volumes: { name: string }[] } } };
  status?: { availableReplicas?: number; readyReplicas?: number };
}
interface Pod {
  metadata: { name: string; deletionTimestamp?: string };
  status?: { podIP?: string; conditions?: { type: string; status: string }[] };
}
interface Secret {
  data: Record<string, string>;
}
interface NetworkPolicy {
  spec: {
    ingress: {
      from?: { podSelector?: { matchLabels?: Record<string, string> } }[];
      ports: { port: number }[];
    }[];
  };
}

const ready = (p: Pod) =>
  !p.metadata.deletionTimestamp &&
  p.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True");

suite("chart gateway on a cluster", () => {
  const kubeconfig = cluster?.kubeconfig as string;
  const client = cluster?.client as KubeClient;
  let ns: { name: string; remove(): Promise<void> };
  let installed = false;
  const dir = mkdtempSync(join(tmpdir(), "krt-chart-gw-"));

  const gatewayPods = async () =>
    (
      await client.list<Pod>(path(R.pods, ns.name), {
        labelSelector: `app.kubernetes.io/name=kruntimes-gateway,app.kubernetes.io/instance=${RELEASE}`,
      })
    ).items.filter(ready);

  /** curl over TLS to a gateway pod, verifying the certificate with `caFile` for the Service's name. */
  const curlTls = (ip: string, caFile: string, urlPath: string) => {
    const host = `${GW}.${ns.name}.svc`;
    return runProcess([
      "curl",
      "-sS",
      "--max-time",
      "10",
      "--cacert",
      caFile,
      "--resolve",
      `${host}:8443:${ip}`,
      "-o",
      "/dev/null",
      "-w",
      "%{http_code} %{ssl_verify_result}",
      `https://${host}:8443${urlPath}`,
    ]);
  };

  beforeAll(async () => {
    ns = await testNamespace(client, "chart-gw");
    await applyChartCrds(client);
    const r = await helm(
      [
        "install",
        RELEASE,
        CHART,
        "-n",
        ns.name,
        "--wait",
        "--timeout",
        "3m",
        "--set",
        "controller.scope=Namespace",
        "--set",
        "gateway.protocols={http,https}",
        "--set",
        "runtimes.python.enabled=false",
      ],
      kubeconfig,
    );
    if (r.code !== 0) throw new Error(`helm install failed: ${r.stderr}`);
    installed = true;
  }, 240_000);

  afterAll(async () => {
    if (installed) await helm(["uninstall", RELEASE, "-n", ns.name, "--wait"], kubeconfig);
    await ns?.remove();
  });

  test("the gateway Deployment becomes available with both replicas", async () => {
    const dep = await eventually(
      "gateway Deployment available",
      async () => {
        const d = await client.get<Deployment>(path(R.deployments, ns.name, GW));
        return (d.status?.availableReplicas ?? 0) >= 2 ? d : undefined;
      },
      120_000,
    );
    expect(dep.spec.template.spec.volumes.map((v) => v.name)).toEqual(
      expect.arrayContaining(["dataplane-token", "tls"]),
    );
    expect(await gatewayPods()).toHaveLength(2);
  }, 150_000);

  test.if(Boolean(cluster?.local))(
    "/healthz and /readyz answer on each gateway pod's metrics port",
    async () => {
      for (const p of await gatewayPods()) {
        const ip = p.status?.podIP as string;
        expect((await fetch(`http://${ip}:9090/healthz`)).status).toBe(200);
        expect((await fetch(`http://${ip}:9090/readyz`)).status).toBe(200);
        // The plain listener is on too (gateway.protocols has http): its OpenAPI description.
        const openapi = await fetch(`http://${ip}:8080/openapi.json`);
        expect(openapi.status).toBe(200);
        expect(JSON.stringify(await openapi.json())).toContain(
          "/v1/namespaces/{namespace}/runs/{name}/invoke",
        );
      }
    },
  );

  test.if(Boolean(cluster?.local))(
    "the CA ConfigMap verifies the served certificate; another CA does not",
    async () => {
      const svc = await client.get<{ metadata: { annotations?: Record<string, string> } }>(
        path(R.services, ns.name, GW),
      );
      const cmName = svc.metadata.annotations?.["kruntimes.io/ca-configmap"];
      expect(cmName).toBe(`${GW}-ca`);
      const cm = await client.get<{ data: Record<string, string> }>(
        path(R.configMaps, ns.name, cmName as string),
      );
      const caFile = join(dir, "ca.crt");
      writeFileSync(caFile, cm.data["ca.crt"] as string);
      const [pod] = await gatewayPods();
      const ip = pod?.status?.podIP as string;
      // 200 from the https listener's OpenAPI route, certificate verified (ssl_verify_result 0).
      const ok = await curlTls(ip, caFile, "/openapi.json");
      expect(ok.stderr).toBe("");
      expect(ok.stdout).toBe("200 0");
      // Another CA (a fresh one) does not verify it: the check is real.
      const otherCa = join(dir, "other-ca");
      const gen = await runProcess([
        "openssl",
        "req",
        "-x509",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-days",
        "1",
        "-subj",
        "/CN=other CA",
        "-keyout",
        `${otherCa}.key`,
        "-out",
        `${otherCa}.crt`,
      ]);
      expect(gen.code).toBe(0);
      const bad = await curlTls(ip, `${otherCa}.crt`, "/openapi.json");
      expect(bad.code).not.toBe(0);
      expect(bad.stderr).toMatch(/certificate|SSL/i);
    },
  );

  test("the controller lets runtimed accept the gateway's ServiceAccount and renders the NetworkPolicy", async () => {
    const ctl = await client.get<Deployment>(path(R.deployments, ns.name, `${RELEASE}-kruntimes-controller`));
    const args = ctl.spec.template.spec.containers[0]?.args ?? [];
    expect(args).toContain(`--dataplane-subjects=system:serviceaccount:${ns.name}:${GW}`);
    expect(args).toContain("--dataplane-network-policy=true");
    // The controller applied it with the chart's RBAC: the dataplane port only from the gateway pods.
    const np = await eventually(
      "the bash Runtime's NetworkPolicy",
      () =>
        client
          .get<NetworkPolicy>(
            path(
              { group: "networking.k8s.io", version: "v1", plural: "networkpolicies" },
              ns.name,
              "bash-dataplane",
            ),
          )
          .catch(() => undefined),
      60_000,
    );
    expect(np.spec.ingress[0]?.ports).toEqual([expect.objectContaining({ port: 8444 })]);
    expect(np.spec.ingress[0]?.from?.[0]?.podSelector?.matchLabels).toEqual({
      "app.kubernetes.io/name": "kruntimes-gateway",
      "app.kubernetes.io/instance": RELEASE,
    });
  }, 90_000);

  test("helm upgrade keeps the chart-made certificate and its CA", async () => {
    const before = await client.get<Secret>(path(R.secrets, ns.name, `${GW}-tls`));
    const caBefore = await client.get<{ data: Record<string, string> }>(
      path(R.configMaps, ns.name, `${GW}-ca`),
    );
    const r = await helm(
      [
        "upgrade",
        RELEASE,
        CHART,
        "-n",
        ns.name,
        "--reuse-values",
        "--wait",
        "--timeout",
        "3m",
        "--set",
        "gateway.logLevel=debug",
      ],
      kubeconfig,
    );
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    const after = await client.get<Secret>(path(R.secrets, ns.name, `${GW}-tls`));
    expect(after.data).toEqual(before.data);
    const caAfter = await client.get<{ data: Record<string, string> }>(
      path(R.configMaps, ns.name, `${GW}-ca`),
    );
    expect(caAfter.data).toEqual(caBefore.data);
    const dep = await client.get<Deployment>(path(R.deployments, ns.name, GW));
    expect(dep.spec.template.spec.containers[0]?.args).toContain("--log-level=debug");
  }, 240_000);
});
