// @vitest-environment happy-dom
import { cleanup, fireEvent, render, screen, waitFor, within } from "@testing-library/preact";
import { useState } from "preact/hooks";
import { beforeEach, describe, expect, it } from "vitest";
import { ListFooter, usePagedList } from "../../widget/dashboard/list.js";
import { navigate } from "../../widget/dashboard/router.js";
import { ConfirmInline } from "../../widget/dashboard/ui.js";
import {
  type Answer,
  openDashboard,
  organization,
  payment,
  type Role,
  standInApi,
} from "../support/dashboardStandIn.js";

/**
 * The staff dashboard's pages (widget/dashboard) in happy-dom against a stand-in API, for what a review found:
 * a keyboard moving through a list that saved each step, text boxes that ate a newline, focus lost, stale
 * filters, answers sent twice.
 */

const { on, writes, signedIn: signedInAs } = standInApi();
const open = openDashboard;

const OWNER = [
  "forms:read",
  "forms:write",
  "donations:read",
  "donations:write",
  "subscriptions:read",
  "subscriptions:write",
  "contacts:read",
  "analytics:read",
];

const signedIn = (role: Role = "OWNER", permissions: string[] = OWNER) => signedInAs(role, permissions);

/** A member as GET /api/staff/team lists them: joined, or only invited (no password here yet). */
const member = (userId: string, email: string, role: string, invitePending = false) => ({
  userId,
  email,
  role,
  joinedAt: "2026-01-01T00:00:00.000Z",
  passwordSet: !invitePending,
  invitePending,
  inviteExpiresAt: invitePending ? "2026-01-02T00:00:00.000Z" : null,
  lastSignInAt: null,
});

describe("team roles", () => {
  beforeEach(() => {
    signedIn();
    const members = [
      member("usr_1", "pat@charity.example", "OWNER"),
      member("usr_2", "sam@charity.example", "STAFF"),
      member("usr_3", "kim@charity.example", "OWNER"),
    ];
    on("GET", /^\/api\/staff\/team$/, () => ({ body: { members } }));
    on("PATCH", /^\/api\/staff\/team\//, (call) => {
      const id = decodeURIComponent(call.path.split("/").pop() ?? "");
      const m = members.find((x) => x.userId === id);
      if (m) m.role = (call.body as { role: string }).role;
      return { body: {} };
    });
  });

  it("changes nothing while a keyboard moves through the roles; 'Change role' sends the one chosen", async () => {
    open("/dashboard/team");
    const select = (await screen.findByLabelText("Role of sam@charity.example")) as HTMLSelectElement;
    const button = screen.getByRole("button", { name: "Change role of sam@charity.example" });
    expect((button as HTMLButtonElement).disabled).toBe(true);
    // Chromium fires `change` on each arrow key.
    for (const value of ["FINANCE", "OWNER", "FINANCE"]) fireEvent.change(select, { target: { value } });
    expect(writes()).toEqual([]);
    expect((button as HTMLButtonElement).disabled).toBe(false);
    fireEvent.click(button);
    await screen.findByText("sam@charity.example is now Finance.");
    expect(writes()).toEqual([{ method: "PATCH", path: "/api/staff/team/usr_2", body: { role: "FINANCE" } }]);
  });

  it("asks before demoting an Owner or changing one's own role", async () => {
    open("/dashboard/team");
    const kim = (await screen.findByLabelText("Role of kim@charity.example")) as HTMLSelectElement;
    fireEvent.change(kim, { target: { value: "STAFF" } });
    fireEvent.click(screen.getByRole("button", { name: "Change role of kim@charity.example" }));
    const ask = screen.getByRole("alertdialog", { name: "Make kim@charity.example Staff instead of Owner?" });
    expect(writes()).toEqual([]);
    fireEvent.click(within(ask).getByRole("button", { name: "Keep" }));
    expect(writes()).toEqual([]);

    const mine = screen.getByLabelText("Role of pat@charity.example") as HTMLSelectElement;
    fireEvent.change(mine, { target: { value: "FINANCE" } });
    fireEvent.click(screen.getByRole("button", { name: "Change role of pat@charity.example" }));
    const own = screen.getByRole("alertdialog", { name: "Change your own role to Finance?" });
    fireEvent.click(within(own).getByRole("button", { name: "Yes, make me Finance" }));
    await screen.findByText("pat@charity.example is now Finance.");
    expect(writes()).toEqual([{ method: "PATCH", path: "/api/staff/team/usr_1", body: { role: "FINANCE" } }]);
  });
});

