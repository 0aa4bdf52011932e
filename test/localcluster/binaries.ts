/** Locates the control-plane binaries: $KRT_ASSETS when given, else the version-keyed build cache. */
import { existsSync, readFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";

export const BINARIES = [
  "etcd",
  "kube-apiserver",
  "kube-controller-manager",
  "kube-scheduler",
  "kubectl",
] as const;
export type BinaryName = (typeof BINARIES)[number] | "helm";

export interface Versions {
  KUBERNETES_VERSION: string;
  ETCD_VERSION: string;
  HELM_VERSION: string;
}

export function readVersions(repoRoot: string): Versions {
  const text = readFileSync(join(repoRoot, "test/localcluster/build/versions.env"), "utf8");
  const out: Record<string, string> = {};
  for (const line of text.split("\n")) {
    const m = /^([A-Z][A-Z0-9_]*)=(\S+)/.exec(line);
    if (m) out[m[1]!] = m[2]!;
  }
  return out as unknown as Versions;
}

export function cacheDir(env: Record<string, string | undefined>): string {
  return env.KRT_CACHE_DIR ?? join(env.XDG_CACHE_HOME ?? join(env.HOME ?? homedir(), ".cache"), "kruntimes");
}

export function binaryPath(
  name: BinaryName,
  repoRoot: string,
  env: Record<string, string | undefined>,
): string {
  if (env.KRT_ASSETS) return join(env.KRT_ASSETS, name);
  const v = readVersions(repoRoot);
  const group =
    name === "etcd"
      ? `etcd-${v.ETCD_VERSION}`
      : name === "helm"
        ? `helm-${v.HELM_VERSION}`
        : `kubernetes-${v.KUBERNETES_VERSION}`;
  const p = join(cacheDir(env), "bin", group, name);
  if (!existsSync(p)) {
    throw new Error(`${p} is missing; build it with: bash test/localcluster/build/build-binaries.sh`);
  }
  return p;
}
