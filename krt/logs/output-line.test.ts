import { describe, expect, test } from "bun:test";
import { callSink, type LogSink } from "./log-sink.ts";
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
  test("shows a session's audit record as one stderr line, keyed by its operation", () => {
    const audit = JSON.stringify({
      level: 30,
      time: "t",
      component: "runtimed",
      pod: "p",
      run: "s",
      runUID: "u1",
      namespace: "ns",
      attempt: 1,
      audit: true,
      caller: "system:serviceaccount:team:agent",
      op: "exec",
      result: "ok",
      durationMs: 26.5,
      operation: "op-1",
      argv: ["echo", "hi"],
      msg: "session operation",
    });
    expect(parseOutputLine(audit)).toEqual({
      run: "s",
      runUID: "u1",
      namespace: "ns",
      attempt: 1,
      stream: "stderr",
      line: 'audit: exec by system:serviceaccount:team:agent: ok (26.5 ms) {"argv":["echo","hi"]}',
      call: "op-1",
    });
    expect(parseOutputLine(audit.replace('"audit":true', '"audit":false'))).toBeUndefined();
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

describe("function invocations and session operations", () => {
  test("a function line carries its invocation, a session line its operation, a task line none", () => {
    const base = { run: "f", runUID: "u1", namespace: "ns", attempt: 1, stream: "stdout", line: "hi" };
    expect(parseOutputLine(rec({ ...base, invocation: "inv-1" }))?.call).toBe("inv-1");
    expect(parseOutputLine(rec({ ...base, operation: "op-7" }))?.call).toBe("op-7");
    expect(parseOutputLine(rec(base))?.call).toBeUndefined();
    const o = parseOutputLine(rec({ ...base, invocation: "inv-1" }));
    if (!o) throw new Error("not parsed");
    expect(matches(o, { runUID: "u1", call: "inv-1" })).toBe(true);
    expect(matches(o, { runUID: "u1", call: "inv-2" })).toBe(false);
  });
  test("callSink filters to one call and prefixes lines that have one", () => {
    const got: string[] = [];
    const inner: LogSink = { line: (st, t) => got.push(`${st}:${t}`), note: (t) => got.push(`note:${t}`) };
    const only = callSink(inner, { only: "inv-1", prefix: true });
    only.line("stdout", "a", "inv-1");
    only.line("stdout", "b", "inv-2");
    only.line("stderr", "c");
    only.note("n");
    expect(got).toEqual(["stdout:[inv-1] a", "note:n"]);
    got.length = 0;
    const prefixed = callSink(inner, { prefix: true });
    prefixed.line("stdout", "a", "inv-1");
    prefixed.line("stdout", "task line");
    expect(got).toEqual(["stdout:[inv-1] a", "stdout:task line"]);
    expect(callSink(inner, {})).toBe(inner);
  });
});
