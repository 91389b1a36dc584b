import { beforeEach, describe, expect, it } from "vitest";
import {
  type CardDetails,
  type ChargeInput,
  type ChargeResult,
  type PaymentMethod,
  type PaymentProcessor,
  ProcessorError,
} from "../../server/processors/port.js";
import { memoryLedger } from "../../server/processors/sandbox/ledger.js";
import {
  detectBrand,
  luhnValid,
  routingNumberValid,
  SANDBOX_TEST_CARDS,
  SandboxProcessor,
} from "../../server/processors/sandbox/processor.js";

const SECRET = "test-secret-0123456789abcdef";
const START = Date.UTC(2026, 3, 15, 18, 32, 0);

let clock = START;
const now = () => clock;
let processor: PaymentProcessor;

beforeEach(() => {
  clock = START;
  processor = new SandboxProcessor({ secret: SECRET, now });
});

const card = (number: string, extra: Partial<CardDetails> = {}): CardDetails => ({
  type: "card",
  number,
  expMonth: 12,
  expYear: 2030,
  cvc: number.replace(/\D/g, "").length === 15 ? "1234" : "123",
  ...extra,
});

const bank = (accountNumber: string, routingNumber = "110000000") => ({
  type: "bank" as const,
  routingNumber,
  accountNumber,
  accountHolder: "Ada Lovelace",
});

async function tokenize(p: PaymentProcessor, input: Parameters<PaymentProcessor["createPaymentMethod"]>[0]) {
  const result = await p.createPaymentMethod(input);
  if (!result.ok) throw new Error(`tokenization failed: ${result.code}`);
  return result.method;
}

let keySeq = 0;
const chargeInput = (method: PaymentMethod | string, extra: Partial<ChargeInput> = {}): ChargeInput => ({
  amountCents: 2500,
  currency: "USD",
  paymentMethod: typeof method === "string" ? method : method.token,
  idempotencyKey: `key-${++keySeq}`,
  description: "Donation to Spring Appeal",
  offSession: false,
  ...extra,
});

async function reusableMethod(p: PaymentProcessor, number: string): Promise<PaymentMethod> {
  const setup = await p.setupForFutureUse({ paymentMethod: (await tokenize(p, card(number))).token });
  if (setup.status !== "succeeded") throw new Error(`setup failed: ${setup.status}`);
  return setup.method;
}

/** Every string inside a value, plus the decoded payload of every token and payment id. */
function haystack(values: unknown[]): string {
  const json = JSON.stringify(values, (_k, v) => (v instanceof Error ? { message: v.message } : v));
  const decoded = [...json.matchAll(/(?:pm|pi|re)_sandbox_([A-Za-z0-9_-]+)/g)].map((m) =>
    Buffer.from(m[1], "base64url").toString("latin1"),
  );
  return [json, ...decoded].join("\n");
}

