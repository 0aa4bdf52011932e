/** A benchmark step that could not finish (a pool never ready, Runs or Jobs not done in time): what and where to look. */
export class BenchError extends Error {
  override name = "BenchError";
  constructor(
    message: string,
    readonly hint?: string,
  ) {
    super(message);
  }
}
