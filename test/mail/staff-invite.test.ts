import { describe, expect, it } from "vitest";
import { renderStaffInvite } from "../../server/mail/staffInvite.js";

/** The invitation e-mail: the link in both parts, the role's name, and names shown as text in the HTML. */
describe("staff invitation e-mail", () => {
  const url = "https://give.example.org/dashboard/setup?token=abc_DEF-123";

  it("carries the set-up link, the role and the time it lasts in the text and the HTML", () => {
    const mail = renderStaffInvite({
      organizationName: "Acme Food Bank",
      invitedBy: "owner@acme.example",
      role: "FINANCE",
      url,
      hours: 24,
    });
    expect(mail.subject).toBe("You are invited to Acme Food Bank's donation dashboard");
    expect(mail.text).toContain(`\n\n${url}\n\n`);
    expect(mail.text).toContain("owner@acme.example has invited you");
    expect(mail.text).toContain("as Finance");
    expect(mail.text).toContain("within 24 hours");
    expect(mail.html).toContain(`<a href="${url}">Set your password</a>`);
  });

  it("tells a person who has a password already to sign in with it, not to set one", () => {
    const mail = renderStaffInvite({
      organizationName: "Acme Food Bank",
      invitedBy: "owner@acme.example",
      role: "STAFF",
      url,
      hours: 24,
      hasPassword: true,
    });
    expect(mail.text).toContain("sign in with your password to accept");
    expect(mail.text).not.toMatch(/Set your password/);
    expect(mail.html).toContain(`<a href="${url}">Accept the invitation</a>`);
  });

  it("shows an organization's name and the inviter's address as text, never as markup", () => {
    const mail = renderStaffInvite({
      organizationName: `<img src=x onerror="alert(1)">`,
      invitedBy: "<script>@evil.example",
      role: "STAFF",
      url: `${url}"><script>`,
      hours: 24,
    });
    expect(mail.html).not.toMatch(/<img|<script/);
    expect(mail.html).toContain("&#60;img src=x onerror=&#34;alert(1)&#34;&#62;");
    expect(mail.html).toContain(
      'href="https://give.example.org/dashboard/setup?token=abc_DEF-123&#34;&#62;&#60;script&#62;"',
    );
  });
});
