/**
 * krt's workflow commands end to end: the COMPILED binary against the real apiserver with the
 * Workflow, Action and WorkflowRun CRDs. No workflow controller runs here: `trigger` is checked by
 * the WorkflowRun it creates, and the rendering of list/get/describe/logs/--wait by statuses this
 * test writes through the status subresource (as the controller would). Running workflows for
 * real is the controller's e2e suite.
 */
// biome-ignore-all lint/suspicious/noTemplateCurlyInString: workflow expressions are `${{ … }}` in plain strings
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import {
  ActionResource,
  type Run,
  RunResource,
  type Workflow,
  WorkflowResource,
  type WorkflowRun,
  WorkflowRunResource,
} from "@kruntimes/api";
import { isNotFound, type KubeClient, path } from "@kruntimes/kube";
import YAML from "yaml";
import { installCrds } from "../../controller/testing/cluster/objects.ts";
import { ExitCode } from "../../krt/exit-codes.ts";
import { renderJobs } from "../../krt/workflows/describe-text.ts";
import { fixtureRun } from "../../krt/workflows/testdata.ts";
import { eventually, testCluster, testNamespace } from "../support/cluster.ts";
import { buildKrt, type KrtResult, runKrt, startKrt } from "./krt-binary.ts";

const cluster = testCluster();
const suite = cluster ? describe : describe.skip;
let BIN = "";

const API = "kruntimes.io/v1alpha1";

const CI: Workflow = {
  apiVersion: API,
  kind: "Workflow",
  metadata: { name: "ci" },
  spec: {
    description: "build and test",
    inputs: {
      version: { type: "string", required: true },
      replicas: { type: "number", default: "2" },
      debug: { type: "boolean", default: "false" },
    },
    runtime: "bash",
    env: [{ name: "VERSION", value: "${{ inputs.version }}" }],
    jobs: {
      build: {
        steps: [
          { name: "greet", uses: "greet", with: { who: "${{ inputs.version }}" } },
          { name: "compile", run: "echo digest=abc >> $KRUNTIME_OUTPUTS", outputs: ["digest"] },
        ],
        outputs: { digest: "${{ steps.compile.outputs.digest }}" },
      },
      test: { needs: ["build"], steps: [{ name: "unit", run: "echo ${{ jobs.build.outputs.digest }}" }] },
      docs: { needs: ["build"], uses: "publish", with: { digest: "${{ jobs.build.outputs.digest }}" } },
    },
    outputs: { digest: "${{ jobs.build.outputs.digest }}" },
  },
};

const PUBLISH: Workflow = {
  apiVersion: API,
  kind: "Workflow",
  metadata: { name: "publish" },
  spec: {
    inputs: { digest: { required: true } },
    runtime: "bash",
    jobs: { push: { steps: [{ name: "push", run: "echo ${{ inputs.digest }}" }] } },
  },
};

