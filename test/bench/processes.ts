import { type ChildProcess, spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

/** Server child processes: started with PORT=0, port read from their stdout, always stopped at the end. */

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");

export interface ServerProcess {
  name: string;
  port: number;
  url: string;
  child: ChildProcess;
  /** The last few KB of stdout and stderr, for error reports. */
  output(): string;
  stop(): Promise<void>;
}

const running = new Set<ServerProcess>();

const LISTENING = /listening on http:\/\/[^\s:/]+:(\d+)/;

/**
 * Runs `script` (relative to the repository root) under tsx, in one node process, and waits until it listens.
 * With BENCH_CPU_PROFILE=<dir>, each server writes a V8 CPU profile (.cpuprofile, for Chrome DevTools or
 * speedscope) into that folder when it stops; profiling slows the servers, so such a run's figures are not
 * comparable with others.
 */
export function startServer(
  name: string,
  script: string,
  env: Record<string, string>,
  timeoutMs = 30_000,
): Promise<ServerProcess> {
  const profileDir = process.env.BENCH_CPU_PROFILE;
  const profile = profileDir ? ["--cpu-prof", `--cpu-prof-dir=${path.resolve(profileDir)}`] : [];
  // `node --import tsx` rather than `npx tsx`: a single process whose pid is the server's own.
  const child = spawn(process.execPath, [...profile, "--import", "tsx", script], {
    cwd: ROOT,
    env: { ...process.env, ...env, PORT: "0", HOST: "127.0.0.1" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let tail = "";
  const keep = (chunk: Buffer) => {
    tail = (tail + chunk.toString("utf8")).slice(-8000);
  };
  child.stdout?.on("data", keep);
  child.stderr?.on("data", keep);

  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const proc: ServerProcess = {
    name,
    port: 0,
    url: "",
    child,
    output: () => tail,
    stop: async () => {
      running.delete(proc);
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), 3000);
      await exited;
      clearTimeout(timer);
    },
  };
  running.add(proc);

  return new Promise<ServerProcess>((resolve, reject) => {
    let lineBuffer = "";
    const fail = (why: string) => {
      clearTimeout(timer);
      void proc.stop();
      reject(new Error(`${name} ${why}. Its output:\n${tail.trim() || "(none)"}`));
    };
    const timer = setTimeout(() => fail(`did not start listening within ${timeoutMs / 1000} s`), timeoutMs);
    const onData = (chunk: Buffer) => {
      lineBuffer += chunk.toString("utf8");
      const match = LISTENING.exec(lineBuffer);
      if (!match) return;
      clearTimeout(timer);
      child.stdout?.off("data", onData);
      child.off("exit", onExit);
      proc.port = Number(match[1]);
      proc.url = `http://127.0.0.1:${proc.port}`;
      resolve(proc);
    };
    const onExit = (code: number | null, signal: string | null) =>
      fail(`exited before listening (code ${code}, signal ${signal})`);
    child.stdout?.on("data", onData);
    child.once("exit", onExit);
  });
}

/** Stops every server still running (in parallel; each gets SIGTERM, then SIGKILL after 3 s). */
export async function stopAllServers(): Promise<void> {
  await Promise.all([...running].map((p) => p.stop()));
}

/** Synchronous last resort for process exit: SIGKILL whatever is left. */
export function killAllServersNow(): void {
  for (const p of running) {
    if (p.child.exitCode === null && p.child.signalCode === null) p.child.kill("SIGKILL");
  }
  running.clear();
}

/**
 * CPU time (user + system, seconds) a process has used so far, from /proc; null where /proc is
 * missing. Linux reports it in clock ticks, 100 per second on every mainstream kernel.
 */
export function cpuSeconds(pid: number | undefined): number | null {
  if (pid === undefined) return null;
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
    // Fields after the parenthesised command name; utime and stime are fields 14 and 15.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return null;
  }
}
