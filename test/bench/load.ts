import autocannon from "autocannon";

/** The load generator: autocannon with the same settings for every scenario, and its figures. */

export interface LoadSettings {
  /** Measured seconds per scenario. */
  seconds: number;
  /** Unmeasured seconds of the same load first. */
  warmupSeconds: number;
  /** Connections in total (split evenly when a scenario drives several servers). */
  connections: number;
}

export interface LoadTarget {
  /** The server's base URL, e.g. http://127.0.0.1:40123 */
  url: string;
  /** Paths requested (GET) in turn by every connection. */
  paths: string[];
  headers?: Record<string, string>;
  /** Requests with a method and body, sent in turn instead of `paths` when given. */
  requests?: { method: "POST"; path: string; body: string; headers?: Record<string, string> }[];
}

export interface LoadFigures {
  /** Completed requests per second (all instances summed). */
  rps: number;
  /** Latency in milliseconds, from every response's own timing (sub-millisecond precision). */
  p50: number;
  p99: number;
  mean: number;
  requests: number;
  non2xx: number;
  errors: number;
  timeouts: number;
  connections: number;
  seconds: number;
  instances: number;
}

interface OneRun {
  result: autocannon.Result;
  samples: number[];
}

function runOnce(target: LoadTarget, connections: number, seconds: number, keep: boolean): Promise<OneRun> {
  return new Promise((resolve, reject) => {
    const samples: number[] = [];
    const instance = autocannon(
      {
        url: target.url,
        connections,
        duration: seconds,
        pipelining: 1,
        timeout: 10,
        headers: target.headers,
        requests: target.requests ?? target.paths.map((path) => ({ method: "GET" as const, path })),
      },
      (err, result) => (err ? reject(err) : resolve({ result, samples })),
    );
    if (keep) instance.on("response", (_client, _status, _bytes, ms) => void samples.push(ms));
  });
}

function percentile(sorted: Float64Array, p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank];
}

/**
 * Warms up, then measures. Several targets are driven at once (connections split evenly across them)
 * and their figures combined: requests per second summed, latencies pooled.
 */
export async function measure(
  targets: LoadTarget[],
  settings: LoadSettings,
  hooks: { measuring?: () => void; measured?: () => void } = {},
): Promise<LoadFigures> {
  const perTarget = Math.max(1, Math.floor(settings.connections / targets.length));
  if (settings.warmupSeconds > 0)
    await Promise.all(targets.map((t) => runOnce(t, perTarget, settings.warmupSeconds, false)));
  hooks.measuring?.();
  const runs = await Promise.all(targets.map((t) => runOnce(t, perTarget, settings.seconds, true)));
  hooks.measured?.();

  const all = new Float64Array(runs.reduce((n, r) => n + r.samples.length, 0));
  let offset = 0;
  for (const r of runs) {
    all.set(r.samples, offset);
    offset += r.samples.length;
  }
  all.sort();
  let sum = 0;
  for (const v of all) sum += v;

  return {
    rps: runs.reduce((n, r) => n + r.result.requests.total / r.result.duration, 0),
    p50: percentile(all, 50),
    p99: percentile(all, 99),
    mean: all.length ? sum / all.length : Number.NaN,
    requests: runs.reduce((n, r) => n + r.result.requests.total, 0),
    non2xx: runs.reduce((n, r) => n + r.result.non2xx, 0),
    errors: runs.reduce((n, r) => n + r.result.errors, 0),
    timeouts: runs.reduce((n, r) => n + r.result.timeouts, 0),
    connections: perTarget * targets.length,
    seconds: settings.seconds,
    instances: targets.length,
  };
}