describe("sandbox test cards", () => {
  const cases: [string, string, string, ChargeResult["status"], string | undefined][] = [
    ["4242424242424242", "visa", "4242", "succeeded", undefined],
    ["5555555555554444", "mastercard", "4444", "succeeded", undefined],
    ["378282246310005", "amex", "0005", "succeeded", undefined],
    ["6011111111111117", "discover", "1117", "succeeded", undefined],
    ["2223003122003222", "mastercard", "3222", "succeeded", undefined],
    ["4000000000000002", "visa", "0002", "failed", "card_declined"],
    ["4000000000009995", "visa", "9995", "failed", "insufficient_funds"],
    ["4000000000000069", "visa", "0069", "failed", "expired_card"],
    ["4000000000000119", "visa", "0119", "failed", "processing_error"],
    ["4000000000000341", "visa", "0341", "failed", "card_declined"],
  ];

  it.each(cases)("%s is %s ending %s and the charge %s (%s)", async (number, brand, last4, status, code) => {
    const method = await tokenize(processor, card(number));
    expect(method).toMatchObject({
      type: "card",
      brand,
      last4,
      expMonth: 12,
      expYear: 2030,
      reusable: false,
    });
    expect(method.token).toMatch(/^pm_sandbox_/);
    const result = await processor.charge(chargeInput(method));
    expect(result.status).toBe(status);
    if (result.status === "failed") {
      expect(result.failureCode).toBe(code);
      expect(result.failureMessage).toMatch(/^[A-Z][^_]+\.$/); // a sentence for the donor, not a code
      expect(result.processorPaymentId).toMatch(/^pi_sandbox_/);
      expect(result.method?.fingerprint).toBe(method.fingerprint);
      const lookup = await processor.retrievePayment(result.processorPaymentId as string);
      expect(lookup).toMatchObject({ status: "failed", failureCode: code, amountCents: 2500 });
    } else {
      expect(result.processorPaymentId).toMatch(/^pi_sandbox_/);
      const lookup = await processor.retrievePayment(result.processorPaymentId);
      expect(lookup).toMatchObject({
        status: "succeeded",
        amountCents: 2500,
        currency: "USD",
        refundedCents: 0,
      });
    }
  });

  it("gives the decline its donor-facing message", async () => {
    const result = await processor.charge(chargeInput(await tokenize(processor, card("4000000000000002"))));
    expect(result).toMatchObject({
      status: "failed",
      failureCode: "card_declined",
      failureMessage: "Your card was declined. Try another card.",
    });
  });

  it("every listed test number passes the Luhn check", () => {
    for (const number of Object.keys(SANDBOX_TEST_CARDS)) expect(luhnValid(number), number).toBe(true);
  });

  it("detects brands by prefix", () => {
    expect(detectBrand("4111111111111111")).toBe("visa");
    expect(detectBrand("5100000000000000")).toBe("mastercard");
    expect(detectBrand("5599999999999999")).toBe("mastercard");
    expect(detectBrand("2221000000000000")).toBe("mastercard");
    expect(detectBrand("2720990000000000")).toBe("mastercard");
    expect(detectBrand("2721000000000000")).toBe("unknown");
    expect(detectBrand("5600000000000000")).toBe("unknown");
    expect(detectBrand("340000000000000")).toBe("amex");
    expect(detectBrand("370000000000000")).toBe("amex");
    expect(detectBrand("360000000000000")).toBe("unknown");
    expect(detectBrand("6011000000000000")).toBe("discover");
    expect(detectBrand("6500000000000000")).toBe("discover");
    expect(detectBrand("6200000000000000")).toBe("unknown");
  });

  it("accepts numbers typed with spaces or dashes", async () => {
    const plain = await tokenize(processor, card("4242424242424242"));
    for (const typed of [
      "4242 4242 4242 4242",
      "4242-4242-4242-4242",
      " 4242 4242-4242 4242 ",
      "3782 822463 10005",
    ]) {
      const result = await processor.createPaymentMethod(card(typed));
      expect(result.ok, typed).toBe(true);
    }
    const spaced = await tokenize(processor, card("4242 4242 4242 4242"));
    expect(spaced).toMatchObject({ brand: "visa", last4: "4242", fingerprint: plain.fingerprint });
  });

  it("rejects numbers that fail the Luhn check or are not numbers", async () => {
    for (const number of [
      "4242424242424241",
      "4000000000000001",
      "1234",
      "4242x4242424242424",
      "",
      "42424242424242424242",
    ]) {
      const result = await processor.createPaymentMethod(card(number));
      expect(result, number).toMatchObject({ ok: false, code: "invalid_number" });
    }
  });

  it("refuses a real-looking card that is not a test card", async () => {
    expect(luhnValid("4111111111111111")).toBe(true);
    const result = await processor.createPaymentMethod(card("4111111111111111"));
    expect(result).toMatchObject({ ok: false, code: "card_declined" });
    if (!result.ok) expect(result.message).toContain("4242 4242 4242 4242");
  });

  it("rejects an expiry in the past, an impossible month or one too far ahead", async () => {
    // START is April 2026: March 2026 is past, April 2026 is still good.
    expect(
      await processor.createPaymentMethod(card("4242424242424242", { expMonth: 3, expYear: 2026 })),
    ).toMatchObject({ ok: false, code: "invalid_expiry" });
    expect(
      await processor.createPaymentMethod(card("4242424242424242", { expMonth: 12, expYear: 2025 })),
    ).toMatchObject({ ok: false, code: "invalid_expiry" });
    expect(
      (await processor.createPaymentMethod(card("4242424242424242", { expMonth: 4, expYear: 2026 }))).ok,
    ).toBe(true);
    for (const [expMonth, expYear] of [
      [0, 2030],
      [13, 2030],
      [1.5, 2030],
      [6, 2099],
    ]) {
      expect(
        await processor.createPaymentMethod(card("4242424242424242", { expMonth, expYear })),
      ).toMatchObject({
        ok: false,
        code: "invalid_expiry",
      });
    }
    const twoDigit = await tokenize(processor, card("4242424242424242", { expMonth: 7, expYear: 31 }));
    expect(twoDigit).toMatchObject({ expMonth: 7, expYear: 2031 });
  });

  it("wants 3 CVC digits, 4 for Amex", async () => {
    expect((await processor.createPaymentMethod(card("4242424242424242", { cvc: "123" }))).ok).toBe(true);
    expect((await processor.createPaymentMethod(card("378282246310005", { cvc: "1234" }))).ok).toBe(true);
    for (const [number, cvc] of [
      ["4242424242424242", "1234"],
      ["4242424242424242", "12"],
      ["4242424242424242", "12a"],
      ["378282246310005", "123"],
    ]) {
      expect(await processor.createPaymentMethod(card(number, { cvc })), `${number} ${cvc}`).toMatchObject({
        ok: false,
        code: "invalid_cvc",
      });
    }
  });
});