describe("team invitations", () => {
  it("keeps the address when the invitation is refused, and sends it once while under way", async () => {
    signedIn();
    on("GET", /^\/api\/staff\/team$/, () => ({ body: { members: [] } }));
    let answer: (a: Answer) => void = () => {};
    on("POST", /^\/api\/staff\/invites$/, () => new Promise<Answer>((resolve) => (answer = resolve)));
    open("/dashboard/team");
    const address = (await screen.findByLabelText("E-mail address")) as HTMLInputElement;
    fireEvent.input(address, { target: { value: "new@charity.example" } });
    const send = screen.getByRole("button", { name: "Send the invitation" }) as HTMLButtonElement;
    fireEvent.submit(send.closest("form") as HTMLFormElement);
    await waitFor(() => expect(send.disabled).toBe(true));
    fireEvent.submit(send.closest("form") as HTMLFormElement);
    answer({ status: 429, body: { error: "Too many invitations to this address; try again later" } });
    await screen.findByText(/Too many invitations/);
    expect(address.value).toBe("new@charity.example");
    expect(send.disabled).toBe(false);
    expect(writes()).toHaveLength(1);

    on("POST", /^\/api\/staff\/invites$/, () => ({ status: 201, body: {} }));
    fireEvent.submit(send.closest("form") as HTMLFormElement);
    await screen.findByText(/An invitation is on its way to new@charity.example/);
    await waitFor(() => expect(address.value).toBe(""));
  });
});

describe("the question a destructive action asks", () => {
  function Asking() {
    const [asking, setAsking] = useState(false);
    return asking ? (
      <ConfirmInline
        question="Delete Spring appeal?"
        yes="Yes, delete"
        onYes={() => {}}
        onKeep={() => setAsking(false)}
        trigger="ask"
      />
    ) : (
      <button type="button" id="ask" onClick={() => setAsking(true)}>
        Delete…
      </button>
    );
  }

  it("takes the focus of the button that asked, on Keep, and gives it back after Keep", async () => {
    render(<Asking />);
    const ask = screen.getByRole("button", { name: "Delete…" });
    ask.focus();
    fireEvent.click(ask);
    // On its least destructive answer: a held Enter never confirms.
    const keep = screen.getByRole("button", { name: "Keep" });
    await waitFor(() => expect(document.activeElement).toBe(keep));
    fireEvent.click(keep);
    await waitFor(() => expect(document.activeElement).toBe(screen.getByRole("button", { name: "Delete…" })));
  });

  it("on the forms list: Delete… gets the focus back after Keep", async () => {
    signedIn();
    on("GET", /^\/v1\/forms/, () => ({
      body: {
        forms: [
          {
            formID: "f1",
            formUrl: "",
            title: "Plant a tree",
            formType: "EMBED_FORM",
            active: true,
            goal: null,
            funds: [],
            frequencies: [],
            createdAt: "2026-01-01T00:00:00.000Z",
          },
        ],
      },
    }));
    open("/dashboard/forms");
    fireEvent.click(await screen.findByRole("button", { name: "Delete…" }));
    await waitFor(() => expect(document.activeElement).toBe(screen.getByRole("button", { name: "Keep" })));
    fireEvent.click(screen.getByRole("button", { name: "Keep" }));
    await waitFor(() => expect(document.activeElement).toBe(screen.getByRole("button", { name: "Delete…" })));
    expect(writes()).toEqual([]);
  });
});

describe("a payment's refund", () => {
  it("says a refund in full was made, with focus on it, though the refund's form is gone", async () => {
    signedIn();
    on("GET", /^\/v1\/payments\/pay_01$/, () => ({ body: payment() }));
    on("POST", /^\/v1\/payments\/pay_01\/refund$/, () => ({
      body: {
        message: "Payment refunded in full",
        payment: payment({ status: "REFUNDED", refundedAmount: 50 }),
      },
    }));
    open("/dashboard/payments/pay_01");
    fireEvent.submit(
      (await screen.findByRole("button", { name: "Refund…" })).closest("form") as HTMLFormElement,
    );
    fireEvent.click(await screen.findByRole("button", { name: "Yes, refund $50.00" }));
    const notice = await screen.findByText("Payment refunded in full: $50.00.");
    expect(notice.getAttribute("role")).toBe("status");
    expect(screen.queryByRole("heading", { name: "Refund" })).toBeNull();
    await waitFor(() => expect(document.activeElement).toBe(notice));
  });
});

