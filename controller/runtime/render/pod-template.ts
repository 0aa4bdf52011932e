/**
 * Renders a Runtime's pod template: the user's template with the runtime container wired to the
 * shared socket and workspace, secure defaults filled in where the template is silent (the
 * template always wins), the runtimed sidecar and its volumes added, and a hash of the result
 * stamped on it so any change — template, capacity, sidecar image — rolls the pods.
 */
import { createHash } from "node:crypto";
import {
  Annotations,
  RUNTIME_CONTAINER,
  type Runtime,
  runtimeCapacity,
  WORKSPACE_MOUNT_PATH,
} from "@kruntimes/api";
import { withArtifactStore } from "../../artifacts/store-wiring.ts";
import { CAPACITY_ANNOTATION } from "../../scheduler/cache/pod-info.ts";
import { Env, SOCKET_DIR, SOCKET_PATH, Volumes } from "./contract.ts";
import { ownedNames, selectorLabels } from "./names.ts";
import type { Container, PodSpec, PodTemplateSpec, Volume } from "./pod-types.ts";
import type { RenderOptions } from "./render-options.ts";
import { runtimedContainer, runtimedTokenVolume } from "./runtimed-container.ts";
import { withWarmPool } from "./warm-pool.ts";

export class TemplateError extends Error {
  override name = "TemplateError";
}

const OUR_VOLUMES: readonly string[] = Object.values(Volumes);

function withRuntimeWiring(c: Container, o: RenderOptions, capacity: Record<string, number>): Container {
  const mounts = c.volumeMounts ?? [];
  for (const m of mounts) {
    if (m.mountPath === SOCKET_DIR || m.mountPath === WORKSPACE_MOUNT_PATH) {
      throw new TemplateError(`container "${c.name}" mounts ${m.mountPath}, which kruntimes reserves`);
    }
  }
  const env = (c.env ?? []).filter((e) => e.name !== Env.socket && e.name !== Env.workspace);
  return {
    ...c,
    env: [
      ...withWarmPool(env, capacity, o.warmPoolMax),
      { name: Env.socket, value: SOCKET_PATH },
      { name: Env.workspace, value: WORKSPACE_MOUNT_PATH },
    ],
    volumeMounts: [
      ...mounts,
      { name: Volumes.socket, mountPath: SOCKET_DIR },
      { name: Volumes.workspace, mountPath: WORKSPACE_MOUNT_PATH },
    ],
    resources: c.resources && Object.keys(c.resources).length > 0 ? c.resources : o.runtimeResources,
    securityContext: {
      allowPrivilegeEscalation: false,
      capabilities: { drop: ["ALL"] },
      ...c.securityContext,
    },
  };
}

export function templateHash(template: PodTemplateSpec): string {
  return createHash("sha256").update(JSON.stringify(template)).digest("hex").slice(0, 16);
}

export function renderPodTemplate(
  rt: Runtime,
  o: RenderOptions,
): { template: PodTemplateSpec; hash: string } {
  const user = rt.spec.template;
  const spec = structuredClone(user.spec) as PodSpec;
  for (const v of spec.volumes ?? []) {
    if (OUR_VOLUMES.includes(v.name))
      throw new TemplateError(`volume name "${v.name}" is reserved by kruntimes`);
  }
  if (!spec.containers.some((c) => c.name === RUNTIME_CONTAINER)) {
    throw new TemplateError(`spec.template needs a container named "${RUNTIME_CONTAINER}"`);
  }
  const capacity = runtimeCapacity(rt.spec);
  const podSecurity = { seccompProfile: { type: "RuntimeDefault" }, ...spec.securityContext };
  const volumes: Volume[] = [
    ...(spec.volumes ?? []),
    { name: Volumes.socket, emptyDir: {} },
    { name: Volumes.workspace, ...(rt.spec.workspace ?? { emptyDir: {} }) },
    runtimedTokenVolume(),
    { name: Volumes.runtimedTmp, emptyDir: {} },
  ];
  const rendered: PodSpec = {
    ...spec,
    serviceAccountName: spec.serviceAccountName ?? ownedNames(rt).serviceAccount,
    automountServiceAccountToken: spec.automountServiceAccountToken ?? false,
    securityContext: podSecurity,
    containers: [
      ...spec.containers.map((c) => (c.name === RUNTIME_CONTAINER ? withRuntimeWiring(c, o, capacity) : c)),
      withArtifactStore(
        rt.spec.artifactStore,
        runtimedContainer(rt.metadata.name ?? "", capacity, podSecurity, o),
        volumes,
      ),
    ],
    volumes,
  };
  const template: PodTemplateSpec = {
    metadata: {
      labels: { ...user.metadata?.labels, ...selectorLabels(rt) },
      annotations: { ...user.metadata?.annotations, [CAPACITY_ANNOTATION]: JSON.stringify(capacity) },
    },
    spec: rendered,
  };
  const hash = templateHash(template);
  template.metadata.annotations[Annotations.templateHash] = hash;
  return { template, hash };
}