describe("sandbox bank accounts", () => {
  it("validates routing number, account and holder", async () => {
    expect(routingNumberValid("110000000")).toBe(true);
    expect(routingNumberValid("110000001")).toBe(false);
    expect(await processor.createPaymentMethod(bank("000123456789", "11000000"))).toMatchObject({
      ok: false,
      code: "invalid_routing",
    });
    expect(await processor.createPaymentMethod(bank("000123456789", "110000001"))).toMatchObject({
      ok: false,
      code: "invalid_routing",
    });
    // A valid routing number that is not the test bank, and other accounts at the test bank.
    expect(await processor.createPaymentMethod(bank("000123456789", "021000021"))).toMatchObject({
      ok: false,
      code: "invalid_account",
    });
    for (const account of ["000123456788", "12", "abc"]) {
      expect(await processor.createPaymentMethod(bank(account)), account).toMatchObject({
        ok: false,
        code: "invalid_account",
      });
    }
    expect(
      await processor.createPaymentMethod({ ...bank("000123456789"), accountHolder: "  " }),
    ).toMatchObject({
      ok: false,
      code: "invalid_account_holder",
    });
  });

  it("is pending, then succeeds once the settle delay has passed, and not before", async () => {
    const method = await tokenize(processor, bank("000123456789"));
    expect(method).toMatchObject({ type: "bank", last4: "6789", reusable: false });
    expect(method.brand).toBeUndefined();
    const result = await processor.charge(chargeInput(method));
    expect(result.status).toBe("pending");
    const id = result.processorPaymentId as string;
    expect((await processor.retrievePayment(id))?.status).toBe("pending");
    clock = START + 2 * 60 * 1000 - 1;
    expect((await processor.retrievePayment(id))?.status).toBe("pending");
    clock = START + 2 * 60 * 1000;
    expect(await processor.retrievePayment(id)).toMatchObject({ status: "succeeded", amountCents: 2500 });
  });

  it("settles the failing account as failed with insufficient funds", async () => {
    const method = await tokenize(processor, bank("0001-1111-1116"));
    const result = await processor.charge(chargeInput(method));
    expect(result.status).toBe("pending");
    const id = result.processorPaymentId as string;
    clock = START + 60_000;
    expect((await processor.retrievePayment(id))?.status).toBe("pending");
    clock = START + 120_000;
    const lookup = await processor.retrievePayment(id);
    expect(lookup).toMatchObject({ status: "failed", failureCode: "insufficient_funds" });
    expect(lookup?.failureMessage).toMatch(/bank account/);
  });

  it("uses the configured settle delay", async () => {
    const quick = new SandboxProcessor({ secret: SECRET, now, bankSettleMs: 5000 });
    const result = await quick.charge(chargeInput(await tokenize(quick, bank("000123456789"))));
    clock = START + 4999;
    expect((await quick.retrievePayment(result.processorPaymentId as string))?.status).toBe("pending");
    clock = START + 5000;
    expect((await quick.retrievePayment(result.processorPaymentId as string))?.status).toBe("succeeded");
  });
});

