import { describe, expect, test } from "bun:test";
import { Annotations, type Runtime } from "@kruntimes/api";
import { aRuntime, renderOptions } from "../../testing/fixtures.ts";
import { renderPodTemplate, TemplateError } from "./pod-template.ts";
import type { Container, PodTemplateSpec } from "./pod-types.ts";
import { renderRuntime } from "./render-runtime.ts";

const OPTS = renderOptions({
  runtimedResources: { requests: { cpu: "50m", memory: "64Mi" }, limits: { memory: "256Mi" } },
  runtimeResources: { requests: { cpu: "100m", memory: "128Mi" } },
});

function withTemplate(patch: (rt: Runtime) => void): Runtime {
  const rt = aRuntime("bash", { runs: 4 });
  patch(rt);
  return rt;
}

function container(t: PodTemplateSpec, name: string): Container {
  const c = t.spec.containers.find((x) => x.name === name);
  if (!c) throw new Error(`no container ${name}`);
  return c;
}

describe("renderPodTemplate", () => {
  test("injects runtimed with identity env, capacity, socket, workspace and its own token", () => {
    const { template } = renderPodTemplate(aRuntime("bash", { runs: 4 }), OPTS);
    const d = container(template, "runtimed");
    expect(d.image).toBe(OPTS.runtimedImage);
    const env = Object.fromEntries((d.env ?? []).map((e) => [e.name, e.value ?? e.valueFrom]));
    expect(env.POD_UID).toEqual({ fieldRef: { apiVersion: "v1", fieldPath: "metadata.uid" } });
    expect(env.POD_IP).toEqual({ fieldRef: { apiVersion: "v1", fieldPath: "status.podIP" } });
    expect(env.KRT_RUNTIME).toBe("bash");
    expect(env.KRT_CAPACITY).toBe('{"runs":4}');
    expect(d.volumeMounts?.map((m) => m.mountPath)).toEqual([
      "/var/run/kruntimes",
      "/workspace",
      "/var/run/secrets/kubernetes.io/serviceaccount",
      "/var/tmp/runtimed",
    ]);
    expect(d.securityContext).toMatchObject({
      runAsNonRoot: true,
      readOnlyRootFilesystem: true,
      allowPrivilegeEscalation: false,
      capabilities: { drop: ["ALL"] },
    });
    expect(template.spec.automountServiceAccountToken).toBe(false);
    expect(template.spec.serviceAccountName).toBe("bash-runtimed");
    expect(template.metadata.annotations["kruntimes.io/capacity"]).toBe('{"runs":4}');
    expect(template.metadata.labels).toMatchObject({
      "kruntimes.io/runtime": "bash",
      "app.kubernetes.io/managed-by": "kruntimes",
    });
  });

  test("wires the runtime container and fills secure defaults the template leaves out", () => {
    const { template } = renderPodTemplate(aRuntime("bash"), OPTS);
    const c = container(template, "runtime");
    expect(c.volumeMounts?.map((m) => m.mountPath)).toEqual(["/var/run/kruntimes", "/workspace"]);
    expect(c.env?.find((e) => e.name === "KRT_SOCKET")?.value).toBe("/var/run/kruntimes/runtime.sock");
    expect(c.securityContext).toEqual({ allowPrivilegeEscalation: false, capabilities: { drop: ["ALL"] } });
    expect(c.resources).toEqual(OPTS.runtimeResources);
    expect(template.spec.volumes?.find((v) => v.name === "krt-workspace")).toEqual({
      name: "krt-workspace",
      emptyDir: {},
    });
  });

  test("the template wins over defaults: securityContext, resources, workspace, service account", () => {
    const rt = withTemplate((r) => {
      r.spec.workspace = { persistentVolumeClaim: { claimName: "ws" } };
      const c = r.spec.template.spec.containers[0] as Container;
      c.securityContext = { runAsUser: 1000, allowPrivilegeEscalation: true };
      c.resources = { limits: { memory: "1Gi" } };
      (r.spec.template.spec as Record<string, unknown>).serviceAccountName = "mine";
      (r.spec.template.spec as Record<string, unknown>).securityContext = { runAsUser: 2000 };
    });
    const { template } = renderPodTemplate(rt, OPTS);
    const c = container(template, "runtime");
    expect(c.securityContext).toEqual({
      allowPrivilegeEscalation: true,
      capabilities: { drop: ["ALL"] },
      runAsUser: 1000,
    });
    expect(c.resources).toEqual({ limits: { memory: "1Gi" } });
    expect(template.spec.serviceAccountName).toBe("mine");
    expect(container(template, "runtimed").securityContext?.runAsUser).toBeUndefined();
    expect(template.spec.volumes?.find((v) => v.name === "krt-workspace")).toEqual({
      name: "krt-workspace",
      persistentVolumeClaim: { claimName: "ws" },
    });
  });

  test("the hash changes with the template and the capacity, not otherwise", () => {
    const base = renderPodTemplate(aRuntime("bash", { runs: 4 }), OPTS).hash;
    expect(renderPodTemplate(aRuntime("bash", { runs: 4 }), OPTS).hash).toBe(base);
    expect(renderPodTemplate(aRuntime("bash", { runs: 5 }), OPTS).hash).not.toBe(base);
    const env = withTemplate((r) => {
      (r.spec.template.spec.containers[0] as Container).env = [{ name: "A", value: "1" }];
    });
    expect(renderPodTemplate(env, OPTS).hash).not.toBe(base);
    expect(renderPodTemplate(aRuntime("bash", { runs: 4 }), { ...OPTS, runtimedImage: "x:2" }).hash).not.toBe(
      base,
    );
    const { template, hash } = renderPodTemplate(aRuntime("bash", { runs: 4 }), OPTS);
    expect(template.metadata.annotations[Annotations.templateHash]).toBe(hash);
  });

  test("reserved volume names and mount paths are rejected with a clear error", () => {
    const vol = withTemplate((r) => {
      (r.spec.template.spec as Record<string, unknown>).volumes = [{ name: "krt-socket", emptyDir: {} }];
    });
    expect(() => renderPodTemplate(vol, OPTS)).toThrow(TemplateError);
    const mount = withTemplate((r) => {
      (r.spec.template.spec.containers[0] as Container).volumeMounts = [
        { name: "x", mountPath: "/workspace" },
      ];
    });
    expect(() => renderPodTemplate(mount, OPTS)).toThrow(/reserves/);
  });
});

