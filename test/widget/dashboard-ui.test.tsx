// @vitest-environment happy-dom
import { cleanup, fireEvent, render, screen, waitFor, within } from "@testing-library/preact";
import { afterEach, describe, expect, it, vi } from "vitest";
import { keepFocusInPage } from "../../widget/dashboard/focusKeeper.js";
import { orgNow, when } from "../../widget/dashboard/format.js";
import { type Me, me } from "../../widget/dashboard/session.js";
import { ConfirmInline, CopyButton } from "../../widget/dashboard/ui.js";

/** The dashboard's shared pieces (widget/dashboard/ui.tsx) that several pages use the same way. */

afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
});

describe("ConfirmInline", () => {
  it("in a row: words named by the question, then 'Yes, …' and 'Keep'", () => {
    const onYes = vi.fn();
    const onKeep = vi.fn();
    render(
      <ConfirmInline
        question="Delete Spring appeal?"
        detail="Its page stops taking gifts."
        yes="Yes, delete"
        onYes={onYes}
        onKeep={onKeep}
      />,
    );
    const dialog = screen.getByRole("alertdialog", { name: "Delete Spring appeal?" });
    expect(dialog.tagName).toBe("SPAN");
    expect(dialog.textContent).toBe("Delete Spring appeal? Its page stops taking gifts. Yes, deleteKeep");
    fireEvent.click(within(dialog).getByRole("button", { name: "Yes, delete" }));
    expect(onYes).toHaveBeenCalledTimes(1);
    fireEvent.click(within(dialog).getByRole("button", { name: "Keep" }));
    expect(onKeep).toHaveBeenCalledTimes(1);
  });

  it("as a box: named by its paragraph, with its own answer to go back, both disabled while busy", () => {
    render(
      <ConfirmInline
        busy
        block
        onYes={() => {}}
        onKeep={() => {}}
        question="Archive the spring gala?"
        detail="Its tickets stay valid."
        yes="Yes, archive"
        keep="Keep it"
      />,
    );
    const dialog = screen.getByRole("alertdialog", {
      name: "Archive the spring gala? Its tickets stay valid.",
    });
    expect(dialog.className).toBe("confirm");
    const buttons = within(dialog).getAllByRole("button");
    expect(buttons.map((b) => [b.textContent, b.className, (b as HTMLButtonElement).disabled])).toEqual([
      ["Yes, archive", "danger", true],
      ["Keep it", "secondary", true],
    ]);
  });
});

describe("ConfirmInline and the keyboard", () => {
  it("Escape answers Keep and gives focus back to the button that asked", async () => {
    const onKeep = vi.fn();
    render(
      <>
        <button type="button" id="delete-1">
          Delete…
        </button>
        <ConfirmInline
          question="Delete Spring appeal?"
          yes="Yes, delete"
          onYes={vi.fn()}
          onKeep={onKeep}
          trigger="delete-1"
        />
      </>,
    );
    const keep = screen.getByRole("button", { name: "Keep" });
    await waitFor(() => expect(document.activeElement).toBe(keep));
    fireEvent.keyDown(keep, { key: "Escape" });
    expect(onKeep).toHaveBeenCalledTimes(1);
    await waitFor(() => expect(document.activeElement?.id).toBe("delete-1"));
  });

  it("Escape on its Yes answer also goes back; other keys do nothing", () => {
    const onKeep = vi.fn();
    const onYes = vi.fn();
    render(<ConfirmInline block question="Refund $25.00?" yes="Yes, refund" onYes={onYes} onKeep={onKeep} />);
    const yes = screen.getByRole("button", { name: "Yes, refund" });
    fireEvent.keyDown(yes, { key: "Enter" });
    fireEvent.keyDown(yes, { key: "a" });
    expect(onKeep).not.toHaveBeenCalled();
    fireEvent.keyDown(yes, { key: "Escape" });
    expect(onKeep).toHaveBeenCalledTimes(1);
    expect(onYes).not.toHaveBeenCalled();
  });

  it("Escape does nothing while the action is under way", () => {
    const onKeep = vi.fn();
    render(
      <ConfirmInline busy question="Revoke the key?" yes="Yes, revoke" onYes={vi.fn()} onKeep={onKeep} />,
    );
    fireEvent.keyDown(screen.getByRole("alertdialog"), { key: "Escape" });
    expect(onKeep).not.toHaveBeenCalled();
  });
});

