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
      "services/bash",
      "deployments/bash",
    ]);
    for (const o of r.objects) {
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
      { apiGroups: ["kruntimes.io"], resources: ["runs"], verbs: ["get", "list", "watch"] },
      { apiGroups: ["kruntimes.io"], resources: ["runs/status"], verbs: ["patch"] },
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
