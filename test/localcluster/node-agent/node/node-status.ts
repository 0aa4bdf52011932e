/**
 * What the Node object says about this host: capacity and allocatable from the config, addresses
 * (InternalIP 127.0.0.1, so the apiserver reaches the log endpoint on loopback), the kubelet
 * endpoint port, nodeInfo with the host's real kernel/boot/machine ids, and the conditions the
 * node lifecycle controller reads. Conditions keep their transition time from the agent's start.
 */
import { existsSync, readFileSync } from "node:fs";
import { release } from "node:os";
import { apiTime } from "../api/api-time.ts";

export const KUBELET_VERSION = "v1.37.2";
export const RUNTIME_VERSION = "krtlocal://0.1.0";

export interface NodeFacts {
  nodeName: string;
  kubeletPort: number;
  allocatable: { cpu: string; memory: string; pods: string };
  /** When the agent started: the transition time of its conditions. */
  since: string;
}

const readId = (file: string) => (existsSync(file) ? readFileSync(file, "utf8").trim() : "");
export const nodeArch = () => (process.arch === "x64" ? "amd64" : process.arch);

function osImage(): string {
  const m = /^PRETTY_NAME="?([^"\n]*)"?$/m.exec(readId("/etc/os-release"));
  return `${m?.[1] ?? "Linux"} (kruntimes local node agent: host processes)`;
}

export function nodeLabels(nodeName: string): Record<string, string> {
  return {
    "kubernetes.io/hostname": nodeName,
    "kubernetes.io/os": "linux",
    "kubernetes.io/arch": nodeArch(),
    "kruntimes.io/local-node-agent": "true",
  };
}

export function nodeStatus(f: NodeFacts, now = apiTime()) {
  const c = (type: string, status: string, reason: string, message: string) => ({
    type,
    status,
    reason,
    message,
    lastHeartbeatTime: now,
    lastTransitionTime: f.since,
  });
  const resources = { ...f.allocatable, "ephemeral-storage": "100Gi" };
  const machineID = readId("/etc/machine-id") || f.nodeName;
  return {
    capacity: resources,
    allocatable: resources,
    addresses: [
      { type: "InternalIP", address: "127.0.0.1" },
      { type: "Hostname", address: f.nodeName },
    ],
    daemonEndpoints: { kubeletEndpoint: { Port: f.kubeletPort } },
    nodeInfo: {
      machineID,
      systemUUID: machineID,
      bootID: readId("/proc/sys/kernel/random/boot_id"),
      kernelVersion: release(),
      osImage: osImage(),
      containerRuntimeVersion: RUNTIME_VERSION,
      kubeletVersion: KUBELET_VERSION,
      kubeProxyVersion: "",
      operatingSystem: "linux",
      architecture: nodeArch(),
    },
    conditions: [
      c("MemoryPressure", "False", "KubeletHasSufficientMemory", "kubelet has sufficient memory available"),
      c("DiskPressure", "False", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
      c("PIDPressure", "False", "KubeletHasSufficientPID", "kubelet has sufficient PID available"),
      c("Ready", "True", "KubeletReady", "local node agent is posting ready status"),
    ],
  };
}
