/*
 * Stand-in Stripe.js for the local Stripe emulator (test/support/stripe/emulator.ts), served at
 * <emulator>/v3/stripe.js and <emulator>/endive/stripe.js. Plain ES2020, no imports, no build step.
 *
 * It defines window.Stripe for the subset the project uses: Stripe(pk), stripe.elements({ mode, amount,
 * currency, setupFutureUsage, allowedPaymentMethodTypes (alias paymentMethodTypes), excludedPaymentMethodTypes }),
 * the "payment" and "expressCheckout" elements,
 * elements.submit(), stripe.createConfirmationToken({ elements, params }), stripe.handleNextAction(),
 * stripe.retrievePaymentIntent() and stripe.retrieveSetupIntent(). Card and bank details go from this page
 * straight to the emulator ("Stripe"), authenticated with the publishable key, never to the merchant.
 *
 * Conventions (see README.md): a wallet payment (Google Pay / Apple Pay, from the Express Checkout Element or
 * a wallet tab of the Payment Element) becomes a card ConfirmationToken with
 * payment_method_data[card][wallet]=google_pay|apple_pay and no number (the emulator treats it as
 * 4242 4242 4242 4242). "Enter bank details manually" sends
 * payment_method_data[us_bank_account][verification_method]=microdeposits.
 */
