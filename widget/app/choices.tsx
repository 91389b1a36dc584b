import { ErrorText, errorProps, fieldId, Group, Radio, TextInput } from "./fields.js";
import { currencySymbol, t } from "./locale.js";
import type { Checkout } from "./store.js";
import { frequencyLabel, money, perPeriod } from "./view.js";

/** What the donor chooses: fund, frequency, amount or level or product, tickets and promo code. */

export function FundPicker({ c }: { c: Checkout }) {
  const funds = c.view.funds;
  if (funds.length < 2) return null;
  const id = fieldId("fund");
  return (
    <div class="alm-field">
      <label for={id}>{t("checkout.fund")}</label>
      <select id={id} value={c.fund.value} onChange={(e) => (c.fund.value = e.currentTarget.value)}>
        {funds.map((f) => (
          <option key={f} value={f}>
            {f}
          </option>
        ))}
      </select>
    </div>
  );
}

export function FrequencyPicker({ c }: { c: Checkout }) {
  if (c.frequencies.length < 2) return null;
  return (
    <Group c={c} name="frequency" legend={t("checkout.howOften")} class="alm-tabs">
      {c.frequencies.map((f, i) => (
        <Radio
          key={f}
          name="frequency"
          index={i}
          value={f}
          checked={c.frequency.value === f}
          onSelect={() => c.setFrequency(f)}
        >
          {frequencyLabel(f)}
        </Radio>
      ))}
    </Group>
  );
}

function CustomAmount({ c, label }: { c: Checkout; label: string }) {
  if (!c.view.allowCustomAmount) return null;
  const id = fieldId("customAmount");
  return (
    <div class="alm-field alm-custom">
      <label for={id}>{label}</label>
      <span class="alm-dollar" aria-hidden="true">
        {currencySymbol()}
      </span>
      <input
        id={id}
        name="customAmount"
        inputMode="decimal"
        autoComplete="off"
        value={c.text.customAmount.value}
        onInput={(e) => {
          c.text.customAmount.value = e.currentTarget.value;
          c.useCustom.value = e.currentTarget.value.trim() !== "";
          c.clearError("customAmount");
          c.clearError("amount");
        }}
        {...errorProps(c, "customAmount")}
      />
      <ErrorText c={c} name="customAmount" />
    </div>
  );
}

/** A preset amount or level chosen: the typed amount is emptied (it no longer counts), and what was said of it. */
function choosePreset(c: Checkout): void {
  c.useCustom.value = false;
  c.text.customAmount.value = "";
  c.clearError("amount");
  c.clearError("customAmount");
}

export function AmountPicker({ c }: { c: Checkout }) {
  const per = perPeriod(c.frequency.value);
  return (
    <>
      {c.presets.value.length > 0 && (
        <Group c={c} name="amount" legend={t("checkout.amount")} class="alm-grid">
          {c.presets.value.map((a, i) => (
            <Radio
              key={a}
              name="amount"
              index={i}
              value={String(a)}
              checked={!c.useCustom.value && c.amount.value === a}
              onSelect={() => {
                c.amount.value = a;
                choosePreset(c);
              }}
            >
              {money(a)}
              {per && <span class="alm-per">{per}</span>}
            </Radio>
          ))}
        </Group>
      )}
      <CustomAmount c={c} label={t("checkout.otherAmount")} />
    </>
  );
}

export function LevelPicker({ c }: { c: Checkout }) {
  return (
    <>
      <Group c={c} name="amount" legend={t("checkout.level")} class="alm-cards">
        {c.view.givingLevels.map((l, i) => (
          <Radio
            key={l.title}
            name="level"
            index={i}
            value={l.title}
            checked={!c.useCustom.value && c.level.value === l.title}
            onSelect={() => {
              c.level.value = l.title;
              choosePreset(c);
            }}
          >
            <strong>{l.title}</strong> <span class="alm-price">{money(l.amount)}</span>
            {l.description && <span class="alm-desc">{l.description}</span>}
          </Radio>
        ))}
      </Group>
      <CustomAmount c={c} label={t("checkout.otherLevelAmount")} />
    </>
  );
}

