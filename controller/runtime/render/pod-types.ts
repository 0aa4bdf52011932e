/** Loose shapes of the PodSpec parts the renderer touches; everything else passes through. */
export interface EnvVar {
  name: string;
  value?: string;
  valueFrom?: unknown;
}

export interface VolumeMount {
  name: string;
  mountPath: string;
  readOnly?: boolean;
}

export interface Container {
  name: string;
  image?: string;
  env?: EnvVar[];
  volumeMounts?: VolumeMount[];
  resources?: { requests?: Record<string, string>; limits?: Record<string, string> };
  securityContext?: Record<string, unknown>;
  [field: string]: unknown;
}

export interface Volume {
  name: string;
  [source: string]: unknown;
}

export interface PodSpec {
  containers: Container[];
  initContainers?: Container[];
  volumes?: Volume[];
  securityContext?: Record<string, unknown>;
  serviceAccountName?: string;
  automountServiceAccountToken?: boolean;
  [field: string]: unknown;
}

export interface PodTemplateSpec {
  metadata: { labels: Record<string, string>; annotations: Record<string, string> };
  spec: PodSpec;
}
