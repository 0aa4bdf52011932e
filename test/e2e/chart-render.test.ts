/**
 * The Helm chart, rendered by the real helm binary: lint, the objects `helm template` produces
 * for default and changed values, RBAC that covers what the controller grants runtimed, names
 * that let two releases coexist, and schema errors for bad values. No cluster is needed; the
 * suite skips without helm unless a cluster is configured (then helm must be built).
 */
import { describe, expect, test } from "bun:test";
import type { ArtifactStore, Runtime } from "@kruntimes/api";
import { maintainerObjects } from "../../controller/artifacts/maintainer-objects.ts";
import { renderRole } from "../../controller/runtime/render/rbac.ts";
import {
  CHART,
  controllerContainer,
  find,
  HELM_MISSING,
  helm,
  helmPath,
  helmStderr,
  ROOT,
  render,
} from "./chart-support.ts";

describe("helmStderr", () => {
  test("drops client-go's watch noise; the apiserver's warnings, helm's and errors stay", () => {
    const noise = [
      'E1203 16:06:41.048832    4961 request.go:1198] "Unexpected error when reading response body" err="context canceled"',
      'W1205 11:02:03.100000    5120 reflector.go:561] k8s.io/client-go/tools/cache/reflector.go:243: watch of *unstructured.Unstructured ended with: an error on the server ("unable to decode an event from the watch stream: http2: response body closed") has prevented the request from succeeding',
      'E1205 11:02:03.100000    5120 retrywatcher.go:160] "Watch failed" err="context canceled"',
      "",
    ].join("\n");
    expect(helmStderr(noise)).toBe("");
    expect(helmStderr(`WARNING: x\n${noise}Error: y\n`)).toBe("WARNING: x\nError: y\n");
    const warning =
      'W1205 11:02:03.100000    5120 warnings.go:70] metadata.finalizers: "x": prefer a domain-qualified finalizer name\n';
    expect(helmStderr(warning)).toBe(warning);
  });
});

const available = helmPath() !== undefined;
if (!available && process.env.KUBECONFIG) throw new Error(HELM_MISSING);
const suite = available ? describe : describe.skip;
const APP_VERSION = /appVersion:\s*"?([^"\s]+)"?/.exec(await Bun.file(`${CHART}/Chart.yaml`).text())?.[1];

interface Rule {
  apiGroups: string[];
  resources: string[];
  verbs: string[];
  resourceNames?: string[];
}

/** Kinds the chart renders without a namespace. */
const CLUSTER_KINDS = new Set([
  "FlowSchema",
  "ValidatingAdmissionPolicy",
  "ValidatingAdmissionPolicyBinding",
  "ValidatingWebhookConfiguration",
]);
const clusterScoped = (o: { kind: string }) => o.kind.startsWith("Cluster") || CLUSTER_KINDS.has(o.kind);

/** True when `rules` grant verb on group/resource (exact match: the chart uses no wildcards). */
function grants(rules: Rule[], group: string, resource: string, verb: string): boolean {
  return rules.some(
    (r) => r.apiGroups.includes(group) && r.resources.includes(resource) && r.verbs.includes(verb),
  );
}

