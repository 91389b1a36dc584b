// @vitest-environment happy-dom
import { cleanup, fireEvent, screen, waitFor, within } from "@testing-library/preact";
import { describe, expect, it } from "vitest";
import { type Answer, openDashboard, standInApi } from "../support/dashboardStandIn.js";

/**
 * The Account page's recovery codes (widget/dashboard/pages/Account.tsx) in happy-dom, against a stand-in
 * for the API: how many are left (`GET /api/staff/two-factor`), and ten new ones proven with the password
 * (`POST /api/staff/two-factor/recovery-codes`), as server/api/staffSecurity.ts answers them.
 */

const { calls, on, signedIn: signedInAs } = standInApi();

/** An Owner signed in with two-step sign-in on (or off), `left` recovery codes unused. */
function signedIn(twoFactorEnabled: boolean, left: () => number) {
  signedInAs("OWNER", [], { twoFactorEnabled });
  on("GET", /^\/api\/staff\/two-factor$/, () => ({
    body: {
      enabled: twoFactorEnabled,
      enabledAt: twoFactorEnabled ? "2026-01-02T10:00:00.000Z" : null,
      recoveryCodesLeft: left(),
      required: false,
    },
  }));
  on("GET", /^\/api\/staff\/sessions$/, () => ({ body: { sessions: [] } }));
}

const openAccount = () => openDashboard("/dashboard/account");

const recovery = async () =>
  within((await screen.findByRole("heading", { name: "Recovery codes" })).closest("section") as HTMLElement);

const NEW_CODES = Array.from({ length: 10 }, (_, i) => `new${i}a-bcdef`);

describe("recovery codes on the Account page", () => {
  it("shows how many recovery codes are left, with a warning at 3 or fewer and at none", async () => {
    let left = 7;
    signedIn(true, () => left);
    openAccount();
    let section = await recovery();
    expect(await section.findByText(/^7 recovery codes left\./)).toBeTruthy();
    expect(section.queryByText(/Few are left|none left/)).toBeNull();
    cleanup();

    left = 3;
    openAccount();
    section = await recovery();
    const few = await section.findByText("Few are left: get new ones before they run out.");
    expect(few.classList.contains("warning")).toBe(true);
    expect(few.closest("p")?.textContent).toMatch(/^3 recovery codes left\. /);
    cleanup();

    left = 0;
    openAccount();
    section = await recovery();
    const none = await section.findByText(/You have none left: if you lose your authenticator app/);
    expect(none.classList.contains("warning")).toBe(true);
    expect(none.closest("p")?.textContent).toMatch(/^0 recovery codes left\. /);
    expect(section.getByRole("button", { name: "New recovery codes" })).toBeTruthy();
  });

  it("shows no count and no renewal while two-step sign-in is off", async () => {
    signedIn(false, () => 0);
    openAccount();
    await screen.findByRole("button", { name: "Set up two-step sign-in" });
    expect(screen.queryByRole("heading", { name: "Recovery codes" })).toBeNull();
    expect(screen.queryByRole("button", { name: "New recovery codes" })).toBeNull();
    expect(calls.some((c) => c.path === "/api/staff/two-factor")).toBe(false);
  });

  it("renewing with the right password shows the ten new codes once, and says the old ones stop working", async () => {
    let left = 2;
    let answer: (a: Answer) => void = () => {};
    signedIn(true, () => left);
    on("POST", /^\/api\/staff\/two-factor\/recovery-codes$/, () => new Promise<Answer>((r) => (answer = r)));
    openAccount();
    const section = await recovery();
    await section.findByText(/^2 recovery codes left\./);
    const password = section.getByLabelText("Your password, to get new recovery codes") as HTMLInputElement;
    expect(password.type).toBe("password");
    expect(password.getAttribute("aria-describedby")).toBe(section.getByText(/stop working/).id);
    fireEvent.input(password, { target: { value: "my own passphrase" } });
    const button = section.getByRole("button", { name: "New recovery codes" }) as HTMLButtonElement;
    fireEvent.submit(button.closest("form") as HTMLFormElement);

    // Under way: the button is disabled, and a second submit sends nothing more.
    await waitFor(() => expect(button.disabled).toBe(true));
    fireEvent.submit(button.closest("form") as HTMLFormElement);
    const renewals = () => calls.filter((c) => c.path === "/api/staff/two-factor/recovery-codes");
    expect(renewals().map((c) => [c.method, c.body])).toEqual([["POST", { password: "my own passphrase" }]]);

    left = 10;
    answer({ body: { recoveryCodes: NEW_CODES } });
    const list = await section.findByRole("list", { name: "New recovery codes" });
    expect(
      within(list)
        .getAllByRole("listitem")
        .map((li) => li.textContent),
    ).toEqual(NEW_CODES);
    const box = list.closest(".confirm") as HTMLElement;
    expect(box.textContent).toMatch(/the old ones no longer work/);
    expect(box.textContent).toMatch(/not shown again/);
    await waitFor(() => expect(document.activeElement).toBe(box));
    expect(await section.findByText(/^10 recovery codes left\./)).toBeTruthy();
    expect(section.queryByText(/Few are left/)).toBeNull();
    expect(section.queryByRole("alert")).toBeNull();

    // Once: put away, they are gone from the page, and the password was not kept.
    fireEvent.click(section.getByRole("button", { name: "I have kept them" }));
    expect(section.queryByRole("list", { name: "New recovery codes" })).toBeNull();
    expect(screen.queryByText(NEW_CODES[0] as string)).toBeNull();
    expect(
      (section.getByLabelText("Your password, to get new recovery codes") as HTMLInputElement).value,
    ).toBe("");
    expect(renewals()).toHaveLength(1);
  });

  it("a wrong password shows the server's refusal at the field, and no codes", async () => {
    signedIn(true, () => 3);
    on("POST", /^\/api\/staff\/two-factor\/recovery-codes$/, () => ({
      status: 403,
      body: { error: "The password or code is wrong" },
    }));
    openAccount();
    const section = await recovery();
    const password = section.getByLabelText("Your password, to get new recovery codes") as HTMLInputElement;
    fireEvent.input(password, { target: { value: "not my passphrase" } });
    const button = section.getByRole("button", { name: "New recovery codes" }) as HTMLButtonElement;
    fireEvent.submit(button.closest("form") as HTMLFormElement);

    const refused = await section.findByRole("alert");
    expect(refused.textContent).toBe("The password or code is wrong");
    expect(password.getAttribute("aria-invalid")).toBe("true");
    expect(password.getAttribute("aria-describedby")?.split(" ")).toContain(refused.id);
    expect(refused.closest(".field")).toBe(password.closest(".field"));
    expect(section.queryByRole("list", { name: "New recovery codes" })).toBeNull();
    expect(section.queryAllByRole("listitem")).toHaveLength(0);
    await waitFor(() => expect(button.disabled).toBe(false));
    expect(section.getByText(/^3 recovery codes left\./)).toBeTruthy();
  });
});
