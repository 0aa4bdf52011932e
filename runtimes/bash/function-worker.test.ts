import { describe, expect, test } from "bun:test";
import { headerVariable, invocationVars } from "./function-worker.ts";

describe("bash function worker", () => {
  test("header names become KRUNTIME_HEADER_<NAME>", () => {
    expect(headerVariable("x-request-id")).toBe("KRUNTIME_HEADER_X_REQUEST_ID");
    expect(headerVariable("content.type2")).toBe("KRUNTIME_HEADER_CONTENT_TYPE2");
  });

  test("invocation variables survive quoting when bash sources them", () => {
    const tricky = `it's "$HOME" $(echo no) \`x\`\nline2`;
    const vars = invocationVars(
      { invocationId: "inv-1", body: new Uint8Array(), contentType: "text/plain", headers: { "x-tricky": tricky } },
      "/tmp/meta",
    );
    const script = `source /dev/stdin <<'KRT_EOF'\n${vars}KRT_EOF\nprintf '%s|%s|%s|%s' "$KRUNTIME_INVOCATION_ID" "$KRUNTIME_CONTENT_TYPE" "$KRUNTIME_RESPONSE_META" "$KRUNTIME_HEADER_X_TRICKY"`;
    const out = Bun.spawnSync({ cmd: ["/bin/bash", "--norc", "-c", script] }).stdout.toString();
    expect(out).toBe(`inv-1|text/plain|/tmp/meta|${tricky}`);
  });
});