describe("a free registration", () => {
  it("is cancelled, not refunded: the refund is asked with no amount, and the page says so", async () => {
    signedIn();
    const free = { amount: 0, card: null, paymentMethod: "none" };
    on("GET", /^\/v1\/payments\/pay_01$/, () => ({ body: payment(free) }));
    on("POST", /^\/v1\/payments\/pay_01\/refund$/, () => ({
      body: {
        message: "Free order cancelled: its tickets are void and its places given back",
        refund: null,
        payment: payment({ ...free, status: "REFUNDED" }),
      },
    }));
    open("/dashboard/payments/pay_01");
    fireEvent.click(await screen.findByRole("button", { name: "Cancel registration…" }));
    expect(screen.queryByRole("button", { name: "Refund…" })).toBeNull();
    fireEvent.click(await screen.findByRole("button", { name: "Yes, cancel it" }));
    const notice = await screen.findByText(
      "Free order cancelled: its tickets are void and its places given back.",
    );
    expect(notice.getAttribute("role")).toBe("status");
    expect(writes()).toEqual([{ method: "POST", path: "/v1/payments/pay_01/refund", body: {} }]);
    expect(screen.queryByRole("heading", { name: "Cancel registration" })).toBeNull();
  });
});

describe("a list's filters", () => {
  const back = (path: string) => {
    // What the browser's Back does: the address changes, then popstate.
    window.history.replaceState(null, "", path);
    window.dispatchEvent(new PopStateEvent("popstate"));
  };

  it("show the address's filters after Back, Forward and Clear (payments)", async () => {
    signedIn();
    on("GET", /^\/v1\/payments/, () => ({ body: { payments: [] } }));
    open("/dashboard/payments?search=ada");
    const search = (await screen.findByLabelText("Search")) as HTMLInputElement;
    expect(search.value).toBe("ada");
    navigate("/dashboard/payments?search=bob&status=REFUNDED");
    await waitFor(() => expect(search.value).toBe("bob"));
    expect((screen.getByLabelText("Status") as HTMLSelectElement).value).toBe("REFUNDED");
    back("/dashboard/payments?search=ada");
    await waitFor(() => expect(search.value).toBe("ada"));
    expect((screen.getByLabelText("Status") as HTMLSelectElement).value).toBe("");
    // Typed and not searched yet, then Clear.
    fireEvent.input(search, { target: { value: "carl" } });
    fireEvent.click(screen.getByRole("button", { name: "Clear" }));
    await waitFor(() => expect(window.location.search).toBe(""));
    expect(search.value).toBe("");
  });

  it("show the address's filters after Back on recurring gifts, contacts and the audit log", async () => {
    signedIn();
    on("GET", /^\/v1\/(subscriptions|contacts|audit-log)/, () => ({
      body: { subscriptions: [], contacts: [], entries: [] },
    }));
    for (const page of ["recurring", "contacts", "audit-log"]) {
      cleanup();
      open(`/dashboard/${page}`);
      await screen.findByRole("heading", { level: 1 });
      const box = () =>
        (page === "audit-log" ? screen.getByLabelText("Action") : screen.getByLabelText("Search")) as
          | HTMLInputElement
          | HTMLSelectElement;
      const value = page === "audit-log" ? "form.created" : "ada";
      navigate(`/dashboard/${page}?${page === "audit-log" ? "action" : "search"}=${value}`);
      await waitFor(() => expect(box().value).toBe(value));
      back(`/dashboard/${page}`);
      await waitFor(() => expect(box().value).toBe(""));
    }
  });
});

