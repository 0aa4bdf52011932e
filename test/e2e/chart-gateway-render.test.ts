/**
 * The chart's gateway, rendered by the real helm binary: on/off, protocols (http, https, both),
 * the three certificate sources (chart-made with its CA ConfigMap, existingSecret, cert-manager),
 * least-privilege RBAC in both controller scopes, the controller's dataplane flags (parsed by the
 * controller's own option parser, and matched against the gateway pods' labels), limits passed as
 * the gateway's flags (parsed by the gateway's own option parser), and schema rejections.
 */
import { describe, expect, test } from "bun:test";
import { X509Certificate } from "node:crypto";
import type { Runtime } from "@kruntimes/api";
import { parseOptions as parseControllerOptions } from "../../controller/options.ts";
import { renderNetworkPolicy } from "../../controller/runtime/render/network-policy.ts";
import { renderOptions } from "../../controller/testing/fixtures.ts";
import { parseOptions as parseGatewayOptions } from "../../gateway/options.ts";
import {
  CHART,
  controllerContainer,
  find,
  HELM_MISSING,
  helm,
  helmPath,
  type K8sObject,
  render,
} from "./chart-support.ts";

const available = helmPath() !== undefined;
if (!available && process.env.KUBECONFIG) throw new Error(HELM_MISSING);
const suite = available ? describe : describe.skip;

const GW = "kr-kruntimes-gateway";

interface Rule {
  apiGroups: string[];
  resources: string[];
  verbs: string[];
  resourceNames?: string[];
}

const gatewayObjects = (objs: K8sObject[]) =>
  objs.filter((o) => o.metadata.labels?.["app.kubernetes.io/component"] === "gateway");
const gatewayDeployment = (objs: K8sObject[]) => find(objs, "Deployment", GW);
const gatewayContainer = (objs: K8sObject[]) => gatewayDeployment(objs).spec.template.spec.containers[0];
/** `--name=value` → value, for one flag of an argument list. */
const flag = (args: string[], name: string) =>
  args.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
const ruleSet = (rules: Rule[]) =>
  rules.map((r) => `${r.apiGroups.join(",")}/${r.resources.join(",")}:${r.verbs.join(",")}`).sort();

