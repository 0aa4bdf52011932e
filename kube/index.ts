/** @kruntimes/kube: a thin typed Kubernetes client over Bun fetch, watches and informers. */
export { KubeClient } from "./src/client.ts";
export type { KubeList, KubeObject, ObjectMeta, PatchType, RequestOptions } from "./src/client.ts";
export { KubeError, isConflict, isFenceFailed, isGone, isNotFound } from "./src/errors.ts";
export type { KubeStatus } from "./src/errors.ts";
export { Informer, keyOf } from "./src/informer.ts";
export type { InformerHandlers, InformerOptions } from "./src/informer.ts";
export { KubeconfigError, loadInCluster, loadKubeconfigFile, resolveConnection } from "./src/kubeconfig.ts";
export type { ClusterConnection } from "./src/kubeconfig.ts";
export { path, R, resourcePath } from "./src/paths.ts";
export type { ResourceRef } from "./src/paths.ts";
export { watchStream } from "./src/watch.ts";
export type { WatchEvent, WatchEventType } from "./src/watch.ts";