describe("focus that would be lost (focusKeeper.ts)", () => {
  it("goes to the page heading when the focused element is removed, and stays put otherwise", async () => {
    const root = document.createElement("div");
    root.innerHTML =
      '<main><h1>Forms</h1><table><tr><td><button id="a">Delete…</button></td></tr><tr><td><button id="b">Delete…</button></td></tr></table></main>';
    document.body.append(root);
    try {
      keepFocusInPage(root);
      const a = root.querySelector<HTMLButtonElement>("#a");
      const b = root.querySelector<HTMLButtonElement>("#b");
      if (!a || !b) throw new Error("no buttons");
      // Another element removed while the focus is elsewhere: the focus does not move.
      b.focus();
      a.closest("tr")?.remove();
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(document.activeElement).toBe(b);
      // The focused one removed: the heading takes the focus instead of the body.
      b.closest("tr")?.remove();
      await waitFor(() => expect(document.activeElement?.tagName).toBe("H1"));
      expect(root.querySelector("h1")?.getAttribute("tabindex")).toBe("-1");
    } finally {
      root.remove();
    }
  });
});

describe("CopyButton", () => {
  const clipboard = () => {
    const writeText = vi.fn(async (_text: string) => {});
    vi.stubGlobal("navigator", { ...navigator, clipboard: { writeText } });
    return writeText;
  };

  it("copies its value and says so on the button", async () => {
    const writeText = clipboard();
    render(<CopyButton value="cs_live_secret" confirm="button" />);
    fireEvent.click(screen.getByRole("button", { name: "Copy" }));
    expect(writeText).toHaveBeenCalledWith("cs_live_secret");
    await screen.findByRole("button", { name: "Copied" });
    expect(screen.queryByRole("status")).toBeNull();
  });

  it("or in a status line after it", async () => {
    const writeText = clipboard();
    render(<CopyButton value="https://forms.test/donate/1" confirm="status" />);
    expect(screen.getByRole("status").textContent).toBe("");
    fireEvent.click(screen.getByRole("button", { name: "Copy" }));
    expect(writeText).toHaveBeenCalledWith("https://forms.test/donate/1");
    await waitFor(() => expect(screen.getByRole("status").textContent).toBe("Copied."));
    expect(screen.getByRole("button").textContent).toBe("Copy");
  });
});

describe("when (format.ts)", () => {
  it("writes a time in the organization's time zone, the one the lists' day filters use", () => {
    // 23:58 UTC on 28 November is already 29 November in Tokyo and still the 28th in Los Angeles.
    const at = "2026-11-28T23:58:00.000Z";
    const dayIn = (timeZone: string) =>
      new Intl.DateTimeFormat(undefined, { dateStyle: "medium", timeStyle: "short", timeZone }).format(
        new Date(at),
      );
    me.value = { ...person, timeZone: "Asia/Tokyo" };
    expect(when(at)).toBe(dayIn("Asia/Tokyo"));
    me.value = { ...person, timeZone: "America/Los_Angeles" };
    expect(when(at)).toBe(dayIn("America/Los_Angeles"));
    expect(when(at)).not.toBe(dayIn("Asia/Tokyo"));
    me.value = { ...person, timeZone: "Not/AZone" };
    expect(when(at)).toBe(
      new Intl.DateTimeFormat(undefined, { dateStyle: "medium", timeStyle: "short" }).format(new Date(at)),
    );
    me.value = undefined;
  });

  it("orgNow: now as the organization's clock reads it, for export file names and a copy's title", () => {
    // 20:00 UTC on 30 November is already 1 December, 09:00, in Auckland (UTC+13 in summer).
    const at = Date.UTC(2026, 10, 30, 20, 0, 0);
    me.value = { ...person, timeZone: "Pacific/Auckland" };
    expect(orgNow(at)).toBe("2026-12-01T09:00:00");
    me.value = { ...person, timeZone: "America/Los_Angeles" };
    expect(orgNow(at)).toBe("2026-11-30T12:00:00");
    me.value = undefined;
  });
});

const person: Me = {
  userId: "usr_1",
  email: "owner@example.org",
  organizationId: "org_1",
  organizationName: "Parks",
  role: "OWNER",
  permissions: [],
};
