/**
 * docs/runtime-server.md shows Register, Invoke and Unregister with curl; this runs that block, as
 * written, against a real bash server (only the socket path is swapped for a temporary one).
 */

import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { sourceTarget } from "../conformance/conformance.ts";
import { SERVER_TIMEOUT_MS, ServerProcess } from "../conformance/server-process.ts";

const root = fileURLToPath(new URL("../..", import.meta.url));
const doc = readFileSync(`${root}/docs/runtime-server.md`, "utf8");

function testedBlock(): string {
  const at = doc.indexOf("<!-- docs-test: runtimes/server/docs-functions-example.test.ts");
  if (at === -1) throw new Error("docs/runtime-server.md lost its function docs-test marker");
  const match = /```bash\n([\s\S]*?)```/.exec(doc.slice(at));
  if (match === null) throw new Error("no bash block after the function docs-test marker");
  return match[1]!;
}

describe("docs/runtime-server.md function curl example", () => {
  let server: ServerProcess;
  beforeAll(async () => {
    server = await ServerProcess.start(sourceTarget("bash", `${root}/runtimes/server/main.ts`), {
      warmPool: 0,
    });
  }, SERVER_TIMEOUT_MS);
  afterAll(async () => {
    await server?.stop();
  }, SERVER_TIMEOUT_MS);

  test(
    "Register, Invoke, a stale Invoke and Unregister answer as the page shows",
    () => {
      const block = testedBlock();
      const script = block.replace("sock=/var/run/kruntimes/runtime.sock", `sock=${server.settings.socket}`);
      expect(script).not.toBe(block);
      const run = Bun.spawnSync({ cmd: ["bash", "-euo", "pipefail", "-c", script] });
      expect(run.stderr.toString()).toBe("");
      expect(run.exitCode).toBe(0);
      const [registered, invoked, stale, unregistered] = run.stdout
        .toString()
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l));
      expect(registered.registration.state).toBe("FUNCTION_STATE_READY");
      expect(registered.created).toBe(true);
      expect(invoked.status).toBe(200);
      expect(invoked.contentType).toBe("text/plain; charset=utf-8");
      expect(Buffer.from(invoked.body, "base64").toString()).toBe("hello world");
      expect(stale.code).toBe("failed_precondition");
      expect(stale.details[0].type).toBe("kruntimes.runtime.v1.InvokeFailure");
      expect(stale.details[0].value).toBe("CAI"); // reason STALE (2)
      expect(unregistered.registration.state).toBe("FUNCTION_STATE_ENDED");
      expect(unregistered.registration.endReason).toBe("FUNCTION_END_REASON_CANCELLED");
    },
    SERVER_TIMEOUT_MS,
  );
});
