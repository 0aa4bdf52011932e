/**
 * The shell: session check (local mode or a token), the header with the namespace picker, the
 * view links and the theme choice, and one route per view — every view has its own URL.
 */

import { useEffect } from "preact/hooks";
import { LocationProvider, lazy, Route, Router, useLocation } from "preact-iso";
import {
  checkSession,
  lastNamespace,
  probablySignedIn,
  session,
  sessionChecked,
  signOut,
} from "./lib/session.ts";
import { type Theme, theme } from "./lib/theme.ts";
import { NamespaceForm, NamespacesView } from "./views/namespaces-view.tsx";
import { RunsView } from "./views/runs-view.tsx";
import { SignIn } from "./views/sign-in.tsx";

// Loaded on first use: the chart and YAML libraries are not needed for the Runs list.
const RunDetail = lazy(() => import("./views/run-detail.tsx").then((m) => m.RunDetail));
const RuntimesView = lazy(() => import("./views/runtimes-view.tsx").then((m) => m.RuntimesView));
const WorkflowsView = lazy(() => import("./views/workflows-view.tsx").then((m) => m.WorkflowsView));
const WorkflowDetail = lazy(() => import("./views/workflow-detail.tsx").then((m) => m.WorkflowDetail));

function Header({ ns }: { ns?: string }) {
  const s = session.value;
  const loc = useLocation();
  const link = (view: string, label: string) =>
    ns ? (
      <a
        href={`/ns/${encodeURIComponent(ns)}/${view}`}
        aria-current={loc.path.startsWith(`/ns/${encodeURIComponent(ns)}/${view}`) ? "page" : undefined}
      >
        {label}
      </a>
    ) : null;
  return (
    <header class="top">
      <a class="brand" href="/">
        kruntimes
      </a>
      <nav aria-label="Views">
        {link("runs", "Runs")}
        {link("runtimes", "Runtimes")}
        {link("functions", "Functions")}
        {link("sessions", "Sessions")}
        {link("workflows", "Workflows")}
      </nav>
      {s ? <NamespaceForm current={ns} /> : null}
      <span class="spacer" />
      <label>
        <span class="sr-only">Theme</span>
        <select
          aria-label="Theme"
          value={theme.value}
          onChange={(e) => (theme.value = e.currentTarget.value as Theme)}
          data-testid="theme"
        >
          <option value="system">system</option>
          <option value="light">light</option>
          <option value="dark">dark</option>
        </select>
      </label>
      {s ? (
        <span class="who" data-testid="who">
          {s.mode === "kubeconfig" ? "local: " : ""}
          {s.user ?? "signed in"}
        </span>
      ) : null}
      {s?.mode === "token" ? (
        <button
          type="button"
          onClick={() => {
            signOut();
            loc.route("/signin");
          }}
        >
          Sign out
        </button>
      ) : null}
    </header>
  );
}

/** Renders the view once signed in; sends to /signin (and back) otherwise. */
function Guard({ ns, children }: { ns?: string; children: preact.ComponentChildren }) {
  const loc = useLocation();
  useEffect(() => {
    if (sessionChecked.value && !session.value)
      loc.route(`/signin?next=${encodeURIComponent(loc.url)}`, true);
    if (ns) lastNamespace.set(ns);
  }, [sessionChecked.value, session.value, ns]);
  if (!session.value && !(probablySignedIn() && !sessionChecked.value))
    return <p class="muted">Checking your session…</p>;
  return (
    <>
      <Header ns={ns} />
      <main id="main">{children}</main>
    </>
  );
}

const runs = (p: { ns: string }) => (
  <Guard ns={p.ns}>
    <RunsView ns={p.ns} title="Runs" />
  </Guard>
);
const functions = (p: { ns: string }) => (
  <Guard ns={p.ns}>
    <RunsView ns={p.ns} mode="function" title="Function Runs" />
  </Guard>
);
const sessions = (p: { ns: string }) => (
  <Guard ns={p.ns}>
    <RunsView ns={p.ns} mode="session" title="Session Runs" />
  </Guard>
);
const detail = (p: { ns: string; name: string }) => (
  <Guard ns={p.ns}>
    <RunDetail ns={p.ns} name={p.name} />
  </Guard>
);
const runtimes = (p: { ns: string }) => (
  <Guard ns={p.ns}>
    <RuntimesView ns={p.ns} />
  </Guard>
);

const workflows = (p: { ns: string }) => (
  <Guard ns={p.ns}>
    <WorkflowsView ns={p.ns} />
  </Guard>
);
const workflowDetail = (p: { ns: string; name: string }) => (
  <Guard ns={p.ns}>
    <WorkflowDetail ns={p.ns} name={p.name} />
  </Guard>
);

function Home() {
  const loc = useLocation();
  const last = lastNamespace.get();
  useEffect(() => {
    if (last && session.value) loc.route(`/ns/${encodeURIComponent(last)}/runs`, true);
  }, [session.value]);
  return (
    <Guard>
      <NamespacesView />
    </Guard>
  );
}

function SignInPage() {
  return (
    <>
      <Header />
      <main id="main">
        <SignIn />
      </main>
    </>
  );
}

export function App() {
  useEffect(() => {
    void checkSession();
  }, []);
  return (
    <LocationProvider>
      <a class="skip" href="#main">
        Skip to content
      </a>
      <Router>
        <Route path="/signin" component={SignInPage} />
        <Route path="/ns/:ns/runs" component={runs} />
        <Route path="/ns/:ns/runs/:name" component={detail} />
        <Route path="/ns/:ns/runtimes" component={runtimes} />
        <Route path="/ns/:ns/functions" component={functions} />
        <Route path="/ns/:ns/sessions" component={sessions} />
        <Route path="/ns/:ns/workflows" component={workflows} />
        <Route path="/ns/:ns/workflows/:name" component={workflowDetail} />
        <Route default component={Home} />
      </Router>
    </LocationProvider>
  );
}
