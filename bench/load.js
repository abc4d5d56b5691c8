// A small closed-loop load generator over undici Pools: `connections` loops, each sending its next
// request when the previous answer is in, for a fixed time (or a fixed number of requests). Loopback only.
import { Pool } from 'undici';

/**
 * @param {string} url
 * @param {{ method?: string, headers?: Record<string,string>, body?: string | (() => string), connections?: number, durationMs?: number, requests?: number, warmupMs?: number, expect?: number, onStart?: () => void }} options
 *   `requests`: the measured run sends that many, whatever the time they take (instead of `durationMs`).
 */
export async function load(url, options = {}) {
  const target = new URL(url);
  if (!['127.0.0.1', 'localhost', '[::1]'].includes(target.hostname))
    throw new Error(`load is for loopback only, not ${target.hostname}`);
  const connections = options.connections ?? 16;
  const pool = new Pool(target.origin, { connections, keepAliveTimeout: 30_000 });
  const path = `${target.pathname}${target.search}`;
  const expected = options.expect ?? 200;
  const once = async () => {
    const body = typeof options.body === 'function' ? options.body() : options.body;
    const started = performance.now();
    const response = await pool.request({
      path,
      method: options.method ?? 'GET',
      headers: options.headers ?? {},
      body,
    });
    await response.body.dump();
    if (response.statusCode !== expected)
      throw new Error(`${options.method ?? 'GET'} ${url} answered ${response.statusCode}`);
    return performance.now() - started;
  };
  const run = async (durationMs, latencies, requests) => {
    const deadline = performance.now() + durationMs;
    let sent = 0;
    const more = requests === undefined ? () => performance.now() < deadline : () => sent++ < requests;
    await Promise.all(
      Array.from({ length: connections }, async () => {
        while (more()) latencies?.push(await once());
      }),
    );
  };
  await run(options.warmupMs ?? 500);
  options.onStart?.();
  const latencies = [];
  const started = performance.now();
  await run(options.durationMs ?? 3000, latencies, options.requests);
  const seconds = (performance.now() - started) / 1000;
  await pool.close();
  latencies.sort((a, b) => a - b);
  return {
    rps: latencies.length / seconds,
    p50: percentile(latencies, 0.5),
    p99: percentile(latencies, 0.99),
    count: latencies.length,
  };
}

export function percentile(sorted, p) {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))];
}

export function median(values) {
  return percentile(
    [...values].sort((a, b) => a - b),
    0.5,
  );
}
