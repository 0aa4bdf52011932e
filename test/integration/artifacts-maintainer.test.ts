/**
 * The artifact maintainer (`runtimed maintain`) as a real process against the cluster's real
 * apiserver, on the filesystem driver (a real directory standing in for the claim — the local node
 * agent has no PVCs): downloads are served only to a token allowed to `get` the Run, with the
 * recorded digest; deleting a Run deletes every attempt's objects and removes only our finalizer.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  Annotations,
  ARTIFACTS_FINALIZER,
  artifactStoreId,
  Labels,
  type Run,
  RunResource,
  snapshotJson,
} from "@kruntimes/api";
import { type KubeClient, path } from "@kruntimes/kube";
import { installCrds } from "../../controller/testing/cluster/objects.ts";
import { FilesystemStore } from "../../runtimed/artifacts/fs-store.ts";
import { serviceAccountToken, sha256Digest } from "../support/artifacts.ts";
import { eventually, testCluster, testNamespace } from "../support/cluster.ts";

const cluster = testCluster();
const suite = cluster ? describe : describe.skip;
setDefaultTimeout(60_000);
const STORE = { filesystem: { claimName: "arts" } };

suite("artifact maintainer (filesystem store, real apiserver)", () => {
  const client = cluster?.client as KubeClient;
  let ns: { name: string; remove(): Promise<void> };
  let root = "";
  let proc: ReturnType<typeof Bun.spawn> | undefined;
  let base = "";
  let storeId = "";
  const fs = () => new FilesystemStore(root);

  async function runWithArtifact(name: string, extraFinalizers: string[] = []): Promise<Run> {
    const run = await client.create<Run>(path(RunResource, ns.name), {
      apiVersion: "kruntimes.io/v1alpha1",
      kind: "Run",
      metadata: {
        name,
        finalizers: [...extraFinalizers, ARTIFACTS_FINALIZER],
        labels: { [Labels.artifactStore]: storeId },
        annotations: { [Annotations.artifactStore]: snapshotJson(STORE) },
      },
      spec: { runtime: "none", mode: { task: {} }, source: { inline: "true" } },
    });
    const uid = run.metadata.uid as string;
    const body = `report of ${name}\n`;
    for (const attempt of [1, 2])
      await fs().put(
        `${ns.name}/${uid}/${attempt}/report.txt`,
        (async function* () {
          yield new TextEncoder().encode(body);
        })(),
      );
    await client.patch(
      path(RunResource, ns.name, name, "status"),
      {
        status: {
          artifactRefs: [
            {
              name: "report.txt",
              driver: "filesystem",
              type: "file",
              location: `${ns.name}/${uid}/2/report.txt`,
              attempt: 2,
              size: body.length,
              digest: sha256Digest(body),
              contentType: "text/plain",
            },
          ],
        },
      },
      "merge",
    );
    return run;
  }

  /** A token allowed to `get` the Runs named (default "one"; [] = every Run), or nothing at all. */
  const token = (sa: string, allowed: boolean, names = ["one"]) =>
    serviceAccountToken(client, ns.name, sa, {
      ...(allowed ? { getRuns: names } : {}),
      expirationSeconds: 600,
    });

  beforeAll(async () => {
    await installCrds(client);
    ns = await testNamespace(client, "krt-it-maintainer");
    root = mkdtempSync(join(tmpdir(), "krt-fs-claim-"));
    storeId = artifactStoreId(ns.name, STORE);
    proc = Bun.spawn(["bun", "runtimed/main.ts", "maintain"], {
      cwd: join(import.meta.dir, "../.."),
      env: {
        ...process.env,
        POD_NAMESPACE: ns.name,
        POD_IP: "127.0.0.1",
        KRT_PORT: "0",
        KRT_ARTIFACT_STORE: snapshotJson(STORE),
        KRT_ARTIFACT_STORE_ID: storeId,
        KRT_ARTIFACT_FS_ROOT: root,
        KRT_RESYNC_MS: "1000",
        KUBECONFIG: cluster?.kubeconfig,
      },
      stdout: "pipe",
      stderr: "inherit",
    });
    const reader = (proc.stdout as ReadableStream<Uint8Array>).getReader();
    let text = "";
    while (!text.includes("artifact maintainer ready")) {
      const { value, done } = await reader.read();
      if (done) throw new Error(`maintainer exited: ${text}`);
      text += new TextDecoder().decode(value);
    }
    const port = /"port":(\d+)/.exec(text)?.[1];
    base = `http://127.0.0.1:${port}`;
    // Keep draining its logs.
    void (async () => {
      while (!(await reader.read()).done) {}
    })();
  }, 60_000);

  afterAll(async () => {
    proc?.kill();
    await proc?.exited;
    await ns?.remove();
    if (root) rmSync(root, { recursive: true, force: true });
  });

  test("serves a download only to a token allowed to get that Run", async () => {
    await runWithArtifact("one");
    await runWithArtifact("two");
    const ok = await token("reader", true);
    const res = await fetch(`${base}/v1/runs/one/artifacts/report.txt`, {
      headers: { authorization: `Bearer ${ok}` },
    });
    expect(res.status).toBe(200);
    const body = await res.text();
    expect(body).toBe("report of one\n");
    expect(res.headers.get("x-kruntimes-digest")).toBe(sha256Digest(body));
    // The Role names only Run "one".
    const other = await fetch(`${base}/v1/runs/two/artifacts/report.txt`, {
      headers: { authorization: `Bearer ${ok}` },
    });
    expect(other.status).toBe(403);
    const none = await token("nobody", false);
    expect(
      (
        await fetch(`${base}/v1/runs/one/artifacts/report.txt`, {
          headers: { authorization: `Bearer ${none}` },
        })
      ).status,
    ).toBe(403);
    expect(
      (await fetch(`${base}/v1/runs/one/artifacts/missing`, { headers: { authorization: `Bearer ${ok}` } }))
        .status,
    ).toBe(404);
    expect((await fetch(`${base}/v1/runs/one/artifacts/report.txt`)).status).toBe(401);
    // A reference pointed at another Run's object is not served.
    const sneaky = await runWithArtifact("sneaky");
    const oneUid = (await client.get<Run>(path(RunResource, ns.name, "one"))).metadata.uid;
    await client.patch(
      path(RunResource, ns.name, "sneaky", "status"),
      {
        status: {
          artifactRefs: [
            { name: "x", driver: "filesystem", type: "file", location: `${ns.name}/${oneUid}/2/report.txt` },
          ],
        },
      },
      "merge",
    );
    const all = await token("all", true, []);
    const stolen = await fetch(`${base}/v1/runs/sneaky/artifacts/x`, {
      headers: { authorization: `Bearer ${all}` },
    });
    expect(stolen.status).toBe(409);
    expect(sneaky.metadata.uid).not.toBe(oneUid);
    await client.delete(path(RunResource, ns.name, "sneaky"));
  });

  test("deleting a Run deletes all its attempts' objects, then only our finalizer", async () => {
    const one = await client.get<Run>(path(RunResource, ns.name, "one"));
    await client.delete(path(RunResource, ns.name, "one"));
    await eventually(
      "run one gone",
      async () => !(await client.get(path(RunResource, ns.name, "one")).catch(() => undefined)),
    );
    expect(existsSync(join(root, ns.name, one.metadata.uid as string))).toBe(false);

    const kept = await runWithArtifact("kept", ["example.com/keep"]);
    await client.delete(path(RunResource, ns.name, "kept"));
    const after = await eventually("our finalizer removed", async () => {
      const r = await client.get<Run>(path(RunResource, ns.name, "kept"));
      return r.metadata.finalizers?.includes(ARTIFACTS_FINALIZER) ? undefined : r;
    });
    expect(after.metadata.finalizers).toEqual(["example.com/keep"]);
    expect(existsSync(join(root, ns.name, kept.metadata.uid as string))).toBe(false);
    await client.patch(path(RunResource, ns.name, "kept"), { metadata: { finalizers: null } }, "merge");
    // "two" is untouched.
    const two = await client.get<Run>(path(RunResource, ns.name, "two"));
    expect(existsSync(join(root, ns.name, two.metadata.uid as string, "2", "report.txt"))).toBe(true);
    await client.delete(path(RunResource, ns.name, "two"));
    await eventually(
      "run two gone",
      async () => !(await client.get(path(RunResource, ns.name, "two")).catch(() => undefined)),
    );
  });

  test("its /metrics counts what happened above: downloads by code class, bytes served, denials, deletions", async () => {
    const text = await (await fetch(`${base}/metrics`)).text();
    const value = (series: string) =>
      Number(new RegExp(`^${series.replace(/[{}"]/g, "\\$&")} (\\S+)$`, "m").exec(text)?.[1]);
    expect(value('kruntimes_artifact_maintainer_download_requests_total{code="2xx"}')).toBe(1);
    // 403 twice, 404, 401, 409.
    expect(value('kruntimes_artifact_maintainer_download_requests_total{code="4xx"}')).toBe(5);
    expect(value('kruntimes_artifact_maintainer_download_requests_total{code="5xx"}')).toBe(0);
    expect(value("kruntimes_artifact_maintainer_download_bytes_total")).toBe("report of one\n".length);
    expect(value('kruntimes_artifact_maintainer_authorization_denials_total{reason="forbidden"}')).toBe(2);
    expect(value('kruntimes_artifact_maintainer_authorization_denials_total{reason="unauthenticated"}')).toBe(
      1,
    );
    // sneaky, one, kept and two.
    expect(value('kruntimes_artifact_maintainer_deletions_total{result="ok"}')).toBe(4);
    expect(value("kruntimes_artifact_maintainer_deleted_objects_total")).toBeGreaterThanOrEqual(3);
  });
});
