/**
 * examples/workflow-pipeline and the examples of docs/concepts/workflows.md, run as a user would:
 * the chart installed in a fresh namespace (controller, admission webhook, RBAC), the example's
 * ServiceAccount `pipeline` with its Role (workflow-user.yaml) and a token kubeconfig from
 * examples/user-kubeconfig.sh, manifests applied with kubectl, the Workflow triggered with krt.
 * The pipeline's Runtime stores artifacts in the S3-compatible test server.
 *
 * One thing differs from a real cluster: the local cluster has no kube-proxy, so the apiserver
 * cannot reach the webhook's Service by its ClusterIP. As in workspace-webhook.test.ts, the
 * Service is replaced by an ExternalName pointing at the controller pod's IP; the chart's
 * certificate, CA bundle and webhook configuration stay as installed.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { type Run, RunResource, type WorkflowRun, WorkflowRunResource } from "@kruntimes/api";
import { path, R } from "@kruntimes/kube";
import YAML from "yaml";
import { binaryPath } from "../localcluster/binaries.ts";
import { type S3Server, startS3Server } from "../localcluster/s3-server.ts";
import { maintainerEndpoint } from "../support/artifacts.ts";
import { eventually, type TestCluster, testCluster, testNamespace } from "../support/cluster.ts";
import { type ProcessResult, runProcess } from "../support/process.ts";
import { HELM_MISSING, helmPath, installNamespaced, removeRelease } from "./chart-support.ts";
import { buildKrt } from "./krt-binary.ts";

const ROOT = join(import.meta.dir, "..", "..");
const EXAMPLE = join(ROOT, "examples", "workflow-pipeline");
const DOC = readFileSync(join(ROOT, "docs", "concepts", "workflows.md"), "utf8");
const RELEASE = "wfex";
const cluster = testCluster();
// Pod IPs reachable from the apiserver's host and images run as host commands: the local cluster.
const suite = cluster?.local ? describe : describe.skip;

function expectExit(r: ProcessResult, code: number, what: string): void {
  if (r.code !== code)
    console.error(`${what} exited ${r.code}:\n--- stdout\n${r.stdout}\n--- stderr\n${r.stderr}`);
  expect({ what, code: r.code }).toEqual({ what, code });
}

/** The fenced blocks of `lang` in the concept page, in order. */
function docBlocks(lang: string): string[] {
  return [...DOC.matchAll(new RegExp(`\`\`\`${lang}\\n([\\s\\S]*?)\`\`\``, "g"))].map((m) => m[1] as string);
}
const docYaml = (containing: string): string => {
  const b = docBlocks("yaml").find((y) => y.includes(containing));
  if (!b) throw new Error(`no yaml block containing ${containing} in docs/concepts/workflows.md`);
  return b;
};

