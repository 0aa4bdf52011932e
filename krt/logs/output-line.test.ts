import { describe, expect, test } from "bun:test";
import { matches, parseOutputLine } from "./output-line.ts";
import { sinceCreation } from "./pod-output.ts";
import { tailLines } from "./read-logs.ts";

const rec = (o: Record<string, unknown>) =>
  JSON.stringify({
    level: 30,
    time: 1,
    msg: "output",
    run: "r",
    runUID: "u1",
    namespace: "ns",
    attempt: 1,
    stream: "stdout",
    line: "hi",
    ...o,
  });

describe("parseOutputLine", () => {
  test("reads runtimed's output record", () => {
    expect(parseOutputLine(rec({}))).toEqual({
      run: "r",
      runUID: "u1",
      namespace: "ns",
      attempt: 1,
      stream: "stdout",
      line: "hi",
    });
    expect(parseOutputLine(rec({ stream: "stderr", line: "" }))?.stream).toBe("stderr");
  });
  test("skips other log lines, non-JSON and malformed records", () => {
    expect(parseOutputLine(rec({ msg: "run started" }))).toBeUndefined();
    expect(parseOutputLine("output: plain text")).toBeUndefined();
    expect(parseOutputLine('{"msg":"output",')).toBeUndefined();
    expect(parseOutputLine(rec({ stream: "stdin" }))).toBeUndefined();
    expect(parseOutputLine(rec({ attempt: "1" }))).toBeUndefined();
    expect(parseOutputLine(rec({ line: 5 }))).toBeUndefined();
    expect(parseOutputLine(rec({ runUID: undefined }))).toBeUndefined();
  });
  test("a line whose text contains JSON is kept verbatim", () => {
    expect(parseOutputLine(rec({ line: '{"msg":"output"}' }))?.line).toBe('{"msg":"output"}');
  });
});

describe("matches", () => {
  const o = { run: "r", runUID: "u1", namespace: "ns", attempt: 2, stream: "stdout" as const, line: "" };
  test("by Run UID, and by attempt when one is asked for", () => {
    expect(matches(o, { runUID: "u1" })).toBe(true);
    expect(matches(o, { runUID: "u2" })).toBe(false);
    expect(matches(o, { runUID: "u1", attempt: 2 })).toBe(true);
    expect(matches(o, { runUID: "u1", attempt: 1 })).toBe(false);
  });
});

describe("tails and since", () => {
  test("tailLines drops only the final empty line", () => {
    expect(tailLines("a\nb\n")).toEqual(["a", "b"]);
    expect(tailLines("a\n\nb")).toEqual(["a", "", "b"]);
    expect(tailLines(undefined)).toEqual([]);
    expect(tailLines("")).toEqual([]);
  });
  test("sinceCreation is one second before creationTimestamp, in RFC 3339 seconds", () => {
    expect(sinceCreation("2026-12-03T06:00:00Z")).toBe("2026-12-03T05:59:59Z");
    expect(sinceCreation(undefined)).toBeUndefined();
    expect(sinceCreation("garbage")).toBeUndefined();
  });
});
