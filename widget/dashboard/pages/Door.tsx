import { useEffect, useRef, useState } from "preact/hooks";
import { normalizeTicketCode } from "../../../shared/ticketCode.js";
import { ApiFailure, call, get, query } from "../api.js";
import { when } from "../format.js";
import { formNames, loadFormNames } from "../forms.js";
import type { PageProps } from "../page.js";
import { navigate, to } from "../router.js";
import { can } from "../session.js";
import { ErrorNote, Field, messageOf, PageTitle } from "../ui.js";

/**
 * The door of an event, made for a phone held in one hand: how many are in of how many sold, a search with one
 * large button per ticket, undo, and the ticket's code typed or read from its QR code with the camera where
 * the browser offers BarcodeDetector. A check-in is one conditional update on the server: two phones at the
 * same door never admit one ticket twice (the second is told when and by whom it was admitted).
 */

interface Ticket {
  code: string;
  ticketType: string;
  admits: number;
  buyer: { name: string; email: string };
  status: "VALID" | "CHECKED_IN" | "VOID";
  checkedInAt: string | null;
  checkedInBy: string | null;
}

interface Totals {
  tickets: number;
  checkedIn: number;
  people: number;
  peopleAdmitted: number;
}

interface Conflict {
  code?: string;
  checkedInAt?: string | null;
  checkedInBy?: string | null;
}

export default function Door(props: PageProps) {
  useEffect(() => {
    void loadFormNames();
  }, []);
  if (props.rest) return <DoorOf formId={decodeURIComponent(props.rest)} />;
  const events = (formNames.value ?? []).filter((f) => f.formType === "EVENT");
  return (
    <>
      <PageTitle title="Door">At the door</PageTitle>
      {formNames.value === null ? (
        <p aria-busy="true">Loading…</p>
      ) : events.length === 0 ? (
        <p>No event forms yet.</p>
      ) : (
        <ul class="plain big-links">
          {events.map((f) => (
            <li key={f.formID}>
              <a href={to(`door/${f.formID}`)}>{f.title}</a>
            </li>
          ))}
        </ul>
      )}
    </>
  );
}

