/**
 * What the artifact suites share (e2e on S3 and on a filesystem claim, the maintainer integration
 * suite): a task Run run to its end, ServiceAccount tokens with or without `get` on Runs and a
 * kubeconfig around one, the maintainer's endpoint and its removal, `krt` from source, digests,
 * and the controller with a one-pod bash Runtime whose Runs store artifacts.
 * One copy, so the suites cannot drift in how they drive the cluster.
 */
import { createHash } from "node:crypto";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import {
  type ArtifactStore,
  isTerminalPhase,
  Labels,
  maintainerName,
  RUNTIMED_CONTAINER,
  type Run,
  RunResource,
  type Runtime,
  RuntimeResource,
} from "@kruntimes/api";
import { type KubeClient, type KubeObject, path, R } from "@kruntimes/kube";
import YAML from "yaml";
import {
  type ControllerProcess,
  startController,
} from "../../controller/testing/cluster/controller-process.ts";
import { createRuntime, readyPods } from "../../controller/testing/cluster/objects.ts";
import { eventually } from "./cluster.ts";
import { imageRuntime } from "./runtimes.ts";

const REPO = join(import.meta.dir, "../..");
const CLUSTER_ROLE_BINDINGS = {
  group: "rbac.authorization.k8s.io",
  version: "v1",
  plural: "clusterrolebindings",
} as const;

/** `sha256:<hex>`, the form `status.artifactRefs[].digest` takes. */
export function sha256Digest(b: Uint8Array | string): string {
  return `sha256:${createHash("sha256").update(b).digest("hex")}`;
}

/**
 * Starts a controller for `ns` running the real runtimed and creates Runtime "bash" (one pod, 8
 * slots, artifacts up to `maxArtifactBytes`, default 1 MiB, in `store`); resolves once its pod is Ready.
 */
export async function startArtifactRuntime(
  client: KubeClient,
  ns: string,
  kubeconfig: string,
  store: Omit<ArtifactStore, "maxArtifactBytes">,
  maxArtifactBytes = 1024 * 1024,
): Promise<ControllerProcess> {
  const ctl = startController({ namespace: ns, kubeconfig, runtimed: "real" });
  try {
    await startRuntime(client, ns, ctl, { ...store, maxArtifactBytes });
  } catch (e) {
    // The caller never gets the process to stop: stop it here, or it outlives the test file.
    ctl.kill();
    await ctl.exited;
    throw e;
  }
  return ctl;
}

async function startRuntime(
  client: KubeClient,
  ns: string,
  ctl: ControllerProcess,
  store: ArtifactStore,
): Promise<void> {
  await ctl.waitFor("scheduling and reconciling");
  await createRuntime(
    client,
    ns,
    imageRuntime("bash", "ghcr.io/kruntimes/bash", {
      replicas: 1,
      artifactStore: store,
    }),
  );
  await eventually("bash pod ready", async () => (await readyPods(client, ns, "bash")).length === 1, 120_000);
}

/** Creates a bash task Run with `inline` as its script and waits for a terminal phase. */
export async function runToEnd(client: KubeClient, ns: string, name: string, inline: string): Promise<Run> {
  await client.create<Run>(path(RunResource, ns), {
    apiVersion: "kruntimes.io/v1alpha1",
    kind: "Run",
    metadata: { name },
    spec: { runtime: "bash", mode: { task: {} }, source: { inline } },
  });
  return eventually(
    `${name} finished`,
    async () => {
      const r = await client.get<Run>(path(RunResource, ns, name));
      return isTerminalPhase(r.status?.phase) ? r : undefined;
    },
    60_000,
  );
}

/** The runtimed sidecar's log of `pod` (JSON lines; a child logger's lines carry `"run":"<name>"`). */
export async function runtimedLog(client: KubeClient, ns: string, pod: string): Promise<string> {
  const res = await client.request<Response>("GET", path(R.pods, ns, pod, "log"), {
    raw: true,
    query: { container: RUNTIMED_CONTAINER },
  });
  return res.text();
}

/**
 * Deletes Runtime `runtime` and waits until the garbage collector has acted on it (the Runtime's
 * own Deployment is gone); the maintainer of `storeId` must then still be there, and owned by
 * nothing that deleting the Runtime could take along — proved by its owner references, not by
 * waiting a while to see whether it disappears.
 */
export async function deleteRuntimeKeepingMaintainer(
  client: KubeClient,
  ns: string,
  runtime: string,
  storeId: string,
): Promise<void> {
  const rt = await client.get<Runtime>(path(RuntimeResource, ns, runtime));
  await client.delete(path(RuntimeResource, ns, runtime));
  const gone = async (p: string) => !(await client.get(p).catch(() => undefined));
  await eventually(
    `Runtime ${runtime} and its Deployment gone`,
    async () =>
      (await gone(path(RuntimeResource, ns, runtime))) && (await gone(path(R.deployments, ns, runtime))),
    60_000,
  );
  const m = await client.get<KubeObject>(path(R.deployments, ns, maintainerName(storeId)));
  const owners = (m.metadata.ownerReferences ?? []).map((o) => `${o.kind}/${o.name} ${o.uid}`);
  if (m.metadata.deletionTimestamp || owners.some((o) => o.endsWith(rt.metadata.uid as string)))
    throw new Error(
      `maintainer ${maintainerName(storeId)} is going with the Runtime: deletionTimestamp ${m.metadata.deletionTimestamp}, owners ${owners.join(", ")}`,
    );
}

