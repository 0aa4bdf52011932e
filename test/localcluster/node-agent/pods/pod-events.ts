/**
 * Warning Events about a pod, as kubelet records them (`FailedMount` while a volume cannot be set
 * up), so `kubectl describe pod` says why it is stuck. One Event per distinct reason and message
 * per pod — a pod retrying every few seconds does not flood the API. Recording is best effort:
 * a failed write is logged, never fails the pod sync.
 */
import { type KubeClient, path, R } from "@kruntimes/kube";
import type { Logger } from "pino";
import { apiTime } from "../api/api-time.ts";
import type { Pod } from "../api/types.ts";

export interface PodEventSink {
  warn(pod: Pod, reason: string, message: string): void;
  forget(uid: string): void;
}

export class ApiPodEvents implements PodEventSink {
  private readonly last = new Map<string, string>();

  constructor(
    private readonly client: KubeClient,
    private readonly nodeName: string,
    private readonly log: Logger,
  ) {}

  warn(pod: Pod, reason: string, message: string): void {
    const uid = pod.metadata.uid ?? "";
    const key = `${reason}\n${message}`;
    if (this.last.get(uid) === key) return;
    this.last.set(uid, key);
    const now = apiTime();
    const ns = pod.metadata.namespace ?? "default";
    this.client
      .create(path(R.events, ns), {
        metadata: { generateName: `${pod.metadata.name}.` },
        involvedObject: { apiVersion: "v1", kind: "Pod", namespace: ns, name: pod.metadata.name, uid },
        reason,
        message,
        type: "Warning",
        source: { component: "kubelet", host: this.nodeName },
        firstTimestamp: now,
        lastTimestamp: now,
        count: 1,
      })
      .catch((e) =>
        this.log.warn({ pod: `${ns}/${pod.metadata.name}`, err: String(e) }, "cannot record event"),
      );
  }

  forget(uid: string): void {
    this.last.delete(uid);
  }
}
