/**
 * The process side: exit codes and signals reported as they happened, the per-attempt timeout,
 * Cancel (SIGTERM to the group, grace, SIGKILL; force; shortening the grace), and the process
 * group going with the Run.
 */

import { describe, expect, test } from "bun:test";
import { Code } from "@connectrpc/connect";
import { TaskExitReason, TaskState } from "../../../api/gen/kruntimes/runtime/v1/task_pb.ts";
import {
  alive,
  execute,
  executeToEnd,
  expectConnectError,
  inline,
  type SuiteContext,
  uid,
  until,
} from "./helpers.ts";

export function processControlSuite(ctx: SuiteContext): void {
  const { scripts } = ctx;

  describe("process control", () => {
    test("exit codes are reported as the process returned them", async () => {
      const server = ctx.server();
      const results = await Promise.all(
        [0, 1, 7, 255].map((code) => executeToEnd(server, inline(scripts.exit(code)))),
      );
      expect(results.map((r) => r.exited.exitCode)).toEqual([0, 1, 7, 255]);
      for (const { exited } of results) {
        expect(TaskExitReason[exited.reason]).toBe("COMPLETED");
        expect(exited.signal).toBe("");
      }
    });

    test("a process ended by a signal reports the signal and no exit code", async () => {
      const server = ctx.server();
      for (const signal of ["SIGTERM", "SIGKILL"] as const) {
        const { exited } = await executeToEnd(server, inline(scripts.killSelf(signal)));
        expect(TaskExitReason[exited.reason]).toBe("COMPLETED");
        expect(exited.signal).toBe(signal);
        expect(exited.exitCode).toBeUndefined();
      }
    });

    test("timeout: the server stops the group and reports TIMEOUT with the output so far", async () => {
      const started = Date.now();
      const { exited } = await executeToEnd(ctx.server(), inline(scripts.sleep(30), { timeoutMs: 300 }));
      expect(TaskExitReason[exited.reason]).toBe("TIMEOUT");
      expect(exited.signal).toBe("SIGTERM");
      expect(exited.message).toContain("300 ms");
      expect(new TextDecoder().decode(exited.stdoutTail)).toBe("ready\n");
      expect(Date.now() - started).toBeLessThan(10_000);
    });

    test("the largest timeout and grace (uint32 maximum) mean a long wait, not none", async () => {
      const max = 2 ** 32 - 1;
      const { exited } = await executeToEnd(
        ctx.server(),
        inline(scripts.sleep(0.2), { timeoutMs: max, terminationGraceMs: max }),
      );
      expect(TaskExitReason[exited.reason]).toBe("COMPLETED");
      expect(exited.exitCode).toBe(0);
    });

    test("timeout of a process that ignores SIGTERM: SIGKILL after the termination grace", async () => {
      const log = execute(
        ctx.server(),
        inline(scripts.ignoreTerm, { timeoutMs: 300, terminationGraceMs: 300 }),
      );
      const exited = await log.finished();
      expect(TaskExitReason[exited.reason]).toBe("TIMEOUT");
      expect(exited.signal).toBe("SIGKILL");
      expect(log.text()).toBe("ready\nterm\n");
      expect(Number(exited.finishedAtMicros - exited.startedAtMicros)).toBeGreaterThanOrEqual(600_000);
    });

    test("cancel: SIGTERM to the group, the grace, then SIGKILL of a process that traps SIGTERM", async () => {
      const server = ctx.server();
      const runUid = uid("cancel");
      const log = execute(server, { ...inline(scripts.ignoreTerm), runUid });
      await log.until((l) => l.text() === "ready\n");
      const t0 = Date.now();
      const reply = await server.clients.task.cancel({ runUid, attempt: 1, graceMs: 400 });
      expect(TaskState[reply.state]).toBe("STOPPING");
      await log.until((l) => l.text().includes("term"));
      const exited = await log.finished();
      expect(Date.now() - t0).toBeGreaterThanOrEqual(350);
      expect(TaskExitReason[exited.reason]).toBe("CANCELLED");
      expect(exited.signal).toBe("SIGKILL");
      expect(log.text()).toBe("ready\nterm\n");
      const again = await server.clients.task.cancel({ runUid, attempt: 1 });
      expect(TaskState[again.state]).toBe("EXITED");
    });

    test("cancel that the process honours ends with SIGTERM; force skips SIGTERM", async () => {
      const server = ctx.server();
      const polite = uid("polite");
      const a = execute(server, { ...inline(scripts.sleep(30)), runUid: polite });
      const forced = uid("forced");
      const b = execute(server, { ...inline(scripts.ignoreTerm), runUid: forced });
      await a.until((l) => l.text() === "ready\n");
      await b.until((l) => l.text() === "ready\n");
      await server.clients.task.cancel({ runUid: polite, attempt: 1, graceMs: 10_000 });
      await server.clients.task.cancel({ runUid: forced, attempt: 1, force: true });
      const [ea, eb] = await Promise.all([a.finished(), b.finished()]);
      expect([TaskExitReason[ea.reason], ea.signal]).toEqual(["CANCELLED", "SIGTERM"]);
      expect([TaskExitReason[eb.reason], eb.signal]).toEqual(["CANCELLED", "SIGKILL"]);
      expect(b.text()).toBe("ready\n");
    });

    test("a second cancel shortens the grace, never extends it", async () => {
      const server = ctx.server();
      const runUid = uid("shorten");
      const log = execute(server, { ...inline(scripts.ignoreTerm), runUid });
      await log.until((l) => l.text() === "ready\n");
      await server.clients.task.cancel({ runUid, attempt: 1, graceMs: 60_000 });
      await log.until((l) => l.text().includes("term"));
      const t0 = Date.now();
      await server.clients.task.cancel({ runUid, attempt: 1, graceMs: 200 });
      await server.clients.task.cancel({ runUid, attempt: 1, graceMs: 60_000 });
      const exited = await log.finished();
      expect(exited.signal).toBe("SIGKILL");
      expect(Date.now() - t0).toBeLessThan(10_000);
    });

    test("cancel of an unknown execution is NOT_FOUND; other attempts are never touched", async () => {
      const server = ctx.server();
      const runUid = uid("attempts");
      const log = execute(server, { ...inline(scripts.sleep(0.3)), runUid, attempt: 1 });
      await expectConnectError(server.clients.task.cancel({ runUid, attempt: 2 }), Code.NotFound);
      const exited = await log.finished();
      expect(TaskExitReason[exited.reason]).toBe("COMPLETED");
    });

    test("background processes of the Run go when its main process exits", async () => {
      const { log, exited } = await executeToEnd(ctx.server(), inline(scripts.orphan));
      expect(exited.exitCode).toBe(0);
      const pid = Number(log.text().trim());
      expect(pid).toBeGreaterThan(0);
      await until(() => !alive(pid), 5000, `background process ${pid} gone`);
    });
  });
}
