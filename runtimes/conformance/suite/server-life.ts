/**
 * The server itself: Health and Info, warm and cold starts giving the same results, the socket
 * (0666, a stale file from a crash is replaced), and the SIGTERM drain (DRAINING, new work
 * refused, running work finishes or is stopped at the drain timeout, socket removed).
 */

import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Code } from "@connectrpc/connect";
import { ServingStatus, TaskInput } from "../../../api/gen/kruntimes/runtime/v1/runtime_pb.ts";
import { TaskExitReason } from "../../../api/gen/kruntimes/runtime/v1/task_pb.ts";
import { SERVER_TIMEOUT_MS, ServerProcess } from "../server-process.ts";
import { execute, executeToEnd, expectConnectError, inline, type SuiteContext, until } from "./helpers.ts";

export function serverLifeSuite(ctx: SuiteContext): void {
  const { scripts } = ctx;

  describe("server", () => {
    test("Health is SERVING with the clock; Info describes the runtime", async () => {
      const server = ctx.server();
      const before = BigInt(Date.now()) * 1000n;
      const health = await server.clients.runtime.health({});
      expect(ServingStatus[health.status]).toBe("SERVING");
      expect(health.nowMicros).toBeGreaterThanOrEqual(before - 1_000_000n);
      const info = await server.clients.runtime.info({});
      expect(info.language).toBe(scripts.language);
      expect(info.interpreter.startsWith("/")).toBe(true);
      expect(info.interpreterVersion).not.toBe("");
      expect(info.taskInputs).toContain(TaskInput.INLINE);
      expect(info.taskInputs).toContain(TaskInput.ENTRYPOINT);
      expect(info.taskInputs.includes(TaskInput.COMMANDS)).toBe(scripts.commands !== undefined);
      expect(info.workspaceRoot).toBe(server.workspaceRoot);
      expect(info.warmPoolSize).toBe(server.settings.warmPool);
      expect(info.maxConcurrent).toBe(server.settings.maxConcurrent);
      expect(info.limits!.defaultTailBytes).toBeGreaterThan(0);
      expect(statSync(server.settings.socket).mode & 0o777).toBe(0o666);
    });

    describe("warm and cold", () => {
      let cold: ServerProcess;
      beforeAll(async () => {
        cold = await ServerProcess.start(ctx.target, { warmPool: 0, env: ctx.containerEnv });
      }, SERVER_TIMEOUT_MS);
      afterAll(async () => {
        await cold?.stop();
      }, SERVER_TIMEOUT_MS);

      test("the same programs give the same results warm and cold", async () => {
        const warm = ctx.server();
        await until(
          async () => (await warm.clients.runtime.health({})).warmReady > 0,
          10_000,
          "a warm interpreter",
        );
        const programs = [
          inline(scripts.hello),
          inline(scripts.fail),
          inline(scripts.exit(7)),
          inline(scripts.killSelf("SIGKILL")),
          inline(scripts.printEnv(["CONF_A", "CONF_B", "OLDPWD", "SHLVL", "_"]), { env: { CONF_A: "run" } }),
          inline(scripts.writeOutputs("k=v\n")),
          { args: scripts.commands?.args ?? ["x"] },
        ];
        const results: Record<string, unknown[]> = { warm: [], cold: [] };
        const flags: Record<string, boolean[]> = { warm: [], cold: [] };
        for (const [name, server] of [
          ["warm", warm],
          ["cold", cold],
        ] as const) {
          for (const program of programs) {
            const { log, exited } = await executeToEnd(server, program);
            flags[name]!.push(log.started?.warm ?? false);
            // Script paths differ between the servers (state directory, run uid); nothing else may.
            const stderr = log.text(2).replace(/\/[^"\s]*\/(inline|commands)\.(sh|py)\b/g, "<script>");
            results[name]!.push([
              TaskExitReason[exited.reason],
              exited.exitCode,
              exited.signal,
              log.text(),
              stderr,
              exited.outputs,
            ]);
          }
        }
        expect(results.warm).toEqual(results.cold!);
        expect(flags.cold!.every((w) => !w)).toBe(true);
        expect(flags.warm![0]).toBe(true);
      });

      test("a Run that changes a variable the interpreter reads at start-up is cold-started", async () => {
        const warm = ctx.server();
        await until(
          async () => (await warm.clients.runtime.health({})).warmReady > 0,
          10_000,
          "a warm interpreter",
        );
        const [name] = Object.keys(scripts.startupEnv);
        const { log, exited } = await executeToEnd(
          warm,
          inline(scripts.printEnv([name!]), { env: scripts.startupEnv }),
        );
        expect(log.started?.warm).toBe(false);
        expect(log.text()).toBe(`${name}=${scripts.startupEnv[name!]}\n`);
        expect(exited.exitCode).toBe(0);
      });
    });

    test(
      "a stale socket file left by a crash is replaced at start",
      async () => {
        const first = await ServerProcess.start(ctx.target, { warmPool: 0 });
        first.proc.kill("SIGKILL");
        await first.proc.exited;
        expect(existsSync(first.settings.socket)).toBe(true);
        const second = await ServerProcess.start(ctx.target, { warmPool: 0, socket: first.settings.socket });
        expect((await executeToEnd(second, inline(scripts.hello))).exited.exitCode).toBe(0);
        await second.stop();
        await first.stop();
      },
      SERVER_TIMEOUT_MS,
    );

    test(
      "SIGTERM drains: DRAINING, new work UNAVAILABLE, running work finishes, then the socket goes",
      async () => {
        const server = await ServerProcess.start(ctx.target, { warmPool: 1 });
        const flag = join(server.dir, "go");
        const running = execute(server, inline(scripts.waitForFile(flag, "working", "finished")));
        await running.until((l) => l.text() === "working\n");
        server.proc.kill("SIGTERM");
        await until(
          async () => (await server.clients.runtime.health({})).status === ServingStatus.DRAINING,
          5000,
          "DRAINING",
        );
        await expectConnectError(execute(server, inline(scripts.hello)).done, Code.Unavailable);
        expect((await server.clients.runtime.health({})).running).toBe(1);
        writeFileSync(flag, "");
        const exited = await running.finished();
        expect(exited.exitCode).toBe(0);
        expect(running.text()).toBe("working\nfinished\n");
        expect(await server.proc.exited).toBe(0);
        expect(existsSync(server.settings.socket)).toBe(false);
        await server.stop();
      },
      SERVER_TIMEOUT_MS,
    );

    test(
      "SIGTERM drain timeout: executions still running are cancelled, with a message",
      async () => {
        const server = await ServerProcess.start(ctx.target, {
          warmPool: 0,
          drainTimeoutMs: 300,
          defaultGraceMs: 300,
        });
        const running = execute(server, inline(scripts.ignoreTerm));
        await running.until((l) => l.text() === "ready\n");
        server.proc.kill("SIGTERM");
        const exited = await running.finished();
        expect(TaskExitReason[exited.reason]).toBe("CANCELLED");
        expect(exited.message).toContain("shut down");
        expect(exited.signal).toBe("SIGKILL");
        expect(await server.proc.exited).toBe(0);
        await server.stop();
      },
      SERVER_TIMEOUT_MS,
    );
  });
}
