/**
 * Input shapes and environment: inline, entrypoint + args, args as commands, the combinations
 * that must fail as START_FAILED, call errors for bad keys and limits, the working directory and
 * the KRUNTIME_* variables, and Run env over container env.
 */

import { describe, expect, test } from "bun:test";
import { mkdirSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Code } from "@connectrpc/connect";
import { OutputStream, TaskExitReason } from "../../../api/gen/kruntimes/runtime/v1/task_pb.ts";
import { tailText } from "../event-log.ts";
import { executeToEnd, expectConnectError, inline, type SuiteContext, uid } from "./helpers.ts";

export function inputSuite(ctx: SuiteContext): void {
  const { scripts } = ctx;

  describe("inputs", () => {
    test("inline: streams stdout and stderr, reports exit 0 and the tails", async () => {
      const { log, exited } = await executeToEnd(ctx.server(), inline(scripts.hello));
      expect(TaskExitReason[exited.reason]).toBe("COMPLETED");
      expect(exited.exitCode).toBe(0);
      expect(exited.signal).toBe("");
      expect(log.text(OutputStream.STDOUT)).toBe("out\n");
      expect(log.text(OutputStream.STDERR)).toBe("err\n");
      expect(tailText(exited.stdoutTail)).toBe("out\n");
      expect(tailText(exited.stderrTail)).toBe("err\n");
      expect(exited.stdoutBytes).toBe(4n);
      expect(log.events[0]?.event.case).toBe("started");
      expect(log.events.at(-1)?.event.case).toBe("exited");
      const started = log.started!;
      expect(started.pid).toBeGreaterThan(0);
      expect(exited.startedAtMicros).toBe(started.startedAtMicros);
      expect(exited.finishedAtMicros).toBeGreaterThanOrEqual(exited.startedAtMicros);
    });

    test("default working directory is <root>/<run_uid>/<attempt>, with the KRUNTIME_* variables", async () => {
      const server = ctx.server();
      const runUid = uid("env");
      const names = [
        "KRUNTIME_RUN_NAME",
        "KRUNTIME_RUN_UID",
        "KRUNTIME_ATTEMPT",
        "KRUNTIME_WORKDIR",
        "KRUNTIME_OUTPUTS",
      ];
      const { log, exited } = await executeToEnd(server, {
        ...inline(scripts.printEnv(names)),
        runUid,
        attempt: 3,
        runName: "my-run",
      });
      const cwd = join(server.workspaceRoot, runUid, "3");
      expect(log.started?.workingDir).toBe(cwd);
      const lines = log.text().trim().split("\n");
      expect(lines.slice(0, 4)).toEqual([
        "KRUNTIME_RUN_NAME=my-run",
        `KRUNTIME_RUN_UID=${runUid}`,
        "KRUNTIME_ATTEMPT=3",
        `KRUNTIME_WORKDIR=${cwd}`,
      ]);
      expect(lines[4]).toMatch(/^KRUNTIME_OUTPUTS=\/.+/);
      expect(exited.exitCode).toBe(0);
    });

    test("entrypoint + args: a script file relative to the working directory, args passed verbatim", async () => {
      const server = ctx.server();
      const dir = join(server.workspaceRoot, "shared", uid("ep"));
      mkdirSync(dir, { recursive: true });
      writeFileSync(join(dir, `prog${scripts.extension}`), scripts.printArgs);
      const workingDir = dir.slice(server.workspaceRoot.length + 1);
      const args = ["a b", "", "--flag=$HOME", "ünï"];
      const { log, exited } = await executeToEnd(server, {
        program: { case: "entrypoint", value: `prog${scripts.extension}` },
        args,
        workingDir,
      });
      expect(log.started?.workingDir).toBe(dir);
      expect(log.text()).toBe(`${args.join("\n")}\n${dir}\n`);
      expect(exited.exitCode).toBe(0);
    });

    test("entrypoint that does not exist: START_FAILED, no TaskStarted", async () => {
      const { log, exited } = await executeToEnd(ctx.server(), {
        program: { case: "entrypoint", value: "missing/prog" },
      });
      expect(TaskExitReason[exited.reason]).toBe("START_FAILED");
      expect(exited.message).toContain("missing/prog");
      expect(log.started).toBeUndefined();
      expect(exited.exitCode).toBeUndefined();
      expect(exited.startedAtMicros).toBe(0n);
    });

    test("args without entrypoint", async () => {
      const { log, exited } = await executeToEnd(ctx.server(), {
        args: scripts.commands?.args ?? ["print(1)"],
      });
      if (scripts.commands === undefined) {
        expect(TaskExitReason[exited.reason]).toBe("START_FAILED");
        expect(exited.message).toMatch(/args as commands/);
        return;
      }
      expect(TaskExitReason[exited.reason]).toBe("COMPLETED");
      expect(log.text()).toBe(scripts.commands.stdout);
      expect(exited.exitCode).toBe(scripts.commands.exitCode);
    });

    test("inline with args, and nothing at all, are START_FAILED with a message", async () => {
      const server = ctx.server();
      const both = await executeToEnd(server, { ...inline(scripts.hello), args: ["x"] });
      expect(TaskExitReason[both.exited.reason]).toBe("START_FAILED");
      expect(both.exited.message).toContain("inline");
      const none = await executeToEnd(server, {});
      expect(TaskExitReason[none.exited.reason]).toBe("START_FAILED");
      expect(none.exited.message).toContain("nothing to run");
    });

    test("Run env wins over the container env; the server's KRUNTIME_* win over both", async () => {
      const runUid = uid("prec");
      const { log } = await executeToEnd(ctx.server(), {
        ...inline(scripts.printEnv(["CONF_A", "CONF_B", "CONF_C", "KRUNTIME_RUN_UID"])),
        runUid,
        env: { CONF_A: "run", CONF_C: "only-run", KRUNTIME_RUN_UID: "spoofed" },
      });
      expect(log.text()).toBe(`CONF_A=run\nCONF_B=container\nCONF_C=only-run\nKRUNTIME_RUN_UID=${runUid}\n`);
    });

    test("bad keys, limits above the maxima and working dirs outside the workspace are INVALID_ARGUMENT", async () => {
      const task = ctx.server().clients.task;
      const base = { runUid: uid("bad"), attempt: 1, ...inline(scripts.hello) };
      const drain = async (init: object) => {
        for await (const _ of task.execute({ ...base, ...init })) {
          // a stream that yields anything is a failure of this test
        }
      };
      await expectConnectError(drain({ runUid: "../x" }), Code.InvalidArgument);
      await expectConnectError(drain({ attempt: 0 }), Code.InvalidArgument);
      await expectConnectError(drain({ workingDir: "../../etc" }), Code.InvalidArgument);
      await expectConnectError(drain({ workingDir: "/etc" }), Code.InvalidArgument);
      const info = await ctx.server().clients.runtime.info({});
      const max = info.limits!.maxTailBytes;
      const message = await expectConnectError(
        drain({ limits: { tailBytes: max + 1 } }),
        Code.InvalidArgument,
      );
      expect(message).toContain("tail_bytes");
    });

    test("the working directory exists while the Run runs and stays for List/Watch", async () => {
      const server = ctx.server();
      const { log } = await executeToEnd(server, inline(scripts.exit(0)));
      expect(statSync(log.started!.workingDir).isDirectory()).toBe(true);
    });
  });
}
