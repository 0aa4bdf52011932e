/**
 * The informer's transform on a real apiserver: what the list and every watch event bring is
 * transformed before it is cached or handed on — the controller keeps Runs without their
 * managedFields (one entry per writer, each listing every field it set).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Informer, type KubeClient, type KubeObject, path, R, withoutManagedFields } from "@kruntimes/kube";
import { eventually, testCluster, testNamespace } from "../support/cluster.ts";

const cluster = testCluster();
const suite = cluster ? describe : describe.skip;

interface ConfigMap extends KubeObject {
  data?: Record<string, string>;
}

suite("informer transform", () => {
  const client = cluster?.client as KubeClient;
  let ns: { name: string; remove(): Promise<void> };
  beforeAll(async () => {
    ns = await testNamespace(client, "informer-transform");
  });
  afterAll(() => ns?.remove());

  test("withoutManagedFields: listed and watched objects are cached and handed on without them", async () => {
    const cm = (name: string) => ({ metadata: { name }, data: { k: "v" } });
    await client.create(path(R.configMaps, ns.name), cm("listed"));
    const stored = await client.get<ConfigMap>(path(R.configMaps, ns.name, "listed"));
    expect(stored.metadata.managedFields?.length).toBeGreaterThan(0); // the apiserver does keep them

    const handed: ConfigMap[] = [];
    const informer = new Informer<ConfigMap>(client, path(R.configMaps, ns.name), {
      transform: withoutManagedFields,
    }).on({ add: (o) => handed.push(o), update: (o) => handed.push(o) });
    informer.start();
    try {
      await informer.waitForSync();
      await client.create(path(R.configMaps, ns.name), cm("watched"));
      await client.patch(path(R.configMaps, ns.name, "watched"), { data: { k: "w" } }, "merge");
      await eventually(
        "the watched ConfigMap's update",
        async () => informer.get(`${ns.name}/watched`)?.data?.k === "w",
        10_000,
      );
      for (const name of ["listed", "watched"])
        expect(informer.get(`${ns.name}/${name}`)?.metadata.managedFields).toBeUndefined();
      expect(handed.map((o) => o.metadata.name)).toEqual(expect.arrayContaining(["listed", "watched"]));
      for (const o of handed) expect(o.metadata.managedFields).toBeUndefined();
    } finally {
      informer.stop();
    }
  });
});
