import { describe, expect, test } from "bun:test";
import { codeClass, countedBody, createMaintainerMetrics } from "./maintainer-metrics.ts";

describe("maintainer metrics", () => {
  test("every series exists from the start, labelled only by closed sets", async () => {
    const m = createMaintainerMetrics(false);
    const text = await m.registry.metrics();
    for (const line of [
      'kruntimes_artifact_maintainer_deletions_total{result="ok"} 0',
      'kruntimes_artifact_maintainer_deletions_total{result="failed"} 0',
      'kruntimes_artifact_maintainer_download_requests_total{code="2xx"} 0',
      'kruntimes_artifact_maintainer_download_requests_total{code="5xx"} 0',
      'kruntimes_artifact_maintainer_authorization_denials_total{reason="forbidden"} 0',
      "kruntimes_artifact_maintainer_download_bytes_total 0",
      "kruntimes_artifact_maintainer_deleted_objects_total 0",
    ])
      expect(text).toContain(line);
  });

  test("status codes fold into classes", () => {
    expect([200, 206, 304, 401, 403, 404, 409, 410, 500, 502].map(codeClass)).toEqual([
      "2xx",
      "2xx",
      "2xx",
      "4xx",
      "4xx",
      "4xx",
      "4xx",
      "4xx",
      "5xx",
      "5xx",
    ]);
  });

  test("bytes are counted as they stream, and only what was read", async () => {
    const m = createMaintainerMetrics(false);
    const chunks = [new Uint8Array(1000), new Uint8Array(24), new Uint8Array(5000)];
    const body = countedBody(
      new ReadableStream({
        pull(ctl) {
          const c = chunks.shift();
          if (c) ctl.enqueue(c);
          else ctl.close();
        },
      }),
      m,
    );
    const reader = body.getReader();
    await reader.read();
    expect((await m.bytesServed.get()).values[0]?.value).toBe(1000);
    let rest = 0;
    for (let r = await reader.read(); !r.done; r = await reader.read()) rest += r.value.byteLength;
    expect(rest).toBe(5024);
    expect((await m.bytesServed.get()).values[0]?.value).toBe(6024);
  });
});
