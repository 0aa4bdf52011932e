/** Bad start-up input ends the server at once with an error that says what to do. */

import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { sourceTarget } from "../conformance/conformance.ts";
import { SERVER_TIMEOUT_MS, ServerProcess } from "../conformance/server-process.ts";

const main = fileURLToPath(new URL("./main.ts", import.meta.url));
const dir = mkdtempSync(join(tmpdir(), "krt-rs-start-"));

function start(args: string[]): { code: number | null; stderr: string } {
  const run = Bun.spawnSync({
    cmd: [process.execPath, main, "--workspace", join(dir, "ws"), "--state-dir", join(dir, "state"), ...args],
    stderr: "pipe",
    stdout: "pipe",
    timeout: 15_000,
  });
  return { code: run.exitCode, stderr: run.stderr.toString() };
}

describe("Runtime Server start-up errors", () => {
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  test("an unknown flag or runtime: exit 2 with the usage", () => {
    expect(start(["--nope"])).toMatchObject({
      code: 2,
      stderr: expect.stringContaining("unknown flag --nope"),
    });
    const ruby = start(["--runtime", "ruby"]);
    expect(ruby.code).toBe(2);
    expect(ruby.stderr).toContain("must be bash or python");
  });

  test("an interpreter that does not run: exit 1, says to set --interpreter", () => {
    const result = start(["--interpreter", "/nonexistent/bash", "--socket", join(dir, "a.sock")]);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain("set --interpreter to a working bash");
  });

  test(
    "a socket path taken by a file or by a live server: exit 1, names the path",
    async () => {
      const file = join(dir, "not-a-socket");
      writeFileSync(file, "");
      const taken = start(["--socket", file]);
      expect(taken.code).toBe(1);
      expect(taken.stderr).toContain(`${file} exists and is not a socket`);
      const live = await ServerProcess.start(sourceTarget("bash", main), { warmPool: 0 });
      try {
        const second = start(["--socket", live.settings.socket]);
        expect(second.code).toBe(1);
        expect(second.stderr).toContain("another server is listening");
        expect((await live.clients.runtime.health({})).status).toBe(1);
      } finally {
        await live.stop();
      }
    },
    SERVER_TIMEOUT_MS,
  );
});
