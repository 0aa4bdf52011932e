/**
 * The latency breakdown as one horizontal stacked bar (Chart.js, only the bar pieces registered),
 * with the same numbers as a table beside it for screen readers and copy-paste.
 */
import { BarController, BarElement, CategoryScale, Chart, Legend, LinearScale, Tooltip } from "chart.js";
import { useEffect, useRef } from "preact/hooks";
import { humanMicros } from "../lib/format.ts";
import { theme } from "../lib/theme.ts";
import type { Stage } from "../lib/timing.ts";

Chart.register(BarController, BarElement, CategoryScale, LinearScale, Tooltip, Legend);

/** Colour-blind-safe (Okabe–Ito) and readable on both themes. */
const COLORS: Record<Stage["stage"], string> = {
  schedule: "#E69F00",
  dispatch: "#56B4E9",
  execution: "#009E73",
  report: "#CC79A7",
};

export function TimingChart({ stages }: { stages: Stage[] }) {
  const canvas = useRef<HTMLCanvasElement>(null);
  const chart = useRef<Chart | null>(null);
  // Axis and legend colours come from the theme: a theme change draws the chart anew.
  const mode = theme.value;
  useEffect(() => {
    chart.current?.destroy();
    chart.current = null;
  }, [mode]);
  useEffect(() => {
    if (!canvas.current) return;
    const text = getComputedStyle(document.documentElement).getPropertyValue("--fg").trim() || "#222";
    const data = {
      labels: ["current attempt"],
      datasets: stages.map((s) => ({
        label: s.stage,
        data: [s.micros / 1000],
        backgroundColor: COLORS[s.stage],
      })),
    };
    if (chart.current) {
      chart.current.data = data;
      chart.current.update("none");
      return;
    }
    chart.current = new Chart(canvas.current, {
      type: "bar",
      data,
      options: {
        indexAxis: "y",
        animation: false,
        maintainAspectRatio: false,
        responsive: true,
        scales: {
          x: {
            stacked: true,
            title: { display: true, text: "milliseconds", color: text },
            ticks: { color: text },
          },
          y: { stacked: true, display: false },
        },
        plugins: {
          legend: { labels: { color: text } },
          tooltip: {
            callbacks: {
              label: (c) => `${c.dataset.label}: ${humanMicros(Math.round((c.raw as number) * 1000))}`,
            },
          },
        },
      },
    });
  }, [stages, mode]);
  useEffect(() => () => chart.current?.destroy(), []);
  if (stages.length === 0) return <p class="muted">No timing yet: the attempt has not been scheduled.</p>;
  return (
    <div class="timing">
      <div class="timing-canvas">
        <canvas
          ref={canvas}
          role="img"
          aria-label="latency breakdown of the current attempt"
          data-testid="timing-chart"
        />
      </div>
      <table class="kv">
        <tbody>
          {stages.map((s) => (
            <tr key={s.stage}>
              <th scope="row">
                <span class="swatch" style={{ background: COLORS[s.stage] }} /> {s.stage}
              </th>
              <td>{humanMicros(s.micros)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
