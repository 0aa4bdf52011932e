/**
 * Artifacts end to end on the local cluster: the controller with the REAL runtimed and Runtime
 * Server, a Runtime whose artifact store is the S3-compatible test server (a real process, started
 * here with its own credentials, handed to runtimed through a Secret). A Run's files and
 * directories are stored with digests and recorded in status; `krt artifact list/download` works
 * with a token that may `get` the Run and is refused for one that may not; a tampered object is
 * caught by digest; rejected entries fail the Run; a failed Run keeps its artifacts; a store
 * outage during an upload recovers; deleting a Run deletes its objects through the maintainer;
 * deleting the Runtime leaves the maintainer only until no Run needs it.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  ARTIFACTS_FINALIZER,
  isTerminalPhase,
  Labels,
  maintainerName,
  type Run,
  RunResource,
  type Runtime,
  RuntimeResource,
} from "@kruntimes/api";
import { type KubeClient, path, R } from "@kruntimes/kube";
import YAML from "yaml";
import type { ControllerProcess } from "../../controller/testing/cluster/controller-process.ts";
import { installCrds } from "../../controller/testing/cluster/objects.ts";
import { S3Store } from "../../runtimed/artifacts/s3-store.ts";
import { type S3Server, startS3Server } from "../localcluster/s3-server.ts";
import * as art from "../support/artifacts.ts";
import { eventually, testCluster, testNamespace } from "../support/cluster.ts";

const cluster = testCluster();
const suite = cluster?.local ? describe : describe.skip;
const REPO = join(import.meta.dir, "../..");
setDefaultTimeout(90_000);

suite("artifacts (real runtimed, S3-compatible store, maintainer)", () => {
  const client = cluster?.client as KubeClient;
  let ns: { name: string; remove(): Promise<void> };
  let ctl: ControllerProcess;
  let s3: S3Server;
  let work = "";
  let n = 0;

  const get = (name: string) => client.get<Run>(path(RunResource, ns.name, name));
  const runToEnd = (inline: string, name = `a${n++}`) => art.runToEnd(client, ns.name, name, inline);
  const store = () =>
    new S3Store({
      bucket: "krt",
      prefix: "e2e",
      endpoint: s3.endpoint,
      pathStyle: true,
      region: s3.region,
      accessKeyId: s3.accessKeyId,
      secretAccessKey: s3.secretAccessKey,
    });

  /** A kubeconfig for a ServiceAccount (bearer token), optionally allowed to get Runs. */
  async function tokenKubeconfig(sa: string, allowed: boolean): Promise<string> {
    const token = await art.serviceAccountToken(client, ns.name, sa, allowed ? { getRuns: [] } : {});
    return art.tokenKubeconfig(
      cluster?.kubeconfig as string,
      ns.name,
      sa,
      token,
      join(work, `${sa}.kubeconfig`),
    );
  }
  const maintainerEndpoint = (storeId: string) => art.maintainerEndpoint(client, ns.name, storeId);
  const krt = art.krtCli;

  beforeAll(async () => {
    work = mkdtempSync(join(tmpdir(), "krt-e2e-artifacts-"));
    s3 = await startS3Server({ buckets: ["krt"] });
    await installCrds(client);
    ns = await testNamespace(client, "krt-e2e-artifacts");
    await client.create(path(R.secrets, ns.name), {
      metadata: { name: "s3-creds" },
      stringData: { AWS_ACCESS_KEY_ID: s3.accessKeyId, AWS_SECRET_ACCESS_KEY: s3.secretAccessKey },
    });
    ctl = await art.startArtifactRuntime(client, ns.name, cluster?.kubeconfig as string, {
      s3: {
        bucket: "krt",
        prefix: "e2e",
        endpoint: s3.endpoint,
        pathStyle: true,
        region: s3.region,
        credentialsSecretRef: { name: "s3-creds" },
      },
    });
  }, 180_000);

  afterAll(async () => {
    // Runs hold the finalizer until the maintainer deletes their artifacts; release leftovers.
    if (ns) await art.releaseRuns(client, ns.name);
    ctl?.kill();
    await ctl?.exited;
    await ns?.remove();
    await s3?.close();
    if (work) rmSync(work, { recursive: true, force: true });
  });

  test("the Runtime in docs/concepts/artifacts.md is valid as written", async () => {
    const doc = readFileSync(join(REPO, "docs/concepts/artifacts.md"), "utf8");
    const yaml = /```yaml\n(apiVersion: kruntimes.io\/v1alpha1\nkind: Runtime[\s\S]*?)```/.exec(
      doc,
    )?.[1] as string;
    const rt = YAML.parse(yaml) as Runtime;
    rt.metadata.name = "docs-example"; // the suite's own Runtime is called bash
    const created = await client.request<Runtime>("POST", path(RuntimeResource, ns.name), {
      body: rt,
      query: { dryRun: "All" },
    });
    expect(created.spec.artifactStore?.s3?.credentialsSecretRef?.name).toBe("s3-creds");
    expect(created.spec.artifactStore?.maxArtifactBytes).toBe(1073741824);
  });

  let stored: Run;
  test("a Run's file and directory are stored with size and digest; the Run gets the finalizer and a snapshot", async () => {
    const r = await runToEnd(
      'printf "hello artifacts\\n" > "$KRUNTIME_ARTIFACTS_DIR/report.txt"; mkdir -p "$KRUNTIME_ARTIFACTS_DIR/out/sub"; echo one > "$KRUNTIME_ARTIFACTS_DIR/out/sub/one.txt"',
      "stored",
    );
    expect(r.status?.phase).toBe("Succeeded");
    const refs = r.status?.artifactRefs ?? [];
    expect(refs.map((x) => [x.name, x.type, x.driver, x.attempt])).toEqual([
      ["out", "archive", "s3", 1],
      ["report.txt", "file", "s3", 1],
    ]);
    const report = refs[1]!;
    expect(report.size).toBe(16);
    expect(report.digest).toBe(art.sha256Digest("hello artifacts\n"));
    expect(report.location).toBe(`s3://krt/e2e/${ns.name}/${r.metadata.uid}/1/report.txt`);
    expect(r.metadata.finalizers).toContain(ARTIFACTS_FINALIZER);
    expect(r.metadata.labels?.[Labels.artifactStore]).toMatch(/^[0-9a-f]{12}$/);
    expect(JSON.parse(r.metadata.annotations?.["kruntimes.io/artifact-store"] ?? "{}").s3.bucket).toBe("krt");
    const obj = await store().get(`${ns.name}/${r.metadata.uid}/1/report.txt`);
    expect(await new Response(obj?.body).text()).toBe("hello artifacts\n");
    stored = r;
  });

  test("a Run without artifacts gets no finalizer, label or extra write", async () => {
    const r = await runToEnd("echo nothing to keep");
    expect(r.status?.phase).toBe("Succeeded");
    expect(r.status?.artifactRefs).toBeUndefined();
    expect(r.metadata.finalizers ?? []).not.toContain(ARTIFACTS_FINALIZER);
    expect(r.metadata.labels?.[Labels.artifactStore]).toBeUndefined();
  });

  test("krt artifact list and download with a token allowed to get the Run; refused without that permission", async () => {
    const storeId = stored.metadata.labels?.[Labels.artifactStore] as string;
    const endpoint = await maintainerEndpoint(storeId);
    const reader = await tokenKubeconfig("reader", true);
    const stranger = await tokenKubeconfig("stranger", false);
    const list = krt(reader, "artifact", "list", "stored");
    expect(list.code).toBe(0);
    expect(list.out).toContain("report.txt");
    expect(list.out).toContain("archive");
    const dest = join(work, "report.txt");
    const dl = krt(
      reader,
      "artifact",
      "download",
      "stored",
      "report.txt",
      "-o",
      dest,
      "--endpoint",
      endpoint,
    );
    expect(dl.err).toContain("verified");
    expect(dl.code).toBe(0);
    expect(readFileSync(dest, "utf8")).toBe("hello artifacts\n");
    const tgz = join(work, "out.tar.gz");
    expect(krt(reader, "artifact", "download", "stored", "out", "-o", tgz, "--endpoint", endpoint).code).toBe(
      0,
    );
    const tar = Bun.spawnSync(["tar", "-xzOf", tgz, "sub/one.txt"]);
    expect(tar.stdout.toString()).toBe("one\n");
    const denied = krt(
      stranger,
      "artifact",
      "download",
      "stored",
      "report.txt",
      "-o",
      join(work, "no"),
      "--endpoint",
      endpoint,
    );
    expect(denied.code).toBe(77);
    expect(denied.err).toContain("forbidden");
    // The maintainer refuses on its own too (it does not trust the client to have checked).
    const url = `${endpoint}/v1/runs/stored/artifacts/report.txt`;
    const strangerToken = YAML.parse(readFileSync(stranger, "utf8")).users[0].user.token;
    const direct = await fetch(url, { headers: { authorization: `Bearer ${strangerToken}` } });
    expect(direct.status).toBe(403);
    expect(((await direct.json()) as { error: string }).error).toContain("may not get runs/stored");
    expect((await fetch(url)).status).toBe(401);
    expect((await fetch(url, { headers: { authorization: "Bearer not-a-token" } })).status).toBe(401);
    expect(existsSync(join(work, "no"))).toBe(false);
    // The maintainer is its own Deployment, not part of the Runtime.
    const d = await client.get<{ metadata: { ownerReferences?: unknown[] } }>(
      path(R.deployments, ns.name, maintainerName(storeId)),
    );
    expect(d.metadata.ownerReferences ?? []).toEqual([]);
  });

  test("a tampered object fails digest verification and nothing is written", async () => {
    const r = await runToEnd('echo original > "$KRUNTIME_ARTIFACTS_DIR/data.txt"', "tampered");
    await store().put(
      `${ns.name}/${r.metadata.uid}/1/data.txt`,
      (async function* () {
        yield new TextEncoder().encode("changed!\n");
      })(),
      "text/plain",
    );
    const endpoint = await maintainerEndpoint(r.metadata.labels?.[Labels.artifactStore] as string);
    const dest = join(work, "data.txt");
    const res = krt(
      join(work, "reader.kubeconfig"),
      "artifact",
      "download",
      "tampered",
      "data.txt",
      "-o",
      dest,
      "--endpoint",
      endpoint,
    );
    expect(res.code).toBe(65);
    expect(res.err).toContain("failed verification");
    expect(existsSync(dest)).toBe(false);
    expect(existsSync(`${dest}.partial`)).toBe(false);
  });

  test("symlinks and oversize files fail the Run with ArtifactsRejected; a failed Run keeps its artifacts", async () => {
    const sym = await runToEnd(
      'ln -s /etc/passwd "$KRUNTIME_ARTIFACTS_DIR/passwd"; echo ok > "$KRUNTIME_ARTIFACTS_DIR/fine.txt"',
    );
    expect(sym.status?.phase).toBe("Failed");
    expect(sym.status?.reason).toBe("ArtifactsRejected");
    expect(sym.status?.message).toContain("passwd is a symlink");
    expect(sym.status?.exitCode).toBe(0);
    expect(sym.status?.artifactRefs).toBeUndefined();
    const big = await runToEnd('head -c 2000000 /dev/zero > "$KRUNTIME_ARTIFACTS_DIR/big.bin"');
    expect(big.status?.reason).toBe("ArtifactsRejected");
    expect(big.status?.message).toContain("maxArtifactBytes 1048576");
    const failed = await runToEnd('echo partial > "$KRUNTIME_ARTIFACTS_DIR/partial.log"; exit 3');
    expect(failed.status?.phase).toBe("Failed");
    expect(failed.status?.reason).toBe("NonZeroExit");
    expect(failed.status?.exitCode).toBe(3);
    expect(failed.status?.artifactRefs?.map((x) => x.name)).toEqual(["partial.log"]);
  });

  test("a store outage during the upload is retried; the Run succeeds with its artifact after recovery", async () => {
    await s3.stop();
    const name = "outage";
    await client.create<Run>(path(RunResource, ns.name), {
      apiVersion: "kruntimes.io/v1alpha1",
      kind: "Run",
      metadata: { name },
      spec: {
        runtime: "bash",
        mode: { task: {} },
        source: { inline: 'echo survived > "$KRUNTIME_ARTIFACTS_DIR/after.txt"; echo result' },
      },
    });
    const marked = await eventually("the outage Run is marked for artifacts", async () => {
      const x = await get(name);
      return x.metadata.finalizers?.includes(ARTIFACTS_FINALIZER) ? x : undefined;
    });
    // runtimed is uploading into the outage: its log shows this Run's upload failing and retried.
    await eventually(
      "runtimed retrying the outage Run's upload",
      async () =>
        (await art.runtimedLog(client, ns.name, marked.status?.assignment?.pod as string))
          .split("\n")
          .some((l) => l.includes("artifact store failed; retrying") && l.includes(`"run":"${name}"`)),
      60_000,
    );
    // Another Run on the same pod is not held up by the stuck upload: it finishes while the
    // outage Run is still unfinished (its upload cannot end before the store is back, and
    // runtimed's retry budget is minutes), so it did not wait behind it.
    const other = await runToEnd("echo not waiting");
    expect(other.status?.phase).toBe("Succeeded");
    expect(other.status?.assignment?.pod).toBe(marked.status?.assignment?.pod as string);
    expect(isTerminalPhase((await get(name)).status?.phase)).toBe(false);
    await s3.start();
    const r = await eventually(
      `${name} finished`,
      async () => {
        const x = await get(name);
        return isTerminalPhase(x.status?.phase) ? x : undefined;
      },
      60_000,
    );
    expect(r.status?.phase).toBe("Succeeded");
    expect(r.status?.stdoutTail).toBe("result\n");
    expect(r.status?.artifactRefs?.[0]?.digest).toBe(art.sha256Digest("survived\n"));
    const obj = await store().get(`${ns.name}/${r.metadata.uid}/1/after.txt`);
    expect(await new Response(obj?.body).text()).toBe("survived\n");
  });

  test("deleting a Run deletes its artifacts; deleting the Runtime leaves the maintainer only until no Run needs it", async () => {
    const storeId = stored.metadata.labels?.[Labels.artifactStore] as string;
    const key = `${ns.name}/${stored.metadata.uid}/1/report.txt`;
    expect(await store().get(key)).toBeDefined();
    await client.delete(path(RunResource, ns.name, "stored"));
    await eventually("the Run is gone", async () => !(await get("stored").catch(() => undefined)), 30_000);
    expect(await store().get(key)).toBeUndefined();
    expect(await store().get(`${ns.name}/${stored.metadata.uid}/1/out.tar.gz`)).toBeUndefined();

    // Runs with artifacts remain: the maintainer stays for them, after the Runtime is gone.
    await art.deleteRuntimeKeepingMaintainer(client, ns.name, "bash", storeId);
    const runs = await client.list<Run>(path(RunResource, ns.name));
    for (const r of runs.items) await client.delete(path(RunResource, ns.name, r.metadata.name));
    await eventually(
      "every Run is gone",
      async () => (await client.list<Run>(path(RunResource, ns.name))).items.length === 0,
      60_000,
    );
    await art.maintainerRemoved(client, ns.name, storeId);
    const left = await store().deletePrefix(`${ns.name}/`);
    expect(left).toBe(0);
  });
});
