/**
 * WorkflowRuns on the local cluster: the controller as a process with the REAL runtimed and
 * Runtime Server, the Runtime storing artifacts in the local S3 server. Data through the job
 * workspace, outputs and artifacts between jobs, a reusable Workflow
 * called twice with different inputs, an Action used in two jobs, failure → Skipped, cancellation
 * mid-run, invalid graphs refused before any child exists, and the controller SIGKILLed between
 * creating a child and writing the status (no duplicate child, correct final status).
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import {
  ActionResource,
  type Run,
  RunResource,
  type Runtime,
  WorkflowResource,
  type WorkflowRun,
  WorkflowRunResource,
  type WorkflowRunSpec,
} from "@kruntimes/api";
import { type KubeClient, path, R } from "@kruntimes/kube";
import {
  type ControllerProcess,
  startController,
} from "../../controller/testing/cluster/controller-process.ts";
import { createRuntime, getRuntime, installCrds } from "../../controller/testing/cluster/objects.ts";
import { type S3Server, startS3Server } from "../localcluster/s3-server.ts";
import { eventually, testCluster, testNamespace } from "../support/cluster.ts";

const cluster = testCluster();
const suite = cluster?.local ? describe : describe.skip;

setDefaultTimeout(90_000);

suite("WorkflowRuns (controller + real runtimed)", () => {
  const client = cluster?.client as KubeClient;
  let ns: { name: string; remove(): Promise<void> };
  let ctl: ControllerProcess;
  let s3: S3Server;

  const wfPath = (name?: string) => path(WorkflowRunResource, ns.name, name);
  async function createWfRun(name: string, spec: Partial<WorkflowRunSpec>): Promise<WorkflowRun> {
    return client.create<WorkflowRun>(wfPath(), {
      apiVersion: "kruntimes.io/v1alpha1",
      kind: "WorkflowRun",
      metadata: { name },
      spec: { runtime: "bash", ...spec } as WorkflowRunSpec,
    });
  }
  const until = (name: string, what: string, ok: (w: WorkflowRun) => boolean, ms = 60_000) =>
    eventually(
      `WorkflowRun ${name} ${what}`,
      async () => {
        const w = await client.get<WorkflowRun>(wfPath(name));
        return ok(w) ? w : undefined;
      },
      ms,
    );
  const ended = (name: string, ms = 60_000) =>
    until(name, "ended", (w) => ["Succeeded", "Failed", "Cancelled"].includes(w.status?.phase ?? ""), ms);
  const childRuns = async (wf: string) =>
    (
      await client.list<Run>(path(RunResource, ns.name), {
        labelSelector: `kruntimes.io/workflowrun=${wf}`,
      })
    ).items;

  beforeAll(async () => {
    s3 = await startS3Server({ buckets: ["krt"] });
    await installCrds(client);
    ns = await testNamespace(client, "krt-workflows");
    await client.create(path(R.secrets, ns.name), {
      metadata: { name: "s3-creds" },
      stringData: { AWS_ACCESS_KEY_ID: s3.accessKeyId, AWS_SECRET_ACCESS_KEY: s3.secretAccessKey },
    });
    ctl = startController({
      namespace: ns.name,
      kubeconfig: cluster?.kubeconfig as string,
      runtimed: "real",
    });
    await ctl.waitFor("scheduling and reconciling");
    await createRuntime(client, ns.name, {
      apiVersion: "kruntimes.io/v1alpha1",
      kind: "Runtime",
      metadata: { name: "bash" },
      spec: {
        replicas: 2,
        capacity: { runs: 8 },
        artifactStore: {
          s3: {
            bucket: "krt",
            prefix: "workflows",
            endpoint: s3.endpoint,
            pathStyle: true,
            region: s3.region,
            credentialsSecretRef: { name: "s3-creds" },
          },
        },
        template: {
          spec: {
            terminationGracePeriodSeconds: 2,
            containers: [{ name: "runtime", image: "ghcr.io/kruntimes/bash" }],
          },
        },
      },
    } as Runtime);
    await eventually(
      "Runtime bash: 2 pods available",
      async () => (await getRuntime(client, ns.name, "bash")).status?.availableReplicas === 2,
      120_000,
    );
  }, 180_000);

  afterAll(async () => {
    ctl?.kill();
    await ctl?.exited;
    await ns?.remove();
    await s3?.close();
  }, 90_000);

  test("jobs share data through the job workspace and outputs flow downstream", async () => {
    await createWfRun("pipeline", {
      inputs: { greeting: "hello" },
      jobs: {
        build: {
          steps: [
            { name: "write", run: 'echo "${{ inputs.greeting }} from $KRUNTIME_WORKFLOW_JOB" > msg.txt' },
            {
              name: "read",
              run: 'echo "digest=$(sha256sum msg.txt | cut -c1-12)" >> "$KRUNTIME_OUTPUTS"; echo "text=$(cat msg.txt)" >> "$KRUNTIME_OUTPUTS"',
              outputs: ["digest", "text"],
            },
          ],
          outputs: { digest: "${{ steps.read.outputs.digest }}", text: "${{ steps.read.outputs.text }}" },
        },
        test: {
          needs: ["build"],
          env: [{ name: "D", value: "${{ jobs.build.outputs.digest }}" }],
          steps: [
            {
              name: "check",
              run: 'test -n "$D" && echo "seen=$D" >> "$KRUNTIME_OUTPUTS"',
              outputs: ["seen"],
            },
          ],
          outputs: { seen: "${{ steps.check.outputs.seen }}" },
        },
      },
      outputs: { text: "${{ jobs.build.outputs.text }}", seen: "${{ jobs.test.outputs.seen }}" },
    });
    const w = await ended("pipeline");
    expect(w.status?.phase).toBe("Succeeded");
    expect(w.status?.outputs?.text).toBe("hello from build");
    expect(w.status?.outputs?.seen).toBe(w.status?.jobs?.build?.outputs?.digest);
    const build = w.status?.jobs?.build;
    expect(build?.steps?.map((s) => [s.name, s.phase])).toEqual([
      ["write", "Succeeded"],
      ["read", "Succeeded"],
    ]);
    expect(build?.startTime).toBeDefined();
    expect(w.status?.conditions?.[0]).toMatchObject({
      type: "Finished",
      status: "True",
      reason: "Succeeded",
    });
    // Both steps ran on the job workspace's pod; the workspace is deleted once the job settled.
    const runs = await childRuns("pipeline");
    expect(runs).toHaveLength(3);
    const buildRuns = runs.filter((r) => r.metadata.labels?.["kruntimes.io/workflow-job"] === "build");
    expect(new Set(buildRuns.map((r) => r.status?.assignment?.pod)).size).toBe(1);
    await eventually(
      "job workspaces deleted",
      async () =>
        (
          await client.list(
            path({ group: "kruntimes.io", version: "v1alpha1", plural: "persistentworkspaces" }, ns.name),
            {
              labelSelector: "kruntimes.io/workflowrun=pipeline",
            },
          )
        ).items.length === 0,
      30_000,
    );
  });

  test("krt wfrun describe, logs and cancel against a run the controller drives", async () => {
    const krt = async (...args: string[]) => {
      const p = Bun.spawn(["bun", "krt/main.ts", "-n", ns.name, ...args], {
        cwd: `${import.meta.dir}/../..`,
        env: { ...process.env, KUBECONFIG: cluster?.kubeconfig as string, NO_COLOR: "1" },
        stdout: "pipe",
        stderr: "pipe",
      });
      const [out, err, code] = await Promise.all([
        new Response(p.stdout).text(),
        new Response(p.stderr).text(),
        p.exited,
      ]);
      return { out, err, code };
    };
    // "pipeline" ran in the first test.
    const d = await krt("wfrun", "describe", "pipeline");
    expect(d.code).toBe(0);
    expect(d.out).toContain("build");
    expect(d.out).toContain("write");
    expect(d.out).toContain("Succeeded");
    const logs = await krt("wfrun", "logs", "pipeline", "--job", "build");
    expect(logs.code).toBe(0);
    expect(logs.err).toBe("");
    await createWfRun("krtcancel", {
      jobs: {
        slow: { steps: [{ name: "tick", run: "for i in $(seq 60); do echo tick $i; sleep 1; done" }] },
      },
    });
    await until("krtcancel", "running", (w) => w.status?.jobs?.slow?.steps?.[0]?.phase === "Running");
    const c = await krt("wfrun", "cancel", "krtcancel");
    expect(c.code).toBe(0);
    const w = await ended("krtcancel", 30_000);
    expect(w.status?.phase).toBe("Cancelled");
    const tail = await krt("wfrun", "logs", "krtcancel");
    expect(tail.out).toContain("[slow/tick] tick 1");
  });

  test("artifacts move between jobs: declared by a step, staged into the downstream job's workspace", async () => {
    await createWfRun("artifacts", {
      jobs: {
        build: {
          steps: [
            {
              name: "make",
              run: 'mkdir -p "$KRUNTIME_ARTIFACTS_DIR/site" && echo "<h1>hi</h1>" > "$KRUNTIME_ARTIFACTS_DIR/site/index.html" && echo v1 > "$KRUNTIME_ARTIFACTS_DIR/version.txt"',
              artifacts: ["site", "version.txt"],
            },
          ],
        },
        publish: {
          needs: ["build"],
          artifacts: [
            { from: "jobs.build.artifacts.site", path: "public" },
            { from: "jobs.build.artifacts.version.txt" },
          ],
          steps: [
            { name: "check", run: 'grep -q hi public/index.html && test "$(cat version.txt)" = v1' },
            // A later step of the job finds the staged files in the job workspace too.
            {
              name: "again",
              run: 'echo "size=$(wc -c < public/index.html)" >> "$KRUNTIME_OUTPUTS"',
              outputs: ["size"],
            },
          ],
        },
      },
    });
    const w = await ended("artifacts");
    expect(w.status?.jobs?.publish?.message ?? "").not.toContain("failed");
    expect(w.status?.phase).toBe("Succeeded");
    expect(w.status?.jobs?.build?.artifacts?.map((a) => a.name).sort()).toEqual(["site", "version.txt"]);
    expect(w.status?.jobs?.publish?.steps?.[1]?.outputs).toEqual({ size: "12" });
  });

  test("a step that does not store the artifact it declares fails with OutputMissing", async () => {
    await createWfRun("noartifact", {
      jobs: { build: { steps: [{ name: "make", run: "true", artifacts: ["app"] }] } },
    });
    const w = await ended("noartifact");
    expect(w.status?.jobs?.build?.steps?.[0]).toMatchObject({ phase: "Failed", reason: "OutputMissing" });
    expect(w.status?.jobs?.build?.steps?.[0]?.message).toContain('declared artifact "app"');
  });

  test("a failed step fails its job; dependants are Skipped, independent jobs finish", async () => {
    await createWfRun("failing", {
      jobs: {
        bad: {
          steps: [
            { name: "boom", run: "echo nope >&2; exit 3" },
            { name: "never", run: "true" },
          ],
        },
        after: { needs: ["bad"], steps: [{ name: "s", run: "true" }] },
        other: { steps: [{ name: "s", run: "sleep 0.2" }] },
      },
    });
    const w = await ended("failing");
    expect(w.status?.phase).toBe("Failed");
    expect(w.status?.reason).toBe("JobFailed");
    const jobs = w.status?.jobs ?? {};
    expect(jobs.bad?.phase).toBe("Failed");
    expect(jobs.bad?.reason).toBe("StepFailed");
    expect(jobs.bad?.steps?.map((s) => [s.name, s.phase])).toEqual([
      ["boom", "Failed"],
      ["never", "Skipped"],
    ]);
    expect(jobs.bad?.steps?.[0]?.exitCode).toBe(3);
    expect(jobs.after).toMatchObject({ phase: "Skipped", reason: "DependencyFailed" });
    expect(jobs.other?.phase).toBe("Succeeded");
    expect((await childRuns("failing")).length).toBe(2);
  });

  test("a reusable Workflow called twice with different inputs, and an Action used in two jobs", async () => {
    await client.create(path(ActionResource, ns.name), {
      apiVersion: "kruntimes.io/v1alpha1",
      kind: "Action",
      metadata: { name: "shout" },
      spec: {
        inputs: { word: { required: true }, times: { type: "number", default: "2" } },
        steps: [
          {
            name: "say",
            run: 'for i in $(seq ${{ inputs.times }}); do printf "%s" "${{ inputs.word }}"; done > said.txt; echo "said=$(cat said.txt)" >> "$KRUNTIME_OUTPUTS"',
            outputs: ["said"],
          },
        ],
        outputs: { said: "${{ steps.say.outputs.said }}" },
      },
    });
    await client.create(path(WorkflowResource, ns.name), {
      apiVersion: "kruntimes.io/v1alpha1",
      kind: "Workflow",
      metadata: { name: "greet" },
      spec: {
        runtime: "bash",
        inputs: { who: { required: true } },
        jobs: {
          hello: {
            steps: [
              { name: "loud", uses: "shout", with: { word: "${{ inputs.who }}" } },
              { name: "check", run: 'test "$(cat said.txt)" = "${{ steps.loud.outputs.said }}"' },
            ],
            outputs: { said: "${{ steps.loud.outputs.said }}" },
          },
        },
        outputs: { said: "${{ jobs.hello.outputs.said }}" },
      },
    });
    await createWfRun("callers", {
      jobs: {
        a: { uses: "greet", with: { who: "ab" } },
        b: { uses: "greet", with: { who: "xyz" } },
        c: {
          steps: [{ name: "once", uses: "shout", with: { word: "q", times: "3" } }],
          outputs: { s: "${{ steps.once.outputs.said }}" },
        },
      },
      outputs: {
        a: "${{ jobs.a.outputs.said }}",
        b: "${{ jobs.b.outputs.said }}",
        c: "${{ jobs.c.outputs.s }}",
      },
    });
    const w = await ended("callers", 90_000);
    expect(w.status?.phase).toBe("Succeeded");
    expect(w.status?.outputs).toEqual({ a: "abab", b: "xyzxyz", c: "qqq" });
    expect(w.status?.jobs?.a?.workflowRun).toBeDefined();
    const nested = await client.get<WorkflowRun>(wfPath(w.status?.jobs?.a?.workflowRun));
    expect(nested.spec.workflowRef?.name).toBe("greet");
    expect(nested.status?.depth).toBe(1);
    expect(nested.status?.jobs?.hello?.steps?.map((s) => s.name)).toEqual(["loud.say", "check"]);
    expect(w.status?.definitions?.workflows?.greet).toBeDefined();
  });

  test("cancellation mid-run cancels the running step and starts nothing new", async () => {
    await createWfRun("cancelme", {
      jobs: {
        slow: {
          steps: [
            { name: "wait", run: "sleep 30" },
            { name: "after", run: "true" },
          ],
        },
        later: { needs: ["slow"], steps: [{ name: "s", run: "true" }] },
      },
    });
    await until(
      "cancelme",
      "running its first step",
      (w) => w.status?.jobs?.slow?.steps?.[0]?.phase === "Running",
    );
    await client.patch(wfPath("cancelme"), { spec: { termination: { mode: "Immediate" } } }, "merge");
    const w = await ended("cancelme", 30_000);
    expect(w.status?.phase).toBe("Cancelled");
    expect(w.status?.jobs?.slow?.phase).toBe("Cancelled");
    expect(w.status?.jobs?.later?.phase).toBe("Cancelled");
    const runs = await childRuns("cancelme");
    expect(runs.map((r) => r.status?.phase)).toEqual(["Cancelled"]);
  });

  test("ttlSecondsAfterFinished deletes the ended WorkflowRun and, by owner, its child Runs", async () => {
    await createWfRun("shortlived", {
      ttlSecondsAfterFinished: 1,
      jobs: { a: { steps: [{ name: "s", run: "true" }] } },
    });
    await eventually(
      "shortlived and its Runs deleted",
      async () => {
        const left = await client.list(wfPath(), { fieldSelector: "metadata.name=shortlived" });
        return left.items.length === 0 && (await childRuns("shortlived")).length === 0;
      },
      60_000,
    );
  });

  test("invalid graphs and missing definitions fail before any child exists", async () => {
    // The controller checks again what the admission webhook (not installed here) refuses.
    await createWfRun("badref", {
      jobs: {
        a: { steps: [{ name: "s", run: "echo ${{ jobs.b.outputs.x }}" }] },
        b: { steps: [{ name: "s", run: "true" }] },
      },
    });
    await createWfRun("nodef", { jobs: { a: { uses: "does-not-exist" } } });
    const bad = await ended("badref");
    expect(bad.status).toMatchObject({ phase: "Failed", reason: "InvalidWorkflow" });
    expect(bad.status?.message).toContain('job "b" is not upstream of this job');
    const nodef = await ended("nodef");
    expect(nodef.status).toMatchObject({ phase: "Failed", reason: "DefinitionNotFound" });
    expect(await childRuns("badref")).toHaveLength(0);
    expect(await childRuns("nodef")).toHaveLength(0);
    // The schema refuses cycles it can see locally: a job that needs an unknown one.
    const err = await createWfRun("unknown-need", {
      jobs: { a: { needs: ["zzz"], steps: [{ name: "s", run: "true" }] } },
    }).catch((e: Error) => e);
    expect(String(err)).toContain("every name in `needs` must be another job of this workflow");
  });

  test("the Runtime pod holding a job's workspace is lost: the job shows it", async () => {
    await createWfRun("losing", {
      jobs: {
        work: {
          steps: [
            { name: "long", run: "sleep 60" },
            { name: "after", run: "true" },
          ],
        },
        next: { needs: ["work"], steps: [{ name: "s", run: "true" }] },
      },
    });
    const running = await until(
      "losing",
      "running",
      (w) => w.status?.jobs?.work?.steps?.[0]?.phase === "Running",
    );
    const ws = await client.get<{ status?: { boundPod?: string } }>(
      path(
        { group: "kruntimes.io", version: "v1alpha1", plural: "persistentworkspaces" },
        ns.name,
        running.status?.jobs?.work?.workspace,
      ),
    );
    expect(ws.status?.boundPod).toBeDefined();
    await client.delete(path({ version: "v1", plural: "pods" }, ns.name, ws.status?.boundPod), {
      gracePeriodSeconds: 0,
    });
    const w = await ended("losing", 60_000);
    expect(w.status?.phase).toBe("Failed");
    expect(w.status?.jobs?.work).toMatchObject({ phase: "Failed", reason: "WorkspaceLost" });
    expect(w.status?.jobs?.work?.message).toContain("the job's files are gone");
    expect(w.status?.jobs?.next?.phase).toBe("Skipped");
  });

  test("controller SIGKILLed right after creating children: no duplicate, correct final status", async () => {
    await createWfRun("survivor", {
      jobs: {
        one: {
          steps: [
            { name: "a", run: "sleep 1" },
            { name: "b", run: 'echo "n=1" >> "$KRUNTIME_OUTPUTS"', outputs: ["n"] },
          ],
        },
        two: { steps: [{ name: "a", run: "sleep 1" }] },
      },
    });
    // Kill as soon as the first child Run exists — before or after its status write landed.
    await eventually("a child Run of survivor", async () => (await childRuns("survivor")).length > 0, 30_000);
    ctl.kill("SIGKILL");
    await ctl.exited;
    ctl = startController({
      namespace: ns.name,
      kubeconfig: cluster?.kubeconfig as string,
      runtimed: "real",
    });
    await ctl.waitFor("scheduling and reconciling");
    const w = await ended("survivor");
    expect(w.status?.phase).toBe("Succeeded");
    const runs = await childRuns("survivor");
    expect(runs).toHaveLength(3);
    expect(new Set(runs.map((r) => r.metadata.name)).size).toBe(3);
    expect(w.status?.jobs?.one?.steps?.[1]?.outputs).toEqual({ n: "1" });
  });
});