describe("the forms list", () => {
  const form = (formID: string, title: string) => ({
    formID,
    formUrl: "",
    title,
    formType: "EMBED_FORM",
    active: true,
    goal: null,
    funds: [],
    frequencies: [],
    createdAt: "2026-01-01T00:00:00.000Z",
  });

  it("describes each row's buttons and links by its form's title, so that two rows' Delete… are told apart", async () => {
    signedIn();
    on("GET", /^\/v1\/forms/, () => ({ body: { forms: [form("f1", "First"), form("f2", "Second")] } }));
    open("/dashboard/forms");
    const row = async (title: string) =>
      (await screen.findByRole("link", { name: title })).closest("tr") as HTMLElement;
    /** Each control of the row that is not the title: its name, and the text its description names. */
    const described = async (title: string) =>
      [...within(await row(title)).getAllByRole("button"), ...within(await row(title)).getAllByRole("link")]
        .filter((el) => el.textContent !== title)
        .map((el) => [
          el.textContent,
          (el.getAttribute("aria-describedby") ?? "")
            .split(" ")
            .map((id) => document.getElementById(id)?.textContent)
            .join(" "),
        ]);
    expect(await described("First")).toEqual([
      ["Turn off", "First"],
      ["Duplicate", "First"],
      ["Delete…", "First"],
      ["Share", "First"],
      ["Its payments", "First"],
    ]);
    expect(await described("Second")).toContainEqual(["Delete…", "Second"]);
  });

  it("keeps a form deleted and a form turned off when more are shown", async () => {
    signedIn();
    on("GET", /^\/v1\/forms/, (call) =>
      call.path.includes("lastEvaluatedKey")
        ? { body: { forms: [form("f3", "Third")] } }
        : { body: { forms: [form("f1", "First"), form("f2", "Second")], lastEvaluatedKey: "k1" } },
    );
    on("DELETE", /^\/v1\/forms\/f1$/, () => ({ body: {} }));
    on("PUT", /^\/v1\/forms\/f2$/, () => ({ body: {} }));
    open("/dashboard/forms");
    const row = async (title: string) =>
      (await screen.findByRole("link", { name: title })).closest("tr") as HTMLElement;

    fireEvent.click(within(await row("First")).getByRole("button", { name: "Delete…" }));
    fireEvent.click(screen.getByRole("button", { name: "Yes, delete" }));
    await screen.findByText(/First is deleted/);
    fireEvent.click(within(await row("Second")).getByRole("button", { name: "Turn off" }));
    await screen.findByText(/Second is off/);

    fireEvent.click(screen.getByRole("button", { name: "Show more" }));
    await screen.findByRole("link", { name: "Third" });
    expect(screen.queryByRole("link", { name: "First" })).toBeNull();
    expect(within(await row("Second")).getByRole("cell", { name: "Off" })).toBeTruthy();
    expect(within(await row("Second")).getByRole("button", { name: "Turn on" })).toBeTruthy();
  });
});

describe("an answer sent once", () => {
  it("disables the question's answers while a delete is under way: a double click deletes once", async () => {
    signedIn();
    on("GET", /^\/v1\/forms/, () => ({
      body: {
        forms: [
          {
            formID: "f1",
            formUrl: "",
            title: "Plant a tree",
            formType: "EMBED_FORM",
            active: true,
            goal: null,
            funds: [],
            frequencies: [],
            createdAt: "2026-01-01T00:00:00.000Z",
          },
        ],
      },
    }));
    let answer: (a: Answer) => void = () => {};
    on("DELETE", /^\/v1\/forms\/f1$/, () => new Promise<Answer>((resolve) => (answer = resolve)));
    open("/dashboard/forms");
    fireEvent.click(await screen.findByRole("button", { name: "Delete…" }));
    const yes = screen.getByRole("button", { name: "Yes, delete" }) as HTMLButtonElement;
    fireEvent.click(yes);
    fireEvent.click(yes);
    await waitFor(() => expect(yes.disabled).toBe(true));
    expect((screen.getByRole("button", { name: "Keep" }) as HTMLButtonElement).disabled).toBe(true);
    fireEvent.click(yes);
    answer({ body: {} });
    await screen.findByText(/Plant a tree is deleted/);
    expect(writes()).toEqual([{ method: "DELETE", path: "/v1/forms/f1", body: undefined }]);
    expect(screen.queryByRole("alert")).toBeNull();
  });

  it("cancels a recurring gift once, however often Yes is clicked", async () => {
    signedIn();
    const gift = {
      id: "sub_1",
      status: "ACTIVE",
      amount: 10,
      currency: "usd",
      frequency: "MONTHLY",
      nextBillingDate: null,
      lastBillingDate: null,
      endBillingDate: null,
      coveredFee: false,
      formID: "f1",
      contactId: "c1",
      email: "ada@example.org",
      fund: "",
      paymentMethod: { type: "card", brand: "visa", last4: "4242" },
      createdAt: "2026-01-01T00:00:00.000Z",
      cancelledAt: null,
    };
    on("GET", /^\/v1\/subscriptions\/sub_1$/, () => ({ body: gift }));
    let answer: (a: Answer) => void = () => {};
    on("PUT", /^\/v1\/subscriptions\/sub_1$/, () => new Promise<Answer>((resolve) => (answer = resolve)));
    open("/dashboard/recurring/sub_1");
    fireEvent.click(await screen.findByRole("button", { name: "Cancel the recurring gift…" }));
    const yes = screen.getByRole("button", { name: "Yes, cancel it" });
    fireEvent.click(yes);
    fireEvent.click(yes);
    answer({ body: { ...gift, status: "CANCELLED", cancelledAt: "2026-02-01T00:00:00.000Z" } });
    await screen.findByText("The recurring gift is cancelled.");
    expect(writes()).toHaveLength(1);
  });
});

