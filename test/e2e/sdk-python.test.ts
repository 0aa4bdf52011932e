/**
 * The Python SDK (sdk/python) against everything real: the chart in a fresh namespace and the
 * `sdk` ServiceAccount of test/e2e/sdk-support.ts. The SDK's pytest suite runs with the
 * KRUNTIMES_TEST_* variables (unit tests, then the cluster tests of Client and AsyncClient), and
 * every ```python snippet of docs/sdk/python.md runs as written — KUBECONFIG is the `sdk` user's,
 * KRT_GATEWAY_NAMESPACE the release's namespace, as the page tells a reader to set them.
 *
 * The venv lives in ~/.cache/kruntimes/venv/sdk-python-<hash of sdk/python/requirements-test.txt>
 * (pip from PyPI once per pin set); the package itself is installed fresh from ./sdk/python on
 * every run, without its dependencies and without build isolation.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { testCluster } from "../support/cluster.ts";
import { runProcess } from "../support/process.ts";
import { pythonWithSdk } from "./sdk-python-env.ts";
import { type SdkEnvironment, sdkEnvironment } from "./sdk-support.ts";

const ROOT = join(import.meta.dir, "..", "..");
const SDK = join(ROOT, "sdk", "python");
const DOC = join(ROOT, "docs", "sdk", "python.md");
const cluster = testCluster();
// Gateway pods are dialled by IP and the port-forward is a stand-in: that needs the local cluster.
const suite = cluster?.local ? describe : describe.skip;

/** The ```python blocks of the page, in order, each a complete script. */
function snippets(markdown: string): string[] {
  return [...markdown.matchAll(/^```python\n([\s\S]*?)^```$/gm)].map((m) => m[1] as string);
}

suite("Python SDK against the chart's gateway", () => {
  let sdk: SdkEnvironment | undefined;
  let py = "";

  beforeAll(async () => {
    [sdk, py] = await Promise.all([
      sdkEnvironment(cluster as NonNullable<typeof cluster>, "sdk-py"),
      pythonWithSdk(),
    ]);
  }, 600_000);

  afterAll(async () => {
    await sdk?.remove();
  }, 120_000);

  test("a non-editable install imports the package and its generated modules", async () => {
    const r = await runProcess(
      [
        py,
        "-c",
        "import kruntimes, kruntimes.gateway.v1.session_connect as s; print(kruntimes.__file__, s.SessionServiceClientSync.__name__)",
      ],
      { cwd: tmpdir() },
    );
    expect(r.stderr).toBe("");
    expect(r.stdout).toContain("site-packages/kruntimes/__init__.py SessionServiceClientSync");
  });

  test("pytest: unit and cluster tests, sync and asyncio", async () => {
    const env = sdk as SdkEnvironment;
    const r = await runProcess([py, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests"], {
      cwd: SDK,
      env: { ...process.env, ...env.env },
    });
    if (r.code !== 0) console.error(r.stdout, r.stderr);
    expect(r.code).toBe(0);
    // The cluster tests ran (nothing was skipped for want of the environment).
    expect(r.stdout).toMatch(/\d+ passed/);
    expect(r.stdout).not.toContain("skipped");
  }, 300_000);

  test("every python snippet of docs/sdk/python.md runs as written", async () => {
    const env = sdk as SdkEnvironment;
    const blocks = snippets(readFileSync(DOC, "utf8"));
    expect(blocks.length).toBeGreaterThan(5);
    const dir = mkdtempSync(join(tmpdir(), "sdk-py-snippets-"));
    for (const [i, code] of blocks.entries()) {
      const file = join(dir, `snippet-${i + 1}.py`);
      writeFileSync(file, code);
      const r = await runProcess([py, file], {
        cwd: dir,
        env: {
          PATH: process.env.PATH ?? "",
          HOME: dir,
          KUBECONFIG: env.kubeconfig,
          KRT_GATEWAY_NAMESPACE: env.namespace,
        },
      });
      if (r.code !== 0)
        console.error(`snippet ${i + 1}:\n${code}\n--- stdout\n${r.stdout}\n--- stderr\n${r.stderr}`);
      expect({ snippet: i + 1, code: r.code }).toEqual({ snippet: i + 1, code: 0 });
    }
  }, 300_000);
});