describe("idempotency", () => {
  it("returns the first result for the same key without charging again", async () => {
    const method = await tokenize(processor, bank("000123456789"));
    const input = chargeInput(method, { idempotencyKey: "checkout-1" });
    const first = await processor.charge(input);
    clock = START + 10 * 60 * 1000;
    const again = await processor.charge(input);
    // A second charge would have a new id (and a later creation time).
    expect(again).toEqual(first);
    expect((await processor.retrievePayment(first.processorPaymentId as string))?.createdAt).toBe(START);
    const other = await processor.charge({ ...input, idempotencyKey: "checkout-2" });
    expect(other.processorPaymentId).not.toBe(first.processorPaymentId);
  });

  it("gives concurrent requests with one key one payment", async () => {
    const input = chargeInput(await tokenize(processor, card("4242424242424242")));
    const results = await Promise.all([1, 2, 3, 4, 5].map(() => processor.charge(input)));
    expect(new Set(results.map((r) => r.processorPaymentId)).size).toBe(1);
  });

  it("replays a decline too, and refuses the key for a different charge", async () => {
    const declined = await tokenize(processor, card("4000000000000002"));
    const input = chargeInput(declined, { idempotencyKey: "retry-me" });
    const first = await processor.charge(input);
    expect(await processor.charge(input)).toEqual(first);
    const err = await processor.charge({ ...input, amountCents: 2600 }).catch((e) => e);
    expect(err).toBeInstanceOf(ProcessorError);
    expect(err.code).toBe("idempotency_key_reused");
  });

  it("throws ProcessorError for a caller's mistakes", async () => {
    const method = await tokenize(processor, card("4242424242424242"));
    for (const bad of [
      { amountCents: 0 },
      { amountCents: -5 },
      { amountCents: 12.5 },
      { currency: "XYZ" }, // not a currency the sandbox takes
      { idempotencyKey: "" },
      { idempotencyKey: "k".repeat(256) },
    ]) {
      const err = await processor.charge(chargeInput(method, bad)).catch((e) => e);
      expect(err, JSON.stringify(bad)).toBeInstanceOf(ProcessorError);
      expect(err.code).toBe("invalid_request");
    }
    expect(() => new SandboxProcessor({ secret: "short" })).toThrow(ProcessorError);
  });
});

describe("tokens and payment ids are signed", () => {
  it("refuses a tampered token", async () => {
    const method = await tokenize(processor, card("4000000000000002"));
    const [body, mac] = method.token.slice("pm_sandbox_".length).split(".");
    const payload = JSON.parse(Buffer.from(body, "base64url").toString("utf8"));
    expect(payload.x).toBe("decline");
    const forgedBody = Buffer.from(JSON.stringify({ ...payload, x: "succeed", r: 1 })).toString("base64url");
    const flipped = `${mac.slice(0, -2)}${mac.at(-2) === "A" ? "B" : "A"}${mac.at(-1)}`;
    const tampered = [
      `pm_sandbox_${forgedBody}.${mac}`,
      `pm_sandbox_${body}.${flipped}`,
      `pm_sandbox_${body}`,
      `pm_sandbox_${body}.${mac}.x`,
      method.token.replace("pm_sandbox_", "pm_other_"),
      "pm_sandbox_",
      "",
    ];
    for (const token of tampered) {
      expect(await processor.retrievePaymentMethod(token), token).toBeNull();
      expect(await processor.charge(chargeInput(token)), token).toMatchObject({
        status: "failed",
        failureCode: "invalid_payment_method",
        processorPaymentId: null,
        method: null,
      });
      expect(await processor.setupForFutureUse({ paymentMethod: token })).toMatchObject({
        status: "failed",
        failureCode: "invalid_payment_method",
      });
    }
    expect(await processor.retrievePaymentMethod(method.token)).toEqual(method);
  });

  it("refuses tokens and payment ids made under another secret", async () => {
    const other = new SandboxProcessor({ secret: "another-secret-abcdef012345", now });
    const method = await tokenize(other, card("4242424242424242"));
    const paid = await other.charge(chargeInput(method));
    expect(await other.retrievePaymentMethod(method.token)).toEqual(method);
    expect(await processor.retrievePaymentMethod(method.token)).toBeNull();
    expect((await processor.charge(chargeInput(method))).status).toBe("failed");
    expect(await processor.retrievePayment(paid.processorPaymentId as string)).toBeNull();
    expect(await processor.refund({ processorPaymentId: paid.processorPaymentId as string })).toMatchObject({
      ok: false,
      code: "unknown_payment",
    });
    // A token is not a payment id, nor the other way round.
    expect(await other.retrievePayment(method.token)).toBeNull();
    expect(await other.retrievePaymentMethod(paid.processorPaymentId as string)).toBeNull();
  });

  it("keeps working after a restart and in another process with the same secret", async () => {
    const saved = await reusableMethod(processor, "4242424242424242");
    const pending = await processor.charge(chargeInput(await tokenize(processor, bank("000123456789"))));
    const restarted = new SandboxProcessor({ secret: SECRET, now });
    expect(await restarted.retrievePaymentMethod(saved.token)).toEqual(saved);
    expect((await restarted.charge(chargeInput(saved, { offSession: true }))).status).toBe("succeeded");
    clock = START + 120_000;
    expect((await restarted.retrievePayment(pending.processorPaymentId as string))?.status).toBe("succeeded");
  });
});

