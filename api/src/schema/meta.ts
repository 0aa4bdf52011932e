/**
 * The subset of metav1.ObjectMeta the kinds' TypeScript types carry. Structurally the same as
 * `@kruntimes/kube`'s `ObjectMeta`, so objects pass between the two without casts; `api/` does not
 * depend on the client.
 */
export interface ObjectMeta {
  name?: string;
  generateName?: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  ownerReferences?: {
    apiVersion: string;
    kind: string;
    name: string;
    uid: string;
    controller?: boolean;
    blockOwnerDeletion?: boolean;
  }[];
  finalizers?: string[];
  creationTimestamp?: string;
  deletionTimestamp?: string;
  deletionGracePeriodSeconds?: number;
}
