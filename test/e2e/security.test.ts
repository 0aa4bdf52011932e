/**
 * Least privilege and Pod Security, checked on a real install (docs/security.md ties its claims to
 * these tests by name):
 *
 * - The chart installed into a namespace that enforces the `restricted` Pod Security Standard:
 *   the controller, the gateway and the Runtime pods the controller renders are admitted and a
 *   Run succeeds; the artifact maintainer's pod (rendered by the controller's own code) passes
 *   the same admission by server-side dry-run.
 * - For every ServiceAccount in that namespace — the chart's and those the controller creates —
 *   `kubectl auth can-i --list` in the namespace and in another one equals a committed expectation
 *   (test/e2e/rbac-expectations/<account>.txt) exactly, with no wildcard, no Secrets and no
 *   escalate/bind/impersonate. An account without a file fails the test with what to add.
 * - The chart rendered with its defaults (cluster scope) grants no such rule either.
 * - Each Runtime gets the dataplane NetworkPolicy (gateway.networkPolicy.enabled, default on).
 *
 * `KRT_UPDATE_RBAC_EXPECTATIONS=1` writes the expectation files from this run: review the diff
 * before committing it — a new line there is a new permission.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { type Run, RunResource } from "@kruntimes/api";
import { path, R } from "@kruntimes/kube";
import { maintainerObjects } from "../../controller/artifacts/maintainer-objects.ts";
import { binaryPath } from "../localcluster/binaries.ts";
import { eventually, testCluster } from "../support/cluster.ts";
import { runProcess } from "../support/process.ts";
import { HELM_MISSING, helmPath, installNamespaced, ROOT, removeRelease, render } from "./chart-support.ts";

const cluster = testCluster();
const helmBin = helmPath();
if (!cluster) console.warn("security: skipped because KUBECONFIG is unset");
else if (!helmBin) console.warn(`security: skipped: ${HELM_MISSING}`);
const suite = cluster && helmBin ? describe : describe.skip;

const EXPECTATIONS = join(import.meta.dir, "rbac-expectations");
const UPDATE = process.env.KRT_UPDATE_RBAC_EXPECTATIONS === "1";
const RELEASE = "krsec";
const OTHER_NS = "default";

/**
 * The one escalation-class rule kruntimes holds, on purpose: the controller may `bind` the
 * ClusterRole `system:auth-delegator` (and no other), to give each runtimed and artifact
 * maintainer TokenReview. The alternative — holding auth-delegator itself — would let the
 * controller review any token and any user's access; docs/security.md explains the choice.
 */
const BIND_AUTH_DELEGATOR = /^clusterroles\.rbac\.authorization\.k8s\.io$/;
const isAuthDelegatorBind = (resource: string, names: string, verbs: string) =>
  BIND_AUTH_DELEGATOR.test(resource) && names === "[system:auth-delegator]" && verbs === "[bind]";

/** can-i's table without its column padding (which follows name lengths), names normalised, rows sorted. */
function table(list: string): string {
  return `${list
    .split("\n")
    .slice(1)
    .filter((l) => l.trim())
    .map((l) =>
      l
        .trim()
        .split(/\s{2,}/)
        // Rules merged from several Roles list their verbs in no fixed order.
        .map((col) => (/^\[.+\]$/.test(col) ? `[${col.slice(1, -1).split(" ").sort().join(" ")}]` : col))
        .join(" | ")
        .replace(/^(\[)/, " | $1")
        .replace(/krt-security-[a-z0-9]+/g, "NAMESPACE")
        .replaceAll(`${RELEASE}-`, "RELEASE-"),
    )
    .sort()
    .join("\n")}\n`;
}

/** Rules no kruntimes account may hold, whatever the expectation files say. */
function forbiddenRules(list: string): string[] {
  const bad: string[] = [];
  for (const line of list.split("\n").slice(1)) {
    const cols = line.trim().split(/\s{2,}/);
    if (cols.length < 4) continue;
    const [resource = "", nonResource = "", names = "", verbs = ""] = cols;
    if (isAuthDelegatorBind(resource, names, verbs)) continue;
    if (resource === "*" || resource.startsWith("*.") || /\[\*\]|\[.*\s\*\]/.test(verbs))
      bad.push(`wildcard: ${line}`);
    if (/^secrets(\.|$)/.test(resource)) bad.push(`secrets: ${line}`);
    if (/\b(escalate|bind|impersonate)\b/.test(verbs)) bad.push(`escalation: ${line}`);
    if (nonResource === "*" || names === "*") bad.push(`wildcard: ${line}`);
  }
  return bad;
}