describe("card data stays in the processor", () => {
  it("no token, payment id or returned object contains a card or account number", async () => {
    const outputs: unknown[] = [];
    const numbers = Object.keys(SANDBOX_TEST_CARDS);
    for (const number of numbers) {
      const typed = number.replace(/(\d{4})/g, "$1 ");
      const created = await processor.createPaymentMethod(card(typed));
      outputs.push(created);
      if (!created.ok) continue;
      outputs.push(await processor.retrievePaymentMethod(created.method.token));
      const setup = await processor.setupForFutureUse({ paymentMethod: created.method.token });
      outputs.push(setup);
      const charged = await processor.charge(chargeInput(created.method, { saveForFutureUse: true }));
      outputs.push(charged);
      if (charged.processorPaymentId) {
        outputs.push(await processor.retrievePayment(charged.processorPaymentId));
        outputs.push(
          await processor.refund({ processorPaymentId: charged.processorPaymentId, amountCents: 100 }),
        );
      }
      if (setup.status === "succeeded")
        outputs.push(await processor.charge(chargeInput(setup.method, { offSession: true })));
    }
    outputs.push(await processor.createPaymentMethod(card("4111111111111111")));
    outputs.push(await processor.createPaymentMethod(card("4242424242424241")));
    const account = await processor.createPaymentMethod(bank("000123456789"));
    outputs.push(account);
    if (account.ok) outputs.push(await processor.charge(chargeInput(account.method)));
    outputs.push(
      await processor.charge(chargeInput("pm_sandbox_x", { amountCents: 0 })).catch((e: unknown) => e),
    );

    const text = haystack(outputs);
    expect(text).toContain("4242"); // last 4 is fine (and proves the haystack is filled)
    for (const number of [...numbers, "4111111111111111", "4242424242424241"]) {
      expect(text, number).not.toContain(number);
      expect(text, number).not.toContain(number.slice(0, -4)); // nothing beyond the last 4
    }
    expect(text).not.toContain("000123456789");
    expect(text).not.toContain("00012345");
  });
});

describe("fingerprints", () => {
  it("are the same for the same card however it is typed, and differ between cards", async () => {
    const a = await tokenize(processor, card("4242424242424242"));
    const b = await tokenize(
      processor,
      card("4242-4242-4242-4242", { expMonth: 1, expYear: 2031, cvc: "999" }),
    );
    const c = await tokenize(processor, card("4000056655665556"));
    expect(a.token).not.toBe(b.token);
    expect(a.fingerprint).toMatch(/^[0-9a-f]{64}$/);
    expect(b.fingerprint).toBe(a.fingerprint);
    expect(c.fingerprint).not.toBe(a.fingerprint);
    const saved = await processor.setupForFutureUse({ paymentMethod: a.token });
    expect(saved.status === "succeeded" && saved.method.fingerprint).toBe(a.fingerprint);
  });

  it("are stable for bank accounts and depend on the processor secret", async () => {
    const x = await tokenize(processor, bank("000123456789"));
    const y = await tokenize(processor, bank("0001 2345 6789"));
    const z = await tokenize(processor, bank("000111111116"));
    expect(y.fingerprint).toBe(x.fingerprint);
    expect(z.fingerprint).not.toBe(x.fingerprint);
    const other = new SandboxProcessor({ secret: "another-secret-abcdef012345", now });
    expect((await tokenize(other, card("4242424242424242"))).fingerprint).not.toBe(
      (await tokenize(processor, card("4242424242424242"))).fingerprint,
    );
  });
});

