import { describe, expect, test } from "bun:test";
import { parseMeta, responseContentType } from "./response-meta.ts";

describe("response meta", () => {
  test("status, content type and headers; junk lines skipped", () => {
    expect(
      parseMeta("Status: 201\ncontent-type: application/json\nX-Trace: a:b\nnonsense\nstatus: 99x\n"),
    ).toEqual({
      status: 201,
      contentType: "application/json",
      headers: { "x-trace": "a:b" },
    });
    expect(parseMeta("")).toEqual({ status: undefined, contentType: undefined, headers: {} });
  });

  test("default content type by UTF-8 validity", () => {
    expect(responseContentType(new TextEncoder().encode("héllo"))).toBe("text/plain; charset=utf-8");
    expect(responseContentType(new Uint8Array([0xff, 0xfe]))).toBe("application/octet-stream");
  });
});
