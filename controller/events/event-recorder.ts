/**
 * A minimal Kubernetes Event recorder (core/v1 Events on the involved object, as `kubectl
 * describe` shows them). Fire and forget: an Event that cannot be written is logged at debug and
 * never fails or slows the reconcile that records it.
 */
import { randomBytes } from "node:crypto";
import { type KubeClient, path, R } from "@kruntimes/kube";
import type { Logger } from "pino";

export interface EventTarget {
  apiVersion: string;
  kind: string;
  namespace: string;
  name: string;
  uid?: string;
}

export type EventType = "Normal" | "Warning";

export interface EventRecorder {
  record(target: EventTarget, type: EventType, reason: string, message: string): void;
}

export class ApiEventRecorder implements EventRecorder {
  constructor(
    private readonly client: KubeClient,
    private readonly component: string,
    private readonly log: Logger,
  ) {}

  record(target: EventTarget, type: EventType, reason: string, message: string): void {
    const now = new Date().toISOString();
    const body = {
      apiVersion: "v1",
      kind: "Event",
      metadata: {
        name: `${target.name}.${randomBytes(8).toString("hex")}`,
        namespace: target.namespace,
      },
      involvedObject: {
        apiVersion: target.apiVersion,
        kind: target.kind,
        namespace: target.namespace,
        name: target.name,
        ...(target.uid ? { uid: target.uid } : {}),
      },
      type,
      reason,
      message: message.slice(0, 1024),
      source: { component: this.component },
      reportingComponent: this.component,
      firstTimestamp: now,
      lastTimestamp: now,
      count: 1,
    };
    this.client.create(path(R.events, target.namespace), body).catch((err: unknown) => {
      this.log.debug(
        { err, reason, object: `${target.namespace}/${target.name}` },
        "could not write an Event",
      );
    });
  }
}