suite("examples/workflow-pipeline and docs/concepts/workflows.md (chart, webhook, a user's RBAC)", () => {
  const c = cluster as TestCluster;
  let ns = "";
  let s3: S3Server;
  let dir = "";
  let userKubeconfig = "";
  let krt = "";
  let kubectlBin = "";

  /** kubectl as the cluster admin (what the README asks an admin to do). */
  const admin = (args: string[], stdin?: string) =>
    runProcess([kubectlBin, "--kubeconfig", c.kubeconfig, "-n", ns, ...args], { stdin });
  /** kubectl as the `pipeline` user. */
  const user = (args: string[], stdin?: string) =>
    runProcess([kubectlBin, "--kubeconfig", userKubeconfig, ...args], { stdin, cwd: dir });
  /** A command line of the page, run by bash as the user (kubectl on PATH). */
  const userShell = (line: string) =>
    runProcess(["bash", "-c", line], {
      cwd: dir,
      env: {
        PATH: `${dirname(kubectlBin)}:${process.env.PATH ?? ""}`,
        HOME: dir,
        KUBECONFIG: userKubeconfig,
      },
    });
  const docCommand = (start: string) => {
    const lines = docBlocks("sh").flatMap((b) => b.split("\n").map((l) => l.trim()));
    const i = lines.findIndex((l) => l.startsWith(start));
    if (i < 0) throw new Error(`no command starting with ${start} in the page`);
    return { line: (lines[i] as string).replace(/\s+#.*$/, ""), comment: lines[i + 1]?.replace(/^# /, "") };
  };
  const userKrt = (args: string[]) =>
    runProcess([krt, ...args], {
      cwd: dir,
      env: { PATH: process.env.PATH ?? "", HOME: dir, KUBECONFIG: userKubeconfig, NO_COLOR: "1" },
    });
  const wfrun = (name: string) => c.client.get<WorkflowRun>(path(WorkflowRunResource, ns, name));
  const ended = (name: string, ms = 90_000) =>
    eventually(
      `WorkflowRun ${name} ended`,
      async () => {
        const w = await wfrun(name);
        return ["Succeeded", "Failed", "Cancelled"].includes(w.status?.phase ?? "") ? w : undefined;
      },
      ms,
    );

  beforeAll(async () => {
    if (!helmPath()) throw new Error(HELM_MISSING);
    kubectlBin = binaryPath("kubectl", ROOT, process.env);
    // The chart install, the krt build and the S3 server in parallel: they are most of the time.
    const [server, namespace, bin] = await Promise.all([
      startS3Server({ buckets: ["krt"] }).then((x) => {
        s3 = x;
        return x;
      }),
      testNamespace(c.client, "krt-e2e-wfex").then(async (n) => {
        ns = n.name;
        await installNamespaced(c.kubeconfig, c.client, RELEASE, n.name);
        return n;
      }),
      buildKrt(),
    ]);
    s3 = server;
    ns = namespace.name;
    krt = bin;
    dir = mkdtempSync(join(tmpdir(), "krt-e2e-wfex-"));
    // The webhook Service → the controller pod (see the file comment).
    const pods = await c.client.list<{ status?: { podIP?: string } }>(path(R.pods, ns), {
      labelSelector: "app.kubernetes.io/component=controller",
    });
    const ip = pods.items[0]?.status?.podIP;
    if (!ip) throw new Error("no controller pod IP");
    const svc = `${RELEASE}-kruntimes-webhook`;
    await c.client.delete(path(R.services, ns, svc));
    await c.client.create(path(R.services, ns), {
      metadata: { name: svc },
      spec: { type: "ExternalName", externalName: ip, ports: [{ name: "webhook", port: 9443 }] },
    });
    // The README: the admin applies workflow-user.yaml and writes the user's kubeconfig.
    const rbac = readFileSync(join(EXAMPLE, "workflow-user.yaml"), "utf8").replace(
      /^(\s*namespace:) kruntimes$/gm,
      `$1 ${ns}`,
    );
    expectExit(await admin(["apply", "-f", "-"], rbac), 0, "kubectl apply workflow-user.yaml");
    userKubeconfig = join(dir, "pipeline.kubeconfig");
    const r = await runProcess(
      ["bash", join(ROOT, "examples", "user-kubeconfig.sh"), ns, "pipeline", userKubeconfig],
      { env: { PATH: process.env.PATH ?? "", KUBECONFIG: c.kubeconfig, KUBECTL: kubectlBin } },
    );
    expectExit(r, 0, "user-kubeconfig.sh");
    // The webhook answers before the tests start (the controller may still be opening its port).
    await eventually(
      "the workflow webhook answers",
      async () => {
        const dry = await user(["apply", "--dry-run=server", "-f", "-"], docYaml("name: hello-workflow"));
        return dry.code === 0;
      },
      60_000,
    );
  }, 400_000);

  afterAll(async () => {
    if (ns) await removeRelease(c.kubeconfig, c.client, RELEASE, ns);
    await s3?.close();
  }, 180_000);

  test("docs: the first WorkflowRun succeeds, and describe shows its tree", async () => {
    expectExit(await user(["apply", "-f", "-"], docYaml("name: hello-workflow")), 0, "kubectl apply");
    const w = await ended("hello-workflow");
    expect(w.status?.phase).toBe("Succeeded");
    expect(w.status?.outputs).toEqual({ message: "hello from build" });
    expect(w.status?.jobs?.build?.outputs).toEqual({ words: "3", text: "hello from build" });
    const get = await user(["get", "wfrun", "hello-workflow"]);
    expectExit(get, 0, "kubectl get wfrun");
    expect(get.stdout).toMatch(/^NAME\s+PHASE\s+REASON\s+WORKFLOW\s+STARTED\s+AGE\n/);
    expect(get.stdout).toMatch(/hello-workflow\s+Succeeded\s+Succeeded\s/);
    const d = await userKrt(["wfrun", "describe", "hello-workflow"]);
    expectExit(d, 0, "krt wfrun describe");
    const shown = docBlocks("text").find((b) => b.startsWith("Name:                 hello-workflow"));
    if (!shown) throw new Error("no describe output in the page");
    // Every line the page shows is printed, but for this run's hashes in the names and durations.
    const hashes = (s: string) => s.replace(/-[0-9a-f]{6}\b/g, "-HASH").replace(/ \d+s /g, " Ns ");
    for (const line of hashes(shown).split("\n")) {
      if (!line || line === "…" || line.startsWith("Namespace:")) continue;
      expect(hashes(d.stdout)).toContain(line);
    }
    const runs = await c.client.list<Run>(path(RunResource, ns), {
      labelSelector: "kruntimes.io/workflowrun=hello-workflow",
    });
    expect(runs.items).toHaveLength(3);
  });

  test("docs: the cancel patch cancels a running WorkflowRun", async () => {
    const slow = docYaml("name: hello-workflow")
      .replace("name: hello-workflow", "name: cancel-me")
      .replace(/run: echo .* > message\.txt/, "run: sleep 60");
    expectExit(await user(["apply", "-f", "-"], slow), 0, "kubectl apply cancel-me");
    await eventually(
      "cancel-me runs its first step",
      async () => (await wfrun("cancel-me")).status?.jobs?.build?.steps?.[0]?.phase === "Running",
      60_000,
    );
    const { line } = docCommand("kubectl patch wfrun hello-workflow");
    expectExit(await userShell(line.replace("hello-workflow", "cancel-me")), 0, line);
    const w = await ended("cancel-me", 30_000);
    expect(w.status?.phase).toBe("Cancelled");
    expect(w.status?.jobs?.build?.phase).toBe("Cancelled");
    expect(w.status?.jobs?.check).toMatchObject({
      phase: "Cancelled",
      message: "cancelled before it started",
    });
  });

  test("docs: what the schema, the webhook and the controller refuse, with the messages shown", async () => {
    const run = (name: string, jobs: string) =>
      `apiVersion: kruntimes.io/v1alpha1\nkind: WorkflowRun\nmetadata:\n  name: ${name}\nspec:\n  runtime: bash\n  jobs:\n${jobs}`;
    const errors = docBlocks("text");
    const shownError = (start: string) => {
      const e = errors.find((b) => b.includes(start));
      if (!e) throw new Error(`the page shows no error containing ${start}`);
      return e.trim();
    };
    // The schema: a job with both steps and uses.
    const both = await user(
      ["create", "-f", "-"],
      run("both", "    a:\n      uses: anything\n      steps:\n        - name: s\n          run: 'true'\n"),
    );
    expect(both.code).not.toBe(0);
    expect(both.stderr).toContain(shownError('The WorkflowRun "both" is invalid'));
    // The webhook: a cycle in needs.
    const cycle = await user(
      ["create", "-f", "-"],
      run(
        "cycle",
        "    a:\n      needs: [b]\n      steps:\n        - name: s\n          run: 'true'\n    b:\n      needs: [a]\n      steps:\n        - name: s\n          run: 'true'\n",
      ),
    );
    expect(cycle.code).not.toBe(0);
    expect(cycle.stderr).toContain(shownError("jobs form a cycle"));
    // The webhook: the creator may create WorkflowRuns but not Runs.
    expectExit(
      await admin([
        "create",
        "role",
        "wfrun-only",
        "--verb=create,get",
        "--resource=workflowruns.kruntimes.io",
      ]),
      0,
      "create role",
    );
    expectExit(
      await admin(["create", "rolebinding", "wfrun-only", "--role=wfrun-only", "--user=alice"]),
      0,
      "create rolebinding",
    );
    const alice = await runProcess(
      [kubectlBin, "--kubeconfig", c.kubeconfig, "-n", ns, "create", "--as=alice", "-f", "-"],
      { stdin: docYaml("name: hello-workflow").replace("name: hello-workflow", "name: by-alice") },
    );
    expect(alice.code).not.toBe(0);
    expect(alice.stderr).toContain(
      shownError('user "alice" may not create WorkflowRuns').replace(
        'namespace "kruntimes"',
        `namespace "${ns}"`,
      ),
    );
    // The controller: a Workflow that does not exist, before any child.
    expectExit(
      await user(["create", "-f", "-"], run("nodef", "    a:\n      uses: does-not-exist\n")),
      0,
      "nodef",
    );
    await ended("nodef");
    const { line, comment } = docCommand("kubectl get wfrun nodef");
    const got = await userShell(line);
    expectExit(got, 0, line);
    expect(got.stdout).toBe(comment ?? "");
    const children = await c.client.list<Run>(path(RunResource, ns), {
      labelSelector: "kruntimes.io/workflowrun=nodef",
    });
    expect(children.items).toHaveLength(0);
  });

  test("docs: the artifacts excerpt is the example's", () => {
    const excerpt = YAML.parse(docYaml("from: jobs.build.artifacts.app\n      path: src"));
    const wf = YAML.parse(readFileSync(join(EXAMPLE, "workflow.yaml"), "utf8"));
    const store = wf.spec.jobs.build.steps.find((s: { name: string }) => s.name === "store");
    expect(excerpt.build.steps.filter(Boolean)).toEqual([store]);
    expect({ ...wf.spec.jobs.lint, steps: wf.spec.jobs.lint.steps.slice(0, 1) }).toEqual(excerpt.lint);
  });

  describe("examples/workflow-pipeline", () => {
    test("the admin makes the Runtime (with the test S3 store); the user publishes the Action and Workflow", async () => {
      expectExit(
        await admin([
          "create",
          "secret",
          "generic",
          "pipeline-s3",
          `--from-literal=AWS_ACCESS_KEY_ID=${s3.accessKeyId}`,
          `--from-literal=AWS_SECRET_ACCESS_KEY=${s3.secretAccessKey}`,
        ]),
        0,
        "create secret",
      );
      const runtime = readFileSync(join(EXAMPLE, "runtime.yaml"), "utf8");
      expect(runtime).toContain("endpoint: https://s3.example.com");
      // Only the store's address and bucket differ here.
      const local = runtime
        .replace("endpoint: https://s3.example.com", `endpoint: ${s3.endpoint}`)
        .replace("bucket: build-artifacts", "bucket: krt");
      expectExit(await admin(["apply", "-f", "-"], local), 0, "kubectl apply runtime.yaml");
      expectExit(
        await admin(["wait", "--for=condition=Ready", "runtime/pipeline", "--timeout=120s"]),
        0,
        "kubectl wait runtime/pipeline",
      );
      const applied = await user([
        "apply",
        "-f",
        join(EXAMPLE, "checksum-action.yaml"),
        "-f",
        join(EXAMPLE, "workflow.yaml"),
      ]);
      expectExit(applied, 0, "kubectl apply the Action and the Workflow");
      expect(applied.stdout).toContain("action.kruntimes.io/checksum created");
      expect(applied.stdout).toContain("workflow.kruntimes.io/build-test-package created");
    }, 180_000);

    test("trigger --wait: build → test, lint → package; the tarball is the artifact, and the app in it works", async () => {
      const r = await userKrt([
        "workflow",
        "trigger",
        "build-test-package",
        "--with",
        "version=1.2.0",
        "--wait",
      ]);
      expectExit(r, 0, "krt workflow trigger --wait");
      const name = r.stdout.split("\n")[0]?.trim() as string;
      expect(name).toMatch(/^build-test-package-[a-z0-9]{5}$/);
      expect(r.stderr).toMatch(new RegExp(`workflowrun ${name}: Succeeded after \\d+s: 4 jobs succeeded`));
      const w = await wfrun(name);
      const out = w.status?.outputs ?? {};
      expect(out.tarball).toBe("wc-app-1.2.0.tar.gz");
      expect(out["tests-passed"]).toBe("3");
      const jobs = w.status?.jobs ?? {};
      // test and lint ran side by side: each started before the other ended.
      const t = (s?: string) => Date.parse(s ?? "");
      expect(t(jobs.test?.startTime)).toBeLessThanOrEqual(t(jobs.lint?.completionTime));
      expect(t(jobs.lint?.startTime)).toBeLessThanOrEqual(t(jobs.test?.completionTime));
      expect(jobs.build?.steps?.map((s) => s.name)).toEqual(["compile", "digest.hash", "store"]);
      expect(jobs.package?.steps?.map((s) => `${s.name}:${s.action ?? ""}`)).toEqual([
        "tar:",
        "digest.hash:checksum",
      ]);
      // The workflow's sha256 (the Action over the workspace's tarball) is the stored artifact's.
      const ref = jobs.package?.artifacts?.find((a) => a.name === "wc-app.tar.gz");
      expect(ref?.digest).toBe(`sha256:${out.sha256}`);
      expect(jobs.build?.artifacts?.map((a) => `${a.name}:${a.type}`)).toEqual(["app:archive"]);
      // Every job's steps ran on one pod (the job workspace), and the workspaces are gone.
      const runs = (
        await c.client.list<Run>(path(RunResource, ns), { labelSelector: `kruntimes.io/workflowrun=${name}` })
      ).items;
      expect(runs).toHaveLength(8);
      for (const job of ["build", "test", "lint", "package"]) {
        const pods = runs
          .filter((x) => x.metadata.labels?.["kruntimes.io/workflow-job"] === job)
          .map((x) => x.status?.assignment?.pod);
        expect(new Set(pods).size).toBe(1);
      }
      // The user downloads the tarball with krt and runs what is inside.
      const tarRun = jobs.package?.steps?.[0]?.run as string;
      const storeId = runs.find((x) => x.metadata.name === tarRun)?.metadata.labels?.[
        "kruntimes.io/artifact-store"
      ] as string;
      const endpoint = await maintainerEndpoint(c.client, ns, storeId);
      const dl = await userKrt([
        "artifact",
        "download",
        tarRun,
        "wc-app.tar.gz",
        "-o",
        "wc-app-1.2.0.tar.gz",
        "--endpoint",
        endpoint,
      ]);
      expectExit(dl, 0, "krt artifact download");
      expectExit(await runProcess(["tar", "-xzf", "wc-app-1.2.0.tar.gz"], { cwd: dir }), 0, "tar -x");
      const version = await runProcess([join(dir, "app", "wc-app"), "--version"]);
      expect(version.stdout).toBe("wc-app 1.2.0\n");
      const words = await runProcess([join(dir, "app", "wc-app")], { stdin: "the quick brown fox\njumps\n" });
      expect(words.stdout).toBe("5\n");
      // The logs, as the README shows them.
      const logs = await userKrt(["wfrun", "logs", name, "--job", "test"]);
      expectExit(logs, 0, "krt wfrun logs --job test");
      expect(logs.stdout).toContain("[test/unit] ok   'one two three\\n' -> 3\n");
    }, 180_000);

    test("bug=true: the test job fails, lint still succeeds, package is skipped; exit 90", async () => {
      const r = await userKrt([
        "workflow",
        "trigger",
        "build-test-package",
        "--with",
        "version=1.2.1",
        "--with",
        "bug=true",
        "--wait",
      ]);
      expectExit(r, 90, "krt workflow trigger bug=true --wait");
      const name = r.stdout.split("\n")[0]?.trim() as string;
      const w = await wfrun(name);
      expect(w.status).toMatchObject({ phase: "Failed", reason: "JobFailed" });
      expect(w.status?.message).toBe(
        "job test (step unit failed (NonZeroExit): the task exited with code 1) failed",
      );
      const jobs = w.status?.jobs ?? {};
      expect(jobs.build?.phase).toBe("Succeeded");
      expect(jobs.lint?.phase).toBe("Succeeded");
      expect(jobs.test).toMatchObject({ phase: "Failed", reason: "StepFailed" });
      expect(jobs.test?.steps?.[0]).toMatchObject({ name: "unit", phase: "Failed", exitCode: 1 });
      expect(jobs.package).toMatchObject({ phase: "Skipped", reason: "DependencyFailed" });
      const logs = await userKrt(["wfrun", "logs", name, "--job", "test"]);
      expect(logs.stdout).toContain("[test/unit] FAIL 'one two three\\n' -> 1, want 3\n");
    }, 180_000);

    test("a version that is not given: krt refuses before creating anything", async () => {
      const r = await userKrt(["workflow", "trigger", "build-test-package", "--wait"]);
      expect(r.code).not.toBe(0);
      expect(r.stderr).toContain("version");
    });
  });
});
