/**
 * The local control plane itself: TLS + token authentication, RBAC denial for an unprivileged
 * token, and a CRD with CEL validation whose bad objects the apiserver rejects with its own error.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { KubeClient, KubeError, loadKubeconfigFile, path, R, resourcePath } from "@kruntimes/kube";
import { eventually, testCluster, testNamespace } from "../support/cluster.ts";

const cluster = testCluster();
const suite = cluster ? describe : describe.skip;

const widgets = { group: "cel.test.kruntimes.io", version: "v1", plural: "widgets" };

const widgetCrd = {
  apiVersion: "apiextensions.k8s.io/v1",
  kind: "CustomResourceDefinition",
  metadata: { name: `widgets.${widgets.group}` },
  spec: {
    group: widgets.group,
    scope: "Namespaced",
    names: { plural: "widgets", singular: "widget", kind: "Widget" },
    versions: [
      {
        name: "v1",
        served: true,
        storage: true,
        schema: {
          openAPIV3Schema: {
            type: "object",
            properties: {
              spec: {
                type: "object",
                properties: {
                  min: { type: "integer" },
                  max: { type: "integer" },
                },
                "x-kubernetes-validations": [
                  { rule: "self.min <= self.max", message: "min must not exceed max" },
                ],
              },
            },
          },
        },
      },
    ],
  },
};

suite("local control plane", () => {
  const client = cluster!.client;
  let ns: Awaited<ReturnType<typeof testNamespace>>;

  beforeAll(async () => {
    ns = await testNamespace(client, "cp");
  });
  afterAll(async () => {
    await client.delete(path(R.crds, undefined, widgetCrd.metadata.name)).catch(() => {});
    await ns?.remove();
  });

  test("serves TLS with the admin identity and reports its version", async () => {
    const v = await client.get<{ gitVersion: string }>("/version");
    expect(v.gitVersion).toMatch(/^v1\.\d+\.\d+/);
  });

  test.if(Boolean(cluster?.local))("an unprivileged token authenticates but is forbidden", async () => {
    const nobody = new KubeClient(loadKubeconfigFile(cluster!.local!.nobodyKubeconfig));
    const err = await nobody.list(path(R.pods, "default")).catch((e) => e);
    expect(err).toBeInstanceOf(KubeError);
    expect((err as KubeError).code).toBe(403);
    expect((err as KubeError).message).toContain("krt-test-nobody");
  });

  test("a CRD with CEL validation rejects a bad object with the apiserver's message", async () => {
    await client.create(path(R.crds), widgetCrd).catch((e) => {
      if (!(e instanceof KubeError && e.code === 409)) throw e;
    });
    await eventually("CRD Established", async () => {
      const crd = await client.get<{ status?: { conditions?: { type: string; status: string }[] } }>(
        path(R.crds, undefined, widgetCrd.metadata.name),
      );
      return crd.status?.conditions?.some((c) => c.type === "Established" && c.status === "True");
    });
    const coll = resourcePath({ ...widgets, namespace: ns.name });
    const ok = await eventually("widget create accepted", () =>
      client.create<{ metadata: { name: string } }>(coll, {
        apiVersion: `${widgets.group}/v1`,
        kind: "Widget",
        metadata: { name: "good" },
        spec: { min: 1, max: 2 },
      }),
    );
    expect(ok.metadata.name).toBe("good");
    const err = await client
      .create(coll, {
        apiVersion: `${widgets.group}/v1`,
        kind: "Widget",
        metadata: { name: "bad" },
        spec: { min: 3, max: 2 },
      })
      .catch((e) => e);
    expect(err).toBeInstanceOf(KubeError);
    expect((err as KubeError).code).toBe(422);
    expect((err as KubeError).message).toContain("min must not exceed max");
  });
});
