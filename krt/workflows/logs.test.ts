import { describe, expect, test } from "bun:test";
import type { CliError } from "../errors.ts";
import type { LogSink } from "../logs/log-sink.ts";
import { colourEnabled } from "../output/colour.ts";
import { jobPhaseCounts } from "./columns.ts";
import { checkFilter, labelSink, logSources } from "./logs.ts";
import { fixtureRun } from "./testdata.ts";

const labels = (s: ReturnType<typeof logSources>) =>
  s.map((x) => (x.kind === "run" ? `${x.label} ${x.run}` : `${x.label} → ${x.workflowRun}`));

describe("logSources", () => {
  test("jobs in needs order, steps in order; steps without a child Run and Skipped jobs have none", () => {
    expect(labels(logSources(fixtureRun(), {}))).toEqual([
      "build/checkout.clone ci-x7k2p-build-checkout-clone",
      "build/compile ci-x7k2p-build-compile",
      "docs → ci-x7k2p-docs",
      "test/unit ci-x7k2p-test-unit",
    ]);
  });
  test("--job and --step narrow it; a step that uses an Action matches its Action's steps", () => {
    expect(labels(logSources(fixtureRun(), { job: "test" }))).toEqual(["test/unit ci-x7k2p-test-unit"]);
    expect(labels(logSources(fixtureRun(), { step: "checkout" }))).toEqual([
      "build/checkout.clone ci-x7k2p-build-checkout-clone",
    ]);
    expect(labels(logSources(fixtureRun(), { job: "docs" }))).toEqual(["docs → ci-x7k2p-docs"]);
  });
});

describe("checkFilter", () => {
  const message = (f: () => void) => {
    try {
      f();
    } catch (e) {
      return `${(e as CliError).message} | ${(e as CliError).hint}`;
    }
    return "no error";
  };
  test("an unknown job or step names the ones there are", () => {
    expect(message(() => checkFilter(fixtureRun(), { job: "nope" }))).toBe(
      'workflowrun "ci-x7k2p" has no job "nope" | its jobs: build, docs, test, deploy, notify',
    );
    expect(message(() => checkFilter(fixtureRun(), { job: "build", step: "unit" }))).toBe(
      'job "build" has no step "unit" | its steps: checkout, compile',
    );
    expect(message(() => checkFilter(fixtureRun(), { job: "docs", step: "x" }))).toBe(
      'job "docs" has no step "x" | its jobs call Workflows; use --job',
    );
    expect(message(() => checkFilter(fixtureRun(), { step: "unit" }))).toBe("no error");
  });
});

test("labelSink puts [label] before lines and notes, keeping the stream", () => {
  const got: string[] = [];
  const inner: LogSink = {
    line: (stream, text) => got.push(`${stream}: ${text}`),
    note: (text) => got.push(`note: ${text}`),
  };
  const s = labelSink(inner, "build/compile");
  s.line("stdout", "hi");
  s.line("stderr", "oops");
  s.note("gone");
  expect(got).toEqual([
    "stdout: [build/compile] hi",
    "stderr: [build/compile] oops",
    "note: [build/compile] gone",
  ]);
});

test("jobPhaseCounts: a job without status is Pending; outcomes first", () => {
  expect(jobPhaseCounts(fixtureRun())).toBe("2 Succeeded, 1 Failed, 2 Skipped");
  const r = fixtureRun();
  r.status = undefined;
  expect(jobPhaseCounts(r)).toBe("5 Pending");
});

test("colours only on a terminal, without NO_COLOR, TERM not dumb", () => {
  const tty = { isTTY: true };
  expect(colourEnabled(tty, {})).toBe(true);
  expect(colourEnabled({ isTTY: false }, {})).toBe(false);
  expect(colourEnabled(tty, { NO_COLOR: "1" })).toBe(false);
  expect(colourEnabled(tty, { TERM: "dumb" })).toBe(false);
});
