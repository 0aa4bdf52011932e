/**
 * What the Run-path artifact benches (run-latency.ts, input-staging.ts) share: the flags, the local
 * cluster with the real runtimed and the S3 test server, a bash Runtime, one Run to its end, the
 * clean-up and the report. One copy, so both measure on the same set-up.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { type Run, RunResource, type Runtime } from "@kruntimes/api";
import { path, R } from "@kruntimes/kube";
import { startController } from "../../controller/testing/cluster/controller-process.ts";
import { installCrds } from "../../controller/testing/cluster/objects.ts";
import { startS3Server } from "../../test/localcluster/s3-server.ts";
import { eventually, testCluster, testNamespace } from "../../test/support/cluster.ts";
import { imageRuntime } from "../../test/support/runtimes.ts";
import { machineInfo } from "../hotpath/machine.ts";

type ArtifactStore = NonNullable<Runtime["spec"]["artifactStore"]>;

/** Parses `--runs` (default `defaultRuns`) and `--record`, then sets up namespace `prefix-…`. */
export async function startArtifactBench(prefix: string, defaultRuns: string) {
  const { values: a } = parseArgs({
    options: { runs: { type: "string", default: defaultRuns }, record: { type: "string" } },
  });
  const N = Number(a.runs);
  const cluster = testCluster();
  if (!cluster?.local) {
    console.error(
      "needs the local cluster: set KUBECONFIG and KRT_CLUSTER_DIR (see docs/local-cluster-node-agent.md)",
    );
    process.exit(2);
  }
  const client = cluster.client;
  const s3 = await startS3Server({ buckets: ["bench"] });
  await installCrds(client);
  const ns = await testNamespace(client, prefix);
  await client.create(path(R.secrets, ns.name), {
    metadata: { name: "s3" },
    stringData: { AWS_ACCESS_KEY_ID: s3.accessKeyId, AWS_SECRET_ACCESS_KEY: s3.secretAccessKey },
  });
  const ctl = startController({ namespace: ns.name, kubeconfig: cluster.kubeconfig, runtimed: "real" });

  /** The S3 test server as a Runtime's `artifactStore.s3`, credentials from the Secret above. */
  const s3Store: ArtifactStore["s3"] = {
    bucket: "bench",
    endpoint: s3.endpoint,
    pathStyle: true,
    region: s3.region,
    credentialsSecretRef: { name: "s3" },
  };

  /** Creates Run `name` and returns it once its terminal status is written; it must have succeeded. */
  async function runToEnd(name: string, spec: Run["spec"], timeoutMs?: number): Promise<Run> {
    await client.create<Run>(path(RunResource, ns.name), {
      apiVersion: "kruntimes.io/v1alpha1",
      kind: "Run",
      metadata: { name, annotations: { "kruntimes.io/created-micros": String(Date.now() * 1000) } },
      spec,
    });
    const r = await eventually(
      `${name} done`,
      async () => {
        const x = await client.get<Run>(path(RunResource, ns.name, name));
        return x.status?.timing?.reportedMicros ? x : undefined;
      },
      timeoutMs,
    );
    if (r.status?.phase !== "Succeeded") throw new Error(`${name}: ${r.status?.phase} ${r.status?.message}`);
    return r;
  }

  /** Deletes the Runs and waits until they are gone, then stops the controller, the namespace, S3. */
  async function teardown(): Promise<void> {
    const runs = await client.list<Run>(path(RunResource, ns.name));
    for (const r of runs.items)
      await client.delete(path(RunResource, ns.name, r.metadata.name)).catch(() => {});
    await eventually(
      "runs cleaned",
      async () => (await client.list<Run>(path(RunResource, ns.name))).items.length === 0,
      60_000,
    ).catch(() => {});
    ctl.kill();
    await ctl.exited;
    await ns.remove();
    await s3.close();
  }

  /** Prints the Markdown; with `--record DIR` also writes DIR/<stem>-<date>.md and .json. */
  function report(stem: string, md: string, rows: unknown, raw: unknown): void {
    console.log(md);
    if (!a.record) return;
    const base = join(a.record, `${stem}-${new Date().toISOString().slice(0, 10)}`);
    writeFileSync(`${base}.md`, md);
    writeFileSync(`${base}.json`, JSON.stringify({ runs: N, machine: machineInfo(), rows, raw }, null, 2));
  }

  return { N, client, ns, ctl, s3Store, runToEnd, teardown, report };
}

/** A one-pod bash Runtime (room for 8 Runs), with `artifactStore` when given. */
export const bashRuntime = (name: string, artifactStore?: ArtifactStore): Runtime =>
  imageRuntime(name, "ghcr.io/kruntimes/bash", { replicas: 1, ...(artifactStore ? { artifactStore } : {}) });

/** The `p` quantile of `xs` (nearest rank, no interpolation). */
export const quantile = (xs: number[], p: number) =>
  [...xs].sort((x, y) => x - y)[Math.min(xs.length - 1, Math.floor(p * xs.length))] as number;