describe("saved payment methods", () => {
  it("refuses an off-session charge with a one-time method, and allows it once set up", async () => {
    const once = await tokenize(processor, card("4242424242424242"));
    expect(await processor.charge(chargeInput(once, { offSession: true }))).toMatchObject({
      status: "failed",
      failureCode: "invalid_payment_method",
      processorPaymentId: null,
    });
    const setup = await processor.setupForFutureUse({ paymentMethod: once.token });
    expect(setup.status).toBe("succeeded");
    if (setup.status !== "succeeded") return;
    expect(setup.method).toMatchObject({ reusable: true, brand: "visa", last4: "4242" });
    expect(await processor.setupForFutureUse({ paymentMethod: setup.method.token })).toEqual(setup);
    expect((await processor.charge(chargeInput(setup.method, { offSession: true }))).status).toBe(
      "succeeded",
    );
  });

  it("fails set-up for declined cards but not for ones that fail only when charged", async () => {
    for (const [number, code] of [
      ["4000000000000002", "card_declined"],
      ["4000000000000069", "expired_card"],
      ["4000000000000119", "processing_error"],
    ]) {
      const setup = await processor.setupForFutureUse({
        paymentMethod: (await tokenize(processor, card(number))).token,
      });
      expect(setup, number).toMatchObject({ status: "failed", failureCode: code });
    }
    const attachThenDecline = await reusableMethod(processor, "4000000000000341");
    expect(await processor.charge(chargeInput(attachThenDecline, { offSession: true }))).toMatchObject({
      status: "failed",
      failureCode: "card_declined",
    });
    const noFunds = await reusableMethod(processor, "4000000000009995");
    expect(await processor.charge(chargeInput(noFunds, { offSession: true }))).toMatchObject({
      status: "failed",
      failureCode: "insufficient_funds",
    });
  });

  it("saves the method with the first payment when asked", async () => {
    const once = await tokenize(processor, card("5555555555554444"));
    const first = await processor.charge(chargeInput(once, { saveForFutureUse: true }));
    expect(first.status).toBe("succeeded");
    const saved = first.status === "succeeded" ? first.savedMethod : undefined;
    expect(saved).toMatchObject({ reusable: true, last4: "4444", fingerprint: once.fingerprint });
    expect((await processor.charge(chargeInput(saved as PaymentMethod, { offSession: true }))).status).toBe(
      "succeeded",
    );
    const plain = await processor.charge(chargeInput(once));
    expect(plain.status === "succeeded" && plain.savedMethod).toBeUndefined();
    const declined = await processor.charge(
      chargeInput(await tokenize(processor, card("4000000000000002")), { saveForFutureUse: true }),
    );
    expect(declined).not.toHaveProperty("savedMethod");
  });

  it("declines a saved card once it has expired", async () => {
    const saved = await reusableMethod(processor, "4242424242424242"); // expires 12/2030
    clock = Date.UTC(2030, 11, 31, 23, 59);
    expect((await processor.charge(chargeInput(saved, { offSession: true }))).status).toBe("succeeded");
    clock = Date.UTC(2031, 0, 1);
    expect(await processor.charge(chargeInput(saved, { offSession: true }))).toMatchObject({
      status: "failed",
      failureCode: "expired_card",
    });
  });
});

