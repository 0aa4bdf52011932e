/**
 * Helm for the chart tests: the binary built from the Go module proxy into the version-keyed
 * cache (test/localcluster/build/build-binaries.sh helm), run as a real process, and the
 * rendered manifests parsed into objects to assert on.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { RunResource } from "@kruntimes/api";
import { type KubeClient, path, R } from "@kruntimes/kube";
import YAML from "yaml";
import { binaryPath } from "../localcluster/binaries.ts";
import { type ProcessResult, runProcess } from "../support/process.ts";

export const ROOT = join(import.meta.dir, "..", "..");
export const CHART = join(ROOT, "chart");

export interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: {
    name: string;
    namespace?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
  };
  // biome-ignore lint/suspicious/noExplicitAny: rendered manifests are arbitrary Kubernetes objects
  [key: string]: any;
}

/** The cached helm binary, or undefined when it has not been built. */
export function helmPath(): string | undefined {
  try {
    const p = binaryPath("helm", ROOT, process.env);
    return existsSync(p) ? p : undefined;
  } catch {
    return undefined;
  }
}

export const HELM_MISSING =
  "helm is not built: run `bash test/localcluster/build/build-binaries.sh helm` (scripts/test.sh does)";

/**
 * client-go's klog lines about its own watches and response bodies (reflector.go, request.go,
 * streamwatcher.go, retrywatcher.go): `helm --wait` watches what it waits for, and when a watch
 * breaks (the apiserver busy, or helm cancelling it after the wait) client-go logs it and watches
 * again. They say nothing about the release — CI saw "context canceled" once on an upgrade that
 * succeeded — so tests that require an empty stderr ignore them. Everything else stays, notably
 * warnings.go: the apiserver's own warnings (deprecations, bad fields) about what helm sent.
 */
const WATCH_NOISE =
  /^[IWE]\d{4} [\d:.]+\s+\d+ (reflector|request|streamwatcher|retrywatcher)\.go:\d+\] .*\n?/gm;

/** helm's stderr without client-go's watch noise (see WATCH_NOISE). */
export function helmStderr(stderr: string): string {
  return stderr.replace(WATCH_NOISE, "");
}

/**
 * Runs helm with its own config/cache dirs, so a developer's repositories never leak in.
 * stderr comes back without client-go's watch noise; every other line is kept.
 */
export async function helm(args: string[], kubeconfig?: string): Promise<ProcessResult> {
  const bin = helmPath();
  if (!bin) throw new Error(HELM_MISSING);
  const home = join(ROOT, "node_modules", ".cache", "helm-tests");
  const r = await runProcess([bin, ...args], {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH ?? "",
      HOME: home,
      HELM_CONFIG_HOME: join(home, "config"),
      HELM_CACHE_HOME: join(home, "cache"),
      HELM_DATA_HOME: join(home, "data"),
      ...(kubeconfig ? { KUBECONFIG: kubeconfig } : {}),
    },
  });
  return { ...r, stderr: helmStderr(r.stderr) };
}

/** `helm template` with --set pairs; throws with helm's own message when rendering fails. */
export async function render(
  sets: Record<string, string> = {},
  opts: { release?: string; namespace?: string } = {},
): Promise<K8sObject[]> {
  const args = ["template", opts.release ?? "kr", CHART, "--namespace", opts.namespace ?? "krt-render"];
  for (const [k, v] of Object.entries(sets)) args.push("--set", `${k}=${v}`);
  const r = await helm(args);
  if (r.code !== 0) throw new Error(r.stderr.trim());
  return YAML.parseAllDocuments(r.stdout)
    .map((d) => d.toJS() as K8sObject | null)
    .filter((o): o is K8sObject => o !== null);
}

export function find(objects: K8sObject[], kind: string, name?: string): K8sObject {
  const o = objects.find((x) => x.kind === kind && (name === undefined || x.metadata.name === name));
  if (!o) throw new Error(`no ${kind}${name ? ` ${name}` : ""} rendered`);
  return o;
}

/** The controller container of the rendered controller Deployment. */
export function controllerContainer(objects: K8sObject[]) {
  const dep = objects.find((o) => o.kind === "Deployment" && o.metadata.name.endsWith("-controller"));
  if (!dep) throw new Error("no controller Deployment rendered");
  return dep.spec.template.spec.containers[0];
}

/** The chart's CRDs applied as Helm applies them (field manager `helm`), taking over their fields. */
export async function applyChartCrds(client: KubeClient): Promise<void> {
  const dir = join(CHART, "crds");
  for (const file of readdirSync(dir)) {
    const crd = YAML.parse(readFileSync(join(dir, file), "utf8")) as { metadata: { name: string } };
    await client.apply(path(R.crds, undefined, crd.metadata.name), crd, "helm", true);
  }
}

/**
 * The chart's CRDs applied, then release `release` installed into `namespace` with
 * controller.scope=Namespace (and `sets`, `key=value` each) and waited for; throws with helm's
 * message when it fails. The setup of every suite that needs the chart running in its namespace.
 */
export async function installNamespaced(
  kubeconfig: string,
  client: KubeClient,
  release: string,
  namespace: string,
  sets: string[] = [],
): Promise<void> {
  await applyChartCrds(client);
  // The CRDs were just applied (forced); helm applying them again conflicts with the field
  // manager of whichever suite applied a different revision of them first on the shared cluster.
  const args = ["install", release, CHART, "-n", namespace, "--skip-crds", "--wait", "--timeout", "3m"];
  for (const kv of ["controller.scope=Namespace", ...sets]) args.push("--set", kv);
  const r = await helm(args, kubeconfig);
  if (r.code !== 0) throw new Error(`helm install failed: ${r.stderr}`);
}

/**
 * Uninstalls a release if present and deletes its namespace, waiting until it is gone. Runs go
 * first, while the controller and runtimed still run: a function Run carries a finalizer only
 * they remove, and a Run left behind would keep the namespace (a failed test leaves some).
 */
export async function removeRelease(
  kubeconfig: string,
  client: KubeClient,
  release: string,
  namespace: string,
): Promise<void> {
  await deleteRuns(client, namespace);
  await helm(["uninstall", release, "-n", namespace, "--wait", "--ignore-not-found"], kubeconfig);
  await deleteRuns(client, namespace, 0);
  await client.delete(path(R.namespaces, undefined, namespace)).catch(() => {});
  for (let i = 0; i < 600; i++) {
    try {
      await client.get(path(R.namespaces, undefined, namespace));
      await Bun.sleep(100);
    } catch {
      return;
    }
  }
  throw new Error(`namespace ${namespace} still exists a minute after deletion`);
}

/**
 * Deletes every Run of the namespace and waits up to `graceMs` for their finalizers to be
 * removed by whoever owns them; what is left after that (no controller, no runtimed any more)
 * has its finalizers stripped.
 */
async function deleteRuns(client: KubeClient, namespace: string, graceMs = 30_000): Promise<void> {
  const runs = path(RunResource, namespace);
  const list = () =>
    client
      .list<{ metadata: { name: string; finalizers?: string[] } }>(runs)
      .then((l) => l.items)
      .catch(() => []);
  if ((await list()).length === 0) return;
  await client.delete(runs).catch(() => {});
  const until = Date.now() + graceMs;
  while (Date.now() < until && (await list()).length > 0) await Bun.sleep(200);
  for (const run of await list())
    if (run.metadata.finalizers?.length)
      await client
        .patch(path(RunResource, namespace, run.metadata.name), { metadata: { finalizers: null } }, "merge")
        .catch(() => {});
}
