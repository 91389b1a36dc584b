import { useEffect, useState } from "preact/hooks";
import { get } from "../api.js";
import { day, money, when } from "../format.js";
import { to } from "../router.js";
import { can, me } from "../session.js";
import { ErrorNote, messageOf, PageTitle } from "../ui.js";

/**
 * Home: what was raised today, in 30 days and this year; gifts and donors; recurring gifts; the last 90 days
 * as a chart; and the failed and disputed payments to act on. One call: `GET /v1/analytics/summary`.
 */

interface AttentionItem {
  paymentID: string;
  date: string;
  amount: number;
  currency: string;
  email: string;
  firstName: string;
  lastName: string;
  failureMessage: string | null;
  dispute?: { status: string; reason?: string } | null;
}

export interface Summary {
  currency: string;
  timeZone: string;
  today: string;
  from: string;
  to: string;
  raised: { today: number; last30Days: number; thisYear: number };
  range: { raised: number; gifts: number; donors: number };
  recurring: { active: number; monthlyValue: number };
  byDay: { date: string; amount: number; count: number }[];
  failed: { count: number; recent: AttentionItem[] };
  disputed: { count: number; recent: AttentionItem[] };
}

export default function Home() {
  const [summary, setSummary] = useState<Summary | null>(null);
  const [error, setError] = useState<string | null>(null);
  const allowed = can("analytics:read");
  useEffect(() => {
    if (allowed)
      get<Summary>("/v1/analytics/summary")
        .then(setSummary)
        .catch((err: unknown) => setError(messageOf(err)));
  }, [allowed]);

  const name = me.value?.organizationName ?? "";
  if (!allowed)
    return (
      <>
        <PageTitle title="Home">{name}</PageTitle>
        <p>
          Find a gift on the <a href={to("payments")}>payments page</a>, or a donor among the{" "}
          <a href={to("contacts")}>contacts</a>.
        </p>
      </>
    );
  if (!summary)
    return (
      <>
        <PageTitle title="Home">{name}</PageTitle>
        <ErrorNote message={error} />
        {!error && <p aria-busy="true">Loading…</p>}
      </>
    );
  const s = summary;
  const m = (amount: number) => money(amount, s.currency);
  return (
    <>
      <PageTitle title="Home">{name}</PageTitle>
      <ul class="figures">
        <li>
          <span>Raised today</span>
          <strong>{m(s.raised.today)}</strong>
        </li>
        <li>
          <span>Last 30 days</span>
          <strong>{m(s.raised.last30Days)}</strong>
        </li>
        <li>
          <span>This year</span>
          <strong>{m(s.raised.thisYear)}</strong>
        </li>
        <li>
          <span>Gifts in 90 days</span>
          <strong>{s.range.gifts}</strong>
        </li>
        <li>
          <span>Donors in 90 days</span>
          <strong>{s.range.donors}</strong>
        </li>
        <li>
          <span>Active recurring gifts</span>
          <strong>{s.recurring.active}</strong>
          <small>{m(s.recurring.monthlyValue)} a month</small>
        </li>
      </ul>
      <h2 id="chart-title">
        Raised per day, {day(s.from)} to {day(s.to)}
      </h2>
      <DayChart rows={s.byDay} currency={s.currency} />
      <Attention title="Failed payments" items={s.failed.recent} total={s.failed.count} />
      <Attention title="Disputed payments" items={s.disputed.recent} total={s.disputed.count} />
      <p class="muted">Days are in the organization's time zone ({s.timeZone}); sums are net of refunds.</p>
    </>
  );
}

/** The days as bars: an SVG drawn here (no chart library), with a table of the same figures for screen readers. */
export function DayChart(props: {
  rows: { date: string; amount: number; count: number }[];
  currency: string;
}) {
  const { rows } = props;
  const width = 720;
  const height = 160;
  const top = Math.max(...rows.map((r) => r.amount), 0);
  const barWidth = rows.length > 0 ? width / rows.length : width;
  return (
    <figure class="chart">
      <svg
        viewBox={`0 0 ${width} ${height}`}
        role="img"
        aria-labelledby="chart-title"
        preserveAspectRatio="none"
      >
        <title>Raised per day</title>
        {rows.map((row, index) => {
          const h = top > 0 ? Math.max((row.amount / top) * (height - 4), row.amount > 0 ? 2 : 0) : 0;
          return (
            <rect
              key={row.date}
              x={index * barWidth + 1}
              y={height - h}
              width={Math.max(barWidth - 2, 1)}
              height={h}
            >
              <title>
                {day(row.date)}: {money(row.amount, props.currency)}
              </title>
            </rect>
          );
        })}
      </svg>
      <details>
        <summary>The figures as a table</summary>
        <div class="table-wrap">
          <table>
            <thead>
              <tr>
                <th scope="col">Day</th>
                <th scope="col">Raised</th>
                <th scope="col">Gifts</th>
              </tr>
            </thead>
            <tbody>
              {rows
                .filter((r) => r.count > 0 || r.amount !== 0)
                .map((r) => (
                  <tr key={r.date}>
                    <td>{day(r.date)}</td>
                    <td>{money(r.amount, props.currency)}</td>
                    <td>{r.count}</td>
                  </tr>
                ))}
            </tbody>
          </table>
        </div>
      </details>
    </figure>
  );
}

function Attention(props: { title: string; items: AttentionItem[]; total: number }) {
  return (
    <section>
      <h2>
        {props.title} ({props.total})
      </h2>
      {props.items.length === 0 ? (
        <p>None to act on.</p>
      ) : (
        <ul class="plain">
          {props.items.map((item) => (
            <li key={item.paymentID}>
              <a href={to(`payments/${item.paymentID}`)}>
                {money(item.amount, item.currency)} from{" "}
                {`${item.firstName} ${item.lastName}`.trim() || item.email}
              </a>{" "}
              on {when(item.date)}
              {item.failureMessage ? ` — ${item.failureMessage}` : ""}
              {item.dispute ? ` — dispute ${item.dispute.status.replace(/_/g, " ")}` : ""}
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
