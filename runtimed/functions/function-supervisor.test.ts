import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { FUNCTION_FINALIZER, type Run, RunPhase } from "@kruntimes/api";
import { FunctionEndReason, FunctionState } from "@kruntimes/api/gen/kruntimes/runtime/v1/function_pb.ts";
import pino from "pino";
import { createMetrics } from "../metrics.ts";
import type { RuntimedOptions } from "../options.ts";
import { StatusWriter } from "../status/status-writer.ts";
import { FakeFunctionServer } from "../testing/fake-function-server.ts";
import { FakeKube } from "../testing/fake-kube.ts";
import { type FunctionStartKind, FunctionSupervisor } from "./function-supervisor.ts";
import { FunctionTable } from "./function-table.ts";

const UID = "run-uid-1";

// Waits are bounded generously (a loaded 2-core machine); nothing here asserts a speed.
setDefaultTimeout(30_000);

function aFunctionRun(o: { source?: string; spec?: Partial<Run["spec"]>; status?: Run["status"] } = {}): Run {
  return {
    apiVersion: "kruntimes.io/v1alpha1",
    kind: "Run",
    metadata: { name: "f", namespace: "ns", uid: UID, generation: 1 },
    spec: {
      runtime: "python",
      mode: { function: { handler: "handler", concurrency: 2 } },
      source: { inline: o.source ?? "def handler(r):\n  return 'ok'\n" },
      ...o.spec,
    },
    status: o.status ?? {
      phase: RunPhase.Scheduled,
      attempt: 1,
      assignment: { pod: "pod-a", podUID: "pod-a-uid", attempt: 1 },
      timing: { createdMicros: 1, scheduledMicros: 2 },
    },
  } as Run;
}

async function until<T>(what: string, f: () => T | undefined | false, ms = 20_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = f();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(2);
  }
}

function harness(run: Run, kind: FunctionStartKind = "new", server = new FakeFunctionServer()) {
  const kube = new FakeKube(run);
  const records: Record<string, unknown>[] = [];
  const log = pino({ level: "debug" }, { write: (s: string) => void records.push(JSON.parse(s)) });
  const metrics = createMetrics();
  const table = new FunctionTable();
  let finished = false;
  const sup = new FunctionSupervisor(
    run,
    {
      o: {
        pod: { name: "pod-a", uid: "pod-a-uid", namespace: "ns", ip: "127.0.0.9", node: "" },
        dataplane: { port: 8444 },
      } as RuntimedOptions,
      functions: server.client,
      client: kube.client,
      writer: new StatusWriter(kube.client, metrics, log, 5),
      metrics,
      log,
      table,
      draining: () => false,
      done: () => {
        finished = true;
      },
      deleteDrainMs: 100,
    },
    kind,
    server.entries.get(UID)?.reg,
  );
  kube.onChange = (r) => sup.observe(r);
  sup.start();
  const phases = () => kube.statusWrites().map((r) => r.status?.phase);
  return {
    sup,
    kube,
    server,
    table,
    records,
    metrics,
    phases,
    done: () => until("supervisor done", () => finished),
  };
}

