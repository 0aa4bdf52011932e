/**
 * Function mode (FunctionService): register and its fence (idempotent, stale refused, newer
 * replaces), load failures, invocations (JSON, binary, sizes, headers), state kept by the
 * workers, handler errors, crashed and timed-out workers replaced, concurrency measured by
 * markers, the bounded queue, size limits, idle timeout, unregister (drain vs cancel), logs on
 * Watch keyed by invocation, List, and the server's drain. Waits for states, never for time.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { MessageInitShape } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import {
  FunctionEndReason,
  type FunctionServiceWatchResponse,
  FunctionState,
  InvokeFailure_Reason,
  InvokeFailureSchema,
  type InvokeResponse,
  type RegisterRequestSchema,
  UnregisterMode,
} from "../../../api/gen/kruntimes/runtime/v1/function_pb.ts";
import { Mode } from "../../../api/gen/kruntimes/runtime/v1/runtime_pb.ts";
import { SERVER_TIMEOUT_MS, ServerProcess } from "../server-process.ts";
import { expectConnectError, type SuiteContext, uid, until } from "./helpers.ts";

type RegisterInit = Omit<MessageInitShape<typeof RegisterRequestSchema>, "$typeName">;
const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** The Connect code and InvokeFailure of a failed Invoke. */
async function invokeFailure(
  call: Promise<unknown>,
): Promise<{ code: string; reason: string; retryAfterMs: number; message: string }> {
  try {
    await call;
  } catch (error) {
    const ce = ConnectError.from(error);
    const [detail] = ce.findDetails(InvokeFailureSchema);
    return {
      code: Code[ce.code],
      reason: detail === undefined ? "none" : InvokeFailure_Reason[detail.reason],
      retryAfterMs: detail?.retryAfterMs ?? 0,
      message: ce.rawMessage,
    };
  }
  throw new Error("expected the invocation to fail, it succeeded");
}

/** Collects a Watch stream. */
class WatchLog {
  readonly events: FunctionServiceWatchResponse[] = [];
  readonly done: Promise<void>;
  constructor(stream: AsyncIterable<FunctionServiceWatchResponse>) {
    this.done = (async () => {
      for await (const event of stream) this.events.push(event);
    })();
    this.done.catch(() => {});
  }
  get ended() {
    for (const e of this.events) if (e.event.case === "ended") return e.event.value;
    return undefined;
  }
  lines(invocationId: string, stream: string): string[] {
    const out: string[] = [];
    for (const e of this.events) {
      if (
        e.event.case === "log" &&
        e.event.value.invocationId === invocationId &&
        e.event.value.stream === stream
      ) {
        out.push(...e.event.value.lines);
      }
    }
    return out;
  }
}

