/**
 * Picking a namespace: those in which you may list Runs (the backend asks the apiserver with
 * SelfSubjectAccessReviews), or a name typed in when you may not list namespaces.
 */

import { useEffect, useState } from "preact/hooks";
import { useLocation } from "preact-iso";
import type { NamespaceList } from "../../shared/types.ts";
import { ErrorBox } from "../components/error-box.tsx";
import { getJson, type RequestFailed } from "../lib/api.ts";

export function useNamespaces(): { list?: NamespaceList; error?: RequestFailed } {
  const [state, setState] = useState<{ list?: NamespaceList; error?: RequestFailed }>({});
  useEffect(() => {
    getJson<NamespaceList>("/api/namespaces").then(
      (list) => setState({ list }),
      (error: RequestFailed) => setState({ error }),
    );
  }, []);
  return state;
}

export function NamespaceForm({ current }: { current?: string }) {
  const loc = useLocation();
  const { list, error } = useNamespaces();
  const [typed, setTyped] = useState("");
  const go = (ns: string) => ns && loc.route(`/ns/${encodeURIComponent(ns)}/runs`);
  return (
    <div class="ns-picker">
      {error ? <ErrorBox error={error} /> : null}
      {list?.items.length ? (
        <label>
          Namespace{" "}
          <select
            aria-label="Namespace"
            value={current ?? ""}
            onChange={(e) => go(e.currentTarget.value)}
            data-testid="ns-select"
          >
            {current && !list.items.includes(current) ? <option value={current}>{current}</option> : null}
            {current ? null : <option value="">choose…</option>}
            {list.items.map((n) => (
              <option key={n} value={n}>
                {n}
              </option>
            ))}
          </select>
        </label>
      ) : null}
      <form
        onSubmit={(e) => {
          e.preventDefault();
          go(typed.trim());
        }}
      >
        <input
          aria-label="Type a namespace"
          placeholder={list?.listForbidden ? "namespace (you may not list them)" : "or type one"}
          value={typed}
          onInput={(e) => setTyped(e.currentTarget.value)}
          data-testid="ns-input"
        />
      </form>
    </div>
  );
}

export function NamespacesView() {
  const { list } = useNamespaces();
  return (
    <section class="card" aria-labelledby="ns-h">
      <h1 id="ns-h">Namespaces</h1>
      {list?.listForbidden ? <p>You may not list namespaces: type the one you work in.</p> : null}
      {list && !list.listForbidden && list.items.length === 0 ? (
        <p>There is no namespace in which you may list Runs.</p>
      ) : null}
      <ul class="ns-list">
        {list?.items.map((n) => (
          <li key={n}>
            <a href={`/ns/${encodeURIComponent(n)}/runs`}>{n}</a>
          </li>
        ))}
      </ul>
      <NamespaceForm />
    </section>
  );
}
