/** An API error in the user's terms: a 403 reads "you may not list runs in namespace X". */
import type { RequestFailed } from "../lib/api.ts";

export function ErrorBox({ error }: { error: RequestFailed }) {
  const forbidden = error.status === 403;
  return (
    <div class={`error-box ${forbidden ? "forbidden" : ""}`} role="alert" data-status={error.status}>
      <strong>{forbidden ? "Not allowed: " : "Error: "}</strong>
      {error.message}
      {error.error?.next ? <div class="next">{error.error.next}</div> : null}
    </div>
  );
}
