/** Paste a bearer token. It is kept in this tab's sessionStorage only and sent with each request. */

import { useState } from "preact/hooks";
import { useLocation } from "preact-iso";
import { ErrorBox } from "../components/error-box.tsx";
import type { RequestFailed } from "../lib/api.ts";
import { signIn } from "../lib/session.ts";

export function SignIn() {
  const [token, setToken] = useState("");
  const [error, setError] = useState<RequestFailed | undefined>();
  const [busy, setBusy] = useState(false);
  const loc = useLocation();
  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    const failed = await signIn(token);
    setBusy(false);
    if (failed) setError(failed);
    else loc.route(loc.query.next?.startsWith("/") ? loc.query.next : "/", true);
  };
  return (
    <section class="sign-in card" aria-labelledby="signin-h">
      <h1 id="signin-h">Sign in</h1>
      <p>
        Paste a Kubernetes bearer token. Every request the dashboard makes uses it, so you see exactly what
        your RBAC allows. It stays in this browser tab (sessionStorage) and is never stored by the server.
      </p>
      <p class="muted">
        For a ServiceAccount: <code>kubectl create token &lt;serviceaccount&gt; -n &lt;namespace&gt;</code>.
        Locally, <code>krt dashboard</code> uses your kubeconfig instead.
      </p>
      <form onSubmit={submit}>
        <label for="token">Token</label>
        <textarea
          id="token"
          rows={5}
          value={token}
          onInput={(e) => setToken(e.currentTarget.value)}
          autoComplete="off"
          spellcheck={false}
        />
        <button type="submit" disabled={busy || !token.trim()}>
          {busy ? "Checking…" : "Sign in"}
        </button>
      </form>
      {error ? <ErrorBox error={error} /> : null}
    </section>
  );
}