export function ProductPicker({ c }: { c: Checkout }) {
  let index = 0;
  return (
    <Group c={c} name="product" legend={t("checkout.product")} class="alm-cards">
      {c.view.productGroups.map((g) => (
        <div key={g.productGroupName} class="alm-subgroup">
          <h3>{g.productGroupName}</h3>
          {g.description && <p class="alm-desc">{g.description}</p>}
          {g.products.map((x) => {
            const selected =
              c.product.value?.group === g.productGroupName && c.product.value.name === x.productName;
            return (
              <Radio
                key={x.productName}
                name="product"
                index={index++}
                value={x.productName}
                checked={selected}
                disabled={x.soldOut}
                onSelect={() => {
                  c.product.value = { group: g.productGroupName, name: x.productName };
                  c.clearError("product");
                }}
              >
                <strong>{x.productName}</strong> <span class="alm-price">{money(x.price)}</span>
                {x.description && <span class="alm-desc">{x.description}</span>}
                {x.soldOut ? (
                  <span class="alm-stock">{t("checkout.soldOut")}</span>
                ) : (
                  x.remaining !== null && (
                    <span class="alm-stock">{t("checkout.left", { count: x.remaining })}</span>
                  )
                )}
              </Radio>
            );
          })}
        </div>
      ))}
    </Group>
  );
}

/** The translator, under another name where `t` is a ticket. */
const tr = t;

export function TicketPicker({ c }: { c: Checkout }) {
  return (
    <Group c={c} name="tickets" legend={t("checkout.tickets")} class="alm-tickets">
      {c.view.tickets.map((t, i) => {
        const id = fieldId(`ticket-${i}`);
        const limit = Math.min(t.maxPerOrder ?? 100, t.remaining ?? 100);
        const infoId = `${id}-info`;
        return (
          <div key={t.name} class="alm-ticket">
            <div class="alm-ticket-text">
              <label for={id}>
                <strong>{t.name}</strong>
              </label>
              <span id={infoId} class="alm-desc">
                {money(t.price)}
                {t.ticketType === "GROUP" && t.groupSize
                  ? ` · ${tr("checkout.ticket.admits", { count: t.groupSize })}`
                  : ""}
                {t.soldOut
                  ? ` · ${tr("checkout.soldOut")}`
                  : t.remaining !== null
                    ? ` · ${tr("checkout.left", { count: t.remaining })}`
                    : ""}
                {t.maxPerOrder ? ` · ${tr("checkout.ticket.perOrder", { count: t.maxPerOrder })}` : ""}
              </span>
              {t.description && <span class="alm-desc">{t.description}</span>}
            </div>
            <input
              id={id}
              class="alm-qty"
              type="number"
              inputMode="numeric"
              min={0}
              max={limit}
              step={1}
              aria-describedby={infoId}
              disabled={t.soldOut}
              value={String(c.tickets.value[t.name] ?? 0)}
              onInput={(e) => {
                const n = Math.floor(Number(e.currentTarget.value));
                c.setTicket(t.name, Number.isFinite(n) ? Math.min(Math.max(n, 0), limit) : 0);
                c.clearError("tickets");
              }}
            />
          </div>
        );
      })}
    </Group>
  );
}

export function PromoCode({ c }: { c: Checkout }) {
  if (!c.view.hasPromoCodes) return null;
  const q = c.quoteFresh.value ? c.quote.value : null;
  const applied = c.appliedPromo.value;
  return (
    <div class="alm-promo">
      <TextInput c={c} name="promoCode" label={t("checkout.promo")} autoComplete="off" class="alm-grow" />
      <button type="button" class="alm-secondary" onClick={() => c.applyPromo()}>
        {t("checkout.promo.apply")}
      </button>
      <p class="alm-note" aria-live="polite">
        {applied && q?.promoCode
          ? t("checkout.promo.applied", { code: q.promoCode, amount: money(q.discount) })
          : ""}
      </p>
    </div>
  );
}

export function ExtraDonation({ c }: { c: Checkout }) {
  return (
    <TextInput
      c={c}
      name="extraDonation"
      label={t("checkout.extraDonation")}
      inputMode="decimal"
      autoComplete="off"
    />
  );
}
