import crypto from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import { isoAt } from "../../shared/time.js";
import type { Store } from "./database.js";

/**
 * Which server processes are alive: each keeps a row in `processes` and moves its `alive_until` on every
 * few seconds (a heartbeat). Claims name their process (claim.ts), so once a process's row lapses or is
 * gone, whatever it held is free for the others at once, however long its leases were.
 *
 * A process alive at `alive_until` promises to beat again before then: `livenessMs` (30 s) after each beat,
 * beating every third of it. A process that stops cleanly deletes its row (its work is free at once); one
 * killed outright is known dead when its row lapses, or sooner by a process on the same machine (same host
 * boot and pid namespace), which sees that its pid is gone: a server restarted after a crash takes the
 * dead one's work over as it starts.
 */

export const DEFAULT_LIVENESS_MS = 30_000;

/** Rows of processes dead this long are deleted (they no longer matter to any claim). */
const FORGET_AFTER_MS = 24 * 3_600_000;

export interface HeartbeatOptions {
  /** How long the process counts as alive after each beat. */
  livenessMs?: number;
  /** Time between beats; default a third of `livenessMs`. */
  beatMs?: number;
  /** The clock of heartbeats (the wall clock); claims compare their leases' clock with it. */
  wallClock?: () => number;
  /** Host boot and pid namespace (Linux); null turns off recognizing dead processes by their pid. */
  machine?: string | null;
  onError?: (err: unknown) => void;
}

/** The heartbeats running in this process (a test may run several): the others are not taken for dead. */
const ownIds = new Set<string>();

/** This process's heartbeat row. `start` registers it; `stop` deletes it. */
export class ProcessHeartbeat {
  readonly id = `proc_${crypto.randomUUID()}`;
  readonly livenessMs: number;
  private readonly beatMs: number;
  private readonly wallClock: () => number;
  private readonly machine: string | null;
  private readonly onError: (err: unknown) => void;
  private readonly startedAt: string;
  private timer: NodeJS.Timeout | undefined;
  private beating: Promise<void> | undefined;
  private stopped = false;

  constructor(
    private readonly store: Store,
    opts: HeartbeatOptions = {},
  ) {
    this.livenessMs = opts.livenessMs ?? DEFAULT_LIVENESS_MS;
    this.beatMs = opts.beatMs ?? Math.floor(this.livenessMs / 3);
    if (!(this.beatMs > 0 && this.beatMs < this.livenessMs))
      throw new RangeError("beatMs must be positive and shorter than livenessMs");
    this.wallClock = opts.wallClock ?? Date.now;
    this.machine = opts.machine === undefined ? machineKey() : opts.machine;
    this.onError =
      opts.onError ??
      ((err) => console.error(`Almoner heartbeat: ${err instanceof Error ? err.message : String(err)}`));
    this.startedAt = isoAt(this.wallClock());
  }

  /** Writes the first beat (a failure rejects: the database is unreachable), then beats on a timer. */
  async start(): Promise<void> {
    ownIds.add(this.id);
    await this.beat();
    this.schedule();
  }

  /** Moves `alive_until` on, and forgets the processes known to be dead. */
  beat(): Promise<void> {
    this.beating ??= this.writeBeat().finally(() => {
      this.beating = undefined;
    });
    return this.beating;
  }

  /** Stops beating and deletes the row, which frees this process's claims at once. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    this.timer = undefined;
    await this.beating?.catch(() => {});
    ownIds.delete(this.id);
    await this.store.db.deleteFrom("processes").where("id", "=", this.id).execute();
  }

  private schedule(): void {
    if (this.stopped) return;
    // The timer must not keep the process alive on its own.
    this.timer = setTimeout(() => {
      this.beat()
        .catch((err) => this.onError(err))
        .finally(() => this.schedule());
    }, this.beatMs).unref();
  }

  private async writeBeat(): Promise<void> {
    if (this.stopped) return;
    const nowMs = this.wallClock();
    const nowIso = isoAt(nowMs);
    const aliveUntil = isoAt(nowMs + this.livenessMs);
    const db = this.store.db;
    await db
      .insertInto("processes")
      .values({
        id: this.id,
        host: os.hostname(),
        pid: process.pid,
        machine: this.machine,
        started_at: this.startedAt,
        heartbeat_at: nowIso,
        alive_until: aliveUntil,
      })
      .onConflict((oc) => oc.column("id").doUpdateSet({ heartbeat_at: nowIso, alive_until: aliveUntil }))
      .execute();
    const dead: string[] = [];
    if (this.machine !== null) {
      const neighbours = await db
        .selectFrom("processes")
        .select(["id", "pid"])
        .where("machine", "=", this.machine)
        .where("id", "!=", this.id)
        .where("alive_until", ">", nowIso)
        .execute();
      for (const n of neighbours) if (!ownIds.has(n.id) && !pidAlive(Number(n.pid))) dead.push(n.id);
    }
    await db
      .deleteFrom("processes")
      .where((eb) =>
        eb.or([
          eb("alive_until", "<", isoAt(nowMs - FORGET_AFTER_MS)),
          ...(dead.length ? [eb("id", "in", dead)] : []),
        ]),
      )
      .execute();
  }
}

/** Whether a process with this pid runs in this pid namespace (another user's counts). */
function pidAlive(pid: number): boolean {
  if (pid === process.pid) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

/**
 * The host's boot and this process's pid namespace, on Linux: processes that share it see each other's
 * pids (a pid seen dead is dead). Null elsewhere.
 */
function machineKey(): string | null {
  try {
    const boot = fs.readFileSync("/proc/sys/kernel/random/boot_id", "utf8").trim();
    const namespace = fs.readlinkSync("/proc/self/ns/pid");
    return boot && namespace ? `${boot}/${namespace}` : null;
  } catch {
    return null;
  }
}