suite("security: restricted Pod Security, least-privilege ServiceAccounts, NetworkPolicy", () => {
  const client = cluster!.client;
  const kubeconfig = cluster!.kubeconfig;
  const ns = `krt-security-${Date.now().toString(36)}`;
  const kubectl = binaryPath("kubectl", ROOT, process.env);

  beforeAll(async () => {
    await client.create(path(R.namespaces), {
      metadata: {
        name: ns,
        labels: {
          "pod-security.kubernetes.io/enforce": "restricted",
          "pod-security.kubernetes.io/enforce-version": "latest",
          "pod-security.kubernetes.io/warn": "restricted",
          "pod-security.kubernetes.io/audit": "restricted",
        },
      },
    });
    await installNamespaced(kubeconfig, client, RELEASE, ns, [
      "gateway.replicas=1",
      "dashboard.enabled=true",
    ]);
  }, 240_000);
  afterAll(async () => {
    await removeRelease(kubeconfig, client, RELEASE, ns);
  }, 120_000);

  test("under enforce=restricted the controller, gateway and Runtime pods are admitted and a Run succeeds", async () => {
    // A pod the admission refused never exists; its ReplicaSet records why.
    const refused = async () => {
      const events = await client.list<{ reason: string; message: string }>(path(R.events, ns));
      return events.items.filter((e) => e.reason === "FailedCreate" && /PodSecurity/.test(e.message));
    };
    for (const runtime of ["bash", "python"]) {
      await eventually(
        `a ready ${runtime} Runtime pod in ${ns}`,
        async () => {
          const bad = await refused();
          if (bad.length)
            throw new Error(`pods refused by PodSecurity: ${bad.map((e) => e.message).join("; ")}`);
          const pods = await client.list<{ status?: { conditions?: { type: string; status: string }[] } }>(
            path(R.pods, ns),
            { labelSelector: `kruntimes.io/runtime=${runtime}` },
          );
          return pods.items.some((p) =>
            p.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True"),
          );
        },
        120_000,
      );
    }
    const run = await client.create<Run>(path(RunResource, ns), {
      apiVersion: "kruntimes.io/v1alpha1",
      kind: "Run",
      metadata: { generateName: "restricted-" },
      spec: { runtime: "bash", mode: { task: {} }, source: { inline: "echo restricted-ok" } },
    });
    const done = await eventually(
      "the Run to finish",
      async () => {
        const r = await client.get<Run>(path(RunResource, ns, run.metadata.name!));
        return r.status?.phase === "Succeeded" || r.status?.phase === "Failed" ? r : undefined;
      },
      120_000,
    );
    expect(done.status?.phase).toBe("Succeeded");
    expect(done.status?.stdoutTail).toBe("restricted-ok\n");
    expect(await refused()).toEqual([]);
    // What admission saw: every pod of the release non-root with no privilege to gain. (The local
    // cluster's node agent runs pods as host processes and does not switch users; a real kubelet does.)
    const pods = await client.list<{
      metadata: { name: string };
      spec: {
        securityContext?: { runAsNonRoot?: boolean };
        containers: { name: string; securityContext?: Record<string, unknown> }[];
      };
    }>(path(R.pods, ns));
    expect(pods.items.length).toBeGreaterThanOrEqual(4);
    for (const p of pods.items) {
      for (const c of p.spec.containers) {
        const label = `${p.metadata.name}/${c.name}`;
        expect({ label, ape: c.securityContext?.allowPrivilegeEscalation }).toEqual({ label, ape: false });
        expect({ label, drop: (c.securityContext?.capabilities as { drop?: string[] })?.drop }).toEqual({
          label,
          drop: ["ALL"],
        });
        const nonRoot = c.securityContext?.runAsNonRoot ?? p.spec.securityContext?.runAsNonRoot;
        expect({ label, nonRoot }).toEqual({ label, nonRoot: true });
      }
    }
  }, 300_000);

  test("the artifact maintainer's pod passes restricted admission (server-side dry-run)", async () => {
    const objects = maintainerObjects(
      ns,
      "sec-store",
      { filesystem: { claimName: "artifacts" } },
      { image: "ghcr.io/kruntimes/controller:dev" },
    );
    const deployment = objects.find((o) => o.resource === R.deployments);
    if (!deployment) throw new Error("maintainerObjects rendered no Deployment");
    const template = (deployment.body as { spec: { template: { spec: Record<string, unknown> } } }).spec
      .template;
    // Its own ServiceAccount does not exist here (nothing needs the store); admission only reads the pod.
    template.spec.serviceAccountName = "default";
    await client.create(
      path(R.pods, ns),
      { apiVersion: "v1", kind: "Pod", metadata: { name: "maintainer-probe" }, spec: template.spec },
      { dryRun: "All" },
    );
    // The probe itself must be able to fail: the same pod without its security context is refused.
    const bare = structuredClone(template.spec) as { securityContext?: unknown };
    delete bare.securityContext;
    const refused = await client
      .create(
        path(R.pods, ns),
        { apiVersion: "v1", kind: "Pod", metadata: { name: "bare" }, spec: bare },
        { dryRun: "All" },
      )
      .then(
        () => "admitted",
        (e: Error) => e.message,
      );
    expect(refused).toContain('violates PodSecurity "restricted:latest"');
  });

  test("every ServiceAccount's permissions equal its committed expectation: no wildcard, no Secrets, no escalation", async () => {
    const accounts = (await client.list<{ metadata: { name: string } }>(path(R.serviceAccounts, ns))).items
      .map((a) => a.metadata.name)
      .filter((n) => n !== "default")
      .sort();
    // The chart's accounts and the ones the controller made for each Runtime's runtimed.
    expect(accounts).toContain(`${RELEASE}-kruntimes-controller`);
    expect(accounts).toContain("bash-runtimed");
    const problems: string[] = [];
    for (const sa of accounts) {
      const as = `--as=system:serviceaccount:${ns}:${sa}`;
      const lists: string[] = [];
      for (const where of [ns, OTHER_NS]) {
        const r = await runProcess([kubectl, "auth", "can-i", "--list", as, "-n", where], {
          env: { PATH: process.env.PATH ?? "", KUBECONFIG: kubeconfig },
        });
        if (r.code !== 0) throw new Error(`kubectl auth can-i --list ${as} -n ${where}: ${r.stderr}`);
        lists.push(r.stdout);
        for (const bad of forbiddenRules(r.stdout)) problems.push(`${sa} in ${where}: ${bad}`);
      }
      const key = sa.replace(`${RELEASE}-`, "RELEASE-");
      const normal =
        `# kubectl auth can-i --list --as=system:serviceaccount:NAMESPACE:${key} -n NAMESPACE\n` +
        `# resources | non-resource URLs | resource names | verbs, sorted\n${table(lists[0]!)}\n` +
        `# the same in another namespace\n${table(lists[1]!)}`;
      const file = join(EXPECTATIONS, `${key}.txt`);
      if (UPDATE) {
        mkdirSync(EXPECTATIONS, { recursive: true });
        writeFileSync(file, normal);
        continue;
      }
      if (!existsSync(file)) {
        problems.push(
          `ServiceAccount ${sa} has no expectation file: add test/e2e/rbac-expectations/${key}.txt ` +
            "(KRT_UPDATE_RBAC_EXPECTATIONS=1 writes it from this run; review every line before committing)",
        );
        continue;
      }
      if (readFileSync(file, "utf8") !== normal)
        problems.push(`${sa}: permissions differ from ${file}:\n${normal}`);
    }
    expect(problems).toEqual([]);
  }, 120_000);

  test("each Runtime has the dataplane NetworkPolicy: its dataplane port only from the gateway pods", async () => {
    const policy = await client.get<{
      spec: {
        ingress: {
          from?: { podSelector?: { matchLabels?: Record<string, string> } }[];
          ports: { port: number; endPort?: number }[];
        }[];
      };
    }>(`/apis/networking.k8s.io/v1/namespaces/${ns}/networkpolicies/bash-dataplane`);
    const [gatewayOnly, others] = policy.spec.ingress;
    expect(gatewayOnly?.from?.[0]?.podSelector?.matchLabels).toEqual({
      "app.kubernetes.io/name": "kruntimes-gateway",
      "app.kubernetes.io/instance": RELEASE,
    });
    expect(gatewayOnly?.ports).toHaveLength(1);
    const dataplane = gatewayOnly!.ports[0]!.port;
    // Every other rule leaves the dataplane port out.
    for (const p of others?.ports ?? [])
      expect(p.port <= dataplane && dataplane <= (p.endPort ?? p.port)).toBe(false);
  });
});