suite("chart (helm template)", () => {
  test("helm lint passes in strict mode", async () => {
    const r = await helm(["lint", "--strict", CHART]);
    expect(r.stderr + r.stdout).toContain("0 chart(s) failed");
    expect(r.code).toBe(0);
  });

  test("defaults: controller, its RBAC, metrics Service, the gateway and the two built-in Runtimes", async () => {
    const objs = await render({}, { release: "kr", namespace: "team-a" });
    expect(objs.map((o) => `${o.kind}/${o.metadata.name}`).sort()).toEqual([
      "ClusterRole/team-a-kr-kruntimes-controller",
      "ClusterRole/team-a-kr-kruntimes-gateway",
      "ClusterRole/team-a-kr-kruntimes-run-priority",
      "ClusterRoleBinding/team-a-kr-kruntimes-controller",
      "ClusterRoleBinding/team-a-kr-kruntimes-gateway",
      "ConfigMap/kr-kruntimes-gateway-ca",
      "Deployment/kr-kruntimes-controller",
      "Deployment/kr-kruntimes-gateway",
      "FlowSchema/team-a-kr-kruntimes-runtimed-heartbeats",
      "PodDisruptionBudget/kr-kruntimes-gateway",
      "Role/kr-kruntimes-gateway-discovery",
      "RoleBinding/kr-kruntimes-gateway-discovery",
      "Runtime/bash",
      "Runtime/python",
      "Secret/kr-kruntimes-gateway-tls",
      "Secret/kr-kruntimes-webhook-tls",
      "Service/kr-kruntimes-controller-metrics",
      "Service/kr-kruntimes-gateway",
      "Service/kr-kruntimes-webhook",
      "ServiceAccount/kr-kruntimes-controller",
      "ServiceAccount/kr-kruntimes-gateway",
      "ValidatingAdmissionPolicy/team-a-kr-kruntimes-run-artifact-inputs",
      "ValidatingAdmissionPolicy/team-a-kr-kruntimes-run-priority",
      "ValidatingAdmissionPolicyBinding/team-a-kr-kruntimes-run-artifact-inputs",
      "ValidatingAdmissionPolicyBinding/team-a-kr-kruntimes-run-priority",
      "ValidatingWebhookConfiguration/team-a-kr-kruntimes-controller-workspaces",
    ]);
    for (const o of objs) {
      if (!clusterScoped(o)) expect(o.metadata.namespace).toBe("team-a");
      expect(o.metadata.labels?.["app.kubernetes.io/instance"]).toBe("kr");
    }
  });

  test("images are ghcr.io/kruntimes/<component> at the chart appVersion, no kruntimes- prefix", async () => {
    const objs = await render();
    const c = controllerContainer(objs);
    expect(APP_VERSION).toBeDefined();
    expect(c.image).toBe(`ghcr.io/kruntimes/controller:${APP_VERSION}`);
    expect(c.args).toContain(`--runtimed-image=ghcr.io/kruntimes/runtimed:${APP_VERSION}`);
    for (const lang of ["bash", "python"]) {
      const rt = find(objs, "Runtime", lang);
      expect(rt.spec.template.spec.containers[0].image).toBe(`ghcr.io/kruntimes/${lang}:${APP_VERSION}`);
    }
    const moved = await render({ "image.registry": "registry.example.com/mirror", "image.tag": "dev" });
    expect(controllerContainer(moved).image).toBe("registry.example.com/mirror/controller:dev");
    expect(controllerContainer(moved).args).toContain(
      "--runtimed-image=registry.example.com/mirror/runtimed:dev",
    );
    const own = await render({ "runtimed.image": "example.com/runtimed@sha256:abc" });
    expect(controllerContainer(own).args).toContain("--runtimed-image=example.com/runtimed@sha256:abc");
  });

  test("controller pod: leader election in the release namespace, probes, metrics on the pod IP, hardened", async () => {
    const objs = await render({}, { namespace: "ops" });
    const dep = find(objs, "Deployment", "kr-kruntimes-controller");
    const c = controllerContainer(objs);
    expect(c.args).toEqual(
      expect.arrayContaining([
        "--leader-elect=true",
        "--leader-election-namespace=ops",
        "--leader-election-id=kr-kruntimes-controller",
        "--metrics-host=$(POD_IP)",
        "--metrics-port=8080",
      ]),
    );
    expect(c.args.some((a: string) => a.startsWith("--namespace="))).toBe(false);
    expect(c.readinessProbe.httpGet).toEqual({ path: "/readyz", port: "metrics" });
    expect(c.livenessProbe.httpGet).toEqual({ path: "/healthz", port: "metrics" });
    expect(c.securityContext).toMatchObject({
      allowPrivilegeEscalation: false,
      readOnlyRootFilesystem: true,
      capabilities: { drop: ["ALL"] },
    });
    expect(dep.spec.template.spec.securityContext).toMatchObject({ runAsNonRoot: true, runAsUser: 65532 });
    const svc = find(objs, "Service", "kr-kruntimes-controller-metrics");
    expect(svc.spec.selector).toEqual(dep.spec.selector.matchLabels);
    for (const [k, v] of Object.entries(dep.spec.selector.matchLabels))
      expect(dep.spec.template.metadata.labels[k]).toBe(v);
  });

  test("RBAC: no wildcards, no secrets, and everything the controller grants runtimed", async () => {
    const role = find(await render(), "ClusterRole", "krt-render-kr-kruntimes-controller");
    const rules = role.rules as Rule[];
    for (const r of rules) {
      for (const field of [r.apiGroups, r.resources, r.verbs]) expect(field).not.toContain("*");
      expect(r.resources).not.toContain("secrets");
      expect(r.resources).not.toContain("configmaps");
      expect(r.verbs).not.toContain("escalate");
      // `bind` only for the one ClusterRole artifact maintainers are bound to.
      if (r.verbs.includes("bind"))
        expect({ resources: r.resources, names: r.resourceNames }).toEqual({
          resources: ["clusterroles"],
          names: ["system:auth-delegator"],
        });
    }
    // RBAC escalation check: a Role can only be created by someone holding all its rules. The
    // Roles the controller renders for runtimed, with and without an artifact store:
    const runtime = (spec: Record<string, unknown>) =>
      ({ metadata: { name: "rt", namespace: "ns", uid: "u" }, spec }) as unknown as Runtime;
    const granted = [
      ...renderRole(runtime({})).rules,
      ...renderRole(runtime({ artifactStore: { filesystem: { claimName: "artifacts" } } })).rules,
      // An artifact store's maintainer gets a Role of its own from the controller.
      ...maintainerObjects("ns", "store", { filesystem: { claimName: "artifacts" } } as ArtifactStore, {
        image: "x",
      }).flatMap((o) =>
        (o.body as { kind: string }).kind === "Role" ? (o.body as { rules: Rule[] }).rules : [],
      ),
    ];
    for (const r of granted)
      for (const g of r.apiGroups)
        for (const res of r.resources)
          for (const v of r.verbs)
            expect(`${g}/${res}:${v} ${grants(rules, g, res, v)}`).toBe(`${g}/${res}:${v} true`);
    // What the controller itself calls.
    for (const [g, res, v] of [
      ["kruntimes.io", "runtimes", "watch"],
      ["kruntimes.io", "runtimes/status", "patch"],
      ["kruntimes.io", "runs", "delete"],
      ["apps", "deployments", "patch"],
      ["apps", "deployments", "create"],
      ["rbac.authorization.k8s.io", "roles", "create"],
      ["rbac.authorization.k8s.io", "rolebindings", "patch"],
      ["", "services", "create"],
      ["", "serviceaccounts", "patch"],
      ["", "pods", "watch"],
      // A pod a session used is deleted so its Deployment replaces it.
      ["", "pods", "delete"],
      // The autoscaler marks the pod it drains and releases it from its ReplicaSet; it scales
      // the Deployment through its scale subresource and records Events.
      ["", "pods", "patch"],
      ["apps", "deployments/scale", "patch"],
      ["", "events", "create"],
      ["coordination.k8s.io", "leases", "update"],
      // The dataplane NetworkPolicy per Runtime (applied, and deleted when turned off).
      ["networking.k8s.io", "networkpolicies", "create"],
      ["networking.k8s.io", "networkpolicies", "patch"],
      ["networking.k8s.io", "networkpolicies", "delete"],
      // runtimed's (and artifact maintainers') system:auth-delegator ClusterRoleBindings.
      ["rbac.authorization.k8s.io", "clusterrolebindings", "create"],
    ] as const)
      expect(`${g}/${res}:${v} ${grants(rules, g, res, v)}`).toBe(`${g}/${res}:${v} true`);
    expect(grants(rules, "", "pods", "update")).toBe(false);
    expect(grants(rules, "", "secrets", "get")).toBe(false);
  });

  test("cluster-scoped names carry the release namespace and name: two releases never collide", async () => {
    const names = async (release: string, namespace: string) =>
      (await render({}, { release, namespace }))
        .filter(clusterScoped)
        .map((o) => `${o.kind}/${o.metadata.name}`);
    const a = await names("kruntimes", "team-a");
    const b = await names("kruntimes", "team-b");
    const c = await names("other", "team-a");
    expect(a).toHaveLength(11);
    for (const n of a) {
      expect(b).not.toContain(n);
      expect(c).not.toContain(n);
    }
    const crb = find(
      await render({}, { release: "kruntimes", namespace: "team-b" }),
      "ClusterRoleBinding",
      "team-b-kruntimes-controller",
    );
    expect(crb.subjects).toEqual([
      { kind: "ServiceAccount", name: "kruntimes-controller", namespace: "team-b" },
    ]);
  });

  test("scope=Namespace without the gateway: a Role and RoleBinding, no cluster-scoped objects, --namespace", async () => {
    // The run-priority and artifact-inputs admission policies are cluster-scoped by nature
    // (test/e2e/chart-priority-policy.test.ts, chart-artifact-inputs-policy.test.ts), so is the
    // workspace webhook's configuration (test/e2e/chart-webhook-render.test.ts).
    const objs = await render(
      {
        "controller.scope": "Namespace",
        "gateway.enabled": "false",
        "runPriority.admissionPolicy": "false",
        "artifactInputs.admissionPolicy": "false",
        "webhook.enabled": "false",
        "runtimed.heartbeatFlowSchema.enabled": "false",
      },
      { namespace: "solo" },
    );
    expect(objs.filter(clusterScoped)).toEqual([]);
    const role = find(objs, "Role");
    const binding = find(objs, "RoleBinding");
    expect(role.metadata.namespace).toBe("solo");
    expect(binding.roleRef).toEqual({
      apiGroup: "rbac.authorization.k8s.io",
      kind: "Role",
      name: role.metadata.name,
    });
    expect(controllerContainer(objs).args).toContain("--namespace=solo");
  });

  test("runtimed's heartbeat Leases get their own FlowSchema: Lease requests only, the listed namespaces", async () => {
    const objs = await render(
      { "runtimed.heartbeatFlowSchema.namespaces[0]": "team-b" },
      { namespace: "team-a" },
    );
    const fs = find(objs, "FlowSchema");
    expect(fs.spec).toEqual({
      priorityLevelConfiguration: { name: "leader-election" },
      matchingPrecedence: 500,
      distinguisherMethod: { type: "ByUser" },
      rules: [
        {
          subjects: ["team-a", "team-b"].map((namespace) => ({
            kind: "ServiceAccount",
            serviceAccount: { namespace, name: "*" },
          })),
          resourceRules: [
            {
              apiGroups: ["coordination.k8s.io"],
              resources: ["leases"],
              verbs: ["get", "create", "update", "patch"],
              namespaces: ["team-a", "team-b"],
            },
          ],
        },
      ],
    });
    const off = await render({ "runtimed.heartbeatFlowSchema.enabled": "false" });
    expect(off.filter((o) => o.kind === "FlowSchema")).toEqual([]);
  });

  test("built-in Runtimes are sized by values, and can be turned off", async () => {
    const objs = await render({
      "runtimes.bash.replicas": "3",
      "runtimes.bash.capacity.runs": "16",
      "runtimes.bash.resources.limits.memory": "2Gi",
      "runtimes.python.enabled": "false",
    });
    const bash = find(objs, "Runtime", "bash");
    expect(bash.spec.replicas).toBe(3);
    expect(bash.spec.capacity).toEqual({ runs: 16 });
    const c = bash.spec.template.spec.containers[0];
    expect(c.name).toBe("runtime");
    expect(c.resources.limits.memory).toBe("2Gi");
    expect(c.securityContext).toMatchObject({
      allowPrivilegeEscalation: false,
      capabilities: { drop: ["ALL"] },
    });
    expect(objs.some((o) => o.kind === "Runtime" && o.metadata.name === "python")).toBe(false);
  });

  test("ServiceMonitor on demand, with its labels; it brings the Service along", async () => {
    expect((await render()).some((o) => o.kind === "ServiceMonitor")).toBe(false);
    const objs = await render({
      "controller.metrics.serviceMonitor.enabled": "true",
      "controller.metrics.serviceMonitor.labels.release": "prom",
      "controller.metrics.service.enabled": "false",
    });
    const sm = find(objs, "ServiceMonitor");
    const svc = find(objs, "Service", "kr-kruntimes-controller-metrics");
    expect(sm.metadata.labels?.release).toBe("prom");
    expect(sm.spec.endpoints).toEqual([{ port: "metrics", path: "/metrics", interval: "30s" }]);
    for (const [k, v] of Object.entries(sm.spec.selector.matchLabels as Record<string, string>))
      expect(svc.metadata.labels?.[k]).toBe(v);
  });

  test.each([
    ["runtimes.bash.replicas=-1", "at '/runtimes/bash/replicas': minimum: got -1, want 0"],
    ["runtimes.python.capacity.runs=0", "at '/runtimes/python/capacity/runs': minimum: got 0, want 1"],
    ["controller.scope=Everywhere", "at '/controller/scope': value must be one of 'Cluster', 'Namespace'"],
    ["controller.replica=2", "at '/controller': additional properties 'replica' not allowed"],
    ["controller.logLevel=loud", "at '/controller/logLevel': value must be one of"],
    ["controller.leaderElection.leaseDuration=15", "at '/controller/leaderElection/leaseDuration'"],
    ["image.pullPolicy=Sometimes", "at '/image/pullPolicy'"],
  ])("bad value %s fails before reaching the cluster", async (set, message) => {
    const r = await helm(["template", "kr", CHART, "--set", set]);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain("values don't meet the specifications of the schema");
    expect(r.stderr).toContain(message);
  });

  test.each([
    [
      ["controller.leaderElection.renewDeadline=4s"],
      "controller.leaderElection.renewDeadline (4s) must be shorter than leaseDuration (4s)",
    ],
    [
      ["controller.leaderElection.retryPeriod=1m"],
      "retryPeriod (1m) must be shorter than renewDeadline (3s)",
    ],
    [
      ["controller.leaderElection.enabled=false", "controller.replicas=2"],
      "controller.replicas=2 needs controller.leaderElection.enabled=true",
    ],
  ])("values that contradict each other fail: %p", async (sets, message) => {
    const r = await helm(["template", "kr", CHART, ...sets.flatMap((s) => ["--set", s])]);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain(message);
  });

  test("compound durations are compared by value", async () => {
    const objs = await render({
      "controller.leaderElection.leaseDuration": "1m30s",
      "controller.leaderElection.renewDeadline": "1m29.5s",
      "controller.leaderElection.retryPeriod": "500ms",
    });
    expect(controllerContainer(objs).args).toContain("--leader-renew-deadline=1m29.5s");
  });

  test("the README values table is generated from values.yaml and the schema", async () => {
    const proc = Bun.spawn(["bun", "chart/hack/values-table.ts", "--check"], { cwd: ROOT, stderr: "pipe" });
    const [code, err] = await Promise.all([proc.exited, new Response(proc.stderr).text()]);
    expect(err).toBe("");
    expect(code).toBe(0);
  });
});
