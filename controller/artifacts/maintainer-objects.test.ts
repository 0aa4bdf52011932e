import { describe, expect, test } from "bun:test";
import type { Runtime } from "@kruntimes/api";
import { renderPodTemplate } from "../runtime/render/pod-template.ts";
import type { Container, PodTemplateSpec } from "../runtime/render/pod-types.ts";
import { renderRole } from "../runtime/render/rbac.ts";
import { aRuntime, renderOptions } from "../testing/fixtures.ts";
import { maintainerObjects } from "./maintainer-objects.ts";
import { ARTIFACT_FS_ROOT } from "./store-wiring.ts";

const OPTS = renderOptions();
const S3 = {
  s3: { bucket: "b", endpoint: "http://s3:9000", pathStyle: true, credentialsSecretRef: { name: "creds" } },
};

function withStore(store: Runtime["spec"]["artifactStore"]): Runtime {
  const rt = aRuntime("bash", { runs: 2 });
  rt.spec.artifactStore = store;
  return rt;
}
const c = (t: PodTemplateSpec, name: string) => t.spec.containers.find((x) => x.name === name) as Container;
const envOf = (x: Container) =>
  Object.fromEntries((x.env ?? []).map((e) => [e.name, e.value ?? e.valueFrom]));

describe("a Runtime's artifact store in its pods", () => {
  test("S3: the config and the Secret's keys reach runtimed only, as secretKeyRef", () => {
    const { template } = renderPodTemplate(withStore(S3), OPTS);
    const env = envOf(c(template, "runtimed"));
    expect(JSON.parse(env.KRT_ARTIFACT_STORE as string)).toEqual(S3);
    expect(env.AWS_ACCESS_KEY_ID).toEqual({ secretKeyRef: { name: "creds", key: "AWS_ACCESS_KEY_ID" } });
    expect(env.AWS_SECRET_ACCESS_KEY).toEqual({
      secretKeyRef: { name: "creds", key: "AWS_SECRET_ACCESS_KEY" },
    });
    const runtime = envOf(c(template, "runtime"));
    expect(Object.keys(runtime).filter((k) => k.startsWith("AWS_") || k.startsWith("KRT_ARTIFACT"))).toEqual(
      [],
    );
  });

  test("filesystem: the claim is mounted into runtimed, not the runtime container", () => {
    const { template } = renderPodTemplate(withStore({ filesystem: { claimName: "arts" } }), OPTS);
    expect(template.spec.volumes).toContainEqual({
      name: "krt-artifact-store",
      persistentVolumeClaim: { claimName: "arts" },
    });
    expect(c(template, "runtimed").volumeMounts).toContainEqual({
      name: "krt-artifact-store",
      mountPath: ARTIFACT_FS_ROOT,
    });
    expect((c(template, "runtime").volumeMounts ?? []).map((m) => m.name)).not.toContain(
      "krt-artifact-store",
    );
  });

  test("without a store nothing changes; runtimed patches Runs either way (function finalizer)", () => {
    const { template } = renderPodTemplate(aRuntime("bash", { runs: 2 }), OPTS);
    expect(envOf(c(template, "runtimed")).KRT_ARTIFACT_STORE).toBeUndefined();
    const verbs = (rt: Runtime) =>
      (renderRole(rt).rules as { resources: string[]; verbs: string[] }[])
        .filter((r) => r.resources.includes("runs"))
        .flatMap((r) => r.verbs);
    expect(verbs(aRuntime("bash", { runs: 2 }))).toContain("patch");
    expect(verbs(withStore(S3))).toContain("patch");
  });
});

describe("maintainerObjects", () => {
  const objs = maintainerObjects("team-a", "0123456789ab", S3, { image: "ghcr.io/kruntimes/runtimed:0.1.0" });
  test("SA, Role, RoleBinding, auth-delegator binding, Deployment, Service — none owned by the Runtime", () => {
    expect(objs.map((o) => (o.body as { kind: string }).kind)).toEqual([
      "ServiceAccount",
      "Role",
      "RoleBinding",
      "ClusterRoleBinding",
      "Deployment",
      "Service",
    ]);
    for (const o of objs)
      expect(
        (o.body as { metadata: { ownerReferences?: unknown } }).metadata.ownerReferences,
      ).toBeUndefined();
    const crb = objs[3]?.body as { roleRef: { name: string }; subjects: { namespace: string }[] };
    expect(crb.roleRef.name).toBe("system:auth-delegator");
    expect(crb.subjects[0]?.namespace).toBe("team-a");
  });
  test("the Deployment runs `runtimed maintain` with the store's access", () => {
    const d = objs[4]?.body as { spec: { template: PodTemplateSpec } };
    const m = c(d.spec.template, "maintainer");
    expect(m.args).toEqual(["maintain"]);
    const env = envOf(m);
    expect(env.KRT_ARTIFACT_STORE_ID).toBe("0123456789ab");
    expect(env.AWS_ACCESS_KEY_ID).toEqual({ secretKeyRef: { name: "creds", key: "AWS_ACCESS_KEY_ID" } });
    expect(d.spec.template.spec.serviceAccountName).toBe("krt-artifacts-0123456789ab");
  });
});
