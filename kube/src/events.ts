/**
 * A core/v1 Event as `krt describe` and the dashboard read it, and when it last happened. The
 * fields are the Event's own; the newer series-style ones (`series`, `eventTime`) are optional.
 */
export interface KubeEvent {
  metadata: { uid?: string; creationTimestamp?: string };
  type?: string;
  reason?: string;
  message?: string;
  count?: number;
  lastTimestamp?: string;
  eventTime?: string;
  firstTimestamp?: string;
  series?: { count?: number; lastObservedTime?: string };
}

/** The last time it was recorded, from the first of the time fields set. */
export function eventTime(e: KubeEvent): string | undefined {
  return e.lastTimestamp ?? e.eventTime ?? e.firstTimestamp ?? e.metadata.creationTimestamp;
}
