/**
 * docs/runtime-server.md shows how to talk to a server with curl; this runs that block, as
 * written, against a real server (only the socket path is swapped for a temporary one).
 */

import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { sourceTarget } from "../conformance/conformance.ts";
import { SERVER_TIMEOUT_MS, ServerProcess } from "../conformance/server-process.ts";

const root = fileURLToPath(new URL("../..", import.meta.url));
const doc = readFileSync(`${root}/docs/runtime-server.md`, "utf8");

function testedBlock(): string {
  const at = doc.indexOf("<!-- docs-test: runtimes/server/docs-example.test.ts");
  if (at === -1) throw new Error("docs/runtime-server.md lost its docs-test marker");
  const match = /```bash\n([\s\S]*?)```/.exec(doc.slice(at));
  if (match === null) throw new Error("no bash block after the docs-test marker");
  return match[1]!;
}

describe("docs/runtime-server.md curl example", () => {
  let server: ServerProcess;
  beforeAll(async () => {
    server = await ServerProcess.start(sourceTarget("bash", `${root}/runtimes/server/main.ts`), {
      warmPool: 1,
    });
  }, SERVER_TIMEOUT_MS);
  afterAll(async () => {
    await server?.stop();
  }, SERVER_TIMEOUT_MS);

  test(
    "Health, a streamed Execute and List answer as the page shows",
    () => {
      const block = testedBlock();
      const script = block.replace("sock=/var/run/kruntimes/runtime.sock", `sock=${server.settings.socket}`);
      expect(script).not.toBe(block);
      const run = Bun.spawnSync({ cmd: ["bash", "-euo", "pipefail", "-c", script] });
      const out = run.stdout.toString();
      expect(run.stderr.toString()).toBe("");
      expect(run.exitCode).toBe(0);
      const lines = out.trim().split("\n");
      expect(JSON.parse(lines[0]!).status).toBe("SERVING_STATUS_SERVING");
      const started = JSON.parse(lines[1]!).event.started;
      expect([started.runUid, started.attempt]).toEqual(["demo-1", 1]);
      expect(out).toContain('"data":"aGVsbG8K"'); // base64 of "hello\n"
      const exited = JSON.parse(lines.find((l) => l.includes('"exited"'))!).event.exited;
      expect([exited.reason, exited.exitCode]).toEqual(["TASK_EXIT_REASON_COMPLETED", 3]);
      const list = JSON.parse(lines.at(-1)!);
      expect(list.executions[0].runUid).toBe("demo-1");
      expect(list.executions[0].state).toBe("TASK_STATE_EXITED");
    },
    SERVER_TIMEOUT_MS,
  );
});
