/** @kruntimes/kube: a thin typed Kubernetes client over Bun fetch, watches and informers. */

export type {
  KubeClientOptions,
  KubeList,
  KubeObject,
  ObjectMeta,
  PatchType,
  RequestOptions,
} from "./src/client.ts";
export { KubeClient } from "./src/client.ts";
export type { KubeStatus } from "./src/errors.ts";
export { isConflict, isFenceFailed, isGone, isNotFound, KubeError, unlessNotFound } from "./src/errors.ts";
export { eventTime, type KubeEvent } from "./src/events.ts";
export type { InformerHandlers, InformerOptions } from "./src/informer.ts";
export { Informer, keyOf, withoutManagedFields } from "./src/informer.ts";
export type { ClusterConnection } from "./src/kubeconfig.ts";
export { KubeconfigError, loadInCluster, loadKubeconfigFile, resolveConnection } from "./src/kubeconfig.ts";
export type { ResourceRef } from "./src/paths.ts";
export { path, R, resourcePath } from "./src/paths.ts";
export type { TextLinesOptions } from "./src/text-lines.ts";
export { textLines } from "./src/text-lines.ts";
export type { WatchEvent, WatchEventType } from "./src/watch.ts";
export { watchStream } from "./src/watch.ts";
export { classifyWriteError, type WriteFailure } from "./src/write-errors.ts";
