/**
 * The shipped artifact: runtimes/build.sh compiles the server into one binary, which must serve
 * Health, run a task and serve a function for both languages. Also a stream that stays silent for longer than
 * Bun's default idle timeout (10 s) must survive: runtimed waits on long quiet Runs.
 */

import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { ServingStatus } from "../../api/gen/kruntimes/runtime/v1/runtime_pb.ts";
import { serverFlags, sourceTarget } from "../conformance/conformance.ts";
import type { EventLog } from "../conformance/event-log.ts";
import { bashScripts, pythonScripts } from "../conformance/language-scripts.ts";
import { SERVER_TIMEOUT_MS, ServerProcess } from "../conformance/server-process.ts";
import { execute, executeToEnd, inline } from "../conformance/suite/helpers.ts";

const root = fileURLToPath(new URL("../..", import.meta.url));
const outDir = mkdtempSync(join(tmpdir(), "krt-rs-build-"));
const binary = join(outDir, "runtime-server");

describe("compiled Runtime Server binary", () => {
  let quietServer: ServerProcess;
  let quiet: EventLog;
  let built: Promise<number>;

  beforeAll(async () => {
    built = Bun.spawn({
      cmd: ["bash", "runtimes/build.sh", binary],
      cwd: root,
      stdout: "ignore",
      stderr: "inherit",
    }).exited;
    quietServer = await ServerProcess.start(sourceTarget("bash", join(root, "runtimes/server/main.ts")), {
      warmPool: 1,
    });
    quiet = execute(quietServer, inline("sleep 11\necho after-silence\n"));
  }, SERVER_TIMEOUT_MS);

  afterAll(async () => {
    await quietServer?.stop();
    rmSync(outDir, { recursive: true, force: true });
  }, SERVER_TIMEOUT_MS);

  for (const scripts of [bashScripts, pythonScripts]) {
    test(
      `serves Health and runs a ${scripts.language} task`,
      async () => {
        expect(await built).toBe(0);
        const server = await ServerProcess.start(
          {
            name: `${scripts.language} (compiled)`,
            argv: (s) => [binary, ...serverFlags(scripts.language, s)],
          },
          { warmPool: 1 },
        );
        try {
          const health = await server.clients.runtime.health({});
          expect(ServingStatus[health.status]).toBe("SERVING");
          const info = await server.clients.runtime.info({});
          expect(info.language).toBe(scripts.language);
          expect(info.serverVersion).toMatch(/^\d+\.\d+\.\d+/);
          const { log, exited } = await executeToEnd(server, inline(scripts.hello));
          expect(exited.exitCode).toBe(0);
          expect(log.text()).toBe("out\n");
          // A function: workers load and serve from the compiled binary too (binary Connect: the fast path).
          const functions = server.binaryClients.functions;
          const fn = { runUid: "compiled-fn", attempt: 1 };
          const { registration } = await functions.register({
            ...fn,
            source: scripts.functions.source,
            handler: "h_state",
          });
          expect(registration?.error).toBe("");
          const answer = await functions.invoke({ ...fn, invocationId: "c-1" });
          expect(new TextDecoder().decode(answer.body)).toBe(scripts.functions.stateResponses[0]!);
        } finally {
          expect(await server.stop()).toBe(0);
        }
      },
      SERVER_TIMEOUT_MS,
    );
  }

  test("a stream silent for longer than 10 s is not cut", async () => {
    const exited = await quiet.finished();
    expect(exited.exitCode).toBe(0);
    expect(quiet.text()).toBe("after-silence\n");
  }, 30_000);
});