export interface TokenOptions {
  /** Runs the ServiceAccount may `get` ([] = every Run); absent: no permission at all. */
  getRuns?: string[];
  expirationSeconds?: number;
}

/** A bearer token for a new ServiceAccount `sa`, with a Role allowing `get` on Runs if asked. */
export async function serviceAccountToken(
  client: KubeClient,
  ns: string,
  sa: string,
  opts: TokenOptions = {},
): Promise<string> {
  await client.create(path(R.serviceAccounts, ns), { metadata: { name: sa } });
  if (opts.getRuns) {
    const names = opts.getRuns.length ? { resourceNames: opts.getRuns } : {};
    await client.create(path(R.roles, ns), {
      metadata: { name: sa },
      rules: [{ apiGroups: ["kruntimes.io"], resources: ["runs"], verbs: ["get"], ...names }],
    });
    await client.create(path(R.roleBindings, ns), {
      metadata: { name: sa },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: sa },
      subjects: [{ kind: "ServiceAccount", name: sa, namespace: ns }],
    });
  }
  const tr = await client.create<{ status: { token: string } }>(`${path(R.serviceAccounts, ns, sa)}/token`, {
    apiVersion: "authentication.k8s.io/v1",
    kind: "TokenRequest",
    spec: { expirationSeconds: opts.expirationSeconds ?? 3600 },
  });
  return tr.status.token;
}

/** Writes `file`: the admin kubeconfig's cluster with `user` authenticating by `token` in `ns`. */
export function tokenKubeconfig(
  adminKubeconfig: string,
  ns: string,
  user: string,
  token: string,
  file: string,
): string {
  const admin = YAML.parse(readFileSync(adminKubeconfig, "utf8"));
  writeFileSync(
    file,
    YAML.stringify({
      apiVersion: "v1",
      kind: "Config",
      clusters: admin.clusters,
      users: [{ name: user, user: { token } }],
      contexts: [{ name: user, context: { cluster: admin.clusters[0].name, user, namespace: ns } }],
      "current-context": user,
    }),
  );
  return file;
}

/** `http://<pod IP>:8090` of the store's maintainer once one of its pods is Ready. */
export function maintainerEndpoint(client: KubeClient, ns: string, storeId: string): Promise<string> {
  return eventually(
    "maintainer pod ready",
    async () => {
      const pods = await client.list<{
        status?: { podIP?: string; conditions?: { type: string; status: string }[] };
      }>(path(R.pods, ns), { labelSelector: `${Labels.artifactStore}=${storeId}` });
      const p = pods.items.find((x) =>
        x.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True"),
      );
      return p?.status?.podIP ? `http://${p.status.podIP}:8090` : undefined;
    },
    60_000,
  );
}

/** Waits until every object the controller made for the store's maintainer is deleted. */
export function maintainerRemoved(client: KubeClient, ns: string, storeId: string): Promise<boolean> {
  const name = maintainerName(storeId);
  const gone = async (p: string) => !(await client.get(p).catch(() => undefined));
  return eventually(
    "the maintainer is removed",
    async () =>
      (await gone(path(R.deployments, ns, name))) &&
      (await gone(path(R.serviceAccounts, ns, name))) &&
      (await gone(path(R.services, ns, name))) &&
      (await gone(path(R.roles, ns, name))) &&
      (await gone(path(CLUSTER_ROLE_BINDINGS, undefined, `${name}-${ns}`))),
    30_000,
  );
}

/** Clears the finalizers of the Runs left in `ns`, so the namespace can go without a maintainer. */
export async function releaseRuns(client: KubeClient, ns: string): Promise<void> {
  const runs = await client.list<Run>(path(RunResource, ns)).catch(() => ({ items: [] as Run[] }));
  for (const r of runs.items)
    await client
      .patch(path(RunResource, ns, r.metadata.name), { metadata: { finalizers: null } }, "merge")
      .catch(() => {});
}

/** `krt <args>` from source with `kubeconfig`; exit code and both outputs. */
export function krtCli(kubeconfig: string, ...args: string[]): { code: number; out: string; err: string } {
  const p = Bun.spawnSync(["bun", "krt/main.ts", ...args], {
    cwd: REPO,
    env: { ...process.env, KUBECONFIG: kubeconfig },
  });
  return { code: p.exitCode, out: p.stdout.toString(), err: p.stderr.toString() };
}
