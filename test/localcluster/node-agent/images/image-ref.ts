/**
 * Image reference normalization, as Docker does it: `busybox`, `library/busybox:1.36` and
 * `docker.io/library/busybox@sha256:…` all name the repository `docker.io/library/busybox`.
 */
export interface ImageRef {
  /** registry/path without tag or digest, e.g. `docker.io/library/busybox`, `ghcr.io/kruntimes/runtimed`. */
  repository: string;
  tag?: string;
  digest?: string;
}

const DEFAULT_REGISTRY = "docker.io";

/** Parses `[registry/]path[:tag][@digest]`; a first component with `.` or `:` (or `localhost`) is a registry. */
export function parseImageRef(ref: string): ImageRef {
  let rest = ref.trim();
  let digest: string | undefined;
  const at = rest.indexOf("@");
  if (at >= 0) {
    digest = rest.slice(at + 1);
    rest = rest.slice(0, at);
  }
  let tag: string | undefined;
  const lastSlash = rest.lastIndexOf("/");
  const colon = rest.lastIndexOf(":");
  // A colon after the last slash is a tag; before it, it belongs to a registry host:port.
  if (colon > lastSlash) {
    tag = rest.slice(colon + 1);
    rest = rest.slice(0, colon);
  }
  const parts = rest.split("/");
  const first = parts[0] ?? "";
  const hasRegistry =
    parts.length > 1 && (first.includes(".") || first.includes(":") || first === "localhost");
  let registry = DEFAULT_REGISTRY;
  if (hasRegistry) {
    registry = first === "index.docker.io" ? DEFAULT_REGISTRY : first;
    parts.shift();
  }
  if (registry === DEFAULT_REGISTRY && parts.length === 1) parts.unshift("library");
  return { repository: `${registry}/${parts.join("/")}`.toLowerCase(), tag, digest };
}
