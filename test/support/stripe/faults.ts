/** Injected faults: slow answers, 500s, and answers lost after the request was applied. */

import type { FaultSpec } from "./types.js";

interface ActiveFault extends FaultSpec {
  remaining: number;
}

export class Faults {
  private active: ActiveFault[] = [];

  add(spec: FaultSpec): void {
    if (!spec.path) throw new Error("fault: path (a path prefix such as /v1/payment_intents) is required");
    if (!["delay", "500", "drop", "refuse"].includes(spec.kind))
      throw new Error(`fault: unknown kind ${String(spec.kind)}`);
    if (spec.kind === "delay" && !(typeof spec.ms === "number" && spec.ms >= 0))
      throw new Error("fault: delay needs ms");
    if (spec.kind === "refuse" && !spec.refusal?.message)
      throw new Error("fault: refuse needs refusal.message");
    this.active.push({ ...spec, method: spec.method?.toUpperCase(), remaining: spec.times ?? 1 });
  }

  delay(
    method: string,
    path: string,
    ms: number,
    opts: { times?: number; after?: boolean; inFlight?: boolean } = {},
  ): void {
    this.add({ method, path, kind: "delay", ms, ...opts });
  }

  fail(method: string, path: string, times = 1): void {
    this.add({ method, path, kind: "500", times });
  }

  drop(method: string, path: string, times = 1): void {
    this.add({ method, path, kind: "drop", times });
  }

  /** Stripe refuses the request as invalid (a 400 with this param and code), applying nothing. */
  refuse(
    method: string,
    path: string,
    refusal: { message: string; param?: string; code?: string },
    times = 1,
  ): void {
    this.add({ method, path, kind: "refuse", refusal, times });
  }

  /** The faults still armed. */
  list(): FaultSpec[] {
    return this.active.map(({ remaining, ...spec }) => ({ ...spec, times: remaining }));
  }

  clear(): void {
    this.active = [];
  }

  /** Takes (uses up one application of) the first fault matching this request. */
  take(method: string, path: string): FaultSpec | undefined {
    const fault = this.active.find((f) => (!f.method || f.method === method) && path.startsWith(f.path));
    if (!fault) return undefined;
    if (fault.skip) {
      fault.skip -= 1;
      return undefined;
    }
    fault.remaining -= 1;
    if (fault.remaining <= 0) this.active = this.active.filter((f) => f !== fault);
    const { remaining: _remaining, ...spec } = fault;
    return spec;
  }
}