describe("renderRuntime", () => {
  test("owns SA, Role, RoleBinding, Service and Deployment, all owner-referenced, in apply order", () => {
    const r = renderRuntime(aRuntime("bash"), OPTS);
    expect(r.objects.map((o) => `${o.resource.plural}/${o.name}`)).toEqual([
      "serviceaccounts/bash-runtimed",
      "roles/bash-runtimed",
      "rolebindings/bash-runtimed",
      "clusterrolebindings/kruntimes-runtimed-ns-bash",
      "services/bash",
      "deployments/bash",
    ]);
    for (const o of r.objects.filter((x) => !x.clusterScoped)) {
      expect((o.body.metadata as unknown as { ownerReferences: unknown[] }).ownerReferences).toEqual([
        {
          apiVersion: "kruntimes.io/v1alpha1",
          kind: "Runtime",
          name: "bash",
          uid: "uid-rt-bash",
          controller: true,
          blockOwnerDeletion: true,
        },
      ]);
    }
  });

  test("the Role grants runtimed exactly its contract", () => {
    const role = renderRuntime(aRuntime("bash"), OPTS).objects[1]?.body as unknown as { rules: unknown[] };
    expect(role.rules).toEqual([
      { apiGroups: ["kruntimes.io"], resources: ["runs"], verbs: ["get", "list", "watch", "patch"] },
      { apiGroups: ["kruntimes.io"], resources: ["runs/status"], verbs: ["patch"] },
      {
        apiGroups: ["kruntimes.io"],
        resources: ["persistentworkspaces"],
        verbs: ["get", "list", "watch", "patch"],
      },
      {
        apiGroups: ["coordination.k8s.io"],
        resources: ["leases"],
        verbs: ["get", "create", "update", "patch", "delete"],
      },
      { apiGroups: ["", "events.k8s.io"], resources: ["events"], verbs: ["create"] },
    ]);
  });

  test("a template with its own service account gets no ServiceAccount, and the binding names it", () => {
    const rt = withTemplate((r) => {
      (r.spec.template.spec as Record<string, unknown>).serviceAccountName = "mine";
    });
    const r = renderRuntime(rt, OPTS);
    expect(r.objects.map((o) => o.resource.plural)).not.toContain("serviceaccounts");
    const rb = r.objects.find((o) => o.resource.plural === "rolebindings")?.body as unknown as {
      subjects: { name: string }[];
    };
    expect(rb.subjects[0]?.name).toBe("mine");
  });
});

