import type { Frequency } from "../../shared/enums.js";
import { centsToDollars } from "../../shared/money.js";
import { wireTime } from "../../shared/time.js";
import type { PaymentStatus } from "../store/payments.js";
import type { PaymentsTable } from "../store/schema.js";

/**
 * The deprecated donation shape of a payment (GET /v1/donations): the same record under its legacy field
 * names (`donationID`, `donorEmail`, `fundName`, ...), with the organization's name as `merchantName` and
 * no tips (`tipAmount` is always 0).
 */
export function presentDonation(row: PaymentsTable, merchantName: string) {
  return {
    donationID: row.id,
    donorEmail: row.email,
    donorFirstName: row.first_name,
    donorLastName: row.last_name,
    amount: centsToDollars(Number(row.amount_cents)),
    currency: row.currency,
    status: row.status as Exclude<PaymentStatus, "PROCESSING">,
    fundName: row.fund,
    formName: row.form_title,
    frequency: row.frequency as Frequency,
    donationDate: wireTime(row.created_at),
    paymentMethod: row.payment_method_type,
    coverFees: row.cover_fees === 1,
    anonymous: row.anonymous === 1,
    merchantName,
    tipAmount: 0,
    transactionID: row.processor_payment_id,
  };
}