suite("chart gateway (helm template)", () => {
  test("on by default: hardened Deployment of 2, PDB, probes, projected dataplane token, resources", async () => {
    const objs = await render({}, { namespace: "team-a" });
    const dep = gatewayDeployment(objs);
    expect(dep.spec.replicas).toBe(2);
    const pod = dep.spec.template.spec;
    expect(pod.serviceAccountName).toBe(GW);
    expect(pod.securityContext).toMatchObject({ runAsNonRoot: true, runAsUser: 65532 });
    const c = gatewayContainer(objs);
    expect(c.image).toMatch(/^ghcr\.io\/kruntimes\/gateway:/);
    expect(c.securityContext).toEqual({
      allowPrivilegeEscalation: false,
      readOnlyRootFilesystem: true,
      capabilities: { drop: ["ALL"] },
    });
    expect(c.readinessProbe.httpGet).toEqual({ path: "/readyz", port: "metrics" });
    expect(c.livenessProbe.httpGet).toEqual({ path: "/healthz", port: "metrics" });
    expect(c.resources).toEqual({ requests: { cpu: "200m", memory: "128Mi" }, limits: { memory: "512Mi" } });
    // The dataplane token: a projected ServiceAccount token only runtimed accepts.
    const tokenVol = pod.volumes.find((v: { name: string }) => v.name === "dataplane-token");
    expect(tokenVol.projected.sources).toEqual([
      { serviceAccountToken: { audience: "kruntimes-dataplane", expirationSeconds: 3600, path: "token" } },
    ]);
    const mount = c.volumeMounts.find((m: { name: string }) => m.name === "dataplane-token");
    expect(`${mount.mountPath}/token`).toBe("/var/run/secrets/kruntimes.io/dataplane/token");
    expect(flag(c.args, "dataplane-token-file")).toBe("/var/run/secrets/kruntimes.io/dataplane/token");
    const pdb = find(objs, "PodDisruptionBudget", GW);
    expect(pdb.spec).toEqual({ maxUnavailable: 1, selector: dep.spec.selector });
    expect(find(objs, "ServiceAccount", GW).metadata.namespace).toBe("team-a");
    // Selector labels are on the pods; the name label is fixed whatever nameOverride says.
    for (const [k, v] of Object.entries(dep.spec.selector.matchLabels))
      expect(dep.spec.template.metadata.labels[k]).toBe(v);
    const renamed = await render({ nameOverride: "other" });
    expect(find(renamed, "Deployment", "kr-other-gateway").spec.template.metadata.labels).toMatchObject({
      "app.kubernetes.io/name": "kruntimes-gateway",
    });
  });

  test("gateway.enabled=false: no gateway object, and runtimed's dataplane admits nobody", async () => {
    const objs = await render({ "gateway.enabled": "false" });
    expect(gatewayObjects(objs)).toEqual([]);
    const args: string[] = controllerContainer(objs).args;
    expect(args).toContain("--dataplane-port=8444");
    for (const f of [
      "dataplane-subjects",
      "dataplane-network-policy",
      "gateway-namespace",
      "gateway-pod-labels",
    ])
      expect(flag(args, f)).toBeUndefined();
    const o = parseControllerOptions(
      args.filter((a) => !a.includes("$(")),
      {},
    );
    expect(o.dataplaneSubjects).toEqual([]);
    expect(o.dataplaneNetworkPolicy).toBe(false);
  });

  test("the controller's dataplane flags name the gateway's ServiceAccount and select exactly its pods", async () => {
    const objs = await render({ "runtimed.dataplanePort": "9444" }, { release: "kr", namespace: "edge" });
    const args: string[] = controllerContainer(objs).args;
    const o = parseControllerOptions(
      args.filter((a) => !a.includes("$(")),
      {},
    );
    expect(o.dataplaneSubjects).toEqual([`system:serviceaccount:edge:${GW}`]);
    expect(o.dataplanePort).toBe(9444);
    expect(o.dataplaneNetworkPolicy).toBe(true);
    expect(o.gatewayNamespace).toBe("edge");
    expect(o.gatewayPodLabels).toEqual({
      "app.kubernetes.io/name": "kruntimes-gateway",
      "app.kubernetes.io/instance": "kr",
    });
    // The NetworkPolicy the controller renders with these options admits the gateway pods.
    const rt = { metadata: { name: "bash", namespace: "edge", uid: "u" }, spec: {} } as unknown as Runtime;
    const np = renderNetworkPolicy(
      rt,
      renderOptions({
        dataplanePort: o.dataplanePort,
        dataplaneNetworkPolicy: o.dataplaneNetworkPolicy,
        gatewayPodLabels: o.gatewayPodLabels,
        ...(o.gatewayNamespace ? { gatewayNamespace: o.gatewayNamespace } : {}),
      }),
    );
    const from = np.spec.ingress[0]?.from?.[0];
    const podLabels = gatewayDeployment(objs).spec.template.metadata.labels;
    for (const [k, v] of Object.entries(from?.podSelector.matchLabels ?? {})) expect(podLabels[k]).toBe(v);
    expect(from?.namespaceSelector.matchLabels).toEqual({ "kubernetes.io/metadata.name": "edge" });
    expect(np.spec.ingress[0]?.ports).toEqual([{ protocol: "TCP", port: 9444 }]);
    // networkPolicy off: the subjects stay (token check), the NetworkPolicy flags go.
    const off: string[] = controllerContainer(
      await render({ "gateway.networkPolicy.enabled": "false" }),
    ).args;
    expect(flag(off, "dataplane-subjects")).toBe(`system:serviceaccount:krt-render:${GW}`);
    expect(flag(off, "dataplane-network-policy")).toBeUndefined();
  });

  test.each([
    [["https"], ["https", "metrics"], ["https", "metrics"]],
    [["http"], ["http", "grpc", "metrics"], ["http", "grpc", "metrics"]],
    [
      ["http", "https"],
      ["http", "grpc", "https", "metrics"],
      ["http", "grpc", "https", "metrics"],
    ],
  ])(
    "protocols %p: Service ports, container ports, listeners and TLS material",
    async (protocols, svcPorts, podPorts) => {
      const objs = await render({ "gateway.protocols": `{${protocols.join(",")}}` });
      const svc = find(objs, "Service", GW);
      expect(svc.spec.ports.map((p: { name: string }) => p.name)).toEqual(svcPorts);
      const byName = Object.fromEntries(
        svc.spec.ports.map((p: { name: string; port: number; targetPort: string }) => [
          p.name,
          [p.port, p.targetPort],
        ]),
      );
      if (protocols.includes("http")) {
        expect(byName.http).toEqual([80, "http"]);
        expect(byName.grpc).toEqual([8081, "grpc"]);
      }
      if (protocols.includes("https")) expect(byName.https).toEqual([443, "https"]);
      expect(svc.spec.selector).toEqual(gatewayDeployment(objs).spec.selector.matchLabels);
      const c = gatewayContainer(objs);
      expect(c.ports.map((p: { name: string }) => p.name)).toEqual(podPorts);
      const ports = Object.fromEntries(
        c.ports.map((p: { name: string; containerPort: number }) => [p.name, p.containerPort]),
      );
      const g = parseGatewayOptions(
        c.args.map((a: string) => a.replace("$(POD_IP)", "10.0.0.1")),
        {},
      );
      expect([...g.protocols].sort() as string[]).toEqual([...protocols].sort());
      expect(g.host).toBe("10.0.0.1");
      if (protocols.includes("http")) expect([g.httpPort, g.grpcPort]).toEqual([ports.http, ports.grpc]);
      if (protocols.includes("https")) expect(g.httpsPort).toBe(ports.https);
      expect(g.metricsPort).toBe(ports.metrics);
      const https = protocols.includes("https");
      expect(gatewayObjects(objs).some((o) => o.kind === "Secret")).toBe(https);
      expect(gatewayObjects(objs).some((o) => o.kind === "ConfigMap")).toBe(https);
      const vols = gatewayDeployment(objs).spec.template.spec.volumes.map((v: { name: string }) => v.name);
      expect(vols.includes("tls")).toBe(https);
      expect(svc.metadata.annotations?.["kruntimes.io/ca-configmap"]).toBe(https ? `${GW}-ca` : undefined);
    },
  );

  test("chart-made certificate: signed by the published CA, for the Service's DNS names", async () => {
    const objs = await render({ "gateway.tls.extraDnsNames": "{fn.example.com}" }, { namespace: "team-a" });
    const secret = find(objs, "Secret", `${GW}-tls`);
    expect(secret.type).toBe("kubernetes.io/tls");
    const pem = (k: string) => Buffer.from(secret.data[k], "base64").toString();
    const cert = new X509Certificate(pem("tls.crt"));
    const ca = new X509Certificate(find(objs, "ConfigMap", `${GW}-ca`).data["ca.crt"]);
    expect(ca.toString()).toBe(new X509Certificate(pem("ca.crt")).toString());
    expect(ca.ca).toBe(true);
    expect(cert.verify(ca.publicKey)).toBe(true);
    expect(cert.checkIssued(ca)).toBe(true);
    for (const name of [
      GW,
      `${GW}.team-a`,
      `${GW}.team-a.svc`,
      `${GW}.team-a.svc.cluster.local`,
      "fn.example.com",
    ])
      expect(`${name} ${cert.checkHost(name) ?? "-"}`).toBe(`${name} ${name}`);
    expect(cert.checkHost("other.team-a.svc")).toBeUndefined();
    expect(
      cert.checkPrivateKey(await import("node:crypto").then((c) => c.createPrivateKey(pem("tls.key")))),
    ).toBe(true);
    const vol = gatewayDeployment(objs).spec.template.spec.volumes.find(
      (v: { name: string }) => v.name === "tls",
    );
    expect(vol.secret.secretName).toBe(`${GW}-tls`);
    const args: string[] = gatewayContainer(objs).args;
    expect(flag(args, "tls-cert-file")).toBe("/etc/kruntimes/gateway-tls/tls.crt");
    expect(flag(args, "tls-key-file")).toBe("/etc/kruntimes/gateway-tls/tls.key");
  });

  test("gateway.tls.existingSecret: served as is, no Secret rendered; its CA published only when given", async () => {
    const objs = await render({ "gateway.tls.existingSecret": "my-cert" });
    expect(
      gatewayObjects(objs).some(
        (o) => o.kind === "Secret" || o.kind === "ConfigMap" || o.kind === "Certificate",
      ),
    ).toBe(false);
    const vol = gatewayDeployment(objs).spec.template.spec.volumes.find(
      (v: { name: string }) => v.name === "tls",
    );
    expect(vol.secret.secretName).toBe("my-cert");
    expect(find(objs, "Service", GW).metadata.annotations?.["kruntimes.io/ca-configmap"]).toBeUndefined();
    const ca = find(await render({}), "ConfigMap", `${GW}-ca`).data["ca.crt"];
    const withCa = await render({ "gateway.tls.existingSecret": "my-cert", "gateway.tls.caBundle": ca });
    expect(find(withCa, "ConfigMap", `${GW}-ca`).data["ca.crt"].trim()).toBe(ca.trim());
    expect(find(withCa, "Service", GW).metadata.annotations?.["kruntimes.io/ca-configmap"]).toBe(`${GW}-ca`);
  });

  test("cert-manager: a Certificate only when enabled, for the Service's DNS names, from the named issuer", async () => {
    expect((await render()).some((o) => o.kind === "Certificate")).toBe(false);
    const objs = await render(
      {
        "gateway.tls.certManager.enabled": "true",
        "gateway.tls.certManager.issuerRef.name": "internal-ca",
        "gateway.tls.certManager.issuerRef.kind": "ClusterIssuer",
      },
      { namespace: "team-a" },
    );
    const cert = find(objs, "Certificate", GW);
    expect(cert.apiVersion).toBe("cert-manager.io/v1");
    expect(cert.spec.secretName).toBe(`${GW}-tls`);
    expect(cert.spec.issuerRef).toEqual({
      name: "internal-ca",
      kind: "ClusterIssuer",
      group: "cert-manager.io",
    });
    expect(cert.spec.dnsNames).toEqual(
      expect.arrayContaining([`${GW}.team-a.svc`, `${GW}.team-a.svc.cluster.local`]),
    );
    expect(gatewayObjects(objs).some((o) => o.kind === "Secret" || o.kind === "ConfigMap")).toBe(false);
    const vol = gatewayDeployment(objs).spec.template.spec.volumes.find(
      (v: { name: string }) => v.name === "tls",
    );
    expect(vol.secret.secretName).toBe(`${GW}-tls`);
  });

  test("RBAC, scope=Cluster: exactly tokenreviews/subjectaccessreviews create and runs/endpointslices list, watch", async () => {
    const objs = await render({}, { namespace: "team-a" });
    const role = find(objs, "ClusterRole", "team-a-kr-kruntimes-gateway");
    expect(ruleSet(role.rules)).toEqual([
      "authentication.k8s.io/tokenreviews:create",
      "authorization.k8s.io/subjectaccessreviews:create",
      "discovery.k8s.io/endpointslices:list,watch",
      "kruntimes.io/runs:list,watch",
    ]);
    const crb = find(objs, "ClusterRoleBinding", "team-a-kr-kruntimes-gateway");
    expect(crb.roleRef.name).toBe(role.metadata.name);
    expect(crb.subjects).toEqual([{ kind: "ServiceAccount", name: GW, namespace: "team-a" }]);
    expect(flag(gatewayContainer(objs).args, "namespace")).toBeUndefined();
    // Discovery for krt invoke: read-only, the CA ConfigMap by name, bound to every authenticated user.
    const disc = find(objs, "Role", `${GW}-discovery`);
    expect(ruleSet(disc.rules)).toEqual([
      "/configmaps:get",
      "/services:list",
      "discovery.k8s.io/endpointslices:list",
    ]);
    expect(disc.rules.find((r: Rule) => r.resources.includes("configmaps")).resourceNames).toEqual([
      `${GW}-ca`,
    ]);
    expect(find(objs, "RoleBinding", `${GW}-discovery`).subjects).toEqual([
      { apiGroup: "rbac.authorization.k8s.io", kind: "Group", name: "system:authenticated" },
    ]);
    const noDisc = await render({ "gateway.discovery.enabled": "false" });
    expect(noDisc.some((o) => o.metadata.name.endsWith("-discovery"))).toBe(false);
  });

  test("RBAC, scope=Namespace: Runs and EndpointSlices by a Role; reviews (cluster-scoped) by a ClusterRole", async () => {
    const objs = await render({ "controller.scope": "Namespace" }, { namespace: "solo" });
    expect(ruleSet(find(objs, "ClusterRole", "solo-kr-kruntimes-gateway").rules)).toEqual([
      "authentication.k8s.io/tokenreviews:create",
      "authorization.k8s.io/subjectaccessreviews:create",
    ]);
    const role = find(objs, "Role", GW);
    expect(role.metadata.namespace).toBe("solo");
    expect(ruleSet(role.rules)).toEqual([
      "discovery.k8s.io/endpointslices:list,watch",
      "kruntimes.io/runs:list,watch",
    ]);
    expect(find(objs, "RoleBinding", GW).roleRef).toEqual({
      apiGroup: "rbac.authorization.k8s.io",
      kind: "Role",
      name: GW,
    });
    expect(flag(gatewayContainer(objs).args, "namespace")).toBe("solo");
    // The controller may bind runtimed to system:auth-delegator (its TokenReviews), and nothing
    // else cluster-wide.
    const ctl = find(objs, "ClusterRole", "solo-kr-kruntimes-controller-auth-delegator");
    expect(ruleSet(ctl.rules)).toEqual([
      "rbac.authorization.k8s.io/clusterrolebindings:create,patch,delete",
      "rbac.authorization.k8s.io/clusterroles:bind",
    ]);
    expect(ctl.rules.find((r: Rule) => r.verbs.includes("bind")).resourceNames).toEqual([
      "system:auth-delegator",
    ]);
    expect(find(objs, "ClusterRoleBinding", "solo-kr-kruntimes-controller-auth-delegator").subjects).toEqual([
      { kind: "ServiceAccount", name: "kr-kruntimes-controller", namespace: "solo" },
    ]);
    const nsRole = find(objs, "Role", "kr-kruntimes-controller");
    expect(ruleSet(nsRole.rules)).toContain("networking.k8s.io/networkpolicies:create,patch,delete");
  });

  test("limits and auth cache values become the gateway's flags", async () => {
    const objs = await render({
      "gateway.limits.maxConcurrentRequests": "64",
      "gateway.limits.maxRequestBytes": "2Mi",
      "gateway.limits.maxResponseBytes": "4Mi",
      "gateway.limits.defaultTimeout": "10s",
      "gateway.limits.maxTimeout": "1m",
      "gateway.auth.cacheTtl": "30s",
      "gateway.auth.denyTtl": "2s",
      "gateway.auth.cacheSize": "500",
      "gateway.logLevel": "debug",
      "gateway.extraArgs": "{--shutdown-grace=5s}",
    });
    const g = parseGatewayOptions(
      gatewayContainer(objs).args.map((a: string) => a.replace("$(POD_IP)", "10.0.0.1")),
      {},
    );
    expect(g).toMatchObject({
      maxConcurrentRequests: 64,
      maxRequestBytes: 2 * 1024 * 1024,
      maxResponseBytes: 4 * 1024 * 1024,
      defaultTimeoutMs: 10_000,
      maxTimeoutMs: 60_000,
      authCacheTtlMs: 30_000,
      authDenyTtlMs: 2_000,
      authCacheSize: 500,
      logLevel: "debug",
      shutdownGraceMs: 5_000,
    });
    // The defaults are the gateway's own defaults.
    const defaults = parseGatewayOptions(
      gatewayContainer(await render()).args.map((a: string) => a.replace("$(POD_IP)", "10.0.0.1")),
      {},
    );
    const own = parseGatewayOptions(["--protocols=https"], {});
    for (const k of [
      "maxConcurrentRequests",
      "maxRequestBytes",
      "maxResponseBytes",
      "defaultTimeoutMs",
      "maxTimeoutMs",
      "authCacheTtlMs",
      "authDenyTtlMs",
      "authCacheSize",
      "dataplaneTokenFile",
      "tlsCertFile",
      "tlsKeyFile",
    ] as const)
      expect(`${k}=${defaults[k]}`).toBe(`${k}=${own[k]}`);
  });

  test("ServiceMonitor for the gateway on demand, selecting its Service's metrics port", async () => {
    expect((await render()).some((o) => o.kind === "ServiceMonitor")).toBe(false);
    const objs = await render({
      "gateway.metrics.serviceMonitor.enabled": "true",
      "gateway.metrics.serviceMonitor.labels.release": "prom",
    });
    const sm = find(objs, "ServiceMonitor", GW);
    expect(sm.metadata.labels?.release).toBe("prom");
    expect(sm.spec.endpoints).toEqual([{ port: "metrics", path: "/metrics", interval: "30s" }]);
    const svc = find(objs, "Service", GW);
    for (const [k, v] of Object.entries(sm.spec.selector.matchLabels as Record<string, string>))
      expect(svc.metadata.labels?.[k]).toBe(v);
  });

  test.each([
    [["--set", "gateway.protocols={ftp}"], "at '/gateway/protocols/0': value must be one of 'http', 'https'"],
    [["--set-json", "gateway.protocols=[]"], "at '/gateway/protocols': minItems"],
    [["--set", "gateway.protocols={https,https}"], "at '/gateway/protocols'"],
    [["--set", "gateway.replicas=-1"], "at '/gateway/replicas': minimum: got -1, want 0"],
    [["--set", "gateway.limits.maxRequestBytes=lots"], "at '/gateway/limits/maxRequestBytes'"],
    [["--set", "gateway.limits.maxConcurrentRequests=0"], "at '/gateway/limits/maxConcurrentRequests'"],
    [["--set", "gateway.limits.defaultTimeout=30"], "at '/gateway/limits/defaultTimeout'"],
    [["--set", "gateway.auth.cacheTtl=soon"], "at '/gateway/auth/cacheTtl'"],
    [
      ["--set", "gateway.tls.certManager.issuerRef.kind=Vault"],
      "at '/gateway/tls/certManager/issuerRef/kind'",
    ],
    [["--set", "gateway.tls.caBundle=not-a-pem"], "at '/gateway/tls/caBundle'"],
    [["--set", "gateway.service.type=ExternalName"], "at '/gateway/service/type'"],
    [["--set", "gateway.metrics.port=8443"], "at '/gateway/metrics/port'"],
    [["--set", "gateway.tls.existingSecret=Bad_Name"], "at '/gateway/tls/existingSecret'"],
    [["--set", "gateway.enable=true"], "at '/gateway': additional properties 'enable' not allowed"],
    [["--set", "runtimed.dataplanePort=70000"], "at '/runtimed/dataplanePort'"],
  ])("bad value %p fails before reaching the cluster", async (args, message) => {
    const r = await helm(["template", "kr", CHART, ...args]);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain("values don't meet the specifications of the schema");
    expect(r.stderr).toContain(message);
  });

  test.each([
    [
      ["gateway.tls.existingSecret=mine", "gateway.tls.certManager.enabled=true"],
      "gateway.tls.existingSecret and gateway.tls.certManager.enabled exclude each other",
    ],
    [["gateway.tls.certManager.enabled=true"], "needs gateway.tls.certManager.issuerRef.name"],
    [
      ["gateway.limits.defaultTimeout=20m"],
      "gateway.limits.defaultTimeout (20m) must not be longer than maxTimeout (15m)",
    ],
    [["gateway.auth.denyTtl=2m"], "gateway.auth.denyTtl (2m) must not be longer than cacheTtl (60s)"],
  ])("gateway values that contradict each other fail: %p", async (sets, message) => {
    const r = await helm(["template", "kr", CHART, ...sets.flatMap((s) => ["--set", s])]);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain(message);
  });
});