export function functionSuite(ctx: SuiteContext): void {
  const fn = ctx.scripts.functions;

  describe("functions", () => {
    const server = () => ctx.server();
    // Binary protobuf, as runtimed calls the server (Invoke takes the server's fast path);
    // one test below checks the same calls in JSON.
    const client = () => server().binaryClients.functions;
    let markers: string;
    beforeAll(() => {
      markers = mkdtempSync(join(tmpdir(), "krt-fn-"));
    });
    afterAll(() => rmSync(markers, { recursive: true, force: true }));

    async function register(handler: string, more: Partial<RegisterInit> = {}) {
      const runUid = more.runUid ?? uid("fn");
      const res = await client().register({
        runUid,
        runName: "fn",
        attempt: 1,
        source: fn.source,
        handler,
        ...more,
      });
      return { runUid, res, registration: res.registration! };
    }

    function invoke(
      runUid: string,
      invocationId: string,
      body: string | Uint8Array,
      more: {
        contentType?: string;
        headers?: Record<string, string>;
        attempt?: number;
        timeoutMs?: number;
      } = {},
    ): Promise<InvokeResponse> {
      return client().invoke({
        runUid,
        attempt: more.attempt ?? 1,
        invocationId,
        body: typeof body === "string" ? encoder.encode(body) : body,
        contentType: more.contentType ?? "",
        headers: more.headers ?? {},
        timeoutMs: more.timeoutMs ?? 0,
      });
    }

    const status = async (runUid: string) => (await client().status({ runUid })).registration!;

    /** A fresh marker directory for h_wait. */
    function waitDir(): string {
      return mkdtempSync(join(markers, "w-"));
    }
    const started = (dir: string, id: string) => existsSync(join(dir, `${id}.start`));
    const release = (dir: string) => writeFileSync(join(dir, "go"), "");

    test("Info reports MODE_FUNCTION", async () => {
      expect((await server().clients.runtime.info({})).modes).toContain(Mode.FUNCTION);
    });

    test("register → READY with the effective limits; the same attempt again is the same registration", async () => {
      const { runUid, res, registration } = await register("h_echo");
      expect(res.created).toBe(true);
      expect(FunctionState[registration.state]).toBe("READY");
      expect(registration.readyMicros).toBeGreaterThan(0n);
      expect(registration.concurrency).toBe(1);
      expect(registration.limits!.maxRequestBytes).toBe(1024 * 1024);
      expect(registration.limits!.invocationTimeoutMs).toBe(30_000);
      const again = await client().register({
        runUid,
        runName: "fn",
        attempt: 1,
        source: fn.source,
        handler: "h_echo",
      });
      expect(again.created).toBe(false);
      expect(again.registration!.readyMicros).toBe(registration.readyMicros);
      expect((await client().list({})).registrations.some((r) => r.runUid === runUid)).toBe(true);
    });

    test("an older attempt is refused; a newer one replaces the registration", async () => {
      const { runUid } = await register("h_state", { attempt: 2 });
      await expectConnectError(
        client().register({ runUid, runName: "fn", attempt: 1, source: fn.source, handler: "h_state" }),
        Code.FailedPrecondition,
      );
      const watch = new WatchLog(client().watch({ runUid, attempt: 2 }));
      await until(() => watch.events.length > 0, 10_000, "the first Watch event");
      const newer = await client().register({
        runUid,
        runName: "fn",
        attempt: 3,
        source: fn.source,
        handler: "h_state",
      });
      expect(newer.created).toBe(true);
      expect(newer.registration!.attempt).toBe(3);
      await watch.done;
      expect(FunctionEndReason[watch.ended!.endReason]).toBe("CANCELLED");
      const stale = await invokeFailure(invoke(runUid, "a", "", { attempt: 2 }));
      expect([stale.code, stale.reason]).toEqual(["FailedPrecondition", "STALE"]);
      expect(decoder.decode((await invoke(runUid, "b", "", { attempt: 3 })).body)).toBe(
        fn.stateResponses[0]!,
      );
    });

    test("a source that does not load: FAILED with the error, not invocable", async () => {
      const { runUid, registration } = await register("h_echo", { source: fn.syntaxError.source });
      expect(FunctionState[registration.state]).toBe("FAILED");
      expect(FunctionEndReason[registration.endReason]).toBe("REGISTRATION_FAILED");
      expect(registration.error).toContain(fn.syntaxError.says);
      const failure = await invokeFailure(invoke(runUid, "a", ""));
      expect([failure.code, failure.reason]).toEqual(["FailedPrecondition", "NOT_READY"]);
      const missing = (await register("no_such_handler")).registration;
      expect(FunctionState[missing.state]).toBe("FAILED");
      expect(missing.error).toContain("no_such_handler");
      if (fn.notCallable !== undefined) {
        const notCallable = (await register(fn.notCallable)).registration;
        expect(FunctionState[notCallable.state]).toBe("FAILED");
        expect(notCallable.error).toContain("not callable");
      }
    });

    test("invocations: JSON, binary bodies of several sizes, content types and headers", async () => {
      const { runUid } = await register("h_echo");
      for (const size of [0, 1, 1000, 64 * 1024, 1024 * 1024]) {
        const body = new Uint8Array(size);
        for (let i = 0; i < size; i++) body[i] = (i * 7 + 3) % 256;
        const res = await invoke(runUid, `size-${size}`, body, { contentType: "application/x-test" });
        expect(res.status).toBe(200);
        expect(res.contentType).toBe("application/x-test");
        expect(res.headers["x-echo"]).toBe("1");
        expect(res.body.length).toBe(size);
        expect(Buffer.from(res.body).equals(Buffer.from(body))).toBe(true);
      }
      const json = await register("h_json");
      const res = await invoke(json.runUid, "json-1", JSON.stringify({ a: [1, 2], b: "é" }), {
        contentType: "application/json",
      });
      expect(res.contentType).toBe("application/json");
      expect(JSON.parse(decoder.decode(res.body))).toEqual({ got: { a: [1, 2], b: "é" }, id: "json-1" });
      const header = await register("h_header");
      expect(
        decoder.decode((await invoke(header.runUid, "h-1", "", { headers: { "x-test": "v1 v2" } })).body),
      ).toBe("v1 v2");
    });

    test("state kept by the registration between invocations", async () => {
      const { runUid } = await register("h_state");
      const got: string[] = [];
      for (let i = 0; i < fn.stateResponses.length; i++)
        got.push(decoder.decode((await invoke(runUid, `s${i}`, "")).body));
      expect(got).toEqual(fn.stateResponses);
      expect(Number((await status(runUid)).invocations)).toBe(fn.stateResponses.length);
    });

    test("a handler error is structured and the registration stays READY", async () => {
      const { runUid } = await register("h_fail");
      const res = await invoke(runUid, "f-1", "");
      expect(res.handlerError?.type).toBe(fn.failType);
      expect(res.handlerError?.traceback).toContain("boom");
      expect(res.handlerError?.exitCode).toBe(fn.failExitCode);
      expect(res.body.length).toBe(0);
      expect(FunctionState[(await status(runUid)).state]).toBe("READY");
      expect((await invoke(runUid, "f-2", "")).handlerError?.type).toBe(fn.failType);
    });

    test("a crashed worker fails its invocation WORKER_CRASHED and is replaced", async () => {
      const { runUid } = await register("h_crash");
      const failure = await invokeFailure(invoke(runUid, "c-1", ""));
      expect([failure.code, failure.reason]).toEqual(["Unavailable", "WORKER_CRASHED"]);
      expect(FunctionState[(await status(runUid)).state]).toBe("READY");
      // The replacement serves (it crashes again, which proves it ran the handler).
      const again = await invokeFailure(invoke(runUid, "c-2", ""));
      expect(again.reason).toBe("WORKER_CRASHED");
    });

    test("an invocation over its timeout fails TIMEOUT; the worker is replaced", async () => {
      const { runUid } = await register("h_wait", { invocationTimeoutMs: 60_000 });
      const dir = waitDir();
      // The handler cannot finish before "go" exists: the timeout is certain, however slow the machine.
      const failure = await invokeFailure(invoke(runUid, "t-1", dir, { timeoutMs: 300 }));
      expect([failure.code, failure.reason]).toEqual(["DeadlineExceeded", "TIMEOUT"]);
      release(dir);
      // The killed worker's replacement serves.
      expect(decoder.decode((await invoke(runUid, "t-2", dir)).body)).toBe("done");
    });

    test("concurrency N runs N invocations at once; concurrency 1 runs one", async () => {
      const n = 3;
      const wide = await register("h_wait", { concurrency: n });
      expect(wide.registration.concurrency).toBe(n);
      const dir = waitDir();
      const calls = Array.from({ length: n }, (_, i) => invoke(wide.runUid, `o-${i}`, dir));
      // All n handlers are inside at the same time: each wrote its start marker, none can leave yet.
      await until(
        () => Array.from({ length: n }, (_, i) => started(dir, `o-${i}`)).every(Boolean),
        20_000,
        "n handlers inside",
      );
      expect((await status(wide.runUid)).inFlight).toBe(n);
      release(dir);
      expect((await Promise.all(calls)).map((r) => decoder.decode(r.body))).toEqual(Array(n).fill("done"));

      const narrow = await register("h_wait");
      const dir1 = waitDir();
      const first = invoke(narrow.runUid, "p-0", dir1);
      await until(() => started(dir1, "p-0"), 20_000, "the first handler inside");
      const second = invoke(narrow.runUid, "p-1", dir1);
      await until(
        async () => (await status(narrow.runUid)).queued === 1,
        20_000,
        "the second invocation queued",
      );
      expect(started(dir1, "p-1")).toBe(false);
      release(dir1);
      expect(decoder.decode((await first).body)).toBe("done");
      const secondRes = await second;
      expect(decoder.decode(secondRes.body)).toBe("done");
      expect(secondRes.queuedMicros).toBeGreaterThan(0n);
    });

    test("a full queue refuses with BUSY and a retry hint", async () => {
      const { runUid } = await register("h_wait", { queueLimit: 1 });
      const dir = waitDir();
      const running = invoke(runUid, "q-0", dir);
      await until(() => started(dir, "q-0"), 20_000, "the first handler inside");
      const queued = invoke(runUid, "q-1", dir);
      await until(async () => (await status(runUid)).queued === 1, 20_000, "one invocation queued");
      const busy = await invokeFailure(invoke(runUid, "q-2", dir));
      expect([busy.code, busy.reason]).toEqual(["ResourceExhausted", "BUSY"]);
      expect(busy.retryAfterMs).toBeGreaterThan(0);
      release(dir);
      await Promise.all([running, queued]);
    });

    test("request and response size limits", async () => {
      const echo = await register("h_echo", { maxRequestBytes: 1024 });
      expect((await invoke(echo.runUid, "r-ok", new Uint8Array(1024))).body.length).toBe(1024);
      const tooBig = await invokeFailure(invoke(echo.runUid, "r-big", new Uint8Array(1025)));
      expect([tooBig.code, tooBig.reason]).toEqual(["ResourceExhausted", "REQUEST_TOO_LARGE"]);
      const big = await register("h_big", { maxResponseBytes: 1000 });
      expect((await invoke(big.runUid, "b-ok", "1000")).body.length).toBe(1000);
      const over = await invokeFailure(invoke(big.runUid, "b-big", "1001"));
      expect([over.code, over.reason]).toEqual(["ResourceExhausted", "RESPONSE_TOO_LARGE"]);
      expect((await invoke(big.runUid, "b-after", "10")).body.length).toBe(10);
    });

    test("Invoke in Connect JSON: the same answers and error details", async () => {
      const json = server().clients.functions;
      const { runUid } = await register("h_json");
      const res = await json.invoke({ runUid, attempt: 1, invocationId: "j-1", body: encoder.encode("[1]") });
      expect(JSON.parse(decoder.decode(res.body))).toEqual({ got: [1], id: "j-1" });
      const stale = await invokeFailure(json.invoke({ runUid, attempt: 2, invocationId: "j-2" }));
      expect([stale.code, stale.reason]).toEqual(["FailedPrecondition", "STALE"]);
    });

    test("bad calls: unknown run NOT_REGISTERED, bad invocation id INVALID, unknown Status NOT_FOUND", async () => {
      const unknown = await invokeFailure(invoke("no-such-run", "a", ""));
      expect([unknown.code, unknown.reason]).toEqual(["NotFound", "NOT_REGISTERED"]);
      const { runUid } = await register("h_echo");
      const bad = await invokeFailure(invoke(runUid, "bad id!", ""));
      expect([bad.code, bad.reason]).toEqual(["InvalidArgument", "INVALID"]);
      await expectConnectError(client().status({ runUid: "no-such-run" }), Code.NotFound);
    });

    test("idle timeout ends the registration with IDLE_TIMEOUT on Watch", async () => {
      const { runUid } = await register("h_echo", { idleTimeoutMs: 300 });
      // Subscribed before or after the end, Watch ends with it.
      const watch = new WatchLog(client().watch({ runUid, attempt: 1 }));
      await watch.done;
      const ended = watch.ended!;
      expect(FunctionState[ended.state]).toBe("ENDED");
      expect(FunctionEndReason[ended.endReason]).toBe("IDLE_TIMEOUT");
      expect(ended.endedMicros - ended.lastInvocationMicros).toBeGreaterThanOrEqual(300_000n);
      const failure = await invokeFailure(invoke(runUid, "i-1", "x"));
      expect(failure.reason).toBe("NOT_READY");
    });

    test("unregister DRAIN lets the in-flight invocation finish and refuses new ones", async () => {
      const { runUid } = await register("h_wait");
      const dir = waitDir();
      const inFlight = invoke(runUid, "d-1", dir);
      await until(() => started(dir, "d-1"), 20_000, "the handler inside");
      const unregistered = client().unregister({
        runUid,
        attempt: 1,
        mode: UnregisterMode.DRAIN,
        drainTimeoutMs: 60_000,
      });
      await until(async () => (await status(runUid)).state === FunctionState.DRAINING, 20_000, "DRAINING");
      const refused = await invokeFailure(invoke(runUid, "d-2", dir));
      expect(refused.reason).toBe("NOT_READY");
      release(dir);
      expect(decoder.decode((await inFlight).body)).toBe("done");
      const final = (await unregistered).registration!;
      expect([FunctionState[final.state], FunctionEndReason[final.endReason]]).toEqual(["ENDED", "DRAINED"]);
    });

    test("unregister CANCEL stops the in-flight invocation at once", async () => {
      const { runUid } = await register("h_wait");
      const dir = waitDir();
      const inFlight = invoke(runUid, "x-1", dir);
      await until(() => started(dir, "x-1"), 20_000, "the handler inside");
      const final = (await client().unregister({ runUid, attempt: 1, mode: UnregisterMode.CANCEL }))
        .registration!;
      expect([FunctionState[final.state], FunctionEndReason[final.endReason]]).toEqual([
        "ENDED",
        "CANCELLED",
      ]);
      const failure = await invokeFailure(inFlight);
      expect([failure.code, failure.reason]).toEqual(["Canceled", "CANCELLED"]);
      // Idempotent, and an older attempt is refused.
      expect(
        FunctionState[
          (await client().unregister({ runUid, attempt: 1, mode: UnregisterMode.CANCEL })).registration!.state
        ],
      ).toBe("ENDED");
      await expectConnectError(client().unregister({ runUid, attempt: 0 }), Code.FailedPrecondition);
    });

    test("logs of an invocation reach Watch keyed by its invocation id", async () => {
      const { runUid } = await register("h_logs");
      const watch = new WatchLog(client().watch({ runUid, attempt: 1 }));
      await until(() => watch.events.length > 0, 10_000, "the first Watch event");
      expect(watch.events[0]!.event.case).toBe("state");
      expect(decoder.decode((await invoke(runUid, "log-1", "")).body)).toBe("ok");
      await until(() => watch.lines("log-1", "stderr").length > 0, 10_000, "the log line");
      expect(watch.lines("log-1", "stderr")).toEqual(["err-line"]);
      if (fn.logStreams.includes("stdout")) expect(watch.lines("log-1", "stdout")).toEqual(["out-line"]);
      await client().unregister({ runUid, attempt: 1, mode: UnregisterMode.CANCEL });
      await watch.done;
      expect(watch.events.at(-1)!.event.case).toBe("ended");
    });

    test(
      "SIGTERM drains registrations: each ends DRAINED",
      async () => {
        const own = await ServerProcess.start(ctx.target, { warmPool: 0, env: ctx.containerEnv });
        try {
          const runUid = uid("fn");
          await own.clients.functions.register({
            runUid,
            runName: "fn",
            attempt: 1,
            source: fn.source,
            handler: "h_echo",
          });
          const watch = new WatchLog(own.clients.functions.watch({ runUid }));
          await until(() => watch.events.length > 0, 10_000, "the first Watch event");
          own.proc.kill("SIGTERM");
          await watch.done;
          expect(FunctionEndReason[watch.ended!.endReason]).toBe("DRAINED");
          expect(await own.proc.exited).toBe(0);
        } finally {
          await own.stop();
        }
      },
      SERVER_TIMEOUT_MS,
    );
  });
}