(() => {
  if (typeof window === "undefined" || typeof document === "undefined") return;

  const STRIPE_JS_PATH = /\/(v3|endive)(\/stripe\.js)?\/?(\?.*)?$/;

  // The emulator replaces this token with its own origin when it serves the file, so the script still
  // talks to the right place when a test serves it under another URL (e.g. a routed js.stripe.com).
  const SERVED_BY = "__STRIPE_EMULATOR_ORIGIN__";

  /** Where "Stripe" is: window.STRIPE_EMULATOR_ORIGIN, else the serving emulator, else this script's origin. */
  function findOrigin() {
    if (typeof window.STRIPE_EMULATOR_ORIGIN === "string" && window.STRIPE_EMULATOR_ORIGIN)
      return window.STRIPE_EMULATOR_ORIGIN.replace(/\/+$/, "");
    if (/^https?:\/\//.test(SERVED_BY)) return SERVED_BY;
    const candidates = [];
    if (document.currentScript?.src) candidates.push(document.currentScript.src);
    const scripts = document.querySelectorAll("script[src]");
    for (let i = scripts.length - 1; i >= 0; i--) {
      if (STRIPE_JS_PATH.test(scripts[i].src)) candidates.push(scripts[i].src);
    }
    for (const src of candidates) {
      try {
        return new URL(src, location.href).origin;
      } catch (_e) {
        // try the next one
      }
    }
    return location.origin;
  }

  const ORIGIN = findOrigin();
  const AUTH_FAILURE_MESSAGE =
    "We are unable to authenticate your payment method. Please choose a different payment method and try again.";
  const TEST_WALLET_IDENTITY = {
    name: "Jenny Rosen",
    email: "jenny.rosen@example.com",
    phone: "+15555550100",
    address: {
      line1: "354 Oyster Point Blvd",
      line2: null,
      city: "South San Francisco",
      state: "CA",
      postal_code: "94080",
      country: "US",
    },
  };

  let uid = 0;
  const nextId = (prefix) => {
    uid += 1;
    return `stripe-standin-${prefix}-${uid}`;
  };

  class IntegrationError extends Error {
    constructor(message) {
      super(message);
      this.name = "IntegrationError";
    }
  }

  // ---------- HTTP ----------

  function encode(value, prefix, pairs) {
    if (value === undefined) return pairs;
    if (value === null || typeof value !== "object") {
      pairs.push(`${encodeURIComponent(prefix)}=${encodeURIComponent(value === null ? "" : String(value))}`);
      return pairs;
    }
    if (Array.isArray(value)) {
      value.forEach((v, i) => {
        encode(v, `${prefix}[${i}]`, pairs);
      });
      return pairs;
    }
    for (const key of Object.keys(value)) encode(value[key], prefix ? `${prefix}[${key}]` : key, pairs);
    return pairs;
  }

  const formBody = (params) => encode(params, "", []).join("&");

  function connectionError(e) {
    return {
      type: "api_connection_error",
      message: `Could not reach Stripe (the emulator at ${ORIGIN}): ${e?.message ? e.message : e}`,
    };
  }

  /** A Stripe API call with the publishable key (sent as the `key` parameter, as Stripe.js does). */
  async function api(method, path, params, key) {
    const all = Object.assign({}, params, { key });
    let url = ORIGIN + path;
    const init = { method, credentials: "omit" };
    if (method === "GET") url += `?${formBody(all)}`;
    else {
      init.headers = { "Content-Type": "application/x-www-form-urlencoded" };
      init.body = formBody(all);
    }
    let response;
    try {
      response = await fetch(url, init);
    } catch (e) {
      return { error: connectionError(e) };
    }
    let json;
    try {
      json = await response.json();
    } catch (_e) {
      return { error: { type: "api_error", message: `Invalid JSON from Stripe (HTTP ${response.status})` } };
    }
    if (!response.ok || json?.error) {
      return { error: json?.error || { type: "api_error", message: `HTTP ${response.status}` } };
    }
    return { data: json };
  }

  /** The emulator's control API (no key). */
  async function control(name, payload, method) {
    let response;
    try {
      response = await fetch(`${ORIGIN}/_emulator/${name}`, {
        method: method || "POST",
        credentials: "omit",
        headers: method === "GET" ? undefined : { "Content-Type": "application/json" },
        body: method === "GET" ? undefined : JSON.stringify(payload || {}),
      });
    } catch (e) {
      return { error: connectionError(e) };
    }
    let json = null;
    try {
      json = await response.json();
    } catch (_e) {
      // empty
    }
    if (!response.ok)
      return { error: json?.error || { type: "api_error", message: `HTTP ${response.status}` } };
    return { data: json };
  }

  async function fetchWallets() {
    const r = await control("wallets", null, "GET");
    if (r.error) return { applePay: false, googlePay: false, sheet: "confirm" };
    return r.data;
  }

  // ---------- DOM helpers ----------

  function h(tag, attrs, children) {
    const el = document.createElement(tag);
    for (const name of Object.keys(attrs || {})) {
      const value = attrs[name];
      if (value === undefined || value === null || value === false) continue;
      if (name === "text") el.textContent = value;
      // Through the CSSOM, which a page's CSP allows (a style attribute needs 'unsafe-inline'); Stripe's own
      // dialogs are frames the page's CSP does not govern.
      else if (name === "style") el.style.cssText = value;
      else if (name.startsWith("on")) el.addEventListener(name.slice(2), value);
      else if (value === true) el.setAttribute(name, "");
      else el.setAttribute(name, String(value));
    }
    for (const child of children || []) if (child) el.appendChild(child);
    return el;
  }

  function resolveMountTarget(target) {
    if (typeof target === "string") {
      const found = document.querySelector(target);
      if (!found)
        throw new IntegrationError(
          `The selector you specified (${target}) applies to no DOM elements that are currently on the page.\nMake sure the element exists on the page before calling mount().`,
        );
      return found;
    }
    if (target && target.nodeType === 1) return target;
    throw new IntegrationError(
      "Invalid DOM element. Make sure to call mount() with a valid DOM element or selector.",
    );
  }

  const digits = (s) => String(s || "").replace(/\D/g, "");

  function luhn(number) {
    let sum = 0;
    let double = false;
    for (let i = number.length - 1; i >= 0; i--) {
      let d = number.charCodeAt(i) - 48;
      if (double) {
        d *= 2;
        if (d > 9) d -= 9;
      }
      sum += d;
      double = !double;
    }
    return number.length >= 12 && sum % 10 === 0;
  }

  function routingValid(r) {
    if (!/^\d{9}$/.test(r)) return false;
    const d = r.split("").map(Number);
    return (3 * (d[0] + d[3] + d[6]) + 7 * (d[1] + d[4] + d[7]) + (d[2] + d[5] + d[8])) % 10 === 0;
  }

  function brandOf(number) {
    if (/^3[47]/.test(number)) return "amex";
    if (/^3(0|6|8|9)/.test(number)) return "diners";
    return "other";
  }

  function cardLength(number) {
    const brand = brandOf(number);
    return brand === "amex" ? 15 : brand === "diners" ? 14 : 16;
  }

  function formatCardNumber(value) {
    const d = digits(value).slice(0, 19);
    if (brandOf(d) === "amex")
      return [d.slice(0, 4), d.slice(4, 10), d.slice(10, 15)].filter(Boolean).join(" ");
    return d.replace(/(\d{4})(?=\d)/g, "$1 ");
  }

  function formatExpiry(value) {
    const d = digits(value).slice(0, 4);
    return d.length > 2 ? `${d.slice(0, 2)} / ${d.slice(2)}` : d;
  }

  // Stripe's zero-decimal currencies: their amounts are whole units, not hundredths.
  const ZERO_DECIMAL = "bif clp djf gnf jpy kmf krw mga pyg rwf ugx vnd vuv xaf xof xpf".split(" ");

  function formatAmount(amount, currency) {
    const code = String(currency).toLowerCase();
    try {
      return new Intl.NumberFormat("en-US", {
        style: "currency",
        currency: code.toUpperCase(),
      }).format(ZERO_DECIMAL.indexOf(code) === -1 ? amount / 100 : amount);
    } catch (_e) {
      return `${amount} ${currency}`;
    }
  }

  function mergeDeep(target, source) {
    const out = Object.assign({}, target);
    for (const key of Object.keys(source || {})) {
      const v = source[key];
      if (v && typeof v === "object" && !Array.isArray(v) && out[key] && typeof out[key] === "object")
        out[key] = mergeDeep(out[key], v);
      else if (v !== undefined) out[key] = v;
    }
    return out;
  }

  // ---------- events ----------

  class Emitter {
    constructor() {
      this._handlers = {};
    }
    _add(type, handler, once) {
      if (typeof handler !== "function")
        throw new IntegrationError(`on(${type}): handler must be a function`);
      if (!this._handlers[type]) this._handlers[type] = [];
      this._handlers[type].push({ handler, once });
      return this;
    }
    on(type, handler) {
      return this._add(type, handler, false);
    }
    once(type, handler) {
      return this._add(type, handler, true);
    }
    off(type, handler) {
      if (!handler) delete this._handlers[type];
      else this._handlers[type] = (this._handlers[type] || []).filter((h) => h.handler !== handler);
      return this;
    }
    _hasHandlers(type) {
      return (this._handlers[type] || []).length > 0;
    }
    _emit(type, event) {
      for (const entry of (this._handlers[type] || []).slice()) {
        if (entry.once) this.off(type, entry.handler);
        try {
          entry.handler(event);
        } catch (e) {
          setTimeout(() => {
            throw e;
          });
        }
      }
    }
    _emitSoon(type, event) {
      setTimeout(() => this._emit(type, event), 0);
    }
  }

  // ---------- elements base ----------

  class BaseElement extends Emitter {
    constructor(group, elementType, options) {
      super();
      this._group = group;
      this._elementType = elementType;
      this._options = Object.assign({}, options);
      this._container = null;
      this._root = null;
      this._destroyed = false;
      this._focused = false;
    }
    _checkAlive() {
      if (this._destroyed)
        throw new IntegrationError("This Element has already been destroyed. Please create a new one.");
    }
    mount(target) {
      this._checkAlive();
      if (this._root)
        throw new IntegrationError(
          "This Element is already mounted. Use `unmount()` to unmount the Element before re-mounting.",
        );
      this._container = resolveMountTarget(target);
      this._root = h("div", {
        class: `StripeElement StripeElement--${this._elementType}`,
        "data-stripe-standin": this._elementType,
      });
      this._root.addEventListener("focusin", () => {
        if (!this._focused) {
          this._focused = true;
          this._emit("focus", { elementType: this._elementType });
        }
      });
      this._root.addEventListener("focusout", (e) => {
        if (this._root && e.relatedTarget && this._root.contains(e.relatedTarget)) return;
        if (this._focused) {
          this._focused = false;
          this._emit("blur", { elementType: this._elementType });
        }
      });
      this._container.appendChild(this._root);
      this._emitSoon("loaderstart", { elementType: this._elementType });
      this._onMount();
    }
    unmount() {
      this._checkAlive();
      if (this._root?.parentNode) this._root.parentNode.removeChild(this._root);
      this._root = null;
      this._container = null;
    }
    destroy() {
      if (this._destroyed) return;
      if (this._root) this.unmount();
      this._destroyed = true;
      this._group._forget(this);
    }
    focus() {
      const input = this._root?.querySelector("input:not([type=checkbox]), button");
      if (input) input.focus();
    }
    blur() {
      if (this._root?.contains(document.activeElement)) document.activeElement.blur();
    }
    clear() {}
    collapse() {
      return this;
    }
    update(options) {
      this._checkAlive();
      Object.assign(this._options, options || {});
      if (this._root) this._render();
      return this;
    }
  }

  // ---------- Payment Element ----------

  const TAB_LABELS = {
    card: "Card",
    us_bank_account: "US bank account",
    google_pay: "Google Pay",
    apple_pay: "Apple Pay",
  };

  function fieldOption(fields, path) {
    // fields: { billingDetails: "never" | { name, address: "never" | { postalCode } } }
    const bd = fields?.billingDetails;
    if (bd === "never") return "never";
    if (!bd || typeof bd !== "object") return "auto";
    if (path === "name") return bd.name || "auto";
    if (bd.address === "never") return "never";
    if (bd.address && typeof bd.address === "object") return bd.address.postalCode || "auto";
    return "auto";
  }

  class PaymentElement extends BaseElement {
    constructor(group, options) {
      super(group, "payment", options);
      this._values = {};
      const defaults = this._options.defaultValues?.billingDetails || {};
      if (defaults.name) this._values.name = defaults.name;
      if (defaults.address?.postal_code) this._values.zip = defaults.address.postal_code;
      this._selected = null;
      this._wallets = { applePay: false, googlePay: false };
      this._inputs = {};
      this._touched = {};
    }

    _methods() {
      const group = this._group._options;
      const allowed = group.allowedPaymentMethodTypes || group.paymentMethodTypes;
      const excluded = group.excludedPaymentMethodTypes || [];
      const requested = (Array.isArray(allowed) ? allowed : ["card", "us_bank_account", "link"]).filter(
        (t) => excluded.indexOf(t) === -1,
      );
      const currency = String(group.currency || "usd").toLowerCase();
      const walletOpts = this._options.wallets || {};
      const methods = [];
      if (requested.indexOf("card") !== -1) methods.push("card");
      if (requested.indexOf("us_bank_account") !== -1 && currency === "usd") methods.push("us_bank_account");
      if (requested.indexOf("card") !== -1) {
        if (this._wallets.googlePay && walletOpts.googlePay !== "never") methods.push("google_pay");
        if (this._wallets.applePay && walletOpts.applePay !== "never") methods.push("apple_pay");
      }
      return methods;
    }

    _onMount() {
      this._render();
      fetchWallets().then((wallets) => {
        if (!this._root) return;
        this._wallets = wallets;
        this._render();
        if (this._methods().length === 0) {
          this._emit("loaderror", {
            elementType: "payment",
            error: {
              type: "invalid_request_error",
              message: "No payment method types this stand-in supports (card, us_bank_account) are enabled.",
            },
          });
          return;
        }
        this._emit("ready", { elementType: "payment" });
      });
    }

    _selectedType() {
      const methods = this._methods();
      if (!this._selected || methods.indexOf(this._selected) === -1) this._selected = methods[0] || null;
      return this._selected;
    }

    _render() {
      if (!this._root) return;
      const hadFocus = this._root.contains(document.activeElement) ? document.activeElement.id : null;
      this._root.textContent = "";
      this._inputs = {};
      const methods = this._methods();
      const selected = this._selectedType();
      const ids = {};
      for (const m of methods) ids[m] = { tab: nextId(`tab-${m}`), panel: nextId(`panel-${m}`) };
      if (methods.length > 1) {
        const tablist = h("div", {
          role: "tablist",
          "aria-label": "Payment method",
          class: "StripeStandIn-tabs",
        });
        methods.forEach((m, index) => {
          const tab = h("button", {
            type: "button",
            role: "tab",
            id: ids[m].tab,
            "aria-selected": m === selected ? "true" : "false",
            "aria-controls": ids[m].panel,
            tabindex: m === selected ? "0" : "-1",
            "data-method": m,
            text: TAB_LABELS[m],
            onclick: () => this._select(m, true),
            onkeydown: (e) => {
              if (e.key !== "ArrowRight" && e.key !== "ArrowLeft") return;
              e.preventDefault();
              const next =
                methods[(index + (e.key === "ArrowRight" ? 1 : methods.length - 1)) % methods.length];
              this._select(next, true);
            },
          });
          tablist.appendChild(tab);
        });
        this._root.appendChild(tablist);
      }
      for (const m of methods) {
        const attrs =
          methods.length > 1
            ? { role: "tabpanel", id: ids[m].panel, "aria-labelledby": ids[m].tab, hidden: m !== selected }
            : { role: "group", id: ids[m].panel, "aria-label": TAB_LABELS[m] };
        const panel = h("div", Object.assign({ class: "StripeStandIn-panel", "data-method": m }, attrs));
        if (m === "card") this._cardFields(panel);
        else if (m === "us_bank_account") this._bankFields(panel);
        else
          panel.appendChild(
            h("p", {
              text: `${TAB_LABELS[m]} selected. You will confirm with ${TAB_LABELS[m]} (test wallet) when you pay.`,
            }),
          );
        this._root.appendChild(panel);
      }
      if (hadFocus) {
        const again = document.getElementById(hadFocus);
        if (again) again.focus();
      }
    }

    _select(method, focusTab) {
      if (method === this._selected) return;
      this._selected = method;
      this._render();
      if (focusTab) {
        const tab = this._root?.querySelector(`[role=tab][data-method="${method}"]`);
        if (tab) tab.focus();
      }
      this._emitChange();
    }

    _field(panel, name, label, attrs) {
      const id = nextId(name);
      const errorId = `${id}-error`;
      const input = h(
        "input",
        Object.assign(
          {
            id,
            name,
            type: "text",
            "aria-describedby": errorId,
            spellcheck: "false",
            value: this._values[name] || undefined,
          },
          attrs,
        ),
      );
      const format = attrs["data-format"];
      input.addEventListener("input", () => {
        if (format === "card") input.value = formatCardNumber(input.value);
        else if (format === "expiry") input.value = formatExpiry(input.value);
        else if (format === "digits")
          input.value = digits(input.value).slice(0, Number(attrs.maxlength) || 32);
        this._values[name] = input.value;
        if (this._touched[name]) this._showFieldError(name);
        this._emitChange();
      });
      input.addEventListener("blur", () => {
        if (input.value) this._touched[name] = true;
        this._showFieldError(name);
      });
      const error = h("div", { id: errorId, class: "StripeStandIn-error", "aria-live": "polite" });
      this._inputs[name] = { input, error };
      panel.appendChild(
        h("div", { class: "StripeStandIn-field" }, [h("label", { for: id, text: label }), input, error]),
      );
      return input;
    }

    _cardFields(panel) {
      this._field(panel, "cardnumber", "Card number", {
        autocomplete: "cc-number",
        inputmode: "numeric",
        placeholder: "1234 1234 1234 1234",
        "data-format": "card",
      });
      this._field(panel, "exp-date", "Expiration date (MM / YY)", {
        autocomplete: "cc-exp",
        inputmode: "numeric",
        placeholder: "MM / YY",
        "data-format": "expiry",
      });
      this._field(panel, "cvc", "Security code (CVC)", {
        autocomplete: "cc-csc",
        inputmode: "numeric",
        placeholder: "CVC",
        maxlength: "4",
        "data-format": "digits",
      });
      if (fieldOption(this._options.fields, "postalCode") !== "never")
        this._field(panel, "zip", "ZIP code", { autocomplete: "postal-code", placeholder: "12345" });
    }

    _bankFields(panel) {
      if (fieldOption(this._options.fields, "name") !== "never")
        this._field(panel, "name", "Account holder name", { autocomplete: "name" });
      this._field(panel, "routing", "Routing number", {
        inputmode: "numeric",
        placeholder: "110000000",
        maxlength: "9",
        "data-format": "digits",
      });
      this._field(panel, "account", "Account number", {
        inputmode: "numeric",
        placeholder: "000123456789",
        maxlength: "17",
        "data-format": "digits",
      });
      const id = nextId("manual");
      const box = h("input", {
        id,
        type: "checkbox",
        name: "manual",
        checked: this._values.manual === true,
        onchange: (e) => {
          this._values.manual = e.target.checked;
          this._emitChange();
        },
      });
      panel.appendChild(
        h("div", { class: "StripeStandIn-field StripeStandIn-checkbox" }, [
          box,
          h("label", { for: id, text: "Enter bank details manually (verify with microdeposits)" }),
        ]),
      );
    }

    /** The first problem with the visible fields: { code, message, field } or null. */
    _problems() {
      const type = this._selectedType();
      const v = (name) => (this._inputs[name] ? String(this._inputs[name].input.value || "").trim() : null);
      const out = [];
      if (type === "card") {
        const number = digits(v("cardnumber"));
        if (!number)
          out.push({
            field: "cardnumber",
            code: "incomplete_number",
            message: "Your card number is incomplete.",
          });
        else if (number.length < cardLength(number))
          out.push({
            field: "cardnumber",
            code: "incomplete_number",
            message: "Your card number is incomplete.",
          });
        else if (!luhn(number))
          out.push({ field: "cardnumber", code: "invalid_number", message: "Your card number is invalid." });
        const exp = digits(v("exp-date"));
        if (exp.length < 4)
          out.push({
            field: "exp-date",
            code: "incomplete_expiry",
            message: "Your card's expiration date is incomplete.",
          });
        else {
          const month = Number(exp.slice(0, 2));
          const year = 2000 + Number(exp.slice(2, 4));
          const now = new Date();
          if (month < 1 || month > 12)
            out.push({
              field: "exp-date",
              code: "invalid_expiry_month",
              message: "Your card's expiration date is invalid.",
            });
          else if (year < now.getFullYear())
            out.push({
              field: "exp-date",
              code: "invalid_expiry_year_past",
              message: "Your card's expiration year is in the past.",
            });
          else if (year === now.getFullYear() && month < now.getMonth() + 1)
            out.push({
              field: "exp-date",
              code: "invalid_expiry_month_past",
              message: "Your card's expiration date is in the past.",
            });
        }
        const cvc = digits(v("cvc"));
        if (cvc.length < (brandOf(number) === "amex" ? 4 : 3))
          out.push({
            field: "cvc",
            code: "incomplete_cvc",
            message: "Your card's security code is incomplete.",
          });
        const zip = v("zip");
        if (zip !== null && zip.length < 5)
          out.push({ field: "zip", code: "incomplete_zip", message: "Your ZIP is incomplete." });
      } else if (type === "us_bank_account") {
        const name = v("name");
        if (name !== null && !name)
          out.push({
            field: "name",
            code: "incomplete_name",
            message: "Please provide the account holder's name.",
          });
        const routing = digits(v("routing"));
        if (routing.length < 9)
          out.push({
            field: "routing",
            code: "incomplete_routing_number",
            message: "Your routing number is incomplete.",
          });
        else if (!routingValid(routing))
          out.push({
            field: "routing",
            code: "invalid_routing_number",
            message: "Your routing number is invalid.",
          });
        const account = digits(v("account"));
        if (account.length < 4)
          out.push({
            field: "account",
            code: "incomplete_account_number",
            message: "Your account number is incomplete.",
          });
      }
      return out;
    }

    _showFieldError(name) {
      const entry = this._inputs[name];
      if (!entry) return;
      const problem = this._problems().find((p) => p.field === name);
      const show = problem && (entry.input.value || this._touched[name] === "submit");
      entry.error.textContent = show ? problem.message : "";
      if (show) entry.input.setAttribute("aria-invalid", "true");
      else entry.input.removeAttribute("aria-invalid");
    }

    _isEmpty() {
      return Object.keys(this._inputs).every((name) => !this._inputs[name].input.value);
    }

    _emitChange() {
      const type = this._selectedType();
      this._emit("change", {
        elementType: "payment",
        empty: type === "card" || type === "us_bank_account" ? this._isEmpty() : false,
        complete: this._problems().length === 0,
        collapsed: false,
        value: { type },
      });
    }

    /** Shows every field's error; answers Stripe.js's validation error for the first one, or null. */
    _validate() {
      const problems = this._problems();
      for (const name of Object.keys(this._inputs)) {
        this._touched[name] = "submit";
        this._showFieldError(name);
      }
      if (problems.length === 0) return null;
      return { type: "validation_error", code: problems[0].code, message: problems[0].message };
    }

    /** payment_method_data for the ConfirmationToken. */
    _collect() {
      const type = this._selectedType();
      const v = (name) => (this._inputs[name] ? String(this._inputs[name].input.value || "").trim() : "");
      if (type === "card") {
        const exp = digits(v("exp-date"));
        const data = {
          type: "card",
          card: {
            number: digits(v("cardnumber")),
            exp_month: exp.slice(0, 2),
            exp_year: `20${exp.slice(2, 4)}`,
            cvc: digits(v("cvc")),
          },
          billing_details: {},
        };
        if (this._inputs.zip) data.billing_details.address = { postal_code: v("zip"), country: "US" };
        return data;
      }
      if (type === "us_bank_account") {
        const data = {
          type: "us_bank_account",
          us_bank_account: {
            routing_number: digits(v("routing")),
            account_number: digits(v("account")),
            account_holder_type: "individual",
            account_type: "checking",
            verification_method: this._values.manual ? "microdeposits" : "instant",
          },
          billing_details: {},
        };
        if (this._inputs.name) data.billing_details.name = v("name");
        return data;
      }
      return {
        type: "card",
        card: { wallet: type },
        billing_details: { name: TEST_WALLET_IDENTITY.name, email: TEST_WALLET_IDENTITY.email },
      };
    }

    clear() {
      this._values = {};
      this._touched = {};
      this._render();
    }

    _groupUpdated() {
      this._render();
    }
  }

  // ---------- Express Checkout Element ----------

  const WALLET_NAMES = { google_pay: "Google Pay", apple_pay: "Apple Pay" };

  class ExpressCheckoutElement extends BaseElement {
    constructor(group, options) {
      super(group, "expressCheckout", options);
      this._available = null;
      this._sheet = "confirm";
      this._busy = false;
    }

    _allowed(key) {
      const pm = this._options.paymentMethods || {};
      const wallets = this._options.wallets || {};
      const value = pm[key] || wallets[key] || "auto";
      return value !== "never";
    }

    _onMount() {
      fetchWallets().then((wallets) => {
        if (!this._root) return;
        this._sheet = wallets.sheet === "cancel" ? "cancel" : "confirm";
        const applePay = Boolean(wallets.applePay) && this._allowed("applePay");
        const googlePay = Boolean(wallets.googlePay) && this._allowed("googlePay");
        this._available =
          applePay || googlePay
            ? { applePay, googlePay, link: false, paypal: false, amazonPay: false, klarna: false }
            : undefined;
        this._render();
        this._emit("ready", { elementType: "expressCheckout", availablePaymentMethods: this._available });
      });
    }

    _label(type) {
      const buttonType = this._options.buttonType?.[type === "google_pay" ? "googlePay" : "applePay"];
      const name = WALLET_NAMES[type];
      if (!buttonType || buttonType === "plain") return name;
      const verb = String(buttonType).replace(/-/g, " ");
      return `${verb.charAt(0).toUpperCase()}${verb.slice(1)} with ${name}`;
    }

    _render() {
      if (!this._root) return;
      this._root.textContent = "";
      if (!this._available) return;
      const types = [];
      if (this._available.applePay) types.push("apple_pay");
      if (this._available.googlePay) types.push("google_pay");
      for (const type of types) {
        this._root.appendChild(
          h("button", {
            type: "button",
            class: `StripeStandIn-wallet StripeStandIn-wallet--${type}`,
            "data-wallet": type,
            text: this._label(type),
            onclick: () => this._click(type),
          }),
        );
      }
    }

    _click(type) {
      if (this._busy) return;
      this._busy = true;
      let settled = false;
      const proceed = () => {
        setTimeout(() => {
          if (this._sheet === "cancel") {
            this._busy = false;
            this._emit("cancel", { elementType: "expressCheckout" });
            return;
          }
          this._group._express = { type, billingDetails: TEST_WALLET_IDENTITY };
          this._emit("confirm", {
            elementType: "expressCheckout",
            expressPaymentType: type,
            billingDetails: JSON.parse(JSON.stringify(TEST_WALLET_IDENTITY)),
            paymentFailed: (payload) => {
              this._lastFailure = payload || { reason: "fail" };
              this._group._express = null;
              this._busy = false;
            },
          });
          // The sheet closes once the page is done (or after a while if it never is).
          setTimeout(() => {
            this._busy = false;
          }, 1500);
        }, 0);
      };
      const event = {
        elementType: "expressCheckout",
        expressPaymentType: type,
        resolve: (options) => {
          if (settled) return;
          settled = true;
          this._clickOptions = options || {};
          proceed();
        },
        reject: () => {
          if (settled) return;
          settled = true;
          this._busy = false;
        },
      };
      if (!this._hasHandlers("click")) {
        event.resolve();
        return;
      }
      this._emit("click", event);
      setTimeout(() => {
        if (!settled) {
          settled = true;
          this._busy = false;
          console.error(
            "[stand-in Stripe.js] expressCheckout: the click handler did not call resolve() within 1 second; the wallet sheet was not shown.",
          );
        }
      }, 1000);
    }

    _groupUpdated() {}
  }

  // ---------- Elements group ----------

  function setupFutureUsageOf(options) {
    const value =
      options.setupFutureUsage !== undefined ? options.setupFutureUsage : options.setup_future_usage;
    return value === undefined || value === null ? null : value;
  }

  function checkGroupOptions(options) {
    const mode = options.mode;
    if (mode !== undefined && ["payment", "setup", "subscription"].indexOf(mode) === -1)
      throw new IntegrationError(
        `Invalid value for elements(): mode should be one of the following strings: payment, setup, subscription. You specified: ${mode}.`,
      );
    if ((mode === "payment" || mode === "subscription") && typeof options.amount !== "number")
      throw new IntegrationError(
        `Missing value for elements(): amount should be a number when mode is ${mode}.`,
      );
    if (options.amount !== undefined && (typeof options.amount !== "number" || options.amount < 0))
      throw new IntegrationError(`Invalid value for elements(): amount should be a positive integer.`);
    if (mode && mode !== "setup" && typeof options.currency !== "string")
      throw new IntegrationError("Missing value for elements(): currency should be a string.");
    const sfu = setupFutureUsageOf(options);
    if (sfu !== null && ["on_session", "off_session"].indexOf(sfu) === -1)
      throw new IntegrationError(
        `Invalid value for elements(): setupFutureUsage should be one of the following strings: on_session, off_session. You specified: ${sfu}.`,
      );
    for (const name of ["allowedPaymentMethodTypes", "paymentMethodTypes", "excludedPaymentMethodTypes"]) {
      if (options[name] !== undefined && !Array.isArray(options[name]))
        throw new IntegrationError(`Invalid value for elements(): ${name} should be an array of strings.`);
    }
  }

  class Elements {
    constructor(stripe, options) {
      this._stripe = stripe;
      this._options = Object.assign({}, options || {});
      if (typeof this._options.currency === "string")
        this._options.currency = this._options.currency.toLowerCase();
      checkGroupOptions(this._options);
      this._elements = {};
      this._submitted = false;
      this._express = null;
      this._listeners = {};
    }
    create(type, options) {
      if (this._elements[type]) throw new IntegrationError(`Can only create one Element of type ${type}.`);
      let element;
      if (type === "payment") {
        if (!this._options.mode && !this._options.clientSecret)
          throw new IntegrationError(
            "In order to create a payment element, you must pass a valid PaymentIntent or SetupIntent client secret when creating the Elements group, or set mode, amount and currency.",
          );
        element = new PaymentElement(this, options);
      } else if (type === "expressCheckout") {
        element = new ExpressCheckoutElement(this, options);
      } else {
        throw new IntegrationError(
          `The stand-in Stripe.js (Stripe emulator) supports only the "payment" and "expressCheckout" Elements, not "${type}".`,
        );
      }
      this._elements[type] = element;
      return element;
    }
    getElement(type) {
      return this._elements[type] || null;
    }
    _forget(element) {
      for (const key of Object.keys(this._elements))
        if (this._elements[key] === element) delete this._elements[key];
    }
    update(options) {
      const next = Object.assign({}, this._options, options || {});
      if (typeof next.currency === "string") next.currency = next.currency.toLowerCase();
      checkGroupOptions(next);
      this._options = next;
      for (const key of Object.keys(this._elements)) this._elements[key]._groupUpdated();
      setTimeout(() => this._emit("update-end"), 0);
      return Promise.resolve();
    }
    fetchUpdates() {
      return Promise.resolve({});
    }
    on(type, handler) {
      if (!this._listeners[type]) this._listeners[type] = [];
      this._listeners[type].push(handler);
    }
    _emit(type) {
      for (const handler of this._listeners[type] || []) handler();
    }
    submit() {
      if (this._express) {
        this._submitted = true;
        return Promise.resolve({ selectedPaymentMethod: this._express.type });
      }
      const payment = this._elements.payment;
      if (!payment?._root) {
        return Promise.resolve({
          error: {
            type: "validation_error",
            code: "element_not_mounted",
            message:
              "elements.submit(): mount a Payment Element (or use the Express Checkout Element) first.",
          },
        });
      }
      const error = payment._validate();
      this._submitted = !error;
      if (error) return Promise.resolve({ error });
      return Promise.resolve({ selectedPaymentMethod: payment._selectedType() });
    }
  }

  // ---------- 3-D Secure modal ----------

  function threeDSecureDialog(intent) {
    return new Promise((resolve) => {
      const previous = document.activeElement;
      const titleId = nextId("3ds-title");
      const textId = nextId("3ds-text");
      const what =
        intent.object === "payment_intent"
          ? `a payment of ${formatAmount(intent.amount, intent.currency)}`
          : "saving your card for later payments";
      let finish;
      const complete = h("button", {
        type: "button",
        text: "Complete authentication",
        onclick: () => finish("succeed"),
      });
      const fail = h("button", {
        type: "button",
        text: "Fail authentication",
        onclick: () => finish("fail"),
      });
      const dialog = h(
        "div",
        {
          role: "dialog",
          "aria-modal": "true",
          "aria-labelledby": titleId,
          "aria-describedby": textId,
          tabindex: "-1",
          style:
            "background:#fff;color:#111;max-width:26rem;width:calc(100% - 2rem);padding:1.5rem;border-radius:8px;box-shadow:0 10px 40px rgba(0,0,0,.4);font:16px/1.4 system-ui,sans-serif",
        },
        [
          h("h2", {
            id: titleId,
            text: "Test 3D Secure authentication",
            style: "margin-top:0;font-size:1.25rem",
          }),
          h("p", {
            id: textId,
            text: `Your bank (the Stripe emulator) asks you to confirm ${what}. Choose what the customer does.`,
          }),
          h("div", { style: "display:flex;gap:.75rem;flex-wrap:wrap" }, [complete, fail]),
        ],
      );
      const overlay = h(
        "div",
        {
          "data-stripe-standin": "three-d-secure",
          style:
            "position:fixed;inset:0;z-index:2147483647;background:rgba(0,0,0,.5);display:flex;align-items:center;justify-content:center",
        },
        [dialog],
      );
      const onKey = (e) => {
        if (e.key !== "Tab") return;
        const order = [complete, fail];
        const i = order.indexOf(document.activeElement);
        e.preventDefault();
        order[(i + (e.shiftKey ? order.length - 1 : 1) + order.length) % order.length].focus();
      };
      finish = (choice) => {
        document.removeEventListener("keydown", onKey, true);
        if (overlay.parentNode) overlay.parentNode.removeChild(overlay);
        if (previous && typeof previous.focus === "function") previous.focus();
        resolve(choice);
      };
      document.addEventListener("keydown", onKey, true);
      document.body.appendChild(overlay);
      complete.focus();
    });
  }

  // ---------- Stripe ----------

  function intentIdFrom(clientSecret) {
    if (typeof clientSecret !== "string" || clientSecret.indexOf("_secret_") === -1) return null;
    const id = clientSecret.split("_secret_")[0];
    if (id.startsWith("pi_")) return { id, setup: false };
    if (id.startsWith("seti_")) return { id, setup: true };
    return null;
  }

  class StripeInstance {
    constructor(key, options) {
      if (typeof key !== "string" || !key)
        throw new IntegrationError(
          `Invalid value for Stripe(): apiKey should be a string. You specified: ${key}.`,
        );
      if (/^(sk|rk)_/.test(key))
        throw new IntegrationError(
          "You should not use your secret key with Stripe.js. Please pass a publishable key instead.",
        );
      this._key = key;
      this._options = Object.assign({}, options || {});
    }

    elements(options) {
      return new Elements(this, options || {});
    }

    async createConfirmationToken(options) {
      const elements = options?.elements;
      if (!(elements instanceof Elements))
        throw new IntegrationError(
          "Invalid value for createConfirmationToken: elements should be an Elements group (stripe.elements()).",
        );
      if (!elements._submitted)
        throw new IntegrationError(
          "elements.submit() must be called before stripe.createConfirmationToken(). Call elements.submit() as soon as your customer presses pay, prior to any asynchronous work.",
        );
      elements._submitted = false;
      const params = options?.params || {};
      let data;
      const express = elements._express;
      if (express) {
        data = {
          type: "card",
          card: { wallet: express.type },
          billing_details: { name: express.billingDetails.name, email: express.billingDetails.email },
        };
      } else {
        const payment = elements._elements.payment;
        if (!payment?._root)
          return {
            error: {
              type: "validation_error",
              code: "element_not_mounted",
              message: "No mounted Payment Element.",
            },
          };
        data = payment._collect();
      }
      const extra = params.payment_method_data || {};
      data.billing_details = mergeDeep(data.billing_details || {}, extra.billing_details || {});
      if (extra.allow_redisplay) data.allow_redisplay = extra.allow_redisplay;
      const body = { payment_method_data: data };
      if (params.return_url) body.return_url = params.return_url;
      if (params.shipping) body.shipping = params.shipping;
      const sfu = setupFutureUsageOf(elements._options);
      if (sfu) body.setup_future_usage = sfu;
      const r = await api("POST", "/v1/confirmation_tokens", body, this._key);
      if (r.error) return { error: r.error };
      if (express) elements._express = null;
      return { confirmationToken: r.data };
    }

    async _retrieve(clientSecret, method) {
      const parsed = intentIdFrom(clientSecret);
      if (!parsed)
        throw new IntegrationError(
          `Invalid value for ${method}: clientSecret should be a client secret of the form \${id}_secret_\${secret}. You specified: ${clientSecret}.`,
        );
      const path = parsed.setup ? "/v1/setup_intents/" : "/v1/payment_intents/";
      const r = await api(
        "GET",
        path + encodeURIComponent(parsed.id),
        { client_secret: clientSecret },
        this._key,
      );
      return { parsed, error: r.error, intent: r.data };
    }

    async retrievePaymentIntent(clientSecret) {
      const r = await this._retrieve(clientSecret, "retrievePaymentIntent");
      return r.error ? { error: r.error } : { paymentIntent: r.intent };
    }

    async retrieveSetupIntent(clientSecret) {
      const r = await this._retrieve(clientSecret, "retrieveSetupIntent");
      return r.error ? { error: r.error } : { setupIntent: r.intent };
    }

    async handleNextAction(options) {
      const clientSecret = options?.clientSecret;
      let r = await this._retrieve(clientSecret, "handleNextAction");
      if (r.error) return { error: r.error };
      const setup = r.parsed.setup;
      const wrap = (intent) => (setup ? { setupIntent: intent } : { paymentIntent: intent });
      const key = setup ? "setup_intent" : "payment_intent";
      let intent = r.intent;
      if (intent.status !== "requires_action" || !intent.next_action) {
        return {
          error: {
            type: "invalid_request_error",
            code: setup ? "setup_intent_unexpected_state" : "payment_intent_unexpected_state",
            message: `handleNextAction: the ${setup ? "SetupIntent" : "PaymentIntent"} does not require an action (status ${intent.status}).`,
            [key]: intent,
          },
        };
      }
      const type = intent.next_action.type;
      if (type !== "use_stripe_sdk" && type !== "redirect_to_url") return wrap(intent);
      const choice = await threeDSecureDialog(intent);
      const done = await control("completeAuthentication", {
        intent: r.parsed.id,
        result: choice,
        client_secret: clientSecret,
      });
      if (done.error) return { error: done.error };
      r = await this._retrieve(clientSecret, "handleNextAction");
      if (r.error) return { error: r.error };
      intent = r.intent;
      const lastError = setup ? intent.last_setup_error : intent.last_payment_error;
      if (intent.status === "requires_payment_method" && lastError) {
        return {
          error: {
            type: "invalid_request_error",
            code: setup ? "setup_intent_authentication_failure" : "payment_intent_authentication_failure",
            message: AUTH_FAILURE_MESSAGE,
            [key]: intent,
          },
        };
      }
      return wrap(intent);
    }

    registerAppInfo() {}

    _registerWrapper() {}
  }

  function Stripe(key, options) {
    return new StripeInstance(key, options);
  }
  Stripe.version = "endive";
  Stripe.IntegrationError = IntegrationError;
  Stripe.emulatorOrigin = ORIGIN;
  window.Stripe = Stripe;
})();