describe("refunds", () => {
  async function paid(amountCents = 5000) {
    const result = await processor.charge(
      chargeInput(await tokenize(processor, card("4242424242424242")), { amountCents }),
    );
    return result.processorPaymentId as string;
  }

  it("refunds a succeeded payment in full", async () => {
    const id = await paid();
    const refund = await processor.refund({ processorPaymentId: id });
    expect(refund).toMatchObject({
      ok: true,
      amountCents: 5000,
      refundedTotalCents: 5000,
      status: "succeeded",
    });
    if (refund.ok) expect(refund.refundId).toMatch(/^re_sandbox_/);
    expect((await processor.retrievePayment(id))?.refundedCents).toBe(5000);
    expect(await processor.refund({ processorPaymentId: id })).toMatchObject({
      ok: false,
      code: "not_refundable",
    });
  });

  it("refunds in parts and never more than was paid", async () => {
    const id = await paid();
    expect(await processor.refund({ processorPaymentId: id, amountCents: 2000 })).toMatchObject({
      ok: true,
      amountCents: 2000,
      refundedTotalCents: 2000,
    });
    expect(await processor.refund({ processorPaymentId: id, amountCents: 3001 })).toMatchObject({
      ok: false,
      code: "invalid_amount",
    });
    for (const amountCents of [0, -1, 1.5])
      expect(await processor.refund({ processorPaymentId: id, amountCents })).toMatchObject({
        ok: false,
        code: "invalid_amount",
      });
    expect(await processor.refund({ processorPaymentId: id })).toMatchObject({
      ok: true,
      amountCents: 3000,
      refundedTotalCents: 5000,
    });
  });

  it("does not refund twice for one idempotency key, even concurrently", async () => {
    const id = await paid();
    const input = { processorPaymentId: id, amountCents: 1000, idempotencyKey: "refund-1" };
    const results = await Promise.all([
      processor.refund(input),
      processor.refund(input),
      processor.refund(input),
    ]);
    const ids = new Set(results.map((r) => (r.ok ? r.refundId : r.code)));
    expect(ids.size).toBe(1);
    expect((await processor.retrievePayment(id))?.refundedCents).toBe(1000);
    const err = await processor.refund({ ...input, amountCents: 500 }).catch((e) => e);
    expect(err).toBeInstanceOf(ProcessorError);
    expect(err.code).toBe("idempotency_key_reused");
  });

  it("keeps concurrent refunds without keys within the payment", async () => {
    const id = await paid(3000);
    const results = await Promise.all(
      [1, 2, 3, 4].map(() => processor.refund({ processorPaymentId: id, amountCents: 1000 })),
    );
    expect(results.filter((r) => r.ok)).toHaveLength(3);
    expect((await processor.retrievePayment(id))?.refundedCents).toBe(3000);
  });

  it("fails for unknown ids, failed payments and bank payments not yet settled", async () => {
    for (const id of ["pi_sandbox_nope.nope", "pay_123", ""])
      expect(await processor.refund({ processorPaymentId: id })).toMatchObject({
        ok: false,
        code: "unknown_payment",
      });
    expect(await processor.retrievePayment("pi_sandbox_nope.nope")).toBeNull();
    const declined = await processor.charge(chargeInput(await tokenize(processor, card("4000000000000002"))));
    expect(
      await processor.refund({ processorPaymentId: declined.processorPaymentId as string }),
    ).toMatchObject({
      ok: false,
      code: "not_refundable",
    });
    const pending = await processor.charge(chargeInput(await tokenize(processor, bank("000123456789"))));
    const id = pending.processorPaymentId as string;
    expect(await processor.refund({ processorPaymentId: id })).toMatchObject({
      ok: false,
      code: "not_refundable",
    });
    clock = START + 120_000;
    expect(await processor.refund({ processorPaymentId: id })).toMatchObject({ ok: true, amountCents: 2500 });
  });

  it("shares refunds through a shared ledger", async () => {
    const ledger = memoryLedger(now);
    const a = new SandboxProcessor({ secret: SECRET, now, ledger });
    const b = new SandboxProcessor({ secret: SECRET, now, ledger });
    const result = await a.charge(chargeInput(await tokenize(a, card("4242424242424242"))));
    const id = result.processorPaymentId as string;
    expect(await a.refund({ processorPaymentId: id, amountCents: 2000 })).toMatchObject({ ok: true });
    expect(await b.refund({ processorPaymentId: id, amountCents: 1000 })).toMatchObject({
      ok: false,
      code: "invalid_amount",
    });
    expect((await b.retrievePayment(id))?.refundedCents).toBe(2000);
  });
});
