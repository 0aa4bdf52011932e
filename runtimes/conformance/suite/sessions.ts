/**
 * Sessions (SessionService): open/close idempotency and the attempt fence, Exec streaming with
 * exit codes, stdin, environment, working directories, timeouts, cancellation and start
 * failures, background processes from start to exit, and every process gone after Close
 * (checked by pid). Files and listings are in sessions-files.ts and sessions-listing.ts.
 */
import { describe, expect, test } from "bun:test";
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Code } from "@connectrpc/connect";
import { Mode } from "../../../api/gen/kruntimes/runtime/v1/runtime_pb.ts";
import { CloseMode, ExitReason, SessionState } from "../../../api/gen/kruntimes/runtime/v1/session_pb.ts";
import { alive, expectConnectError, type SuiteContext, uid, until } from "./helpers.ts";
import { sessionFilesSuite } from "./sessions-files.ts";
import { argv, sessionClient, shell, TestSession } from "./sessions-helpers.ts";
import { sessionListingSuite } from "./sessions-listing.ts";

export function sessionsSuite(ctx: SuiteContext): void {
  describe("sessions", () => {
    test("Info lists MODE_SESSION", async () => {
      const info = await ctx.server().clients.runtime.info({});
      expect(info.modes).toContain(Mode.SESSION);
    });

    test("Open is idempotent per attempt and fenced; Close is idempotent; a closed session takes nothing", async () => {
      const client = sessionClient(ctx.server());
      const runUid = uid("session");
      const first = await client.open({ session: { runUid, attempt: 2 }, runName: "fenced" });
      expect(first.created).toBe(true);
      expect(SessionState[first.info!.state]).toBe("OPEN");
      expect(existsSync(first.info!.workspace)).toBe(true);
      writeFileSync(join(first.info!.workspace, "left-over"), "x");
      const again = await client.open({ session: { runUid, attempt: 2 }, runName: "fenced" });
      expect(again.created).toBe(false);
      expect(existsSync(join(first.info!.workspace, "left-over"))).toBe(true);
      await expectConnectError(client.open({ session: { runUid, attempt: 1 } }), Code.FailedPrecondition);
      await expectConnectError(
        client.stat({ session: { runUid, attempt: 1 }, path: "" }),
        Code.FailedPrecondition,
      );
      await expectConnectError(
        client.stat({ session: { runUid, attempt: 3 }, path: "" }),
        Code.FailedPrecondition,
      );
      await expectConnectError(
        client.stat({ session: { runUid: uid("nobody"), attempt: 1 }, path: "" }),
        Code.NotFound,
      );
      await expectConnectError(client.status({ runUid: uid("nobody") }), Code.NotFound);
      const listed = await client.list({});
      expect(listed.sessions.some((s) => s.session?.runUid === runUid)).toBe(true);

      // A newer attempt replaces the session with an empty workspace.
      const newer = await client.open({ session: { runUid, attempt: 3 }, runName: "fenced" });
      expect(newer.created).toBe(true);
      expect(existsSync(join(newer.info!.workspace, "left-over"))).toBe(false);
      await expectConnectError(
        client.stat({ session: { runUid, attempt: 2 }, path: "" }),
        Code.FailedPrecondition,
      );

      const closed = await client.close({ session: { runUid, attempt: 3 }, mode: CloseMode.DRAIN });
      expect(SessionState[closed.info!.state]).toBe("CLOSED");
      expect(closed.info!.closedMicros).toBeGreaterThan(0n);
      const closedAgain = await client.close({
        session: { runUid, attempt: 3 },
        mode: CloseMode.CANCEL,
        removeWorkspace: true,
      });
      expect(SessionState[closedAgain.info!.state]).toBe("CLOSED");
      expect(existsSync(newer.info!.workspace)).toBe(false);
      await expectConnectError(
        client.stat({ session: { runUid, attempt: 3 }, path: "" }),
        Code.FailedPrecondition,
      );
      await expectConnectError(client.open({ session: { runUid, attempt: 3 } }), Code.FailedPrecondition);
      const status = await client.status({ runUid });
      expect(SessionState[status.info!.state]).toBe("CLOSED");
      await expectConnectError(
        client.open({ session: { runUid: "../escape", attempt: 1 } }),
        Code.InvalidArgument,
      );
      await expectConnectError(
        client.open({ session: { runUid: uid("session"), attempt: 1 }, workspaceDir: "../../etc" }),
        Code.InvalidArgument,
      );
    });

    describe("exec", () => {
      test("streams stdout and stderr as they are produced and ends with the exit code", async () => {
        const s = await TestSession.open(ctx.server());
        try {
          // The command prints, then waits for a file only the test creates after seeing the print.
          const log = s.exec({
            command: shell(
              "echo first; echo err1 >&2; while [ ! -e go ]; do sleep 0.02; done; echo second; exit 3",
            ),
          });
          await log.waitFor("stdout", "first\n");
          await log.waitFor("stderr", "err1\n");
          expect(log.text("stdout")).not.toContain("second");
          expect(log.events[0]?.event.case).toBe("started");
          expect(log.pid).toBeGreaterThan(0);
          await s.write("go", new Uint8Array(0));
          const exited = await log.finished();
          expect(ExitReason[exited.reason]).toBe("EXITED");
          expect(exited.exitCode).toBe(3);
          expect(exited.signal).toBe("");
          expect(log.text("stdout")).toBe("first\nsecond\n");
          expect(log.events.at(-1)?.event.case).toBe("exited");
          expect(log.events.filter((e) => e.event.case === "exited")).toHaveLength(1);

          const run = await s.sh("printf 'a b'", {});
          expect(run.stdout).toBe("a b");
          const args = s.exec({ command: argv("printf", "%s|%s", "x y", "$HOME") });
          expect((await args.finished()).exitCode).toBe(0);
          expect(args.text("stdout")).toBe("x y|$HOME");
        } finally {
          await s.close();
        }
      });

      test("stdin bytes reach the command, then EOF", async () => {
        const s = await TestSession.open(ctx.server());
        try {
          const input = new Uint8Array(200_000).map((_, i) => 97 + (i % 26));
          const log = s.exec({ command: argv("wc", "-c"), stdin: input });
          expect((await log.finished()).exitCode).toBe(0);
          expect(log.text("stdout").trim()).toBe("200000");
          const cat = await s.sh("cat", { stdin: new TextEncoder().encode("héllo\n") });
          expect(cat.stdout).toBe("héllo\n");
          const none = await s.sh("cat; echo end");
          expect(none.stdout).toBe("end\n");
        } finally {
          await s.close();
        }
      });

      test("environment layers, KRUNTIME_* variables and working directories inside the workspace", async () => {
        const s = await TestSession.open(ctx.server(), { CONF_A: "session", SESSION_ONLY: "s" });
        try {
          const env = await s.sh(
            'echo "$CONF_A $CONF_B $SESSION_ONLY $EXTRA $KRUNTIME_RUN_UID $KRUNTIME_WORKDIR"',
            {
              env: { EXTRA: "e", KRUNTIME_RUN_UID: "spoofed" },
            },
          );
          expect(env.stdout.trim()).toBe(`session container s e ${s.runUid} ${s.workspace}`);
          await s.client.makeDir({ session: s.ref, path: "sub/dir", parents: true });
          const pwd = await s.sh("pwd -P", { workingDir: "sub/dir" });
          expect(pwd.stdout.trim()).toBe(join(s.workspace, "sub/dir"));
          const missing = await s.sh("pwd", { workingDir: "nope" });
          expect(ExitReason[missing.exited.reason]).toBe("START_FAILED");
          expect(missing.exited.message).toContain("nope");
          await expectConnectError(s.sh("pwd", { workingDir: "../.." }), Code.PermissionDenied);
          await expectConnectError(s.sh("pwd", { workingDir: "/tmp" }), Code.PermissionDenied);
          await s.sh("ln -s /tmp out");
          await expectConnectError(s.sh("pwd", { workingDir: "out" }), Code.PermissionDenied);
        } finally {
          await s.close();
        }
      });

      test("a timeout stops the command: TIMEOUT with the signal", async () => {
        const s = await TestSession.open(ctx.server());
        try {
          const run = await s.sh("echo started; exec sleep 60", { timeoutMs: 300 });
          expect(ExitReason[run.exited.reason]).toBe("TIMEOUT");
          expect(run.exited.signal).toBe("SIGTERM");
          expect(run.exited.message).toContain("300 ms");
          expect(run.stdout).toBe("started\n");
        } finally {
          await s.close();
        }
      });

      test("CancelOperation stops a running command (CANCELLED); unknown ids are a no-op", async () => {
        const s = await TestSession.open(ctx.server());
        try {
          const log = s.exec({ command: shell("echo ready; sleep 60 & wait") });
          await log.waitFor("stdout", "ready");
          const cancelled = await s.client.cancelOperation({ session: s.ref, operationId: log.operationId });
          expect(cancelled.cancelled).toBe(true);
          const exited = await log.finished();
          expect(ExitReason[exited.reason]).toBe("CANCELLED");
          expect(exited.signal).toBe("SIGTERM");
          expect(alive(log.pid)).toBe(false);
          const unknown = await s.client.cancelOperation({ session: s.ref, operationId: "no-such-op" });
          expect(unknown.cancelled).toBe(false);
        } finally {
          await s.close();
        }
      });

      test("start failures: START_FAILED with a message; malformed requests refused", async () => {
        const s = await TestSession.open(ctx.server());
        try {
          const log = s.exec({ command: argv("krt-no-such-program") });
          const exited = await log.finished();
          expect(ExitReason[exited.reason]).toBe("START_FAILED");
          expect(exited.message).toContain("krt-no-such-program");
          expect(log.pid).toBe(0);
          await expectConnectError(s.exec({ command: argv() }).finished(), Code.InvalidArgument);
          await expectConnectError(s.exec({}).finished(), Code.InvalidArgument);
          await expectConnectError(
            s.exec({ operationId: "bad id!", command: argv("true") }).finished(),
            Code.InvalidArgument,
          );
          const exit = await s.sh("exit 0");
          expect(ExitReason[exit.exited.reason]).toBe("EXITED");
        } finally {
          await s.close();
        }
      });
    });

    test("background processes: start, list, wait, signal, exit codes, tails", async () => {
      const s = await TestSession.open(ctx.server());
      try {
        const started = await s.client.startProcess({
          session: s.ref,
          processId: "server",
          command: shell("echo hello; echo oops >&2; exec sleep 300"),
        });
        expect(started.process!.running).toBe(true);
        expect(started.process!.pid).toBeGreaterThan(0);
        await expectConnectError(
          s.client.startProcess({ session: s.ref, processId: "server", command: argv("true") }),
          Code.AlreadyExists,
        );
        await until(
          async () => {
            const p = (await s.client.waitProcess({ session: s.ref, processId: "server" })).process!;
            return (
              Buffer.from(p.stdoutTail).toString() === "hello\n" &&
              Buffer.from(p.stderrTail).toString() === "oops\n"
            );
          },
          20_000,
          "the tails",
        );
        const now = await s.client.waitProcess({ session: s.ref, processId: "server", timeoutMs: 0 });
        expect(now.process!.running).toBe(true);
        const short = await s.client.waitProcess({ session: s.ref, processId: "server", timeoutMs: 50 });
        expect(short.process!.running).toBe(true);

        await s.client.startProcess({ session: s.ref, processId: "seven", command: shell("exit 7") });
        const seven = await s.client.waitProcess({ session: s.ref, processId: "seven", timeoutMs: 20_000 });
        expect(seven.process!.running).toBe(false);
        expect(ExitReason[seven.process!.reason]).toBe("EXITED");
        expect(seven.process!.exitCode).toBe(7);

        const failed = await s.client.startProcess({
          session: s.ref,
          processId: "nothing",
          command: argv("krt-no-such-program"),
        });
        expect(ExitReason[failed.process!.reason]).toBe("START_FAILED");
        expect(Buffer.from(failed.process!.stderrTail).toString()).toContain("krt-no-such-program");

        const list = await s.client.listProcesses({ session: s.ref });
        expect(list.processes.map((p) => p.processId).sort()).toEqual(["nothing", "server", "seven"]);

        await expectConnectError(
          s.client.signalProcess({ session: s.ref, processId: "server", signal: "SIGNOPE" }),
          Code.InvalidArgument,
        );
        await expectConnectError(
          s.client.signalProcess({ session: s.ref, processId: "ghost", signal: "SIGTERM" }),
          Code.NotFound,
        );
        await s.client.signalProcess({ session: s.ref, processId: "server", signal: "SIGTERM" });
        const ended = await s.client.waitProcess({ session: s.ref, processId: "server", timeoutMs: 20_000 });
        expect(ended.process!.running).toBe(false);
        expect(ExitReason[ended.process!.reason]).toBe("EXITED");
        expect(ended.process!.signal).toBe("SIGTERM");
        expect(ended.process!.finishedMicros).toBeGreaterThanOrEqual(ended.process!.startedMicros);
        expect(alive(started.process!.pid)).toBe(false);
      } finally {
        await s.close();
      }
    });

    test("Close CANCEL kills every process of the session before it returns (checked by pid)", async () => {
      const s = await TestSession.open(ctx.server());
      // A process ignoring SIGTERM with children, a plain one, and a running Exec with a child.
      await s.client.startProcess({
        session: s.ref,
        processId: "stubborn",
        command: shell("trap '' TERM; sleep 300 & echo $! > stubborn-child; echo $$ > stubborn-pid; wait"),
      });
      await s.client.startProcess({ session: s.ref, processId: "plain", command: argv("sleep", "300") });
      const log = s.exec({ command: shell("sleep 300 & echo $! > exec-child; echo ready; wait") });
      await log.waitFor("stdout", "ready");
      await until(
        () =>
          existsSync(join(s.workspace, "stubborn-child")) && existsSync(join(s.workspace, "stubborn-pid")),
        20_000,
        "pids written",
      );
      const read = async (name: string) => Number((await s.read(name)).data.toString().trim());
      const pids = [
        await read("stubborn-child"),
        await read("stubborn-pid"),
        await read("exec-child"),
        log.pid,
        (await s.client.listProcesses({ session: s.ref })).processes.find((p) => p.processId === "plain")!
          .pid,
      ];
      for (const pid of pids) expect(alive(pid)).toBe(true);
      const closed = await s.client.close({ session: s.ref, mode: CloseMode.CANCEL });
      for (const pid of pids) expect(alive(pid)).toBe(false);
      expect(closed.info!.runningProcesses).toBe(0);
      expect(closed.info!.runningOperations).toBe(0);
      const exited = await log.finished();
      expect(ExitReason[exited.reason]).toBe("CANCELLED");
      await s.close();
    });

    test("Close DRAIN lets the running command finish, refuses new operations meanwhile, then stops processes", async () => {
      const s = await TestSession.open(ctx.server());
      await s.client.startProcess({ session: s.ref, processId: "bg", command: argv("sleep", "300") });
      const bgPid = (await s.client.listProcesses({ session: s.ref })).processes[0]!.pid;
      const log = s.exec({
        command: shell("echo ready; while [ ! -e finish ]; do sleep 0.02; done; echo done"),
      });
      await log.waitFor("stdout", "ready");
      const closing = s.client.close({ session: s.ref, mode: CloseMode.DRAIN, deadlineMs: 120_000 });
      await until(
        async () => (await s.client.status({ runUid: s.runUid })).info!.state === SessionState.DRAINING,
        20_000,
        "DRAINING",
      );
      await expectConnectError(s.client.stat({ session: s.ref, path: "" }), Code.FailedPrecondition);
      await expectConnectError(s.sh("true"), Code.FailedPrecondition);
      expect(alive(bgPid)).toBe(true);
      writeFileSync(join(s.workspace, "finish"), ""); // from outside: the session takes no writes now
      const closed = await closing;
      expect(SessionState[closed.info!.state]).toBe("CLOSED");
      const exited = await log.finished();
      expect(ExitReason[exited.reason]).toBe("EXITED");
      expect(log.text("stdout")).toBe("ready\ndone\n");
      expect(alive(bgPid)).toBe(false);
      const bg = (await s.client.listProcesses({ session: s.ref })).processes[0]!;
      expect(bg.running).toBe(false);
      expect(ExitReason[bg.reason]).toBe("CANCELLED");
      await s.close();
    });

    test("Close DRAIN past its deadline cancels the command", async () => {
      const s = await TestSession.open(ctx.server());
      const log = s.exec({ command: shell("echo ready; exec sleep 300") });
      await log.waitFor("stdout", "ready");
      await s.client.close({ session: s.ref, mode: CloseMode.DRAIN, deadlineMs: 200 });
      const exited = await log.finished();
      expect(ExitReason[exited.reason]).toBe("CANCELLED");
      expect(alive(log.pid)).toBe(false);
      await s.close();
    });

    sessionFilesSuite(ctx);
    sessionListingSuite(ctx);
  });
}
