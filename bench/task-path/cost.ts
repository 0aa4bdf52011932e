/**
 * Pure parts of the task-path cost measurement: kube-apiserver's request-duration metrics diffed
 * around a run (what each kind of request cost inside that window), and CPU seconds per process
 * group from /proc (who spent the machine's CPU during it).
 */

/** One series of apiserver_request_duration_seconds: {verb, resource, subresource} → sum, count. */
export interface RequestCost {
  verb: string;
  resource: string;
  subresource: string;
  count: number;
  seconds: number;
}

const SERIES = /^apiserver_request_duration_seconds_(sum|count)\{([^}]*)\} ([0-9.eE+-]+)$/;

function labels(s: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const m of s.matchAll(/([a-z_]+)="([^"]*)"/g)) out[m[1] as string] = m[2] as string;
  return out;
}

/** Sums apiserver_request_duration_seconds by verb/resource/subresource (scopes and versions merged). */
export function parseRequestCosts(text: string): Map<string, RequestCost> {
  const out = new Map<string, RequestCost>();
  for (const line of text.split("\n")) {
    const m = SERIES.exec(line);
    if (!m) continue;
    const l = labels(m[2] as string);
    const key = `${l.verb} ${l.resource}${l.subresource ? `/${l.subresource}` : ""}`;
    const c = out.get(key) ?? {
      verb: l.verb ?? "",
      resource: l.resource ?? "",
      subresource: l.subresource ?? "",
      count: 0,
      seconds: 0,
    };
    if (m[1] === "sum") c.seconds += Number(m[3]);
    else c.count += Number(m[3]);
    out.set(key, c);
  }
  return out;
}

/** after − before, only series with requests in the window, most total time first (WATCH excluded: its duration is the watch's life). */
export function diffRequestCosts(
  before: Map<string, RequestCost>,
  after: Map<string, RequestCost>,
): (RequestCost & { key: string; meanMs: number })[] {
  const out: (RequestCost & { key: string; meanMs: number })[] = [];
  for (const [key, a] of after) {
    if (a.verb === "WATCH" || a.verb === "CONNECT") continue;
    const b = before.get(key);
    const count = a.count - (b?.count ?? 0);
    const seconds = a.seconds - (b?.seconds ?? 0);
    if (count <= 0) continue;
    out.push({ ...a, key, count, seconds, meanMs: (1000 * seconds) / count });
  }
  return out.sort((x, y) => y.seconds - x.seconds);
}

const TOTAL = /^apiserver_request_total\{([^}]*)\} ([0-9.eE+-]+)$/;

/**
 * apiserver_request_total by "VERB resource[/subresource] code" (scopes and versions merged):
 * how many writes failed and how (409 conflict, 422 a failed JSON-patch `test`, 429 throttled).
 */
export function parseRequestCodes(text: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of text.split("\n")) {
    const m = TOTAL.exec(line);
    if (!m) continue;
    const l = labels(m[1] as string);
    if (l.verb === "WATCH" || l.verb === "CONNECT") continue;
    const key = `${l.verb} ${l.resource}${l.subresource ? `/${l.subresource}` : ""} ${l.code}`;
    out.set(key, (out.get(key) ?? 0) + Number(m[2]));
  }
  return out;
}

/** after − before for request codes, only keys with requests in the window, most first. */
export function diffRequestCodes(
  before: Map<string, number>,
  after: Map<string, number>,
): [string, number][] {
  return [...after]
    .map(([k, n]): [string, number] => [k, n - (before.get(k) ?? 0)])
    .filter(([, n]) => n > 0)
    .sort((x, y) => y[1] - x[1] || x[0].localeCompare(y[0]));
}

/** Which part of the system a process is, from its command line (undefined: not ours to count). */
export function processGroup(cmdline: string): string | undefined {
  const rules: [RegExp, string][] = [
    [/kube-apiserver/, "kube-apiserver"],
    [/(^|\/)etcd( |$)/, "etcd"],
    [/kube-controller-manager/, "kube-controller-manager"],
    [/kube-scheduler/, "kube-scheduler"],
    [/controller\/main\.ts/, "kruntimes controller"],
    [/runtimed\/main\.ts/, "runtimed"],
    [/runtimes\/.*(server|main)/, "Runtime Server"],
    [/node-agent\/main\.ts/, "node agents"],
    [/(^|\/)krt (bench|run)|\/krt bench/, "krt (the client)"],
  ];
  for (const [re, g] of rules) if (re.test(cmdline)) return g;
  return undefined;
}

/** utime + stime of one /proc/<pid>/stat line, in clock ticks. */
export function cpuTicks(stat: string): number {
  const rest = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  // After the command: state(0) ppid … utime is field 14 of the line, index 11 here; stime 12.
  return Number(rest[11]) + Number(rest[12]);
}
