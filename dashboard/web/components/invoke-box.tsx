/** Calls a function Run through the gateway (via the backend, with the signed-in token). */
import { useState } from "preact/hooks";
import { post } from "../lib/api.ts";

export function InvokeBox({ base, ready }: { base: string; ready: boolean }) {
  const [body, setBody] = useState('{"name": "world"}');
  const [type, setType] = useState("application/json");
  const [result, setResult] = useState<{ status: number; id?: string; text: string; ms: number } | null>(
    null,
  );
  const [busy, setBusy] = useState(false);
  const invoke = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    const t0 = performance.now();
    try {
      const res = await post(`${base}/invoke`, body, type);
      setResult({
        status: res.status,
        id: res.headers.get("x-kruntimes-invocation-id") ?? undefined,
        text: await res.text(),
        ms: Math.round(performance.now() - t0),
      });
    } catch (err) {
      setResult({ status: 0, text: String(err), ms: Math.round(performance.now() - t0) });
    } finally {
      setBusy(false);
    }
  };
  return (
    <section aria-labelledby="invoke-h">
      <h2 id="invoke-h">Invoke</h2>
      {ready ? null : (
        <p class="muted">The function is not Ready; the gateway will refuse calls until it is.</p>
      )}
      <form class="invoke" onSubmit={invoke}>
        <label>
          Content type <input value={type} onInput={(e) => setType(e.currentTarget.value)} />
        </label>
        <label class="wide">
          Body
          <textarea
            rows={4}
            value={body}
            onInput={(e) => setBody(e.currentTarget.value)}
            data-testid="invoke-body"
          />
        </label>
        <button type="submit" disabled={busy}>
          {busy ? "Invoking…" : "Invoke"}
        </button>
      </form>
      {result ? (
        <div class="invoke-result" data-testid="invoke-result" data-status={result.status}>
          <div class="muted">
            HTTP {result.status} · {result.ms} ms{result.id ? ` · invocation ${result.id}` : ""}
          </div>
          <pre>{result.text}</pre>
        </div>
      ) : null}
    </section>
  );
}