describe("a list that could not be read", () => {
  it("says why, and not that nothing matched", async () => {
    signedIn();
    on("GET", /^\/v1\/payments/, () => ({ status: 500, body: { error: "The database is not answering" } }));
    open("/dashboard/payments");
    expect((await screen.findByRole("alert")).textContent).toBe("The database is not answering");
    await waitFor(() => expect(screen.queryByText("Loading…")).toBeNull());
    expect(screen.queryByText("No payments match.")).toBeNull();
  });
});

describe("a payment's tickets", () => {
  it("are shown as a count and the line's total, which the API gives per ticket type", async () => {
    signedIn();
    on("GET", /^\/v1\/payments\/pay_01$/, () => ({
      body: payment({
        amount: 150,
        tickets: [
          { name: "General admission", quantity: 2, amount: 150 },
          { name: "Child", quantity: 1, amount: 0 },
        ],
      }),
    }));
    open("/dashboard/payments/pay_01");
    expect(await screen.findByText("2 tickets, $150.00")).toBeTruthy();
    expect(screen.getByText("1 ticket, $0.00")).toBeTruthy();
    expect(screen.queryByText(/2 ×/)).toBeNull();
  });
});

describe("amounts in a currency without decimals", () => {
  it("are typed in whole yen: the refund and a recurring gift's new amount", async () => {
    signedIn();
    on("GET", /^\/v1\/payments\/pay_01$/, () => ({ body: payment({ currency: "jpy", amount: 5000 }) }));
    open("/dashboard/payments/pay_01");
    const refund = (await screen.findByLabelText("Amount (JPY)")) as HTMLInputElement;
    expect([refund.step, refund.min]).toEqual(["1", "1"]);
    cleanup();

    on("GET", /^\/v1\/payments\/pay_02$/, () => ({ body: payment({ paymentID: "pay_02" }) }));
    open("/dashboard/payments/pay_02");
    const cents = (await screen.findByLabelText("Amount (USD)")) as HTMLInputElement;
    expect([cents.step, cents.min]).toEqual(["0.01", "0.01"]);
    cleanup();

    on("GET", /^\/v1\/subscriptions\/sub_1$/, () => ({
      body: {
        id: "sub_1",
        status: "ACTIVE",
        amount: 3000,
        currency: "jpy",
        frequency: "MONTHLY",
        nextBillingDate: null,
        lastBillingDate: null,
        endBillingDate: null,
        coveredFee: false,
        formID: "f1",
        contactId: "c1",
        email: "ada@example.org",
        fund: "",
        paymentMethod: { type: "card", brand: "visa", last4: "4242" },
        createdAt: "2026-01-01T00:00:00.000Z",
        cancelledAt: null,
      },
    }));
    open("/dashboard/recurring/sub_1");
    expect(((await screen.findByLabelText("New amount (JPY)")) as HTMLInputElement).step).toBe("1");
  });
});

