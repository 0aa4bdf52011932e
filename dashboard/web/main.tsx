/** Entry of the web UI: theme first (no flash), then the app. */
import "./lib/theme.ts";
import { render } from "preact";
import { App } from "./app.tsx";

render(<App />, document.getElementById("app") as HTMLElement);
