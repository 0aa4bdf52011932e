/**
 * A container's environment, built in kubelet's order: `envFrom` sources, then `env` entries
 * (values `$(VAR)`-expanded against what came before plus the service variables), then the
 * KUBERNETES_SERVICE_* variables where not already defined. The image env sits underneath and
 * HOSTNAME on top, as a container runtime does.
 */
import { configMapBytes, type ObjectSource, secretBytes } from "../api/object-source.ts";
import type { Container, Pod } from "../api/types.ts";
import { expand, lookupIn } from "./expand.ts";
import { fieldRefValue, type PodFacts, resourceFieldValue } from "./field-ref.ts";

/** Maps to the container waiting reason CreateContainerConfigError. */
export class ContainerConfigError extends Error {
  override name = "ContainerConfigError";
}

export interface ServiceEnv {
  apiserverHost: string;
  apiserverPort: number;
}

const ENV_NAME = /^[-._a-zA-Z][-._a-zA-Z0-9]*$/;

export function serviceEnv(s: ServiceEnv): Record<string, string> {
  const hostPort = `${s.apiserverHost}:${s.apiserverPort}`;
  return {
    KUBERNETES_SERVICE_HOST: s.apiserverHost,
    KUBERNETES_SERVICE_PORT: String(s.apiserverPort),
    KUBERNETES_SERVICE_PORT_HTTPS: String(s.apiserverPort),
    KUBERNETES_PORT: `tcp://${hostPort}`,
    [`KUBERNETES_PORT_${s.apiserverPort}_TCP`]: `tcp://${hostPort}`,
    [`KUBERNETES_PORT_${s.apiserverPort}_TCP_PROTO`]: "tcp",
    [`KUBERNETES_PORT_${s.apiserverPort}_TCP_PORT`]: String(s.apiserverPort),
    [`KUBERNETES_PORT_${s.apiserverPort}_TCP_ADDR`]: s.apiserverHost,
  };
}

async function sourceBytes(
  objects: ObjectSource,
  ns: string,
  kind: "ConfigMap" | "Secret",
  name: string,
): Promise<Map<string, Buffer> | undefined> {
  if (kind === "ConfigMap") {
    const cm = await objects.configMap(ns, name);
    return cm && configMapBytes(cm);
  }
  const s = await objects.secret(ns, name);
  return s && secretBytes(s);
}

/** The container's own variables (what `$(VAR)` in command/args may reference). */
export async function containerEnv(
  pod: Pod,
  container: Container,
  facts: PodFacts,
  objects: ObjectSource,
  svc: ServiceEnv,
): Promise<Map<string, string>> {
  const ns = pod.metadata.namespace ?? "default";
  const env = new Map<string, string>();
  const service = serviceEnv(svc);

  for (const src of container.envFrom ?? []) {
    const ref = src.configMapRef ?? src.secretRef;
    if (!ref) continue;
    const kind = src.configMapRef ? "ConfigMap" : "Secret";
    const data = await sourceBytes(objects, ns, kind, ref.name);
    if (!data) {
      if (ref.optional) continue;
      throw new ContainerConfigError(`${kind.toLowerCase()} "${ref.name}" not found`);
    }
    for (const [k, v] of data) {
      const name = (src.prefix ?? "") + k;
      // kubelet skips keys that are not valid variable names (and records an event).
      if (ENV_NAME.test(name)) env.set(name, v.toString("utf8"));
    }
  }

  for (const e of container.env ?? []) {
    if (e.valueFrom === undefined) {
      env.set(e.name, expand(e.value ?? "", lookupIn(env, service)));
      continue;
    }
    const vf = e.valueFrom;
    if (vf.fieldRef) {
      env.set(e.name, fieldRefValue(pod, facts, vf.fieldRef));
    } else if (vf.resourceFieldRef) {
      env.set(e.name, resourceFieldValue(pod, facts, vf.resourceFieldRef, container));
    } else {
      const ref = vf.configMapKeyRef ?? vf.secretKeyRef;
      if (!ref) continue;
      const kind = vf.configMapKeyRef ? "ConfigMap" : "Secret";
      const data = await sourceBytes(objects, ns, kind, ref.name ?? "");
      if (!data) {
        if (ref.optional) continue;
        throw new ContainerConfigError(`${kind.toLowerCase()} "${ref.name}" not found`);
      }
      const v = data.get(ref.key);
      if (v === undefined) {
        if (ref.optional) continue;
        throw new ContainerConfigError(`couldn't find key ${ref.key} in ${kind} ${ns}/${ref.name}`);
      }
      env.set(e.name, v.toString("utf8"));
    }
  }

  for (const [k, v] of Object.entries(service)) if (!env.has(k)) env.set(k, v);
  return env;
}

/** Image env, then the container's variables, then HOSTNAME: the process environment. */
export function processEnv(
  imageEnv: Record<string, string>,
  vars: Map<string, string>,
  hostname: string,
): Record<string, string> {
  const out: Record<string, string> = { ...imageEnv };
  for (const [k, v] of vars) out[k] = v;
  out.HOSTNAME = hostname;
  return out;
}

/** Kubernetes argv: `command` replaces the entrypoint, `args` the cmd; both `$(VAR)`-expanded. */
export function containerArgv(
  image: { entrypoint: string[]; cmd: string[] },
  container: Container,
  vars: Map<string, string>,
): string[] {
  const look = lookupIn(vars);
  const command = container.command?.length
    ? container.command.map((a) => expand(a, look))
    : image.entrypoint;
  let args: string[];
  if (container.args?.length) args = container.args.map((a) => expand(a, look));
  else if (container.command?.length) args = [];
  else args = image.cmd;
  return [...command, ...args];
}
