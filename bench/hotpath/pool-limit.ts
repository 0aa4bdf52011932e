/** Runs `task(i)` for i in [0, count) with at most `concurrency` in flight (the create workers). */
export async function inParallel(
  count: number,
  concurrency: number,
  task: (i: number) => Promise<void>,
  signal?: AbortSignal,
): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < count && !signal?.aborted) {
      const i = next++;
      await task(i);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(concurrency, count)) }, worker));
  if (signal?.aborted) throw signal.reason ?? new Error("aborted");
}