suite("krt workflow / wfrun (compiled binary, no workflow controller)", () => {
  const client = cluster?.client as KubeClient;
  let ns: Awaited<ReturnType<typeof testNamespace>>;
  const krt = (...args: string[]): Promise<KrtResult> =>
    runKrt(BIN, [...args, "-n", ns.name], { kubeconfig: cluster?.kubeconfig ?? "" });
  const getWfr = (name: string) => client.get<WorkflowRun>(path(WorkflowRunResource, ns.name, name));
  const listWfr = async () =>
    (await client.list<WorkflowRun>(path(WorkflowRunResource, ns.name))).items.map((r) => r.metadata.name);
  const setStatus = (name: string, status: WorkflowRun["status"]) =>
    client.patch(path(WorkflowRunResource, ns.name, name, "status"), { status }, "merge");
  const createWorkflow = (w: Workflow) => client.create(path(WorkflowResource, ns.name), w);

  beforeAll(async () => {
    BIN = await buildKrt();
    await installCrds(client);
    ns = await testNamespace(client, "krt-workflow");
    await eventually("Workflow resource served", () => createWorkflow(CI));
    await createWorkflow(PUBLISH);
    await client.create(path(ActionResource, ns.name), {
      apiVersion: API,
      kind: "Action",
      metadata: { name: "greet" },
      spec: {
        inputs: { who: { required: true } },
        steps: [{ name: "say", run: "echo hi ${{ inputs.who }}" }],
      },
    });
  }, 180_000);
  afterAll(async () => {
    await ns?.remove();
  });

  test("workflow list / get: jobs and inputs (* required), every output format", async () => {
    const list = await krt("workflow", "list");
    expect(list.code).toBe(0);
    expect(list.stdout).toMatch(/^NAME\s+JOBS\s+INPUTS\s+AGE\n/);
    expect(list.stdout).toMatch(/\nci\s+3\s+debug,replicas,version\*\s+\d+s\n/);
    expect(list.stdout).toMatch(/\npublish\s+1\s+digest\*\s+/);
    expect((await krt("workflow", "list", "-o", "wide")).stdout).toMatch(
      /\nci\s+.*\s+bash\s+build and test\n/,
    );
    expect((await krt("workflow", "list", "-o", "name")).stdout).toBe("ci\npublish\n");
    const got = YAML.parse((await krt("workflow", "get", "ci", "-o", "yaml")).stdout) as Workflow;
    expect(got.spec).toEqual(CI.spec);
    const missing = await krt("workflow", "get", "nope");
    expect(missing.code).toBe(ExitCode.NotFound);
    expect(missing.stderr).toBe(
      `error: workflow "nope" not found in namespace "${ns.name}"\nhint: list the Workflows with \`krt workflow list -n ${ns.name}\`\n`,
    );
  });

  test("trigger renders the Workflow into an inline WorkflowRun with checked inputs and defaults", async () => {
    const r = await krt("workflow", "trigger", "ci", "--with", "version=1.2", "--with", "debug=true");
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    const name = r.stdout.trim();
    expect(name).toMatch(/^ci-[a-z0-9]{5}$/);
    const wfr = await getWfr(name);
    expect(wfr.spec).toEqual({
      workflowRef: { name: "ci" },
      inputs: { version: "1.2", replicas: "2", debug: "true" },
      runtime: "bash",
      env: CI.spec.env,
      jobs: CI.spec.jobs,
      outputs: CI.spec.outputs,
    });
    // Definitions are frozen by the controller, not by krt.
    expect(wfr.spec.definitions).toBeUndefined();

    const named = await krt(
      "workflow",
      "trigger",
      "ci",
      "--with",
      "version=2",
      "--name",
      "ci-fixed",
      "-o",
      "yaml",
    );
    expect(named.code).toBe(0);
    expect((YAML.parse(named.stdout) as WorkflowRun).metadata.name).toBe("ci-fixed");
    const prefixed = await krt(
      "workflow",
      "trigger",
      "publish",
      "--with",
      "digest=x",
      "--generate-name=nightly-",
    );
    expect(prefixed.stdout).toMatch(/^nightly-[a-z0-9]{5}\n$/);
    const before = await listWfr();
    const dry = await krt("workflow", "trigger", "ci", "--with", "version=3", "--dry-run");
    expect(dry.code).toBe(0);
    expect((YAML.parse(dry.stdout) as WorkflowRun).spec.inputs).toEqual({
      version: "3",
      replicas: "2",
      debug: "false",
    });
    expect(await listWfr()).toEqual(before);
  });

  test("input mistakes are usage errors naming each input; nothing is created", async () => {
    const before = await listWfr();
    const bad = await krt("workflow", "trigger", "ci", "--with", "replicas=many", "--with", "colour=red");
    expect(bad.code).toBe(ExitCode.Usage);
    expect(bad.stdout).toBe("");
    expect(bad.stderr).toBe(
      [
        'error: the inputs do not fit Workflow "ci":',
        '  --with replicas: "many" is not a number',
        '  --with colour: Workflow "ci" has no input "colour" (inputs: debug, replicas, version)',
        '  Workflow "ci" needs input "version"',
        "hint: its inputs: debug (boolean, default false), replicas (number, default 2), version (string, required)",
        "",
      ].join("\n"),
    );
    const pair = await krt("workflow", "trigger", "ci", "--with", "version");
    expect(pair.code).toBe(ExitCode.Usage);
    expect(pair.stderr).toContain('error: --with "version" is not NAME=VALUE');
    expect((await krt("workflow", "trigger", "nope")).code).toBe(ExitCode.NotFound);
    expect(await listWfr()).toEqual(before);
  });

  test("a Workflow that cannot run is refused before a WorkflowRun exists, naming the field", async () => {
    await createWorkflow({
      apiVersion: API,
      kind: "Workflow",
      metadata: { name: "broken" },
      spec: {
        runtime: "bash",
        jobs: { a: { steps: [{ name: "s", run: "echo ${{ jobs.nope.outputs.x }}" }] } },
      },
    });
    await createWorkflow({
      apiVersion: API,
      kind: "Workflow",
      metadata: { name: "calls-missing" },
      spec: { runtime: "bash", jobs: { a: { steps: [{ name: "s", uses: "no-such-action" }] } } },
    });
    const before = await listWfr();
    const broken = await krt("workflow", "trigger", "broken");
    expect(broken.code).toBe(ExitCode.Invalid);
    expect(broken.stderr).toStartWith('error: Workflow "broken" is invalid:\n  spec.jobs.a.steps[0].run: ');
    expect(broken.stderr).toContain("nope");
    expect(broken.stderr).toContain("hint: fix it (krt workflow get broken -o yaml) and apply it again\n");
    const missing = await krt("workflow", "trigger", "calls-missing");
    expect(missing.code).toBe(ExitCode.Invalid);
    expect(missing.stderr).toStartWith(
      'error: Workflow "calls-missing" cannot run (DefinitionNotFound): Action "no-such-action" not found in the namespace\n',
    );
    expect(await listWfr()).toEqual(before);
  });

  test("wfrun list / get / describe render the status the controller writes", async () => {
    const fx = fixtureRun();
    await client.create(path(WorkflowRunResource, ns.name), {
      apiVersion: API,
      kind: "WorkflowRun",
      metadata: { name: "shown" },
      spec: fx.spec,
    });
    await setStatus("shown", fx.status);

    const list = await krt("wfrun", "list", "--workflow", "ci", "--phase", "failed");
    expect(list.code).toBe(0);
    expect(list.stdout).toMatch(/^NAME\s+WORKFLOW\s+PHASE\s+JOBS\s+AGE\s+DURATION\n/);
    expect(list.stdout).toMatch(/\nshown\s+ci\s+Failed\s+2\/5\s+\d+s\s+63s\n$/);
    const wide = await krt("wfrun", "get", "shown", "-o", "wide");
    expect(wide.stdout).toMatch(/JobFailed\s+2 Succeeded, 1 Failed, 2 Skipped\n$/);
    expect((await krt("wfrun", "list", "--phase", "Running")).stderr).toBe(
      `No WorkflowRuns found in namespace ${ns.name}.\n`,
    );
    expect(
      JSON.parse((await krt("wfrun", "get", "shown", "-o", "json")).stdout).status.jobs.test.steps[0],
    ).toEqual(fx.status?.jobs?.test?.steps?.[0]);

    const d = await krt("wfrun", "describe", "shown");
    expect(d.code).toBe(0);
    expect(d.stdout).toContain("Name:                 shown\n");
    expect(d.stdout).toContain("Phase:                Failed\nReason:               JobFailed\n");
    // The tree depends only on the status' timestamps, so it is exactly the unit test's.
    expect(d.stdout).toContain(
      `Jobs:\n${renderJobs(fx, Date.now())
        .map((l) => `  ${l}`)
        .join("\n")}\nOutputs:\n`,
    );
    expect(d.stdout).toContain("  Finished   True     JobFailed");
    expect(d.stdout).not.toContain("\u001b["); // not a terminal: no colours
    expect(YAML.parse((await krt("wfrun", "describe", "shown", "-o", "yaml")).stdout).metadata.name).toBe(
      "shown",
    );
    const missing = await krt("wfrun", "describe", "nope");
    expect(missing.code).toBe(ExitCode.NotFound);
    expect(missing.stderr).toContain(`hint: list the WorkflowRuns with \`krt wfrun list -n ${ns.name}\``);
  });

  /** A finished child Run whose output is only in its status tails (no pod): what krt logs falls back to. */
  const childRun = async (name: string, out: string) => {
    await client.create(path(RunResource, ns.name), {
      apiVersion: API,
      kind: "Run",
      metadata: { name },
      spec: { runtime: "bash", mode: { task: {} }, source: { inline: "true" } },
    } as Run);
    await client.patch(
      path(RunResource, ns.name, name, "status"),
      { status: { phase: "Succeeded", attempt: 1, exitCode: 0, stdoutTail: out } },
      "merge",
    );
  };
  const oneJob = (name: string, steps: string[]): WorkflowRun =>
    ({
      apiVersion: API,
      kind: "WorkflowRun",
      metadata: { name },
      spec: { runtime: "bash", jobs: { build: { steps: steps.map((s) => ({ name: s, run: "echo" })) } } },
    }) as WorkflowRun;

  test("wfrun logs: each child Run's output in order, prefixed job/step, with --job/--step", async () => {
    await client.create(path(WorkflowRunResource, ns.name), oneJob("logged", ["one", "two", "three"]));
    await childRun("logged-build-one", "first\n");
    await childRun("logged-build-two", "second a\nsecond b\n");
    await setStatus("logged", {
      phase: "Running",
      jobs: {
        build: {
          phase: "Running",
          steps: [
            { name: "one", run: "logged-build-one", phase: "Succeeded" },
            { name: "two", run: "logged-build-two", phase: "Succeeded" },
            { name: "three", phase: "Pending" },
          ],
        },
      },
    });
    const all = await krt("wfrun", "logs", "logged");
    expect(all.code).toBe(0);
    expect(all.stdout).toBe("[build/one] first\n[build/two] second a\n[build/two] second b\n");
    expect(all.stderr).toContain("[build/one] no output records in runtimed's log; showing the status tails");
    expect((await krt("wfrun", "logs", "logged", "--step", "two")).stdout).toBe(
      "[build/two] second a\n[build/two] second b\n",
    );
    const badStep = await krt("wfrun", "logs", "logged", "--job", "build", "--step", "four");
    expect(badStep.code).toBe(ExitCode.Usage);
    expect(badStep.stderr).toBe('error: job "build" has no step "four"\nhint: its steps: one, two, three\n');
    expect((await krt("wfrun", "logs", "logged", "--job", "nope")).stderr).toContain(
      'error: workflowrun "logged" has no job "nope"\nhint: its jobs: build\n',
    );
  });

  test("wfrun logs -f waits by watch for each new step, follows it, ends with the run", async () => {
    await client.create(path(WorkflowRunResource, ns.name), oneJob("followed", ["a", "b"]));
    await setStatus("followed", { phase: "Running", jobs: { build: { phase: "Running" } } });
    const live = startKrt(BIN, ["wfrun", "logs", "-f", "followed", "-n", ns.name], {
      kubeconfig: cluster?.kubeconfig ?? "",
    });
    await childRun("followed-build-a", "from a\n");
    const step = (n: string, phase: "Succeeded" | "Pending") => ({
      name: n,
      run: `followed-build-${n}`,
      phase,
    });
    await setStatus("followed", { jobs: { build: { phase: "Running", steps: [step("a", "Succeeded")] } } });
    await live.waitForStdout("[build/a] from a\n");
    await childRun("followed-build-b", "from b\n");
    await setStatus("followed", {
      phase: "Succeeded",
      jobs: { build: { phase: "Succeeded", steps: [step("a", "Succeeded"), step("b", "Succeeded")] } },
    });
    const r = await live.result;
    expect(r.code).toBe(0);
    expect(r.stdout).toBe("[build/a] from a\n[build/b] from b\n");
  }, 60_000);

  test("trigger --wait reports job phases, prints a summary and exits 90 Failed / 91 Cancelled / 0", async () => {
    const waitWith = async (name: string, final: WorkflowRun["status"]) => {
      const proc = krt("workflow", "trigger", "publish", "--with", "digest=d", "--name", name, "--wait");
      await eventually(`workflowrun ${name} created`, () => getWfr(name).catch(() => undefined));
      await Bun.sleep(300);
      await setStatus(name, { phase: "Running", jobs: { push: { phase: "Running" } } });
      await Bun.sleep(200);
      await setStatus(name, final);
      return proc;
    };
    const failed = await waitWith("wait-failed", {
      phase: "Failed",
      reason: "JobFailed",
      message: "job push failed",
      jobs: {
        push: {
          phase: "Failed",
          reason: "StepFailed",
          steps: [
            {
              name: "push",
              run: "wait-failed-push-push",
              phase: "Failed",
              exitCode: 1,
              reason: "NonZeroExit",
            },
          ],
        },
      },
    });
    expect(failed.code).toBe(ExitCode.WorkflowFailed);
    expect(failed.stdout).toBe("wait-failed\n");
    expect(failed.stderr).toContain("job push: Running\njob push: Failed (StepFailed)\n");
    expect(failed.stderr).toContain("workflowrun wait-failed: Failed (JobFailed): job push failed\n");
    expect(failed.stderr).toMatch(/└─ ✗ push\s+Failed\s+wait-failed-push-push\s+1\s+NonZeroExit/);
    const cancelled = await waitWith("wait-cancelled", { phase: "Cancelled", reason: "Cancelled" });
    expect(cancelled.code).toBe(ExitCode.WorkflowCancelled);
    const ok = await waitWith("wait-ok", {
      phase: "Succeeded",
      outputs: { done: "yes" },
      jobs: { push: { phase: "Succeeded" } },
    });
    expect(ok.code).toBe(0);
    expect(ok.stderr).toContain("outputs:\n  done=yes\n");
  }, 60_000);

  test("wfrun cancel sets termination Immediate with a merge patch and says what happens next", async () => {
    await client.create(path(WorkflowRunResource, ns.name), oneJob("to-cancel", ["a"]));
    await setStatus("to-cancel", { phase: "Running" });
    const c = await krt("wfrun", "cancel", "to-cancel");
    expect(c.code).toBe(0);
    expect(c.stdout).toContain(
      "workflowrun to-cancel cancel requested: running steps are cancelled and nothing new starts",
    );
    const wfr = await getWfr("to-cancel");
    expect(wfr.spec.termination).toEqual({ mode: "Immediate" });
    expect(wfr.spec.jobs).toEqual(oneJob("x", ["a"]).spec.jobs);
    expect((await krt("wfrun", "cancel", "to-cancel")).stdout).toBe(
      "workflowrun to-cancel is already being cancelled\n",
    );
    const ended = await krt("wfrun", "cancel", "shown");
    expect(ended.code).toBe(0);
    expect(ended.stderr).toBe("workflowrun shown already ended (Failed); nothing to cancel\n");
    expect((await getWfr("shown")).spec.termination).toBeUndefined();
  });

  test("wfrun delete: deleted, a missing one is exit 66 unless --ignore-not-found", async () => {
    const d = await krt("wfrun", "delete", "to-cancel");
    expect(d.code).toBe(0);
    expect(d.stdout).toBe("workflowrun to-cancel deleted\n");
    await eventually("deleted", async () => {
      try {
        await getWfr("to-cancel");
        return false;
      } catch (e) {
        return isNotFound(e);
      }
    });
    const again = await krt("wfrun", "delete", "to-cancel");
    expect(again.code).toBe(ExitCode.NotFound);
    expect(again.stderr).toContain('error: workflowrun "to-cancel" not found');
    expect((await krt("wfrun", "delete", "to-cancel", "--ignore-not-found")).code).toBe(0);
  });
});
