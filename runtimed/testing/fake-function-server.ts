/**
 * An in-process FunctionService following function.proto's rules, for runtimed's unit tests (the
 * e2e suite uses the real Runtime Server): Register is idempotent per attempt and refuses older
 * ones, a source containing `SYNTAX ERROR` fails to load, Watch streams the state, log lines and
 * the end, Unregister ends it; the test can emit log lines, end a registration by idle timeout,
 * or make the server forget it (a restarted server). Test infrastructure only.
 */
import { create } from "@bufbuild/protobuf";
import { type Client, Code, ConnectError, createClient, createRouterTransport } from "@connectrpc/connect";
import {
  FunctionEndReason,
  type FunctionRegistration,
  FunctionRegistrationSchema,
  FunctionService,
  type FunctionServiceWatchResponse,
  FunctionState,
  type RegisterRequest,
  UnregisterMode,
} from "@kruntimes/api/gen/kruntimes/runtime/v1/function_pb.ts";

type Event = FunctionServiceWatchResponse["event"];

/** int64 fields are bigint or number depending on how the code was generated (jstype). */
const BIG = typeof create(FunctionRegistrationSchema).readyMicros === "bigint";
function micros(n: number): never {
  return (BIG ? BigInt(Math.round(n)) : Math.round(n)) as never;
}

interface Entry {
  reg: FunctionRegistration;
  req: RegisterRequest;
  watchers: Set<(e: Event | "gone") => void>;
}

export class FakeFunctionServer {
  readonly entries = new Map<string, Entry>();
  readonly calls: string[] = [];
  readonly client: Client<typeof FunctionService>;

  constructor() {
    const transport = createRouterTransport(({ service }) => {
      service(FunctionService, {
        register: (req) => {
          this.calls.push(`register ${req.runUid}/${req.attempt}`);
          const cur = this.entries.get(req.runUid);
          if (cur && req.attempt < cur.reg.attempt)
            throw new ConnectError("older attempt", Code.FailedPrecondition);
          if (cur && cur.reg.attempt === req.attempt && cur.reg.state !== FunctionState.ENDED)
            return { registration: cur.reg, created: false };
          if (cur) this.end(req.runUid, FunctionEndReason.CANCELLED);
          const failed = req.source.includes("SYNTAX ERROR");
          const reg = create(FunctionRegistrationSchema, {
            runUid: req.runUid,
            runName: req.runName,
            attempt: req.attempt,
            state: failed ? FunctionState.FAILED : FunctionState.READY,
            error: failed ? "SyntaxError: invalid syntax (line 1)" : "",
            endReason: failed ? FunctionEndReason.REGISTRATION_FAILED : FunctionEndReason.UNSPECIFIED,
            concurrency: req.concurrency || 1,
            readyMicros: micros(failed ? 0 : Date.now() * 1000),
            limits: { idleTimeoutMs: req.idleTimeoutMs },
          } as never);
          this.entries.set(req.runUid, { reg, req, watchers: new Set() });
          return { registration: reg, created: true };
        },
        status: (req) => {
          const e = this.entries.get(req.runUid);
          if (!e) throw new ConnectError("not registered", Code.NotFound);
          return { registration: e.reg };
        },
        list: () => ({ registrations: [...this.entries.values()].map((e) => e.reg) }),
        invoke: () => {
          throw new ConnectError("not in this fake", Code.Unimplemented);
        },
        unregister: (req) => {
          this.calls.push(`unregister ${req.runUid}/${req.attempt} ${UnregisterMode[req.mode]}`);
          const e = this.entries.get(req.runUid);
          if (!e) throw new ConnectError("not registered", Code.NotFound);
          if (e.reg.state !== FunctionState.ENDED)
            this.end(
              req.runUid,
              req.mode === UnregisterMode.CANCEL ? FunctionEndReason.CANCELLED : FunctionEndReason.DRAINED,
            );
          return { registration: e.reg };
        },
        watch: (req, ctx) => this.watch(req.runUid, req.attempt, ctx.signal),
      });
    });
    this.client = createClient(FunctionService, transport);
  }

  private async *watch(
    uid: string,
    attempt: number,
    signal: AbortSignal,
  ): AsyncGenerator<FunctionServiceWatchResponse> {
    const e = this.entries.get(uid);
    if (!e || e.reg.attempt !== attempt) throw new ConnectError("not registered", Code.NotFound);
    const queue: (Event | "gone")[] = [];
    let wake: (() => void) | undefined;
    const push = (ev: Event | "gone") => {
      queue.push(ev);
      wake?.();
    };
    e.watchers.add(push);
    signal.addEventListener("abort", () => wake?.());
    try {
      yield { event: { case: "state", value: e.reg } } as FunctionServiceWatchResponse;
      if (e.reg.state === FunctionState.ENDED) {
        yield { event: { case: "ended", value: e.reg } } as FunctionServiceWatchResponse;
        return;
      }
      for (;;) {
        while (queue.length === 0 && !signal.aborted) await new Promise<void>((r) => (wake = r));
        if (signal.aborted) return;
        const ev = queue.shift() as Event | "gone";
        if (ev === "gone") throw new ConnectError("the server restarted", Code.Unavailable);
        yield { event: ev } as FunctionServiceWatchResponse;
        if (ev.case === "ended") return;
      }
    } finally {
      e.watchers.delete(push);
    }
  }

  end(uid: string, reason: FunctionEndReason): void {
    const e = this.entries.get(uid);
    if (!e) return;
    e.reg = {
      ...e.reg,
      state: FunctionState.ENDED,
      endReason: reason,
      endedMicros: micros(Date.now() * 1000),
    } as never;
    for (const w of e.watchers) w({ case: "ended", value: e.reg });
  }

  log(uid: string, invocationId: string, lines: string[]): void {
    for (const w of this.entries.get(uid)?.watchers ?? [])
      w({ case: "log", value: { invocationId, stream: "stdout", lines, timeMicros: micros(0) } as never });
  }

  /** The server restarted: the registration is gone and open Watches break. */
  forget(uid: string): void {
    const e = this.entries.get(uid);
    this.entries.delete(uid);
    for (const w of e?.watchers ?? []) w("gone");
  }

  state(uid: string): FunctionState | undefined {
    return this.entries.get(uid)?.reg.state;
  }
}
