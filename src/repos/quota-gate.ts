/**
 * Where repository code asks the quota engine (docs/quota.md). The gate is owned by the quota module
 * (src/quota/quota-gate.ts); this re-export keeps the import path repository code already uses.
 */
export { QUOTA_GATE } from '../quota/quota-gate';
export type { QuotaGate, QuotaReservation, QuotaTarget, ReservedItem, ReserveOptions } from '../quota/quota-gate';
