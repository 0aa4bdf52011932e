/**
 * Function Runs end to end on the local cluster: the controller with the REAL runtimed and the
 * real Runtime Server (bash and python), called on runtimed's dataplane port directly — as the
 * gateway does — with a Connect client and a ServiceAccount token (audience kruntimes-dataplane)
 * of an allowed subject. Registration → Ready in one status write, many invocations in both
 * languages, handler errors, idle timeout freeing capacity, cancel during an invocation,
 * deletion through the finalizer, runtimed and the Runtime Server killed under a stream of
 * invocations, the pod deleted (re-registered elsewhere), two functions on one pod, stale routes
 * and callers that may not call.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { FUNCTION_FINALIZER, isTerminalPhase, type Run, RunResource, type RunSpec } from "@kruntimes/api";
import type { InvokeResponse } from "@kruntimes/api/gen/kruntimes/dataplane/v1/dataplane_pb.ts";
import { type KubeClient, path, R } from "@kruntimes/kube";
import {
  type ControllerProcess,
  startController,
} from "../../controller/testing/cluster/controller-process.ts";
import {
  createRuntime,
  getRuntime,
  installCrds,
  readyPods,
} from "../../controller/testing/cluster/objects.ts";
import {
  Code,
  ConnectError,
  type DataplaneClient,
  dataplaneClient,
  InvokeFailure_Reason,
  InvokeFailureSchema,
  RouteFailure_Reason,
  RouteFailureSchema,
} from "../../runtimed/dataplane/dataplane-client.ts";
import type { ClusterInfo } from "../localcluster/supervisor.ts";
import { eventually, killLocalContainer, testCluster, testNamespace } from "../support/cluster.ts";
import { callerToken, dataplaneAddress } from "../support/dataplane.ts";
import { runUntil } from "../support/runs.ts";
import { imageRuntime } from "../support/runtimes.ts";

const cluster = testCluster();
// runtimed and the Runtime Server run from this checkout and two tests kill their processes:
// this needs the local cluster's node agent.
const suite = cluster?.local ? describe : describe.skip;

setDefaultTimeout(90_000);

const DATAPLANE_PORT = 8444;
const CALLER = "dp-caller";
const enc = new TextEncoder();
const dec = new TextDecoder();

type Dataplane = DataplaneClient;

const runtime = (name: string, image: string, replicas: number, runs: number) =>
  imageRuntime(name, image, { replicas, runs });

const PY_ECHO = `
import json
calls = 0

def handler(request):
    global calls
    calls += 1
    if request.content_type == "application/json":
        return {"echo": request.json(), "calls": calls}
    return request.body[::-1]

def fail(request):
    raise ValueError("bad input: " + request.body.decode())

def slow(request):
    import time
    print("slow started", flush=True)
    time.sleep(float(request.body.decode() or "5"))
    return "done"
`;

const BASH_ECHO = `
handler() {
  body=$(cat)
  echo "log line for $KRUNTIME_INVOCATION_ID" >&2
  printf 'bash:%s' "$body"
}
fail() {
  echo "it broke" >&2
  exit 3
}
`;

suite("function Runs (real runtimed + Runtime Server, dataplane port)", () => {
  const client = cluster?.client as KubeClient;
  let ns: { name: string; remove(): Promise<void> };
  let ctl: ControllerProcess;
  let token = "";
  let otherToken = "";
  let wrongAudienceToken = "";
  let n = 0;

  async function create(runtimeName: string, spec: Partial<RunSpec>, name = `f${n++}`): Promise<Run> {
    return client.create<Run>(path(RunResource, ns.name), {
      apiVersion: "kruntimes.io/v1alpha1",
      kind: "Run",
      metadata: { name },
      spec: { runtime: runtimeName, mode: { function: {} }, ...spec },
    });
  }
  const get = (name: string) => client.get<Run>(path(RunResource, ns.name, name));
  const until = (name: string, what: string, ok: (r: Run) => boolean, timeoutMs = 60_000) =>
    runUntil(client, ns.name, name, what, ok, timeoutMs);
  const ready = (name: string, timeoutMs?: number) =>
    until(name, "Ready", (r) => r.status?.phase === "Ready", timeoutMs);

  function dataplane(baseUrl: string, bearer: string | undefined = token): Dataplane {
    return dataplaneClient({ baseUrl, token: bearer });
  }

  /** A client routed the way the gateway would: the Run's endpoint, its pod's dataplane address. */
  async function route(run: Run, bearer?: string) {
    const e = run.status?.endpoint;
    if (!e) throw new Error(`${run.metadata.name} has no endpoint`);
    const base = await dataplaneAddress(client, ns.name, run.spec.runtime, e.pod, e.podUID);
    const dp = dataplane(base, bearer);
    const fence = {
      namespace: run.metadata.namespace ?? "",
      runName: run.metadata.name ?? "",
      runUid: run.metadata.uid ?? "",
      podUid: e.podUID,
      attempt: e.attempt,
    };
    let i = 0;
    return {
      dp,
      fence,
      base,
      invoke: (body: string | Uint8Array, o: { contentType?: string; timeoutMs?: number } = {}) =>
        dp.invoke({
          fence,
          invocationId: `${run.metadata.name}-${i++}`,
          body: typeof body === "string" ? enc.encode(body) : body,
          contentType: o.contentType ?? "text/plain",
          timeoutMs: o.timeoutMs ?? 0,
        }),
    };
  }

  async function runtimedLog(pod: string): Promise<string> {
    const res = await client.request<Response>("GET", `${path(R.pods, ns.name, pod)}/log`, {
      query: { container: "runtimed" },
      raw: true,
    });
    return res.text();
  }

  const codeOf = (p: Promise<unknown>) =>
    p.then(
      () => "ok",
      (e) => Code[ConnectError.from(e).code] as string,
    );

  /** SIGKILLs a container's process group (on whichever node runs the pod); its agent restarts it. */
  function killContainer(pod: string, container: string): void {
    killLocalContainer(cluster?.local as ClusterInfo, ns.name, pod, container);
  }

  beforeAll(async () => {
    await installCrds(client);
    ns = await testNamespace(client, "krt-e2e-fn");
    ctl = startController({
      namespace: ns.name,
      kubeconfig: cluster?.kubeconfig as string,
      runtimed: "real",
      flags: [
        "--scheduled-start-timeout=30s",
        `--dataplane-port=${DATAPLANE_PORT}`,
        `--dataplane-subjects=system:serviceaccount:${ns.name}:${CALLER}`,
        "--dataplane-network-policy",
        `--gateway-namespace=${ns.name}`,
        "--gateway-pod-labels=app.kubernetes.io/name=kruntimes-gateway,app.kubernetes.io/instance=e2e",
      ],
    });
    await ctl.waitFor("scheduling and reconciling");
    token = await callerToken(client, ns.name, CALLER);
    otherToken = await callerToken(client, ns.name, "dp-other");
    wrongAudienceToken = await callerToken(client, ns.name, CALLER, "something-else");
    await createRuntime(client, ns.name, runtime("bash", "ghcr.io/kruntimes/bash", 2, 8));
    await createRuntime(client, ns.name, runtime("python", "ghcr.io/kruntimes/python", 1, 8));
    await createRuntime(client, ns.name, runtime("py1", "ghcr.io/kruntimes/python", 1, 1));
    for (const [name, want] of [
      ["bash", 2],
      ["python", 1],
      ["py1", 1],
    ] as const)
      await eventually(
        `Runtime ${name} available`,
        async () => (await getRuntime(client, ns.name, name)).status?.availableReplicas === want,
        120_000,
      );
  }, 240_000);

  afterAll(async () => {
    // Runs carry the function finalizer: let the controller and runtimeds remove it first.
    const runs = await client.list<Run>(path(RunResource, ns.name)).catch(() => ({ items: [] as Run[] }));
    await Promise.all(
      runs.items.map((r) => client.delete(path(RunResource, ns.name, r.metadata.name)).catch(() => {})),
    );
    await eventually(
      "Runs deleted",
      async () => (await client.list<Run>(path(RunResource, ns.name))).items.length === 0,
      60_000,
    ).catch(() => {});
    ctl?.kill();
    await ctl?.exited;
    await ns?.remove();
  }, 120_000);

  test("each Runtime gets its auth-delegator binding and a NetworkPolicy the apiserver accepts", async () => {
    const crb = await client.get<{
      roleRef: { name: string };
      subjects: { name: string; namespace: string }[];
    }>(
      path(
        { group: "rbac.authorization.k8s.io", version: "v1", plural: "clusterrolebindings" },
        undefined,
        `kruntimes-runtimed-${ns.name}-python`,
      ),
    );
    expect(crb.roleRef.name).toBe("system:auth-delegator");
    expect(crb.subjects).toEqual([
      { kind: "ServiceAccount", name: "python-runtimed", namespace: ns.name },
    ] as never);
    const np = await client.get<{
      metadata: { ownerReferences: { kind: string; name: string }[] };
      spec: { ingress: { from?: unknown[]; ports: { port: number; endPort?: number }[] }[] };
    }>(
      path(
        { group: "networking.k8s.io", version: "v1", plural: "networkpolicies" },
        ns.name,
        "python-dataplane",
      ),
    );
    expect(np.metadata.ownerReferences[0]).toMatchObject({ kind: "Runtime", name: "python" });
    expect(np.spec.ingress[0]?.ports).toEqual([{ protocol: "TCP", port: DATAPLANE_PORT }] as never);
    expect(np.spec.ingress[0]?.from).toEqual([
      {
        podSelector: {
          matchLabels: { "app.kubernetes.io/name": "kruntimes-gateway", "app.kubernetes.io/instance": "e2e" },
        },
        namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": ns.name } },
      },
    ]);
    expect(np.spec.ingress[1]?.from).toBeUndefined();
  });

  test("registration → Ready with ONE status write; endpoint, conditions and the finalizer", async () => {
    const statuses: string[] = [];
    const abort = new AbortController();
    const watch = (async () => {
      const res = await client.request<Response>("GET", path(RunResource, ns.name), {
        query: { watch: true, fieldSelector: "metadata.name=one-write" },
        raw: true,
        signal: abort.signal,
      });
      const reader = res.body?.pipeThrough(new TextDecoderStream()).getReader();
      let buf = "";
      for (;;) {
        const { value, done } = (await reader?.read().catch(() => ({ value: undefined, done: true }))) ?? {
          done: true,
        };
        if (done) return;
        buf += value;
        let nl = buf.indexOf("\n");
        while (nl >= 0) {
          const ev = JSON.parse(buf.slice(0, nl)) as { object: Run };
          buf = buf.slice(nl + 1);
          const s = JSON.stringify(ev.object.status ?? null);
          if (statuses[statuses.length - 1] !== s) statuses.push(s);
          nl = buf.indexOf("\n");
        }
      }
    })();
    await Bun.sleep(300);
    await create(
      "python",
      { source: { inline: PY_ECHO }, mode: { function: { handler: "handler" } } },
      "one-write",
    );
    const r = await ready("one-write");
    await Bun.sleep(1000);
    abort.abort();
    await watch.catch(() => {});
    const phases = statuses.map((s) => (JSON.parse(s) as Run["status"])?.phase ?? "none");
    // Bound by the scheduler → Ready by runtimed, ONE status write: no Running in between, no
    // second write after it (the finalizer patch changes metadata, not status).
    expect(phases.slice(phases.indexOf("Scheduled"))).toEqual(["Scheduled", "Ready"]);
    expect(r.metadata.finalizers).toContain(FUNCTION_FINALIZER);
    expect(r.status?.endpoint).toMatchObject({
      pod: r.status?.assignment?.pod,
      podUID: r.status?.assignment?.podUID,
      attempt: 1,
    });
    expect(r.status?.endpoint?.readyMicros).toBeGreaterThan(1.7e15);
    const cond = Object.fromEntries((r.status?.conditions ?? []).map((c) => [c.type, c.status]));
    expect(cond).toMatchObject({ Scheduled: "True", Registered: "True", Ready: "True" });
  });

  test("python: many invocations, JSON and binary bodies of several sizes, module state kept", async () => {
    const r = await ready(
      (await create("python", { source: { inline: PY_ECHO }, mode: { function: { concurrency: 4 } } }))
        .metadata.name as string,
    );
    const rt = await route(r);
    const first = await rt.invoke(JSON.stringify({ a: 1 }), { contentType: "application/json" });
    expect(JSON.parse(dec.decode(first.result?.body))).toEqual({ echo: { a: 1 }, calls: 1 });
    for (const size of [0, 1, 1000, 100_000]) {
      const body = new Uint8Array(size).map((_, i) => i % 251);
      const res = await rt.invoke(body, { contentType: "application/octet-stream" });
      expect(res.result?.handlerError).toBeUndefined();
      expect([...(res.result?.body ?? [])]).toEqual([...body].reverse());
    }
    // 200 invocations, 32 in flight at a time (4 running, the rest in the Run's queue).
    const many: Awaited<ReturnType<typeof rt.invoke>>[] = [];
    for (let i = 0; i < 200; i += 32)
      many.push(
        ...(await Promise.all(
          Array.from({ length: Math.min(32, 200 - i) }, (_, j) =>
            rt.invoke(JSON.stringify({ i: i + j }), { contentType: "application/json" }),
          ),
        )),
      );
    const outs = many.map(
      (m) => JSON.parse(dec.decode(m.result?.body)) as { echo: { i: number }; calls: number },
    );
    expect(outs.map((o) => o.echo.i)).toEqual(Array.from({ length: 200 }, (_, i) => i));
    // Module state: the workers imported the module once each; the counters kept counting.
    expect(Math.max(...outs.map((o) => o.calls))).toBeGreaterThan(1);
    expect((await get(r.metadata.name as string)).status?.phase).toBe("Ready");
  });

  test("bash: many invocations through the sourced script; stderr lines reach runtimed's log", async () => {
    const r = await ready((await create("bash", { source: { inline: BASH_ECHO } })).metadata.name as string);
    const rt = await route(r);
    for (let i = 0; i < 50; i++) {
      const res = await rt.invoke(`hello ${i}`);
      expect(dec.decode(res.result?.body)).toBe(`bash:hello ${i}`);
    }
    const pod = r.status?.endpoint?.pod as string;
    const log = await eventually("invocation log lines in runtimed's log", async () => {
      const res = await client.request<Response>("GET", `${path(R.pods, ns.name, pod)}/log`, {
        query: { container: "runtimed" },
        raw: true,
      });
      const text = await res.text();
      return text.includes(`log line for ${r.metadata.name}-49`) ? text : undefined;
    });
    const rec = log
      .split("\n")
      .filter((l) => l.includes('"msg":"output"') && l.includes(`${r.metadata.name}-3"`))
      .map((l) => JSON.parse(l) as Record<string, unknown>)[0];
    expect(rec).toMatchObject({
      run: r.metadata.name,
      runUID: r.metadata.uid,
      namespace: ns.name,
      attempt: 1,
      invocation: `${r.metadata.name}-3`,
      stream: "stderr",
      line: `log line for ${r.metadata.name}-3`,
    });
  });

  test("a handler error is a structured answer and the Run stays Ready (python and bash)", async () => {
    const py = await ready(
      (await create("python", { source: { inline: PY_ECHO }, mode: { function: { handler: "fail" } } }))
        .metadata.name as string,
    );
    const sh = await ready(
      (await create("bash", { source: { inline: BASH_ECHO }, mode: { function: { handler: "fail" } } }))
        .metadata.name as string,
    );
    const pyErr = (await (await route(py)).invoke("x")).result?.handlerError;
    expect(pyErr).toMatchObject({ type: "ValueError", message: "bad input: x" });
    expect(pyErr?.traceback).toContain("ValueError");
    const shErr = (await (await route(sh)).invoke("x")).result?.handlerError;
    expect(shErr).toMatchObject({ exitCode: 3 });
    expect(shErr?.traceback).toContain("it broke");
    for (const name of [py.metadata.name, sh.metadata.name])
      expect((await get(name as string)).status?.phase).toBe("Ready");
  });

  test("idle timeout ends the Run (Succeeded/IdleTimeout) and frees its capacity for a queued Run", async () => {
    const idle = await ready(
      (await create("py1", { source: { inline: PY_ECHO }, mode: { function: { idleTimeout: "3s" } } }))
        .metadata.name as string,
    );
    expect(dec.decode((await (await route(idle)).invoke("ab")).result?.body)).toBe("ba");
    const queued = await create("py1", { source: { inline: PY_ECHO } });
    await until(queued.metadata.name as string, "waiting for capacity", (x) =>
      Boolean(x.status?.phase === "Pending" && x.status.waitingReason === "InsufficientCapacity"),
    );
    const done = await until(idle.metadata.name as string, "ended", (x) => isTerminalPhase(x.status?.phase));
    expect(done.status).toMatchObject({ phase: "Succeeded", reason: "IdleTimeout" });
    expect(done.status?.endpoint).toBeUndefined();
    // The finalizer goes right after the terminal write (a second, metadata write).
    await until(
      done.metadata.name as string,
      "finalizer removed",
      (x) => !x.metadata.finalizers?.includes(FUNCTION_FINALIZER),
    );
    await ready(queued.metadata.name as string);
    await client.delete(path(RunResource, ns.name, queued.metadata.name));
  });

  test("a source that does not load: retried per retryPolicy, then Failed/RetriesExhausted with the error", async () => {
    const r = await create("python", {
      source: { inline: "def handler(request):\n    return (\n" },
      retryPolicy: { maxAttempts: 2, retryOn: ["RegistrationFailed"], backoff: { initial: "100ms" } },
    });
    const done = await until(r.metadata.name as string, "ended", (x) => isTerminalPhase(x.status?.phase));
    expect(done.status).toMatchObject({ phase: "Failed", reason: "RetriesExhausted", attempt: 2 });
    expect(done.status?.message).toStartWith("all 2 attempts failed; attempt 2 with RegistrationFailed: ");
    expect(done.status?.message).toContain("SyntaxError");
    expect(done.status?.endpoint).toBeUndefined();
    // The finalizer goes right after the terminal write (a second, metadata write).
    await until(
      done.metadata.name as string,
      "finalizer removed",
      (x) => !x.metadata.finalizers?.includes(FUNCTION_FINALIZER),
    );
  });

  test("spec.timeout bounds the whole lifetime: Timeout, even while invocations keep coming", async () => {
    const r = await ready(
      (await create("bash", { source: { inline: BASH_ECHO }, timeout: "3s" })).metadata.name as string,
    );
    const rt = await route(r);
    while (!isTerminalPhase((await get(r.metadata.name as string)).status?.phase)) {
      await rt.invoke("keep-alive").catch(() => {});
      await Bun.sleep(200);
    }
    const done = await get(r.metadata.name as string);
    expect(done.status).toMatchObject({ phase: "Timeout", reason: "Timeout" });
    const t = done.status?.timing ?? {};
    expect((t.finishedMicros as number) - (t.startedMicros as number)).toBeGreaterThanOrEqual(3_000_000);
  });

  test("cancel during an invocation: the invocation fails, the Run ends Cancelled", async () => {
    const r = await ready(
      (await create("python", { source: { inline: PY_ECHO }, mode: { function: { handler: "slow" } } }))
        .metadata.name as string,
    );
    const rt = await route(r);
    const inFlight = codeOf(rt.invoke("20"));
    await Bun.sleep(500);
    await client.patch(
      path(RunResource, ns.name, r.metadata.name),
      { spec: { termination: { mode: "Immediate" } } },
      "merge",
    );
    const done = await until(r.metadata.name as string, "Cancelled", (x) => isTerminalPhase(x.status?.phase));
    expect(done.status).toMatchObject({ phase: "Cancelled", reason: "Cancelled" });
    expect(await inFlight).not.toBe("ok");
    const after = await codeOf(rt.invoke("0"));
    expect(after).toBe("FailedPrecondition");
  });

  test("deleting a Ready Run: drained, finalizer removed, the Run is gone and no longer served", async () => {
    const r = await ready((await create("bash", { source: { inline: BASH_ECHO } })).metadata.name as string);
    const rt = await route(r);
    expect(dec.decode((await rt.invoke("x")).result?.body)).toBe("bash:x");
    await client.delete(path(RunResource, ns.name, r.metadata.name));
    await eventually("the Run is gone", async () => {
      try {
        await get(r.metadata.name as string);
        return false;
      } catch {
        return true;
      }
    });
    const err = await rt.invoke("x").then(
      () => undefined,
      (e) => ConnectError.from(e),
    );
    expect(err?.code).toBe(Code.FailedPrecondition);
    expect(err?.findDetails(RouteFailureSchema)[0]?.reason).toBe(RouteFailure_Reason.NOT_SERVED);
  });

  /**
   * Invokes in a loop with `parallel` callers until `stop()`; a refused route or an unreachable
   * runtimed is retried (as the gateway does), anything else that is not an answer is a failure.
   */
  function invocationStream(rt: Awaited<ReturnType<typeof route>>, parallel: number) {
    let running = true;
    /** `startedMs`: when the failed call was sent (performance.now()). */
    const failures: { startedMs: number; what: string }[] = [];
    let answered = 0;
    let retried = 0;
    const worker = async (w: number) => {
      let i = 0;
      while (running) {
        const body = `w${w}-${i++}`;
        for (;;) {
          const startedMs = performance.now();
          try {
            const res: InvokeResponse = await rt.invoke(body);
            if (dec.decode(res.result?.body) !== `bash:${body}`)
              failures.push({ startedMs, what: `wrong answer for ${body}` });
            answered++;
            break;
          } catch (e) {
            const err = ConnectError.from(e);
            const route = err.findDetails(RouteFailureSchema)[0];
            const server = err.findDetails(InvokeFailureSchema)[0]?.reason;
            // Provably not sent to the function — runtimed's port refused (it is restarting) or it is
            // re-adopting, the Runtime Server restarting or not registered again yet — so retried, as
            // the gateway does. A call cut mid-flight (UNAVAILABLE otherwise) may have run: a failure.
            const notReached =
              /ECONNREFUSED|Unable to connect/.test(err.message) ||
              (route !== undefined && route.reason !== RouteFailure_Reason.WRONG_POD) ||
              server === InvokeFailure_Reason.NOT_REGISTERED ||
              server === InvokeFailure_Reason.NOT_READY;
            if (notReached) {
              retried++;
              await Bun.sleep(50);
              if (!running) break;
              continue;
            }
            failures.push({ startedMs, what: `${body}: ${Code[err.code]} ${err.rawMessage}` });
            break;
          }
        }
      }
    };
    const done = Promise.all(Array.from({ length: parallel }, (_, w) => worker(w)));
    return {
      get answered() {
        return answered;
      },
      get retried() {
        return retried;
      },
      failures,
      /**
       * Checks the failures against the moment `killedAtMs` a process died and the moment
       * `recoveredAtMs` calls were seen flowing again: calls sent before the death (in flight) may
       * fail, at most one per caller; a call sent between the two may only have failed on a
       * kept-alive connection the dead process left behind (reset before any answer: it reached
       * no live process — how many such connections the pool held is not known, so they are not
       * counted); nothing sent after the recovery may fail.
       */
      expectOnlyInFlightFailed(killedAtMs: number, recoveredAtMs: number) {
        const inFlight = failures.filter((f) => f.startedMs < killedAtMs);
        const between = failures.filter((f) => f.startedMs >= killedAtMs && f.startedMs < recoveredAtMs);
        const afterwards = failures.filter((f) => f.startedMs >= recoveredAtMs);
        expect(inFlight.length).toBeLessThanOrEqual(parallel);
        expect(
          between.filter((f) => !/ECONNRESET|connection was closed/.test(f.what)).map((f) => f.what),
        ).toEqual([]);
        expect(afterwards.map((f) => f.what)).toEqual([]);
      },
      async stop() {
        running = false;
        await done;
      },
    };
  }

  /**
   * Kills one container of a Ready bash function's pod during a stream of invocations and checks:
   * calls come back (only in-flight ones, or resets on connections the dead process left, failed),
   * runtimed recovered as `recoveredLog` says, and the Run was never touched.
   */
  async function killDuringStream(container: "runtimed" | "runtime", recoveredLog: string) {
    const r = await ready((await create("bash", { source: { inline: BASH_ECHO } })).metadata.name as string);
    const rt = await route(r);
    const stream = invocationStream(rt, 4);
    await eventually("invocations flowing", async () => stream.answered > 20);
    const pod = r.status?.endpoint?.pod as string;
    const killedAtMs = performance.now();
    killContainer(pod, container);
    const before = stream.answered;
    await eventually(
      `invocations flowing again after ${container} restarted`,
      async () => stream.answered > before + 50,
      60_000,
    );
    const recoveredAtMs = performance.now();
    const recovered = stream.answered;
    await eventually(
      "more invocations after the recovery",
      async () => stream.answered > recovered + 50,
      60_000,
    );
    await stream.stop();
    stream.expectOnlyInFlightFailed(killedAtMs, recoveredAtMs);
    // It did go away (calls were refused meanwhile) and came back the way the log says.
    expect(stream.retried).toBeGreaterThan(0);
    expect(await runtimedLog(pod)).toContain(recoveredLog);
    const after = await get(r.metadata.name as string);
    expect(after.status?.phase).toBe("Ready");
    expect(after.status?.attempt).toBe(1);
    expect(after.status?.endpoint).toEqual(r.status?.endpoint);
  }

  test("runtimed killed during a stream of invocations: re-adopted, the Run untouched, at most the in-flight fail", () =>
    killDuringStream("runtimed", "re-adopted the registration the Runtime Server kept"));

  test("the Runtime Server killed during a stream: registered again under the same attempt, no Run failure", () =>
    killDuringStream("runtime", "function registered again (the server had lost it)"));

  test("pod deleted: re-placed (attempt 2), registered elsewhere with a new endpoint; the old route is refused", async () => {
    const r = await ready(
      (
        await create("bash", {
          source: { inline: BASH_ECHO },
          retryPolicy: { maxAttempts: 2, backoff: { initial: "100ms" } },
        })
      ).metadata.name as string,
    );
    const old = await route(r);
    expect(dec.decode((await old.invoke("before")).result?.body)).toBe("bash:before");
    await client.delete(path(R.pods, ns.name, r.status?.endpoint?.pod));
    const moved = await until(
      r.metadata.name as string,
      "Ready on another pod",
      (x) => x.status?.phase === "Ready" && x.status.endpoint?.podUID !== r.status?.endpoint?.podUID,
      120_000,
    );
    expect(moved.status?.attempt).toBe(2);
    expect(moved.status?.endpoint?.attempt).toBe(2);
    const now = await route(moved);
    expect(dec.decode((await now.invoke("after")).result?.body)).toBe("bash:after");
    // The old fence against the new pod: wrong pod.
    const stale = await now.dp
      .invoke({ fence: old.fence, invocationId: "stale", body: enc.encode("x") })
      .then(
        () => undefined,
        (e) => ConnectError.from(e),
      );
    expect(stale?.findDetails(RouteFailureSchema)[0]?.reason).toBe(RouteFailure_Reason.WRONG_POD);
    await eventually(
      "bash back to 2 ready pods",
      async () => (await readyPods(client, ns.name, "bash")).length === 2,
      120_000,
    );
  }, 240_000);

  test("two function Runs share a pod, each served under its own fence", async () => {
    const a = await ready((await create("python", { source: { inline: PY_ECHO } })).metadata.name as string);
    const b = await ready(
      (await create("python", { source: { inline: PY_ECHO }, mode: { function: { handler: "fail" } } }))
        .metadata.name as string,
    );
    expect(a.status?.endpoint?.podUID).toBe(b.status?.endpoint?.podUID as string);
    const [ra, rb] = [await route(a), await route(b)];
    expect(dec.decode((await ra.invoke("abc")).result?.body)).toBe("cba");
    expect((await rb.invoke("abc")).result?.handlerError?.type).toBe("ValueError");
  });

  test("stale routes are refused with a RouteFailure the gateway can act on", async () => {
    const r = await ready((await create("python", { source: { inline: PY_ECHO } })).metadata.name as string);
    const rt = await route(r);
    const reason = async (fence: typeof rt.fence) => {
      const e = await rt.dp.invoke({ fence, invocationId: "s", body: enc.encode("x") }).then(
        () => undefined,
        (x) => ConnectError.from(x),
      );
      expect(e?.code).toBe(Code.FailedPrecondition);
      return RouteFailure_Reason[e?.findDetails(RouteFailureSchema)[0]?.reason ?? 0];
    };
    expect(await reason({ ...rt.fence, podUid: "not-this-pod" })).toBe("WRONG_POD");
    expect(await reason({ ...rt.fence, attempt: 2 })).toBe("WRONG_ATTEMPT");
    expect(await reason({ ...rt.fence, runUid: "no-such-run" })).toBe("NOT_SERVED");
  });

  test("callers without a token, with another audience or as another subject are refused", async () => {
    const r = await ready((await create("python", { source: { inline: PY_ECHO } })).metadata.name as string);
    const none = await route(r, "");
    expect(await codeOf(none.invoke("x"))).toBe("Unauthenticated");
    expect(await codeOf((await route(r, "not-a-token")).invoke("x"))).toBe("Unauthenticated");
    expect(await codeOf((await route(r, wrongAudienceToken)).invoke("x"))).toBe("Unauthenticated");
    expect(await codeOf((await route(r, otherToken)).invoke("x"))).toBe("PermissionDenied");
    expect(await codeOf((await route(r)).invoke("x"))).toBe("ok");
  });

  test("deleting a Runtime deletes runtimed's cluster-scoped binding too", async () => {
    const crbs = { group: "rbac.authorization.k8s.io", version: "v1", plural: "clusterrolebindings" };
    const name = `kruntimes-runtimed-${ns.name}-py1`;
    await client.get(path(crbs, undefined, name));
    await client.delete(
      path({ group: "kruntimes.io", version: "v1alpha1", plural: "runtimes" }, ns.name, "py1"),
    );
    await eventually("the binding deleted", async () => {
      try {
        await client.get(path(crbs, undefined, name));
        return false;
      } catch {
        return true;
      }
    });
  });
});
