/**
 * The dashboard end to end, in headless Chromium against the chart-installed dashboard on the
 * local cluster: sign in with a ServiceAccount token that may read one namespace and not another;
 * a Run created while the list is open appears and moves through its phases live; its detail shows
 * outputs, tails, the latency chart and logs that follow a Run printing once a second; a function
 * is invoked from its page; a forbidden namespace is explained; the console stays free of errors;
 * the backend refuses every write verb. Screenshots of each view in light and dark are written to
 * test/artifacts/dashboard/.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { RunResource, RuntimeResource, WorkflowRunResource } from "@kruntimes/api";
import { path, R } from "@kruntimes/kube";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { startS3Server } from "../localcluster/s3-server.ts";
import { maintainerEndpoint, releaseRuns } from "../support/artifacts.ts";
import { eventually, testCluster } from "../support/cluster.ts";
import { imageRuntime } from "../support/runtimes.ts";
import { HELM_MISSING, helmPath, ROOT } from "./chart-support.ts";
import { type DashboardEnv, dashboardEnvironment, SCREENSHOTS, VIEWER_RULES } from "./dashboard-support.ts";
import { CHROMIUM, CHROMIUM_MISSING, launchChromium } from "./docs-site-support.ts";

const cluster = testCluster();
if (!cluster) throw new Error("KUBECONFIG is required (see test/README.md)");
if (!helmPath()) throw new Error(HELM_MISSING);
if (!existsSync(CHROMIUM)) throw new Error(CHROMIUM_MISSING);
const client = cluster.client;

let env: DashboardEnv;
let browser: Browser;
let context: BrowserContext;
let page: Page;
/** Console errors and uncaught exceptions, with the page URL they happened on. */
const consoleErrors: string[] = [];
/** Chromium logs every HTTP error response as a console error; the 401/403s the tests provoke are expected. */
const EXPECTED_REFUSAL = /^Failed to load resource: the server responded with a status of 40[13]/;

beforeAll(async () => {
  env = await dashboardEnvironment(cluster);
  browser = await launchChromium();
  context = await browser.newContext({ viewport: { width: 1280, height: 860 }, colorScheme: "light" });
  page = await context.newPage();
  page.on("console", (m) => {
    if (m.type() === "error" && !EXPECTED_REFUSAL.test(m.text()))
      consoleErrors.push(`${page.url()}: ${m.text()}`);
  });
  page.on("pageerror", (e) => consoleErrors.push(`${page.url()}: ${e.message}`));
}, 240_000);

afterAll(async () => {
  await browser?.close();
  await env?.remove();
}, 120_000);

function createRun(name: string, inline: string, mode: Record<string, unknown> = { task: {} }) {
  return client.create(path(RunResource, env.namespace), {
    apiVersion: "kruntimes.io/v1alpha1",
    kind: "Run",
    // As krt does: the creation time in µs, so the breakdown has its schedule span.
    metadata: { name, annotations: { "kruntimes.io/created-micros": String(Date.now() * 1000) } },
    spec: { runtime: "bash", mode, source: { inline } },
  });
}

/** Light and dark screenshots of what the page shows now, switching with the theme menu. */
async function screenshots(view: string) {
  const select = page.getByTestId("theme");
  for (const theme of ["light", "dark"] as const) {
    await select.selectOption(theme);
    await page.waitForFunction(`document.documentElement.dataset.theme === ${JSON.stringify(theme)}`);
    await page.screenshot({ path: join(SCREENSHOTS, `${view}-${theme}.png`) });
  }
  await select.selectOption("light");
}

const TICKER = `for i in 1 2 3 4 5 6; do echo "tick $i"; sleep 1; done
echo "oops" >&2
echo "result=42" >> "$KRUNTIME_OUTPUTS"`;

const CLUSTER_ROLES = { group: "rbac.authorization.k8s.io", version: "v1", plural: "clusterroles" };
const CLUSTER_ROLE_BINDINGS = {
  group: "rbac.authorization.k8s.io",
  version: "v1",
  plural: "clusterrolebindings",
};

