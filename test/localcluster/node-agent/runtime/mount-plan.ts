/**
 * What a container's private mount namespace looks like: bind mounts of the pod's volume
 * directories at the container's mountPaths (subPath, readOnly), the pod's /etc/hosts, and the
 * pod hostname in a private UTS namespace. Rendered as the /bin/sh script that runs inside
 * `unshare --mount --uts --propagation private` before it execs the container command.
 * Missing mount points are created with mkdir -p / touch from inside the namespace; outside
 * other mounts those land on the host filesystem (documented in docs/local-cluster-node-agent.md).
 */
import { isAbsolute, normalize } from "node:path";
import type { VolumeMount } from "../api/types.ts";
import { expand, lookupIn } from "../env/expand.ts";

export interface BindMount {
  source: string;
  target: string;
  readOnly: boolean;
}

export class MountError extends Error {
  override name = "MountError";
}

/** `subPath` must stay inside its volume: relative, no `..` component. */
function checkSubPath(sub: string): string {
  const n = normalize(sub);
  if (isAbsolute(sub) || n === ".." || n.startsWith("../") || sub.split("/").includes("..")) {
    throw new MountError(`subPath "${sub}" must be a relative path without ".."`);
  }
  return n === "." ? "" : n;
}

/** Binds for the container's volumeMounts, parents before children (sorted by mountPath depth). */
export function planMounts(
  mounts: VolumeMount[],
  volumeDirs: Map<string, { dir: string; readOnly: boolean }>,
  env: Map<string, string>,
): BindMount[] {
  const binds: BindMount[] = [];
  for (const m of mounts) {
    const vol = volumeDirs.get(m.name);
    if (!vol) throw new MountError(`volumeMount "${m.name}": no volume of that name in the pod`);
    if (!isAbsolute(m.mountPath)) throw new MountError(`mountPath "${m.mountPath}" must be absolute`);
    const sub = m.subPathExpr ? expand(m.subPathExpr, lookupIn(env)) : (m.subPath ?? "");
    const rel = sub ? checkSubPath(sub) : "";
    binds.push({
      source: rel ? `${vol.dir}/${rel}` : vol.dir,
      target: normalize(m.mountPath).replace(/\/$/, "") || "/",
      readOnly: Boolean(m.readOnly) || vol.readOnly,
    });
  }
  return binds.sort((a, b) => a.target.split("/").length - b.target.split("/").length);
}

export function shellQuote(s: string): string {
  return `'${s.replaceAll("'", `'\\''`)}'`;
}

export interface WrapperSpec {
  binds: BindMount[];
  /** Per-pod hosts file bound over /etc/hosts. */
  hostsFile?: string;
  hostname: string;
  workingDir: string;
  /** Written (and exit 128) when setup fails before the command runs: the agent reports StartError. */
  startErrorFile: string;
}

/**
 * The script for `sh -c <script> krt-container <argv…>`. Each step that fails writes why into the
 * start-error file and exits 128, so a broken mount is not mistaken for the program's own exit.
 */
export function wrapperScript(w: WrapperSpec): string {
  const err = shellQuote(w.startErrorFile);
  const fail = (what: string) => `{ printf '%s\\n' ${shellQuote(what)} >${err}; exit 128; }`;
  const lines = [
    `printf '%s' ${shellQuote(w.hostname)} >/proc/sys/kernel/hostname || ${fail("cannot set the hostname")}`,
  ];
  const all = w.hostsFile
    ? [{ source: w.hostsFile, target: "/etc/hosts", readOnly: false }, ...w.binds]
    : w.binds;
  for (const b of all) {
    const s = shellQuote(b.source);
    const t = shellQuote(b.target);
    // A subPath that does not exist yet is created as a directory, as kubelet does.
    lines.push(`[ -e ${s} ] || mkdir -p ${s} || ${fail(`cannot create subPath ${b.source}`)}`);
    lines.push(
      `if [ -d ${s} ]; then mkdir -p ${t}; else mkdir -p "$(dirname ${t})" && { [ -e ${t} ] || : >${t}; }; fi || ${fail(`cannot create mount point ${b.target}`)}`,
    );
    lines.push(`mount --bind ${s} ${t} || ${fail(`mount --bind ${b.source} ${b.target} failed`)}`);
    if (b.readOnly)
      lines.push(`mount -o remount,bind,ro ${t} || ${fail(`remount ${b.target} read-only failed`)}`);
  }
  const wd = shellQuote(w.workingDir);
  lines.push(`mkdir -p ${wd} && cd ${wd} || ${fail(`cannot enter working directory ${w.workingDir}`)}`);
  lines.push(
    `command -v "$1" >/dev/null 2>&1 || { printf 'exec: "%s": executable file not found in $PATH\\n' "$1" >${err}; exit 128; }`,
  );
  lines.push(`exec "$@"`);
  return lines.join("\n");
}
