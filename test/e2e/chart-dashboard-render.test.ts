/**
 * The chart's dashboard, rendered by the real helm binary: off by default; when on, a Deployment
 * that passes Pod Security `restricted` and mounts no ServiceAccount token, its own
 * ServiceAccount bound to nothing, a Service, an optional Ingress; flags parsed by the
 * dashboard's own option parser; schema rejections; and the image agreeing with its Dockerfile
 * and the local node agent's image map.
 */
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import YAML from "yaml";
import { parseOptions } from "../../dashboard/server/options.ts";
import { find, HELM_MISSING, helmPath, type K8sObject, ROOT, render } from "./chart-support.ts";

const available = helmPath() !== undefined;
if (!available && process.env.KUBECONFIG) throw new Error(HELM_MISSING);
const suite = available ? describe : describe.skip;

const NAME = "kr-kruntimes-dashboard";
const ON = { "dashboard.enabled": "true" };
const dashboardObjects = (objs: K8sObject[]) =>
  objs.filter((o) => o.metadata.labels?.["app.kubernetes.io/component"] === "dashboard");

suite("chart dashboard (helm template)", () => {
  test("off by default: nothing rendered", async () => {
    expect(dashboardObjects(await render())).toEqual([]);
  });

  test("on: ServiceAccount, Deployment, Service and no Ingress; nothing grants the ServiceAccount anything", async () => {
    const objs = await render(ON, { namespace: "team-a" });
    expect(
      dashboardObjects(objs)
        .map((o) => `${o.kind}/${o.metadata.name}`)
        .sort(),
    ).toEqual([`Deployment/${NAME}`, `Service/${NAME}`, `ServiceAccount/${NAME}`]);
    const sa = find(objs, "ServiceAccount", NAME);
    expect(sa.automountServiceAccountToken).toBe(false);
    const subjects = objs
      .filter((o) => o.kind === "RoleBinding" || o.kind === "ClusterRoleBinding")
      .flatMap((b) => (b.subjects ?? []) as { name: string }[]);
    expect(subjects.map((s) => s.name)).not.toContain(NAME);
  });

  test("the pod is Pod Security restricted, has no token of its own, and reads the cluster CA from kube-root-ca.crt", async () => {
    const dep = find(await render(ON), "Deployment", NAME);
    const pod = dep.spec.template.spec;
    expect(pod.serviceAccountName).toBe(NAME);
    expect(pod.automountServiceAccountToken).toBe(false);
    expect(pod.securityContext).toMatchObject({
      runAsNonRoot: true,
      seccompProfile: { type: "RuntimeDefault" },
    });
    const c = pod.containers[0];
    expect(c.image).toMatch(/^ghcr\.io\/kruntimes\/dashboard:/);
    expect(c.securityContext).toEqual({
      runAsNonRoot: true,
      allowPrivilegeEscalation: false,
      readOnlyRootFilesystem: true,
      capabilities: { drop: ["ALL"] },
      seccompProfile: { type: "RuntimeDefault" },
    });
    expect(pod.volumes).toContainEqual({
      name: "kube-ca",
      configMap: { name: "kube-root-ca.crt", items: [{ key: "ca.crt", path: "ca.crt" }] },
    });
    expect(c.readinessProbe.httpGet).toEqual({ path: "/healthz", port: "http" });
  });

  test("its flags parse with the dashboard's own parser: token auth on the pod IP, the release's gateway", async () => {
    const objs = await render(
      { ...ON, "dashboard.logLevel": "debug", "dashboard.port": "9000" },
      { namespace: "ns1" },
    );
    const c = find(objs, "Deployment", NAME).spec.template.spec.containers[0];
    const args = (c.args as string[]).map((a) => a.replace("$(POD_IP)", "10.0.0.7"));
    const o = parseOptions(args, {});
    expect(o).toMatchObject({
      host: "10.0.0.7",
      port: 9000,
      auth: "token",
      caFile: "/var/run/kruntimes/kube-ca/ca.crt",
      gatewayNamespace: "ns1",
      logLevel: "debug",
    });
    expect(c.ports).toEqual([{ name: "http", containerPort: 9000, protocol: "TCP" }]);
    const svc = find(objs, "Service", NAME);
    expect(svc.spec.ports).toEqual([{ name: "http", port: 80, targetPort: "http", protocol: "TCP" }]);
    expect(svc.spec.selector).toEqual(find(objs, "Deployment", NAME).spec.selector.matchLabels);
  });

  test("Ingress: host, class, TLS secret, annotations", async () => {
    const objs = await render({
      ...ON,
      "dashboard.ingress.enabled": "true",
      "dashboard.ingress.host": "dash.example.com",
      "dashboard.ingress.className": "nginx",
      "dashboard.ingress.tlsSecret": "dash-tls",
      "dashboard.ingress.annotations.a": "b",
    });
    const ing = find(objs, "Ingress", NAME);
    expect(ing.metadata.annotations).toEqual({ a: "b" });
    expect(ing.spec.ingressClassName).toBe("nginx");
    expect(ing.spec.tls).toEqual([{ hosts: ["dash.example.com"], secretName: "dash-tls" }]);
    expect(ing.spec.rules[0].host).toBe("dash.example.com");
    expect(ing.spec.rules[0].http.paths[0].backend.service).toEqual({ name: NAME, port: { name: "http" } });
  });

  test("the schema refuses an Ingress without a host and unknown keys", async () => {
    await expect(render({ ...ON, "dashboard.ingress.enabled": "true" })).rejects.toThrow(/host/);
    await expect(render({ ...ON, "dashboard.replicaz": "2" })).rejects.toThrow(/replicaz/);
    await expect(render({ ...ON, "dashboard.logLevel": "loud" })).rejects.toThrow(/logLevel/);
  });

  test("the image: its Dockerfile compiles what the local node agent runs, non-root, with the UI prebuilt", () => {
    const docker = readFileSync(join(ROOT, "images/dashboard/Dockerfile"), "utf8");
    expect(docker).toMatch(/bun build --compile\b.*--outfile \/out\/dashboard dashboard\/main\.ts$/m);
    expect(docker).toContain("RUN bun dashboard/build.ts /out/web");
    expect(docker).toContain("ENV KRT_DASHBOARD_ASSETS_DIR=/usr/share/kruntimes/dashboard");
    expect(docker).toMatch(/^USER 65532:65532$/m);
    expect(docker).toMatch(/^ENTRYPOINT \["\/usr\/local\/bin\/dashboard"\]$/m);
    const map = YAML.parse(readFileSync(join(ROOT, "test/localcluster/images.yaml"), "utf8")) as {
      images: Record<string, { entrypoint: string[] }>;
    };
    expect(map.images["ghcr.io/kruntimes/dashboard"]?.entrypoint).toEqual(["bun", "dashboard/main.ts"]);
  });
});
