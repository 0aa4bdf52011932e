/** `krt run --function` and `--manifest`: the Run they build, and the flag mistakes they refuse. */
import { describe, expect, test } from "bun:test";
import { Annotations, FunctionLimits } from "@kruntimes/api";
import { CliError } from "../errors.ts";
import { ExitCode } from "../exit-codes.ts";
import { buildRun, checkNoFunctionFlags, checkRunFlags, type RunFlags } from "./build-run.ts";
import { parseByteSize } from "./function-flags.ts";
import { parseManifest } from "./manifest.ts";

const base = (f: Partial<RunFlags> = {}): RunFlags => ({
  runtime: "python",
  args: [],
  env: [],
  file: "handler.py",
  script: "def handler(request):\n    return 'hi'\n",
  function: {},
  ...f,
});

function usage(fn: () => unknown): string {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(CliError);
    expect((e as CliError).exitCode).toBe(ExitCode.Usage);
    return (e as CliError).message;
  }
  throw new Error("no usage error");
}

describe("krt run --function", () => {
  test("every function flag lands in spec.mode.function; the file is the inline source", () => {
    const run = buildRun(
      base({
        function: {
          handler: "handle",
          concurrency: "4",
          idleTimeout: "10m",
          invocationTimeout: "45s",
          maxRequestBytes: "2Mi",
          maxResponseBytes: "65536",
        },
        env: ["GREETING=hi"],
        timeout: "1h",
        name: "hello",
      }),
      "team",
      1_700_000_000_000_000,
    );
    expect(run.spec.mode).toEqual({
      function: {
        handler: "handle",
        concurrency: 4,
        idleTimeout: "10m",
        invocationTimeout: "45s",
        maxRequestBytes: 2 * 1024 * 1024,
        maxResponseBytes: 65536,
      },
    });
    expect(run.spec.source).toEqual({ inline: "def handler(request):\n    return 'hi'\n" });
    expect(run.spec.timeout).toBe("1h");
    expect(run.spec.env).toEqual([{ name: "GREETING", value: "hi" }]);
    expect(run.metadata).toMatchObject({ name: "hello", namespace: "team" });
  });

  test("no function flags: the API's defaults apply (nothing written)", () => {
    expect(buildRun(base(), "team", 1).spec.mode).toEqual({ function: {} });
  });

  test.each([
    [{ file: undefined, script: undefined }, "--function needs --file"],
    [{ entrypoint: "/opt/x.sh" }, "--entrypoint is for tasks"],
    [{ args: ["echo", "hi"] }, "--function takes no arguments after --"],
    [
      { function: { concurrency: "0" } },
      `--concurrency "0" must be a whole number from 1 to ${FunctionLimits.maxConcurrency}`,
    ],
    [{ function: { concurrency: "65" } }, "--concurrency"],
    [{ function: { concurrency: "2.5" } }, "--concurrency"],
    [{ function: { idleTimeout: "soon" } }, '--idle-timeout "soon" is not a duration'],
    [
      { function: { invocationTimeout: "16m" } },
      '--invocation-timeout "16m" must be a duration of at most 15m',
    ],
    [
      { function: { maxRequestBytes: "17Mi" } },
      '--max-request-bytes "17Mi" must be a byte size from 1 to 16777216',
    ],
    [{ function: { maxResponseBytes: "lots" } }, "--max-response-bytes"],
    [{ function: { handler: "1bad" } }, '--handler "1bad" is not a function name'],
    [{ timeout: "forever" }, '--timeout "forever" is not a duration'],
  ] as const)("refused: %p", (flags, message) => {
    expect(usage(() => checkRunFlags(base(flags as Partial<RunFlags>)))).toContain(message);
  });

  test("function flags without --function are refused, naming them", () => {
    expect(usage(() => checkNoFunctionFlags({ handler: "h", idleTimeout: "1m" }))).toBe(
      "--handler, --idle-timeout are for function Runs: add --function",
    );
    checkNoFunctionFlags({});
  });

  test("byte sizes", () => {
    expect(parseByteSize("1024")).toBe(1024);
    expect(parseByteSize("512Ki")).toBe(512 * 1024);
    expect(parseByteSize("4Mi")).toBe(4 * 1024 * 1024);
    expect(parseByteSize("64k")).toBe(64_000);
    expect(parseByteSize("1.5Mi")).toBeUndefined();
    expect(parseByteSize("1Gi")).toBeUndefined();
  });
});

describe("krt run --manifest", () => {
  const manifest = `
apiVersion: kruntimes.io/v1alpha1
kind: Run
metadata:
  name: hello
  namespace: from-file
spec:
  runtime: python
  mode: { function: { handler: handler, concurrency: 2 } }
  source: { inline: "def handler(r): return 'hi'" }
`;
  const o = { defaultNamespace: "ctx", createdMicros: 123 };

  test("the manifest's Run, stamped with created-micros; its namespace unless -n", () => {
    const run = parseManifest(manifest, "run.yaml", o);
    expect(run.metadata.name).toBe("hello");
    expect(run.metadata.namespace).toBe("from-file");
    expect(run.metadata.annotations?.[Annotations.createdMicros]).toBe("123");
    expect(run.spec.mode.function).toEqual({ handler: "handler", concurrency: 2 });
    expect(parseManifest(manifest, "run.yaml", { ...o, namespace: "flag" }).metadata.namespace).toBe("flag");
  });

  test("--name replaces name and generateName; no name at all generates one from the runtime", () => {
    const renamed = parseManifest(manifest, "run.yaml", { ...o, name: "other" });
    expect(renamed.metadata.name).toBe("other");
    const anon = parseManifest(
      manifest.replace("  name: hello\n  namespace: from-file\n", "  labels: {}\n"),
      "r",
      o,
    );
    expect(anon.metadata).toMatchObject({ generateName: "python-", namespace: "ctx" });
  });

  test.each([
    ["kind: Runtime\napiVersion: kruntimes.io/v1alpha1\nspec: {}\n", "not a Run"],
    ["apiVersion: kruntimes.io/v1alpha1\nkind: Run\nspec: {}\n", "spec.runtime is missing"],
    [`${manifest}\n---\n${manifest}`, "expected one Run, found 2 documents"],
    ["", "expected one Run, found 0 documents"],
  ])("refused: %#", (text, message) => {
    expect(usage(() => parseManifest(text, "run.yaml", o))).toContain(message);
  });
});