describe("FunctionSupervisor", () => {
  test("Scheduled → Ready in ONE status write; log lines become records; idle timeout ends it", async () => {
    const h = harness(aFunctionRun());
    await until("served", () => h.table.get(UID));
    expect(h.phases()).toEqual(["Ready"]);
    const ready = h.kube.stored as Run;
    expect(ready.metadata.finalizers).toEqual([FUNCTION_FINALIZER]);
    expect(ready.status).toMatchObject({
      phase: "Ready",
      endpoint: { pod: "pod-a", podUID: "pod-a-uid", attempt: 1, address: "127.0.0.9:8444" },
      conditions: expect.arrayContaining([
        expect.objectContaining({ type: "Registered", status: "True" }),
        expect.objectContaining({ type: "Ready", status: "True" }),
      ]),
    });
    expect(h.server.entries.get(UID)?.req).toMatchObject({
      handler: "handler",
      concurrency: 2,
      workingDir: `${UID}/fn`,
    });

    h.server.log(UID, "inv-7", ["hello", "world"]);
    await until("lines logged", () => h.records.filter((r) => r.msg === "output").length === 2);
    expect(h.records.find((r) => r.msg === "output")).toMatchObject({
      run: "f",
      runUID: UID,
      namespace: "ns",
      attempt: 1,
      invocation: "inv-7",
      stream: "stdout",
      line: "hello",
    });

    h.server.end(UID, FunctionEndReason.IDLE_TIMEOUT);
    await h.done();
    expect(h.phases()).toEqual(["Ready", "Succeeded"]);
    const end = h.kube.stored as Run;
    expect(end.status).toMatchObject({ phase: "Succeeded", reason: "IdleTimeout" });
    expect(end.status?.endpoint).toBeUndefined();
    expect(end.metadata.finalizers).toEqual([]);
    expect(h.table.get(UID)).toBeUndefined();
  });

  test("termination Immediate: unregister CANCEL, Cancelled", async () => {
    const h = harness(aFunctionRun());
    await until("served", () => h.table.get(UID));
    h.kube.mutate((r) => {
      r.spec.termination = { mode: "Immediate" };
    });
    await h.done();
    expect(h.server.calls).toContain(`unregister ${UID}/1 CANCEL`);
    expect(h.phases()).toEqual(["Ready", "Cancelled"]);
    expect(h.kube.stored?.metadata.finalizers).toEqual([]);
  });

  test("deletion: drained, finalizer removed, no status write, the Run goes", async () => {
    const h = harness(aFunctionRun());
    await until("served", () => h.table.get(UID));
    h.kube.mutate((r) => {
      r.metadata.deletionTimestamp = "2026-12-03T00:00:00Z";
    });
    await h.done();
    expect(h.server.calls).toContain(`unregister ${UID}/1 DRAIN`);
    expect(h.phases()).toEqual(["Ready"]);
    expect(h.kube.stored).toBeUndefined();
  });

  test("spec.timeout is the whole lifetime: Timeout", async () => {
    const h = harness(aFunctionRun({ spec: { timeout: "150ms" } }));
    await h.done();
    expect(h.phases()).toEqual(["Ready", "Timeout"]);
    expect(h.kube.stored?.status?.reason).toBe("Timeout");
  });

  test("a source that does not load: retried per policy, then Failed/RetriesExhausted with the error", async () => {
    const h = harness(
      aFunctionRun({
        source: "SYNTAX ERROR",
        spec: {
          retryPolicy: { maxAttempts: 2, retryOn: ["RegistrationFailed"], backoff: { initial: "10ms" } },
        },
      }),
    );
    await h.done();
    expect(h.phases()).toEqual(["Scheduled", "Failed"]);
    const s = h.kube.stored?.status;
    expect(s).toMatchObject({ phase: "Failed", reason: "RetriesExhausted", attempt: 2 });
    expect(s?.message).toStartWith("all 2 attempts failed; attempt 2 with RegistrationFailed: ");
    expect(s?.message).toContain("SyntaxError");
    expect(h.server.calls.filter((c) => c.startsWith("register"))).toEqual([
      `register ${UID}/1`,
      `register ${UID}/2`,
    ]);
  });

  test("the Runtime Server forgot it: registered again under the same attempt, no status write", async () => {
    const h = harness(aFunctionRun());
    await until("served", () => h.table.get(UID));
    h.server.forget(UID);
    await until(
      "registered again",
      () => h.server.calls.filter((c) => c === `register ${UID}/1`).length === 2,
    );
    await until("served again", () => h.table.get(UID) && h.server.state(UID) === FunctionState.READY);
    expect(h.phases()).toEqual(["Ready"]);
    h.server.end(UID, FunctionEndReason.IDLE_TIMEOUT);
    await h.done();
  });

  test("runtimed restarted: a Ready Run the server still holds is re-adopted with no call and no write", async () => {
    const server = new FakeFunctionServer();
    await server.client.register({ runUid: UID, runName: "f", attempt: 1, source: "x", handler: "handler" });
    const ready = aFunctionRun({
      status: {
        phase: RunPhase.Ready,
        attempt: 1,
        assignment: { pod: "pod-a", podUID: "pod-a-uid", attempt: 1 },
        endpoint: { pod: "pod-a", podUID: "pod-a-uid", attempt: 1, address: "127.0.0.9:8444" },
      },
    });
    ready.metadata.finalizers = [FUNCTION_FINALIZER];
    const h = harness(ready, "adopt", server);
    await until("served", () => h.table.get(UID));
    expect(server.calls).toEqual([`register ${UID}/1`]);
    expect(h.kube.writes).toEqual([]);
    server.end(UID, FunctionEndReason.IDLE_TIMEOUT);
    await h.done();
    expect(h.phases()).toEqual(["Succeeded"]);
  });

  test("the Run moved to another pod: unregistered, never written", async () => {
    const h = harness(aFunctionRun());
    await until("served", () => h.table.get(UID));
    h.kube.mutate((r) => {
      r.status = { ...r.status, attempt: 2, assignment: { pod: "pod-b", podUID: "pod-b-uid", attempt: 2 } };
    });
    await h.done();
    expect(h.server.calls).toContain(`unregister ${UID}/1 CANCEL`);
    expect(h.phases()).toEqual(["Ready"]);
  });
});