const PIPELINE = {
  apiVersion: "kruntimes.io/v1alpha1",
  kind: "WorkflowRun",
  spec: {
    runtime: "bash",
    jobs: {
      build: {
        steps: [
          { name: "compile", run: "echo built" },
          { name: "pack", run: "echo packed" },
        ],
      },
      test: { needs: ["build"], steps: [{ name: "unit", run: "echo ok" }] },
      lint: { needs: ["build"], steps: [{ name: "vet", run: "echo ok" }] },
    },
  },
};

describe("dashboard", () => {
  test("the backend refuses every write verb, and a request without a token", async () => {
    const routes = [
      "/",
      "/healthz",
      "/metrics",
      "/api/session",
      "/api/namespaces",
      `/api/namespaces/${env.namespace}/watch/runs`,
      `/api/namespaces/${env.namespace}/runs/x/logs`,
      `/api/namespaces/${env.namespace}/runs/x/artifacts/a`,
      `/api/namespaces/${env.namespace}/runs/x/invoke`,
      "/apis/kruntimes.io/v1alpha1/namespaces/x/runs",
    ];
    const auth = { authorization: `Bearer ${env.token}` };
    for (const route of routes)
      for (const method of ["POST", "PUT", "PATCH", "DELETE"]) {
        if (method === "POST" && route.endsWith("/invoke")) continue;
        const res = await fetch(env.url + route, { method, headers: auth, body: "{}" });
        expect({ route, method, status: res.status }).toEqual({ route, method, status: 405 });
        expect(res.headers.get("allow")).toBe("GET, HEAD");
      }
    // The one POST (the invoke box) needs a header no cross-site form can send.
    const csrf = await fetch(`${env.url}/api/namespaces/${env.namespace}/runs/x/invoke`, {
      method: "POST",
      headers: auth,
      body: "{}",
    });
    expect(csrf.status).toBe(400);
    const anonymous = await fetch(`${env.url}/api/namespaces/${env.namespace}/watch/runs`);
    expect(anonymous.status).toBe(401);
    const metrics = await (await fetch(`${env.url}/metrics`)).text();
    expect(metrics).toMatch(/kruntimes_dashboard_refused_writes_total \d+/);
    expect(
      Number(/kruntimes_dashboard_refused_writes_total (\d+)/.exec(metrics)?.[1]),
    ).toBeGreaterThanOrEqual(39);
  });

  test("the namespace picker offers only namespaces where the caller may list Runs", async () => {
    // A second account that may list namespaces (cluster-wide) and read Runs in one namespace only.
    const ns = env.namespace;
    const name = `${ns}-ns-lister`;
    await client.create(path(R.serviceAccounts, ns), { metadata: { name: "lister" } });
    await client.create(path(CLUSTER_ROLES), {
      metadata: { name },
      rules: [{ apiGroups: [""], resources: ["namespaces"], verbs: ["list"] }],
    });
    await client.create(path(CLUSTER_ROLE_BINDINGS), {
      metadata: { name },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name },
      subjects: [{ kind: "ServiceAccount", name: "lister", namespace: ns }],
    });
    await client.create(path(R.roleBindings, ns), {
      metadata: { name: "lister" },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: "viewer" },
      subjects: [{ kind: "ServiceAccount", name: "lister", namespace: ns }],
    });
    try {
      const tr = await client.create<{ status: { token: string } }>(
        `${path(R.serviceAccounts, ns, "lister")}/token`,
        { apiVersion: "authentication.k8s.io/v1", kind: "TokenRequest", spec: { expirationSeconds: 600 } },
      );
      const list = await eventually("RBAC in effect", async () => {
        const res = await fetch(`${env.url}/api/namespaces`, {
          headers: { authorization: `Bearer ${tr.status.token}` },
        });
        const body = (await res.json()) as { items: string[]; listForbidden: boolean };
        return body.items.length ? body : undefined;
      });
      expect(list).toEqual({ items: [ns], listForbidden: false });
      const viewer = await fetch(`${env.url}/api/namespaces`, {
        headers: { authorization: `Bearer ${env.token}` },
      });
      expect(await viewer.json()).toEqual({ items: [], listForbidden: true });
    } finally {
      await client.delete(path(CLUSTER_ROLE_BINDINGS, undefined, name)).catch(() => {});
      await client.delete(path(CLUSTER_ROLES, undefined, name)).catch(() => {});
    }
  });

  test("sign in with the token; namespaces cannot be listed, so one is typed in", async () => {
    await page.goto(`${env.url}/`);
    await page.waitForURL(/\/signin/);
    await page.getByRole("heading", { name: "Sign in" }).waitFor();
    await screenshots("sign-in");
    await page.getByLabel("Token").fill("not-a-token");
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByText("the apiserver did not accept your token").waitFor();
    await page.getByLabel("Token").fill(env.token);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByText("You may not list namespaces").waitFor();
    expect(await page.getByTestId("who").textContent()).toBe(`system:serviceaccount:${env.namespace}:viewer`);
    // The token lives in sessionStorage only.
    expect(await page.evaluate<string | null>('sessionStorage.getItem("kruntimes.dashboard.token")')).toBe(
      env.token,
    );
    expect(await page.evaluate<number>("localStorage.length")).toBeLessThanOrEqual(1);
    expect(await page.evaluate<string>("document.cookie")).toBe("");
    const input = page.getByTestId("ns-input").last();
    await input.fill(env.namespace);
    await input.press("Enter");
    await page.waitForURL(new RegExp(`/ns/${env.namespace}/runs$`));
  });

  test("a Run created while the list is open appears and moves through its phases live", async () => {
    await page.getByText("No Runs in this namespace").waitFor();
    await page.evaluate(`window.__phases = [];
      new MutationObserver(() => {
        const el = document.querySelector('[data-run="live-1"] [data-phase]');
        const p = el && el.getAttribute("data-phase");
        if (p && window.__phases.at(-1) !== p) window.__phases.push(p);
      }).observe(document.body, { subtree: true, childList: true, attributes: true, characterData: true });`);
    await createRun("live-1", TICKER);
    await page.locator('[data-run="live-1"]').waitFor();
    await page.locator('[data-run="live-1"] [data-phase="Running"]').waitFor({ timeout: 30_000 });
    await page.locator('[data-run="live-1"] [data-phase="Succeeded"]').waitFor({ timeout: 30_000 });
    const seen = await page.evaluate<string[]>("window.__phases");
    expect(seen).toContain("Running");
    expect(seen.at(-1)).toBe("Succeeded");
    expect(await page.locator('[data-phase-count="Succeeded"] b').textContent()).toBe("1");
    // Filters are links: the phase chip and the text filter land in the URL.
    await page.locator('[data-phase-count="Failed"]').click();
    await page.getByText("No Runs match the filters").waitFor();
    expect(page.url()).toContain("phase=Failed");
    await page.locator('[data-phase-count="Failed"]').click();
    await page.locator('[data-run="live-1"]').waitFor();
  }, 60_000);

  test("the detail follows the logs of a Run printing once a second; outputs, tails, chart", async () => {
    await createRun("ticker", TICKER);
    // Keyboard: focus the table, move to the newest Run (sorted first by age) and open it.
    await page.locator('[data-run="ticker"]').waitFor();
    await page.getByTestId("runs-body").focus();
    await page.keyboard.press("Home");
    await page.keyboard.press("Enter");
    await page.waitForURL(/\/runs\/ticker$/);
    const logs = page.getByTestId("logs");
    await logs.getByText("tick 2").waitFor({ timeout: 30_000 });
    // Still going: later lines arrive on the open page.
    expect(await page.locator("[data-phase]").first().getAttribute("data-phase")).toBe("Running");
    await logs.getByText("tick 5").waitFor({ timeout: 15_000 });
    await page.getByTestId("log-state").getByText("ended (Succeeded)").waitFor({ timeout: 20_000 });
    expect(await logs.textContent()).toContain("oops");
    await page.locator('[data-field="result"]').getByText("42").waitFor();
    await page.getByTestId("stdout-tail").getByText("tick 6").waitFor();
    await page.getByTestId("stderr-tail").getByText("oops").waitFor();
    await page.getByTestId("timing-chart").waitFor();
    for (const stage of ["schedule", "dispatch", "execution", "report"])
      await page.locator(".timing th", { hasText: stage }).waitFor();
    expect(await page.locator('[data-field="Exit code"]').textContent()).toBe("0");
    await page.getByTestId("timeline").getByText("finished").waitFor();
    await screenshots("run-detail");
  }, 60_000);

  test("the Runs list, Runtimes with per-pod use, and deep links", async () => {
    await page.goto(`${env.url}/ns/${env.namespace}/runs?sort=name`);
    await page.locator('[data-run="live-1"]').waitFor();
    expect(await page.locator("[data-run]").first().getAttribute("data-run")).toBe("live-1");
    await screenshots("runs");
    await page.getByRole("link", { name: "Runtimes", exact: true }).click();
    await page.waitForURL(/\/runtimes$/);
    const bash = page.locator('[data-runtime="bash"]');
    await bash.getByTestId("replicas").getByText("1/1 ready").waitFor({ timeout: 30_000 });
    await bash.getByTestId("pending").getByText("0 Runs waiting").waitFor({ timeout: 30_000 });
    await bash.locator("meter").first().waitFor();
    await screenshots("runtimes");
  }, 60_000);

  test("a function Run is invoked from its page through the gateway", async () => {
    await createRun("greeter", 'handler() { body=$(cat); printf "hello %s" "$body"; }', { function: {} });
    await page.goto(`${env.url}/ns/${env.namespace}/functions`);
    await page.locator('[data-run="greeter"] [data-phase="Ready"]').waitFor({ timeout: 30_000 });
    await screenshots("functions");
    await page.locator('[data-run="greeter"] a').click();
    await page.getByRole("heading", { name: "Invoke" }).waitFor();
    await page.getByTestId("invoke-body").fill("dashboard");
    await page.getByRole("button", { name: "Invoke" }).click();
    const result = page.getByTestId("invoke-result");
    await result.getByText("hello dashboard").waitFor({ timeout: 20_000 });
    expect(await result.getAttribute("data-status")).toBe("200");
    await screenshots("function-detail");
  }, 60_000);

  test("sessions view, and a namespace the token may not read is explained", async () => {
    await page.goto(`${env.url}/ns/${env.namespace}/sessions`);
    await page.getByText("No Runs in this namespace").waitFor();
    await screenshots("sessions");
    await page.goto(`${env.url}/ns/${env.forbidden}/runs`);
    await page.getByText(`you may not list runs in namespace ${env.forbidden}`).waitFor();
    expect(await page.locator(".error-box").getAttribute("data-status")).toBe("403");
    await screenshots("forbidden");
  }, 60_000);

  test("a WorkflowRun's jobs are drawn as their needs DAG, steps linked to their child Runs", async () => {
    // The webhook answers once the controller has opened its port.
    await eventually(
      "the workflow webhook answers",
      () =>
        client
          .create(
            path(WorkflowRunResource, env.namespace),
            { ...PIPELINE, metadata: { name: "probe" } },
            { dryRun: "All" },
          )
          .then(() => true),
      30_000,
    );
    await client.create(path(WorkflowRunResource, env.namespace), {
      apiVersion: "kruntimes.io/v1alpha1",
      kind: "WorkflowRun",
      metadata: { name: "pipeline" },
      spec: {
        runtime: "bash",
        jobs: {
          build: {
            steps: [
              { name: "compile", run: "echo built" },
              { name: "pack", run: "echo packed" },
            ],
          },
          test: { needs: ["build"], steps: [{ name: "unit", run: "echo ok" }] },
          lint: { needs: ["build"], steps: [{ name: "vet", run: "echo ok" }] },
        },
      },
    });
    await page.goto(`${env.url}/ns/${env.namespace}/workflows`);
    await page.locator('[data-workflowrun="pipeline"] a').click();
    const dag = page.getByTestId("dag");
    for (const edge of ["build>test", "build>lint"])
      await dag.locator(`[data-edge="${edge}"]`).waitFor({ state: "attached" });
    await dag.locator('[data-job="test"] [data-step="unit"]').waitFor();
    // Live: the run goes on while the page is open, each step ends linked to its child Run.
    await page.locator('[data-job="lint"] header [data-phase="Succeeded"]').waitFor({ timeout: 60_000 });
    await page.locator('[data-job="test"] header [data-phase="Succeeded"]').waitFor({ timeout: 30_000 });
    expect(await page.locator("#wfr-h ~ [data-phase]").first().getAttribute("data-phase")).toBe("Succeeded");
    await screenshots("workflow");
    await page.locator('[data-job="build"] [data-step="pack"] a').click();
    await page.waitForURL(/\/runs\/[^/]+$/);
    await page.getByTestId("stdout-tail").getByText("packed").waitFor();
  }, 90_000);

  test("a session Run's page shows its state and the audit record of an operation", async () => {
    // A pool of its own: a session holds its pod exclusively.
    const ns = env.namespace;
    await client.create(
      path(RuntimeResource, ns),
      imageRuntime("sess", "ghcr.io/kruntimes/bash", { replicas: 1 }),
    );
    await client.create(path(R.serviceAccounts, ns), { metadata: { name: "operator" } });
    await client.create(path(R.roles, ns), {
      metadata: { name: "operator" },
      rules: [
        ...VIEWER_RULES,
        { apiGroups: ["kruntimes.io"], resources: ["runs/session"], verbs: ["create"] },
      ],
    });
    await client.create(path(R.roleBindings, ns), {
      metadata: { name: "operator" },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: "operator" },
      subjects: [{ kind: "ServiceAccount", name: "operator", namespace: ns }],
    });
    const tr = await client.create<{ status: { token: string } }>(
      `${path(R.serviceAccounts, ns, "operator")}/token`,
      { apiVersion: "authentication.k8s.io/v1", kind: "TokenRequest", spec: { expirationSeconds: 600 } },
    );
    await client.create(path(RunResource, ns), {
      apiVersion: "kruntimes.io/v1alpha1",
      kind: "Run",
      metadata: { name: "box" },
      spec: { runtime: "sess", mode: { session: {} } },
    });
    await page.goto(`${env.url}/ns/${ns}/sessions`);
    await page.locator('[data-run="box"] [data-phase="Ready"]').waitFor({ timeout: 60_000 });
    await page.locator('[data-run="box"] a').click();
    await page.getByRole("heading", { name: "Recent audit records" }).waitFor();
    const exec = Bun.spawn(
      [
        "bun",
        join(ROOT, "krt/main.ts"),
        "exec",
        "box",
        "-n",
        ns,
        "--kubeconfig",
        cluster.kubeconfig,
        "--gateway-namespace",
        ns,
        "--token",
        tr.status.token,
        "--",
        "echo",
        "from-session",
      ],
      { stdout: "pipe", stderr: "pipe" },
    );
    expect(await exec.exited).toBe(0);
    expect(await new Response(exec.stdout).text()).toBe("from-session\n");
    // Live: the audit record arrives on the open page.
    await page
      .locator(".audit li", { hasText: `exec by system:serviceaccount:${ns}:operator` })
      .waitFor({ timeout: 20_000 });
    await screenshots("session-detail");
  }, 120_000);

  test("an artifact downloads through the store's maintainer with the signed-in token", async () => {
    const ns = env.namespace;
    const s3 = await startS3Server({ buckets: ["krt"] });
    try {
      await client.create(path(R.secrets, ns), {
        metadata: { name: "s3-creds" },
        stringData: { AWS_ACCESS_KEY_ID: s3.accessKeyId, AWS_SECRET_ACCESS_KEY: s3.secretAccessKey },
      });
      const store = {
        s3: {
          bucket: "krt",
          prefix: "dash",
          endpoint: s3.endpoint,
          pathStyle: true,
          region: s3.region,
          credentialsSecretRef: { name: "s3-creds" },
        },
      };
      await client.create(
        path(RuntimeResource, ns),
        imageRuntime("art", "ghcr.io/kruntimes/bash", { replicas: 1, artifactStore: store }),
      );
      await client.create(path(RunResource, ns), {
        apiVersion: "kruntimes.io/v1alpha1",
        kind: "Run",
        metadata: { name: "stored" },
        spec: {
          runtime: "art",
          mode: { task: {} },
          source: { inline: 'printf "hello artifacts\\n" > "$KRUNTIME_ARTIFACTS_DIR/report.txt"' },
        },
      });
      await page.goto(`${env.url}/ns/${ns}/runs/stored`);
      const button = page.getByRole("button", { name: "⤓ report.txt" });
      await button.waitFor({ timeout: 90_000 });
      // The controller starts the store's maintainer with the first stored artifact.
      const run = await client.get<{ metadata: { labels?: Record<string, string> } }>(
        path(RunResource, ns, "stored"),
      );
      await maintainerEndpoint(client, ns, run.metadata.labels?.["kruntimes.io/artifact-store"] as string);
      const [download] = await Promise.all([page.waitForEvent("download"), button.click()]);
      expect(download.suggestedFilename()).toBe("report.txt");
      const file = await download.path();
      expect(await Bun.file(file).text()).toBe("hello artifacts\n");
    } finally {
      // Runs hold the artifacts finalizer until the maintainer deletes their objects.
      await releaseRuns(client, ns);
      await s3.close();
    }
  }, 150_000);

  test("krt dashboard: local mode on loopback with the kubeconfig's credentials", async () => {
    const krt = (...args: string[]) =>
      Bun.spawn(
        ["bun", join(ROOT, "krt/main.ts"), "dashboard", "--kubeconfig", cluster.kubeconfig, ...args],
        {
          stdout: "pipe",
          stderr: "pipe",
        },
      );
    const refused = krt("--address", "0.0.0.0");
    expect(await refused.exited).toBe(64);
    expect(await new Response(refused.stderr).text()).toContain("is not a loopback address");
    const p = krt("-n", env.namespace, "--port", "0");
    try {
      const reader = p.stdout.getReader();
      const { value } = await reader.read();
      const url = /dashboard: (http:\/\/127\.0\.0\.1:\d+\/)ns\/([^/]+)\/runs/.exec(
        new TextDecoder().decode(value),
      );
      expect(url?.[2]).toBe(env.namespace);
      const base = url?.[1] as string;
      const session = (await (await fetch(`${base}api/session`)).json()) as { mode: string; user: string };
      expect(session).toMatchObject({ mode: "kubeconfig", user: expect.any(String) });
      const list = await fetch(`${base}api/namespaces/${env.namespace}/watch/runs`);
      const reader2 = (list.body as ReadableStream<Uint8Array>).getReader();
      let text = "";
      while (!text.includes("event: snapshot"))
        text += new TextDecoder().decode((await reader2.read()).value);
      await reader2.cancel();
      expect(text).toContain('"name":"live-1"');
      // Another Host (DNS rebinding) is refused; writes are refused as in token mode.
      expect((await fetch(`${base}api/session`, { headers: { host: "evil.example" } })).status).toBe(403);
      expect((await fetch(`${base}api/session`, { method: "DELETE" })).status).toBe(405);
    } finally {
      p.kill("SIGINT");
      await p.exited;
    }
  }, 30_000);

  test("the browser console stayed free of errors", () => {
    expect(consoleErrors).toEqual([]);
  });
});
