/**
 * The Run CRD's selectable fields on a real apiserver: runtimed finds its pod's Runs with
 * `status.assignment.pod=<pod>` (server-side filtering, so a pod never receives other pods' Run
 * events), and `krt list` filters by `spec.runtime` and `status.phase` the same way.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { type Run, RunResource } from "@kruntimes/api";
import { type KubeClient, path } from "@kruntimes/kube";
import { installCrds, runManifest } from "../../controller/testing/cluster/objects.ts";
import { testCluster, testNamespace } from "../support/cluster.ts";

const cluster = testCluster();
const suite = cluster ? describe : describe.skip;

suite("Run field selectors", () => {
  const client = cluster?.client as KubeClient;
  let ns: { name: string; remove(): Promise<void> };

  const bind = (name: string, pod: string) =>
    client.patch(
      path(RunResource, ns.name, name, "status"),
      {
        status: {
          phase: "Scheduled",
          attempt: 1,
          assignment: { pod, podUID: `uid-${pod}`, attempt: 1 },
        },
      },
      "merge",
    );
  const names = async (fieldSelector: string) =>
    (await client.list<Run>(path(RunResource, ns.name), { fieldSelector })).items
      .map((r) => r.metadata.name)
      .sort();

  beforeAll(async () => {
    await installCrds(client);
    ns = await testNamespace(client, "krt-fieldsel");
    for (const [name, runtime] of [
      ["a1", "alpha"],
      ["a2", "alpha"],
      ["b1", "beta"],
    ] as const) {
      await client.create(path(RunResource, ns.name), runManifest(name, runtime));
    }
    await bind("a1", "pod-x");
    await bind("b1", "pod-y");
  });

  afterAll(async () => {
    await ns?.remove();
  });

  test("status.assignment.pod selects only that pod's Runs", async () => {
    expect(await names("status.assignment.pod=pod-x")).toEqual(["a1"]);
    expect(await names("status.assignment.pod=pod-y")).toEqual(["b1"]);
    expect(await names("status.assignment.pod=pod-z")).toEqual([]);
  });

  test("spec.runtime and status.phase select too, and combine", async () => {
    expect(await names("spec.runtime=alpha")).toEqual(["a1", "a2"]);
    expect(await names("status.phase=Scheduled")).toEqual(["a1", "b1"]);
    expect(await names("spec.runtime=alpha,status.phase=Scheduled")).toEqual(["a1"]);
  });

  test("a watch with the pod selector sees its Run bound and nothing of the other pods", async () => {
    const seen: string[] = [];
    const abort = new AbortController();
    const list = await client.list<Run>(path(RunResource, ns.name), {
      fieldSelector: "status.assignment.pod=pod-x",
    });
    const done = (async () => {
      const res = await client.request<Response>("GET", path(RunResource, ns.name), {
        raw: true,
        query: {
          watch: "true",
          fieldSelector: "status.assignment.pod=pod-x",
          resourceVersion: list.metadata.resourceVersion,
        },
        signal: abort.signal,
      });
      const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
      let buf = "";
      for (;;) {
        const { value, done } = await reader.read().catch(() => ({ value: undefined, done: true }));
        if (done) return;
        buf += value;
        let nl = buf.indexOf("\n");
        while (nl >= 0) {
          const ev = JSON.parse(buf.slice(0, nl)) as { type: string; object: Run };
          seen.push(`${ev.type} ${ev.object.metadata.name}`);
          buf = buf.slice(nl + 1);
          nl = buf.indexOf("\n");
        }
      }
    })();
    // Another pod's Run changes first (to a pod of its own: a real write, so a real event), then
    // a2 is bound to pod-x. Watch events come in etcd order, so had b1's change leaked through
    // the selector it would arrive before "ADDED a2": seeing a2 is proof enough, no quiet wait.
    await bind("b1", "pod-w");
    await bind("a2", "pod-x");
    const deadline = Date.now() + 60_000;
    while (!seen.includes("ADDED a2") && Date.now() < deadline) await Bun.sleep(20);
    abort.abort();
    await done.catch(() => {});
    expect(seen).toEqual(["ADDED a2"]);
  });
});
