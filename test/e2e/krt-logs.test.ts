/**
 * krt logs / --follow end to end: real pods whose `runtimed` container prints runtimed's output
 * records (one pino-style JSON line per output line), read by the compiled krt through the
 * apiserver's pod-log endpoint. The test plays the scheduler and runtimed by patching Run status.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Labels, type Run, RunResource, RuntimeResource } from "@kruntimes/api";
import { type KubeClient, path, R } from "@kruntimes/kube";
import { installCrds } from "../../controller/testing/cluster/objects.ts";
import { ExitCode } from "../../krt/exit-codes.ts";
import { eventually, testCluster, testNamespace } from "../support/cluster.ts";
import { buildKrt, type KrtResult, runKrt, startKrt } from "./krt-binary.ts";

const cluster = testCluster();
const suite = cluster ? describe : describe.skip;

interface Pod {
  metadata: { name: string; uid: string };
  status?: { phase?: string };
}

suite("krt logs (compiled binary, real pod logs)", () => {
  const client = cluster?.client as KubeClient;
  let ns: Awaited<ReturnType<typeof testNamespace>>;
  let bin = "";
  const opts = () => ({ kubeconfig: cluster?.kubeconfig ?? "" });
  const krt = (...args: string[]): Promise<KrtResult> => runKrt(bin, [...args, "-n", ns.name], opts());

  beforeAll(async () => {
    bin = await buildKrt();
    await installCrds(client);
    ns = await testNamespace(client, "krt-logs");
    // `krt run` checks that the Runtime exists; no controller acts on it here.
    await eventually("Runtime created", () =>
      client.create(path(RuntimeResource, ns.name), {
        apiVersion: "kruntimes.io/v1alpha1",
        kind: "Runtime",
        metadata: { name: "bash" },
        spec: {
          replicas: 1,
          template: { spec: { containers: [{ name: "runtime", image: "ghcr.io/kruntimes/bash" }] } },
        },
      }),
    );
  }, 120_000);
  afterAll(async () => {
    await ns?.remove();
  });

  const createRun = (name: string) =>
    eventually(`run ${name} created`, () =>
      client.create<Run>(path(RunResource, ns.name), {
        apiVersion: "kruntimes.io/v1alpha1",
        kind: "Run",
        metadata: { name },
        spec: { runtime: "bash", mode: { task: { args: ["true"] } } },
      }),
    );
  const record = (run: Run, attempt: number, stream: "stdout" | "stderr", line: string) =>
    JSON.stringify({
      level: 30,
      time: Date.now(),
      msg: "output",
      run: run.metadata.name,
      runUID: run.metadata.uid,
      namespace: ns.name,
      attempt,
      stream,
      line,
    });
  /** A pod whose `runtimed` container runs `script` (bash) and then stays up. */
  const runtimedPod = async (name: string, script: string): Promise<Pod> => {
    const pod = await client.create<Pod>(path(R.pods, ns.name), {
      metadata: { name, labels: { [Labels.runtime]: "bash" } },
      spec: {
        terminationGracePeriodSeconds: 0,
        restartPolicy: "Never",
        containers: [
          { name: "runtimed", image: "bash", command: ["bash", "-c", `${script}\nexec sleep 3600`] },
        ],
      },
    });
    await eventually(
      `pod ${name} running`,
      async () => (await client.get<Pod>(path(R.pods, ns.name, name))).status?.phase === "Running",
    );
    return pod;
  };
  const echo = (lines: string[]) => lines.map((l) => `echo '${l}'`).join("\n");
  const setStatus = (name: string, status: Run["status"]) =>
    client.patch(path(RunResource, ns.name, name, "status"), { status }, "merge");
  const assign = (run: Run, pod: Pod, attempt: number, extra: Run["status"] = {}) =>
    setStatus(run.metadata.name ?? "", {
      phase: "Running",
      attempt,
      assignment: { pod: pod.metadata.name, podUID: pod.metadata.uid, attempt },
      ...extra,
    });

  test("prints the Run's stdout and stderr lines, skipping other Runs and runtimed's own logs", async () => {
    const run = await createRun("plain");
    const other = { ...run, metadata: { ...run.metadata, name: "other", uid: "not-this-run" } };
    const pod = await runtimedPod(
      "rt-plain",
      echo([
        '{"level":30,"msg":"runtimed started"}',
        "not json at all",
        record(other, 1, "stdout", "someone else"),
        record(run, 1, "stdout", "hello"),
        record(run, 1, "stderr", "oops"),
        record(run, 1, "stdout", "  world  "),
      ]),
    );
    await assign(run, pod, 1);
    const r = await eventually("logs printed", async () => {
      const got = await krt("logs", "plain");
      return got.stdout.includes("world") && got;
    });
    expect(r.code).toBe(0);
    expect(r.stdout).toBe("hello\n  world  \n");
    expect(r.stderr).toBe("oops\n");
  });

  test("-f streams the output live and ends when the Run ends", async () => {
    const run = await createRun("live");
    const live = startKrt(bin, ["logs", "-f", "live", "-n", ns.name], opts());
    const ticks = [1, 2, 3, 4, 5].map((i) => record(run, 1, "stdout", `tick ${i}`));
    const pod = await runtimedPod("rt-live", ticks.map((t) => `echo '${t}'; sleep 0.3`).join("\n"));
    await assign(run, pod, 1);
    await live.waitForStdout("tick 1");
    expect(live.stdout()).not.toContain("tick 5"); // still running: it arrived live
    await live.waitForStdout("tick 5");
    await setStatus("live", {
      phase: "Succeeded",
      exitCode: 0,
      reason: "Completed",
      stdoutTail: "tick 1\ntick 2\ntick 3\ntick 4\ntick 5\n",
    });
    const r = await live.result;
    expect(r.code).toBe(0);
    expect(r.stdout).toBe("tick 1\ntick 2\ntick 3\ntick 4\ntick 5\n");
  }, 40_000);

  test("krt run --follow streams output and exits with the Run's exit code", async () => {
    const live = startKrt(
      bin,
      ["run", "-n", ns.name, "--runtime", "bash", "--name", "followed", "--follow", "--", "x"],
      opts(),
    );
    const run = await eventually("run created by krt", async () => {
      if (live.stderr().includes("error:")) throw new Error(live.stderr());
      return client.get<Run>(path(RunResource, ns.name, "followed")).catch(() => undefined);
    });
    const pod = await runtimedPod(
      "rt-followed",
      echo([record(run, 1, "stdout", "working"), record(run, 1, "stderr", "bad thing")]),
    );
    await assign(run, pod, 1);
    await live.waitForStdout("working");
    await setStatus("followed", {
      phase: "Failed",
      exitCode: 3,
      reason: "NonZeroExit",
      stdoutTail: "working\n",
      stderrTail: "bad thing\n",
    });
    const r = await live.result;
    expect(r.code).toBe(3);
    expect(r.stdout).toBe("working\n");
    expect(r.stderr).toContain("run followed created");
    expect(r.stderr).toContain("bad thing\n");
    expect(r.stderr).toContain("run followed: Failed, exit code 3");
  }, 40_000);

  test("-f moves to the next attempt's pod when a retry places the Run elsewhere", async () => {
    const run = await createRun("moved");
    const live = startKrt(bin, ["logs", "-f", "moved", "-n", ns.name], opts());
    const a = await runtimedPod("rt-moved-a", echo([record(run, 1, "stdout", "on a")]));
    await assign(run, a, 1);
    await live.waitForStdout("on a");
    // The pod of attempt 1 is declared lost; attempt 2 goes to another pod.
    const b = await runtimedPod(
      "rt-moved-b",
      `sleep 0.5\n${echo([record(run, 2, "stdout", "on b"), record(run, 2, "stderr", "b err")])}`,
    );
    await assign(run, b, 2);
    await live.waitForStdout("on b");
    await setStatus("moved", {
      phase: "Succeeded",
      exitCode: 0,
      reason: "Completed",
      stdoutTail: "on b\n",
      stderrTail: "b err\n",
    });
    const r = await live.result;
    expect(r.code).toBe(0);
    expect(r.stdout).toBe("on a\non b\n");
    expect(r.stderr).toBe("krt: ==> attempt 2 <==\nb err\n");
  }, 60_000);

  test("every attempt by default, one with --attempt; a gone pod falls back to the status tails", async () => {
    const run = await createRun("retried");
    const first = await runtimedPod("rt-first", echo([record(run, 1, "stdout", "first try")]));
    const second = await runtimedPod(
      "rt-second",
      echo([record(run, 2, "stdout", "second try"), record(run, 2, "stderr", "warn 2")]),
    );
    await assign(run, second, 2, {
      phase: "Succeeded",
      exitCode: 0,
      stdoutTail: "tail out\n",
      stderrTail: "tail err\n",
    });

    const all = await krt("logs", "retried");
    expect(all.code).toBe(0);
    expect(all.stdout).toBe("first try\nsecond try\n");
    expect(all.stderr).toBe("krt: ==> attempt 1 <==\nkrt: ==> attempt 2 <==\nwarn 2\n");
    const one = await krt("logs", "retried", "--attempt", "1");
    expect(one.stdout).toBe("first try\n");
    expect(one.stderr).toBe("");
    const bad = await krt("logs", "retried", "--attempt", "3");
    expect(bad.code).toBe(ExitCode.Usage);
    expect(bad.stderr).toContain("has no attempt 3 (its attempts are 1–2)");

    // Attempt 1's pod goes: that attempt is reported missing. Then attempt 2's: the status tails.
    await client.delete(path(R.pods, ns.name, first.metadata.name), { gracePeriodSeconds: 0 });
    await eventually(
      "first pod gone",
      async () => (await client.get(path(R.pods, ns.name, "rt-first")).catch(() => undefined)) === undefined,
    );
    const partial = await krt("logs", "retried");
    expect(partial.stdout).toBe("second try\n");
    expect(partial.stderr).toContain("attempt 1: no output found");
    await client.delete(path(R.pods, ns.name, second.metadata.name), { gracePeriodSeconds: 0 });
    await eventually(
      "second pod gone",
      async () => (await client.get(path(R.pods, ns.name, "rt-second")).catch(() => undefined)) === undefined,
    );
    const tails = await krt("logs", "retried");
    expect(tails.code).toBe(0);
    expect(tails.stdout).toBe("tail out\n");
    expect(tails.stderr).toContain("pod rt-second is gone; showing the status tails of attempt 2");
    expect(tails.stderr).toContain("tail err\n");
    const followed = await krt("logs", "-f", "retried");
    expect(followed.stdout).toBe("tail out\n");
  }, 60_000);

  test.if(Boolean(cluster?.local))(
    "without get on pods/log the error names what is missing and what to ask for",
    async () => {
      // The test user may read Runs here, nothing else.
      await client.create(path(R.roles, ns.name), {
        metadata: { name: "runs-reader" },
        rules: [{ apiGroups: ["kruntimes.io"], resources: ["runs"], verbs: ["get", "list", "watch"] }],
      });
      await client.create(path(R.roleBindings, ns.name), {
        metadata: { name: "runs-reader" },
        roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: "runs-reader" },
        subjects: [{ apiGroup: "rbac.authorization.k8s.io", kind: "User", name: "krt-test-nobody" }],
      });
      const env = { kubeconfig: cluster?.local?.nobodyKubeconfig ?? "" };
      const r = await eventually("the Role applies", async () => {
        const got = await runKrt(bin, ["logs", "plain", "-n", ns.name], env);
        return got.code === ExitCode.Forbidden && got;
      });
      expect(r.stderr).toContain(`forbidden: you may not get pods/log "rt-plain" in namespace "${ns.name}"`);
      expect(r.stderr).toContain("hint: ask a cluster admin for a Role granting that verb on that resource");
    },
  );

  test("a Run not placed yet has no output; -o and bad --attempt are usage errors", async () => {
    await createRun("waiting");
    const r = await krt("logs", "waiting");
    expect(r.code).toBe(0);
    expect(r.stdout).toBe("");
    expect(r.stderr).toContain("has not been placed on a pod yet");
    expect((await krt("logs", "waiting", "-o", "json")).code).toBe(ExitCode.Usage);
    expect((await krt("logs", "waiting", "--attempt", "zero")).code).toBe(ExitCode.Usage);
    expect((await krt("logs", "missing")).code).toBe(ExitCode.NotFound);
  });
});
