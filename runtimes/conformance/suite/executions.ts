/**
 * Executions as the server keeps them: one per (run_uid, attempt) (ALREADY_EXISTS), independent
 * of the Execute stream (Watch re-attaches after the caller went away), listed oldest first,
 * concurrent, and refused with RESOURCE_EXHAUSTED above the server's maximum.
 */

import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Code } from "@connectrpc/connect";
import { TaskExitReason, TaskState } from "../../../api/gen/kruntimes/runtime/v1/task_pb.ts";
import { EventLog } from "../event-log.ts";
import { SERVER_TIMEOUT_MS, ServerProcess } from "../server-process.ts";
import { execute, expectConnectError, inline, type SuiteContext, uid } from "./helpers.ts";

export function executionsSuite(ctx: SuiteContext): void {
  const { scripts } = ctx;

  describe("executions", () => {
    test("a duplicate (run_uid, attempt) is ALREADY_EXISTS and starts nothing, running or finished", async () => {
      const server = ctx.server();
      const runUid = uid("dup");
      const flag = join(server.dir, `${runUid}.go`);
      const first = execute(server, { ...inline(scripts.waitForFile(flag, "one", "done")), runUid });
      await first.until((l) => l.text().includes("one"));
      const again = execute(server, { ...inline(scripts.hello), runUid });
      await expectConnectError(again.done, Code.AlreadyExists);
      const next = execute(server, { ...inline(scripts.hello), runUid, attempt: 2 });
      expect((await next.finished()).exitCode).toBe(0);
      writeFileSync(flag, "");
      expect((await first.finished()).exitCode).toBe(0);
      await expectConnectError(
        execute(server, { ...inline(scripts.hello), runUid }).done,
        Code.AlreadyExists,
      );
    });

    test("the execution outlives its Execute stream; Watch re-attaches with the tails and the rest", async () => {
      const server = ctx.server();
      const runUid = uid("watch");
      const flag = join(server.dir, `${runUid}.go`);
      const abort = new AbortController();
      const first = execute(
        server,
        { ...inline(scripts.waitForFile(flag, "before", "after")), runUid },
        abort.signal,
      );
      await first.until((l) => l.text() === "before\n");
      const pid = first.started!.pid;
      abort.abort();
      await first.done.catch(() => {});
      const listed = await server.clients.task.list({ runUid });
      expect(listed.executions.map((e) => TaskState[e.state])).toEqual(["RUNNING"]);
      const watch = new EventLog(server.clients.task.watch({ runUid, attempt: 1, replayTails: true }));
      await watch.until((l) => l.text() === "before\n");
      expect(watch.started?.pid).toBe(pid);
      writeFileSync(flag, "");
      const exited = await watch.finished();
      expect(watch.text()).toBe("before\nafter\n");
      let offset = 0n;
      for (const chunk of watch.outputs(1)) {
        expect(chunk.offset).toBe(offset);
        offset += BigInt(chunk.data.length);
      }
      expect(exited.exitCode).toBe(0);
      expect(new TextDecoder().decode(exited.stdoutTail)).toBe("before\nafter\n");
      const late = new EventLog(server.clients.task.watch({ runUid, attempt: 1 }));
      await late.done;
      expect(late.events.map((e) => e.event.case)).toEqual(["started", "exited"]);
      expect(late.exited?.stdoutTail).toEqual(exited.stdoutTail);
    });

    test("a caller that goes away in the middle of a large output does not stall the Run", async () => {
      const server = ctx.server();
      const runUid = uid("gone");
      const n = 4 * 1024 * 1024;
      const abort = new AbortController();
      const first = execute(server, { ...inline(scripts.printBytes(n)), runUid }, abort.signal);
      await first.until((l) => l.outputs(1).length > 0);
      abort.abort();
      await first.done.catch(() => {});
      const watch = new EventLog(server.clients.task.watch({ runUid, attempt: 1 }));
      const exited = await watch.finished();
      expect(exited.exitCode).toBe(0);
      expect(exited.stdoutBytes).toBe(BigInt(n));
    });

    test("Watch without replay starts at the live output; unknown keys are NOT_FOUND", async () => {
      const server = ctx.server();
      const runUid = uid("live");
      const flag = join(server.dir, `${runUid}.go`);
      const first = execute(server, { ...inline(scripts.waitForFile(flag, "before", "after")), runUid });
      await first.until((l) => l.text() === "before\n");
      const watch = new EventLog(server.clients.task.watch({ runUid, attempt: 1 }));
      await watch.until((l) => l.started !== undefined);
      writeFileSync(flag, "");
      await watch.finished();
      expect(watch.text()).toBe("after\n");
      expect(watch.outputs(1)[0]?.offset).toBe(7n);
      await first.finished();
      const unknown = new EventLog(server.clients.task.watch({ runUid: uid("nobody"), attempt: 1 }));
      await expectConnectError(unknown.done, Code.NotFound);
    });

    test("List: every execution of a Run, oldest first, with state, pid, times and reason", async () => {
      const server = ctx.server();
      const runUid = uid("list");
      await execute(server, { ...inline(scripts.exit(0)), runUid, attempt: 1, runName: "listed" }).finished();
      const flag = join(server.dir, `${runUid}.go`);
      const second = execute(server, { ...inline(scripts.waitForFile(flag, "x", "y")), runUid, attempt: 2 });
      await second.until((l) => l.text() === "x\n");
      const { executions } = await server.clients.task.list({ runUid });
      expect(executions.map((e) => [e.attempt, TaskState[e.state], TaskExitReason[e.reason]])).toEqual([
        [1, "EXITED", "COMPLETED"],
        [2, "RUNNING", "UNSPECIFIED"],
      ]);
      expect(executions[0]?.runName).toBe("listed");
      expect(executions[0]?.finishedAtMicros).toBeGreaterThan(0n);
      expect(executions[1]?.pid).toBe(second.started!.pid);
      expect(executions[1]?.finishedAtMicros).toBe(0n);
      writeFileSync(flag, "");
      await second.finished();
      const all = await server.clients.task.list({});
      expect(all.executions.length).toBeGreaterThanOrEqual(2);
    });

    test("concurrent executions run side by side", async () => {
      const server = ctx.server();
      const flag = join(server.dir, `${uid("conc")}.go`);
      const logs = Array.from({ length: 6 }, (_, i) =>
        execute(server, inline(scripts.waitForFile(flag, `s${i}`, `e${i}`))),
      );
      await Promise.all(logs.map((l, i) => l.until((x) => x.text() === `s${i}\n`)));
      expect((await server.clients.runtime.health({})).running).toBeGreaterThanOrEqual(6);
      writeFileSync(flag, "");
      const exits = await Promise.all(logs.map((l) => l.finished()));
      expect(exits.every((e) => e.exitCode === 0)).toBe(true);
      expect(logs.map((l) => l.text())).toEqual(logs.map((_, i) => `s${i}\ne${i}\n`));
      expect(existsSync(flag)).toBe(true);
    });

    describe("with max concurrency 2", () => {
      let server: ServerProcess;
      beforeAll(async () => {
        server = await ServerProcess.start(ctx.target, { maxConcurrent: 2, warmPool: 1 });
      }, SERVER_TIMEOUT_MS);
      afterAll(async () => {
        await server?.stop();
      }, SERVER_TIMEOUT_MS);

      test("a third execution is RESOURCE_EXHAUSTED; capacity comes back when one ends", async () => {
        const flag = join(server.dir, "go");
        const a = execute(server, inline(scripts.waitForFile(flag, "a", "a")));
        const b = execute(server, inline(scripts.waitForFile(flag, "b", "b")));
        await a.until((l) => l.started !== undefined);
        await b.until((l) => l.started !== undefined);
        const message = await expectConnectError(
          execute(server, inline(scripts.hello)).done,
          Code.ResourceExhausted,
        );
        expect(message).toContain("2");
        writeFileSync(flag, "");
        await Promise.all([a.finished(), b.finished()]);
        expect((await execute(server, inline(scripts.hello)).finished()).exitCode).toBe(0);
      });
    });
  });
}
