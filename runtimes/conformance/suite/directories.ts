/**
 * RuntimeService.RemoveDirectory, which runtimed calls when a PersistentWorkspace bound to its pod
 * is deleted: a named working directory keeps its files between executions (only the default
 * `<run_uid>/<attempt>` ones are removed); RemoveDirectory deletes a tree, is idempotent, refuses
 * the root, paths leaving it (also through a symlink) and a directory a running execution works in.
 */

import { describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Code } from "@connectrpc/connect";
import { TaskExitReason } from "../../../api/gen/kruntimes/runtime/v1/task_pb.ts";
import { execute, executeToEnd, expectConnectError, inline, type SuiteContext, uid } from "./helpers.ts";

export function directoriesSuite(ctx: SuiteContext): void {
  const { scripts } = ctx;

  describe("RemoveDirectory", () => {
    test("a named working directory is kept between executions; RemoveDirectory deletes it once", async () => {
      const server = ctx.server();
      const dir = `workspaces/${uid("ws")}`;
      const first = await executeToEnd(server, { ...inline(scripts.hello), workingDir: dir });
      expect(TaskExitReason[first.exited.reason]).toBe("COMPLETED");
      expect(first.log.started?.workingDir).toBe(join(server.workspaceRoot, dir));
      mkdirSync(join(server.workspaceRoot, dir, "nested", "deeper"), { recursive: true });
      writeFileSync(join(server.workspaceRoot, dir, "nested", "deeper", "f"), "data");
      await executeToEnd(server, { ...inline(scripts.hello), workingDir: dir });
      expect(existsSync(join(server.workspaceRoot, dir, "nested", "deeper", "f"))).toBe(true);
      expect((await server.clients.runtime.removeDirectory({ path: dir })).existed).toBe(true);
      expect(existsSync(join(server.workspaceRoot, dir))).toBe(false);
      expect((await server.clients.runtime.removeDirectory({ path: dir })).existed).toBe(false);
      expect(existsSync(join(server.workspaceRoot, "workspaces"))).toBe(true);
    });

    test("the root, absolute paths and paths leaving the root are refused", async () => {
      const server = ctx.server();
      for (const path of ["", ".", "/etc", "..", "workspaces/../..", "a/../../b"]) {
        await expectConnectError(server.clients.runtime.removeDirectory({ path }), Code.InvalidArgument);
      }
      const outside = mkdtempSync(join(tmpdir(), "krt-rs-outside-"));
      try {
        writeFileSync(join(outside, "keep"), "x");
        mkdirSync(join(server.workspaceRoot, "workspaces"), { recursive: true });
        const link = `workspaces/${uid("link")}`;
        symlinkSync(outside, join(server.workspaceRoot, link));
        const msg = await expectConnectError(
          server.clients.runtime.removeDirectory({ path: `${link}/keep` }),
          Code.InvalidArgument,
        );
        expect(msg).toContain("resolves outside the workspace root");
        // The link itself is inside: removing it removes the link, never what it points to.
        expect((await server.clients.runtime.removeDirectory({ path: link })).existed).toBe(true);
        expect(existsSync(join(outside, "keep"))).toBe(true);
      } finally {
        rmSync(outside, { recursive: true, force: true });
      }
    });

    test("a directory a running execution works in is refused (FAILED_PRECONDITION)", async () => {
      const server = ctx.server();
      const dir = `workspaces/${uid("busy")}`;
      const runUid = uid("busy");
      const log = execute(server, { ...inline(scripts.sleep(30)), runUid, workingDir: `${dir}/sub` });
      await log.until((l) => l.text() === "ready\n");
      const msg = await expectConnectError(
        server.clients.runtime.removeDirectory({ path: dir }),
        Code.FailedPrecondition,
      );
      expect(msg).toContain("in use");
      await server.clients.task.cancel({ runUid, attempt: 1, force: true });
      await log.finished();
      expect((await server.clients.runtime.removeDirectory({ path: dir })).existed).toBe(true);
    });
  });
}