function DoorOf(props: { formId: string }) {
  const base = `/v1/forms/${encodeURIComponent(props.formId)}/tickets`;
  const [search, setSearch] = useState("");
  const [tickets, setTickets] = useState<Ticket[]>([]);
  const [totals, setTotals] = useState<Totals | null>(null);
  const [said, setSaid] = useState<{ text: string; bad: boolean } | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [code, setCode] = useState("");
  const writable = can("tickets:write");
  const title = formNames.value?.find((f) => f.formID === props.formId)?.title ?? "The event";

  const load = async (text = search) => {
    try {
      const page = await get<{ tickets: Ticket[]; totals: Totals }>(
        `${base}${query({ search: text.trim() || undefined, limit: 25 })}`,
      );
      setTickets(page.tickets);
      setTotals(page.totals);
      setError(null);
    } catch (err) {
      setError(messageOf(err));
    }
  };
  // biome-ignore lint/correctness/useExhaustiveDependencies: loads once per event; searches load themselves
  useEffect(() => {
    void load("");
  }, [base]);

  const say = (text: string, bad = false) => setSaid({ text, bad });
  const checkIn = async (ticketCode: string) => {
    try {
      const ticket = await call<Ticket>("POST", `${base}/${encodeURIComponent(ticketCode)}/check-in`);
      say(
        `In: ${ticket.buyer.name || ticket.buyer.email}, ${ticket.ticketType}${ticket.admits > 1 ? `, admits ${ticket.admits}` : ""}.`,
      );
    } catch (err) {
      const body = (err instanceof ApiFailure ? err.body : {}) as Conflict;
      if (err instanceof ApiFailure && err.status === 409 && body.code === "already_checked_in")
        say(
          `Already checked in ${when(body.checkedInAt)} by ${body.checkedInBy ?? "someone"}: do not admit again.`,
          true,
        );
      else if (err instanceof ApiFailure && err.status === 409 && body.code === "voided")
        say("This ticket is void (its order was refunded): do not admit.", true);
      else if (err instanceof ApiFailure && err.status === 404)
        say(`No ticket ${ticketCode} for this event.`, true);
      else say(messageOf(err), true);
    }
    await load();
  };
  const undo = async (ticketCode: string) => {
    try {
      await call("DELETE", `${base}/${encodeURIComponent(ticketCode)}/check-in`);
      say(`Check-in of ${ticketCode} undone.`);
    } catch (err) {
      say(messageOf(err), true);
    }
    await load();
  };
  const byCode = (typed: string) => {
    const normal = normalizeTicketCode(typed);
    if (!normal) {
      say(`"${typed}" is not a ticket code (like ABCD-EFGH-JK).`, true);
      return;
    }
    setCode("");
    void checkIn(normal);
  };

  return (
    <div class="door">
      <PageTitle title="Door">{title}</PageTitle>
      <p>
        <a href={to("door")}>Other events</a>
      </p>
      {totals && (
        <p class="counts" aria-live="polite">
          <strong>
            {totals.peopleAdmitted} of {totals.people}
          </strong>{" "}
          people in ({totals.checkedIn} of {totals.tickets} tickets)
        </p>
      )}
      <p role="status" class={said?.bad ? "said bad" : "said"}>
        {said?.text ?? ""}
      </p>
      <ErrorNote message={error} />
      {writable && (
        <form
          onSubmit={(e) => {
            e.preventDefault();
            byCode(code);
          }}
        >
          <Field label="Ticket code" hint="As printed on the ticket, e.g. ABCD-EFGH-JK">
            {(id, hint) => (
              <input
                id={id}
                aria-describedby={hint}
                autoComplete="off"
                autoCapitalize="characters"
                value={code}
                onInput={(e) => setCode(e.currentTarget.value)}
              />
            )}
          </Field>
          <button type="submit">Check in this code</button>
          <Scanner onCode={byCode} />
        </form>
      )}
      <form
        aria-label="Search the tickets"
        onSubmit={(e) => {
          e.preventDefault();
          void load();
        }}
      >
        <Field label="Find a ticket" hint="Name, e-mail or code">
          {(id, hint) => (
            <input
              id={id}
              type="search"
              aria-describedby={hint}
              value={search}
              onInput={(e) => setSearch(e.currentTarget.value)}
            />
          )}
        </Field>
        <button type="submit" class="secondary">
          Find
        </button>
      </form>
      <ul class="tickets">
        {tickets.map((t) => (
          <li key={t.code}>
            {t.status === "VALID" && writable ? (
              <button type="button" class="big" onClick={() => checkIn(t.code)}>
                Check in {t.buyer.name || t.buyer.email}
                <small>
                  {t.ticketType}
                  {t.admits > 1 ? ` · admits ${t.admits}` : ""} · {t.code}
                </small>
              </button>
            ) : (
              <div class="ticket-state">
                <strong id={`ticket-${t.code}`}>{t.buyer.name || t.buyer.email}</strong>{" "}
                <small>
                  {t.ticketType} · {t.code}
                </small>
                <br />
                {t.status === "VOID"
                  ? "Void (refunded)"
                  : t.status === "CHECKED_IN"
                    ? `In since ${when(t.checkedInAt)}${t.checkedInBy ? ` (${t.checkedInBy})` : ""}`
                    : "Not in yet"}
                {t.status === "CHECKED_IN" && writable && (
                  <button
                    type="button"
                    class="secondary"
                    aria-describedby={`ticket-${t.code}`}
                    onClick={() => undo(t.code)}
                  >
                    Undo
                  </button>
                )}
              </div>
            )}
          </li>
        ))}
      </ul>
      {tickets.length === 0 && totals && <p>No tickets match.</p>}
      <p>
        <button type="button" class="link" onClick={() => navigate(to(`door/${props.formId}`))}>
          Start over
        </button>
      </p>
    </div>
  );
}

interface Detector {
  detect(source: HTMLVideoElement): Promise<{ rawValue: string }[]>;
}
type DetectorClass = new (options: { formats: string[] }) => Detector;

/** Reads a ticket's QR code with the camera, where the browser has BarcodeDetector; nothing otherwise. */
function Scanner(props: { onCode: (code: string) => void }) {
  const Barcode = (window as unknown as { BarcodeDetector?: DetectorClass }).BarcodeDetector;
  const [on, setOn] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const video = useRef<HTMLVideoElement>(null);
  useEffect(() => {
    if (!on || !Barcode) return;
    let stream: MediaStream | undefined;
    let stopped = false;
    const detector = new Barcode({ formats: ["qr_code"] });
    (async () => {
      try {
        stream = await navigator.mediaDevices.getUserMedia({ video: { facingMode: "environment" } });
        if (!video.current) return;
        video.current.srcObject = stream;
        await video.current.play();
        while (!stopped) {
          const found = await detector.detect(video.current).catch(() => []);
          const value = found[0]?.rawValue;
          if (value) {
            props.onCode(value);
            await new Promise((r) => setTimeout(r, 1500));
          } else await new Promise((r) => setTimeout(r, 250));
        }
      } catch (err) {
        setError(`The camera could not be used: ${messageOf(err)}. Type the code instead.`);
        setOn(false);
      }
    })();
    return () => {
      stopped = true;
      for (const track of stream?.getTracks() ?? []) track.stop();
    };
  }, [on]);
  if (!Barcode) return null;
  return (
    <div class="scanner">
      <button type="button" class="secondary" aria-pressed={on} onClick={() => setOn(!on)}>
        {on ? "Stop the camera" : "Scan with the camera"}
      </button>
      {on && (
        // biome-ignore lint/a11y/useMediaCaption: the camera's picture, not a recording with speech
        <video ref={video} muted playsInline aria-label="The camera, pointed at a ticket's QR code" />
      )}
      <ErrorNote message={error} />
    </div>
  );
}