describe("the dataplane", () => {
  test("runtimed gets the dataplane port, named dataplane, and its env", () => {
    const { template } = renderPodTemplate(aRuntime("bash"), { ...OPTS, dataplanePort: 9444 });
    const d = container(template, "runtimed");
    expect(d.ports).toEqual([
      { name: "runtimed", containerPort: 8081, protocol: "TCP" },
      { name: "dataplane", containerPort: 9444, protocol: "TCP" },
    ]);
    const env = Object.fromEntries((d.env ?? []).map((e) => [e.name, e.value]));
    expect(env.KRT_DATAPLANE_PORT).toBe("9444");
    expect(env.KRT_DATAPLANE_SUBJECTS).toBe("system:serviceaccount:kruntimes:kruntimes-gateway");
  });

  test("runtimed gets the session bounds the controller was given", () => {
    const { template } = renderPodTemplate(aRuntime("bash"), {
      ...OPTS,
      sessionMaxQueuedTotal: 128,
      sessionCloseDeadlineMs: 5000,
    });
    const env = Object.fromEntries((container(template, "runtimed").env ?? []).map((e) => [e.name, e.value]));
    expect(env.KRT_SESSION_MAX_QUEUED_TOTAL).toBe("128");
    expect(env.KRT_SESSION_CLOSE_DEADLINE_MS).toBe("5000");
  });

  test("the headless Service lists the dataplane port (EndpointSlices carry it)", () => {
    const svc = renderRuntime(aRuntime("bash"), OPTS).objects.find((o) => o.resource.plural === "services")
      ?.body as unknown as { spec: { clusterIP: string; ports: unknown[] } };
    expect(svc.spec.clusterIP).toBe("None");
    expect(svc.spec.ports).toContainEqual({
      name: "dataplane",
      port: 8444,
      targetPort: "dataplane",
      protocol: "TCP",
    });
  });

  test("runtimed's ServiceAccount is bound to system:auth-delegator, cluster-scoped and not owned", () => {
    const o = renderRuntime(aRuntime("bash"), OPTS).objects.find(
      (x) => x.resource.plural === "clusterrolebindings",
    );
    expect(o?.clusterScoped).toBe(true);
    expect(o?.body as unknown).toEqual({
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "ClusterRoleBinding",
      metadata: {
        name: "kruntimes-runtimed-ns-bash",
        labels: {
          "kruntimes.io/runtime": "bash",
          "app.kubernetes.io/managed-by": "kruntimes",
          "kruntimes.io/namespace": "ns",
        },
      },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "system:auth-delegator" },
      subjects: [{ kind: "ServiceAccount", name: "bash-runtimed", namespace: "ns" }],
    });
    const own = withTemplate((r) => {
      (r.spec.template.spec as Record<string, unknown>).serviceAccountName = "mine";
    });
    const b = renderRuntime(own, OPTS).objects.find((x) => x.resource.plural === "clusterrolebindings")
      ?.body as unknown as { subjects: { name: string }[] };
    expect(b.subjects[0]?.name).toBe("mine");
  });

  test("no NetworkPolicy unless asked; with it, the dataplane port only from the gateway pods", () => {
    expect(
      renderRuntime(aRuntime("bash"), OPTS).objects.some((o) => o.resource.plural === "networkpolicies"),
    ).toBe(false);
    const r = renderRuntime(aRuntime("bash"), {
      ...OPTS,
      dataplaneNetworkPolicy: true,
      gatewayNamespace: "kruntimes",
      gatewayPodLabels: { "app.kubernetes.io/name": "kruntimes-gateway", "app.kubernetes.io/instance": "k" },
    });
    expect(r.objects.map((o) => o.resource.plural).slice(-2)).toEqual(["networkpolicies", "deployments"]);
    const np = r.objects.find((o) => o.resource.plural === "networkpolicies")?.body as unknown as {
      metadata: { name: string; ownerReferences: { kind: string }[] };
      spec: {
        podSelector: unknown;
        policyTypes: string[];
        ingress: { from?: unknown[]; ports: { protocol: string; port: number; endPort?: number }[] }[];
      };
    };
    expect(np.metadata.name).toBe("bash-dataplane");
    expect(np.metadata.ownerReferences[0]?.kind).toBe("Runtime");
    expect(np.spec.podSelector).toEqual({
      matchLabels: { "kruntimes.io/runtime": "bash", "app.kubernetes.io/managed-by": "kruntimes" },
    });
    expect(np.spec.policyTypes).toEqual(["Ingress"]);
    const [gateway, rest] = np.spec.ingress;
    expect(gateway).toEqual({
      from: [
        {
          podSelector: {
            matchLabels: { "app.kubernetes.io/name": "kruntimes-gateway", "app.kubernetes.io/instance": "k" },
          },
          namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": "kruntimes" } },
        },
      ],
      ports: [{ protocol: "TCP", port: 8444 }],
    });
    // Every other port from anywhere: no `from`, ranges around 8444 for each protocol.
    expect(rest?.from).toBeUndefined();
    expect(rest?.ports.filter((p) => p.protocol === "TCP")).toEqual([
      { protocol: "TCP", port: 1, endPort: 8443 },
      { protocol: "TCP", port: 8445, endPort: 65535 },
    ]);
    for (const p of rest?.ports ?? []) {
      const end = p.endPort ?? p.port;
      expect(8444 >= p.port && 8444 <= end && p.protocol === "TCP").toBe(false);
    }
  });

  test("without --gateway-namespace the policy admits gateway pods of the Runtime's namespace", () => {
    const np = renderRuntime(aRuntime("bash"), { ...OPTS, dataplaneNetworkPolicy: true }).objects.find(
      (o) => o.resource.plural === "networkpolicies",
    )?.body as unknown as { spec: { ingress: { from: { namespaceSelector: unknown }[] }[] } };
    expect(np.spec.ingress[0]?.from[0]?.namespaceSelector).toEqual({
      matchLabels: { "kubernetes.io/metadata.name": "ns" },
    });
  });
});