describe("the settings page", () => {
  beforeEach(() => {
    signedIn("OWNER", [...OWNER, "organization:read", "organization:write"]);
    on("GET", /^\/v1\/organization$/, () => ({ body: organization }));
    on("GET", /^\/v1\/organization\/payments$/, () => ({
      body: { processor: "sandbox", mode: "test", stripe: null },
    }));
  });

  it("marks each refused field and names its problem there, under one sentence instead of the server's run-on list", async () => {
    on("PUT", /^\/v1\/organization$/, () => ({
      status: 400,
      body: {
        error: "Validation failed",
        details: [
          "brandColor must be a colour as #RRGGBB",
          "timeZone must be an IANA time zone name",
          "plan is not a setting",
        ],
      },
    }));
    open("/dashboard/settings");
    fireEvent.input(await screen.findByLabelText("Colour"), { target: { value: "green" } });
    fireEvent.input(screen.getByLabelText("Time zone"), { target: { value: "Mars/Olympus" } });
    fireEvent.click(screen.getByRole("button", { name: "Save the settings" }));

    const alert = await screen.findByRole("alert");
    expect(alert.textContent).toBe("The settings were not saved: fix the problems shown at their fields.");
    const colour = screen.getByLabelText("Colour");
    expect(colour.getAttribute("aria-invalid")).toBe("true");
    const described = (el: HTMLElement) =>
      (el.getAttribute("aria-describedby") ?? "")
        .split(" ")
        .map((id) => document.getElementById(id)?.textContent)
        .join(" | ");
    expect(described(colour)).toBe("#RRGGBB, e.g. #1A7F5A | brandColor must be a colour as #RRGGBB");
    expect(described(screen.getByLabelText("Time zone"))).toContain(
      "timeZone must be an IANA time zone name",
    );
    expect(screen.getByLabelText("Name").getAttribute("aria-invalid")).toBeNull();
    // The first field marked takes the focus, as a refused checkout's does.
    await waitFor(() => expect(document.activeElement).toBe(colour));
    // A problem with no field of its own is listed under the sentence.
    expect(screen.getByText("plan is not a setting")).toBeTruthy();
  });

  it("takes 'Saved.' away once a setting is edited again", async () => {
    on("PUT", /^\/v1\/organization$/, (call) => ({ body: { ...organization, ...(call.body as object) } }));
    open("/dashboard/settings");
    fireEvent.input(await screen.findByLabelText("Name"), { target: { value: "Tree Trust UK" } });
    fireEvent.click(screen.getByRole("button", { name: "Save the settings" }));
    await screen.findByText("Saved.");
    fireEvent.input(screen.getByLabelText("Name"), { target: { value: "Tree Trust U.K." } });
    await waitFor(() => expect(screen.queryByText("Saved.")).toBeNull());
  });
});

describe("a list whose new filters are refused", () => {
  function Payments(props: { fund: string }) {
    const list = usePagedList<{ paymentID: string }>("/v1/payments", "payments", { fund: props.fund });
    return (
      <>
        <ul>
          {list.items.map((p) => (
            <li key={p.paymentID}>{p.paymentID}</li>
          ))}
        </ul>
        <ListFooter {...list} count={list.items.length} noun="payments" />
      </>
    );
  }

  it("shows none of the rows the filters before matched, and says why", async () => {
    on("GET", /^\/v1\/payments\?fund=General/, () => ({
      body: { payments: [{ paymentID: "pay_1" }, { paymentID: "pay_2" }], lastEvaluatedKey: "k" },
    }));
    on("GET", /^\/v1\/payments\?fund=%00/, () => ({
      status: 400,
      body: { error: "Validation failed", details: ["fund must not hold control characters"] },
    }));
    const { rerender } = render(<Payments fund="General" />);
    await screen.findByText("pay_1");
    rerender(<Payments fund={"\u0000"} />);
    expect((await screen.findByRole("alert")).textContent).toMatch(/fund must not hold control characters/);
    expect(screen.queryByText("pay_1")).toBeNull();
    expect(screen.queryByRole("button", { name: "Show more" })).toBeNull();
  });
});

