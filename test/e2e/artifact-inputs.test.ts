/**
 * Run.spec.artifactInputs end to end on the local cluster: the controller with the REAL runtimed
 * and Runtime Server, a Runtime whose artifact store is the S3-compatible test server. Run A stores
 * a file and a directory; Runs after it get them staged into their working directory before their
 * task starts — at the artifact's name or at `path`, the directory unpacked, writable — also into
 * a PersistentWorkspace's directory, where the next Run in the workspace still finds them. A
 * missing artifact or Run ends Failed/ArtifactInputUnavailable with a message naming it; a store
 * outage while staging is retried; a ~10 MiB input arrives intact (its sha256 checked by the
 * task); the Run in docs/concepts/artifacts.md and `krt run --artifact-input`'s example run as
 * written. Who may create such a Run (the
 * chart's admission policy) is test/e2e/chart-artifact-inputs-policy.test.ts. The staging time runtimed logs is printed for the record.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import {
  type ArtifactInput,
  isTerminalPhase,
  type PersistentWorkspace,
  type Run,
  RunResource,
  type RunSpec,
  RuntimeResource,
  WorkspaceResource,
} from "@kruntimes/api";
import { type KubeClient, path, R } from "@kruntimes/kube";
import YAML from "yaml";
import type { ControllerProcess } from "../../controller/testing/cluster/controller-process.ts";
import { createRuntime, installCrds, readyPods } from "../../controller/testing/cluster/objects.ts";
import { RunCommand } from "../../krt/commands/run.ts";
import { type S3Server, startS3Server } from "../localcluster/s3-server.ts";
import * as art from "../support/artifacts.ts";
import { eventually, testCluster, testNamespace } from "../support/cluster.ts";
import { imageRuntime } from "../support/runtimes.ts";

const cluster = testCluster();
const suite = cluster?.local ? describe : describe.skip;
const REPO = join(import.meta.dir, "../..");
setDefaultTimeout(90_000);

suite("artifact inputs (real runtimed, S3-compatible store)", () => {
  const client = cluster?.client as KubeClient;
  let ns: { name: string; remove(): Promise<void> };
  let ctl: ControllerProcess;
  let s3: S3Server;
  let pod = "";

  const get = (name: string) => client.get<Run>(path(RunResource, ns.name, name));
  async function run(name: string, inline: string, spec: Partial<RunSpec> = {}): Promise<Run> {
    await client.create<Run>(path(RunResource, ns.name), {
      apiVersion: "kruntimes.io/v1alpha1",
      kind: "Run",
      metadata: { name },
      spec: { runtime: "bash", mode: { task: {} }, source: { inline }, ...spec },
    });
    return eventually(
      `${name} finished`,
      async () => {
        const r = await get(name);
        return isTerminalPhase(r.status?.phase) ? r : undefined;
      },
      60_000,
    );
  }
  const inputs = (...artifactInputs: ArtifactInput[]): Partial<RunSpec> => ({ artifactInputs });
  /** runtimed's "artifact inputs staged" record for Run `name`. */
  async function staged(
    name: string,
  ): Promise<{ artifacts: number; bytes: number; ms: number; apiMs: number }> {
    const line = (await art.runtimedLog(client, ns.name, pod))
      .split("\n")
      .find((l) => l.includes('"artifact inputs staged"') && l.includes(`"run":"${name}"`));
    if (!line) throw new Error(`no "artifact inputs staged" record for ${name}`);
    return JSON.parse(line);
  }

  beforeAll(async () => {
    s3 = await startS3Server({ buckets: ["krt"] });
    await installCrds(client);
    ns = await testNamespace(client, "krt-e2e-inputs");
    await client.create(path(R.secrets, ns.name), {
      metadata: { name: "s3-creds" },
      stringData: { AWS_ACCESS_KEY_ID: s3.accessKeyId, AWS_SECRET_ACCESS_KEY: s3.secretAccessKey },
    });
    ctl = await art.startArtifactRuntime(
      client,
      ns.name,
      cluster?.kubeconfig as string,
      {
        s3: {
          bucket: "krt",
          prefix: "e2e",
          endpoint: s3.endpoint,
          pathStyle: true,
          region: s3.region,
          credentialsSecretRef: { name: "s3-creds" },
        },
      },
      16 * 1024 * 1024,
    );
    const pods = await client.list<{ metadata: { name: string } }>(path(R.pods, ns.name));
    pod = pods.items[0]?.metadata.name as string;
  }, 180_000);

  afterAll(async () => {
    if (ns) {
      await client.delete(path(WorkspaceResource, ns.name)).catch(() => {});
      await art.releaseRuns(client, ns.name);
    }
    ctl?.kill();
    await ctl?.exited;
    await ns?.remove();
    await s3?.close();
  });

  let producer: Run;

  test("Run build stores a file and a directory", async () => {
    producer = await run(
      "build",
      [
        'd="$KRUNTIME_ARTIFACTS_DIR"',
        'printf "hello inputs\\n" > "$d/report.txt"',
        'mkdir -p "$d/site/css"',
        'printf "<p>hi</p>\\n" > "$d/site/index.html"',
        'printf "p{}\\n" > "$d/site/css/a.css"',
        'printf "#!/bin/sh\\necho tool ran\\n" > "$d/site/tool.sh" && chmod +x "$d/site/tool.sh"',
      ].join("\n"),
    );
    expect(producer.status?.phase).toBe("Succeeded");
    expect(producer.status?.artifactRefs?.map((r) => `${r.name}:${r.type}`).sort()).toEqual([
      "report.txt:file",
      "site:archive",
    ]);
  });

  test("Run b gets both before its task starts: the file at its name, the directory unpacked at path, writable", async () => {
    const b = await run(
      "b",
      [
        "set -e",
        "cat report.txt",
        "cat in/web/index.html in/web/css/a.css",
        "in/web/tool.sh",
        "cat copy/report.txt",
        // What was staged belongs to the task now: it may change and remove it.
        "echo more >> report.txt && rm -r in/web/css && echo writable",
      ].join("\n"),
      inputs(
        { run: "build", name: "report.txt" },
        { run: "build", name: "site", path: "in/web" },
        { run: "build", name: "report.txt", path: "copy/report.txt" },
      ),
    );
    expect(b.status?.reason).toBe("Completed");
    expect(b.status?.stdoutTail).toBe("hello inputs\n<p>hi</p>\np{}\ntool ran\nhello inputs\nwritable\n");
    const s = await staged("b");
    expect(s.artifacts).toBe(3);
    const refs = producer.status?.artifactRefs ?? [];
    const report = refs.find((r) => r.name === "report.txt")?.size ?? 0;
    const site = refs.find((r) => r.name === "site")?.size ?? 0;
    expect(s.bytes).toBe(2 * report + site);
    console.log(`staging 3 small inputs (${s.bytes} bytes): ${s.ms} ms (reading Run build: ${s.apiMs} ms)`);
  });

  test("the Run in docs/concepts/artifacts.md runs as written", async () => {
    const doc = readFileSync(join(REPO, "docs/concepts/artifacts.md"), "utf8");
    const section = doc.slice(doc.indexOf("## Passing artifacts to another Run"));
    const yaml = /```yaml\n(apiVersion: kruntimes.io\/v1alpha1\nkind: Run\n[\s\S]*?)```/.exec(section)?.[1];
    const manifest = YAML.parse(yaml as string) as Run;
    await client.create<Run>(path(RunResource, ns.name), manifest);
    const r = await eventually(
      "publish finished",
      async () => {
        const x = await get(manifest.metadata.name as string);
        return isTerminalPhase(x.status?.phase) ? x : undefined;
      },
      60_000,
    );
    expect(r.status?.reason).toBe("Completed");
    expect(r.status?.stdoutTail).toBe("hello inputs\ncss\nindex.html\ntool.sh\n");
  });

  test("krt run --artifact-input: the CLI reference's example as written", () => {
    const example = RunCommand.usage?.examples?.find(([what]) => what.includes("artifacts staged"))?.[1];
    expect(example).toStartWith("krt run ");
    const p = Bun.spawnSync(
      ["sh", "-c", `bun krt/main.ts run -n ${ns.name} ${example?.slice("krt run ".length)}`],
      {
        cwd: REPO,
        env: { ...process.env, KUBECONFIG: cluster?.kubeconfig as string },
      },
    );
    expect(p.stderr.toString()).toContain("Succeeded");
    expect(p.stdout.toString()).toBe("hello inputs\ncss\nindex.html\ntool.sh\n");
    expect(p.exitCode).toBe(0);
  });

  test("into a PersistentWorkspace: staged into its directory, and the next Run there still finds it", async () => {
    await client.create<PersistentWorkspace>(path(WorkspaceResource, ns.name), {
      apiVersion: "kruntimes.io/v1alpha1",
      kind: "PersistentWorkspace",
      metadata: { name: "job" },
      spec: { runtime: "bash" },
    });
    const first = await run("ws1", "cat stage/site/index.html && pwd", {
      workspace: { name: "job" },
      ...inputs({ run: "build", name: "site", path: "stage/site" }),
    });
    expect(first.status?.reason).toBe("Completed");
    expect(first.status?.stdoutTail).toContain("<p>hi</p>\n");
    expect(first.status?.stdoutTail).toContain("/workspace/runs/workspaces/job-");
    const second = await run("ws2", "cat stage/site/css/a.css", { workspace: { name: "job" } });
    expect(second.status?.stdoutTail).toBe("p{}\n");
    // Staged again (a later step): replaced whole, not merged into what the last copy left.
    const third = await run("ws3", "ls stage/site | tr '\\n' ' '", {
      workspace: { name: "job" },
      ...inputs({ run: "build", name: "report.txt", path: "stage/site" }),
    });
    expect(third.status?.stdoutTail).toBe("stage/site ");
  });

  test("a missing artifact or Run: Failed/ArtifactInputUnavailable, naming it, and the task never ran", async () => {
    const noArtifact = await run(
      "missing-artifact",
      "echo should-not-run",
      inputs({ run: "build", name: "nope" }),
    );
    expect(noArtifact.status?.phase).toBe("Failed");
    expect(noArtifact.status?.reason).toBe("ArtifactInputUnavailable");
    expect(noArtifact.status?.message).toBe(
      "run build has no artifact nope (it has report.txt, site); check the artifact's name (the entry's name in that Run's $KRUNTIME_ARTIFACTS_DIR)",
    );
    expect(noArtifact.status?.stdoutTail ?? "").toBe("");
    const noRun = await run("missing-run", "echo should-not-run", inputs({ run: "ghost", name: "x" }));
    expect(noRun.status?.reason).toBe("ArtifactInputUnavailable");
    expect(noRun.status?.message).toContain(
      `run ghost (named in spec.artifactInputs) does not exist in namespace ${ns.name}`,
    );
  });

  test("a Runtime without an artifact store: Failed/ArtifactInputUnavailable, saying so", async () => {
    await createRuntime(client, ns.name, imageRuntime("plain", "ghcr.io/kruntimes/bash", { replicas: 1 }));
    await eventually(
      "plain pod ready",
      async () => (await readyPods(client, ns.name, "plain")).length === 1,
      120_000,
    );
    const r = await run("no-store", "echo should-not-run", {
      runtime: "plain",
      ...inputs({ run: "build", name: "report.txt" }),
    });
    expect(r.status?.reason).toBe("ArtifactInputUnavailable");
    expect(r.status?.message).toBe(
      "spec.artifactInputs needs a Runtime with spec.artifactStore (the store the artifacts are in); Runtime plain has none",
    );
    await client.delete(path(RuntimeResource, ns.name, "plain"));
  });

  test("retryOn may list it: each attempt stages again, then RetriesExhausted names it", async () => {
    const r = await run("retried", "true", {
      ...inputs({ run: "build", name: "nope" }),
      retryPolicy: { maxAttempts: 2, backoff: { initial: "100ms" }, retryOn: ["ArtifactInputUnavailable"] },
    });
    expect(r.status?.attempt).toBe(2);
    expect(r.status?.reason).toBe("RetriesExhausted");
    expect(r.status?.message).toContain("ArtifactInputUnavailable");
  });

  test("the store down while staging: retried until it is back, then the task runs", async () => {
    await s3.stop();
    const name = "outage";
    await client.create<Run>(path(RunResource, ns.name), {
      apiVersion: "kruntimes.io/v1alpha1",
      kind: "Run",
      metadata: { name },
      spec: {
        runtime: "bash",
        mode: { task: {} },
        source: { inline: "cat report.txt" },
        artifactInputs: [{ run: "build", name: "report.txt" }],
      },
    });
    try {
      await eventually(
        "runtimed retrying the fetch",
        async () =>
          (await art.runtimedLog(client, ns.name, pod))
            .split("\n")
            .some(
              (l) => l.includes(`"run":"${name}"`) && l.includes("artifact input fetch failed; retrying"),
            ),
        30_000,
      );
      expect((await get(name)).status?.phase).toBe("Scheduled");
    } finally {
      await s3.start();
    }
    const r = await eventually(
      `${name} finished`,
      async () => {
        const x = await get(name);
        return isTerminalPhase(x.status?.phase) ? x : undefined;
      },
      60_000,
    );
    expect(r.status?.reason).toBe("Completed");
    expect(r.status?.stdoutTail).toBe("hello inputs\n");
  });

  test("cancelled while staging (the store down): Cancelled at once, the task never ran", async () => {
    await s3.stop();
    const name = "cancel-staging";
    try {
      await client.create<Run>(path(RunResource, ns.name), {
        apiVersion: "kruntimes.io/v1alpha1",
        kind: "Run",
        metadata: { name },
        spec: {
          runtime: "bash",
          mode: { task: {} },
          source: { inline: "echo should-not-run" },
          artifactInputs: [{ run: "build", name: "report.txt" }],
        },
      });
      await eventually(
        "runtimed retrying the fetch",
        async () =>
          (await art.runtimedLog(client, ns.name, pod))
            .split("\n")
            .some(
              (l) => l.includes(`"run":"${name}"`) && l.includes("artifact input fetch failed; retrying"),
            ),
        30_000,
      );
      await client.patch(
        path(RunResource, ns.name, name),
        { spec: { termination: { mode: "Immediate" } } },
        "merge",
      );
      const r = await eventually(
        `${name} finished`,
        async () => {
          const x = await get(name);
          return isTerminalPhase(x.status?.phase) ? x : undefined;
        },
        20_000,
      );
      expect(r.status?.phase).toBe("Cancelled");
      expect(r.status?.message).toBe("cancelled while attempt 1's artifact inputs were staged");
      expect(r.status?.stdoutTail ?? "").toBe("");
    } finally {
      await s3.start();
    }
  });

  test("a ~10 MiB input arrives intact", async () => {
    const big = await run("big", 'head -c 10485760 /dev/urandom > "$KRUNTIME_ARTIFACTS_DIR/big.bin"');
    const ref = big.status?.artifactRefs?.[0];
    expect(ref?.size).toBe(10 * 1024 * 1024);
    const use = await run(
      "use-big",
      "sha256sum big.bin | cut -d' ' -f1",
      inputs({ run: "big", name: "big.bin" }),
    );
    expect(`sha256:${use.status?.stdoutTail?.trim()}`).toBe(ref?.digest as string);
    const s = await staged("use-big");
    expect(s.bytes).toBe(10 * 1024 * 1024);
    console.log(`staging a 10 MiB input: ${s.ms} ms (reading the Run: ${s.apiMs} ms)`);
    // A small one again, with everything warm, for comparison.
    await run("use-small", "cat report.txt", inputs({ run: "build", name: "report.txt" }));
    const small = await staged("use-small");
    console.log(`staging one small input (warm): ${small.ms} ms (reading the Run: ${small.apiMs} ms)`);
  });
});
