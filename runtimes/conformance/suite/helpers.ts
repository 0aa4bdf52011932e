/** Small helpers shared by the conformance suite's parts. */

import { expect } from "bun:test";
import { readFileSync } from "node:fs";
import type { MessageInitShape } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import type { ExecuteRequestSchema, TaskExited } from "../../../api/gen/kruntimes/runtime/v1/task_pb.ts";
import { EventLog } from "../event-log.ts";
import type { LanguageScripts } from "../language-scripts.ts";
import type { ServerProcess, ServerTarget } from "../server-process.ts";

export type ExecuteInit = MessageInitShape<typeof ExecuteRequestSchema>;

/** What every part of the suite gets: the target, its scripts, and the shared warm server. */
export interface SuiteContext {
  target: ServerTarget;
  scripts: LanguageScripts;
  /** The environment the shared server was started with (give other servers the same). */
  containerEnv: Record<string, string>;
  /** A server with a warm pool, shared by the tests that need nothing special. */
  server(): ServerProcess;
}

let counter = 0;

/** A run uid unique within this test process. */
export function uid(prefix = "run"): string {
  return `${prefix}-${process.pid}-${++counter}`;
}

export function inline(script: string, more: Omit<ExecuteInit, "program" | "$typeName"> = {}): ExecuteInit {
  return { ...more, program: { case: "inline", value: script } } as ExecuteInit;
}

/** Starts an execution (attempt 1, a fresh uid unless given) and collects its stream. */
export function execute(server: ServerProcess, init: ExecuteInit, signal?: AbortSignal): EventLog {
  const request = { runUid: uid(), attempt: 1, ...init };
  return new EventLog(server.clients.task.execute(request, { signal }));
}

export async function executeToEnd(
  server: ServerProcess,
  init: ExecuteInit,
): Promise<{ log: EventLog; exited: TaskExited }> {
  const log = execute(server, init);
  return { log, exited: await log.finished() };
}

/** Expects the call (unary or a stream's consumption) to fail with `code`; returns the message. */
export async function expectConnectError(call: Promise<unknown>, code: Code): Promise<string> {
  try {
    await call;
  } catch (error) {
    const ce = ConnectError.from(error);
    expect(Code[ce.code]).toBe(Code[code]);
    return ce.rawMessage;
  }
  throw new Error(`expected ${Code[code]}, the call succeeded`);
}

export function until(
  condition: () => boolean | Promise<boolean>,
  timeoutMs = 10_000,
  what = "condition",
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  return (async () => {
    while (!(await condition())) {
      if (Date.now() > deadline) throw new Error(`${what} not met within ${timeoutMs} ms`);
      await Bun.sleep(10);
    }
  })();
}

/** True while a process with this pid exists and is not a zombie waiting to be reaped. */
export function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3) !== "Z";
  } catch {
    return false;
  }
}
