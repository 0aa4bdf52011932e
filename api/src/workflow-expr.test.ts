import { describe, expect, test } from "bun:test";
import { evaluate, parseTemplate } from "./workflow-expr.ts";

describe("workflow expressions", () => {
  test("splits text and references, trimming spaces inside the braces", () => {
    expect(parseTemplate("v=${{ inputs.version }}-${{jobs.build.outputs.digest}}")).toEqual([
      "v=",
      { kind: "inputs", key: "version" },
      "-",
      { kind: "jobs", job: "build", key: "digest" },
    ]);
    expect(parseTemplate("${{ steps.s-1.outputs.a.b }}")).toEqual([
      { kind: "steps", step: "s-1", key: "a.b" },
    ]);
    expect(parseTemplate("${{ workflow.name }}")).toEqual([{ kind: "workflow", key: "name" }]);
  });

  test("$${{ is a literal ${{, and text without expressions is one part", () => {
    expect(parseTemplate("echo $${{ inputs.x }}")).toEqual(["echo ${{ inputs.x }}"]);
    expect(parseTemplate("plain $HOME {{x}}")).toEqual(["plain $HOME {{x}}"]);
    expect(parseTemplate("")).toEqual([]);
  });

  test("rejects what is not a reference, with the position", () => {
    expect(() => parseTemplate("a ${{ inputs.x ")).toThrow('unclosed "${{" at character 3');
    expect(() => parseTemplate("${{ inputs.x || 'y' }}")).toThrow(
      "at character 1: \"inputs.x || 'y'\" is not a reference",
    );
    expect(() => parseTemplate("${{ jobs.Build.outputs.x }}")).toThrow("is not a reference");
    expect(() => parseTemplate("${{ secrets.token }}")).toThrow("is not a reference");
    expect(() => parseTemplate("${{ }}")).toThrow("is not a reference");
  });

  test("evaluates against a scope; a missing value is an error, never empty", () => {
    const scope = {
      inputs: { version: "1.2" },
      jobs: { build: { digest: "sha256:ab" } },
      steps: { compile: { out: "app" } },
      workflow: { name: "wf-1", namespace: "ci" },
    };
    expect(
      evaluate(
        "${{inputs.version}}/${{ jobs.build.outputs.digest }}/${{ steps.compile.outputs.out }}",
        scope,
      ),
    ).toBe("1.2/sha256:ab/app");
    expect(evaluate("${{ workflow.namespace }}/${{ workflow.name }}", scope)).toBe("ci/wf-1");
    expect(() => evaluate("${{ inputs.nope }}", scope)).toThrow('no input "nope"');
    expect(() => evaluate("${{ jobs.test.outputs.x }}", scope)).toThrow('job "test" has not succeeded');
    expect(() => evaluate("${{ jobs.build.outputs.x }}", scope)).toThrow('job "build" has no output "x"');
    expect(() => evaluate("${{ steps.compile.outputs.x }}", scope)).toThrow(
      'step "compile" wrote no output "x"',
    );
  });
});
