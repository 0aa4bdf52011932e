import { describe, expect, test } from "bun:test";
import type { Runtime } from "@kruntimes/api";
import type { Deployment } from "../kube-types.ts";
import { renderRuntime } from "./render/render-runtime.ts";
import { withReplicasOwner } from "./replicas-owner.ts";

const rt = {
  apiVersion: "kruntimes.io/v1alpha1",
  kind: "Runtime",
  metadata: { name: "pool", namespace: "ns", uid: "u1" },
  spec: {
    replicas: 1,
    autoscaling: { minReplicas: 0, maxReplicas: 4 },
    template: { spec: { containers: [{ name: "runtime", image: "x" }] } },
  },
} as Runtime;
const render = () =>
  renderRuntime(rt, {
    runtimedImage: "r",
    runtimedCommand: [],
    runtimedPort: 1,
    leaseDurationSeconds: 10,
    heartbeatIntervalMs: 1000,
    runtimedResources: {},
    runtimeResources: {},
    warmPoolMax: 0,
    dataplanePort: 2,
    dataplaneSubjects: [],
    sessionMaxQueuedTotal: 1,
    sessionCloseDeadlineMs: 1,
    dataplaneNetworkPolicy: false,
    gatewayPodLabels: {},
  } as unknown as Parameters<typeof renderRuntime>[1]);
function specOf(r: ReturnType<typeof render>): { replicas?: number } {
  const body = r.objects.find((o) => (o.body as { kind?: string }).kind === "Deployment")?.body;
  return (body as unknown as { spec: { replicas?: number } }).spec;
}
const dep = (replicas: number, manager?: string): Deployment => ({
  metadata: {
    name: "pool",
    namespace: "ns",
    ...(manager
      ? {
          managedFields: [
            {
              manager,
              operation: "Update",
              subresource: "scale",
              fieldsV1: { "f:spec": { "f:replicas": {} } },
            },
          ],
        }
      : {}),
  } as Deployment["metadata"],
  spec: { replicas },
});

describe("withReplicasOwner", () => {
  test("a new Deployment starts at minReplicas", () => {
    expect(specOf(withReplicasOwner(render(), rt, undefined, "auto")).replicas).toBe(0);
  });
  test("before the autoscaler owns the count, the apply keeps the count there is", () => {
    expect(specOf(withReplicasOwner(render(), rt, dep(3, "someone-else"), "auto")).replicas).toBe(3);
  });
  test("once it owns the count, the apply leaves replicas out (and applies again when that changes)", () => {
    const before = withReplicasOwner(render(), rt, dep(3), "auto");
    const after = withReplicasOwner(render(), rt, dep(3, "auto"), "auto");
    expect("replicas" in specOf(after)).toBe(false);
    expect(after.hash).not.toBe(before.hash);
  });
});
