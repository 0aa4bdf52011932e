/** The server's /metrics (on its socket) counts what happened, with bounded labels only. */

import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { fileURLToPath } from "node:url";
import { Code } from "@connectrpc/connect";
import { sourceTarget } from "../conformance/conformance.ts";
import { bashScripts } from "../conformance/language-scripts.ts";
import { SERVER_TIMEOUT_MS, ServerProcess } from "../conformance/server-process.ts";
import { execute, executeToEnd, expectConnectError, inline } from "../conformance/suite/helpers.ts";

describe("Runtime Server metrics", () => {
  let server: ServerProcess;
  beforeAll(async () => {
    server = await ServerProcess.start(
      sourceTarget("bash", fileURLToPath(new URL("./main.ts", import.meta.url))),
      {
        warmPool: 0,
      },
    );
  }, SERVER_TIMEOUT_MS);
  afterAll(async () => {
    await server?.stop();
  }, SERVER_TIMEOUT_MS);

  test("counts starts, ends by reason, refusals; gauges running and warm", async () => {
    await executeToEnd(server, inline(bashScripts.exit(0)));
    await executeToEnd(server, inline(bashScripts.exit(2)));
    await executeToEnd(server, { ...inline(bashScripts.hello), args: ["x"] });
    await expectConnectError(
      execute(server, { ...inline(bashScripts.hello), runUid: "../bad" }).done,
      Code.InvalidArgument,
    );
    const response = await fetch("http://runtime-server/metrics", {
      unix: server.settings.socket,
    } as RequestInit);
    expect(response.status).toBe(200);
    const text = await response.text();
    expect(text).toContain('kruntimes_runtime_server_executions_started_total{start="cold"} 2');
    expect(text).toContain('kruntimes_runtime_server_executions_finished_total{reason="COMPLETED"} 2');
    expect(text).toContain('kruntimes_runtime_server_executions_finished_total{reason="START_FAILED"} 1');
    expect(text).toContain('kruntimes_runtime_server_calls_refused_total{code="InvalidArgument"} 1');
    expect(text).toContain("kruntimes_runtime_server_executions_running 0");
    expect(text).toContain("kruntimes_runtime_server_warm_ready 0");
    expect(text).toMatch(/kruntimes_runtime_server_launch_seconds_count\{start="cold"\} 2/);
    expect(text).not.toContain("run-");
  });
});
