import { describe, expect, test } from "bun:test";
import type { InputDeclaration, Workflow } from "@kruntimes/api";
import { CliError } from "../errors.ts";
import { ExitCode } from "../exit-codes.ts";
import { parseWithFlags, resolveInputs } from "./inputs.ts";
import { renderWorkflowRun } from "./render-run.ts";

const DECLS: Record<string, InputDeclaration> = {
  version: { type: "string", required: true },
  replicas: { type: "number", default: "2" },
  debug: { type: "boolean", default: "false" },
  note: { description: "optional, no default" },
};

function usageError(f: () => unknown): CliError {
  try {
    f();
  } catch (e) {
    expect(e).toBeInstanceOf(CliError);
    expect((e as CliError).exitCode).toBe(ExitCode.Usage);
    return e as CliError;
  }
  throw new Error("expected a usage error");
}

describe("parseWithFlags", () => {
  test("splits at the first '=', keeps empty values", () => {
    expect(parseWithFlags(["a=1", "b=x=y", "c="])).toEqual({ a: "1", b: "x=y", c: "" });
  });
  test("rejects a pair without a name or '=', a bad name, a name given twice", () => {
    expect(usageError(() => parseWithFlags(["novalue"])).message).toContain('"novalue" is not NAME=VALUE');
    expect(usageError(() => parseWithFlags(["=1"])).message).toContain("is not NAME=VALUE");
    expect(usageError(() => parseWithFlags(["9x=1"])).message).toContain("input names are letters");
    expect(usageError(() => parseWithFlags(["a=1", "a=2"])).message).toContain("--with a is given twice");
  });
});

describe("resolveInputs", () => {
  test("applies defaults; leaves out optional inputs without one", () => {
    expect(resolveInputs("ci", DECLS, { version: "1.2" })).toEqual({
      version: "1.2",
      replicas: "2",
      debug: "false",
    });
  });
  test("given values win over defaults; numbers and booleans in their syntax", () => {
    expect(resolveInputs("ci", DECLS, { version: "2", replicas: "-1.5", debug: "true", note: "hi" })).toEqual(
      { version: "2", replicas: "-1.5", debug: "true", note: "hi" },
    );
  });
  test("every problem in one error; the hint lists the known inputs", () => {
    const e = usageError(() => resolveInputs("ci", DECLS, { replicas: "two", debug: "yes", colour: "red" }));
    expect(e.message).toBe(
      [
        'the inputs do not fit Workflow "ci":',
        '  --with replicas: "two" is not a number',
        '  --with debug: "yes" is not true or false',
        '  --with colour: Workflow "ci" has no input "colour" (inputs: debug, note, replicas, version)',
        '  Workflow "ci" needs input "version"',
      ].join("\n"),
    );
    expect(e.hint).toBe(
      "its inputs: debug (boolean, default false), note (string, optional), replicas (number, default 2), version (string, required)",
    );
  });
  test("a Workflow without inputs takes no --with", () => {
    const e = usageError(() => resolveInputs("plain", undefined, { x: "1" }));
    expect(e.message).toContain('--with x: Workflow "plain" has no input "x" (it declares none)');
    expect(e.hint).toBe("its inputs: none (trigger it without --with)");
    expect(resolveInputs("plain", undefined, {})).toEqual({});
  });
});

describe("renderWorkflowRun", () => {
  const wf: Workflow = {
    apiVersion: "kruntimes.io/v1alpha1",
    kind: "Workflow",
    metadata: { name: "ci", namespace: "team", resourceVersion: "7", uid: "u" },
    spec: {
      description: "build and test",
      inputs: DECLS,
      runtime: "bash",
      env: [{ name: "A", value: "1" }],
      jobs: {
        build: { steps: [{ name: "compile", run: "make", outputs: ["digest"] }] },
        test: { needs: ["build"], uses: "tests", with: { digest: "${{ jobs.build.outputs.digest }}" } },
      },
      outputs: { digest: "${{ jobs.build.outputs.digest }}" },
    },
  };
  test("copies jobs, runtime, env and outputs; names the Workflow; generateName by default", () => {
    const r = renderWorkflowRun(wf, { namespace: "team", inputs: { version: "1" } });
    expect(r).toEqual({
      apiVersion: "kruntimes.io/v1alpha1",
      kind: "WorkflowRun",
      metadata: { generateName: "ci-", namespace: "team" },
      spec: {
        workflowRef: { name: "ci" },
        inputs: { version: "1" },
        runtime: "bash",
        env: [{ name: "A", value: "1" }],
        jobs: wf.spec.jobs,
        outputs: wf.spec.outputs,
      },
    });
  });
  test("an exact name or a prefix; no inputs field when there are none", () => {
    const named = renderWorkflowRun(wf, { namespace: "team", name: "ci-1", inputs: {} });
    expect(named.metadata).toEqual({ name: "ci-1", namespace: "team" });
    expect("inputs" in named.spec).toBe(false);
    expect(renderWorkflowRun(wf, { namespace: "x", generateName: "nightly-", inputs: {} }).metadata).toEqual({
      generateName: "nightly-",
      namespace: "x",
    });
  });
});
