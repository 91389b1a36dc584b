// @vitest-environment happy-dom
import { cleanup, fireEvent, render, screen, waitFor, within } from "@testing-library/preact";
import { afterEach, describe, expect, it, vi } from "vitest";
import { when } from "../../widget/dashboard/format.js";
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
});

const person: Me = {
  userId: "usr_1",
  email: "owner@example.org",
  organizationId: "org_1",
  organizationName: "Parks",
  role: "OWNER",
  permissions: [],
};