describe("security: the chart's RBAC as rendered with its defaults (cluster scope)", () => {
  const maybe = helmBin ? test : test.skip;
  maybe("no Role or ClusterRole grants a wildcard, Secrets, or escalate/bind/impersonate", async () => {
    const variants: Record<string, string>[] = [
      {},
      { "dashboard.enabled": "true" },
      { "controller.scope": "Namespace" },
    ];
    for (const sets of variants) {
      const objects = await render(sets);
      const bad: string[] = [];
      for (const o of objects.filter((x) => x.kind === "Role" || x.kind === "ClusterRole")) {
        for (const rule of (o.rules ?? []) as {
          apiGroups?: string[];
          resources?: string[];
          verbs: string[];
          nonResourceURLs?: string[];
        }[]) {
          const where = `${o.kind} ${o.metadata.name}: ${JSON.stringify(rule)}`;
          if (
            [
              ...(rule.apiGroups ?? []),
              ...(rule.resources ?? []),
              ...rule.verbs,
              ...(rule.nonResourceURLs ?? []),
            ].includes("*")
          )
            bad.push(`wildcard in ${where}`);
          if (rule.resources?.some((r) => r === "secrets" || r.startsWith("secrets/")))
            bad.push(`secrets in ${where}`);
          const delegatorBind =
            rule.resources?.join() === "clusterroles" &&
            (rule as { resourceNames?: string[] }).resourceNames?.join() === "system:auth-delegator" &&
            rule.verbs.join() === "bind";
          if (!delegatorBind && rule.verbs.some((v) => ["escalate", "bind", "impersonate"].includes(v)))
            bad.push(`escalation in ${where}`);
        }
      }
      expect(bad).toEqual([]);
    }
  });
});
