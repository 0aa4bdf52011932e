/**
 * The Go SDK (sdk/go) against everything real: the chart in a fresh namespace and the `sdk`
 * ServiceAccount of test/e2e/sdk-support.ts. `go vet` and `go test` run in sdk/go with the
 * KRUNTIMES_TEST_* variables (unit tests, then the cluster tests, which create task, function and
 * session Runs through the chart's gateway), and every ```go program of docs/sdk/go.md is built
 * and run as written — KUBECONFIG is the `sdk` user's and KRT_GATEWAY_NAMESPACE the release's
 * namespace, as the page says — with the output its `sdk-go.test.ts expects:` comment names. The
 * page's Role must be the harness's SDK_USER_RULES.
 *
 * Go modules come from the module proxy (go.sum is committed); the first build of client-go on a
 * 2-core machine takes minutes, later ones hit Go's build cache.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { RuntimeResource } from "@kruntimes/api";
import { path } from "@kruntimes/kube";
import { testCluster } from "../support/cluster.ts";
import { runProcess } from "../support/process.ts";
import { SDK_USER_RULES, type SdkEnvironment, sdkEnvironment } from "./sdk-support.ts";

const ROOT = join(import.meta.dir, "..", "..");
const SDK = join(ROOT, "sdk", "go");
const DOC = join(ROOT, "docs", "sdk", "go.md");
const MODULE = "github.com/kruntimes/kruntimes/sdk/go";
const cluster = testCluster();
// Gateway pods are dialled by IP and the port-forward is a stand-in: that needs the local cluster.
const suite = cluster?.local ? describe : describe.skip;

interface Snippet {
  code: string;
  /** What its output must include (the `<!-- sdk-go.test.ts expects: "…", … -->` after it). */
  expects: string[];
}

/** The ```go blocks of the page, in order, each a complete program, with its expected output. */
function goSnippets(markdown: string): Snippet[] {
  const out: Snippet[] = [];
  for (const m of markdown.matchAll(/^```go\n([\s\S]*?)^```$/gm)) {
    const after = markdown.slice((m.index ?? 0) + m[0].length);
    const next = after.search(/^```/m);
    const comment = /<!-- sdk-go\.test\.ts expects: (.*?) -->/.exec(next < 0 ? after : after.slice(0, next));
    out.push({ code: m[1] as string, expects: comment ? (JSON.parse(`[${comment[1]}]`) as string[]) : [] });
  }
  return out;
}

/** A module holding each snippet as a main package, built against the SDK in this checkout. */
function snippetModule(snippets: Snippet[]): string {
  const dir = mkdtempSync(join(tmpdir(), "sdk-go-snippets-"));
  // The SDK's own requirements (every indirect one listed) and go.sum: nothing to resolve.
  const sdkMod = readFileSync(join(SDK, "go.mod"), "utf8");
  const requires = [...sdkMod.matchAll(/^require \([\s\S]*?^\)$/gm)].map((m) => m[0]).join("\n\n");
  writeFileSync(
    join(dir, "go.mod"),
    `module snippets\n\ngo 1.26.0\n\nrequire ${MODULE} v0.0.0\n\n${requires}\n\nreplace ${MODULE} => ${SDK}\n`,
  );
  writeFileSync(join(dir, "go.sum"), readFileSync(join(SDK, "go.sum")));
  for (const [i, s] of snippets.entries()) {
    mkdirSync(join(dir, `snippet${i + 1}`));
    writeFileSync(join(dir, `snippet${i + 1}`, "main.go"), s.code);
  }
  return dir;
}

suite("Go SDK against the chart's gateway", () => {
  let sdk: SdkEnvironment | undefined;

  beforeAll(async () => {
    const c = cluster as NonNullable<typeof cluster>;
    sdk = await sdkEnvironment(c, "sdk-go");
    // Sessions hold a whole pod and it is replaced after them: more than the chart's one bash pod
    // lets the session tests and programs run beside the task and function ones.
    await c.client.patch(path(RuntimeResource, sdk.namespace, "bash"), { spec: { replicas: 3 } });
  }, 300_000);

  afterAll(async () => {
    await sdk?.remove();
  }, 120_000);

  const goEnv = () => ({ ...process.env, ...(sdk as SdkEnvironment).env });

  test("go vet", async () => {
    const r = await runProcess(["go", "vet", "./..."], { cwd: SDK, env: goEnv() });
    if (r.code !== 0) console.error(r.stdout, r.stderr);
    expect(r.code).toBe(0);
  }, 600_000);

  test("go test: unit and cluster tests", async () => {
    const r = await runProcess(["go", "test", "-count=1", "-timeout", "240s", "-v", "./..."], {
      cwd: SDK,
      env: goEnv(),
    });
    if (r.code !== 0) console.error(r.stdout, r.stderr);
    expect(r.code).toBe(0);
    // The cluster tests ran (nothing was skipped for want of the environment).
    expect(r.stdout).toContain("--- PASS: TestClusterSession");
    expect(r.stdout).not.toContain("--- SKIP");
  }, 600_000);

  test("every go program of docs/sdk/go.md runs as written", async () => {
    const env = sdk as SdkEnvironment;
    const snippets = goSnippets(readFileSync(DOC, "utf8"));
    expect(snippets.length).toBeGreaterThanOrEqual(5);
    const dir = snippetModule(snippets);
    const build = await runProcess(["go", "build", "-o", join(dir, "bin") + "/", "./..."], {
      cwd: dir,
      env: process.env,
    });
    if (build.code !== 0) console.error(build.stdout, build.stderr);
    expect(build.code).toBe(0);
    for (const [i, s] of snippets.entries()) {
      const r = await runProcess([join(dir, "bin", `snippet${i + 1}`)], {
        cwd: dir,
        env: {
          PATH: process.env.PATH ?? "",
          HOME: dir,
          KUBECONFIG: env.kubeconfig,
          KRT_GATEWAY_NAMESPACE: env.namespace,
        },
      });
      const missing = s.expects.filter((e) => !r.stdout.includes(e));
      if (r.code !== 0 || missing.length > 0)
        console.error(`program ${i + 1}:\n${s.code}\n--- stdout\n${r.stdout}\n--- stderr\n${r.stderr}`);
      expect({ program: i + 1, code: r.code, missing }).toEqual({ program: i + 1, code: 0, missing: [] });
    }
  }, 600_000);

  test("the page's Role is the one the harness grants (SDK_USER_RULES)", () => {
    const doc = readFileSync(DOC, "utf8");
    const roles = [...doc.matchAll(/^```yaml\n([\s\S]*?)^```$/gm)]
      .map((m) => Bun.YAML.parse(m[1] as string) as { kind?: string; rules?: unknown })
      .filter((y) => y?.kind === "Role");
    expect(roles.length).toBe(1);
    expect(roles[0]?.rules).toEqual(SDK_USER_RULES);
  });
});
