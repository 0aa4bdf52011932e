/**
 * The injected `runtimed` sidecar: downward-API identity, the Runtime's name and capacity, the
 * shared socket and workspace, its own service-account token (the runtime container gets none),
 * a read-only root filesystem, and readiness on `/readyz`.
 */
import { RUNTIMED_CONTAINER, WORKSPACE_MOUNT_PATH } from "@kruntimes/api";
import {
  DATAPLANE_PORT_NAME,
  Env,
  RUNTIMED_PORT_NAME,
  RUNTIMED_TMP,
  RUNTIMED_UID,
  SA_TOKEN_DIR,
  SOCKET_DIR,
  SOCKET_PATH,
  Volumes,
} from "./contract.ts";
import type { Container, EnvVar } from "./pod-types.ts";
import type { RenderOptions } from "./render-options.ts";

function fieldEnv(name: string, fieldPath: string): EnvVar {
  return { name, valueFrom: { fieldRef: { apiVersion: "v1", fieldPath } } };
}

export function runtimedContainer(
  runtime: string,
  capacity: Record<string, number>,
  podSecurity: Record<string, unknown> | undefined,
  o: RenderOptions,
): Container {
  const inheritsUser = podSecurity?.runAsUser !== undefined;
  return {
    name: RUNTIMED_CONTAINER,
    image: o.runtimedImage,
    ...(o.runtimedCommand ? { command: o.runtimedCommand } : {}),
    ...(o.imagePullPolicy ? { imagePullPolicy: o.imagePullPolicy } : {}),
    env: [
      fieldEnv(Env.podName, "metadata.name"),
      fieldEnv(Env.podNamespace, "metadata.namespace"),
      fieldEnv(Env.podUID, "metadata.uid"),
      fieldEnv(Env.podIP, "status.podIP"),
      fieldEnv(Env.nodeName, "spec.nodeName"),
      { name: Env.runtime, value: runtime },
      { name: Env.capacity, value: JSON.stringify(capacity) },
      { name: Env.socket, value: SOCKET_PATH },
      { name: Env.workspace, value: WORKSPACE_MOUNT_PATH },
      { name: Env.port, value: String(o.runtimedPort) },
      { name: Env.leaseDurationSeconds, value: String(o.leaseDurationSeconds) },
      { name: Env.heartbeatIntervalMs, value: String(o.heartbeatIntervalMs) },
      { name: Env.dataplanePort, value: String(o.dataplanePort) },
      { name: Env.dataplaneSubjects, value: o.dataplaneSubjects.join(",") },
      ...(o.sessionMaxQueuedTotal
        ? [{ name: Env.sessionMaxQueuedTotal, value: String(o.sessionMaxQueuedTotal) }]
        : []),
      ...(o.sessionCloseDeadlineMs
        ? [{ name: Env.sessionCloseDeadlineMs, value: String(o.sessionCloseDeadlineMs) }]
        : []),
      { name: "TMPDIR", value: RUNTIMED_TMP },
    ],
    ports: [
      { name: RUNTIMED_PORT_NAME, containerPort: o.runtimedPort, protocol: "TCP" },
      { name: DATAPLANE_PORT_NAME, containerPort: o.dataplanePort, protocol: "TCP" },
    ],
    volumeMounts: [
      { name: Volumes.socket, mountPath: SOCKET_DIR },
      { name: Volumes.workspace, mountPath: WORKSPACE_MOUNT_PATH },
      { name: Volumes.runtimedToken, mountPath: SA_TOKEN_DIR, readOnly: true },
      // Not /tmp: a writable scratch dir for a read-only root, named by TMPDIR.
      { name: Volumes.runtimedTmp, mountPath: RUNTIMED_TMP },
    ],
    readinessProbe: {
      httpGet: { path: "/readyz", port: RUNTIMED_PORT_NAME },
      periodSeconds: 2,
      timeoutSeconds: 1,
      failureThreshold: 2,
    },
    livenessProbe: {
      httpGet: { path: "/healthz", port: RUNTIMED_PORT_NAME },
      periodSeconds: 10,
      timeoutSeconds: 2,
      failureThreshold: 3,
    },
    resources: o.runtimedResources,
    securityContext: {
      runAsNonRoot: true,
      ...(inheritsUser ? {} : { runAsUser: RUNTIMED_UID, runAsGroup: RUNTIMED_UID }),
      allowPrivilegeEscalation: false,
      readOnlyRootFilesystem: true,
      capabilities: { drop: ["ALL"] },
      seccompProfile: { type: "RuntimeDefault" },
    },
  };
}

/** runtimed's own token, CA and namespace, at the standard in-cluster path, readable by its user. */
export function runtimedTokenVolume(expirationSeconds = 3607) {
  return {
    name: Volumes.runtimedToken,
    projected: {
      defaultMode: 0o444,
      sources: [
        { serviceAccountToken: { path: "token", expirationSeconds } },
        { configMap: { name: "kube-root-ca.crt", items: [{ key: "ca.crt", path: "ca.crt" }] } },
        {
          downwardAPI: {
            items: [{ path: "namespace", fieldRef: { apiVersion: "v1", fieldPath: "metadata.namespace" } }],
          },
        },
      ],
    },
  };
}