describe("a contact's page", () => {
  it("writes the contact's total in the organization's currency", async () => {
    signedInAs("STAFF", ["contacts:read", "donations:read", "subscriptions:read"], { currency: "EUR" });
    on("GET", /^\/v1\/contacts\/con_1$/, () => ({
      body: {
        id: "con_1",
        firstName: "Ada",
        lastName: "Donor",
        fullName: "Ada Donor",
        organizationName: null,
        emails: [{ value: "ada@example.org", isPrimary: true }],
        phones: [],
        addresses: [],
        totalTransactionCount: 2,
        totalTransactionValue: 1250.5,
        emailConsent: "UNKNOWN",
        smsConsent: "UNKNOWN",
        communicationConsent: "UNKNOWN",
        hasActiveSubscription: false,
        firstDonationAt: null,
        lastDonationAt: null,
        createdAt: "2026-01-01T00:00:00.000Z",
      },
    }));
    on("GET", /^\/v1\/payments\?/, () => ({ body: { payments: [] } }));
    on("GET", /^\/v1\/subscriptions\?/, () => ({ body: { subscriptions: [] } }));
    open("/dashboard/contacts/con_1");
    await screen.findByRole("heading", { name: "Ada Donor" });
    expect(screen.getByText("Gifts").nextElementSibling?.textContent).toBe("2, €1,250.50 in all");
  });
});

describe("the payments list", () => {
  it("says how much of a completed payment was refunded, as its page does", async () => {
    signedIn("FINANCE", [...OWNER]);
    on("GET", /^\/v1\/payments\?/, () => ({
      body: {
        payments: [
          payment({ paymentID: "pay_1", refundedAmount: 20 }),
          payment({ paymentID: "pay_2", email: "bo@example.org", firstName: "Bo", lastName: "Giver" }),
        ],
      },
    }));
    open("/dashboard/payments");
    const row = async (name: string) =>
      (await screen.findByRole("link", { name })).closest("tr") as HTMLElement;
    expect((await row("Ada Donor")).textContent).toContain("Completed$20.00 refunded");
    expect((await row("Bo Giver")).textContent).not.toContain("refunded");
  });
});

describe("the team's last Owner", () => {
  const rowOf = async (email: string) => (await screen.findByText(email)).closest("tr") as HTMLElement;

  it("is offered neither Remove… nor another role, and the row says why", async () => {
    signedIn();
    on("GET", /^\/api\/staff\/team$/, () => ({
      body: {
        members: [
          member("usr_1", "pat@charity.example", "OWNER"),
          member("usr_2", "sam@charity.example", "STAFF"),
          // Invited, not joined: the joined Owner stays the last one who can hold the organization.
          member("usr_3", "new@charity.example", "OWNER", true),
        ],
      },
    }));
    open("/dashboard/team");
    const pat = await rowOf("pat@charity.example");
    expect(within(pat).queryByRole("button", { name: "Remove…" })).toBeNull();
    expect(pat.textContent).toContain(
      "The only Owner: make someone else Owner before removing or changing this one.",
    );
    const role = within(pat).getByLabelText("Role of pat@charity.example") as HTMLSelectElement;
    expect(role.disabled).toBe(true);
    expect(document.getElementById(role.getAttribute("aria-describedby") ?? "")?.textContent).toMatch(
      /only Owner/,
    );
    // The others keep their answers: the invited Owner may be removed.
    expect(within(await rowOf("new@charity.example")).getByRole("button", { name: "Remove…" })).toBeTruthy();
    expect(within(await rowOf("sam@charity.example")).getByRole("button", { name: "Remove…" })).toBeTruthy();
  });

  it("with two joined Owners, either may be removed", async () => {
    signedIn();
    on("GET", /^\/api\/staff\/team$/, () => ({
      body: {
        members: [
          member("usr_1", "pat@charity.example", "OWNER"),
          member("usr_3", "kim@charity.example", "OWNER"),
        ],
      },
    }));
    open("/dashboard/team");
    for (const email of ["pat@charity.example", "kim@charity.example"]) {
      const row = await rowOf(email);
      expect(within(row).getByRole("button", { name: "Remove…" })).toBeTruthy();
      expect((within(row).getByLabelText(`Role of ${email}`) as HTMLSelectElement).disabled).toBe(false);
    }
  });
});
