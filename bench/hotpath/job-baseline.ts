/**
 * Baseline (b): one Kubernetes Job per task on the same cluster — image `bash`, `bash -c true` —
 * timed from the client's create to the watch event that shows the Job Complete.
 */
import { type KubeClient, type KubeObject, path, R } from "@kruntimes/kube";
import { BenchError } from "./bench-error.ts";
import { DoneCollector } from "./collector.ts";
import { inParallel } from "./pool-limit.ts";
import type { Progress } from "./progress.ts";
import { BENCH_LABEL } from "./run-scenario.ts";
import { type Summary, summarize } from "./stats.ts";

interface Job extends KubeObject {
  status?: { conditions?: { type: string; status: string }[] };
}

export interface JobBaseline {
  jobs: number;
  concurrency: number;
  /** create → Complete seen, ms. */
  complete: Summary;
  failed: number;
}

const finished = (j: Job, type: string) =>
  j.status?.conditions?.some((c) => c.type === type && c.status === "True") ?? false;

export async function measureJobs(
  client: KubeClient,
  namespace: string,
  count: number,
  concurrency: number,
  timeoutMs: number,
  nowMicros: () => number,
  progress: Progress,
  signal: AbortSignal,
): Promise<JobBaseline> {
  const at = path(R.jobs, namespace);
  const selector = `${BENCH_LABEL}=jobs`;
  const collector = new DoneCollector<Job>(
    client,
    at,
    selector,
    (j) => finished(j, "Complete") || finished(j, "Failed"),
    nowMicros,
  );
  await collector.start();
  const createdAt = new Map<string, number>();
  const deadline = AbortSignal.any([signal, AbortSignal.timeout(timeoutMs)]);
  try {
    const creating = inParallel(
      count,
      concurrency,
      async (i) => {
        const name = `job-${i}`;
        createdAt.set(name, nowMicros());
        await client.create(at, {
          metadata: { name, labels: { [BENCH_LABEL]: "jobs" } },
          spec: {
            backoffLimit: 0,
            template: {
              metadata: { labels: { [BENCH_LABEL]: "jobs" } },
              spec: {
                restartPolicy: "Never",
                terminationGracePeriodSeconds: 0,
                containers: [{ name: "task", image: "bash", command: ["bash", "-c", "true"] }],
              },
            },
          },
        });
      },
      deadline,
    );
    await Promise.all([
      creating,
      collector.waitFor(count, deadline, (n) => progress.update(`jobs: ${n}/${count} complete`)),
    ]);
  } catch (e) {
    if (deadline.aborted && !signal.aborted)
      throw new BenchError(
        `Job baseline: only ${collector.done.size} of ${count} Jobs finished within ${timeoutMs / 1000}s`,
        "skip it with --jobs 0, or give it longer with --timeout",
      );
    throw e;
  } finally {
    await collector.stop();
    await client
      .delete(at, undefined, { labelSelector: selector, propagationPolicy: "Background" })
      .catch(() => {});
  }
  const ms: number[] = [];
  let failed = 0;
  for (const [name, s] of collector.done) {
    if (finished(s.object, "Failed")) failed++;
    else ms.push((s.seenMicros - (createdAt.get(name) ?? s.seenMicros)) / 1000);
  }
  progress.line(`jobs: ${ms.length} complete, ${failed} failed`);
  return { jobs: count, concurrency, complete: summarize(ms), failed };
}
