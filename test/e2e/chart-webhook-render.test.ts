/**
 * The chart's PersistentWorkspace admission webhook, rendered by the real helm binary: the
 * Service in front of every controller pod, the controller's webhook flags (parsed by the
 * controller's own option parser) and certificate mount, the ValidatingWebhookConfiguration
 * (what it sends, to where, with which CA, scoped to the release namespace with
 * controller.scope=Namespace), the chart-made certificate (for the Service's names, signed by
 * the CA in caBundle), cert-manager instead, the RBAC it needs, and what the chart refuses.
 */
import { describe, expect, test } from "bun:test";
import { X509Certificate } from "node:crypto";
import { parseOptions } from "../../controller/options.ts";
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

const SVC = "kr-kruntimes-webhook";
const webhookConfig = (objs: K8sObject[]) => find(objs, "ValidatingWebhookConfiguration");
const webhookObjects = (objs: K8sObject[]) =>
  objs.filter((o) => o.metadata.labels?.["app.kubernetes.io/component"] === "webhook");

suite("chart workspace webhook (helm template)", () => {
  test("on by default: Service to every controller pod, flags, mount, two webhooks failing closed", async () => {
    const objs = await render({}, { namespace: "team-a" });
    expect(webhookObjects(objs).map((o) => `${o.kind}/${o.metadata.name}`)).toEqual([
      `Secret/${SVC}-tls`,
      `Service/${SVC}`,
      "ValidatingWebhookConfiguration/team-a-kr-kruntimes-controller-workspaces",
    ]);
    const dep = find(objs, "Deployment", "kr-kruntimes-controller");
    const svc = find(objs, "Service", SVC);
    expect(svc.spec.selector).toEqual(dep.spec.selector.matchLabels);
    expect(svc.spec.ports).toEqual([
      { name: "webhook", port: 9443, targetPort: "webhook", protocol: "TCP", appProtocol: "https" },
    ]);
    const c = controllerContainer(objs);
    expect(c.ports).toContainEqual({ name: "webhook", containerPort: 9443, protocol: "TCP" });
    expect(c.volumeMounts).toContainEqual({
      name: "webhook-tls",
      mountPath: "/etc/kruntimes/webhook-tls",
      readOnly: true,
    });
    expect(dep.spec.template.spec.volumes).toContainEqual({
      name: "webhook-tls",
      secret: {
        secretName: `${SVC}-tls`,
        items: [
          { key: "tls.crt", path: "tls.crt" },
          { key: "tls.key", path: "tls.key" },
        ],
      },
    });
    // The flags as the controller reads them ($(POD_IP) is the kubelet's substitution).
    const o = parseOptions(c.args, {});
    expect(o.webhook).toEqual({
      host: "$(POD_IP)",
      port: 9443,
      certFile: "/etc/kruntimes/webhook-tls/tls.crt",
      keyFile: "/etc/kruntimes/webhook-tls/tls.key",
      controllerUser: "system:serviceaccount:team-a:kr-kruntimes-controller",
    });

    const vwc = webhookConfig(objs);
    expect(vwc.webhooks.map((w: { name: string }) => w.name)).toEqual([
      "runs.workspaces.kruntimes.io",
      "persistentworkspaces.workspaces.kruntimes.io",
      "workflows.workflows.kruntimes.io",
    ]);
    for (const w of vwc.webhooks) {
      expect(w).toMatchObject({
        admissionReviewVersions: ["v1"],
        sideEffects: "None",
        failurePolicy: "Fail",
        timeoutSeconds: 5,
        clientConfig: { service: { name: SVC, namespace: "team-a", path: "/validate", port: 9443 } },
      });
      expect(w.namespaceSelector).toBeUndefined();
    }
    const [runs, workspaces] = vwc.webhooks;
    expect(runs.rules).toEqual([
      {
        apiGroups: ["kruntimes.io"],
        apiVersions: ["*"],
        operations: ["CREATE"],
        resources: ["runs"],
        scope: "Namespaced",
      },
    ]);
    expect(runs.matchConditions).toEqual([
      { name: "names-a-workspace", expression: "has(object.spec.workspace)" },
    ]);
    expect(workspaces.rules[0]).toMatchObject({
      operations: ["CREATE", "UPDATE"],
      resources: ["persistentworkspaces"],
    });
    expect(workspaces.matchConditions[0].name).toBe("sets-managed-by");
    // Workflow kinds: every CREATE/UPDATE (graph rules; create-runs check for a WorkflowRun's creator).
    const workflows = vwc.webhooks[2];
    expect(workflows.rules).toEqual([
      {
        apiGroups: ["kruntimes.io"],
        apiVersions: ["*"],
        operations: ["CREATE", "UPDATE"],
        resources: ["workflowruns", "workflows", "actions"],
        scope: "Namespaced",
      },
    ]);
    expect(workflows.matchConditions).toBeUndefined();
  });

  test("the chart-made certificate names the Service and is signed by the CA in caBundle", async () => {
    const objs = await render({}, { namespace: "team-a" });
    const secret = find(objs, "Secret", `${SVC}-tls`);
    const ca = new X509Certificate(Buffer.from(secret.data["ca.crt"], "base64"));
    const cert = new X509Certificate(Buffer.from(secret.data["tls.crt"], "base64"));
    expect(cert.verify(ca.publicKey)).toBe(true);
    for (const name of [SVC, `${SVC}.team-a`, `${SVC}.team-a.svc`, `${SVC}.team-a.svc.cluster.local`])
      expect(cert.checkHost(name)).toBe(name);
    for (const w of webhookConfig(objs).webhooks) expect(w.clientConfig.caBundle).toBe(secret.data["ca.crt"]);
  });

  test("scope=Namespace: both webhooks only see the release namespace", async () => {
    const objs = await render({ "controller.scope": "Namespace" }, { namespace: "solo" });
    for (const w of webhookConfig(objs).webhooks)
      expect(w.namespaceSelector).toEqual({ matchLabels: { "kubernetes.io/metadata.name": "solo" } });
  });

  test("cert-manager: a Certificate, no chart-made Secret, the CA injected by cainjector", async () => {
    const objs = await render({
      "webhook.tls.certManager.enabled": "true",
      "webhook.tls.certManager.issuerRef.name": "ca-issuer",
      "webhook.tls.certManager.issuerRef.kind": "ClusterIssuer",
    });
    expect(objs.some((o) => o.kind === "Secret" && o.metadata.name === `${SVC}-tls`)).toBe(false);
    const certificate = find(objs, "Certificate", SVC);
    expect(certificate.spec).toMatchObject({
      secretName: `${SVC}-tls`,
      dnsNames: [SVC, `${SVC}.krt-render`, `${SVC}.krt-render.svc`, `${SVC}.krt-render.svc.cluster.local`],
      issuerRef: { name: "ca-issuer", kind: "ClusterIssuer", group: "cert-manager.io" },
      duration: "2160h",
    });
    const vwc = webhookConfig(objs);
    expect(vwc.metadata.annotations).toEqual({ "cert-manager.io/inject-ca-from": `krt-render/${SVC}` });
    for (const w of vwc.webhooks) expect(w.clientConfig.caBundle).toBeUndefined();
  });

  test("RBAC: the webhook's access reviews and the workspaces the controller reconciles", async () => {
    const rules = find(await render(), "ClusterRole", "krt-render-kr-kruntimes-controller").rules as {
      apiGroups: string[];
      resources: string[];
      verbs: string[];
    }[];
    const has = (g: string, r: string, v: string) =>
      rules.some((x) => x.apiGroups.includes(g) && x.resources.includes(r) && x.verbs.includes(v));
    expect(has("authorization.k8s.io", "localsubjectaccessreviews", "create")).toBe(true);
    for (const v of ["get", "list", "watch", "patch", "delete"])
      expect(has("kruntimes.io", "persistentworkspaces", v)).toBe(true);
    expect(has("kruntimes.io", "persistentworkspaces/status", "patch")).toBe(true);
    // Job workspaces of WorkflowRuns are the only ones the controller creates (label managed-by).
    expect(has("kruntimes.io", "persistentworkspaces", "create")).toBe(true);
  });

  test("webhook.enabled=false: no webhook objects, flags or access-review right", async () => {
    const objs = await render({ "webhook.enabled": "false" });
    expect(webhookObjects(objs)).toEqual([]);
    const c = controllerContainer(objs);
    expect(c.args.some((a: string) => a.startsWith("--webhook-"))).toBe(false);
    expect(c.ports.map((p: { name: string }) => p.name)).toEqual(["metrics"]);
    const role = find(objs, "ClusterRole", "krt-render-kr-kruntimes-controller");
    expect(JSON.stringify(role.rules)).not.toContain("localsubjectaccessreviews");
  });

  test("refused: failurePolicy outside Fail/Ignore, cert-manager without an issuer, no controller to answer", async () => {
    for (const [sets, message] of [
      [["webhook.failurePolicy=Maybe"], "values don't meet the specifications of the schema"],
      [["webhook.timeoutSeconds=60"], "values don't meet the specifications of the schema"],
      [
        ["webhook.tls.certManager.enabled=true"],
        "webhook.tls.certManager.enabled needs webhook.tls.certManager.issuerRef.name",
      ],
      [
        ["controller.replicas=0"],
        "webhook.enabled with controller.replicas=0: nothing would answer the webhook",
      ],
    ] as const) {
      const r = await helm(["template", "kr", CHART, ...sets.flatMap((s) => ["--set", s])]);
      expect(r.code).not.toBe(0);
      expect(r.stderr).toContain(message);
    }
    // Ignore, or no webhook, makes a controller-less install valid again.
    await render({ "controller.replicas": "0", "webhook.failurePolicy": "Ignore" });
    await render({ "controller.replicas": "0", "webhook.enabled": "false" });
  });
});
